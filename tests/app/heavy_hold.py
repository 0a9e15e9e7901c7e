"""Imported by a test's heavy worker (``Worker(include=...)``, Celery's ``--include``): its
Previews, once started, wait until the test releases them, so that a test knows they are all
still running (tests/app/test_heavy.py). Nothing else changes: the real task, routed as
settings say, runs the real import once released."""

from __future__ import annotations

import time

from celery.signals import worker_init, worker_process_init

HELD = "playground:test:heavy-held"  # the previews started (a set of their ids)
RELEASE = "playground:test:heavy-release"  # set by the test: they go on


def _hold() -> None:
    from controller.locks import redis_client
    from controller.rooms import imports

    real = getattr(imports.preview_run, "held_real", imports.preview_run)

    def held_run(preview_id: str) -> None:
        client = redis_client()
        client.sadd(HELD, preview_id)
        deadline = time.monotonic() + 600
        while not client.get(RELEASE) and time.monotonic() < deadline:
            time.sleep(0.05)
        real(preview_id)

    held_run.held_real = real  # type: ignore[attr-defined]
    imports.preview_run = held_run


@worker_init.connect
def _in_worker(**kwargs) -> None:
    _hold()


@worker_process_init.connect
def _in_pool_process(**kwargs) -> None:
    _hold()
