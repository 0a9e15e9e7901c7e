"""App fixtures: a real Celery worker (and beat) against the test Redis and test database.

The subprocesses get REDIS_URL of the private redis-server and DATABASE_URL of the test
database file (tests.redis_plugin makes the test database a file, not :memory:), so a task
that touches the database sees the test's rows. Their output goes to a log file that is shown
when a worker fails to come up."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.bench.procs import Daphne
from tests.postgres_plugin import database_url
from tests.redis_plugin import TEST_REDIS, RedisServer

REPO = Path(__file__).resolve().parents[2]


def _spawn(
    args: list[str], db_name: str, log: Path, session: bool = False
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "REDIS_URL": TEST_REDIS.url,
        "DATABASE_URL": database_url(db_name),
        "PLAYGROUND_TEST_DB": "",
    }
    env.pop("PLAYGROUND_TEST_DB")
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "playground", *args],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=session,
        )


class Worker:
    """A tick worker, or (``heavy``) a heavy worker of one process (playground/workers.py):
    builds, previews and what-ifs run only on a heavy one."""

    def __init__(self, db_name: str, log: Path, heavy: bool = False, include: str = "") -> None:
        self.db_name = db_name
        self.log = log
        self.heavy = heavy
        self.include = include  # a test's module the worker imports too (Celery's --include)
        self.name = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        from playground.workers import heavy_worker_args, tick_worker_args

        self.name = f"{'heavy' if self.heavy else 'test'}{time.monotonic_ns()}"
        name = f"{self.name}@%h"
        args = heavy_worker_args(name, concurrency=1) if self.heavy else tick_worker_args(name)
        if self.include:
            args.append(f"--include={self.include}")
        # A heavy worker's pool processes are its children: killed with it (its session).
        self.proc = _spawn(args, self.db_name, self.log, session=self.heavy)
        try:
            self._wait_for_ping()
        except BaseException:
            self.kill()  # not left running (a failed fixture has no teardown)
            raise

    def _wait_for_ping(self) -> None:
        from playground.celery import app

        assert self.proc is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            replies = app.control.ping(timeout=0.5)
            if any(name.startswith(f"{self.name}@") for reply in replies for name in reply):
                return
            if self.proc.poll() is not None:
                break
        tail = self.log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the Celery worker did not answer a ping; its log:\n{tail}")

    def kill(self) -> None:
        if self.proc is not None:
            if self.heavy:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None
            time.sleep(0.3)


@pytest.fixture
def celery_worker_proc(
    transactional_db: None, redis_server: RedisServer, tmp_path: Path
) -> Iterator[Worker]:
    from django.db import connection

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "worker.log")
    worker.start()
    yield worker
    worker.kill()


@pytest.fixture
def heavy_worker_proc(
    transactional_db: None, redis_server: RedisServer, tmp_path: Path
) -> Iterator[Worker]:
    """A heavy worker (one process): room builds, import previews, what-if runs."""
    from django.db import connection

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "heavy.log", heavy=True)
    worker.start()
    yield worker
    worker.kill()


@pytest.fixture
def celery_beat_proc(
    transactional_db: None, redis_server: RedisServer, tmp_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    from django.db import connection

    proc = _spawn(
        ["beat", "--loglevel=WARNING", f"--schedule={tmp_path / 'beat-schedule'}"],
        connection.settings_dict["NAME"],
        tmp_path / "beat.log",
    )
    yield proc
    proc.kill()
    proc.wait(timeout=10)


@pytest.fixture(autouse=True)
def celery_connections_after_a_redis_restart() -> Iterator[None]:
    """A test that stops and starts the test Redis leaves this process's Celery connections
    dead: the broker pool's (a later ``app.control.ping`` reads "Connection closed by server")
    and the result backend's subscription (a later ``result.get`` never hears its result). After
    such a test they are dropped, so the next test starts with fresh ones, as a new process
    would."""
    starts = TEST_REDIS.starts
    yield
    if TEST_REDIS.starts != starts:
        from kombu import pools

        from playground.celery import app

        pools.reset()  # closes every pooled connection and forgets the pools
        app._pool = None
        app.amqp._producer_pool = None
        app._local.__dict__.pop("backend", None)


@pytest.fixture
def fresh_channel_layer() -> Iterator[None]:
    """A new channels_redis layer for the test, and again after it. The layer is a process
    global whose per-channel receive locks bind to the first event loop that waits on them; a
    test with several websocket clients (each ``async_to_sync`` call is a new loop) can leave
    one behind, and the next test's consumer then fails with "bound to a different event
    loop"."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


# -- the stack's environment and a real Daphne (tests/app/test_faults.py, test_bench.py) -----
@pytest.fixture
def stack_env(transactional_db: None, redis_server: RedisServer) -> dict[str, str]:
    """The environment of a subprocess of the stack: the test Redis and test database."""
    from django.db import connection

    env = {
        **os.environ,
        "REDIS_URL": TEST_REDIS.url,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
    }
    env.pop("PLAYGROUND_TEST_DB", None)
    return env


@pytest.fixture
def daphne_proc(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Daphne]:
    """``daphne playground.asgi:application`` on a free port (``.port``); kill/start it."""
    web = Daphne(stack_env, tmp_path / "daphne.log")
    web.start()
    yield web
    web.kill()
