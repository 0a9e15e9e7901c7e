"""Time controls: speed, pause, resume, step, rewind; idle rooms stop and wake. A compared
room takes its partner with it (lockstep_ids).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from .. import limits, snapshots, timeline_store
from ..engine import values
from ..lessons import progress
from ..models import (
    Action,
    Comparison,
    ObjectView,
    Room,
    SeriesPoint,
)
from .broadcast import _broadcast_after_commit
from .clock import _clock_message, _now_target, _reanchor
from .errors import ActionError, _check_speed, refuse_unstorable
from .runtime import _CACHE, CONTROL_KINDS, Runtime, _fault_from_action, _new_sim, _schedule_action
from .tick import _persist

log = logging.getLogger(__name__)
MAX_STEP_S = 3600
# lessons.classroom.on_control, set by the app's ready() (a callback: lessons.classroom calls
# room_control to resume the clock after a question, so it cannot be imported here).
lesson_control: Callable[[int, str, str], str | None] | None = None


def room_control(room_id: int, kind: str, value: Any, actor: str) -> Room:
    """Speed, pause, resume and step (by N simulated seconds): logged like every action. A
    room compared with another takes the control with it, at the same wall instant, so the
    two keep one clock. At a lesson's open question Play and Step follow the lesson's rule
    first (``lesson_control``: reveal first; Play on a revealed one goes on)."""
    if lesson_control is not None and lesson_control(room_id, kind, actor) is not None:
        return Room.objects.get(pk=room_id)
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        for room in rooms:
            _control_one(room, kind, value, actor, wall_now)
    for room in rooms:
        _broadcast_after_commit(
            room.pk,
            _clock_message(room),
        )
    return Room.objects.get(pk=room_id)


def _control_one(room: Room, kind: str, value: Any, actor: str, wall_now: datetime) -> None:
    if kind == "speed":
        speed = _check_speed(value)
        _reanchor(room, wall_now)
        room.speed = speed
    elif kind == "pause":
        _reanchor(room, wall_now)
        room.paused = True
    elif kind == "resume":
        if room.paused:
            limits.check_running_rooms(room.creator, exclude=room.pk)
        room.paused = False
        room.sim_anchor_ms = max(room.sim_ms, room.sim_anchor_ms)
        room.wall_anchor = wall_now
    elif kind == "step":
        try:
            if isinstance(value, bool):
                raise TypeError
            seconds = float(value)
        except (TypeError, ValueError):
            raise ActionError(f"step: {value!r} is not a number of seconds") from None
        if not 0 < seconds <= MAX_STEP_S:
            raise ActionError(f"step: must be between 0 and {MAX_STEP_S} seconds")
        # The next tick runs the engine that much further (paused or not).
        room.sim_anchor_ms = max(room.sim_anchor_ms, room.sim_ms) + int(seconds * 1000)
    else:
        raise ActionError(f"unknown control {kind!r}")
    refuse_unstorable(value, f"{kind}.value")  # stored with the control's log entry
    room.save(update_fields=["speed", "paused", "sim_anchor_ms", "wall_anchor"])
    Action.objects.create(
        room=room,
        actor=actor[:120],
        kind=kind,
        payload={"value": value},
        status=Action.APPLIED,
        at_ms=room.sim_ms,
    )


def room_idle(room_ids: list[int], wall_now: datetime) -> list[int]:
    """Nobody has watched these rooms for PLAYGROUND_IDLE_PAUSE_SECONDS: their clocks stop at
    ``wall_now`` (the instant their last tick ran to) and beat stops ticking them, until a
    viewer arrives (``room_wake``). A room compared with another stops only with it."""
    wanted = set(room_ids)
    stop = [rid for rid in sorted(wanted) if set(lockstep_ids(rid)) <= wanted]
    Room.objects.filter(pk__in=stop, paused=False, idle_since__isnull=True).update(
        idle_since=wall_now
    )
    return stop


def room_wake(room_id: int) -> bool:
    """A viewer arrived at an idle room: its clock goes on from where it stopped (as after a
    pause), with the room it is compared with. True when it was idle."""
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        woken = [room for room in rooms if room.idle_since is not None]
        for room in woken:
            room.sim_anchor_ms = _now_target(room, room.idle_since)
            room.wall_anchor = wall_now
            room.idle_since = None
            room.save(update_fields=["sim_anchor_ms", "wall_anchor", "idle_since"])
    for room in woken:
        _broadcast_after_commit(
            room.pk,
            _clock_message(room),
        )
    return bool(woken)


def lockstep_ids(room_id: int) -> list[int]:
    """The room and the one it is compared with (if any), in id order (the lock order)."""
    pair = (
        Comparison.objects.filter(left_id=room_id).values_list("left_id", "right_id").first()
        or Comparison.objects.filter(right_id=room_id).values_list("left_id", "right_id").first()
    )
    return sorted(pair) if pair else [room_id]


def room_rewind(room_id: int, t_s: float, actor: str) -> Room:
    """Re-simulate from the scenario and the actions applied up to ``t``, then continue (a
    compared room rewinds with its partner)."""
    for rid in lockstep_ids(room_id):
        if rid != room_id:
            _rewind_one(rid, t_s, actor)
    return _rewind_one(room_id, t_s, actor)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def _rewind_one(room_id: int, t_s: float, actor: str) -> Room:
    if isinstance(t_s, bool) or not isinstance(t_s, int | float | str):
        raise ActionError(f"rewind: t must be a number of seconds, got {t_s!r}")
    try:
        t = float(t_s)
    except (ValueError, OverflowError):  # (an int past float's range: 10**400)
        raise ActionError(f"rewind: t must be a number of seconds, got {_shown(t_s)}") from None
    if not math.isfinite(t) or not 0 <= t <= values.MAX_SECONDS:
        raise ActionError(
            f"rewind: t must be a finite number of seconds from 0 to the room's clock, "
            f"got {_shown(t_s)}"
        )
    t_ms = int(t * 1000)
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.build_state != Room.LIVE:
            raise ActionError(f"rewind: the room is not live yet (it is {room.build_state})")
        if not 0 <= t_ms <= room.sim_ms:
            raise ActionError(f"rewind: t must be between 0 and {room.sim_ms / 1000:g} s")
        room.actions.filter(status=Action.APPLIED, at_ms__gt=t_ms).exclude(
            kind__in=CONTROL_KINDS
        ).update(status=Action.REWOUND)
        sim = _new_sim(room)
        for action in room.actions.filter(status=Action.APPLIED).exclude(kind__in=CONTROL_KINDS):
            _schedule_action(sim, _fault_from_action(action, None, sim), action.pk)
        sim.run(t_ms)
        timeline_store.delete(room)
        ObjectView.objects.filter(room=room).delete()
        # A tombstone: no snapshot of before the rewind (a child still pickling one) is stored.
        snapshots.invalidate(room.pk, room.version)
        SeriesPoint.objects.filter(room=room).delete()
        room.series_t_ms = 0
        room.event_count = 0
        room.sim_ms = t_ms
        room.sim_anchor_ms = t_ms
        room.wall_anchor = timezone.now()
        progress.on_rewind(room, t_ms)
        rt = Runtime(sim, room.version)
        delta = _persist(room, rt, force_snapshot=True)
        Action.objects.create(
            room=room,
            actor=actor[:120],
            kind="rewind",
            payload={"t": t_s},
            status=Action.APPLIED,
            at_ms=t_ms,
        )
    _CACHE[room.pk] = rt
    delta["type"] = "reset"
    _broadcast_after_commit(room.pk, delta)
    return room
