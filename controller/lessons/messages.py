"""What a lesson room's pages are sent: the lesson message (by role: the consumer hides the
counts and names), the state in a snapshot, and the broadcast.
"""

from __future__ import annotations

from typing import Any

from ..engine.holdback import Hold
from ..engine.lesson import Checkpoint, Lesson
from ..models import LessonAnswer, LessonState, Room
from ..rooms.broadcast import _broadcast_after_commit
from .definition import _checkpoint, latest_step, lesson_of, public_def


def message(
    room: Room, lesson: Lesson, ls: LessonState, now_ms: int | None = None
) -> dict[str, Any]:
    """The lesson's state as every page gets it (the consumer filters per role). ``hold``
    (only for the consumer, never sent) says what a page that answers must not get while the
    question is open (engine/holdback.py). ``def``: the lesson's definition up to ``latest``
    (public_def); the consumer sends it to a page only when its ``latest`` is not the one
    that page has (for_page)."""
    latest = latest_step(lesson, ls, room.sim_ms if now_ms is None else now_ms)
    out: dict[str, Any] = {
        "type": "lesson",
        "step": ls.step,
        "latest": latest,
        "def": public_def(lesson, latest),
        "checkpoint": ls.checkpoint or None,
        "paused": bool(ls.checkpoint),
        "counts": {},
        "answered": 0,
        "revealed": ls.revealed,
        "solo": ls.solo,
        "names": [],
        "hold": None,
    }
    cp = _checkpoint(lesson, ls.checkpoint) if ls.checkpoint else None
    if cp is None:
        return out
    if not ls.revealed:
        out["hold"] = Hold.of(cp, ls.reached.get(cp.id, 0)).to_dict()
    answers = list(
        LessonAnswer.objects.filter(room=room, checkpoint=cp.id)
        .order_by("id")
        .values_list("value", "name")
    )
    if cp.kind == "choice":
        counts = {str(i): 0 for i in range(len(cp.choices))}
        for value, _name in answers:
            counts[str(int(value))] = counts.get(str(int(value)), 0) + 1
    else:
        counts = {}
        for value, _name in answers:
            key = str(round(value))
            counts[key] = counts.get(key, 0) + 1
    out["counts"] = counts
    out["answered"] = len(answers)
    out["names"] = [{"name": n, "answer": _shown(cp, v)} for v, n in answers if n]
    if ls.revealed:
        out["answer"] = cp.answer
        out["why"] = cp.why or ""
        out["right"] = sum(1 for v, _n in answers if cp.is_right(_shown(cp, v)))
    return out


def _shown(cp: Checkpoint, value: float) -> Any:
    return int(value) if cp.kind == "choice" or float(value).is_integer() else value


def for_role(msg: dict[str, Any], operator: bool) -> dict[str, Any]:
    """What a page of that role gets: viewers (and the presenter view, and a learner alone:
    ``operator`` False for them) see the class's counts only once revealed (so that nobody
    follows the majority) and never the names. The hold is the consumer's."""
    if operator and not msg.get("solo"):
        return {k: v for k, v in msg.items() if k != "hold"}
    out = {k: v for k, v in msg.items() if k not in ("names", "hold")}
    if not msg.get("revealed"):
        out["counts"] = {}
    return out


def for_page(msg: dict[str, Any], has_latest: int | None) -> dict[str, Any]:
    """A lesson message for a page whose definition goes up to step ``has_latest``: without
    the definition when that is still the lesson's latest step (most messages: an answer
    counted, a reveal), with it when the lesson has reached a step the page lacks (or a
    rewind took one back)."""
    if has_latest is not None and msg.get("latest") == has_latest:
        return {k: v for k, v in msg.items() if k != "def"}
    return msg


def holds(msg: dict[str, Any] | None, operator: bool) -> Hold | None:
    """The hold a page gets from a lesson message: every page that answers (a viewer, or the
    learner of a room learning alone) while its question is open; not the operator of a
    class, who must see what the class does not."""
    if not msg or (operator and not msg.get("solo")):
        return None
    return Hold.from_dict(msg.get("hold"))


def snapshot(room: Room, client: str = "") -> dict[str, Any] | None:
    """For a page connecting: the lesson (without answers) and its state; ``mine`` is this
    client's answer to the open checkpoint, if any."""
    lesson = lesson_of(room)
    if lesson is None:
        return None
    ls = LessonState.objects.filter(room=room).first()
    if ls is None:  # compared side by side: not taught as a lesson
        return None
    state = message(room, lesson, ls)
    lesson_def = state.pop("def")
    mine = None
    if ls.checkpoint and client:
        row = LessonAnswer.objects.filter(room=room, checkpoint=ls.checkpoint, client=client)
        value = row.values_list("value", flat=True).first()
        cp = _checkpoint(lesson, ls.checkpoint)
        if value is not None and cp is not None:
            mine = _shown(cp, value)
    state["mine"] = mine
    # Where each checkpoint reached so far paused the room (simulated seconds): the page's time
    # scrubber marks them (a page that is open sees the pauses come; one that connects, here).
    state["reached"] = {cp_id: ms / 1000 for cp_id, ms in sorted(ls.reached.items())}
    return {"def": lesson_def, "state": state}


def _broadcast(room_id: int, msg: dict[str, Any]) -> None:
    _broadcast_after_commit(room_id, msg)
