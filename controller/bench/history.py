"""The engine row's previous figures: ``manage.py bench`` stores each engine row it runs in
``.bench/last.json`` (beside manage.py; not in git), with the commit and the load average it
ran at, and prints under each row how it compares with the stored one, so a regression shows
(issue #27). A row is known by its size and scenario; a row run for the first time says so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .procs import REPO

LAST = REPO / ".bench" / "last.json"
NOISE = 0.01  # a change under 1 % is called neither better nor worse
# The figures compared: (key, label, unit, True when more is better).
FIGURES = (
    ("run_s", "run", "s", False),
    ("run_cpu_s", "run CPU", "s", False),
    ("sim_s_per_wall_s", "sim s/wall s", "", True),
    ("setup_s", "setup", "s", False),
    ("peak_mib", "peak", "MiB", False),
)


def row_key(row: dict[str, Any]) -> str:
    return f"{row['nodes']} nodes, {row['scenario']}"


def commit() -> str:
    """The checked-out commit (short), ``+`` when the worktree has changes; ``?`` without git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+" if dirty else "")


def load(path: Path = LAST) -> dict[str, Any]:
    """The stored rows by row_key ({} when there are none or the file is unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def store(rows: list[dict[str, Any]], where: str, load_avg: str, path: Path = LAST) -> None:
    """Keep ``rows`` as the last figures of their rows (other rows stay as they were)."""
    data = load(path)
    for row in rows:
        data[row_key(row)] = {**row, "commit": where, "load": load_avg}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def compare(row: dict[str, Any], last: dict[str, Any] | None) -> str:
    """One line: each figure of ``row`` against ``last`` (the stored run of the same row),
    with the change in percent and whether it is better or worse."""
    if last is None:
        return f"  {row_key(row)}: no previous run stored"
    parts = []
    for key, label, unit, more_is_better in FIGURES:
        new, old = row.get(key), last.get(key)
        if not isinstance(new, int | float) or not isinstance(old, int | float):
            continue
        change = "" if old == 0 else f" ({(new - old) / old * 100:+.0f}%)"
        if old == 0 or abs(new - old) < abs(old) * NOISE:
            verdict = ""
        elif (new > old) == more_is_better:
            verdict = " better"
        else:
            verdict = " worse"
        suffix = f" {unit}" if unit else ""
        parts.append(f"{label} {old} -> {new}{suffix}{change}{verdict}")
    where = f"{last.get('commit', '?')}, {last.get('load', 'load average ?')}"
    return f"  {row_key(row)} vs last ({where}): " + "; ".join(parts)
