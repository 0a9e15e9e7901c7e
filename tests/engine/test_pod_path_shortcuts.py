"""The t=0 pod path's shortcuts (issue #27) against the straightforward path they stand for,
on seeded random clusters of workloads big enough for ReplicaSet bursts of 500: the same
timeline byte for byte, the same cluster state, the same scheduler queue (order and queue
sequence numbers) and version, and the same generated names.

Covered: WorkloadControllers._create_replicas (manageReplicas' burst of creates, with the
admission, the names and the scheduler's wake shared by the burst); KubeScheduler._queue_order
(the scheduling pass's sort of its queue); the ReplicaSet sync's and the kubelet admission
index's predicates read inline run in every comparison above and in test_shortcuts.py."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from controller.engine.objects import Pod
from controller.engine.scenario import parse_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import cluster_state
from controller.engine.timeline import to_json
from controller.engine.workloads import controllers, count_cluster

SEEDS = range(12)


def _template(app: str, rng: random.Random, nodes: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "resources": {"requests": {"cpu": rng.choice(["10m", "50m", "300m"])}},
            }
        ]
    }
    if rng.random() < 0.3:
        spec["tolerations"] = [
            {
                "key": rng.choice(["node.kubernetes.io/unreachable", "dedicated"]),
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": rng.choice([0, 30]),
            }
        ]
    if rng.random() < 0.2:
        spec["nodeName"] = rng.choice(nodes)  # bound by the template: the straightforward loop
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def burst_scenario(seed: int) -> dict[str, Any]:
    """Nodes of a few sizes, Deployments and bare ReplicaSets of up to 1,200 replicas (some
    pods do not fit and wait), bound pods, and scale changes, node failures and deletions."""
    rng = random.Random(seed)
    nodes = [f"n-{i}" for i in range(1, rng.randint(2, 7))]
    objects: list[dict[str, Any]] = []
    workloads, bound = [], set()
    for i in range(rng.randint(1, 3)):
        kind = rng.choice(["Deployment", "ReplicaSet"])
        name = f"w{i}"
        workloads.append(f"{kind}/{name}")
        template = _template(name, rng, nodes)
        if "nodeName" in template["spec"]:
            bound.add(f"{kind}/{name}")
        # (pods bound by their template: few, or the kubelet's rejections and the controller's
        # new pods take turns all through the run)
        replicas = rng.choice(
            [3, 20] if "nodeName" in template["spec"] else [0, 3, 499, 500, 501, 1000, 1200]
        )
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": kind,
                "metadata": {"name": name, "namespace": rng.choice(["default", "team"])},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": name}},
                    "template": template,
                },
            }
        )
    for i in range(rng.randint(0, 5)):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p-{i}", "namespace": "default"},
                "spec": {"nodeName": rng.choice(nodes), "containers": [{"name": "c"}]},
            }
        )
    faults: list[dict[str, Any]] = []
    targets = list(nodes)  # one node fault per node (none names a node deleted before it)
    for _ in range(rng.randint(0, 6)):
        at = f"{rng.randrange(0, 50)}s"
        kind = rng.choice(["ScaleWorkload", "StopKubelet", "DeleteNode", "PowerOffNode"])
        if kind == "ScaleWorkload":
            workload = rng.choice(workloads)
            faults.append(
                {
                    "at": at,
                    "type": kind,
                    "workload": workload,
                    "replicas": rng.choice([0, 10] if workload in bound else [0, 10, 600, 1100]),
                }
            )
        elif targets:
            faults.append(
                {"at": at, "type": kind, "node": targets.pop(rng.randrange(len(targets)))}
            )
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"burst-{seed}"},
        "spec": {
            "duration": "60s",
            "nodes": [
                {
                    "name": n,
                    "zone": rng.choice(["a", "b"]),
                    "capacity": {
                        "cpu": rng.choice(["2", "64"]),
                        "pods": rng.choice(["110", "1500"]),
                    },
                }
                for n in nodes
            ],
            "objects": objects,
            "faults": faults,
        },
    }


def run(seed: int, shortcuts: bool) -> dict[str, Any]:
    sim = Simulation(parse_scenario(burst_scenario(seed)))
    sim.shortcuts = shortcuts
    sim.apply_fault = lambda fault: sim.apply_action(fault, 0)  # type: ignore[method-assign]
    out: dict[str, Any] = {"states": []}
    for t in (0, 20_000):
        sim.run(t)
        # the kept pod and node counts (WorkloadControllers.on_pod_changed) are the counted ones
        assert sim.workloads.cluster_metrics() == count_cluster(sim)
        ks = sim.kube_scheduler
        out["states"].append(
            (
                json.dumps(cluster_state(sim), sort_keys=True),
                [(seq, key) for key, (seq, _pod) in ks.queue.items()],
                ks._version,
                {k: w.names_generated for k, w in sim.workloads.workloads.items()},
            )
        )
    sim.run(sim.scenario.duration_ms)
    out["timeline"] = [to_json(e) for e in sim.timeline.events]
    assert sim.workloads.cluster_metrics() == count_cluster(sim)
    out["series"] = sim.workloads.series()
    out["names"] = sum(w.names_generated for w in sim.workloads.workloads.values())
    return out


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_the_create_burst_gives_what_creating_pod_by_pod_gives(seed: int) -> None:
    assert run(seed, True) == run(seed, False)


@pytest.mark.parametrize("seed", SEEDS[:4], ids=lambda s: f"seed {s}")
def test_the_create_burst_skips_generated_names_taken_as_the_straightforward_loop_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Suffixes of 3 characters (19,683 names): a burst of 500 meets names taken by pods made
    before it and by pods of the same burst, and both paths skip the same ones."""
    real = controllers.random_suffix
    monkeypatch.setattr(controllers, "random_suffix", lambda seed, n=5: real(seed, n)[:3])
    on, off = run(seed, True), run(seed, False)
    assert on == off
    made = sum(1 for line in on["timeline"] if '"owner":"ReplicaSet/' in line)
    assert on["names"] > made  # some names were taken and generated again


