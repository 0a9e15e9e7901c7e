"""kube-scheduler v1.18 (default profile) and the DaemonSet controller's node placement.

Expected values follow the Kubernetes source, not the simulator's output:
pkg/scheduler/core/generic_scheduler.go (numFeasibleNodesToFind, FitError.Error),
pkg/scheduler/framework/plugins (nodeunschedulable, noderesources fit / least_allocated /
balanced_allocation, nodeaffinity, tainttoleration, defaultpodtopologyspread),
pkg/scheduler/internal/cache/node_tree.go, and pkg/controller/daemon (nodeShouldRunDaemonPod,
failedPodsBackoff) with util.AddOrUpdateDaemonPodTolerations.

Where Kubernetes picks at random among equally scored nodes, the tests only check what every
such pick leads to (e.g. how many pods each zone gets), never which node won a tie.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from controller.engine.scheduler import (
    NodeTree,
    balanced_resource_score,
    fit_error_message,
    least_requested_score,
    num_feasible_nodes_to_find,
    selector_spread_scores,
    zone_interleaved,
)
from controller.engine.simulation import Simulation

from .conftest import events, simulate, times

DEDICATED = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
TOLERATE_DEDICATED = {
    "key": "dedicated",
    "operator": "Equal",
    "value": "db",
    "effect": "NoSchedule",
}


# -- scenario builders ---------------------------------------------------------------------------
def node(name: str, zone: str = "z", **capacity: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "zone": zone}
    if capacity:
        entry["capacity"] = capacity
    return entry


def pod_spec(
    requests: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    host_network: bool = False,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict[str, Any] = {"containers": [container]}
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    if host_network:
        spec["hostNetwork"] = True
    return spec


def pod(name: str, node_name: str = "", **kw: Any) -> dict[str, Any]:
    spec = pod_spec(**kw)
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def deployment(replicas: int, name: str = "web", **kw: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(**kw)},
        },
    }


def daemonset(name: str = "agent", **kw: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(**kw)},
        },
    }


def at(t: float, type_: str, **args: Any) -> dict[str, Any]:
    return {"at": f"{t}s", "type": type_, **args}


def taint(t: float, node_name: str, effect: str = "NoSchedule", **kv: str) -> dict[str, Any]:
    return at(t, "Taint", node=node_name, **{**DEDICATED, "effect": effect, **kv})


def run(
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]] | None = None,
    until_s: int = 30,
    **spec: Any,
) -> Simulation:
    doc = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "scheduler"},
        "spec": {
            "duration": f"{until_s}s",
            **spec,
            "nodes": nodes,
            "objects": objects,
            "faults": faults or [],
        },
    }
    return simulate(yaml.safe_dump(doc, sort_keys=False))


def pods_per_node(sim: Simulation, prefix: str = "default/web-") -> dict[str, int]:
    """Bound pods that are not being deleted, per node."""
    counts = Counter(
        p.node_name
        for p in sim.cluster.pods.values()
        if p.key.startswith(prefix) and p.node_name and p.deletion_ms is None
    )
    return dict(sorted(counts.items()))


# -- 3a. spreading (DefaultPodTopologySpread with the zone weighting) ------------------------------
@pytest.mark.parametrize(
    "nodes, replicas, by_zone",
    [
        pytest.param(
            [node("n-1"), node("n-2")],
            4,
            {"z": [2, 2]},
            id="one zone, 2 nodes, 4 replicas: 2 per node",
        ),
        pytest.param(
            [node("a-1", "zone-a"), node("a-2", "zone-a"), node("b-1", "zone-b")],
            2,
            {"zone-a": [1], "zone-b": [1]},
            id="zones a (2 nodes) and b (1 node), 2 replicas: one per zone",
        ),
        pytest.param(
            [node("a-1", "zone-a"), node("a-2", "zone-a"), node("b-1", "zone-b")],
            4,
            {"zone-a": [1, 1], "zone-b": [2]},
            id="zones a (2 nodes) and b (1 node), 4 replicas: 2 per zone, so b-1 doubles up",
        ),
        pytest.param(
            [node("a-1", "zone-a"), node("a-2", "zone-a"), node("b-1", "zone-b")],
            6,
            {"zone-a": [1, 2], "zone-b": [3]},
            id="zones a (2 nodes) and b (1 node), 6 replicas: the zone term (2/3) wins, 3 per zone",
        ),
        pytest.param(
            [node(f"a-{i}", "zone-a") for i in range(1, 4)]
            + [node(f"b-{i}", "zone-b") for i in range(1, 4)],
            6,
            {"zone-a": [1, 1, 1], "zone-b": [1, 1, 1]},
            id="2 zones of 3 nodes, 6 replicas: one per node",
        ),
    ],
)
def test_deployment_replicas_spread_over_zones_and_nodes(
    nodes: list[dict[str, Any]], replicas: int, by_zone: dict[str, list[int]]
) -> None:
    sim = run(nodes, [deployment(replicas)])
    zone_of = {n["name"]: n["zone"] for n in nodes}
    got: dict[str, list[int]] = {}
    for name, count in pods_per_node(sim).items():
        got.setdefault(zone_of[name], []).append(count)
    assert {z: sorted(c) for z, c in got.items()} == by_zone
    assert times(sim, "PodScheduled") == [0.0] * replicas


# -- 3b. filters that keep pods off nodes, and scoring that prefers some ---------------------------
@pytest.mark.parametrize(
    "faults, replicas, kw, expected",
    [
        pytest.param(
            [at(0, "Cordon", node="n-1"), taint(0, "n-2")],
            4,
            {},
            {"n-3": 4},
            id="cordoned n-1 and NoSchedule-tainted n-2 get nothing",
        ),
        pytest.param(
            [at(0, "Cordon", node="n-1"), taint(0, "n-2", "NoExecute")],
            4,
            {},
            {"n-3": 4},
            id="an untolerated NoExecute taint keeps pods off too",
        ),
        pytest.param(
            [at(0, "Cordon", node="n-1"), taint(0, "n-2")],
            4,
            {"tolerations": [TOLERATE_DEDICATED]},
            {"n-2": 2, "n-3": 2},
            id="a toleration for the taint opens n-2, the cordon still holds",
        ),
        pytest.param(
            [at(0, "Cordon", node="n-1"), taint(0, "n-2")],
            3,
            {"tolerations": [{"operator": "Exists"}]},
            {"n-1": 1, "n-2": 1, "n-3": 1},
            id="an empty-key Exists toleration tolerates the unschedulable taint: cordon ignored",
        ),
        pytest.param(
            [taint(0, "n-1", "PreferNoSchedule"), taint(0, "n-2", "PreferNoSchedule")],
            1,
            {},
            {"n-3": 1},
            id="PreferNoSchedule only scores lower: the one replica goes to untainted n-3",
        ),
        pytest.param(
            [at(0, "Cordon", node="n-1"), at(0, "Cordon", node="n-2"), at(0, "Cordon", node="n-3")],
            2,
            {},
            {},
            id="every node cordoned: nothing is bound",
        ),
    ],
)
def test_filters_and_taint_scores_choose_the_nodes(
    faults: list[dict[str, Any]], replicas: int, kw: dict[str, Any], expected: dict[str, int]
) -> None:
    sim = run([node("n-1"), node("n-2"), node("n-3")], [deployment(replicas, **kw)], faults)
    assert pods_per_node(sim) == expected


# -- 3c. a pod that fits nowhere: Pending, with the FitError message -------------------------------
@pytest.mark.parametrize(
    "nodes, objects, faults, message",
    [
        pytest.param(
            [node("n-1", cpu="1"), node("n-2", cpu="1"), node("n-3", cpu="1")],
            [pod("p", requests={"cpu": "2"})],
            [],
            "0/3 nodes are available: 3 Insufficient cpu.",
            id="every node short of cpu",
        ),
        pytest.param(
            [node("n-1", cpu="1", memory="1Gi")],
            [pod("p", requests={"cpu": "2", "memory": "2Gi"})],
            [],
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
            id="NodeResourcesFit names every insufficient resource of a node",
        ),
        pytest.param(
            [node("n-1", pods="1")],
            [pod("q", node_name="n-1"), pod("p")],
            [],
            "0/1 nodes are available: 1 Too many pods.",
            id="pod count: Too many pods",
        ),
        pytest.param(
            [node("n-1", memory="1Gi"), node("n-2", memory="1Gi")],
            [pod("p", requests={"memory": "2Gi"})],
            [at(0, "Cordon", node="n-1"), taint(0, "n-2")],
            "0/2 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable.",
            id="only the first failing filter counts: unschedulable, then resources, then taints",
        ),
        pytest.param(
            [node("n-1"), node("n-2"), node("n-3", memory="1Gi")],
            [pod("p", requests={"memory": "2Gi"})],
            [at(0, "Cordon", node="n-1"), taint(0, "n-2")],
            "0/3 nodes are available: 1 Insufficient memory, "
            "1 node(s) had taint {dedicated: db}, that the pod didn't tolerate, "
            "1 node(s) were unschedulable.",
            id="one reason per node, sorted as strings",
        ),
        pytest.param(
            [node("n-1"), node("n-2")],
            [pod("p", node_selector={"disktype": "ssd"})],
            [],
            "0/2 nodes are available: 2 node(s) didn't match node selector.",
            id="nodeSelector that no node matches",
        ),
        pytest.param(
            [
                {"generate": {"count": 10, "namePrefix": "c-", "unschedulable": True}},
                node("n-1", cpu="1"),
                node("n-2", cpu="1"),
            ],
            [pod("p", requests={"cpu": "2"})],
            [],
            "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu.",
            id="counts sorted as strings: '10 ...' before '2 ...'",
        ),
        pytest.param(
            [node("n-1", cpu="1")],
            [],
            [
                at(5, "AddNode", node={"name": "n-2", "zone": "z"}),
                at(6, "SetNodeNotReady", node="n-2"),
                at(30, "Apply", object=pod("p", requests={"cpu": "2"})),
            ],
            "0/2 nodes are available: 1 Insufficient cpu, "
            "1 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate.",
            id="a node whose kubelet reports NotReady carries the not-ready NoSchedule taint",
        ),
    ],
)
def test_unschedulable_pod_stays_pending_with_the_fit_error(
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]],
    message: str,
) -> None:
    sim = run(nodes, objects, faults)
    p = sim.cluster.pods["default/p"]
    assert (p.phase, p.node_name) == ("Pending", "")
    assert p.unschedulable_reason == message
    failed = events(sim, "K8sEvent", object="Pod/default/p", reason="FailedScheduling")
    assert [(e["message"], e["eventType"]) for e in failed] == [(message, "Warning")]
    created = times(sim, "PodCreated", pod="default/p")
    assert [e["t"] / 1000 for e in failed] == created
    assert events(sim, "PodScheduled", pod="default/p") == []


def test_a_node_whose_kubelet_never_posted_takes_pods_as_in_kubernetes() -> None:
    # doNoScheduleTaintingPass on the node's Add event: no conditions, so no condition taints,
    # and the admission-added not-ready:NoSchedule goes at once. The scheduler (no node
    # condition filter since TaintNodesByCondition) binds to it until it goes Unknown.
    sim = run(
        [node("n-1", cpu="1")],
        [],
        [
            at(5, "AddNode", node={"name": "n-2", "zone": "z"}, kubeletMode="Stopped"),
            at(5, "Apply", object=pod("p", requests={"cpu": "2"})),
        ],
    )
    p = sim.cluster.pods["default/p"]
    assert p.node_name == "n-2"
    assert times(sim, "PodScheduled", pod="default/p") == [5.0]


# -- 3d. resource accounting ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "existing, new, fits",
    [
        pytest.param(
            [{}] * 5, {"cpu": "1"}, True, id="BestEffort pods request no cpu: a full-cpu pod fits"
        ),
        pytest.param([{"cpu": "600m"}], {"cpu": "400m"}, True, id="600m + 400m = 1 cpu: fits"),
        pytest.param(
            [{"cpu": "600m"}], {"cpu": "401m"}, False, id="one millicore over: Insufficient cpu"
        ),
        pytest.param(
            [{"cpu": "300m"}, {"cpu": "300m"}],
            {"cpu": "401m"},
            False,
            id="requests of every pod on the node add up",
        ),
        pytest.param(
            [{"memory": "1Gi"}],
            {"cpu": "1"},
            True,
            id="a memory request does not use cpu",
        ),
    ],
)
def test_node_requests_are_summed_for_the_fit_check(
    existing: list[dict[str, str]], new: dict[str, str], fits: bool
) -> None:
    objects = [pod(f"e-{i}", node_name="n-1", requests=r) for i, r in enumerate(existing)]
    objects.append(pod("p", requests=new))
    sim = run([node("n-1", cpu="1")], objects)
    p = sim.cluster.pods["default/p"]
    if fits:
        assert (p.node_name, p.phase) == ("n-1", "Running")
    else:
        assert p.node_name == ""
        assert p.unschedulable_reason == "0/1 nodes are available: 1 Insufficient cpu."


def test_init_container_request_counts_when_larger_than_the_containers() -> None:
    """computePodResourceRequest: max(sum of containers, largest init container)."""
    p = pod("p", requests={"cpu": "100m"})
    p["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "500m"}}}]
    sim = run([node("n-1", cpu="1")], [pod("e", node_name="n-1", requests={"cpu": "600m"}), p])
    assert sim.cluster.pods["default/p"].unschedulable_reason == (
        "0/1 nodes are available: 1 Insufficient cpu."
    )


def test_a_terminating_pod_keeps_its_requests_until_it_is_removed() -> None:
    """2 replicas of 600m on a 1-cpu node: one runs, one is Pending. Deleting the running one
    at 10 s (grace 30 s) does not free its cpu: the scheduler's NodeInfo drops a pod when the
    object is removed, at 40 s; the replacement the ReplicaSet creates at 10 s waits too, and
    the pod that has waited longer goes first."""
    # Generated names are reproducible: a first run without the fault tells which pod is which.
    sim = run(
        [node("n-1", cpu="1")],
        [deployment(2, requests={"cpu": "600m"})],
        until_s=60,
    )
    running = next(p.key for p in sim.cluster.pods.values() if p.node_name)
    pending = next(p.key for p in sim.cluster.pods.values() if not p.node_name)
    sim = run(
        [node("n-1", cpu="1")],
        [deployment(2, requests={"cpu": "600m"})],
        [at(10, "DeletePod", pod=running)],
        until_s=60,
    )
    assert times(sim, "PodRemoved", pod=running) == [40.0]
    assert times(sim, "PodScheduled", pod=pending) == [40.0]
    replacement = [e["pod"] for e in events(sim, "PodCreated") if e["t"] == 10_000]
    assert len(replacement) == 1
    assert times(sim, "PodScheduled", pod=replacement[0]) == []
    assert sim.cluster.pods[replacement[0]].unschedulable_reason == (
        "0/1 nodes are available: 1 Insufficient cpu."
    )


# -- 3e. numFeasibleNodesToFind over the zone-interleaved node list ---------------------------------
BIG = {"cpu": "64", "memory": "256Gi"}


def test_only_the_first_100_feasible_nodes_are_scored_then_the_search_moves_on() -> None:
    """200 nodes in one zone: numFeasibleNodesToFind = max(200 * 49 / 100, 100) = 100. The first
    pod looks at n-001..n-100 and never sees the much larger n-150; the next search starts
    where that one stopped (nextStartNodeIndex = 100), sees n-101..n-200 and takes n-150; the
    third starts over at n-001 and avoids the node the first pod took."""
    nodes = [node(f"n-{i:03d}", **(BIG if i == 150 else {})) for i in range(1, 201)]
    sim = run(nodes, [pod("p1"), pod("p2"), pod("p3")], until_s=1)
    p1, p2, p3 = (sim.cluster.pods[f"default/{n}"].node_name for n in ("p1", "p2", "p3"))
    assert "n-001" <= p1 <= "n-100"
    assert p2 == "n-150"
    assert "n-001" <= p3 <= "n-100" and p3 != p1


def test_the_node_list_interleaves_zones_so_a_small_zone_is_searched_early() -> None:
    """zone-a has 150 nodes, zone-b 50 (b-050 much larger). The node tree hands out a-001,
    b-001, a-002, b-002, ...: the first 100 nodes searched are a-001..a-050 and all of zone-b,
    so the first pod finds b-050; the second searches a-051..a-150."""
    nodes = [node(f"a-{i:03d}", "zone-a") for i in range(1, 151)]
    nodes += [node(f"b-{i:03d}", "zone-b", **(BIG if i == 50 else {})) for i in range(1, 51)]
    sim = run(nodes, [pod("p1"), pod("p2")], until_s=1)
    assert sim.cluster.pods["default/p1"].node_name == "b-050"
    assert "a-051" <= sim.cluster.pods["default/p2"].node_name <= "a-150"


# -- 3f. the pure parts, against the Go functions ---------------------------------------------------
@pytest.mark.parametrize(
    "nodes, percentage, expected",
    [
        pytest.param(1, 0, 1, id="1 node: all"),
        pytest.param(99, 0, 99, id="under minFeasibleNodesToFind (100): all"),
        pytest.param(100, 0, 100, id="100 nodes: 50% is 50, raised to the minimum 100"),
        pytest.param(250, 0, 120, id="250 nodes: 50 - 250/125 = 48% = 120"),
        pytest.param(1_000, 0, 420, id="1,000 nodes: 42% = 420"),
        pytest.param(5_000, 0, 500, id="5,000 nodes: 10% = 500"),
        pytest.param(6_000, 0, 300, id="6,000 nodes: 50 - 48 = 2% raised to the 5% floor = 300"),
        pytest.param(20_000, 0, 1_000, id="20,000 nodes: 5% = 1,000"),
        pytest.param(1_000, 30, 300, id="percentageOfNodesToScore 30: 300"),
        pytest.param(1_000, 5, 100, id="percentageOfNodesToScore 5: 50, raised to 100"),
        pytest.param(1_000, 100, 1_000, id="percentageOfNodesToScore 100: all"),
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


def test_node_list_takes_one_node_from_each_zone_in_turn() -> None:
    """nodeTree.next: round robin over the zones, an exhausted zone skipped."""
    names = ["a-1", "a-2", "a-3", "b-1", "c-1", "c-2"]
    sim = run([node(n, "zone-" + n[0]) for n in names], [], until_s=1)
    assert [n.name for n in zone_interleaved(sim.sorted_nodes())] == [
        "a-1",
        "b-1",
        "c-1",
        "a-2",
        "c-2",
        "a-3",
    ]


@pytest.mark.parametrize(
    "counts, zones, expected",
    [
        pytest.param([0, 0, 0], ["", "", ""], [100, 100, 100], id="no matching pods: all 100"),
        pytest.param([2, 1, 0], ["", "", ""], [0, 50, 100], id="no zones: by node count only"),
        pytest.param(
            [1, 0, 0],
            ["a", "a", "b"],
            [0, 33, 100],
            id="zones: 1/3 node term + 2/3 zone term, truncated",
        ),
        pytest.param(
            [1, 1, 2],
            ["a", "a", "b"],
            [16, 16, 0],
            id="zone counts equal: only the node term",
        ),
        pytest.param(
            [1, 0],
            ["a", ""],
            [0, 100],
            id="a node without a zone among zoned ones: node term only, not weighted",
        ),
    ],
)
def test_selector_spread_normalized_scores(
    counts: list[int], zones: list[str], expected: list[int]
) -> None:
    assert selector_spread_scores(counts, zones) == expected


@pytest.mark.parametrize(
    "requested, capacity, expected",
    [
        pytest.param(0, 4000, 100, id="empty: 100"),
        pytest.param(1000, 4000, 75, id="a quarter used: 75"),
        pytest.param(1001, 3000, 66, id="integer division: 66.6 -> 66"),
        pytest.param(4000, 4000, 0, id="full: 0"),
        pytest.param(4001, 4000, 0, id="over capacity: 0"),
        pytest.param(1, 0, 0, id="no capacity: 0"),
    ],
)
def test_least_requested_score(requested: int, capacity: int, expected: int) -> None:
    assert least_requested_score(requested, capacity) == expected


@pytest.mark.parametrize(
    "cpu, mem, expected",
    [
        pytest.param((1000, 4000), (4, 16), 100, id="same fraction of each: 100"),
        pytest.param((2000, 4000), (4, 16), 75, id="cpu 50%, memory 25%: 75"),
        pytest.param((4000, 4000), (0, 16), 0, id="a resource at 100%: 0"),
        pytest.param((100, 0), (4, 16), 0, id="no cpu capacity counts as full: 0"),
    ],
)
def test_balanced_resource_score(cpu: tuple[int, int], mem: tuple[int, int], expected: int) -> None:
    assert balanced_resource_score(cpu[0], cpu[1], mem[0], mem[1]) == expected


def test_fit_error_message_sorts_count_and_reason_strings() -> None:
    reasons = {"node(s) were unschedulable": 10, "Insufficient cpu": 2, "Too many pods": 1}
    assert fit_error_message(13, reasons) == (
        "0/13 nodes are available: 1 Too many pods, 10 node(s) were unschedulable, "
        "2 Insufficient cpu."
    )


# -- 4. DaemonSet ------------------------------------------------------------------------------------
def daemon_nodes(sim: Simulation, name: str = "agent") -> dict[str, float]:
    """Node -> time the DaemonSet's pod there was bound, for pods that still run."""
    out = {}
    for e in events(sim, "PodScheduled"):
        p = sim.cluster.pods.get(e["pod"])
        if e["pod"].startswith(f"kube-system/{name}-") and p is not None and p.deletion_ms is None:
            out[e["node"]] = e["t"] / 1000
    return dict(sorted(out.items()))


