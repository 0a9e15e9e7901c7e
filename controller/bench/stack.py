"""The stack the process rows run on: Redis (REDIS_URL) with no other worker, the started
processes' environment, and our workers' heartbeats."""

from __future__ import annotations

import os
from typing import Any


class BenchError(RuntimeError):
    """A benchmark cannot run (a missing program, a process that does not come up); the
    management commands show its message."""


def check_stack() -> None:
    """The process rows need Redis (REDIS_URL) and no other worker on it (its ticks would
    be counted as ours); raises RuntimeError naming what is wrong."""
    from django.conf import settings
    from redis import Redis
    from redis.exceptions import RedisError

    from .. import affinity

    try:
        client = Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        client.ping()
    except RedisError as exc:
        raise RuntimeError(
            f"Redis at REDIS_URL={settings.REDIS_URL} does not answer ({exc}); start one "
            "(make run does)"
        ) from None
    others = affinity.live_workers(client)
    if others:
        raise RuntimeError(
            f"other Celery workers are running on REDIS_URL={settings.REDIS_URL} "
            f"({', '.join(others)}): stop them (or point REDIS_URL at another Redis) so that "
            "only the benchmark's workers tick its rooms"
        )


def stack_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    return env


def forget_workers(workers: list[Any]) -> None:
    """Drop the heartbeats of our killed workers (SIGKILL: no goodbye), so that the next row
    does not take them for someone else's for WORKER_TTL_S."""
    from .. import affinity
    from ..tasks import redis_client

    client = redis_client()
    prefixes = tuple(f"{w.name}@" for w in workers if w.name)
    names = [n.decode() for n in client.zrange(affinity.WORKERS_KEY, 0, -1)]
    gone = [n for n in names if prefixes and n.startswith(prefixes)]
    if gone:
        client.zrem(affinity.WORKERS_KEY, *gone)


def wait_workers(count: int, timeout: float = 30.0) -> list[str]:
    import time

    from .. import affinity
    from ..tasks import redis_client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = affinity.live_workers(redis_client())
        if len(live) >= count:
            return live
        time.sleep(0.2)
    raise RuntimeError(f"{count} workers did not announce themselves within {timeout} s")
