"""Time controls: speed, pause, resume, step, rewind; idle rooms stop and wake. A compared
room takes its partner with it (lockstep_ids).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
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
from .broadcast import _broadcast_after_commit, max_bytes
from .clock import _clock_message, _now_target, _reanchor
from .errors import ActionError, _check_speed, refuse_expired, refuse_unstorable
from .persist import SAVED_FIELDS
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
            refuse_expired(room, kind)
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
        if speed > room.speed:  # dearer: within its owner's and the server's budgets
            limits.check_budget(
                room.creator,
                room.cost_objects,
                speed,
                exclude=(room.pk,),
                what=f"this room at {speed:g}x",
            )
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
        room.idle_since = None  # (a paused room nobody watched is idle too)
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
    room.save(update_fields=["speed", "paused", "sim_anchor_ms", "wall_anchor", "idle_since"])
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
    viewer arrives (``room_wake``). A room compared with another stops only with it. A paused
    room is marked idle too (its clock stands still already): it expires as an idle one does
    (``rooms_expire``)."""
    wanted = set(room_ids)
    stop = [rid for rid in sorted(wanted) if set(lockstep_ids(rid)) <= wanted]
    Room.objects.filter(pk__in=stop, idle_since__isnull=True, expired_at__isnull=True).update(
        idle_since=wall_now
    )
    return stop


def rooms_expire(wall_now: datetime) -> list[int]:
    """Rooms idle (nobody watching, running or paused) for PLAYGROUND_ROOM_EXPIRY_SECONDS
    expire: paused where their clock stopped, for good. Beat no longer ticks them, they take no
    control or action (refuse_expired), and they no longer count against a budget
    (limits.held_rooms); their page still shows where they stopped, and their scenario can be
    exported to run again. A compared pair went idle together, so it expires together."""
    expiry = settings.PLAYGROUND_ROOM_EXPIRY_SECONDS
    if expiry <= 0:
        return []
    due = Room.objects.filter(
        expired_at__isnull=True, idle_since__lte=wall_now - timedelta(seconds=expiry)
    )
    ids = sorted(due.values_list("id", flat=True))
    if ids:
        Room.objects.filter(pk__in=ids, expired_at__isnull=True).update(
            expired_at=wall_now, paused=True, sim_anchor_ms=F("sim_ms")
        )
    return ids


def room_wake(room_id: int) -> bool:
    """A viewer arrived at an idle room: its clock goes on from where it stopped (as after a
    pause), with the room it is compared with. True when it was idle."""
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        woken = [r for r in rooms if r.idle_since is not None and r.expired_at is None]
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
    """Rewind at once, in this process: the request (``rewind_request``) and its run
    (``rewind_run``) of each room under its Redis lock (commands, tests). The pages' rewinds
    are run by the worker that owns the room (tasks.room_rewind_task), not where asked."""
    from ..locks import RoomLock

    ids = rewind_request(room_id, t_s, actor)
    for rid in ids:
        lock = RoomLock(rid)
        for _ in range(600):  # a tick holding it ends within its budget
            if lock.__enter__():
                break
            time.sleep(0.05)
        else:
            continue  # left pending: the room's owner runs it (beat sends it)
        try:
            rewind_run(rid, lock.extend)
        finally:
            lock.__exit__()
    return Room.objects.get(pk=room_id)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def _rewind_t(t_s: Any) -> int:
    """The rewind's instant (ms) from what was sent, checked; ActionError naming ``t``. No
    time (missing, null, a blank text) is refused: it once meant 0 s, a reset of the room that
    took every injected fault away for everyone (issue #38)."""
    if t_s is None or isinstance(t_s, str) and not t_s.strip():
        raise ActionError(
            "rewind: t is required: the simulated time to rewind to, in seconds from 0 to the "
            "room's clock; nothing was rewound"
        )
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
    return int(t * 1000)


