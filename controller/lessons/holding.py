"""What a page that answers a lesson's questions does not get before their reveal: who is held
(a viewer, or the learner of a room learning alone; never a class's operator), the open
question's hold (engine/holdback.py) for the views and events a page gets (and the Kubernetes
Events the room's API serves its kubectl: kubeapi/store.py), and whether the lesson's answers
and notes stay out of what it can download.
"""

from __future__ import annotations

from typing import Any

from ..engine.holdback import Hold
from ..models import LessonState, Room
from .definition import _checkpoint, lesson_of


def answers_here(room: Room, operator: bool) -> LessonState | None:
    """The room's lesson state when this audience answers its questions (a viewer, or the
    learner of a room learning alone), else None (not a lesson, or a class's operator)."""
    ls = LessonState.objects.filter(room=room).first()
    if ls is None or (operator and not ls.solo):
        return None
    return ls


def current_hold(room: Room, operator: bool) -> Hold | None:
    """The open question's hold for this audience, or None."""
    ls = answers_here(room, operator)
    if ls is None or not ls.checkpoint or ls.revealed:
        return None
    lesson = lesson_of(room)
    cp = _checkpoint(lesson, ls.checkpoint) if lesson is not None else None
    return Hold.of(cp, ls.reached.get(cp.id, 0)) if cp is not None else None


def is_solo(room: Room) -> bool:
    """A room learned alone (``classroom.make_solo``)."""
    return LessonState.objects.filter(room=room, solo=True).exists()


def keeps_secrets(room: Room, operator: bool) -> bool:
    """Whether this audience must not get the lesson's answers, whys and expectations (and the
    scenario's notes, which say what happens when): until every question has been reached
    and revealed."""
    ls = answers_here(room, operator)
    if ls is None:
        return False
    lesson = lesson_of(room)
    if lesson is None:
        return False
    over = all(cp.id in ls.reached for cp in lesson.checkpoints)
    return not over or bool(ls.checkpoint and not ls.revealed)


def timeline_for(room: Room, operator: bool, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A whole timeline (``t`` in ms) for this audience: while a question is open, without
    the events that answer it."""
    hold = current_hold(room, operator)
    if hold is None:
        return events
    return [e for e in events if hold.keeps({**e, "t": e["t"] / 1000})]
