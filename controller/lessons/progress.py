"""A lesson follows the room's clock: its state at creation, the tick's run up to the next
checkpoint (the room pauses there), a rewind's forgetting of what came after.
"""

from __future__ import annotations

from typing import Any

from .. import timeline_store
from ..engine.lesson import Lesson, LessonRuntime
from ..engine.scenario import Scenario
from ..engine.simulation import Simulation
from ..models import LessonAnswer, LessonState, Room
from .definition import _checkpoints, lesson_of, lesson_of_text
from .messages import _broadcast, message


def on_create(room: Room, scenario: Scenario) -> None:
    """Room creation: a lesson scenario gets its LessonState (step 0, nothing reached)."""
    if lesson_of_text(room.scenario_yaml, scenario) is not None:
        LessonState.objects.create(room=room)


def _runtime(room: Room, lesson: Lesson, ls: LessonState, now_ms: int) -> LessonRuntime:
    """The engine's LessonRuntime, rebuilt from what is persisted: the checkpoints reached,
    and (when the pending checkpoint waits for an event) the events of the instant the clock
    stands at, since a pause finishes its instant and the next checkpoint's event may be one
    of them. Nothing lives only in a worker's memory, so a restart changes nothing."""
    rt = LessonRuntime.from_dict(lesson, {"reached": ls.reached})
    pending = rt.pending
    if pending is not None and pending.when_event is not None and ls.reached:
        instant = [
            {"t": t, "type": typ, **data} for _idx, t, typ, data in timeline_store.at(room, now_ms)
        ]
        rt = LessonRuntime.from_dict(
            lesson, {"reached": ls.reached, "instant_t": now_ms, "instant": instant}
        )
    return rt


class LessonRun:
    """A lesson's part of one tick. ``advance`` runs the engine (outside any transaction, as
    the tick does: nothing is locked meanwhile); ``save`` writes what it changed, inside the
    tick's short write transaction."""

    def __init__(self, room: Room, lesson: Lesson, ls: LessonState, now_ms: int) -> None:
        self.lesson = lesson
        self.old_ms = now_ms
        self.rt = _runtime(room, lesson, ls, now_ms)
        self.hit: tuple[Any, int] | None = None
        # Learning alone, the clock also stops where the next step's text begins (issue #38:
        # at 10x a step's text was replaced by the next one seconds later, unread).
        self.text_at = _next_begin(lesson, self.rt, ls, now_ms) if ls.solo else None
        self.text_stop = False

    @property
    def stopped(self) -> bool:
        """The clock stopped here for the lesson: a checkpoint, or (alone) a step's text."""
        return self.hit is not None or self.text_stop

    def advance(self, sim: Simulation, target: int) -> bool:
        """Advance ``sim`` to ``target`` (ms), stopping right after the instant the next
        checkpoint is reached (LessonRuntime.advance), or, learning alone, the instant the
        next step begins: True then. Called again with a later target (the tick advances in
        steps), it goes on as one call would."""
        if self.stopped:
            return True
        to = target if self.text_at is None else min(target, self.text_at)
        self.hit = self.rt.advance(sim, to)
        if self.hit is None and self.text_at is not None and sim.now_ms >= self.text_at:
            self.text_stop = True
        return self.stopped

    def save(self, room: Room, now_ms: int) -> dict[str, Any] | None:
        """The lesson's state after the run, written over what is stored now (a teacher's
        reveal or next while the engine ran stays); a checkpoint reached pauses ``room``
        (the tick anchors the paused clock at ``now_ms``). Returns the lesson message to
        broadcast when the state changed, else None. The room is locked by the caller."""
        ls = LessonState.objects.select_for_update().filter(room=room).first()
        if ls is None:
            return None
        if self.hit is not None:
            cp, _t_ms = self.hit
            ls.reached = {**ls.reached, **self.rt.reached}
            ls.checkpoint = cp.id
            ls.revealed = False
            ls.step = self.lesson.step_index(cp.id)
            room.paused = True
        else:
            if self.text_stop:
                room.paused = True  # alone: the step's text waits for the learner's Next
            if not _follow_clock(self.lesson, self.rt, ls, self.old_ms, now_ms):
                return None
        ls.save(update_fields=["step", "checkpoint", "revealed", "reached"])
        return message(room, self.lesson, ls, now_ms)


def begin(room: Room, sim: Simulation) -> LessonRun | None:
    """The lesson's part of a tick of ``room`` (None: no lesson, or a room compared side by
    side with another: one clock, no pauses). Reads without locking anything."""
    lesson = sim.scenario.lesson  # parsed with the room's scenario: nothing to parse here
    if lesson is None:
        return None
    ls = LessonState.objects.filter(room=room).first()
    if ls is None:
        return None
    return LessonRun(room, lesson, ls, sim.now_ms)


def _next_begin(lesson: Lesson, rt: LessonRuntime, ls: LessonState, now_ms: int) -> int | None:
    """When the clock next shows a later step (``_follow_clock``'s rule: every checkpoint
    before it reached and closed), after ``now_ms``; None when no such begin is known."""
    for j in range(ls.step + 1, len(lesson.steps)):
        earlier = [s.checkpoint for s in lesson.steps[:j] if s.checkpoint is not None]
        if any(c.id not in ls.reached or c.id == ls.checkpoint for c in earlier):
            return None
        begin = rt.step_begin_ms(j)
        if begin is None:
            return None
        if begin > now_ms:
            return begin
    return None


def _follow_clock(
    lesson: Lesson, rt: LessonRuntime, ls: LessonState, old_ms: int, now_ms: int
) -> bool:
    """The step shown follows the clock: a step whose begin the clock just passed is shown,
    once every checkpoint before it has been reached and closed."""
    best = None
    for j in range(ls.step + 1, len(lesson.steps)):
        earlier = [s.checkpoint for s in lesson.steps[:j] if s.checkpoint is not None]
        if any(c.id not in ls.reached or c.id == ls.checkpoint for c in earlier):
            break
        begin = rt.step_begin_ms(j)
        if begin is None or begin > now_ms:
            break
        if begin > old_ms or (begin == 0 and old_ms == 0):
            best = j
    if best is None:
        return False
    ls.step = best
    return True


def on_rewind(room: Room, t_ms: int) -> None:
    """A rewind to ``t_ms``: checkpoints reached after it are forgotten (with their answers),
    and the step shown is the one in effect then. Inside the rewind's transaction."""
    lesson = lesson_of(room)
    if lesson is None:
        return
    ls = LessonState.objects.select_for_update().filter(room=room).first()
    if ls is None:
        return
    gone = [cp_id for cp_id, t in ls.reached.items() if t > t_ms]
    ls.reached = {k: v for k, v in ls.reached.items() if k not in gone}
    LessonAnswer.objects.filter(room=room, checkpoint__in=gone).delete()
    if ls.checkpoint in gone:
        ls.checkpoint = ""
        ls.revealed = False
    rt = LessonRuntime.from_dict(lesson, {"reached": ls.reached})
    step = 0
    for j in range(len(lesson.steps)):
        begin = rt.step_begin_ms(j)
        if begin is None or begin > t_ms:
            break
        step = j
    ls.step = step
    if ls.checkpoint:
        ls.step = next(i for i, cp in _checkpoints(lesson) if cp.id == ls.checkpoint)
    ls.save(update_fields=["step", "checkpoint", "revealed", "reached"])
    _broadcast(room.pk, message(room, lesson, ls))