NEW_NODE = {"name": "n-4", "zone": "z"}


@pytest.mark.parametrize(
    "kw, faults, expected",
    [
        pytest.param(
            {}, [], {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0}, id="one pod per node, bound at 0 s"
        ),
        pytest.param(
            {},
            [at(20, "AddNode", node=NEW_NODE)],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0, "n-4": 20.0},
            id="a node added at 20 s gets its pod at 20 s",
        ),
        pytest.param(
            {},
            [taint(0, "n-2")],
            {"n-1": 0.0, "n-3": 0.0},
            id="an untolerated NoSchedule taint: no pod there",
        ),
        pytest.param(
            {"tolerations": [TOLERATE_DEDICATED]},
            [taint(0, "n-2")],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0},
            id="a toleration in the template: pod there too",
        ),
        pytest.param(
            {},
            [at(0, "Cordon", node="n-2")],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0},
            id="a cordoned node gets its pod: the controller adds the unschedulable toleration",
        ),
        pytest.param(
            {},
            [taint(20, "n-2")],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0},
            id="a NoSchedule taint after the pod runs: it keeps running",
        ),
        pytest.param(
            {},
            [taint(20, "n-2", "NoExecute")],
            {"n-1": 0.0, "n-3": 0.0},
            id="a NoExecute taint after the pod runs: it is deleted and not replaced",
        ),
        pytest.param(
            {},
            [
                at(20, "AddNode", node=NEW_NODE),
                at(
                    20,
                    "SetNodeCondition",
                    node="n-4",
                    condition="NetworkUnavailable",
                    status="True",
                ),
            ],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0},
            id="network-unavailable:NoSchedule is not tolerated without hostNetwork",
        ),
        pytest.param(
            {"host_network": True},
            [
                at(20, "AddNode", node=NEW_NODE),
                at(
                    20,
                    "SetNodeCondition",
                    node="n-4",
                    condition="NetworkUnavailable",
                    status="True",
                ),
            ],
            {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0, "n-4": 20.0},
            id="a hostNetwork daemon pod tolerates network-unavailable",
        ),
        pytest.param(
            {"node_selector": {"kubernetes.io/hostname": "n-3"}},
            [],
            {"n-3": 0.0},
            id="a nodeSelector limits the nodes",
        ),
    ],
)
def test_daemonset_runs_one_pod_on_each_eligible_node(
    kw: dict[str, Any], faults: list[dict[str, Any]], expected: dict[str, float]
) -> None:
    sim = run([node("n-1"), node("n-2"), node("n-3")], [daemonset(**kw)], faults, until_s=40)
    assert daemon_nodes(sim) == expected
    pods = [p for p in sim.cluster.pods.values() if p.deletion_ms is None]
    assert sorted(p.node_name for p in pods) == sorted(expected)
    assert all(p.phase == "Running" and p.ready for p in pods)


