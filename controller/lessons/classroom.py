"""The class's messages: answers (one per client per checkpoint), the operator's reveal, next
and prev.
"""

from __future__ import annotations

import math
from typing import Any

from django.db import transaction
from django.utils import timezone

from .. import limits
from ..engine import values
from ..engine.lesson import Checkpoint, Lesson, LessonRuntime
from ..models import LessonAnswer, LessonState, Room
from ..rooms import controls
from ..rooms.errors import refuse_expired
from .definition import MAX_NAME, LessonError, _checkpoint, latest_step, lesson_of
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
    if values.text_problem(client):  # it is stored with the answer
        raise LessonError(f"lesson.answer: the page's client id {values.text_problem(client)}")
    bad = values.first_problem(content, "lesson.answer", numbers=False)  # NUL, lone surrogate
    if bad is not None:
        raise LessonError(": ".join(bad))
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
    if isinstance(raw, int) and values.number_problem(raw):  # past 64 bits (10**400)
        raise LessonError(f"lesson.answer.answer: {values.number_problem(raw)}")
    if cp.kind == "choice":
        n = len(cp.choices)
        if isinstance(raw, float) and not raw.is_integer() or not 0 <= raw < n:
            raise LessonError(
                f"lesson.answer.answer: must be an index into choices (0..{n - 1}), got {raw!r}"
            )
        return float(int(raw))
    if not math.isfinite(raw) or not 0 <= raw <= values.MAX_SECONDS:
        raise LessonError(
            f"lesson.answer.answer: must be a time in seconds (at most {values.MAX_SECONDS}, "
            f"the longest time.Duration), 0 or more, got {raw!r}"
        )
    return float(raw)


def _check_at(kind: str, at: Any) -> dict[str, Any] | None:
    """A lead press's ``at``: the lesson state the page showed when it was pressed ({step,
    checkpoint, revealed}; optional: a client without it leads as before)."""
    if at is None:
        return None
    if not isinstance(at, dict) or set(at) - {"step", "checkpoint", "revealed"}:
        raise LessonError(f"{kind}.at: must be {{step, checkpoint, revealed}}, the state shown")
    step, cp, revealed = at.get("step"), at.get("checkpoint"), at.get("revealed")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= 10_000:
        raise LessonError(f"{kind}.at.step: must be a step's index")
    if cp is not None and (not isinstance(cp, str) or len(cp) > 200):
        raise LessonError(f"{kind}.at.checkpoint: must be a question's id or null")
    if not isinstance(revealed, bool):
        raise LessonError(f"{kind}.at.revealed: must be true or false")
    return {"step": step, "checkpoint": cp or "", "revealed": revealed}


def _stale(ls: LessonState, at: dict[str, Any] | None) -> bool:
    """A press made on a state the lesson has left (a key pressed twice before the first
    press's answer reached the page): ignored quietly, not an error (issue #38)."""
    if at is None:
        return False
    return (at["step"], at["checkpoint"], at["revealed"]) != (
        ls.step,
        ls.checkpoint or "",
        ls.revealed,
    )


def stale_reply(room: Room, lesson: Lesson, ls: LessonState) -> dict[str, Any]:
    """What a stale press gets: nothing done, and the lesson's state now (the consumer sends it
    to that page alone, as it would a broadcast, so that a page that missed one catches up)."""
    return {"lesson": "stale", "state": message(room, lesson, ls)}


def stale_control(room_id: int, kind: str, at: Any) -> dict[str, Any] | None:
    """The room's Play or Step pressed with the lesson state its page showed (``at``): the
    lesson's state now when the lesson has left that state (the press is dropped: applied,
    the lesson's rule would act on a question that page never showed, say reveal the next
    question the first Step just reached), else None (the control goes ahead)."""
    at = _check_at(kind, at)
    if at is None:
        return None
    room = Room.objects.get(pk=room_id)
    lesson = lesson_of(room)
    ls = LessonState.objects.filter(room=room).first()
    if lesson is None or ls is None or not _stale(ls, at):
        return None
    return message(room, lesson, ls)


def reveal(room_id: int, at: Any = None) -> dict[str, Any]:
    at = _check_at("lesson.reveal", at)
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        if _stale(ls, at):
            return stale_reply(room, lesson, ls)
        if not ls.checkpoint:
            raise LessonError("lesson.reveal: no question is open")
        ls.revealed = True
        ls.step = lesson.step_index(ls.checkpoint)  # the answer under its own question
        ls.save(update_fields=["revealed", "step"])
        _broadcast(room.pk, message(room, lesson, ls))
    return {"lesson": "reveal", "checkpoint": ls.checkpoint}


