"""The live runtime stores a room's engine between ticks: a Simulation must survive a pickle
round trip mid-run and go on exactly as an uninterrupted run does."""

from __future__ import annotations

import pickle

import pytest

from controller.engine.scenario import load_scenario_file
from controller.engine.simulation import Simulation

from .conftest import OWN_SCENARIOS, SHARED_SCENARIOS


def scenario_files() -> list:
    files = sorted(OWN_SCENARIOS.glob("*.yaml"))
    if SHARED_SCENARIOS.is_dir():
        files += sorted(SHARED_SCENARIOS.glob("*.yaml"))
    return files


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_pickled_midway_simulation_continues_identically(path) -> None:
    scenario = load_scenario_file(str(path))
    whole = Simulation(scenario)
    whole.run(scenario.duration_ms)

    first = Simulation(load_scenario_file(str(path)))
    first.run(scenario.duration_ms // 3)
    events_before = list(first.timeline.events)
    first.timeline.events.clear()  # the runtime drains persisted events before snapshotting
    restored: Simulation = pickle.loads(pickle.dumps(first))
    restored.run(scenario.duration_ms)
    assert events_before + restored.timeline.events == whole.timeline.events
