"""Comparisons: two rooms of one scenario with different settings, on one clock."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .. import limits
from ..engine.scenario import (
    Scenario,
    ScenarioError,
    load_scenario,
)
from ..models import (
    Comparison,
    LessonState,
    PendingImport,
    Room,
    new_token,
)
from . import build
from .create import (
    COMPARABLE,
    _create_with_unique_slug,
    _unique_slug,
    check_changes,
    room_prepare,
    with_changes,
)

__all__ = ["COMPARABLE", "with_changes", "comparison_create", "comparison_rooms"]
from .errors import ActionError, _check_speed, refuse_unstorable

# -- comparisons: two rooms of one scenario, one clock --------------------------------------
# A scenario text longer than this (characters) is read, changed and validated by the workers
# that build the comparison's rooms, not in the request: each side is the scenario read,
# changed and written again, then read and validated (a 1 MB JSON scenario of 5,000 nodes took
# the request 1.2 s; YAML is ten times slower). The same rule as a big import's.
INLINE_MAX_CHARS = build.IMPORT_INLINE_MAX_CHARS
PENDING_NAME = "comparison"  # a pending comparison's name until its scenario is read


def comparison_create(
    name: str,
    scenario_yaml: str,
    sides: list[tuple[str, dict[str, Any]]],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
    inline_max: int | None = None,
    inline_max_chars: int | None = None,
) -> Comparison:
    """Two rooms of one scenario, each with its changes, started together on one clock (and
    one operator token). ``sides`` is [(label, changes), (label, changes)]; an error names the
    side and the field and creates nothing. Built as the room form's rooms are
    (build.room_start): small ones now, big ones by workers (both live together, when the
    second is built); returns at once. A long scenario text (over ``inline_max_chars``) is not
    read here: each side's worker applies its changes and validates it (an error then fails
    both rooms, naming the side and the field, on the comparison's page)."""
    for side, (label, changes) in zip(("left", "right"), sides, strict=True):
        if not label.strip():
            raise ActionError(f"{side}: give this side a label")
        refuse_unstorable(label, f"{side}.label")
        check_changes(changes, side)
    speed = _check_speed(speed)
    creator = creator or limits.owner_key(owner)
    limits.check_running_rooms(creator, new=2)
    limit = INLINE_MAX_CHARS if inline_max_chars is None else inline_max_chars
    if len(scenario_yaml) > limit:
        with transaction.atomic():
            comparison = comparison_pending(name, scenario_yaml, sides, owner, speed, creator)
            build.claim_build(comparison.left, comparison.right)
            for room in (comparison.left, comparison.right):
                transaction.on_commit(lambda pk=room.pk: build.queue_build(pk))
        return Comparison.objects.select_related("left", "right").get(pk=comparison.pk)
    texts = [
        with_changes(scenario_yaml, changes, side)
        for side, (_label, changes) in zip(("left", "right"), sides, strict=True)
    ]
    try:
        base = name or load_scenario(scenario_yaml).name
    except ScenarioError as exc:
        raise ActionError(f"left: {exc}") from None
    with transaction.atomic():
        comparison, scenarios = comparison_rooms(
            base, list(zip(sides, texts, strict=True)), owner, speed, creator
        )
        build.comparison_start(comparison, scenarios, inline_max)
    return Comparison.objects.select_related("left", "right").get(pk=comparison.pk)


def comparison_pending(
    name: str,
    text: str,
    sides: list[tuple[str, dict[str, Any]]],
    owner: Any,
    speed: float,
    creator: str,
) -> Comparison:
    """A comparison of a scenario too long to read in the request: its two rooms stored
    "building" with the text and their side's changes (create.side_finish reads them in the
    worker), checked here only for what the database could not store and the size limit; one
    operator token; named after the scenario once a worker has read it (unless ``name``)."""
    refuse_unstorable(name, "name")
    limits.check_scenario_size(text)
    refuse_unstorable(text, "scenario")
    base = name or PENDING_NAME
    with transaction.atomic():
        rooms = []
        for side, (label, changes) in zip(("left", "right"), sides, strict=True):
            refuse_unstorable(changes, f"{side}.changes")
            room = _create_with_unique_slug(
                Room,
                _unique_slug,
                f"{base} ({label})",
                name=f"{base} ({label})",
                owner=owner if getattr(owner, "is_authenticated", False) else None,
                creator=creator[:160],
                scenario_name=name,
                scenario_yaml="",
                speed=speed,
                wall_anchor=timezone.now(),
                build_state=Room.BUILDING,
                build_progress="queued",
                operator_token=rooms[0].operator_token if rooms else new_token(),
            )
            PendingImport.objects.create(
                room=room,
                text=text,
                options={
                    "compare": {"side": side, "label": label, "changes": changes, "name": name}
                },
            )
            rooms.append(room)
        comparison = _comparison_row(base, rooms, (sides[0][0], sides[1][0]))
    return comparison


def _comparison_row(base: str, rooms: list[Room], labels: tuple[str, str]) -> Comparison:
    """The comparison of two stored rooms, under a free slug of ``base``."""
    return _create_with_unique_slug(
        Comparison,
        _unique_comparison_slug,
        base,
        name=base,
        left=rooms[0],
        right=rooms[1],
        left_label=labels[0][:80],
        right_label=labels[1][:80],
    )


def comparison_rooms(
    base: str, sides: list[tuple[tuple[str, Any], str]], owner: Any, speed: float, creator: str
) -> tuple[Comparison, list[Scenario]]:
    """The comparison's two rooms stored "building" (validated; not built), one operator
    token, no lesson state (two rooms on one clock cannot each pause at their own
    checkpoints: a lesson scenario compared side by side runs as a plain scenario), and the
    comparison. build.comparison_start builds them; they go live together (build._build)."""
    with transaction.atomic():
        rooms, scenarios = [], []
        for side, ((label, _), text) in zip(("left", "right"), sides, strict=True):
            try:
                room, scenario = room_prepare(
                    f"{base} ({label})",
                    text,
                    owner,
                    speed,
                    creator=creator,
                    _counted=True,
                    build_state=Room.BUILDING,
                )
            except ScenarioError as exc:
                raise ActionError(f"{side}: {exc}") from None
            rooms.append(room)
            scenarios.append(scenario)
        Room.objects.filter(pk__in=[r.pk for r in rooms]).update(
            operator_token=rooms[0].operator_token
        )
        LessonState.objects.filter(room__in=rooms).delete()
        comparison = _comparison_row(base, rooms, (sides[0][0][0], sides[1][0][0]))
    return comparison, scenarios


def _unique_comparison_slug(name: str, taken: frozenset[str] = frozenset()) -> str:
    base = slugify(f"compare-{name}")[:60] or "compare"
    slug, n = base, 2
    while slug in taken or Comparison.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug
