"""A pytest plugin (loaded with -p before pytest-django reads the settings): app tests get a private, real redis-server (started here, before Django
reads its settings) and a file SQLite test database that a real Celery worker can share."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time

REDIS_BIN = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A real redis-server on a free loopback port, stoppable and restartable."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="pg-redis-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0  # how many times it was started: a test that restarts it changes this

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert REDIS_BIN, "redis-server is not installed (make test installs it)"
        self.starts += 1
        self.proc = subprocess.Popen(
            [
                REDIS_BIN,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


TEST_REDIS = RedisServer()
if REDIS_BIN and "REDIS_URL" not in os.environ:
    TEST_REDIS.start()
    atexit.register(TEST_REDIS.stop)
    os.environ["REDIS_URL"] = TEST_REDIS.url
os.environ.setdefault(
    "PLAYGROUND_TEST_DB", os.path.join(tempfile.gettempdir(), f"pg-test-{os.getpid()}.sqlite3")
)