def test_a_node_that_never_posted_gets_its_daemon_pod_which_never_starts() -> None:
    # The node's Add event runs doNoScheduleTaintingPass: no conditions, so the admission-added
    # not-ready:NoSchedule is removed at once and the DaemonSet binds its pod there. With no
    # kubelet the pod stays Pending on the node.
    sim = run(
        [node("n-1"), node("n-2"), node("n-3")],
        [daemonset()],
        [at(20, "AddNode", node=NEW_NODE, kubeletMode="Stopped")],
        until_s=40,
    )
    assert daemon_nodes(sim) == {"n-1": 0.0, "n-2": 0.0, "n-3": 0.0, "n-4": 20.0}
    (stuck,) = [p for p in sim.cluster.pods.values() if p.node_name == "n-4"]
    assert (stuck.phase, stuck.ready) == ("Pending", None)  # no kubelet set its Ready condition


@pytest.mark.parametrize(
    "hogs, bound, message",
    [
        pytest.param(
            {"n-2": "1"},
            ["n-1", "n-3"],
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match node selector.",
            id="its own node full: the others fail on the controller's required node affinity",
        ),
        pytest.param(
            {"n-1": "1", "n-2": "1", "n-3": "1"},
            [],
            "0/3 nodes are available: 3 Insufficient cpu.",
            id="every node full: NodeResourcesFit fails first, before NodeAffinity",
        ),
    ],
)
def test_daemon_pod_that_does_not_fit_its_node_stays_pending(
    hogs: dict[str, str], bound: list[str], message: str
) -> None:
    """v1.18 nodeShouldRunDaemonPod checks no resources: a pod is created for every node and
    the scheduler, held to that node by ReplaceDaemonSetPodNodeNameNodeAffinity, says why it
    cannot bind it."""
    objects = [pod(f"hog-{n}", node_name=n, requests={"cpu": c}) for n, c in hogs.items()]
    sim = run(
        [node("n-1", cpu="1"), node("n-2", cpu="1"), node("n-3", cpu="1")],
        [*objects, daemonset(requests={"cpu": "500m"})],
    )
    ds_pods = [p for p in sim.cluster.pods.values() if p.namespace == "kube-system"]
    assert len(ds_pods) == 3
    assert sorted(p.node_name for p in ds_pods if p.node_name) == bound
    pending = [p for p in ds_pods if not p.node_name]
    assert [p.unschedulable_reason for p in pending] == [message] * (3 - len(bound))


