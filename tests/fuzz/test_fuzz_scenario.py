"""Fuzz: the scenario loader (upload, form, CLI, room) with random YAML/JSON documents, random
text, and one random change to a built-in scenario. Each is accepted, or refused with a
ScenarioError, or by a room's limits on nodes and pods (what a room checks next, its faults'
additions included); an accepted one also runs 10 simulated seconds and its timeline can be
stored (orjson, as a room's tick stores it). None raises anything else, none takes a second.

The limits are small (100 nodes, 1,000 pods), as in the websocket target: a room may grow to
the server's (5,000 nodes: 10 simulated seconds of those take 3 s of CPU, by design; the
benchmarks measure them); this target is about validation, and a mutated node count or
replica count (Hypothesis's integers are often in the millions) would otherwise measure the
size asked for, not the loader."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state, pod_state
from controller.limits import LimitError, check_scenario_counts
from tests.fuzz.harness import EDGE_TEXT, JSON, SETTINGS, Tally, as_text, mutate

BUILTINS = {
    p.name: yaml.safe_load(p.read_text())
    for p in sorted(
        (Path(__file__).resolve().parents[2] / "controller" / "scenarios").glob("*.yaml")
    )
}
SPEC_KEYS = [
    "duration",
    "kubernetesVersion",
    "controllerManager",
    "kubelet",
    "apiServer",
    "featureGates",
    "nodes",
    "objects",
    "faults",
    "expect",
    "lesson",
]


def _load_and_run(text: str) -> None:
    scenario = load_scenario(text)
    check_scenario_counts(scenario)
    sim = Simulation(scenario)
    sim.run(min(scenario.duration_ms or 10_000, 10_000))
    orjson.dumps(list(sim.timeline.events))
    orjson.dumps([node_state(sim, n) for n in sim.cluster.nodes.values()])
    orjson.dumps([pod_state(sim, p) for p in sim.cluster.pods.values()])


REFUSED = (ScenarioError, LimitError)


@pytest.fixture(autouse=True)
def small_limits(settings) -> None:
    settings.PLAYGROUND_MAX_NODES_PER_ROOM = 100
    settings.PLAYGROUND_MAX_PODS_PER_ROOM = 1000


def test_fuzz_random_documents() -> None:
    tally = Tally("scenario: random YAML/JSON documents", _load_and_run, REFUSED)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        shape = data.draw(st.sampled_from(["any", "scenario", "text"]), label="shape")
        if shape == "text":
            text = data.draw(st.one_of(st.text(max_size=200), EDGE_TEXT), label="text")
        else:
            doc = data.draw(JSON, label="doc")
            if shape == "scenario":
                spec = data.draw(
                    st.dictionaries(st.sampled_from(SPEC_KEYS), JSON, max_size=5), label="spec"
                )
                doc = {"apiVersion": "playground/v1alpha1", "kind": "Scenario", "spec": spec}
            text = as_text(doc, data)
        tally.judge(text)

    tally.fuzz(one)


def test_fuzz_mutated_builtin_scenarios() -> None:
    tally = Tally("scenario: mutations of the built-in scenarios", _load_and_run, REFUSED)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(BUILTINS)), label="scenario")
        doc = mutate(BUILTINS[name], data)
        tally.judge(as_text(doc, data))

    tally.fuzz(one)
