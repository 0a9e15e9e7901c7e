"""Celery tasks: thin. Take the room's Redis lock, call one service, return."""

from __future__ import annotations

import logging
import time
from datetime import datetime

import redis
from celery import current_task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready, worker_shutting_down
from celery.utils.nodenames import worker_direct
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from playground import workers

from . import affinity, heavy
from .live.presence import unwatched_rooms
from .locks import (
    RoomLock,
    forget_rewind_sent,
    mark_rewind_sent,
    owe_tick,
    redis_client,
    take_owed_tick,
)
from .models import Room
from .rooms import actions, build, controls, imports, runtime, tick, whatif

log = logging.getLogger(__name__)
BEAT_KEY = "playground:beat:last_tick"
MAX_RETICKS = 3  # a tick applies actions submitted while it ran, at most this many times more
STALE_BEATS = 3  # a worker's batch of ticks older than this many beats is dropped


@shared_task(ignore_result=True)
def room_tick_task(room_id: int, wall: str | None = None) -> None:
    """Advance one room to its "now" (applies pending actions first). ``wall`` is the beat's
    wall instant (ISO 8601): every room of one beat advances to that instant, so two rooms
    compared side by side stay on one clock.

    A tick that finds the room's lock held says so (locks.owe_tick) and tries the lock once
    more, in case the holder let go before it said so; the holder looks after letting go and
    ticks again. So an operator's step or action committed while a tick runs is done now,
    not at the next beat (a paused room's step got none: the Step button did nothing)."""
    wall_now = datetime.fromisoformat(wall) if wall else None
    for _ in range(1 + MAX_RETICKS):
        if not _tick_locked(room_id, wall_now):
            owe_tick(room_id)
            if not _tick_locked(room_id, wall_now):
                return  # the holder ticks again once it lets go
        if not take_owed_tick(room_id):
            return


def _tick_locked(room_id: int, wall_now: datetime | None, rewind: bool = False) -> bool:
    """One tick under the room's lock; False when another worker holds it. A room with a
    rewind pending is not advanced: ``rewind`` (room_rewind_task, a thread of its own) runs
    it first; otherwise (beat's round of this worker's rooms, one after another) its run is
    sent, unless it was already, so that a big room's rewind does not hold up the others."""
    lock = RoomLock(room_id)
    with lock as got:
        if not got:
            return False
        take_owed_tick(room_id)  # what was owed so far, this tick does
        if controls.rewind_pending(room_id):
            if not rewind:
                if mark_rewind_sent(room_id, only_if_none=True):
                    send_rewind(room_id)
                return True

            def keepalive() -> None:
                lock.extend()
                mark_rewind_sent(room_id)

            try:
                controls.rewind_run(room_id, keepalive)
            finally:
                forget_rewind_sent(room_id)
        restores = runtime.RESTORES
        budget = settings.PLAYGROUND_TICK_BUDGET_SECONDS  # a room too big runs slower
        tick.room_advance(room_id, wall_now, budget_s=budget)
        # An action submitted while this tick ran had its own tick skipped (the lock was
        # held): it is applied now, not at the next beat (twenty operators at once left the
        # last one pending when no beat came after).
        for _ in range(MAX_RETICKS):
            if not tick.has_pending_actions(room_id):
                break
            tick.room_advance(room_id, wall_now, budget_s=budget)
        _record_tick(room_id, runtime.RESTORES - restores)
    return True


def _hostname() -> str:
    """This worker's node name (set when it is ready), or "inline" outside a worker."""
    if _HEARTBEAT is not None:
        return _HEARTBEAT.hostname
    request = getattr(current_task, "request", None)
    return getattr(request, "hostname", None) or "inline"


def _record_tick(room_id: int, restores: int) -> None:
    """Per-room statistics (affinity.stats_key): which worker ticked it and how often its
    engine had to be rebuilt. Best effort: a Redis hiccup does not fail the tick."""
    try:
        pipe = redis_client().pipeline()
        key = affinity.stats_key(room_id)
        me = _hostname()
        pipe.hincrby(key, "ticks", 1)
        pipe.hincrby(key, f"ticks:{me}", 1)
        pipe.hincrby(key, "restores", restores)
        pipe.hset(key, "worker", me)
        pipe.expire(key, 86400)
        pipe.zadd(affinity.TICKED_KEY, {str(room_id): time.time()})
        pipe.execute()
    except redis.RedisError:
        pass


REWIND_TRIES = 120  # a rewind run that finds the room's lock held tries again (0.5 s apart)


@shared_task(ignore_result=True)
def room_rewind_task(room_id: int, tries: int = 0) -> None:
    """Run the room's pending rewinds (controls.rewind_run) on the worker that owns it, under
    its lock, then tick it as usual. The lock held by a tick: tried again shortly; after
    REWIND_TRIES, beat sends it again (the rewind stays pending meanwhile, the room still)."""
    if _tick_locked(room_id, None, rewind=True):
        return
    if tries < REWIND_TRIES:
        send_rewind(room_id, tries + 1, countdown=0.5)