def test_the_random_bursts_reach_both_paths() -> None:
    """The seeds make bursts of 500 and bursts of pods bound by their template."""
    sizes, bound = set(), False
    for seed in SEEDS:
        doc = burst_scenario(seed)
        for o in doc["spec"]["objects"]:
            if o["kind"] != "Pod":
                sizes.add(o["spec"]["replicas"])
                bound |= "nodeName" in o["spec"]["template"]["spec"]
    assert {500, 1000, 1200} <= sizes and bound


@pytest.mark.parametrize("seed", range(30), ids=lambda s: f"seed {s}")
def test_the_queue_order_is_the_priority_then_queue_order_sort(seed: int) -> None:
    """KubeScheduler._queue_order (PrioritySort's less: higher priority, then the earlier
    queue entry) against sorting by (-priority, seq) at once; the queue dict's own order is
    not the seq order (a re-queued pod keeps its place with a new seq)."""
    rng = random.Random(seed)
    sim = Simulation(parse_scenario(burst_scenario(0)))
    ks = sim.kube_scheduler
    priorities = rng.choice([[0], [5], [0, 0, 0, 1000], [-3, 0, 7, 2_000_000_000]])
    pods = []
    for i in range(rng.randint(0, 60)):
        pod = Pod("default", f"p-{i}", f"uid-{i}", 0)
        pod.priority = rng.choice(priorities)
        pods.append(pod)
    seqs = rng.sample(range(1, 1000), len(pods))
    ks.queue = {p.key: (seq, p) for p, seq in zip(pods, seqs)}
    expected = sorted(ks.queue.values(), key=lambda e: (-e[1].priority, e[0]))
    assert ks._queue_order() == expected
