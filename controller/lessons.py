"""Lessons in a room: the room side of LESSON-CONTRACT.md (the engine side, parsing and the
checkpoints' expectations, is controller/engine/lesson.py).

A lesson room is a room whose scenario has ``spec.lesson``. Its steps are anchored in simulated
time and their faults are the scenario's own, so the room's timeline always equals ``simulate``
of its export: nothing here changes the simulation, only when the clock stops and what the page
shows.

- The tick (services._advance) calls :func:`run`: the engine advances to the room's "now" but
  stops right after the instant the next checkpoint is reached (its time, or the first matching
  timeline event at or after its step began); the room is then PAUSED there (persisted in Room
  and LessonState, so a worker restart keeps it) and the class is asked.
- The step shown follows the clock: when the clock passes a step's begin the page shows it. The
  operator's prev/next move the step shown; next at a checkpoint closes it and resumes the clock.
- Answers: one per client per checkpoint (the last counts), only while its question is open and
  not yet revealed; a bad one is refused with the field named and nothing stored.
- Reveal (operator only) shows the right answer, the class's counts and the why.

Broadcast (to the room's group; the consumer hides the counts from viewers before the reveal
and names from viewers always): ``{"type": "lesson", "step", "checkpoint", "paused", "counts",
"answered", "revealed", "answer"?, "why"?, "right"?, "names"?}``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from django.db import transaction

from . import timeline_store
from .engine.lesson import Checkpoint, Lesson, LessonRuntime
from .engine.scenario import Scenario, ScenarioError, load_scenario
from .engine.simulation import Simulation
from .models import LessonAnswer, LessonState, Room

MAX_NAME = 40

# scenario text -> its lesson (None: not a lesson). A few are kept: parsing a scenario is slow.
_LESSONS: dict[str, Lesson | None] = {}
_HAS_LESSON = re.compile(r"^\s+lesson:|[{,]\s*lesson:", re.MULTILINE)


class LessonError(ValueError):
    """A lesson message refused: the message names the field and says why."""


def lesson_of_text(text: str, scenario: Scenario | None = None) -> Lesson | None:
    """The scenario's lesson. A text without a ``lesson:`` key is not parsed at all (a
    1,000-node scenario takes seconds): rooms that are not lessons pay nothing."""
    if scenario is None and not _HAS_LESSON.search(text):
        return None
    if text not in _LESSONS:
        if scenario is None:
            scenario = load_scenario(text)
        while len(_LESSONS) >= 16:
            del _LESSONS[next(iter(_LESSONS))]
        _LESSONS[text] = scenario.lesson
    return _LESSONS[text]


def lesson_of(room: Room) -> Lesson | None:
    return lesson_of_text(room.scenario_yaml)


def is_lesson_text(text: str) -> bool:
    """Whether a scenario is a lesson, without parsing it whole (for the landing page)."""
    try:
        return lesson_of_text(text) is not None
    except ScenarioError:
        return False


def on_create(room: Room, scenario: Scenario) -> None:
    """Room creation: a lesson scenario gets its LessonState (step 0, nothing reached)."""
    if lesson_of_text(room.scenario_yaml, scenario) is not None:
        LessonState.objects.create(room=room)


# -- time: where steps begin and where the clock stops ---------------------------------------
def _checkpoints(lesson: Lesson) -> list[tuple[int, Checkpoint]]:
    return [(i, s.checkpoint) for i, s in enumerate(lesson.steps) if s.checkpoint is not None]


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
    return message(room, lesson, ls)


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


# -- reading ----------------------------------------------------------------------------------
def public_def(lesson: Lesson) -> dict[str, Any]:
    """The lesson as the page gets it: no answers, whys or expectations (those come with the
    reveal)."""
    steps = []
    for s in lesson.steps:
        cp = s.checkpoint
        focus = s.focus or {}
        steps.append(
            {
                "id": s.id,
                "title": s.title,
                "text": s.text,
                "at": s.at_ms / 1000 if s.at_ms is not None else None,
                "focus": {
                    "nodes": list(focus.get("nodes") or []),
                    "zones": list(focus.get("zones") or []),
                }
                if focus
                else None,
                "checkpoint": None
                if cp is None
                else {
                    "id": cp.id,
                    "question": cp.question,
                    "kind": cp.kind,
                    "choices": list(cp.choices or []),
                    "tolerance": cp.tolerance,
                },
            }
        )
    return {"title": lesson.title, "summary": lesson.summary, "steps": steps}


def _checkpoint(lesson: Lesson, cp_id: str) -> Checkpoint | None:
    return next((cp for _i, cp in _checkpoints(lesson) if cp.id == cp_id), None)


def message(room: Room, lesson: Lesson, ls: LessonState) -> dict[str, Any]:
    """The lesson's state as every page gets it (the consumer filters per role)."""
    out: dict[str, Any] = {
        "type": "lesson",
        "step": ls.step,
        "checkpoint": ls.checkpoint or None,
        "paused": bool(ls.checkpoint),
        "counts": {},
        "answered": 0,
        "revealed": ls.revealed,
        "names": [],
    }
    cp = _checkpoint(lesson, ls.checkpoint) if ls.checkpoint else None
    if cp is None:
        return out
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
    """What a page of that role gets: viewers see the class's counts only once revealed (so
    that nobody follows the majority) and never the names."""
    if operator:
        return msg
    out = {k: v for k, v in msg.items() if k != "names"}
    if not msg.get("revealed"):
        out["counts"] = {}
    return out


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
    return {"def": public_def(lesson), "state": state}


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
        from . import services

        services.room_control(room_id, "resume", None, actor)
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


def _broadcast(room_id: int, msg: dict[str, Any]) -> None:
    from .services import _broadcast_after_commit

    _broadcast_after_commit(room_id, msg)
