"""Celery tasks: thin. Take the room's Redis lock, call one service, return."""

from __future__ import annotations

import logging
import time
import uuid
from datetime import datetime

import redis
from celery import shared_task
from django.conf import settings
from django.utils import timezone

from . import services
from .models import Room

log = logging.getLogger(__name__)
LOCK_MS = 30_000
BEAT_KEY = "playground:beat:last_tick"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


class RoomLock:
    """SET NX PX per room: two workers never advance one room at once."""

    def __init__(self, room_id: int) -> None:
        self.key = f"playground:room:{room_id}:lock"
        self.token = uuid.uuid4().hex
        self.client = redis_client()
        self.held = False

    def __enter__(self) -> bool:
        self.held = bool(self.client.set(self.key, self.token, nx=True, px=LOCK_MS))
        return self.held

    def __exit__(self, *exc: object) -> None:
        if self.held:
            self.client.eval(_RELEASE, 1, self.key, self.token)


@shared_task(ignore_result=True)
def room_tick_task(room_id: int, wall: str | None = None) -> None:
    """Advance one room to its "now" (applies pending actions first). ``wall`` is the beat's
    wall instant (ISO 8601): every room of one beat advances to that instant, so two rooms
    compared side by side stay on one clock."""
    wall_now = datetime.fromisoformat(wall) if wall else None
    with RoomLock(room_id) as got:
        if not got:
            return  # another worker is advancing it; the next tick catches up
        services.room_advance(room_id, wall_now)


@shared_task(ignore_result=True)
def rooms_tick_task() -> None:
    """Beat's coarse trigger: every running room (or one with pending actions)."""
    ids = set(Room.objects.filter(paused=False).values_list("id", flat=True))
    ids |= set(
        Room.objects.filter(actions__status="pending").values_list("id", flat=True).distinct()
    )
    wall = timezone.now().isoformat()
    for room_id in sorted(ids):
        try:
            room_tick_task(room_id, wall)
        except Exception:
            log.exception("tick of room %s failed", room_id)


@shared_task(ignore_result=True)
def monitor_pass_task(room_id: int, actor: str = "operator") -> None:
    """Step the NodeLifecycleController's monitor pass by hand (recorded in the log)."""
    room = Room.objects.get(pk=room_id)
    services.action_submit(room, {"type": "RunControllerPass", "pass": "monitor"}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def tainting_pass_task(room_id: int, actor: str = "operator") -> None:
    room = Room.objects.get(pk=room_id)
    services.action_submit(room, {"type": "RunControllerPass", "pass": "tainting"}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def eviction_sync_task(room_id: int, node: str, actor: str = "operator") -> None:
    room = Room.objects.get(pk=room_id)
    services.action_submit(room, {"type": "RunEvictionSync", "node": node}, actor)
    room_tick_task(room_id)


@shared_task(ignore_result=True)
def beat_heartbeat_task() -> None:
    """Records beat's last tick so /healthz can tell beat is alive."""
    redis_client().set(BEAT_KEY, repr(time.time()), ex=600)


@shared_task
def ping_task(x: int) -> int:
    """A pure task for health and broker tests."""
    return x + 1


@shared_task
def what_if_task(room_id: int, zone: str, nodes: list[str], at_s: float) -> dict[str, object]:
    """Run the room's scenario forward headless with a zone or nodes failed, and return per
    workload when it is back (the room itself is not touched)."""
    room = Room.objects.get(pk=room_id)
    return services.room_what_if(room, zone, nodes, at_s)
