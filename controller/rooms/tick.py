"""The tick: apply pending actions, advance the engine toward the room's "now", persist what
changed (timeline rows, views, series, the clock) and broadcast it after commit.

The engine runs outside any database transaction: the room's engine belongs to the worker
holding the room's Redis lock (tasks.py), nothing in the database is locked while it runs,
and the tick's results are written in one short transaction at the end, over the room as it
is then (a control, a rewind or an action that came in meanwhile is not lost). A tick of the
workers (tasks.py) has a work budget (PLAYGROUND_TICK_BUDGET_SECONDS): a room whose engine
cannot keep up advances as far as the budget allows, its clock is re-anchored there (it runs
slower instead of falling further behind) and its pages are told how fast it really goes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import redis
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from ..engine.scenario import (
    ScenarioError,
)
from ..engine.simulation import ActionFailed, Simulation
from ..lessons import progress
from ..models import (
    Action,
    Comparison,
    Room,
)
from . import phases
from .broadcast import _broadcast_after_commit, bounded, max_bytes
from .clock import Pace, _clock_message, _now_target, clock_fields, publish_effective
from .persist import FIRST_DELTA_MAX, SAVED_FIELDS, _persist
from .runtime import (
    _CACHE,
    CONTROL_KINDS,
    Runtime,
    _fault_from_action,
    _runtime,
    _schedule_action,
    gc_paused,
    keep_engines_frozen,
)

__all__ = ["FIRST_DELTA_MAX", "_persist", "has_pending_actions", "room_advance"]

log = logging.getLogger(__name__)
# Errors of the services a tick uses, not of the room or an action: the tick is retried.
TRANSIENT = (OperationalError, InterfaceError, redis.RedisError)
# A tick with a budget whose engine's pace is not known yet advances this far at first (ms).
FIRST_STEP_MS = 1000


class Superseded(Exception):
    """The room changed under a tick's engine run in a way its result cannot be written over
    (a rewind, a pause before the instant the engine reached, the room deleted)."""


def has_pending_actions(room_id: int) -> bool:
    """Whether a live room has faults waiting for a tick (controls are applied at once)."""
    return (
        Action.objects.filter(room_id=room_id, status=Action.PENDING, room__build_state=Room.LIVE)
        .exclude(kind__in=CONTROL_KINDS)
        .exists()
    )


def room_advance(
    room_id: int,
    wall_now: datetime | None = None,
    extra_ms: int = 0,
    budget_s: float | None = None,
) -> dict[str, Any] | None:
    """The tick: apply pending actions, advance the engine to the room's "now", persist
    what changed and broadcast it after commit. Callers hold the room's Redis lock.
    ``budget_s``: the engine stops once it has worked this long (wall seconds), short of
    "now" if need be, and the room's clock is re-anchored where it stopped (the workers' ticks
    pass PLAYGROUND_TICK_BUDGET_SECONDS; None: to "now" whatever it takes, as a command or a
    benchmark wants).

    All or nothing: when anything in it raises, its transaction is rolled back, the cached
    engine (which may be half changed) is dropped (the next tick restores it from the snapshot
    and the action log), and the action that caused it is refused with the reason (the one
    being applied, else the newest this tick applied), so that the room goes on without it;
    the operator sees why. With no action to blame, the room is paused with the reason."""
    applied: list[int] = []
    try:
        with gc_paused():
            return _advance(room_id, wall_now or timezone.now(), extra_ms, applied, budget_s)
    except TRANSIENT:
        # The database or Redis did not answer (SQLite busy, a restart): nobody's fault; the
        # rolled-back tick is tried again by the next beat, from a rebuilt engine.
        _CACHE.pop(room_id, None)
        log.warning("room %s: tick not done (the database or Redis)", room_id, exc_info=True)
        raise
    except Exception as exc:
        _CACHE.pop(room_id, None)
        cause_id = exc.action_id if isinstance(exc, ActionFailed) else None
        cause_id = cause_id or (applied[-1] if applied else None)
        log.exception("room %s: tick failed (action %s)", room_id, cause_id)
        _tick_failed(room_id, cause_id, exc)
        return None


def _tick_failed(room_id: int, cause_id: int | None, exc: BaseException) -> None:
    root = exc.__cause__ if isinstance(exc, ActionFailed) and exc.__cause__ else exc
    reason = f"{type(root).__name__}: {str(root)[:200]}".rstrip(": ")
    with transaction.atomic():
        room = Room.objects.select_for_update().filter(pk=room_id).first()
        if room is None:
            return
        if cause_id is not None:
            action = Action.objects.filter(pk=cause_id).first()
            if action is None:
                return
            action.status, action.at_ms = Action.REFUSED, None
            action.error = f"action: could not be applied ({reason}); the room goes on without it"
            action.save(update_fields=["status", "error", "at_ms"])
            refused = {"action": action.kind, "actor": action.actor, "error": action.error}
        else:  # nothing of this tick to blame: the room stops where it was, saying why
            room.paused, room.sim_anchor_ms = True, room.sim_ms
            room.save(update_fields=["paused", "sim_anchor_ms"])
            Action.objects.create(
                room=room,
                actor="server",
                kind="pause",
                payload={"type": "pause", "value": None},
                status=Action.REFUSED,
                error=f"the room could not advance ({reason}); it is paused",
            )
            refused = {"action": "tick", "actor": "server", "error": f"paused: {reason}"}
            _broadcast_after_commit(room.pk, _clock_message(room))
        # The pages fetch a fresh snapshot (what they hold may be ahead of the rolled-back
        # state) and the operator is shown why.
        _broadcast_after_commit(room.pk, {"type": "resync", "seq": room.seq, "refused": [refused]})


def _stalled(room: Room, target: int, wall_now: datetime) -> bool:
    """A running room that no worker ticked for more than PLAYGROUND_MAX_CATCH_UP_SECONDS of
    its clock (the whole stack was stopped, say, and started again hours later) resumes from
    where its clock stood, as if it had been paused meanwhile: re-anchored at ``wall_now``
    (saved, unless a control moved the clock meanwhile, and a clock message sent to its
    pages). Catching up instead would simulate hours in one tick."""
    limit = settings.PLAYGROUND_MAX_CATCH_UP_SECONDS
    if room.paused or limit <= 0 or room.speed <= 0:
        return False
    behind_s = (target - room.sim_ms) / (room.speed * 1000)
    if behind_s <= limit:
        return False
    log.warning(
        "room %s: its clock is %.0f s behind (nobody ticked it); it resumes from %.1f s",
        room.pk,
        behind_s,
        room.sim_ms / 1000,
    )
    with transaction.atomic():
        fresh = Room.objects.select_for_update().filter(pk=room.pk).first()
        if fresh is None or clock_fields(fresh) != clock_fields(room):
            raise Superseded
        room.sim_anchor_ms = room.sim_ms
        room.wall_anchor = wall_now
        room.save(update_fields=["sim_anchor_ms", "wall_anchor"])
        _broadcast_after_commit(room.pk, _clock_message(room))
    return True


def _advance(
    room_id: int, wall_now: datetime, extra_ms: int, applied: list[int], budget_s: float | None
) -> dict[str, Any] | None:
    phases.start()
    load = phases.mark()
    # Read, not locked: the room's engine is this worker's while it holds the Redis lock,
    # and what users change meanwhile is read again when the results are written (_write).
    room = Room.objects.filter(pk=room_id).first()
    if room is None or room.build_state != Room.LIVE:
        return None  # gone, still being built by a worker (build.py), or its build failed
    pending = list(room.actions.filter(status=Action.PENDING).order_by("id"))
    if any(action.kind == "rewind" for action in pending):
        return None  # the room stands still until its rewind is run (controls.rewind_run)
    target = _now_target(room, wall_now) + extra_ms
    try:
        if _stalled(room, target, wall_now):
            target = room.sim_ms + extra_ms
    except Superseded:
        return None  # a control came first: the next tick goes from there
    if target <= room.sim_ms and not pending:
        return None  # the clock does not move and nothing waits: no engine work at all
    rt = _runtime(room)
    keep_engines_frozen()
    sim = rt.sim
    clock = clock_fields(room)
    start_ms = sim.now_ms
    for action in pending:
        if action.kind in CONTROL_KINDS:
            continue
        at = max(sim.now_ms + 1, room.sim_ms + 1)
        action.at_ms = at
        try:
            fault = _fault_from_action(action, set(sim.cluster.nodes), sim)
            if "pod" in fault.args and fault.args["pod"] not in sim.cluster.pods:
                raise ScenarioError("action.pod", f'unknown pod "{fault.args["pod"]}"')
        except ScenarioError as exc:
            action.status, action.error, action.at_ms = Action.REFUSED, str(exc), None
            continue
        _schedule_action(sim, fault, action.pk)
        applied.append(action.pk)
        action.status = Action.APPLIED
        target = max(target, at)
    lesson = progress.begin(room, sim)
    phases.since("load", load)
    with phases.phase("advance"):
        # A lesson's clock stops right after the instant a checkpoint is reached (paused).
        ran_out = _run(rt, target, lesson, budget_s)
    try:
        room, delta, lesson_msg = _write(
            room, rt, clock, pending, lesson, ran_out, wall_now, extra_ms
        )
    except Superseded:
        # What the engine did is not the room's any more: dropped with the engine (the next
        # tick rebuilds it from the room as it is now); the actions stay pending for it.
        _CACHE.pop_if(room_id, rt)
        log.info("room %s: a control came during the tick; its result is dropped", room_id)
        return None
    if rt.pace is None:
        rt.pace = Pace(clock, wall_now)
    rt.pace.tick(clock, wall_now, rt.sim.now_ms - start_ms, ran_out)
    rt.pace.clock = clock_fields(room)
    # The speed the room really runs at, when its ticks cannot keep up (its pages say so).
    delta["effective"] = rt.pace.slowed(room)
    publish_effective(room.pk, rt.pace, delta["effective"])  # for the snapshots (new pages)
    with phases.phase("broadcast"):
        # The lesson's message first: a question reached in this tick holds back, for whoever
        # answers it, what this very delta would tell them (live.consumers, engine/holdback.py).
        if lesson_msg is not None:
            _broadcast_after_commit(room.pk, lesson_msg)
        message = bounded(delta)
        message["effective"] = delta["effective"]  # a resync notice's too
        _broadcast_after_commit(room.pk, message)
    return delta


def _run(
    rt: Runtime, target: int, lesson: progress.LessonRun | None, budget_s: float | None
) -> bool:
    """Advance the engine toward ``target`` (ms); with a budget, in steps sized by the engine's
    measured pace, until ``target`` or until the budget is spent (then True). A step never
    splits an instant, so a step's work may exceed what is left of the budget. The timeline is
    the same whatever the steps (tests/engine/test_steps.py)."""
    sim = rt.sim
    started = time.monotonic()
    while True:
        step_to = target
        if budget_s is not None:
            left = max(0.0, started + budget_s - time.monotonic())
            reach = rt.sim_ms_per_s * left / 2 if rt.sim_ms_per_s > 0 else FIRST_STEP_MS
            step_to = min(target, sim.now_ms + max(1, int(reach)))
        before, t0 = sim.now_ms, time.monotonic()
        if lesson is not None:
            if lesson.advance(sim, step_to):
                return False  # paused at a checkpoint: "now" for this room
        else:
            sim.run(step_to)
        took = time.monotonic() - t0
        if took > 0 and sim.now_ms > before:
            pace = (sim.now_ms - before) / took
            rt.sim_ms_per_s = pace if rt.sim_ms_per_s <= 0 else (rt.sim_ms_per_s + pace) / 2
        if sim.now_ms >= target:
            return False
        if budget_s is not None and time.monotonic() - started >= budget_s:
            return True


def _write(
    room: Room,
    rt: Runtime,
    clock: tuple[Any, ...],
    pending: list[Action],
    lesson: progress.LessonRun | None,
    ran_out: bool,
    wall_now: datetime,
    extra_ms: int,
) -> tuple[Room, dict[str, Any], dict[str, Any] | None]:
    """The tick's results. What is written is made first, outside any transaction (the
    events' rows, the views, the chart points: persist._persist with ``later``); then one
    short transaction over the room as it is now (read again, locked) writes the actions'
    outcomes, the lesson's state, those rows and the room's counters and clock. Controls that
    came while the engine ran stand (speed, pause, anchors); a result that a control overtook
    (a rewind; a pause, step back or idle stop before the instant reached) raises Superseded,
    writing nothing. Returns the room as written, the delta and the lesson's message."""
    sim = rt.sim
    later: list[Callable[[], object]] = []
    version = room.version  # (the persist counts the room's version on)
    room.sim_ms = sim.now_ms
    delta = _persist(room, rt, limit=max_bytes(), later=later)
    load = phases.mark()
    with transaction.atomic():
        fresh = Room.objects.select_for_update().filter(pk=room.pk).first()
        if fresh is None or fresh.version != version or fresh.build_state != Room.LIVE:
            raise Superseded
        moved = clock_fields(fresh) != clock
        if moved and sim.now_ms > _now_target(fresh, timezone.now()) + extra_ms:
            raise Superseded
        for action in pending:
            if action.kind in CONTROL_KINDS:
                continue
            fields = ["status", "at_ms"] + (["error"] if action.status == Action.REFUSED else [])
            action.save(update_fields=fields)
        refused = _record_refusals(fresh, sim)
        lesson_msg = lesson.save(fresh, sim.now_ms) if lesson is not None else None
        phases.since("load", load)
        with phases.phase("persist"):
            for write in later:
                write()
        for field in ("series_t_ms", "sim_ms", "event_count", "seq", "version"):
            setattr(fresh, field, getattr(room, field))
        if lesson is not None and lesson.stopped:
            fresh.sim_anchor_ms = fresh.sim_ms  # paused at the checkpoint's (or text's) instant
        elif fresh.paused:
            fresh.sim_anchor_ms = max(fresh.sim_anchor_ms, fresh.sim_ms)  # a step goes on
        elif ran_out and not moved and not _compared(fresh.pk):
            # Out of budget short of "now": the clock goes on from where the engine stopped,
            # slower than asked rather than further and further behind. (A room compared
            # side by side keeps the one clock of the two: it catches up in later ticks.)
            fresh.sim_anchor_ms = fresh.sim_ms
            fresh.wall_anchor = wall_now
        fresh.save(update_fields=SAVED_FIELDS)
        delta["speed"], delta["paused"] = fresh.speed, fresh.paused  # as they are now
        if refused:
            delta["refused"] = refused
        commit = phases.mark()
    phases.since("commit", commit)
    return fresh, delta, lesson_msg


def _compared(room_id: int) -> bool:
    return Comparison.objects.filter(Q(left_id=room_id) | Q(right_id=room_id)).exists()


def _record_refusals(room: Room, sim: Simulation) -> list[dict[str, Any]]:
    """Actions valid when sent but whose target was gone at their instant (two operators,
    one tick): refused with the engine's reason, never replayed or exported."""
    out: list[dict[str, Any]] = []
    if not sim.refused_actions:
        return out
    for action in room.actions.filter(pk__in=list(sim.refused_actions)).order_by("id"):
        error = sim.refused_actions[action.pk]  # "action.node: ..." (the fault's path)
        action.status, action.error, action.at_ms = Action.REFUSED, error, None
        action.save(update_fields=["status", "error", "at_ms"])
        out.append({"action": action.kind, "actor": action.actor, "error": action.error})
    sim.refused_actions.clear()
    return out
