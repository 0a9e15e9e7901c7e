"""Simulated time: integer milliseconds from the start of a scenario.

The engine never reads the machine clock; every component is handed ``now_ms``.
"""

from __future__ import annotations

MILLISECOND = 1
SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE


def seconds(ms: int) -> float:
    """Simulated seconds for display and the timeline's ``t`` field (ms precision)."""
    return ms / 1000


def fmt_mmss(ms: int) -> str:
    """``mm:ss.mmm`` as the table format prints times (minutes may exceed 59)."""
    minutes, rest = divmod(ms, MINUTE)
    secs, millis = divmod(rest, SECOND)
    return f"{minutes:02d}:{secs:02d}.{millis:03d}"


def next_on_grid(now_ms: int, anchor_ms: int, period_ms: int) -> int:
    """The first instant ``anchor + k * period`` (k >= 0) that is >= ``now_ms``."""
    if now_ms <= anchor_ms:
        return anchor_ms
    k = -(-(now_ms - anchor_ms) // period_ms)
    return anchor_ms + k * period_ms


def last_on_grid(now_ms: int, anchor_ms: int, period_ms: int) -> int:
    """The last instant ``anchor + k * period`` (k >= 0) that is <= ``now_ms``."""
    return anchor_ms + ((now_ms - anchor_ms) // period_ms) * period_ms


class FakeClock:
    """A settable clock for unit tests of components that take ``now``."""

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms

    def advance(self, ms: int) -> int:
        self.now_ms += ms
        return self.now_ms
