"""The class's messages: answers (one per client per checkpoint), the operator's reveal, next
and prev.
"""

from __future__ import annotations

import math
from typing import Any

from django.db import transaction

from ..engine.lesson import Checkpoint, Lesson
from ..models import LessonAnswer, LessonState, Room
from ..rooms import controls
from .definition import MAX_NAME, LessonError, _checkpoint, _checkpoints, lesson_of
from .messages import _broadcast, _shown, message


# -- changes ----------------------------------------------------------------------------------
def _locked(room_id: int) -> tuple[Room, Lesson, LessonState]:
    """The room (not locked: an answer never waits for a long tick) and its lesson state,
    locked (the tick locks the room, then this row: the same order, no deadlock)."""
    room = Room.objects.get(pk=room_id)
    lesson = lesson_of(room)
    if lesson is None:
        raise LessonError("lesson: this room's scenario has no lesson")
    ls = LessonState.objects.select_for_update().filter(room=room).first()
    if ls is None:
        raise LessonError("lesson: this room is compared side by side, not taught as a lesson")
    return room, lesson, ls


def answer(room_id: int, client: str, content: dict[str, Any]) -> dict[str, Any]:
    """A viewer's answer to the open checkpoint; the last one per client counts."""
    client = str(client or "")[:80]
    if not client:
        raise LessonError("lesson.answer: this page has no client id; reload it")
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        cp_id = content.get("checkpoint")
        if not isinstance(cp_id, str) or not cp_id:
            raise LessonError("lesson.answer.checkpoint: give the id of the question answered")
        cp = _checkpoint(lesson, cp_id)
        if cp is None:
            raise LessonError(f'lesson.answer.checkpoint: no question "{cp_id}" in this lesson')
        if ls.checkpoint != cp_id:
            raise LessonError(f'lesson.answer.checkpoint: question "{cp_id}" is not open now')
        if ls.revealed:
            raise LessonError(f'lesson.answer: the answer to "{cp_id}" is already revealed')
        value = _check_value(cp, content.get("answer"))
        name = content.get("name", "")
        if name is None:
            name = ""
        if not isinstance(name, str):
            raise LessonError("lesson.answer.name: must be text")
        name = name.strip()
        if "\x00" in name:  # PostgreSQL cannot store it (SQLite would): refused on both
            raise LessonError(
                "lesson.answer.name: contains a NUL character (\\u0000), which cannot be stored"
            )
        if len(name) > MAX_NAME:
            raise LessonError(f"lesson.answer.name: at most {MAX_NAME} characters")
        LessonAnswer.objects.update_or_create(
            room=room, checkpoint=cp_id, client=client, defaults={"value": value, "name": name}
        )
        msg = message(room, lesson, ls)
        _broadcast(room.pk, msg)
    return {"lesson": "answer", "checkpoint": cp_id, "answer": _shown(cp, value)}


def _check_value(cp: Checkpoint, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        what = "an index into choices" if cp.kind == "choice" else "a number of seconds"
        raise LessonError(f"lesson.answer.answer: must be {what}, got {raw!r}")
    if cp.kind == "choice":
        n = len(cp.choices)
        if isinstance(raw, float) and not raw.is_integer() or not 0 <= raw < n:
            raise LessonError(
                f"lesson.answer.answer: must be an index into choices (0..{n - 1}), got {raw!r}"
            )
        return float(int(raw))
    if not math.isfinite(raw) or raw < 0:
        raise LessonError(
            f"lesson.answer.answer: must be a time in seconds, 0 or more, got {raw!r}"
        )
    return float(raw)


def reveal(room_id: int) -> dict[str, Any]:
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        if not ls.checkpoint:
            raise LessonError("lesson.reveal: no question is open")
        ls.revealed = True
        ls.save(update_fields=["revealed"])
        _broadcast(room.pk, message(room, lesson, ls))
    return {"lesson": "reveal", "checkpoint": ls.checkpoint}


def next_step(room_id: int, actor: str) -> dict[str, Any]:
    """Next: at a checkpoint, close it, show the next step and resume the clock; otherwise
    show the next step (the clock is not touched)."""
    resume = False
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        last = len(lesson.steps) - 1
        if ls.checkpoint:
            cp_step = next(i for i, cp in _checkpoints(lesson) if cp.id == ls.checkpoint)
            ls.step = min(max(ls.step, cp_step) + 1, last)
            ls.checkpoint = ""
            ls.revealed = False
            resume = room.paused
        elif ls.step < last:
            ls.step += 1
        else:
            raise LessonError("lesson.next: this is the last step")
        ls.save(update_fields=["step", "checkpoint", "revealed"])
        _broadcast(room.pk, message(room, lesson, ls))
    if resume:
        controls.room_control(room_id, "resume", None, actor)
    return {"lesson": "next", "step": ls.step, "resumed": resume}


def prev_step(room_id: int) -> dict[str, Any]:
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        if ls.step <= 0:
            raise LessonError("lesson.prev: this is the first step")
        ls.step -= 1
        ls.save(update_fields=["step"])
        _broadcast(room.pk, message(room, lesson, ls))
    return {"lesson": "prev", "step": ls.step}
