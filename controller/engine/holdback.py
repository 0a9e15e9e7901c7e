"""What a page that answers must not get while a lesson's question is open: the answer.

While a checkpoint is open and not revealed, the room is paused at its instant and its
question is asked. The views the room sends are the engine's (state.py), and some of them
answer the question before the class has: a silent node's ``unknownAt`` (the monitor pass's
rule applied ahead of time), a pod's ``taintEvictionAt``, a zone's rate and token bucket, and
the timeline events of the pause instant that the checkpoint's ``expect`` names (at the
FullDisruption pause, the ZoneRate event saying 0.1/s). A :class:`Hold` made from the open
checkpoint takes them out of what is sent; the operator of a class keeps everything.

What a hold takes out (the checkpoint's ``hide:``, engine/lesson.py's HIDE and defaults):

- ``predictions``: ``unknownAt`` of nodes; ``taintEvictionAt`` / ``taintEvictionSince`` of
  pods; ``nextTokenAt`` of zones: times of what has not happened yet. The values become
  null, and ``held`` on the row lists what was taken out (so that a page can say "after the
  reveal" instead of "never").
- ``zoneRate``: a zone's ``qps``, ``tokens``, ``burst`` and ``nextTokenAt``, and the
  ``ZoneRate`` events from the pause instant on (earlier ones were seen before it).
- always: the events that match one of the checkpoint's ``expect`` items in its time window
  (not those that only say an event is absent), except the event it waited for (its
  question states it).

Pure: dicts in, dicts out (the rows as state.py makes them, events as the page gets them,
``t`` in seconds), no Django. The live side (controller/) decides who is held and when.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .expect import matches
from .lesson import Checkpoint, Lesson, compiled_faults
from .quantity import parse_duration_ms

PREDICTIONS = {
    "node": ("unknownAt",),
    "pod": ("taintEvictionAt", "taintEvictionSince"),
    "zone": ("nextTokenAt",),
}
ZONE_RATE = ("qps", "tokens", "burst", "nextTokenAt")


def _in_window(e: Mapping[str, Any], t: Any) -> bool:
    """Whether an event at ``t`` (seconds) falls in the expectation's time window."""
    if not isinstance(t, int | float):
        return True
    if "at" in e:
        return abs(t - float(e["at"])) < 0.0005
    if "between" in e:
        lo, hi = e["between"]
        if not float(lo) - 0.0005 <= t <= float(hi) + 0.0005:
            return False
    if "from" in e and t < float(e["from"]) - 0.0005:
        return False
    return not ("until" in e and t > float(e["until"]) + 0.0005)


