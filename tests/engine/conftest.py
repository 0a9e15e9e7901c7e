"""Helpers for engine tests: build and run scenarios from YAML text, no Django."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation

REPO = Path(__file__).resolve().parents[2]
SHARED_SCENARIOS = REPO.parent / "shared" / "scenarios"
OWN_SCENARIOS = Path(__file__).parent / "scenarios"


def simulate(text: str, until_s: float | None = None) -> Simulation:
    scenario = load_scenario(textwrap.dedent(text))
    sim = Simulation(scenario)
    sim.run(round(until_s * 1000) if until_s is not None else scenario.duration_ms)
    return sim


def events(sim: Simulation, type_: str, **fields: Any) -> list[dict[str, Any]]:
    return [
        e
        for e in sim.timeline.events
        if e["type"] == type_ and all(e.get(k) == v for k, v in fields.items())
    ]


def times(sim: Simulation, type_: str, **fields: Any) -> list[float]:
    """Times (seconds) of matching events."""
    return [e["t"] / 1000 for e in events(sim, type_, **fields)]


@pytest.fixture
def run_yaml():
    return simulate
