"""The two kinds of Celery worker, as every launcher starts them (scripts/supervisor_conf.py
for `make run`, the bench Stack, the app tests; the README's systemd units say the same).

- Tick workers consume the shared queue (``celery``): beat's ticks, operators' passes; a
  threads pool, each worker announcing itself for room affinity (controller/affinity.py).
- Heavy workers consume only ``heavy``: room builds, import previews, big imports, what-if
  runs (settings.CELERY_TASK_ROUTES). A prefork pool, so that each job runs in a process of its
  own, under Celery's soft and hard time limits (the threads pool has none) and replaced once
  it holds more than ``max_memory_mb`` after a job; never announced for affinity, so no room
  is ticked there, and run at a lower CPU priority (PLAYGROUND_HEAVY_NICE), so that ticks
  are never starved of a thread nor of CPU.

No Django here: scripts/supervisor_conf.py imports it without the app's settings."""

from __future__ import annotations

TICK_QUEUE = "celery"
HEAVY_QUEUE = "heavy"
HEAVY_CONCURRENCY = 2  # jobs at once per heavy worker process
HEAVY_MAX_MEMORY_MB = 1024  # a heavy child holding more after a job is replaced
HEAVY_PROCESS = False  # this process is a heavy worker or one of its pool (playground/celery.py)


def tick_worker_args(name: str, concurrency: int = 4, loglevel: str = "WARNING") -> list[str]:
    """``celery -A playground`` + these: a tick worker named ``name`` (e.g. ``worker-1@%h``)."""
    return [
        "worker",
        "--pool=threads",
        f"--concurrency={concurrency}",
        "-Q",
        TICK_QUEUE,
        f"--loglevel={loglevel}",
        "-n",
        name,
    ]


def heavy_worker_args(
    name: str,
    concurrency: int = HEAVY_CONCURRENCY,
    loglevel: str = "WARNING",
    max_memory_mb: int = HEAVY_MAX_MEMORY_MB,
) -> list[str]:
    """``celery -A playground`` + these: a heavy worker named ``name`` (``heavy-1@%h``)."""
    return [
        "worker",
        "--pool=prefork",
        f"--concurrency={concurrency}",
        "-Q",
        HEAVY_QUEUE,
        f"--max-memory-per-child={max_memory_mb * 1024}",
        f"--loglevel={loglevel}",
        "-n",
        name,
    ]
