"""The scheduler's big-cluster shortcut (schedwindow.py) makes the same choices as the
per-node path (find_nodes_that_pass_filters + prioritize): the same node for every pod, the
same nextStartNodeIndex, the same timeline, through a zone outage and rescheduling, with
nodes that fill up, unschedulable and tainted nodes, nodes without a zone, pods without an
owner and pods with a node selector; and on random clusters."""

from __future__ import annotations

import random
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
    # Owner indexes made from their pods' base (schedwindow.OwnerIndex): small Deployments,
    # one after another, each from the base the one before kept current; the big one's pods
    # come in two syncs of the ReplicaSet controller (500, then 50), the second time with
    # pods on most nodes (its zones' largest keys on nodes holding its pods).
    "many deployments, one coming back with pods on most nodes": (
        zoned(200, cpu="8"),
        [deployment("big", 550, "10m")] + [deployment(f"s{i}", 40, "10m") for i in range(12)],
        [{"at": "20s", "type": "ZoneOutage", "zone": "zone-b"}],
    ),
    # Seven zones: the packed zone sums pass 64 bits (_Layout.bits per zone).
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


def _count_block_path(monkeypatch) -> list[bool]:  # type: ignore[no-untyped-def]
    """Each schedule_window call from now on: whether it chose (the block path was taken)."""
    calls: list[bool] = []
    real_window = scheduler.schedule_window

    def counting(*args):  # type: ignore[no-untyped-def]
        chosen = real_window(*args)
        calls.append(chosen is not None)
        return chosen

    monkeypatch.setattr(scheduler, "schedule_window", counting)
    return calls


@pytest.mark.parametrize("case", list(CASES))
def test_the_block_path_chooses_as_the_per_node_path(case: str, monkeypatch) -> None:
    nodes, objects, faults = CASES[case]
    calls = _count_block_path(monkeypatch)
    fast_placed, fast_events = run(nodes, objects, faults, 200, monkeypatch)
    used = sum(calls)
    slow_placed, slow_events = run(nodes, objects, faults, 10**9, monkeypatch)
    assert used >= 300, f"the block path was used for {used} pods only"
    assert fast_placed == slow_placed
    assert fast_events == slow_events


def random_case(seed: int) -> tuple[list, list, list]:
    """A random cluster: 210-770 nodes in one to four zones (some without a zone), small or
    big, Deployments and bare pods of random sizes, random faults."""
    rng = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    zones = "abcd"[: rng.randint(1, 4)]
    for z in zones:
        nodes.append(
            {
                "generate": {
                    "count": rng.randint(210 // len(zones), 140 + 210 // len(zones)),
                    "namePrefix": f"{z}{rng.randint(1, 99)}-",
                    "zone": f"zone-{z}",
                    "capacity": {
                        "pods": str(rng.choice([6, 20, 110])),
                        "cpu": rng.choice(["2", "8"]),
                    },
                }
            }
        )
    if rng.random() < 0.5:
        nodes.append({"generate": {"count": rng.randint(1, 40), "namePrefix": "plain-"}})
    objects: list[dict[str, Any]] = [
        deployment(f"d{i}", rng.randint(20, 700), rng.choice(["", "10m", "100m", "300m"]))
        for i in range(rng.randint(1, 6))
    ]
    objects += [bare(f"p-{i}", rng.choice(["", "50m"])) for i in range(rng.randint(0, 60))]
    zone_names = [n["generate"]["zone"] for n in nodes if "zone" in n["generate"]]
    faults = [
        {"at": f"{rng.randint(5, 60)}s", "type": "ZoneOutage", "zone": rng.choice(zone_names)}
    ]
    return nodes, objects, faults


@pytest.mark.parametrize("seed", range(6))
def test_the_block_path_chooses_as_the_per_node_path_on_random_clusters(
    seed: int, monkeypatch
) -> None:
    nodes, objects, faults = random_case(seed)
    calls = _count_block_path(monkeypatch)
    fast_placed, fast_events = run(nodes, objects, faults, 200, monkeypatch)
    assert sum(calls) >= 100, f"the block path was used for {sum(calls)} pods only"
    slow_placed, slow_events = run(nodes, objects, faults, 10**9, monkeypatch)
    assert fast_placed == slow_placed
    assert fast_events == slow_events


def _fresh_equals(sched, base, idx, info) -> None:  # type: ignore[no-untyped-def]
    """``base`` and ``idx`` hold what indexes made from scratch now hold (the owner's groups'
    largest keys where they are made: a block and zone not marked to be made again)."""
    from controller.engine import schedwindow

    fresh = schedwindow.BaseIndex(sched, base.lay, info, base.nz)
    for field in ("keys", "g0", "qs", "ok", "badn", "cnt", "zn", "bad", "best", "infeasible"):
        assert getattr(base, field) == getattr(fresh, field), field
    if idx is None:
        return
    owner = schedwindow.OwnerIndex(fresh, idx.counts)
    for field in ("g", "ps", "zp", "maxc"):
        assert getattr(idx, field) == getattr(owner, field), field
    lay = base.lay
    for zg in lay.zgs:
        for j in range(lay.nb):
            if idx.dirty[zg][j]:
                continue
            owner.regroup(j, zg)
            for gi in range(zg, max(len(idx.best), len(owner.best)), lay.z1):
                mine = idx.best[gi][j] if gi < len(idx.best) else schedwindow.NEG
                made = owner.best[gi][j] if gi < len(owner.best) else schedwindow.NEG
                assert mine == made, (gi, j)


@pytest.mark.parametrize(
    "case",
    [
        "three zones, three deployments, a zone outage",
        "many deployments, one coming back with pods on most nodes",
        "small nodes fill up, then pods stay pending",
    ],
)
def test_an_index_kept_up_to_date_equals_one_made_from_scratch(case: str, monkeypatch) -> None:
    """Every index a window reads (a base and an owner's, made once per pass and brought up
    to date node by node after binds) holds what indexes made from scratch at that moment
    hold: every node's key, group and packed terms, and every block's feasible nodes, packed
    sums, largest count, each zone's largest key and each group's (where made)."""
    from controller.engine import schedwindow

    real_current = schedwindow.current
    checked = []

    def checking(sched, pod, info, nodes):  # type: ignore[no-untyped-def]
        got = real_current(sched, pod, info, nodes)
        if got is not None:
            _fresh_equals(sched, got[0], got[1], info)
            checked.append(got[1] is not None)
        return got

    monkeypatch.setattr(schedwindow, "current", checking)
    nodes, objects, faults = CASES[case]
    run(nodes, objects, faults, 200, monkeypatch)
    assert sum(checked) >= 300, f"only {sum(checked)} owner indexes were checked"