def _rewind_check(room: Room, t_ms: int) -> None:
    refuse_expired(room, "rewind")
    if room.build_state != Room.LIVE:
        raise ActionError(f"rewind: the room is not live yet (it is {room.build_state})")
    if not 0 <= t_ms <= room.sim_ms:
        raise ActionError(f"rewind: t must be between 0 and {room.sim_ms / 1000:g} s")


def rewind_undoes(room_id: int, t_s: Any) -> list[dict[str, Any]]:
    """What a rewind to ``t_s`` would take away for everyone: the actions applied after it
    (faults injected, nodes added, workloads scaled: not the scenario's own faults, which come
    again), oldest first, at most 20. ``t`` checked as ``rewind_request`` checks it."""
    t_ms = _rewind_t(t_s)
    rows = (
        Action.objects.filter(room_id=room_id, status=Action.APPLIED, at_ms__gt=t_ms)
        .exclude(kind__in=CONTROL_KINDS)
        .order_by("at_ms", "id")
        .values_list("kind", "actor", "at_ms", "payload")[:20]
    )
    out = []
    for kind, actor, at_ms, payload in rows:
        payload = payload if isinstance(payload, dict) else {}
        found = [payload.get(k) for k in ("node", "pod", "zone", "workload") if payload.get(k)]
        target = found[0] if found else ""
        if isinstance(target, dict):  # AddNode's node: its spec
            target = target.get("name", "")
        target = str(target)[:80]
        out.append({"kind": kind, "target": target, "at": at_ms / 1000, "actor": actor})
    return out


def rewind_request(room_id: int, t_s: Any, actor: str) -> list[int]:
    """A rewind asked: checked (``t`` within every compared room's clock, the rooms live)
    and recorded, as a pending rewind Action per room (lockstep_ids), in one short
    transaction; no engine work here. The pages are told at once (``rewinding``); the room's
    ticks stand still until its owner worker has run it (``rewind_run``). Pending, it
    outlives a crash: beat ticks rooms with pending actions, and their tick runs it.
    Returns the rooms' ids (for their owners to be sent the run)."""
    t_ms = _rewind_t(t_s)
    value = t_s if isinstance(t_s, int | float) else t_ms / 1000
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        for room in rooms:
            _rewind_check(room, t_ms)
        for room in rooms:
            Action.objects.create(
                room=room,
                actor=actor[:120],
                kind="rewind",
                # wall: the instant asked, the clock of a compared pair (both anchor there).
                payload={"t": value, "wall": wall_now.isoformat()},
                status=Action.PENDING,
                at_ms=t_ms,
            )
            _broadcast_after_commit(
                room.pk, {"type": "rewinding", "t": t_ms / 1000, "actor": actor[:120]}
            )
    return [room.pk for room in rooms]


def rewind_pending(room_id: int) -> bool:
    """Whether a rewind waits for the room's owner (its ticks stand still until it is run)."""
    return Action.objects.filter(room_id=room_id, kind="rewind", status=Action.PENDING).exists()


# A rewind's engine runs in steps of this many simulated ms, ``keepalive`` called between
# them (the worker's room lock is renewed: a big room's rewind can outlast the lock's expiry).
REWIND_STEP_MS = 60_000


def rewind_run(room_id: int, keepalive: Callable[[], object] | None = None) -> int:
    """Run the room's pending rewinds, in order (the caller holds the room's Redis lock):
    each re-simulates the scenario and the actions applied up to its ``t`` (the engine made
    and run outside any transaction), then writes its results in one short transaction over
    the room read again and locked: the timeline, views and chart points replaced, the
    snapshot invalidated, the lesson's state, the rewind applied with the sequence the
    Kubernetes API's new history counts from (kubeapi.store.history_start). A rewind that is
    no longer valid (the room expired, ``t`` past its clock after an earlier rewind) is
    refused, and the pages told why. Returns how many were applied."""
    done = 0
    for _ in range(100):  # (a bound: a page cannot queue more between two of these)
        action = (
            Action.objects.filter(room_id=room_id, kind="rewind", status=Action.PENDING)
            .order_by("id")
            .first()
        )
        if action is None:
            break
        done += _rewind_one(room_id, action, keepalive)
    return done


