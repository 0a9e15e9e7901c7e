"""Time series of what the page charts, kept by the engine as it runs (not in the timeline):
appended only when a value changes, so memory grows with changes, not with time."""

from __future__ import annotations

from typing import Any


def append_change(points: list[tuple[Any, ...]], now: int, value: tuple[Any, ...]) -> None:
    """Add ``(now, *value)`` if the value changed; a later sample in the same instant
    replaces the earlier one (and disappears if it undoes the change)."""
    if points and points[-1][1:] == value:
        return
    if points and points[-1][0] == now:
        points.pop()
        if points and points[-1][1:] == value:
            return
    points.append((now, *value))


def points_since(points: list[tuple[Any, ...]], t_ms: int) -> list[tuple[Any, ...]]:
    """The points at ``t_ms`` or later (the lists are in time order)."""
    i = len(points)
    while i > 0 and points[i - 1][0] >= t_ms:
        i -= 1
    return points[i:]
