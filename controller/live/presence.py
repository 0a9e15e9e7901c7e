"""Who is watching a room, kept in Redis: a hash per room (channel name -> name and role) kept
by the websocket consumer, and when someone last watched it, which beat reads to stop the rooms
nobody watches (tasks.rooms_tick_task, rooms.controls.room_idle)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis
from django.conf import settings

from ..locks import redis_client

log = logging.getLogger(__name__)

PRESENCE_TTL = 3600
WATCHED_TTL = 86_400


def presence_key(room_id: int) -> str:
    """A hash: channel name -> who (the consumer keeps it)."""
    return f"playground:room:{room_id}:presence"


def watched_key(room_id: int) -> str:
    """When someone last watched the room (epoch seconds): set when a viewer comes or goes,
    and by every beat that finds one."""
    return f"playground:room:{room_id}:watched"


def due_key(room_id: int) -> str:
    """Set (for one window) when a presence broadcast of the room is scheduled."""
    return f"playground:room:{room_id}:presence-due"


def update(room_id: int, channel_name: str, who: dict[str, str] | None, window_s: float) -> bool:
    """A viewer came (``who``: name and role) or went (None): the room's presence hash and its
    watched time. True when the caller is to broadcast who is watching ``window_s`` seconds
    from now: the first change of the room in a window claims it (across every Daphne), the
    others in it are in that broadcast. So a room broadcasts presence at most once a window
    (one beat), not once per join to every viewer (200 joins were 24,591 messages)."""
    key = presence_key(room_id)
    pipe = redis_client().pipeline()
    pipe.set(watched_key(room_id), repr(time.time()), ex=WATCHED_TTL)
    if who is not None:
        pipe.hset(key, channel_name, json.dumps(who))
        pipe.expire(key, PRESENCE_TTL)
    else:
        pipe.hdel(key, channel_name)
    pipe.set(due_key(room_id), "1", nx=True, px=max(1, int(window_s * 1000)))
    return bool(pipe.execute()[-1])


def viewers(room_id: int) -> list[dict[str, Any]]:
    """Everyone watching the room now, by role then name."""
    found = redis_client().hvals(presence_key(room_id))
    return sorted((json.loads(v) for v in found), key=lambda v: (v["role"], v["name"]))


def unwatched_rooms(room_ids: list[int], now: float) -> list[int]:
    """The rooms nobody has watched for PLAYGROUND_IDLE_PAUSE_SECONDS. A room not seen before
    starts its count now; Redis down: none (the ticks fail anyway)."""
    idle_s = settings.PLAYGROUND_IDLE_PAUSE_SECONDS
    if idle_s <= 0 or not room_ids:
        return []
    try:
        client = redis_client()
        pipe = client.pipeline()
        for room_id in room_ids:
            pipe.hlen(presence_key(room_id))
            pipe.get(watched_key(room_id))
        found = pipe.execute()
        pipe = client.pipeline()
        idle = []
        for i, room_id in enumerate(room_ids):
            viewers, seen = found[2 * i], found[2 * i + 1]
            if viewers or seen is None:
                pipe.set(watched_key(room_id), repr(now), ex=WATCHED_TTL)
            elif now - float(seen) >= idle_s:
                idle.append(room_id)
        pipe.execute()
    except redis.RedisError:
        log.warning("idle rooms: Redis is not answering; no room is paused for idleness")
        return []
    return idle
