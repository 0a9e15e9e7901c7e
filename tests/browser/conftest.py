"""The whole stack for browser tests: Daphne, a Celery worker and beat (real processes) on
the test Redis and the test database, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from playground.workers import heavy_worker_args, tick_worker_args
from tests.postgres_plugin import database_url
from tests.redis_plugin import TEST_REDIS

from .helpers import node_action  # noqa: F401  (the tests' shared helpers: helpers.py)

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_stack(
    transactional_db: None, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[str]:
    """``@pytest.mark.stack_env(NAME="value")`` on a test sets environment variables of the
    stack's processes (settings such as PLAYGROUND_DELTA_MAX_BYTES); ``@pytest.mark.kubeapi``
    also serves the rooms' Kubernetes API over https, as `make run` does (KUBEAPI_PORT)."""
    from django.db import connection

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    port = _free_port()
    env = {
        **os.environ,
        "REDIS_URL": TEST_REDIS.url,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
        "DEBUG": "1",
        "PLAYGROUND_TICK_SECONDS": "0.5",
    }
    marker = request.node.get_closest_marker("stack_env")
    if marker is not None:
        env.update(marker.kwargs)
    env.pop("PLAYGROUND_TEST_DB", None)
    log = open(tmp_path / "stack.log", "wb")  # noqa: SIM115
    daphne = ["daphne", "-b", "127.0.0.1", "-p", str(port), "playground.asgi:application"]
    if request.node.get_closest_marker("kubeapi") is not None:
        from controller.kubeapi import tls

        tls_dir, tls_port = tls.ensure(tmp_path / "kubeapi-tls"), _free_port()
        env |= {"KUBEAPI_PORT": str(tls_port), "KUBEAPI_TLS_DIR": str(tls_dir)}
        daphne[-1:-1] = ["-e", tls.endpoint(tls_dir, tls_port)]
    # The two kinds of worker every launcher starts (playground/workers.py): ticks, and the
    # heavy queue's builds, previews, imports and what-ifs.
    worker = ["celery", "-A", "playground", *tick_worker_args(f"browser{port}@%h")]
    heavy = ["celery", "-A", "playground", *heavy_worker_args(f"browser-heavy{port}@%h")]
    beat = ["celery", "-A", "playground", "beat", "--loglevel=WARNING"]
    beat += [f"--schedule={tmp_path / 'beat'}"]
    procs = [
        subprocess.Popen([sys.executable, "-m", *args], cwd=REPO, env=env, stdout=log, stderr=log)
        for args in (daphne, worker, heavy, beat)
    ]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                break
        except OSError:
            time.sleep(0.2)
    ARTIFACTS.mkdir(exist_ok=True)
    yield f"http://127.0.0.1:{port}"
    for p in procs:
        p.kill()
        p.wait(timeout=10)
    log.close()


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
