"""The scheduler's big-cluster shortcut (schedwindow.py) makes the same choices as the
per-node path (find_nodes_that_pass_filters + prioritize): the same node for every pod, the
same nextStartNodeIndex, the same timeline, through a zone outage and rescheduling, with
nodes that fill up, unschedulable and tainted nodes, nodes without a zone, pods without an
owner and pods with a node selector."""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine import scheduler
from controller.engine.clock import SECOND
from controller.engine.scenario import parse_scenario
from controller.engine.simulation import Simulation
from controller.engine.timeline import to_json


def deployment(name: str, replicas: int, cpu: str = "", **spec: Any) -> dict[str, Any]:
    requests = {"requests": {"cpu": cpu}} if cpu else {}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", **requests}], **spec},
            },
        },
    }


def bare(name: str, cpu: str = "") -> dict[str, Any]:
    requests = {"requests": {"cpu": cpu}} if cpu else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", **requests}]},
    }


def zoned(count: int, pods: str = "110", cpu: str = "4") -> list[dict[str, Any]]:
    return [
        {
            "generate": {
                "count": count,
                "namePrefix": f"{z}-",
                "zone": f"zone-{z}",
                "capacity": {"pods": pods, "cpu": cpu},
            }
        }
        for z in "abc"
    ]


CASES = {
    "three zones, three deployments, a zone outage": (
        zoned(80),
        [deployment("web", 900, "100m"), deployment("api", 700), deployment("db", 300, "1")],
        [{"at": "30s", "type": "ZoneOutage", "zone": "zone-a"}],
    ),
    "small nodes fill up, then pods stay pending": (
        zoned(70, pods="6", cpu="2"),
        [deployment("web", 1100, "300m"), deployment("batch", 400)],
        [],
    ),
    "no zones, bare pods without owner": (
        [{"generate": {"count": 230, "namePrefix": "n-"}}],
        [deployment("web", 800, "50m")] + [bare(f"p-{i}", "10m") for i in range(300)],
        [{"at": "20s", "type": "StopKubelet", "node": "n-7"}],
    ),
    "zoned and unzoned nodes, one unschedulable, a taint later": (
        zoned(70)
        + [{"generate": {"count": 40, "namePrefix": "plain-"}}]
        + [{"name": "cordoned", "zone": "zone-a", "unschedulable": True}],
        [
            deployment("web", 900, "100m"),
            deployment("pinned", 120, nodeSelector={"topology.kubernetes.io/zone": "zone-b"}),
        ],
        [
            {"at": "10s", "type": "Taint", "node": "a-3", "key": "k", "effect": "NoSchedule"},
            {"at": "10s", "type": "Taint", "node": "b-5", "key": "p", "effect": "PreferNoSchedule"},
            {"at": "20s", "type": "ZoneOutage", "zone": "zone-c"},
        ],
    ),
    # Blocks of a Deployment's index copied from its pods' base blocks (schedwindow._block):
    # small Deployments, one after another, each copies the base the one before kept
    # current; the big one's pods come in two syncs of the ReplicaSet controller (500, then
    # 50), the second time with pods on most nodes.
    "many deployments, one coming back with pods on most nodes": (
        zoned(200, cpu="8"),
        [deployment("big", 550, "10m")] + [deployment(f"s{i}", 40, "10m") for i in range(12)],
        [{"at": "20s", "type": "ZoneOutage", "zone": "zone-b"}],
    ),
    # Seven zones: the packed zone sums pass 64 bits (WindowIndex.bits per zone).
    "seven zones, two deployments, a zone outage": (
        [
            {"generate": {"count": 36, "namePrefix": f"{z}-", "zone": f"zone-{z}"}}
            for z in "tuvwxyz"
        ],
        [deployment("web", 1200, "100m"), deployment("api", 600)],
        [{"at": "30s", "type": "ZoneOutage", "zone": "zone-x"}],
    ),
    "a deployment with more than 32 pods on a node": (
        zoned(70, cpu="16"),
        [deployment("web", 7500, "10m")],
        [{"at": "20s", "type": "ZoneOutage", "zone": "zone-b"}],
    ),
}


SCHEDULE = scheduler.KubeScheduler.schedule


def run(nodes: list, objects: list, faults: list, window_min: int, monkeypatch) -> Any:
    monkeypatch.setattr(scheduler, "WINDOW_MIN_NODES", window_min)
    scenario = parse_scenario(
        {
            "apiVersion": "playground/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "window"},
            "spec": {"nodes": nodes, "objects": objects, "faults": faults},
        }
    )
    sim = Simulation(scenario)
    placed = []
    real = SCHEDULE

    def spy(self, pod):  # type: ignore[no-untyped-def]
        chosen = real(self, pod)
        placed.append((sim.now_ms, pod.key, chosen, self.next_start_node_index))
        return chosen

    monkeypatch.setattr(scheduler.KubeScheduler, "schedule", spy)
    sim.run(120 * SECOND)
    return placed, [to_json(e) for e in sim.timeline.events]


@pytest.mark.parametrize("case", list(CASES))
def test_the_block_path_chooses_as_the_per_node_path(case: str, monkeypatch) -> None:
    nodes, objects, faults = CASES[case]
    calls = []
    real_window = scheduler.schedule_window

    def counting(*args):  # type: ignore[no-untyped-def]
        chosen = real_window(*args)
        calls.append(chosen is not None)
        return chosen

    monkeypatch.setattr(scheduler, "schedule_window", counting)
    fast_placed, fast_events = run(nodes, objects, faults, 200, monkeypatch)
    used = sum(calls)
    slow_placed, slow_events = run(nodes, objects, faults, 10**9, monkeypatch)
    assert used >= 300, f"the block path was used for {used} pods only"
    assert fast_placed == slow_placed
    assert fast_events == slow_events


@pytest.mark.parametrize(
    "case",
    [
        "three zones, three deployments, a zone outage",
        "many deployments, one coming back with pods on most nodes",
    ],
)
def test_a_block_kept_up_to_date_equals_one_made_from_scratch(case: str, monkeypatch) -> None:
    """Every block a window reads (copied from a base block, brought up to date node by node
    after binds, or made) holds what a block made from scratch at that moment holds: its
    nodes' data, the per-node packed zone terms that a window's cut adds up, the feasible
    count, the largest count, the packed zone sums and each group's best."""
    from controller.engine import schedwindow

    real_block = schedwindow._block
    checked = []

    def checking(sched, idx, j, info, nz):  # type: ignore[no-untyped-def]
        b = real_block(sched, idx, j, info, nz)
        if b is not None:
            lo = j * schedwindow.BLOCK
            entries = idx.nodes[lo : lo + schedwindow.BLOCK]
            cache = sched._resource_scores[nz]
            fresh = schedwindow._Block(schedwindow._items(sched, idx, entries, info, nz, cache))
            assert b.items == fresh.items
            assert (b.ps, b.qs) == (fresh.ps, fresh.qs)
            assert (b.count, b.maxc, b.zp, b.zn) == (fresh.count, fresh.maxc, fresh.zp, fresh.zn)
            assert b.groups == fresh.groups
            assert {k: sorted(v) for k, v in b.members.items()} == {
                k: sorted(v) for k, v in fresh.members.items()
            }
            checked.append(j)
        return b

    monkeypatch.setattr(schedwindow, "_block", checking)
    nodes, objects, faults = CASES[case]
    run(nodes, objects, faults, 200, monkeypatch)
    assert len(checked) >= 300, f"only {len(checked)} blocks were checked"
