"""The built-in teaching scenarios (controller/scenarios/*.yaml) keep their promises.

Each one opens with a ``#`` comment that the page shows as "what to watch for": what the
learner will see ("Watch for: ...") and what to change to compare ("Try: ..."). The concrete
claims of that comment are encoded as the scenario's ``spec.expect``, checked here the way
``simulate --check`` does (``controller.engine.cli.run``), so an engine change that breaks a
claim fails this test instead of silently turning the comment into a lie.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.engine.expect import check_all, describe
from controller.engine.scenario import load_scenario_file
from controller.engine.simulation import Simulation

from .conftest import REPO

BUILTIN = REPO / "controller" / "scenarios"
PATHS = sorted(BUILTIN.glob("*.yaml"))
MIN_EXPECTATIONS = 3


def header(path: Path) -> str:
    """The leading ``#`` lines joined into one paragraph, as the page reads them
    (``controller.rooms.catalog.scenario_about``, which this engine test must not import)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    return " ".join(x for x in lines if x)


def test_the_builtin_scenarios_are_there() -> None:
    assert len(PATHS) >= 11, [p.name for p in PATHS]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_header_tells_what_to_watch_for_and_what_to_try(path: Path) -> None:
    about = header(path)
    assert about, f"{path.name} has no leading # comment"
    assert "Watch for:" in about, f"{path.name}: the header has no 'Watch for:'"
    assert "Try:" in about, f"{path.name}: the header has no 'Try:'"
    assert about.index("Watch for:") < about.index("Try:"), f"{path.name}: 'Try:' comes last"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_expectations_hold(path: Path) -> None:
    scenario = load_scenario_file(str(path))
    assert len(scenario.expect) >= MIN_EXPECTATIONS, (
        f"{path.name} states {len(scenario.expect)} expectations, fewer than {MIN_EXPECTATIONS}"
    )
    sim = Simulation(scenario)
    sim.run(scenario.duration_ms)
    failures = check_all(scenario.expect, sim.timeline.events)
    report = "\n".join(f"spec.expect[{i}] {describe(e)}: {why}" for i, e, why in failures)
    assert not failures, f"{path.name}:\n{report}"