def test_daemonset_pod_is_deleted_when_a_noexecute_taint_arrives() -> None:
    sim = run([node("n-1"), node("n-2")], [daemonset()], [taint(20, "n-2", "NoExecute")])
    on_n2 = [e["pod"] for e in events(sim, "PodScheduled", node="n-2")]
    assert len(on_n2) == 1
    assert times(sim, "PodDeleted", pod=on_n2[0]) == [20.0]
    assert times(sim, "PodCreated") == [0.0, 0.0]


def test_daemonset_pods_get_the_daemon_tolerations() -> None:
    """AddOrUpdateDaemonPodTolerations: not-ready and unreachable NoExecute without
    tolerationSeconds (so DefaultTolerationSeconds adds nothing), and the pressure and
    unschedulable NoSchedule ones."""
    sim = run([node("n-1")], [daemonset()], until_s=1)
    (p,) = sim.cluster.pods.values()
    assert [t.to_dict() for t in p.tolerations] == [
        {"operator": "Exists", "key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
        {"operator": "Exists", "key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
        {"operator": "Exists", "key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"},
        {"operator": "Exists", "key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
        {"operator": "Exists", "key": "node.kubernetes.io/pid-pressure", "effect": "NoSchedule"},
        {"operator": "Exists", "key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
    ]


def test_failed_daemon_pods_are_replaced_with_exponential_backoff() -> None:
    """A node under DiskPressure: the daemon pod tolerates the disk-pressure taint, so it is
    bound, and the kubelet's eviction Admit rejects it at once (Failed, reason Evicted). The
    controller deletes a failed pod only out of failedPodsBackoff (1 s, doubling) and then
    creates its replacement: at 0 s, then as each backoff since the last deletion ends (it
    re-queues itself after the current backoff): 1, 3, 7, 15, 31, 63 s."""
    disk_full = node("n-1", **{"ephemeral-storage": "10Gi"}) | {
        "usage": {"ephemeral-storage": "9500Mi"}
    }
    sim = run([disk_full], [daemonset()], until_s=100)
    kills = [0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0]
    rejected = events(sim, "PodRejected")
    assert [(e["t"] / 1000, e["reason"]) for e in rejected] == [
        (t, "Evicted") for t in [0.0, *kills]
    ]
    failed = events(sim, "K8sEvent", object="DaemonSet/kube-system/agent", reason="FailedDaemonPod")
    assert [(e["t"] / 1000, e["eventType"]) for e in failed] == [(t, "Warning") for t in kills]
    deleted = events(sim, "PodDeleted")
    assert [e["t"] / 1000 for e in deleted] == kills
    assert {(e["by"], e["reason"]) for e in deleted} == {("DaemonSet/agent", "FailedDaemonPod")}
    assert [e["message"] for e in failed] == [
        f"Found failed daemon pod {e['pod']} on node n-1, will try to kill it" for e in deleted
    ]
    assert times(sim, "PodCreated") == [0.0, *kills]


def test_node_tree_keeps_the_order_nodes_were_added_not_their_names() -> None:
    """nodeTree.addNode appends: zones in the order their first node came, nodes in the order
    they came; removeNode drops an emptied zone, and a zone that comes back goes last."""
    names = [("b-10", "zone-b"), ("a-2", "zone-a"), ("b-9", "zone-b"), ("a-1", "zone-a")]
    sim = run([node(n, z) for n, z in names], [], until_s=1)
    assert [n.name for n in zone_interleaved(list(sim.cluster.nodes.values()))] == [
        "b-10",
        "a-2",
        "b-9",
        "a-1",
    ]
    tree = NodeTree()
    for n, z in names + [("c-1", "zone-c")]:
        tree.add(n, z)
    tree.remove("b-10")
    tree.remove("b-9")
    tree.add("b-1", "zone-b")
    assert tree.zones == ["zone-a", "zone-c", "zone-b"]
    assert tree.list() == ["a-2", "c-1", "b-1", "a-1"]


def _pod_info_pod(name: str, cpu: int = 100, seconds: int | None = 300, **kw: Any) -> Any:
    from controller.engine.objects import Container, Pod, Toleration

    tols = [
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", seconds),
        Toleration("dedicated", "Equal", "db", "NoSchedule"),
    ]
    return Pod(
        "default", name, name, 0, containers=[Container("c", {"cpu": cpu})], tolerations=tols, **kw
    )


def _fields(info: Any) -> tuple[object, ...]:
    """What the filters and scores read of a PodInfo (a toleration's seconds: eviction only)."""
    tols = [(t.key, t.operator, t.value, t.effect) for t in info.tolerations]
    return (
        tols,
        info.tolerates_unschedulable,
        info.cpu,
        info.memory,
        info.ephemeral,
        info.has_requests,
        info.node_selector,
        info.required_node,
        info.signature,
    )


@pytest.mark.parametrize(
    ("second", "shared"),
    [
        pytest.param({"seconds": 30}, True, id="another tolerationSeconds: the same info"),
        pytest.param({"cpu": 200}, False, id="another request: its own info"),
        pytest.param({"node_selector": {"disk": "ssd"}}, False, id="a node selector: its own"),
        pytest.param({"required": "n1"}, False, id="a required node: its own"),
    ],
)
def test_pod_info_remembered_per_signature_equals_one_made_afresh(
    second: dict[str, Any], shared: bool
) -> None:
    """PodInfo.of hands a pod the PodInfo of an earlier pod with its signature: every field
    the filters and scores read equals a PodInfo made afresh, even after the first pod's
    toleration list is changed in place (nothing in the engine does so now: Pod)."""
    from controller.engine import scheduler
    from controller.engine.objects import Toleration

    required = second.pop("required", "")
    first = _pod_info_pod("a")
    a = scheduler.PodInfo.of(first, "")
    first.tolerations.append(Toleration("extra", "Exists", "", "NoSchedule"))
    first.tolerations[1] = Toleration("other", "Exists", "", "NoSchedule")
    b = scheduler.PodInfo.of(_pod_info_pod("b", **second), required)
    assert (a is b) == shared
    scheduler._POD_INFOS.clear()
    afresh = scheduler.PodInfo.of(_pod_info_pod("b", **second), required)
    assert _fields(b) == _fields(afresh)
    assert afresh.tolerates_unschedulable is False and afresh.has_requests is True