def send_rewind(room_id: int, tries: int = 0, countdown: float | None = None) -> None:
    """Queue the run of ``room_id``'s pending rewind on the worker that owns it (as
    send_tick); marked as sent (locks.mark_rewind_sent) so that beat does not send it again."""
    try:
        mark_rewind_sent(room_id)
        workers = affinity.live_workers(redis_client())
    except redis.RedisError:
        workers = []
    owner = affinity.owner(room_id, workers)
    options: dict = {} if countdown is None else {"countdown": countdown}
    if owner is not None:
        options["queue"] = worker_direct(owner)
    room_rewind_task.apply_async((room_id, tries), **options)


def send_tick(room_id: int, wall: str | None = None, workers: list[str] | None = None) -> None:
    """Queue a tick of ``room_id`` on the worker that owns it (its direct queue), or on the
    shared queue when no worker has announced itself yet."""
    if workers is None:
        try:
            workers = affinity.live_workers(redis_client())
        except redis.RedisError:
            workers = []
    owner = affinity.owner(room_id, workers)
    options: dict = {"expires": settings.PLAYGROUND_TICK_SECONDS * 5}
    if owner is not None:
        options["queue"] = worker_direct(owner)
    room_tick_task.apply_async((room_id, wall), **options)


# -- each worker announces itself (affinity.Heartbeat) while it runs -----------------------
_HEARTBEAT: affinity.Heartbeat | None = None


@worker_ready.connect
def _announce(sender=None, **kwargs) -> None:
    global _HEARTBEAT
    if workers.HEAVY_PROCESS:
        return  # ticks never go to a heavy worker (playground/workers.py)
    _HEARTBEAT = affinity.Heartbeat(redis_client, sender.hostname)
    _HEARTBEAT.start()


@worker_shutting_down.connect
def _withdraw(**kwargs) -> None:
    if _HEARTBEAT is not None:
        _HEARTBEAT.stop.set()


@shared_task(ignore_result=True)
def rooms_tick_task() -> None:
    """Beat's coarse trigger: every running room (or one with pending actions) is ticked by
    the worker that owns it (affinity): one message per other worker, to its direct queue,
    with all its rooms (worker_tick_task), then this worker's own rooms right here, one after
    another (with no worker announced yet, all here). One message per room instead kept the
    other worker's queue growing (50 rooms on PostgreSQL: 10 more queued than run per second,
    its rooms minutes behind); a worker's own rooms in its threads side by side measured
    worse than one after another (31-33% of ticks on time against 56%, SQLite).
    A room nobody has watched for PLAYGROUND_IDLE_PAUSE_SECONDS is ticked to this beat's
    instant a last time and then stops (controls.room_idle: its clock stops at that instant,
    however late its owner runs the tick) until a viewer arrives; one idle (or paused and
    unwatched) for PLAYGROUND_ROOM_EXPIRY_SECONDS expires, and is never ticked again
    (controls.rooms_expire). A room still being built is
    not ticked; one whose build was lost is queued again (build.requeue_lost_builds)."""
    live = Room.objects.filter(build_state=Room.LIVE, expired_at__isnull=True)
    running = sorted(
        live.filter(paused=False, idle_since__isnull=True).values_list("id", flat=True)
    )
    # Paused rooms nobody watches go idle too, and expire as idle ones do (rooms_expire).
    paused = live.filter(paused=True, idle_since__isnull=True).values_list("id", flat=True)
    ids = set(running)
    ids |= set(live.filter(actions__status="pending").values_list("id", flat=True).distinct())
    # A paused room whose step is not done yet (its tick was lost: a worker died mid-tick)
    ids |= set(live.filter(paused=True, sim_anchor_ms__gt=F("sim_ms")).values_list("id", flat=True))
    try:
        build.requeue_lost_builds()
    except redis.RedisError:
        log.warning("could not check for lost room builds (Redis)")
    wall_now = timezone.now()
    idle = unwatched_rooms(sorted({*running, *paused}), wall_now.timestamp())
    wall = wall_now.isoformat()
    try:
        workers = affinity.live_workers(redis_client())
        drop_gone_workers_queues()
    except redis.RedisError:
        workers = []
    me = _hostname()
    by_owner: dict[str | None, list[int]] = {}
    for room_id in sorted(ids):
        by_owner.setdefault(affinity.owner(room_id, workers), []).append(room_id)
    mine = by_owner.pop(me, []) + by_owner.pop(None, [])
    for owner, rooms in by_owner.items():
        try:
            worker_tick_task.apply_async((rooms, wall), queue=worker_direct(owner))
        except Exception:
            log.exception("could not send the ticks of rooms %s to %s", rooms, owner)
    tick_rooms(mine, wall)
    if idle:
        stopped = controls.room_idle(idle, wall_now)
        if stopped:
            log.info("rooms %s: nobody watches, stopped ticking", stopped)
    expired = controls.rooms_expire(wall_now)
    if expired:
        log.info("rooms %s: nobody watched them for a while, expired", expired)


