"""Suite-wide fixtures, and a report of the real components the run used.

The private redis-server is started by ``tests.redis_plugin`` (loaded with ``-p`` in
pyproject.toml) because it must exist before pytest-django reads the settings; the session
fixture ``redis_server`` below is how tests reach it (stop/start it to simulate an outage).
The header at the top of a run and the "real components used" section at its end show which
Redis, channel layer and Celery mode the app tests ran against.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.postgres_plugin import TEST_POSTGRES
from tests.redis_plugin import TEST_REDIS, RedisServer

EVIDENCE = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    config.stash[EVIDENCE] = []
    # WhiteNoise warns about a missing STATIC_ROOT (make run creates it the same way).
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)


def _redis_version(url: str) -> str:
    import redis

    try:
        info = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5).info()
    except redis.RedisError as exc:
        return f"not answering ({exc})"
    return f"redis-server {info['redis_version']}, pid {info['process_id']}"


def pytest_report_header(config: pytest.Config) -> list[str]:
    from django.conf import settings

    from playground.celery import app

    private = "private, started for this run" if TEST_REDIS.proc else "NOT the private server"
    db = settings.DATABASES["default"]
    if TEST_POSTGRES is not None:
        database = (
            f"database: PostgreSQL, private, started for this run ({TEST_POSTGRES.version()})"
        )
    else:
        database = (
            f"database: {db['ENGINE'].rsplit('.', 1)[-1]} (PLAYGROUND_DB=postgres for PostgreSQL)"
        )
    return [
        database,
        f"redis: {settings.REDIS_URL} ({private}; {_redis_version(settings.REDIS_URL)})",
        f"channel layer: {settings.CHANNEL_LAYERS['default']['BACKEND']}",
        f"celery: broker {app.conf.broker_url}, task_always_eager={app.conf.task_always_eager}",
    ]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    lines = config.stash.get(EVIDENCE, [])
    if lines:
        terminalreporter.section("real components used")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def redis_server() -> RedisServer:
    """The real redis-server of this run: a free loopback port, a temp dir, ``--save ''``."""
    if TEST_REDIS.proc is None:
        pytest.fail("the private redis-server is not running (is redis-server installed?)")
    return TEST_REDIS


@pytest.fixture
def evidence(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Record a line for the end-of-run "real components used" section."""
    lines = request.config.stash[EVIDENCE]

    def record(line: str) -> None:
        lines.append(f"{request.node.name}: {line}")

    return record


@pytest.fixture(autouse=True)
def no_workers_of_earlier_tests() -> None:
    """Room affinity sends a room's ticks to the worker that owns it; a worker killed by an
    earlier test stays in the live set for a few seconds (controller.affinity.WORKER_TTL_S),
    so each test starts with that set empty (its own workers announce themselves). Nor does
    it start with the heavy-job slots of earlier tests' clients (controller/heavy.py: a build
    queued for nobody holds its client's slot for minutes), nor with the heavy jobs they
    queued for nobody (a later test's heavy worker would run their Previews first)."""
    import redis

    from controller.affinity import WORKERS_KEY
    from playground.workers import HEAVY_QUEUE

    if TEST_REDIS.proc is None:
        return
    try:
        client = redis.Redis.from_url(TEST_REDIS.url, socket_timeout=1)
        client.delete(WORKERS_KEY, HEAVY_QUEUE, *client.keys("playground:heavy:*"))
    except redis.RedisError:
        pass