@dataclass(frozen=True, slots=True)
class Hold:
    """The open checkpoint's hold (see the module docstring)."""

    checkpoint: str
    hide: tuple[str, ...]
    expect: tuple[dict[str, Any], ...] = ()
    when_event: dict[str, Any] | None = None
    at: float = 0.0  # the pause instant (seconds)
    # Fields held per row kind, worked out once.
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, cp: Checkpoint, at_ms: int = 0) -> Hold:
        """The hold of ``cp``, paused at ``at_ms``."""
        return cls.make(cp.id, cp.hide, cp.expect, cp.when_event, at_ms / 1000)

    @classmethod
    def make(
        cls,
        checkpoint: str,
        hide: Iterable[str],
        expect: Iterable[Mapping[str, Any]] = (),
        when_event: Mapping[str, Any] | None = None,
        at: float = 0.0,
    ) -> Hold:
        hide = tuple(hide)
        fields: dict[str, tuple[str, ...]] = {"node": (), "pod": (), "zone": ()}
        if "predictions" in hide:
            fields = {k: tuple(v) for k, v in PREDICTIONS.items()}
        if "zoneRate" in hide:
            fields["zone"] = tuple(dict.fromkeys((*fields["zone"], *ZONE_RATE)))
        return cls(
            checkpoint=checkpoint,
            hide=hide,
            expect=tuple(dict(e) for e in expect if not e.get("absent")),
            when_event=dict(when_event) if when_event is not None else None,
            at=float(at),
            fields=fields,
        )

    # -- rows ----------------------------------------------------------------------------
    def row(self, kind: str, row: Mapping[str, Any] | None) -> Any:
        """A node, pod or zone view row as a held page gets it (None stays None)."""
        held = self.fields.get(kind, ())
        if row is None or not held:
            return row
        out = dict(row)
        for k in held:
            if k in out:
                out[k] = None
        out["held"] = list(held)
        return out

    def zones(self, zones: list[Mapping[str, Any]] | None) -> Any:
        return None if zones is None else [self.row("zone", z) for z in zones]

    # -- events --------------------------------------------------------------------------
    def keeps(self, event: Mapping[str, Any]) -> bool:
        """Whether a held page may see this timeline event."""
        t = event.get("t")
        if event.get("type") == "ZoneRate" and "zoneRate" in self.hide:
            if not isinstance(t, int | float) or t >= self.at - 0.0005:
                return False
        if not self.expect:
            return True
        if self.when_event is not None and matches(self.when_event, event):  # type: ignore[arg-type]
            return True
        return not any(
            _in_window(e, event.get("t")) and matches(e, event)  # type: ignore[arg-type]
            for e in self.expect
        )

    def events(self, events: list[Mapping[str, Any]] | None) -> Any:
        return None if events is None else [e for e in events if self.keeps(e)]

    # -- whole messages ------------------------------------------------------------------
    def snapshot(self, snap: Mapping[str, Any]) -> dict[str, Any]:
        """A room snapshot (services.room_snapshot's keys) as a held page gets it."""
        out = dict(snap)
        out["nodes"] = [self.row("node", n) for n in snap.get("nodes") or []]
        out["pods"] = [self.row("pod", p) for p in snap.get("pods") or []]
        out["zones"] = self.zones(snap.get("zones")) or []
        out["events"] = self.events(snap.get("events")) or []
        out["held"] = self.public()
        return out

    def delta(self, delta: Mapping[str, Any]) -> dict[str, Any]:
        """A tick's delta (or a rewind's reset) as a held page gets it."""
        out = dict(delta)
        for kind, key in (("node", "nodes"), ("pod", "pods")):
            if delta.get(key):
                out[key] = {k: self.row(kind, v) for k, v in delta[key].items()}
        if delta.get("zones") is not None:
            out["zones"] = self.zones(delta["zones"])
        if delta.get("events") is not None:
            out["events"] = self.events(delta["events"])
        return out

    # -- carried in messages -------------------------------------------------------------
    def public(self) -> dict[str, Any]:
        """What a held page is told of its hold: which question, what kind of data is held.
        Never the expectations (they are the answer), nor the event it waited for."""
        return {"checkpoint": self.checkpoint, "hide": list(self.hide)}

    def to_dict(self) -> dict[str, Any]:
        """The whole hold, for the server's side only (the lesson broadcast to the room's
        consumers, which take it out before sending): its ``expect`` is the answer."""
        return {
            "checkpoint": self.checkpoint,
            "hide": list(self.hide),
            "expect": [dict(e) for e in self.expect],
            "when": self.when_event,
            "at": self.at,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Hold | None:
        if not d:
            return None
        return cls.make(
            d["checkpoint"],
            d.get("hide") or (),
            d.get("expect") or (),
            d.get("when"),
            d.get("at", 0),
        )


def without_lesson(
    root: dict[str, Any], lesson: Lesson, until_ms: int | None = None
) -> dict[str, Any]:
    """A scenario document (its parsed mapping) with its lesson compiled out, for a download a
    page that answers can reach before the lesson is over: each step's faults become
    ``spec.faults`` at the step's begin (after the scenario's own, as the loader orders them,
    so the timeline is the same) and ``spec.lesson`` (answers, whys, expectations) and
    ``spec.expect`` go. ``until_ms`` (the room's clock): the faults after it go too (the
    faults still to come say what the next steps do). Changes ``root`` and returns it."""
    spec = root.setdefault("spec", {})
    faults = [f for f in spec.get("faults") or [] if _fault_due(f, until_ms)]
    for at_ms, fault, _path in compiled_faults(lesson):
        if until_ms is None or at_ms <= until_ms:
            faults.append({"at": f"{at_ms}ms", **fault})
    if faults:
        spec["faults"] = faults
    else:
        spec.pop("faults", None)
    spec.pop("lesson", None)
    spec.pop("expect", None)
    return root


def _fault_due(fault: Any, until_ms: int | None) -> bool:
    """Whether a scenario fault happens by ``until_ms`` (one whose time does not read is kept:
    the loader has checked the scenario, and its error would name it)."""
    if until_ms is None or not isinstance(fault, Mapping):
        return True
    try:
        return parse_duration_ms(fault.get("at", 0)) <= until_ms
    except ValueError:
        return True