def _rewind_one(room_id: int, action: Action, keepalive: Callable[[], object] | None) -> int:
    for _ in range(3):  # the room's version moved under the engine run: run it again
        room = Room.objects.filter(pk=room_id).first()
        if room is None:
            return 0
        t_ms = int(action.at_ms or 0)
        try:
            _rewind_check(room, t_ms)
        except ActionError as exc:
            _rewind_refused(room, action, str(exc))
            return 0
        version = room.version
        sim = _new_sim(room)
        replay = room.actions.filter(status=Action.APPLIED).exclude(kind__in=CONTROL_KINDS)
        for old in replay.exclude(at_ms__gt=t_ms):
            _schedule_action(sim, _fault_from_action(old, None, sim), old.pk)
        for step_to in [*range(REWIND_STEP_MS, t_ms, REWIND_STEP_MS), t_ms]:
            sim.run(step_to)
            if keepalive is not None:
                keepalive()
        rt = Runtime(sim, room.version)
        # What is written, made first: the events' rows, every view, the chart points.
        room.series_t_ms = room.event_count = 0
        room.sim_ms = t_ms
        later: list[Callable[[], object]] = []
        delta = _persist(room, rt, force_snapshot=True, limit=max_bytes(), later=later)
        with transaction.atomic():
            fresh = Room.objects.select_for_update().filter(pk=room_id).first()
            if fresh is None:
                return 0
            if fresh.version != version:
                continue  # (only a run not under the room's lock can move it)
            if not Action.objects.filter(pk=action.pk, status=Action.PENDING).exists():
                return 0
            fresh.actions.filter(status=Action.APPLIED, at_ms__gt=t_ms).exclude(
                kind__in=CONTROL_KINDS
            ).update(status=Action.REWOUND)
            timeline_store.delete(fresh)
            ObjectView.objects.filter(room=fresh).delete()
            # A tombstone: no snapshot of before the rewind (a child still pickling one) is
            # stored.
            snapshots.invalidate(fresh.pk, fresh.version)
            SeriesPoint.objects.filter(room=fresh).delete()
            for write in later:
                write()
            for field in ("series_t_ms", "sim_ms", "event_count", "seq", "version"):
                setattr(fresh, field, getattr(room, field))
            fresh.sim_anchor_ms = t_ms
            fresh.wall_anchor = timezone.now()
            wall = (action.payload or {}).get("wall")
            if wall and len(lockstep_ids(fresh.pk)) > 1:
                # A compared pair keeps one clock: both anchor at the instant asked.
                fresh.wall_anchor = datetime.fromisoformat(wall)
            fresh.save(update_fields=SAVED_FIELDS)
            progress.on_rewind(fresh, t_ms)
            # The room's sequence from which its new history counts: the Kubernetes API
            # answers a watch from before it with 410 Gone (kubeapi.store.history_start).
            action.payload = {"t": (action.payload or {}).get("t"), "seq": fresh.seq}
            action.status = Action.APPLIED
            action.save(update_fields=["payload", "status"])
            delta["speed"], delta["paused"] = fresh.speed, fresh.paused
            delta["t"] = t_ms / 1000
            if delta["type"] == "delta":
                delta["type"] = "reset"
            delta["rewound"] = t_ms / 1000  # (a resync notice: the pages fetch the snapshot)
            _broadcast_after_commit(fresh.pk, delta)
        _CACHE[room_id] = rt
        return 1
    _rewind_refused(room, action, "rewind: the room kept changing under it; try again")
    return 0


def _rewind_refused(room: Room, action: Action, error: str) -> None:
    with transaction.atomic():
        n = Action.objects.filter(pk=action.pk, status=Action.PENDING).update(
            status=Action.REFUSED, error=error[:500], at_ms=None
        )
        if n:
            refused = {"action": "rewind", "actor": action.actor, "error": error}
            _broadcast_after_commit(
                room.pk, {"type": "resync", "seq": room.seq, "refused": [refused]}
            )
