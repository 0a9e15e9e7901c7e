"""The stack a benchmark runs on: its own processes (``Stack``: a private redis-server,
Daphne, Celery workers, beat), Redis (REDIS_URL) with no other worker, the started processes'
environment, and our workers' heartbeats."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import TracebackType
from typing import Any

from .procs import Beat, CeleryWorker, Daphne, HeavyWorker, Proc, RedisServer


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
    from ..locks import redis_client

    client = redis_client()
    prefixes = tuple(f"{w.name}@" for w in workers if w.name)
    names = [n.decode() for n in client.zrange(affinity.WORKERS_KEY, 0, -1)]
    gone = [n for n in names if prefixes and n.startswith(prefixes)]
    if gone:
        client.zrem(affinity.WORKERS_KEY, *gone)


def wait_workers(count: int, timeout: float = 30.0) -> list[str]:
    import time

    from .. import affinity
    from ..locks import redis_client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = affinity.live_workers(redis_client())
        if len(live) >= count:
            return live
        time.sleep(0.2)
    raise RuntimeError(f"{count} workers did not announce themselves within {timeout} s")


class Stack:
    """A benchmark's own processes, started in this order and stopped in the reverse: a
    private redis-server (``redis``: its binary; the stack's ``env`` then has its REDIS_URL),
    ``webs`` Daphne processes, ``workers`` Celery workers and, with ``beat``, beat. Logs: one
    each in ``logs`` (``daphne0.log``, ``worker.log``, ``beat.log``...), or all in ``log``.

    The rows' way (default): Daphne is ready when /healthz answers, the workers when they
    answer a ping and announce themselves; at the end they are killed (SIGKILL: no goodbye)
    and their heartbeats dropped. ``detached`` (pagebench's way: its own process does not
    share the stack's Redis, and reads the stack's log): every process in a session of its
    own (a Ctrl-C reaches the caller only), Daphne ready when its port listens (no request of
    ours in its log), the workers not awaited, everything stopped with SIGTERM (SIGKILL after
    15 s). redis-server is always stopped last, with SIGTERM (the workers' shutdown still
    talks to Redis).

    ``with Stack(...) as stack:`` starts it and stops it, also when a process does not come
    up; ``start_redis`` and ``start_app`` start it in two steps (pagebench migrates between)."""

    def __init__(
        self,
        env: dict[str, str],
        logs: Path,
        *,
        redis: str | None = None,
        webs: int = 0,
        workers: int = 0,
        heavy: int = 0,
        beat: bool = False,
        log: Path | None = None,
        detached: bool = False,
        web_timeout: float = 60.0,
    ) -> None:
        self.env = dict(env)
        self.detached = detached
        self.web_timeout = web_timeout
        self.redis: RedisServer | None = None
        if redis is not None:
            self.redis = RedisServer(redis, logs, self.env, session=detached)
            self.env["REDIS_URL"] = self.redis.url

        def label(kind: str, i: int, count: int) -> str:
            return kind if count == 1 else f"{kind}{i}"

        def log_of(name: str) -> Path:
            return log or logs / f"{name}.log"

        self.labels: dict[str, Proc] = {}
        self.webs: list[Daphne] = []
        for i in range(webs):
            name = label("daphne", i, webs)
            self.webs.append(Daphne(self.env, log_of(name), session=detached, probe=not detached))
            self.labels[name] = self.webs[-1]
        self.workers: list[CeleryWorker] = []
        for i in range(workers):
            name = label("worker", i, workers)
            self.workers.append(CeleryWorker(self.env, log_of(name), session=detached))
            self.labels[name] = self.workers[-1]
        # Heavy workers (builds, imports, previews, what-ifs: playground/workers.py), for rows
        # that make them; not among self.workers (they tick no room).
        self.heavy: list[HeavyWorker] = []
        for i in range(heavy):
            name = label("heavy", i, heavy)
            self.heavy.append(HeavyWorker(self.env, log_of(name)))
            self.labels[name] = self.heavy[-1]
        self.beat = Beat(self.env, log_of("beat"), session=detached) if beat else None
        if self.beat is not None:
            self.labels["beat"] = self.beat

    def start_redis(self) -> None:
        if self.redis is not None:
            self.redis.start(timeout=10)

    def start_app(self) -> None:
        for web in self.webs:
            web.start(timeout=self.web_timeout)
        for worker in self.workers:
            if self.detached:
                worker.launch()
            else:
                worker.start()
        for worker in self.heavy:
            if self.detached:
                worker.launch()
            else:
                worker.start()
        if self.workers and not self.detached:
            wait_workers(len(self.workers))
        if self.beat is not None:
            self.beat.start()

    def start(self) -> None:
        self.start_redis()
        self.start_app()

    def exited(self) -> list[str]:
        """The processes (but redis-server) that have ended."""
        return [name for name, proc in self.labels.items() if proc.exited()]

    def close(self) -> None:
        app = [p for p in (self.beat, *self.workers, *self.heavy, *self.webs) if p is not None]
        for proc in app:
            proc.send(signal.SIGTERM if self.detached else signal.SIGKILL)
        for proc in app:
            proc.reap()
        if self.workers and not self.detached:
            forget_workers(self.workers)
        if self.redis is not None:
            self.redis.kill(signal.SIGTERM)

    def __enter__(self) -> Stack:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