def next_step(room_id: int, actor: str, close: bool = False, at: Any = None) -> dict[str, Any]:
    """Next, by the flow's one rule (static/js/lesson.js ``press``): a question is never left
    unrevealed. Looking back at an earlier step, show the one after it (an open question
    stays open); at an open question not yet revealed, reveal it; at a revealed one, close it
    and resume the clock, showing the next step once the clock has reached its begin; with no
    question open, show the next step the clock has reached (never one it has not).
    ``close``: at a revealed question, close it whatever step is shown (the room's Play).
    Learning alone, the clock stops at each step's text (progress.LessonRun): Next there goes
    on; and a question closed onto a step without a question of its own (more to come) leaves
    the clock stopped, for its text to be read first. ``at``: the state the page showed (a
    press made on a state the lesson has left does nothing: ``stale_reply``)."""
    at = _check_at("lesson.next", at)
    resume = False
    did = "next"
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        if _stale(ls, at):
            return stale_reply(room, lesson, ls)
        last = len(lesson.steps) - 1
        if ls.checkpoint:
            cp_step = lesson.step_index(ls.checkpoint)
            if ls.step < cp_step and not (close and ls.revealed):
                ls.step += 1
            elif not ls.revealed:
                did = "reveal"
                ls.revealed = True
                ls.step = cp_step
            else:
                ls.checkpoint = ""
                ls.revealed = False
                nxt = min(cp_step + 1, last)
                begin = LessonRuntime.from_dict(lesson, {"reached": ls.reached}).step_begin_ms(nxt)
                ls.step = nxt if begin is not None and begin <= room.sim_ms else cp_step
                shown = lesson.steps[ls.step]
                to_read = ls.solo and ls.step == nxt and shown.checkpoint is None and nxt < last
                resume = room.paused and not to_read
        elif ls.step < latest_step(lesson, ls, room.sim_ms):
            ls.step += 1
        elif ls.solo and room.paused:
            did, resume = "go", True  # stopped at this step's text: the learner goes on
        elif ls.solo:
            return {"lesson": "none", "step": ls.step, "resumed": False}  # the clock runs
        elif ls.step < last:
            raise LessonError(
                "lesson.next: the clock has not reached the next step yet; it is shown when "
                "the clock gets there"
            )
        else:
            raise LessonError("lesson.next: this is the last step")
        if resume:  # refused whole, before the step moves on (the resume below checks again)
            refuse_expired(room, "lesson.next")
            limits.check_running_rooms(room.creator, exclude=room.pk)
        ls.save(update_fields=["step", "checkpoint", "revealed"])
        _broadcast(room.pk, message(room, lesson, ls))
    if resume:
        controls.room_control(room_id, "resume", None, actor)
    return {"lesson": did, "step": ls.step, "resumed": resume}


def prev_step(room_id: int, at: Any = None) -> dict[str, Any]:
    """Previous: show the step before (an open question stays open and asked)."""
    at = _check_at("lesson.prev", at)
    with transaction.atomic():
        room, lesson, ls = _locked(room_id)
        if _stale(ls, at):
            return stale_reply(room, lesson, ls)
        if ls.step <= 0:
            raise LessonError("lesson.prev: this is the first step")
        ls.step -= 1
        ls.save(update_fields=["step"])
        _broadcast(room.pk, message(room, lesson, ls))
    return {"lesson": "prev", "step": ls.step}


def on_control(room_id: int, kind: str, actor: str) -> str | None:
    """The room's Play (resume) and Step at an open question, by the same rule: not yet
    revealed, they reveal it (the clock stays at the question); revealed, Play closes it and
    goes on (next_step), Step steps. Returns what the lesson did instead of the control, or
    None when the control goes ahead."""
    if kind not in ("resume", "step"):
        return None
    ls = LessonState.objects.filter(room_id=room_id).first()
    if ls is None or not ls.checkpoint:
        return None
    if not ls.revealed:
        reveal(room_id)
        return "reveal"
    if kind == "resume":
        next_step(room_id, actor, close=True)
        return "next"
    return None


def make_solo(room: Room) -> None:
    """A room made for one learner without a teacher (the landing page's "Learn alone", a
    ``?solo`` link): its operator answers, reveals and goes on, and is held back like a
    viewer (nothing answers an open question before its reveal). Not listed for others."""
    if not LessonState.objects.filter(room=room).update(solo=True):
        raise LessonError("lesson: this room's scenario has no lesson")


def wait_for_start(room: Room) -> None:
    """A class room just made ("Teach a class"): paused at 0 s, so that the teacher shares the
    viewer link and opens the projector before the clock moves; the page's Start resumes it."""
    Room.objects.filter(pk=room.pk).update(
        paused=True, sim_anchor_ms=room.sim_ms, wall_anchor=timezone.now()
    )
