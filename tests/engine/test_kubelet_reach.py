"""Kubelet.alive and Kubelet.reaches_api are kept as attributes (issue #27: read several times
per pod at a big room's t=0): after any sequence of kubelet, partition and power faults, and
after a pickle round trip (a room's snapshot, also one from before they were kept), they are
what the three flags say."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from controller.engine.kubelet.node_status import Kubelet
from controller.engine.scenario import parse_scenario
from controller.engine.simulation import Simulation

FAULTS = [
    "StopKubelet",
    "StartKubelet",
    "PartitionNode",
    "HealNode",
    "PowerOffNode",
    "PowerOnNode",
]


def scenario(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    nodes = ["n-1", "n-2", "n-3"]
    faults = [
        {"at": f"{s}s", "type": rng.choice(FAULTS), "node": rng.choice(nodes)}
        for s in sorted(rng.sample(range(1, 120), 25))
    ]
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"reach-{seed}"},
        "spec": {"duration": "130s", "nodes": [{"name": n} for n in nodes], "faults": faults},
    }


def check(kubelet: Kubelet) -> None:
    alive = kubelet.process_running and kubelet.powered
    assert (kubelet.alive, kubelet.reaches_api) == (alive, alive and kubelet.connected)


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed {s}")
def test_kept_reach_flags_follow_every_fault_and_a_pickle(seed: int) -> None:
    sim = Simulation(parse_scenario(scenario(seed)))
    seen = set()
    for t in range(0, 130_001, 5_000):
        sim.run(t)
        for kubelet in sim.kubelets.values():
            check(kubelet)
            seen.add((kubelet.process_running, kubelet.powered, kubelet.connected))
    assert len(seen) > 1  # the faults moved the flags
    for kubelet in pickle.loads(pickle.dumps(sim)).kubelets.values():
        check(kubelet)


def test_a_kubelet_pickled_before_the_flags_were_kept_gets_them() -> None:
    sim = Simulation(parse_scenario(scenario(0)))
    sim.run(0)
    kubelet = sim.kubelets["n-1"]
    kubelet.partition(0)
    state = dict(kubelet.__dict__)
    del state["alive"], state["reaches_api"]
    old = Kubelet.__new__(Kubelet)
    old.__setstate__(state)
    assert (old.alive, old.reaches_api) == (True, False)
