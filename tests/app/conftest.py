"""App fixtures: a real Celery worker (and beat) against the test Redis and test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis_plugin import TEST_REDIS

REPO = Path(__file__).resolve().parents[2]


def _spawn(args: list[str], db_name: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "REDIS_URL": TEST_REDIS.url,
        "DATABASE_URL": f"sqlite:///{db_name}",
        "PLAYGROUND_TEST_DB": "",
    }
    env.pop("PLAYGROUND_TEST_DB")
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "playground", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


class Worker:
    def __init__(self, db_name: str) -> None:
        self.db_name = db_name
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = _spawn(
            [
                "worker",
                "--pool=threads",
                "--concurrency=4",
                "--loglevel=WARNING",
                "-n",
                f"test{time.monotonic_ns()}@%h",
            ],
            self.db_name,
        )
        from playground.celery import app

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if app.control.ping(timeout=0.5):
                return
        raise RuntimeError("the Celery worker did not answer")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None
            time.sleep(0.3)


@pytest.fixture
def celery_worker_proc(transactional_db: None) -> Iterator[Worker]:
    from django.db import connection

    worker = Worker(connection.settings_dict["NAME"])
    worker.start()
    yield worker
    worker.kill()


@pytest.fixture
def celery_beat_proc(transactional_db: None, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    from django.db import connection

    proc = _spawn(
        ["beat", "--loglevel=WARNING", f"--schedule={tmp_path / 'beat-schedule'}"],
        connection.settings_dict["NAME"],
    )
    yield proc
    proc.kill()
    proc.wait(timeout=10)


@pytest.fixture
def redis_server():
    return TEST_REDIS
