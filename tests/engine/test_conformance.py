"""Every scenario's ``spec.expect`` holds: the public examples in ../shared/scenarios (when
present beside the clone) and the engine's own scenarios in tests/engine/scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.engine.expect import check_all, describe
from controller.engine.scenario import load_scenario_file
from controller.engine.simulation import Simulation

from .conftest import OWN_SCENARIOS, SHARED_SCENARIOS


def _run_and_check(path: Path) -> None:
    scenario = load_scenario_file(str(path))
    assert scenario.expect, f"{path.name} states no expectations"
    sim = Simulation(scenario)
    sim.run(scenario.duration_ms)
    failures = check_all(scenario.expect, sim.timeline.events)
    report = "\n".join(f"spec.expect[{i}] {describe(e)}: {why}" for i, e, why in failures)
    assert not failures, report


@pytest.mark.skipif(
    not SHARED_SCENARIOS.is_dir(), reason="../shared/scenarios is not beside the clone"
)
@pytest.mark.parametrize(
    "path",
    sorted(SHARED_SCENARIOS.glob("*.yaml")) if SHARED_SCENARIOS.is_dir() else [],
    ids=lambda p: p.name,
)
def test_public_scenario_expectations_hold(path: Path) -> None:
    _run_and_check(path)


@pytest.mark.parametrize("path", sorted(OWN_SCENARIOS.glob("*.yaml")), ids=lambda p: p.name)
def test_own_scenario_expectations_hold(path: Path) -> None:
    _run_and_check(path)
