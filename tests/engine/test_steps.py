"""The engine's timeline does not depend on how its clock is advanced: a tick with a work
budget (controller/rooms/tick.py) advances a room in steps of whatever size its budget
allows, and the room's timeline must be the one a single run gives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from controller.engine.lesson import LessonRuntime
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state, pod_state, zone_states

from .conftest import OWN_SCENARIOS, REPO, SHARED_SCENARIOS

BUILTIN = REPO / "controller" / "scenarios"
PATHS = sorted(BUILTIN.glob("*.yaml")) + sorted(OWN_SCENARIOS.glob("*.yaml"))
if SHARED_SCENARIOS.is_dir():
    PATHS += sorted(SHARED_SCENARIOS.glob("*.yaml"))
# Steps of one instant, odd sizes that land between a controller's periods, and long ones.
SIZES = (1, 1, 7, 250, 999, 5000, 20_000)


def _steps(seed: str, end_ms: int) -> list[int]:
    rng = random.Random(seed)
    out, now = [], 0
    while now < end_ms:
        now = min(end_ms, now + rng.choice(SIZES))
        out.append(now)
    return out


def _state(sim: Simulation) -> tuple[object, ...]:
    return (
        sim.now_ms,
        [node_state(sim, sim.cluster.nodes[n]) for n in sorted(sim.cluster.nodes)],
        [pod_state(sim, sim.cluster.pods[k]) for k in sorted(sim.cluster.pods)],
        zone_states(sim),
    )


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_many_small_steps_give_the_timeline_and_state_of_one_run(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    whole = Simulation(load_scenario(text))
    end = whole.scenario.duration_ms
    whole.run(end)
    stepped = Simulation(load_scenario(text))
    steps = _steps(path.name, end)
    assert len(steps) > 20
    for t in steps:
        stepped.run(t)
    assert stepped.timeline.events == whole.timeline.events
    assert _state(stepped) == _state(whole)


LESSONS = [p for p in sorted(BUILTIN.glob("*.yaml")) if "lesson" in p.name]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_a_lesson_advanced_in_small_steps_pauses_where_one_advance_does(path: Path) -> None:
    """LessonRuntime.advance called again and again with a target a step further (as a tick
    with a budget does, through lessons.progress.LessonRun) pauses at the same checkpoints,
    at the same instants, with the same timeline, as one advance per pause."""
    text = path.read_text(encoding="utf-8")
    s = load_scenario(text)
    assert s.lesson is not None
    whole, rt = Simulation(s), LessonRuntime(s.lesson)
    pauses = []
    while (hit := rt.advance(whole, s.duration_ms)) is not None:
        pauses.append((hit[0].id, hit[1]))
    stepped_s = load_scenario(text)
    stepped, srt = Simulation(stepped_s), LessonRuntime(stepped_s.lesson)
    got = []
    for t in _steps(path.name, s.duration_ms):
        while stepped.now_ms < t or not stepped.started:
            hit = srt.advance(stepped, t)
            if hit is None:
                break
            got.append((hit[0].id, hit[1]))
    assert pauses and got == pauses
    assert stepped.timeline.events == whole.timeline.events