def drop_gone_workers_queues() -> list[str]:
    """The direct queues of workers gone for affinity.GONE_S (killed: they never consume
    them again), with the ticks nobody ran, are deleted, as kombu's Redis transport names them
    (one list per priority step). Only the lists: the queue's binding stays, so a worker that
    comes back under its name still gets its messages. Returns the workers forgotten."""
    from kombu.transport.redis import Channel

    client = redis_client()
    gone = affinity.reap(client)
    for name in gone:
        queue = worker_direct(name).name
        keys = [queue] + [f"{queue}{Channel.sep}{p}" for p in Channel.priority_steps if p]
        client.delete(*keys)
    if gone:
        log.info("workers %s gone: their direct queues deleted", gone)
    return gone


@shared_task(ignore_result=True)
def worker_tick_task(room_ids: list[int], wall: str) -> None:
    """The rooms_tick_task of another worker sent this worker its rooms of one beat: tick them
    to the beat's instant, one after another. A message older than STALE_BEATS beats (this
    worker was busy or away) is dropped: a later beat's message ticks the rooms to "now"."""
    age = (timezone.now() - datetime.fromisoformat(wall)).total_seconds()
    if age > STALE_BEATS * settings.PLAYGROUND_TICK_SECONDS:
        log.warning(
            "ticks of rooms %s from %.1f s ago dropped (a later beat ticks them)", room_ids, age
        )
        return
    tick_rooms(room_ids, wall)


def tick_rooms(room_ids: list[int], wall: str) -> None:
    """room_tick_task of each room in turn; one room's failure does not stop the others."""
    for room_id in room_ids:
        try:
            room_tick_task(room_id, wall)
        except Exception:
            log.exception("tick of room %s failed", room_id)


# Heavy tasks (the "heavy" queue: settings.CELERY_TASK_ROUTES) run under Celery's time limits
# (heavy.time_limits: a soft one raises SoftTimeLimitExceeded in the job, which tells its user
# heavy.stopped_message; the hard one kills its process) and each gives back its owner's slot
# (heavy.take at the request) when it ends.
SOFT_S, HARD_S = heavy.time_limits()


@shared_task(
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=SOFT_S,
    time_limit=HARD_S,
)
def room_build_task(room_id: int) -> None:
    """Build a room created by the form (build.room_build) in a heavy worker; the room's
    ticking worker restores its engine from the snapshot the build stored. Acknowledged when
    done, so a worker lost mid-build leaves it queued; the beat re-queues one lost otherwise
    (or fails it, when it ran past its time limit: build.requeue_lost_builds)."""
    build.room_build(room_id, keep_engine=False)


@shared_task(ignore_result=True, soft_time_limit=SOFT_S, time_limit=HARD_S)
def import_preview_task(preview_id: str) -> None:
    """Import a long kubectl output for its Preview (imports.preview_run); the page polls."""
    imports.preview_run(preview_id)


@shared_task(ignore_result=True)
def monitor_pass_task(room_id: int, actor: str = "operator") -> None:
    """Step the NodeLifecycleController's monitor pass by hand (recorded in the log)."""
    room = Room.objects.get(pk=room_id)
    actions.action_submit(room, {"type": "RunControllerPass", "pass": "monitor"}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def tainting_pass_task(room_id: int, actor: str = "operator") -> None:
    room = Room.objects.get(pk=room_id)
    actions.action_submit(room, {"type": "RunControllerPass", "pass": "tainting"}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def eviction_sync_task(room_id: int, node: str, actor: str = "operator") -> None:
    room = Room.objects.get(pk=room_id)
    actions.action_submit(room, {"type": "RunEvictionSync", "node": node}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def beat_heartbeat_task() -> None:
    """Records beat's last tick so /healthz can tell beat is alive."""
    redis_client().set(BEAT_KEY, repr(time.time()), ex=600)


@shared_task
def ping_task(x: int) -> int:
    """A pure task for health and broker tests."""
    return x + 1


@shared_task(soft_time_limit=SOFT_S, time_limit=HARD_S)
def what_if_task(
    room_id: int, zone: str, nodes: list[str], at_s: float, owner: str = ""
) -> dict[str, object]:
    """Run the room's scenario forward headless with a zone or nodes failed, and return per
    workload when it is back (the room itself is not touched); ``owner``'s slot (taken by the
    view, this task's id its job) is given back at the end. Past its time limit it fails with
    heavy.stopped_message."""
    job = f"what-if:{current_task.request.id}"
    heavy.started(owner, job)
    try:
        room = Room.objects.get(pk=room_id)
        return whatif.room_what_if(room, zone, nodes, at_s)
    except SoftTimeLimitExceeded:
        raise heavy.JobStopped(heavy.stopped_message()) from None
    finally:
        heavy.release(owner, job)
