"""Deployment rollouts and ReplicaSet scaling, as kube-controller-manager v1.18 does them.

Expected values follow the Kubernetes source, not the simulator's output:
pkg/controller/deployment (rolling.go rolloutRolling / reconcileNewReplicaSet /
reconcileOldReplicaSets, recreate.go rolloutRecreate / oldPodsRunning, sync.go scale,
util/deployment_util.go NewRSNewReplicas / ResolveFenceposts / GetProportion) and
pkg/controller/replicaset/replica_set.go getPodsToDelete with controller_utils.go
ActivePodsWithRanks.

The simulated kubelet starts a pod and reports it Ready the instant it is bound, so each
controller sync sees the pods of the previous one Ready: a rollout with room for every pod
finishes inside the instant of the Apply, and a full node spaces it out by the termination
grace period of the pods it replaces (they keep their node's resources while Terminating).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from controller.engine.simulation import Simulation

from .conftest import events, simulate, times

SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand alphanums


# -- scenario builders ---------------------------------------------------------------------------
def node(name: str, **capacity: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "zone": "z"}
    if capacity:
        entry["capacity"] = capacity
    return entry


def workload(
    kind: str,
    replicas: int,
    image: str = "nginx:1.17",
    name: str = "web",
    strategy: dict[str, Any] | None = None,
    cpu: str | None = None,
    grace: int | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": image}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if grace is not None:
        pod_spec["terminationGracePeriodSeconds"] = grace
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
    }
    if strategy is not None:
        spec["strategy"] = strategy
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def deployment(replicas: int, **kw: Any) -> dict[str, Any]:
    return workload("Deployment", replicas, **kw)


def scale(at: float, replicas: int, ref: str = "Deployment/web") -> dict[str, Any]:
    return {"at": f"{at}s", "type": "ScaleWorkload", "workload": ref, "replicas": replicas}


def fault(at: float, type_: str, node_name: str) -> dict[str, Any]:
    return {"at": f"{at}s", "type": type_, "node": node_name}


def run(
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]],
    until_s: int = 120,
) -> Simulation:
    doc = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "rollout"},
        "spec": {"duration": f"{until_s}s", "nodes": nodes, "objects": objects, "faults": faults},
    }
    return simulate(yaml.safe_dump(doc, sort_keys=False))


# -- reading the outcome ---------------------------------------------------------------------------
def replica_set_names(sim: Simulation) -> list[str]:
    """The ReplicaSets, oldest first."""
    rss = [w for w in sim.workloads.workloads.values() if w.kind == "ReplicaSet"]
    return [w.name for w in sorted(rss, key=lambda w: (w.creation_ms, w.name))]


def replica_sets(sim: Simulation) -> tuple[str, str]:
    """(old, new) ReplicaSet names of a Deployment that has rolled out once."""
    names = replica_set_names(sim)
    assert len(names) == 2, names
    return names[0], names[1]


def scaling_events(sim: Simulation, **placeholders: str) -> list[tuple[float, str]]:
    """The Deployment's ScalingReplicaSet events (seconds, message), with ReplicaSet names
    replaced by placeholders: ``scaling_events(sim, OLD=old, NEW=new)``."""
    out = []
    for e in events(sim, "K8sEvent", object="Deployment/default/web", reason="ScalingReplicaSet"):
        message = e["message"]
        for placeholder, name in placeholders.items():
            message = message.replace(f" {name} ", f" {placeholder} ")
        out.append((e["t"] / 1000, message))
    return out


def up(rs: str, n: int) -> str:
    return f"Scaled up replica set {rs} to {n}"


def down(rs: str, n: int) -> str:
    return f"Scaled down replica set {rs} to {n}"


def pod_counts_after_each_event(sim: Simulation, from_s: float) -> list[tuple[int, int]]:
    """(active, available) pods of the Deployment after every timeline event from ``from_s``:
    active = created and not being deleted (what the ReplicaSets count), available = active
    and Ready (minReadySeconds 0)."""
    active: set[str] = set()
    ready: set[str] = set()
    out = []
    for e in sim.timeline.events:
        pod = e.get("pod", "")
        if not pod.startswith("default/web-"):
            continue
        if e["type"] == "PodCreated":
            active.add(pod)
        elif e["type"] == "PodDeleted":
            active.discard(pod)
        elif e["type"] == "PodReady":
            (ready.add if e["status"] == "True" else ready.discard)(pod)
        elif e["type"] == "PodRemoved":
            ready.discard(pod)
        else:
            continue
        if e["t"] >= from_s * 1000:
            out.append((len(active), len(active & ready)))
    return out


# -- 1. RollingUpdate ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "replicas, rolling, surge, unavailable, expected",
    [
        pytest.param(
            4,
            None,
            1,
            1,
            [
                up("NEW", 1),
                down("OLD", 3),
                up("NEW", 2),
                down("OLD", 1),
                up("NEW", 4),
                down("OLD", 0),
            ],
            id="defaults 25%/25% of 4: surge 1, unavailable 1",
        ),
        pytest.param(
            3,
            None,
            1,
            0,
            [
                up("NEW", 1),
                down("OLD", 2),
                up("NEW", 2),
                down("OLD", 1),
                up("NEW", 3),
                down("OLD", 0),
            ],
            id="defaults of 3: 25% surge rounds up to 1, 25% unavailable rounds down to 0",
        ),
        pytest.param(
            4,
            {"maxSurge": 1, "maxUnavailable": 0},
            1,
            0,
            [
                *(up("NEW", 1), down("OLD", 3), up("NEW", 2), down("OLD", 2)),
                *(up("NEW", 3), down("OLD", 1), up("NEW", 4), down("OLD", 0)),
            ],
            id="maxSurge 1, maxUnavailable 0: one new pod Ready before each old one goes",
        ),
        pytest.param(
            4,
            {"maxSurge": 0, "maxUnavailable": 1},
            0,
            1,
            [
                *(down("OLD", 3), up("NEW", 1), down("OLD", 2), up("NEW", 2)),
                *(down("OLD", 1), up("NEW", 3), down("OLD", 0), up("NEW", 4)),
            ],
            id="maxSurge 0, maxUnavailable 1: new ReplicaSet created with 0 replicas, old one goes first",
        ),
        pytest.param(
            4,
            {"maxSurge": "50%", "maxUnavailable": 0},
            2,
            0,
            [up("NEW", 2), down("OLD", 2), up("NEW", 4), down("OLD", 0)],
            id="maxSurge 50%: two at a time",
        ),
        pytest.param(
            4,
            {"maxSurge": 0, "maxUnavailable": "50%"},
            0,
            2,
            [down("OLD", 2), up("NEW", 2), down("OLD", 0), up("NEW", 4)],
            id="maxUnavailable 50%, no surge: half down, half up",
        ),
    ],
)
def test_rolling_update_steps_within_surge_and_unavailability(
    replicas: int,
    rolling: dict[str, Any] | None,
    surge: int,
    unavailable: int,
    expected: list[str],
) -> None:
    strategy = None if rolling is None else {"type": "RollingUpdate", "rollingUpdate": rolling}
    objects = [deployment(replicas, strategy=strategy)]
    new_template = deployment(replicas, strategy=strategy, image="nginx:1.18")
    sim = run(
        [node("n-1"), node("n-2")],
        objects,
        [{"at": "10s", "type": "Apply", "object": new_template}],
        until_s=60,
    )
    old, new = replica_sets(sim)
    # Every step happens at the Apply instant: each new pod is Ready when it is bound.
    assert scaling_events(sim, OLD=old, NEW=new) == [
        (0.0, up("OLD", replicas)),
        *((10.0, m) for m in expected),
    ]
    # Never more than replicas + maxSurge pods, never fewer than replicas - maxUnavailable
    # available, at any point of the rollout.
    counts = pod_counts_after_each_event(sim, 10)
    assert max(a for a, _ in counts) == replicas + surge
    assert min(r for _, r in counts) == replicas - unavailable
    # Done: the new ReplicaSet has every replica, the old one none; its pods are gone after
    # their 30 s grace period.
    ws = sim.workloads.workloads
    assert (ws[f"ReplicaSet/default/{new}"].replicas, ws[f"ReplicaSet/default/{old}"].replicas) == (
        replicas,
        0,
    )
    pods = sorted(p.name for p in sim.cluster.pods.values())
    assert len(pods) == replicas and all(p.startswith(new + "-") for p in pods)
    assert times(sim, "PodRemoved") == [40.0] * replicas


@pytest.mark.parametrize(
    "grace, step, done",
    [
        pytest.param(30, 40.0, 70.0, id="grace 30 s: steps at 10, 40 and 70 s"),
        pytest.param(5, 15.0, 20.0, id="grace 5 s: steps at 10, 15 and 20 s"),
    ],
)
def test_rolling_update_on_a_full_node_waits_for_terminating_pods(
    grace: int, step: float, done: float
) -> None:
    """One node with room for 5 pods, 4 replicas, defaults (surge 1, unavailable 1). A deleted
    old pod keeps its slot until its grace period ends, so new pods wait Pending for it.

    t=10: new RS to 1 (4+1 = 5 allowed), old to 3 (4 available > 3); the new pod takes the free
    slot and is Ready; new RS to 2 (3+1 < 5); its pod finds no slot; old to 2 (3+1 available
    > 3); new RS to 3 (2+2 < 5), whose pod is Pending too: 3 available = 4 - maxUnavailable.
    t=step: the two old pods are gone, the two Pending new pods run: old to 0 (2+3 available,
    2 over 3), new RS to 4; its pod waits for the two old pods now Terminating.
    t=done: the last new pod runs."""
    sim = run(
        [node("n-1", pods="5")],
        [deployment(4, grace=grace)],
        [{"at": "10s", "type": "Apply", "object": deployment(4, grace=grace, image="nginx:1.18")}],
        until_s=100,
    )
    old, new = replica_sets(sim)
    assert scaling_events(sim, OLD=old, NEW=new) == [
        (0.0, up("OLD", 4)),
        (10.0, up("NEW", 1)),
        (10.0, down("OLD", 3)),
        (10.0, up("NEW", 2)),
        (10.0, down("OLD", 2)),
        (10.0, up("NEW", 3)),
        (step, down("OLD", 0)),
        (step, up("NEW", 4)),
    ]
    new_pods = [e["pod"] for e in events(sim, "PodCreated") if e["owner"] == f"ReplicaSet/{new}"]
    assert [times(sim, "PodScheduled", pod=p) for p in new_pods] == [
        [10.0],
        [step],
        [step],
        [done],
    ]
    assert times(sim, "PodRemoved") == [step] * 2 + [done] * 2
    counts = pod_counts_after_each_event(sim, 10)
    assert max(a for a, _ in counts) <= 5
    assert min(r for _, r in counts) == 3
    series = sim.workloads.series()["workloads"]["Deployment/default/web"]
    assert [(p["t"] / 1000, p["ready"]) for p in series] == [(0.0, 4), (10.0, 3), (done, 4)]


def test_rolling_update_cleans_up_unhealthy_old_pods_first() -> None:
    """4 replicas, 2 on each node; n-1's kubelet stops at 1 s, so at 45 s its two pods are
    NotReady (old RS: 4 replicas, 2 available). Apply at 60 s, defaults (surge 1, unavailable 1,
    so 3 must stay available):
    new RS to 1 (4 + 1 = 5 allowed); 5 - 3 - 1 unavailable new = 1 to scale down, taken by
    cleanupUnhealthyReplicas (old 4 -> 3). The new pod is Ready on n-2: new RS to 2 (3 + 2 = 5).
    Both Ready: 5 - 3 - 0 = 2 to scale down: cleanup takes the last unhealthy one (old -> 2),
    then scaleDownOldReplicaSetsForRollingUpdate one more (2 + 2 available, 1 over 3: old -> 1).
    New RS to 4, then old to 0. The old ReplicaSet deletes its NotReady pods first."""
    sim = run(
        [node("n-1"), node("n-2")],
        [deployment(4)],
        [
            fault(1, "StopKubelet", "n-1"),
            {"at": "60s", "type": "Apply", "object": deployment(4, image="nginx:1.18")},
        ],
        until_s=70,
    )
    old, new = replica_sets(sim)
    assert times(sim, "PodReady", status="False") == [45.0, 45.0]
    assert scaling_events(sim, OLD=old, NEW=new) == [
        (0.0, up("OLD", 4)),
        *(
            (60.0, m)
            for m in [
                up("NEW", 1),
                down("OLD", 3),
                up("NEW", 2),
                down("OLD", 2),
                down("OLD", 1),
                up("NEW", 4),
                down("OLD", 0),
            ]
        ),
    ]
    old_deleted = [
        e["node"] for e in events(sim, "PodDeleted") if e["pod"].startswith(f"default/{old}-")
    ]
    assert old_deleted == ["n-1", "n-1", "n-2", "n-2"]
    # n-1 is tainted unreachable:NoSchedule: every new pod runs on n-2.
    assert {e["node"] for e in events(sim, "PodScheduled") if e["t"] >= 60_000} == {"n-2"}


# -- 1b. Recreate ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "grace, faults, new_at",
    [
        pytest.param(
            30,
            [],
            40.0,
            id="grace 30 s: new pods at 40 s, when the old ones are gone",
        ),
        pytest.param(5, [], 15.0, id="grace 5 s: new pods at 15 s"),
        pytest.param(
            30,
            [fault(5, "StopKubelet", "n-1")],
            None,
            id="an old pod stuck Terminating on a dead kubelet holds the new ReplicaSet back",
        ),
    ],
)
def test_recreate_deletes_every_old_pod_before_creating_new_ones(
    grace: int, faults: list[dict[str, Any]], new_at: float | None
) -> None:
    strategy = {"type": "Recreate"}
    sim = run(
        [node("n-1"), node("n-2")],
        [deployment(3, strategy=strategy, grace=grace)],
        [
            *faults,
            {
                "at": "10s",
                "type": "Apply",
                "object": deployment(3, strategy=strategy, grace=grace, image="nginx:1.18"),
            },
        ],
        until_s=120,
    )
    rss = replica_set_names(sim)
    old = rss[0]
    assert times(sim, "PodDeleted") == [10.0] * 3
    if new_at is None:
        # oldPodsRunning: the pod on n-1 stays Terminating, so no new ReplicaSet is created.
        assert len(rss) == 1
        assert scaling_events(sim, OLD=old) == [(0.0, up("OLD", 3)), (10.0, down("OLD", 0))]
        assert times(sim, "PodCreated") == [0.0] * 3
        return
    new = rss[1]
    assert scaling_events(sim, OLD=old, NEW=new) == [
        (0.0, up("OLD", 3)),
        (10.0, down("OLD", 0)),
        (new_at, up("NEW", 3)),
    ]
    assert times(sim, "PodRemoved") == [new_at] * 3
    created = [e for e in events(sim, "PodCreated") if e["t"] > 0]
    assert [e["t"] / 1000 for e in created] == [new_at] * 3
    # In the timeline, the last old pod is gone before the first new pod is created.
    order = sim.timeline.events
    last_removed = max(i for i, e in enumerate(order) if e["type"] == "PodRemoved")
    first_new = min(i for i, e in enumerate(order) if e["type"] == "PodCreated" and e["t"] > 0)
    assert last_removed < first_new


# -- 1c. proportional scaling in the middle of a rollout -----------------------------------------
def test_scaling_a_stuck_rollout_spreads_new_replicas_proportionally() -> None:
    """10 replicas, defaults (surge 3, unavailable 2); the new template asks for more memory
    than any node has, so its pods stay Pending and the rollout stops at old 8, new 5 (13 =
    10 + surge; 13 - 8 - 5 unavailable = 0 to scale down). Scaling to 15 at 20 s is a scaling
    event: 19 (15 + surge 4) allowed, 6 to add; old gets round(8 * 19 / 13) - 8 = 4, new gets
    round(5 * 19 / 13) - 5 = 2, the larger ReplicaSet first (ReplicaSetsBySizeNewer)."""
    big = deployment(10, image="nginx:1.18")
    big["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1Ti"}}
    sim = run(
        [node("n-1"), node("n-2")],
        [deployment(10)],
        [{"at": "10s", "type": "Apply", "object": big}, scale(20, 15)],
        until_s=30,
    )
    old, new = replica_sets(sim)
    assert scaling_events(sim, OLD=old, NEW=new) == [
        (0.0, up("OLD", 10)),
        (10.0, up("NEW", 3)),
        (10.0, down("OLD", 8)),
        (10.0, up("NEW", 5)),
        (20.0, up("OLD", 12)),
        (20.0, up("NEW", 7)),
    ]
    ws = sim.workloads.workloads
    assert (ws[f"ReplicaSet/default/{old}"].replicas, ws[f"ReplicaSet/default/{new}"].replicas) == (
        12,
        7,
    )
    assert len([p for p in sim.cluster.pods.values() if p.deletion_ms is None]) == 19


# -- 2. ScaleWorkload: which pods go, and the names of new ones ----------------------------------
def deleted_pods(sim: Simulation) -> list[tuple[str, float]]:
    """(node, creation time) of each pod a ReplicaSet deleted, sorted."""
    out = []
    for e in events(sim, "PodDeleted"):
        if e["by"].startswith("ReplicaSet/"):
            out.append((e["node"], times(sim, "PodCreated", pod=e["pod"])[0]))
    return sorted(out)


SCALE_DOWN = [
    pytest.param(
        [node("n-1", cpu="1")],
        [deployment(3, cpu="400m")],
        [scale(10, 2)],
        [("", 0.0)],
        id="an unscheduled pod goes before Running ones created at the same time",
    ),
    pytest.param(
        [node("n-1"), node("n-2"), node("n-3")],
        [deployment(1)],
        [
            fault(1, "StopKubelet", "n-2"),
            fault(1, "Cordon", "n-1"),
            fault(1, "Cordon", "n-3"),
            scale(2, 2),  # bound to n-2, whose kubelet never starts it: Pending
            fault(3, "Uncordon", "n-3"),
            fault(3, "Cordon", "n-2"),
            scale(3, 3),  # Running and Ready on n-3 at 3 s
            scale(5, 2),
        ],
        [("n-2", 2.0)],
        id="a bound Pending pod goes before Running ones, even one Ready more recently",
    ),
    pytest.param(
        [node("n-1"), node("n-2"), node("n-3")],
        [deployment(1)],
        [fault(1, "StopKubelet", "n-1"), scale(1, 3), scale(60, 2)],
        [("n-1", 0.0)],
        id="a NotReady pod (node Unknown, MarkPodsNotReady) goes before Ready ones, even newer",
    ),
    pytest.param(
        [node("n-1"), node("n-2")],
        [deployment(2)],
        [fault(0, "Cordon", "n-2"), fault(10, "Uncordon", "n-2"), scale(10, 3), scale(20, 2)],
        [("n-1", 0.0)],
        id="a pod doubled up on a node goes before a lone pod Ready more recently",
    ),
    pytest.param(
        [node("n-1"), node("n-2")],
        [deployment(3)],
        [
            fault(0, "Cordon", "n-2"),
            fault(10, "Uncordon", "n-2"),
            fault(10, "Cordon", "n-1"),
            scale(10, 5),
            scale(20, 2),
        ],
        [("n-1", 0.0)] * 3,
        id="v1.18 ranks by node: 3 on n-1 and 2 on n-2, scaled to 2, all three on n-1 go",
    ),
    pytest.param(
        [node("n-1"), node("n-2")],
        [deployment(1)],
        [
            fault(0, "StopKubelet", "n-1"),
            scale(10, 2),
            fault(20, "StartKubelet", "n-1"),
            scale(30, 1),
        ],
        [("n-1", 0.0)],
        id="same rank: the pod Ready most recently goes, though it is the oldest",
    ),
    pytest.param(
        [node("n-1", cpu="1")],
        [deployment(1, cpu="600m")],
        [scale(10, 2), scale(20, 3), scale(30, 2)],
        [("", 20.0)],
        id="two unscheduled pods: the newer goes",
    ),
    pytest.param(
        [node("n-1"), node("n-2"), node("n-3")],
        [deployment(3)],
        [scale(10, 0)],
        [("n-1", 0.0), ("n-2", 0.0), ("n-3", 0.0)],
        id="to 0: every pod goes",
    ),
]


@pytest.mark.parametrize("nodes, objects, faults, expected", SCALE_DOWN)
def test_scale_down_deletes_pods_in_get_pods_to_delete_order(
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]],
    expected: list[tuple[str, float]],
) -> None:
    """The last fault is the scale-down; ``expected`` lists (node, creation time) of the pods
    the ReplicaSet deletes then ("" = not scheduled)."""
    last = faults[-1]
    at = float(last["at"].rstrip("s"))
    sim = run(nodes, objects, faults, until_s=int(at) + 10)
    assert deleted_pods(sim) == expected
    assert set(times(sim, "PodDeleted")) == {at}
    active = [p for p in sim.cluster.pods.values() if p.deletion_ms is None]
    assert len(active) == last["replicas"]


def test_bare_replica_set_scale_down_has_no_doubled_up_preference() -> None:
    """A ReplicaSet with no owner: getIndirectlyRelatedPods finds no related pods, so all ranks
    are 0 and rule 5 (Ready most recently goes first) decides: the lone pod on n-2, Ready at
    10 s, goes, not one of the two on n-1 (Ready at 0 s)."""
    sim = run(
        [node("n-1"), node("n-2")],
        [workload("ReplicaSet", 2)],
        [
            fault(0, "Cordon", "n-2"),
            fault(10, "Uncordon", "n-2"),
            scale(10, 3, "ReplicaSet/web"),
            scale(20, 2, "ReplicaSet/web"),
        ],
        until_s=30,
    )
    assert deleted_pods(sim) == [("n-2", 10.0)]


def test_scale_up_names_pods_after_the_replica_set_and_its_template_hash() -> None:
    sim = run([node("n-1"), node("n-2")], [deployment(2)], [scale(10, 5)], until_s=20)
    (rs,) = replica_set_names(sim)
    # <deployment>-<pod-template-hash>: ComputeHash, decimal FNV-32a safe-encoded (<= 10 chars)
    m = re.fullmatch(f"web-([{SAFE}]{{1,10}})", rs)
    assert m is not None, rs
    template_hash = m.group(1)
    assert scaling_events(sim) == [(0.0, up(rs, 2)), (10.0, up(rs, 5))]
    created = events(sim, "PodCreated")
    assert [e["t"] / 1000 for e in created] == [0.0] * 2 + [10.0] * 3
    names = [e["pod"].split("/", 1)[1] for e in created]
    # generateName "<rs>-" completed with 5 random safe characters by the API server
    assert all(re.fullmatch(f"{rs}-[{SAFE}]{{5}}", n) for n in names), names
    assert len(set(names)) == 5
    assert all(e["owner"] == f"ReplicaSet/{rs}" for e in created)
    assert {p.labels.get("pod-template-hash") for p in sim.cluster.pods.values()} == {template_hash}
    created_msgs = [e["message"] for e in events(sim, "K8sEvent", reason="SuccessfulCreate")]
    assert created_msgs == [f"Created pod: {n}" for n in names]
