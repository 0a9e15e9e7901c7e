"""Figures of the benchmark rows: quantiles and the machine's load."""

from __future__ import annotations

import math
import os


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"
