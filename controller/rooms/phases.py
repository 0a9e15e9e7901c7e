"""Where a tick's time goes, by phase: wall and CPU seconds (``time.process_time``: the
process's, so a loaded machine's waiting for a core shows in wall only) of the last tick this
thread ran. ``manage.py bench``'s live row prints them at p95 and max.

Phases, in the tick's order:

- ``load``      the room's row (locked), its engine (cached, or restored), pending actions
- ``advance``   the engine, to the room's "now"
- ``persist``   timeline rows, changed views, chart points, the room's clock (tick._persist)
- ``snapshot``  the engine's snapshot when one is due: pickled in the tick, or the fork
                after commit (controller/snapshots.py)
- ``commit``    the transaction's commit (on SQLite, its write to disk)
- ``broadcast`` the delta bounded (or a resync notice) and sent to the channel layer
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("load", "advance", "persist", "snapshot", "commit", "broadcast")


class _Last(threading.local):
    def __init__(self) -> None:
        self.wall: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(PHASES, 0.0)


_LAST = _Last()


def start() -> None:
    """A new tick: every phase at zero."""
    _LAST.wall = dict.fromkeys(PHASES, 0.0)
    _LAST.cpu = dict.fromkeys(PHASES, 0.0)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Add the wall and CPU time of the block to phase ``name`` of this tick."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        _LAST.wall[name] += time.perf_counter() - wall
        _LAST.cpu[name] += time.process_time() - cpu


def mark() -> tuple[float, float]:
    """Now, to add what follows to a phase later (``since``)."""
    return time.perf_counter(), time.process_time()


def since(name: str, start: tuple[float, float]) -> None:
    """Add the time from ``start`` (``mark``) to now to phase ``name``."""
    _LAST.wall[name] += time.perf_counter() - start[0]
    _LAST.cpu[name] += time.process_time() - start[1]


@contextmanager
def moved(outer: str, name: str) -> Iterator[None]:
    """The block's time goes to ``name`` instead of ``outer``, the phase it runs inside (a
    callback run by the commit)."""
    start = mark()
    try:
        yield
    finally:
        wall, cpu = time.perf_counter() - start[0], time.process_time() - start[1]
        _LAST.wall[name] += wall
        _LAST.cpu[name] += cpu
        _LAST.wall[outer] -= wall
        _LAST.cpu[outer] -= cpu


def last() -> dict[str, tuple[float, float]]:
    """The last tick's (wall, CPU) seconds by phase."""
    return {p: (_LAST.wall[p], _LAST.cpu[p]) for p in PHASES}
