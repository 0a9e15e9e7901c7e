"""Workloads and the scheduler: evicted pods come back elsewhere, as in a real cluster."""

from __future__ import annotations

import pytest

from .conftest import events, simulate, times

NODES = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: w}
spec:
  duration: %(duration)s
  nodes:
    - {name: n-1, zone: z}
    - {name: n-2, zone: z}
    - {name: n-3, zone: z, capacity: {memory: 1Gi}}
  objects:
%(objects)s
  faults: %(faults)s
"""

DEPLOY = """
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 6
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            %(tolerations)s
            containers: [{name: web, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"""


def deployment(tolerations: str = "") -> str:
    return DEPLOY % {"tolerations": tolerations or "terminationGracePeriodSeconds: 30"}


def run(objects: str, faults: str = "[]", duration: str = "600s"):
    return simulate(NODES % {"objects": objects, "faults": faults, "duration": duration})


def desired_ready(sim, ref: str) -> list[tuple[float, int, int]]:
    points = sim.workloads.series()["workloads"][ref]
    return [(p["t"] / 1000, p["desired"], p["ready"]) for p in points]


@pytest.mark.parametrize(
    "tolerations, deleted_at",
    [
        pytest.param(
            "", 450.0, id="default 300 s toleration: unreachable NoExecute at 150 s + 300 s"
        ),
        pytest.param(
            "tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}]",
            170.0,
            id="tolerationSeconds 20: recreated at 170 s",
        ),
    ],
)
def test_deployment_pods_recreated_on_healthy_nodes(tolerations: str, deleted_at: float) -> None:
    sim = run(deployment(tolerations), "[{at: 105s, type: StopKubelet, node: n-1}]")
    on_dead = [e["pod"] for e in events(sim, "PodScheduled", node="n-1")]
    assert on_dead, "some replicas started on n-1"
    assert [times(sim, "PodDeleted", pod=p) for p in on_dead] == [[deleted_at]] * len(on_dead)
    replacements = [e for e in events(sim, "PodScheduled") if e["t"] == deleted_at * 1000]
    assert len(replacements) == len(on_dead)
    assert all(e["node"] != "n-1" for e in replacements)
    series = desired_ready(sim, "Deployment/default/web")
    assert series[-1][1:] == (6, 6)
    # The dip: NotReady from 145 s (MarkPodsNotReady) until the replacements are Ready.
    assert (145.0, 6, 6 - len(on_dead)) in series


def test_daemonset_pod_stays_and_statefulset_replacement_waits_for_removal() -> None:
    objects = """
    - apiVersion: apps/v1
      kind: DaemonSet
      metadata: {name: agent, namespace: kube-system}
      spec:
        selector: {matchLabels: {app: agent}}
        template:
          metadata: {labels: {app: agent}}
          spec: {containers: [{name: agent}]}
    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db, namespace: default}
      spec:
        replicas: 1
        selector: {matchLabels: {app: db}}
        template:
          metadata: {labels: {app: db}}
          spec:
            nodeSelector: {kubernetes.io/hostname: n-1}
            containers: [{name: db}]
"""
    sim = run(
        objects,
        "[{at: 105s, type: StopKubelet, node: n-1}, {at: 600s, type: StartKubelet, node: n-1}]",
        "700s",
    )
    agent_on_n1 = [
        e["pod"]
        for e in events(sim, "PodScheduled", node="n-1")
        if e["pod"].startswith("kube-system/agent-")
    ]
    assert len(agent_on_n1) == 1
    assert events(sim, "PodDeleted", pod=agent_on_n1[0]) == []
    # db-0 is deleted by the taint manager at 450 s but stays Terminating while n-1 is silent;
    # no replacement db-0 appears until the kubelet confirms the deletion.
    assert times(sim, "PodDeleted", pod="default/db-0") == [450.0]
    assert times(sim, "PodCreated", pod="default/db-0") == [0.0, 630.0]
    # The kubelet returns at 600 s, kills db-0 over its 30 s grace period, then it is removed.
    assert times(sim, "PodRemoved", pod="default/db-0") == [630.0]


def test_scheduler_keeps_pods_off_bad_nodes_and_explains_pending() -> None:
    objects = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: big, namespace: default}
      spec: {containers: [{name: big, resources: {requests: {memory: 20Gi}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: small, namespace: default}
      spec: {containers: [{name: small, resources: {requests: {memory: 64Mi}}}]}
"""
    sim = run(objects, "[{at: 0s, type: Cordon, node: n-2}]", "30s")
    big = sim.cluster.pods["default/big"]
    assert big.phase == "Pending" and not big.node_name
    assert (
        big.unschedulable_reason
        == "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory."
    )
    # n-3 has the most room for cpu; memory 1Gi vs 16Gi makes n-1 the least requested.
    assert sim.cluster.pods["default/small"].node_name == "n-1"


def test_pending_pod_explains_every_node_then_schedules_when_one_frees_up() -> None:
    objects = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: late, namespace: default}
      spec: {containers: [{name: late, resources: {requests: {memory: 2Gi}}}]}
"""
    faults = """[{at: 0s, type: Cordon, node: n-1}, {at: 0s, type: Cordon, node: n-2},
                 {at: 100s, type: Uncordon, node: n-1}]"""
    sim = simulate(
        (NODES % {"objects": objects, "faults": "[]", "duration": "120s"})
        .replace("  objects:", "  objects:", 1)
        .replace("  faults: []", "  faults: " + faults)
    )
    reasons = [
        e["message"]
        for e in events(sim, "K8sEvent", object="Pod/default/late", reason="FailedScheduling")
    ]
    assert (
        reasons[0]
        == "0/3 nodes are available: 1 Insufficient memory, 2 node(s) were unschedulable."
    )
    assert times(sim, "PodScheduled", pod="default/late") == [100.0]


def test_set_usage_on_one_replica_leaves_its_siblings_and_template_alone() -> None:
    """A workload's pods share its template's usage, tolerations, labels and containers
    (_new_pod): a SetUsage replaces the pod's usage whole, so only that pod's changes, and
    the admission plugin replaces a pod's tolerations, leaving the template's alone."""
    from controller.engine.faults import set_usage

    template_usage = "metadata: {labels: {app: web}, annotations: {usage.playground/memory: 64Mi}}"
    sim = run(
        DEPLOY.replace("metadata: {labels: {app: web}}", template_usage) % {"tolerations": ""},
        duration="1s",
    )
    pods = sorted(sim.cluster.pods.values(), key=lambda p: p.key)
    assert len(pods) == 6 and all(p.usage == {"memory": 64 * 2**20} for p in pods)
    set_usage(sim, {"pod": pods[0].key, "memory": "1Gi"}, sim.now_ms)
    assert pods[0].usage == {"memory": 2**30}
    assert [p.usage for p in pods[1:]] == [{"memory": 64 * 2**20}] * 5
    rs = next(w for w in sim.workloads.workloads.values() if w.kind == "ReplicaSet")
    assert rs.proto is not None and rs.proto.usage == {"memory": 64 * 2**20}
    # DefaultTolerationSeconds gave each pod its two tolerations, not the shared template
    assert rs.proto.tolerations == []
    assert [[t.key for t in p.tolerations] for p in pods] == [
        ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    ] * 6
