"""Fuzz: the scenario loader (upload, form, CLI, room) with random YAML/JSON documents, random
text, and one random change to a built-in scenario. Each is accepted, or refused with a
ScenarioError, or by a room's limits on nodes and pods (what a room checks next, its faults'
additions included); an accepted one's cost estimate (limits.room_cost) is sound, and it runs 10 simulated seconds and its timeline can be
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
from controller.limits import MIN_ROOM_COST, LimitError, check_scenario_counts, room_cost
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
    objects = check_scenario_counts(scenario)
    # The room's cost estimate (admission): an integer, its nodes at least, at least the
    # minimum, growing with speed.
    assert isinstance(objects, int) and objects >= len(scenario.nodes)
    costs = [room_cost(objects, speed) for speed in (0.1, 10.0, 10.5, 100.0)]
    assert all(isinstance(c, int) for c in costs) and costs[0] >= MIN_ROOM_COST
    assert costs == sorted(costs) and costs[0] == costs[1]
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


# -- per-object lists near and past their caps (issue #35) ---------------------------------------
def _items(field: str, n: int, data: st.DataObject) -> object:
    """``n`` items for ``field``: valid ones (distinct names and keys), or random ones."""
    if data.draw(st.booleans(), label="random items"):
        return [data.draw(JSON, label="item")] * n  # one random value, n times
    if field in ("labels", "annotations", "nodeSelector", "matchLabels"):
        return {f"k{i}": "v" for i in range(n)}
    if field == "taints":
        effect = data.draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))
        return [{"key": f"k{i}", "effect": effect} for i in range(n)]
    if field == "tolerations":
        return [{"key": f"k{i}", "operator": "Exists"} for i in range(n)]
    if field == "images":
        return [{"name": f"i{i}", "size": "1Mi"} for i in range(n)]
    if field == "ownerReferences":
        return [{"kind": "ReplicaSet", "name": f"r{i}", "uid": f"u{i}"} for i in range(n)]
    return [{"name": f"c{i}"} for i in range(n)]  # containers, initContainers, volumes


# Where each field goes in a scenario: (section, path inside the item)
PLACES = {
    "taints": ("faults", ["taints"]),
    "labels": ("nodes", ["labels"]),
    "images": ("nodes", ["images"]),
    "tolerations": ("objects", ["spec", "tolerations"]),
    "containers": ("objects", ["spec", "containers"]),
    "initContainers": ("objects", ["spec", "initContainers"]),
    "volumes": ("objects", ["spec", "volumes"]),
    "nodeSelector": ("objects", ["spec", "nodeSelector"]),
    "annotations": ("objects", ["metadata", "annotations"]),
    "ownerReferences": ("objects", ["metadata", "ownerReferences"]),
    "matchLabels": ("objects", ["spec", "selector", "matchLabels"]),
}


def test_fuzz_long_per_object_lists() -> None:
    """A built-in scenario with one node's, pod's or fault's list grown near or far past its
    cap (PER_OBJECT_CAPS): accepted up to the cap, refused past it with the field's path,
    never slow (a 10,000-taint fault kept a worker busy 70 s)."""
    import copy

    from controller.engine.scenario import PER_OBJECT_CAPS

    def refused_ok(exc: BaseException) -> bool:
        return not isinstance(exc, ScenarioError) or bool(exc.path)

    tally = Tally("scenario: long per-object lists", _load_and_run, REFUSED, refused_ok)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        doc = copy.deepcopy(
            BUILTINS[data.draw(st.sampled_from(sorted(BUILTINS)), label="scenario")]
        )
        field = data.draw(st.sampled_from(sorted(PLACES)), label="field")
        most = PER_OBJECT_CAPS[field][0]
        n = data.draw(
            st.one_of(st.integers(most - 2, most + 2), st.integers(0, 20 * most)), label="n"
        )
        section, path = PLACES[field]
        spec = doc.setdefault("spec", {})
        if section == "faults":
            nodes = [n for n in spec.get("nodes") or [] if "name" in n] or [{"name": "x-1"}]
            if not any("name" in n for n in spec.get("nodes") or []):
                spec.setdefault("nodes", []).append(nodes[0])
            item = {"at": "1s", "type": data.draw(st.sampled_from(["Taint", "Untaint"]))}
            item["node"] = nodes[0]["name"]
            spec.setdefault("faults", []).append(item)
        else:
            items = spec.get(section) or []
            if not items:
                return
            item = data.draw(st.sampled_from(items), label="item")
        at = item
        for key in path[:-1]:
            if not isinstance(at.get(key), dict):
                at[key] = {}
            at = at[key]
        at[path[-1]] = _items(field, n, data)
        tally.judge(as_text(doc, data))

    tally.fuzz(one)
