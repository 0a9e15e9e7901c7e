"""Room affinity: a room's ticks go to the one worker process that holds its engine, so the
engine is not rebuilt from its snapshot on every tick.

Built from Celery's and Redis's own parts, no scheduler of our own:

- Celery's ``worker_direct`` queues: every worker also consumes its own queue
  (``<hostname>.dq2``), so a task sent there runs on that worker and no other.
- Liveness: every worker writes its hostname into one Redis sorted set, scored with the time,
  every ``HEARTBEAT_S``; a worker whose entry is older than ``WORKER_TTL_S`` (killed, or cut
  off) is gone.
- Placement: rendezvous (highest random weight) hashing of the room id over the live workers.
  Every dispatcher computes the same owner without shared state, and when a worker disappears
  only its own rooms move (to the next-highest worker), within ``WORKER_TTL_S``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time

import redis

log = logging.getLogger(__name__)

WORKERS_KEY = "playground:workers"
HEARTBEAT_S = 1.0
WORKER_TTL_S = 4.0
GONE_S = 60 * WORKER_TTL_S  # a worker silent this long is forgotten (reap)


# When each room was last ticked (a sorted set: room id -> wall time), for /healthz.
TICKED_KEY = "playground:rooms:ticked"


def stats_key(room_id: int) -> str:
    """Per-room tick statistics: ticks, restores (engine rebuilt), the last worker."""
    return f"playground:room:{room_id}:stats"


def live_workers(client: redis.Redis, now: float | None = None) -> list[str]:
    """Hostnames of the workers that sent a heartbeat within WORKER_TTL_S, sorted."""
    now = time.time() if now is None else now
    names = client.zrangebyscore(WORKERS_KEY, now - WORKER_TTL_S, "+inf")
    return sorted(n.decode() if isinstance(n, bytes) else n for n in names)


def owner(room_id: int, workers: list[str]) -> str | None:
    """The worker that ticks ``room_id``: rendezvous hashing over ``workers``."""
    if not workers:
        return None

    def weight(worker: str) -> bytes:
        return hashlib.blake2b(f"{room_id}:{worker}".encode(), digest_size=8).digest()

    return max(workers, key=weight)


def beat(client: redis.Redis, hostname: str) -> None:
    client.zadd(WORKERS_KEY, {hostname: time.time()})


def reap(client: redis.Redis, now: float | None = None) -> list[str]:
    """Workers silent for GONE_S (long past WORKER_TTL_S: killed, not paused), removed from
    the set and returned, so that the caller drops what they left behind (their direct
    queues: tasks.rooms_tick_task)."""
    now = time.time() if now is None else now
    names = client.zrangebyscore(WORKERS_KEY, "-inf", now - GONE_S)
    gone = sorted(n.decode() if isinstance(n, bytes) else n for n in names)
    if gone:
        client.zrem(WORKERS_KEY, *gone)
    return gone


def leave(client: redis.Redis, hostname: str) -> None:
    client.zrem(WORKERS_KEY, hostname)


class Heartbeat:
    """A daemon thread in a worker process: ``beat`` every HEARTBEAT_S until stopped."""

    def __init__(self, client_factory, hostname: str) -> None:
        self.client_factory = client_factory
        self.hostname = hostname
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="playground-heartbeat", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        client = self.client_factory()
        while not self.stop.is_set():
            try:
                beat(client, self.hostname)
            except redis.RedisError:  # Redis restarting: the next beat announces us again
                log.warning("worker heartbeat: Redis not answering")
            self.stop.wait(HEARTBEAT_S)
        try:
            leave(client, self.hostname)
        except redis.RedisError:
            pass
