"""Redis as the processes share it: this process's client and the room lock. The tasks, the
builder (rooms/build.py), the websocket side and the benchmarks use them; it imports no other
module of the app."""

from __future__ import annotations

import uuid

import redis
from django.conf import settings

LOCK_MS = 30_000
_EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


_CLIENTS: dict[str, redis.Redis] = {}


def redis_client() -> redis.Redis:
    """This process's client of REDIS_URL (one connection pool, shared by its threads: a
    tick takes a lock, records its statistics and broadcasts without opening connections)."""
    url = settings.REDIS_URL
    client = _CLIENTS.get(url)
    if client is None:
        client = _CLIENTS.setdefault(
            url, redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        )
    return client


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

    def extend(self) -> bool:
        """Held LOCK_MS more from now (long work under it: a rewind); False if it was lost."""
        if not self.held:
            return False
        return bool(self.client.eval(_EXTEND, 1, self.key, self.token, LOCK_MS))

    def __exit__(self, *exc: object) -> None:
        if self.held:
            self.client.eval(_RELEASE, 1, self.key, self.token)


def _owed_key(room_id: int) -> str:
    return f"playground:room:{room_id}:owed"


def owe_tick(room_id: int) -> None:
    """A tick found the room's lock held: the holder is to tick once more when it is done (a
    control such as a step changes no action's status, so only this says it came in)."""
    redis_client().set(_owed_key(room_id), 1, px=LOCK_MS * 2)


def take_owed_tick(room_id: int) -> bool:
    """Whether a tick was owed since the last look (and no longer)."""
    return bool(redis_client().getdel(_owed_key(room_id)))


def _rewind_key(room_id: int) -> str:
    return f"playground:room:{room_id}:rewind-sent"


def mark_rewind_sent(room_id: int, only_if_none: bool = False) -> bool:
    """A rewind run was sent to the room's owner (tasks.send_rewind); it lasts LOCK_MS * 2
    (renewed while the run goes on), so a run lost with its worker is sent again by beat.
    ``only_if_none``: False when one is marked already (nothing to send)."""
    return bool(redis_client().set(_rewind_key(room_id), 1, px=LOCK_MS * 2, nx=only_if_none))


def forget_rewind_sent(room_id: int) -> None:
    redis_client().delete(_rewind_key(room_id))
