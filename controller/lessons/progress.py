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


def run(room: Room, sim: Simulation, target: int) -> dict[str, Any] | None:
    """Advance ``sim`` to ``target`` (ms), stopping right after the instant the next
    checkpoint is reached (LessonRuntime.advance); pause the room there. Returns the lesson
    message to broadcast when the lesson's state changed (a checkpoint reached, or the step
    shown moved), else None. Called by the tick inside its transaction, the room locked."""
    lesson = sim.scenario.lesson  # parsed with the room's scenario: nothing to parse here
    if lesson is None:
        sim.run(target)
        return None
    ls = LessonState.objects.select_for_update().filter(room=room).first()
    if ls is None:  # a room compared side by side with another: one clock, no pauses
        sim.run(target)
        return None
    old_ms = sim.now_ms
    rt = _runtime(room, lesson, ls, old_ms)
    hit = rt.advance(sim, target)
    if hit is not None:
        cp, _t_ms = hit
        ls.reached = dict(rt.reached)
        ls.checkpoint = cp.id
        ls.revealed = False
        ls.step = lesson.step_index(cp.id)
        room.paused = True  # the tick anchors the paused clock at sim.now_ms
    elif not _follow_clock(lesson, rt, ls, old_ms, sim.now_ms):
        return None
    ls.save(update_fields=["step", "checkpoint", "revealed", "reached"])
    return message(room, lesson, ls, sim.now_ms)


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
