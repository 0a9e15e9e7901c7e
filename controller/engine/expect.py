"""``spec.expect``: timeline events that must (or must not) happen (design.md).

Each item names an event ``type`` and fields to match, and one of ``at`` (exact
seconds), ``between: [a, b]``, ``absent: true`` or ``count: N``; ``from``/``until``
limit the window and ``nth: K`` picks the K-th match (default the first).
"""

from __future__ import annotations

from typing import Any

from .scenario import ScenarioError, _bool, _int, _list, _num
from .timeline import EVENT_FIELDS, Event

CONTROL_KEYS = {"type", "at", "between", "absent", "from", "until", "count", "nth", "note"}


def validate_expectation(e: dict[str, Any], path: str) -> None:
    etype = e.get("type")
    if not isinstance(etype, str) or etype not in EVENT_FIELDS:
        raise ScenarioError(f"{path}.type", f"unknown event type {etype!r}")
    allowed = set(EVENT_FIELDS[etype]) | CONTROL_KEYS
    if etype in ("Fault", "FaultRefused"):
        allowed |= {"fault", "node", "pod", "zone", "workload"}
    for k in e:
        if k not in allowed:
            raise ScenarioError(f"{path}.{k}", f"{etype} events have no field {k!r}")
    if "at" in e:
        _num(e["at"], f"{path}.at")
    if "between" in e:
        b = _list(e["between"], f"{path}.between")
        if len(b) != 2:
            raise ScenarioError(f"{path}.between", "must be [from, to]")
        if _num(b[0], f"{path}.between[0]") > _num(b[1], f"{path}.between[1]"):
            raise ScenarioError(f"{path}.between", f"from {b[0]} is after to {b[1]}")
    if "absent" in e:
        _bool(e["absent"], f"{path}.absent")
    for k in ("from", "until"):
        if k in e:
            _num(e[k], f"{path}.{k}")
    if "count" in e:
        _int(e["count"], f"{path}.count")
    if "nth" in e:
        _int(e["nth"], f"{path}.nth", minimum=1)


def _field_matches(want: Any, got: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got or str(want) == str(got)
    if isinstance(want, int | float) and isinstance(got, int | float):
        return abs(float(want) - float(got)) < 1e-9
    return str(want) == str(got) if want is not None else got is None


def matches(e: dict[str, Any], event: Event) -> bool:
    if event["type"] != e["type"]:
        return False
    for k, want in e.items():
        if k in CONTROL_KEYS:
            continue
        if k not in event or not _field_matches(want, event[k]):
            return False
    return True


def check(e: dict[str, Any], events: list[Event]) -> str | None:
    """None if the expectation holds, else a sentence saying what happened instead."""
    lo = round(float(e.get("from", float("-inf"))) * 1000) if "from" in e else None
    hi = round(float(e.get("until")) * 1000) if "until" in e else None
    found = [
        ev
        for ev in events
        if (lo is None or ev["t"] >= lo) and (hi is None or ev["t"] <= hi) and matches(e, ev)
    ]
    times = ", ".join(f"{ev['t'] / 1000:g}" for ev in found[:5]) + (
        " ..." if len(found) > 5 else ""
    )
    if e.get("absent"):
        if found:
            return f"expected no such event, found {len(found)} (at {times})"
        return None
    if "count" in e:
        if len(found) != int(e["count"]):
            return f"expected {e['count']} such events, found {len(found)}" + (
                f" (at {times})" if found else ""
            )
        return None
    nth = int(e.get("nth", 1))
    if len(found) < nth:
        return f"expected match #{nth}, found {len(found)}" + (f" (at {times})" if found else "")
    ev = found[nth - 1]
    t = ev["t"]
    if "at" in e and t != round(float(e["at"]) * 1000):
        return f"expected at {float(e['at']):g}, happened at {t / 1000:g}"
    if "between" in e:
        a, b = (round(float(x) * 1000) for x in e["between"])
        if not a <= t <= b:
            return f"expected between {a / 1000:g} and {b / 1000:g}, happened at {t / 1000:g}"
    return None


def check_all(
    expect: list[dict[str, Any]], events: list[Event]
) -> list[tuple[int, dict[str, Any], str]]:
    """Every failed expectation: (index, expectation, why)."""
    failures = []
    for i, e in enumerate(expect):
        why = check(e, events)
        if why is not None:
            failures.append((i, e, why))
    return failures


def describe(e: dict[str, Any]) -> str:
    fields = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("note",))
    return fields + (f"  ({e['note']})" if "note" in e else "")
