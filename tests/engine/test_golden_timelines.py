"""Every built-in scenario's whole timeline, byte for byte, as ``simulate`` prints it.

``spec.expect`` checks what a scenario's header promises; this checks everything else: an
engine change that moves any event of any built-in scenario fails here and shows the first
line that moved. When a change is meant (a fidelity fix), regenerate with
``UPDATE_GOLDEN=1 pytest tests/engine/test_golden_timelines.py`` and say in the commit which
scenarios changed and why.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from controller.engine.cli import run

from .conftest import REPO

BUILTIN = REPO / "controller" / "scenarios"
GOLDEN = Path(__file__).parent / "golden"
PATHS = sorted(BUILTIN.glob("*.yaml"))


def simulate(path: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = run(str(path), None, "jsonl", None, False, out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_timeline_is_the_golden_one(path: Path) -> None:
    golden = GOLDEN / f"{path.stem}.jsonl"
    got = simulate(path)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(got, encoding="utf-8")
    assert golden.exists(), f"no golden timeline for {path.name}: run with UPDATE_GOLDEN=1"
    want = golden.read_text(encoding="utf-8").splitlines()
    lines = got.splitlines()
    for i, (a, b) in enumerate(zip(lines, want, strict=False)):
        assert a == b, f"{path.name} line {i + 1} moved:\n got  {a}\n want {b}"
    assert len(lines) == len(want), f"{path.name}: {len(lines)} events, golden has {len(want)}"


def test_every_golden_has_its_scenario() -> None:
    stale = sorted(
        g.name for g in GOLDEN.glob("*.jsonl") if not (BUILTIN / f"{g.stem}.yaml").exists()
    )
    assert not stale, f"golden timelines without a built-in scenario: {stale}"
