"""What a room refuses and how it says so: ActionError (the message names the field), the
limits' LimitError beside it (REFUSALS), values the database cannot store (NUL, NaN), speed.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.conf import settings

from ..engine import safe_yaml, values
from ..engine.scenario import (
    ScenarioError,
)
from ..limits import LimitError

MIN_SPEED, MAX_SPEED = 0.1, 100.0


class ActionError(ValueError):
    """An action refused: the message says which field and why."""


# A limit's refusal (limits.py) is an ActionError to every caller too.
REFUSALS = (ActionError, LimitError)


# -- unstorable values: PostgreSQL refuses NUL characters in text and JSON, and NaN/Infinity
# in JSON (jsonb); SQLite stores them. They are refused here, on every database alike, with
# the path of the field.
NUL = "\x00"


def refuse_unstorable(
    value: Any, path: str, error: type[ValueError] = ActionError, numbers: bool = True
) -> None:
    """Raise ``error`` naming the first string (or mapping key) under ``value`` that holds a
    NUL character or a lone surrogate, or (``numbers``) the first number that is NaN, infinite
    or past 64 bits (engine/values.py: one validation for everything stored or sent)."""
    bad = values.first_problem(value, path, numbers)
    if bad is None:
        return
    where, why = bad
    if error is ScenarioError:
        raise ScenarioError(where, why)
    raise error(f"{where}: {why}" if where else why)


def _refuse_nul_in_scenario(text: str) -> None:
    """A scenario's strings, when its text has a way to write a NUL or a lone surrogate (cheap
    when it has none).
    Its numbers are the loader's business: the ones stored as JSON (its parameters) are
    checked there, a NaN in a field the simulation ignores is never stored."""
    if not values.text_may_hide_problems(text):
        return
    try:
        docs = safe_yaml.load_all(text)
    except (yaml.YAMLError, safe_yaml.YamlLimitError):
        return  # load_scenario reports it with its position
    root = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"), None)
    if root is not None:
        refuse_unstorable(root, "", ScenarioError, numbers=False)
    for i, doc in enumerate(d for d in docs if d is not root):
        refuse_unstorable(doc, f"objects (extra document {i + 1})", ScenarioError, numbers=False)


def _check_speed(speed: Any) -> float:
    try:
        if isinstance(speed, bool):
            raise TypeError
        value = float(speed)
    except (TypeError, ValueError):
        raise ActionError(f"speed: {speed!r} is not a number") from None
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise ActionError(
            f"speed: must be between {MIN_SPEED:g}x and {MAX_SPEED:g}x, got {value:g}"
        )
    return value


def refuse_expired(room: Any, what: str) -> None:
    """An expired room takes no control or action (rooms_expire)."""
    if room.expired_at is not None:
        raise ActionError(
            f"{what}: this room expired at {room.expired_at:%Y-%m-%d %H:%M} UTC: nobody had "
            f"watched it for {settings.PLAYGROUND_ROOM_EXPIRY_SECONDS:g} s "
            "(PLAYGROUND_ROOM_EXPIRY_SECONDS); export its scenario to run it again"
        )
