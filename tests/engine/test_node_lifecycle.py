"""NodeLifecycleController stories with exact simulated times (k8s-behavior.md section 9)."""

from __future__ import annotations

import pytest

from .conftest import events, simulate, times

NODES3 = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  duration: %(duration)s
  controllerManager: %(cm)s
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: a-2, zone: zone-a}
    - {name: a-3, zone: zone-a}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec:
        nodeName: a-1
        containers: [{name: web}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: quick, namespace: default}
      spec:
        nodeName: a-1
        tolerations:
          - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}
        containers: [{name: quick}]
    - apiVersion: v1
      kind: Pod
      metadata:
        name: ds-pod
        namespace: kube-system
        ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: x, controller: true}]
      spec:
        nodeName: a-1
        tolerations:
          - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
          - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
        containers: [{name: ds}]
  faults: %(faults)s
"""


def scenario(faults: str, duration: str = "500s", cm: str = "{}") -> str:
    return NODES3 % {"faults": faults, "duration": duration, "cm": cm}


def test_kubelet_stopped_at_105_goes_unknown_at_145_and_pods_go_at_450() -> None:
    # Last renewal at 100 s; the pass at 140 s is not strictly past 100 + 40.
    sim = simulate(scenario("[{at: 105s, type: StopKubelet, node: a-1}]"))
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [145.0]
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoSchedule"
    ) == [145.0]
    # One pass later: the taint path uses the condition as observed at the start of the pass.
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == [150.0]
    assert times(sim, "PodDeleted", pod="default/quick") == [170.0]
    assert times(sim, "PodDeleted", pod="default/web") == [450.0]
    assert events(sim, "PodDeleted", pod="kube-system/ds-pod") == []
    # The pods stay Terminating: the kubelet cannot confirm.
    assert events(sim, "PodRemoved", pod="default/web") == []


def test_kubelet_stop_exactly_at_renewal_time_misses_that_renewal() -> None:
    # A fault at 100 s comes before the kubelet's renewal at 100 s: last renewal 90 s.
    sim = simulate(scenario("[{at: 100s, type: StopKubelet, node: a-1}]", duration="200s"))
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [135.0]


def test_restart_brings_node_back_and_removes_taints_and_cancels_deletions() -> None:
    sim = simulate(
        scenario(
            "[{at: 105s, type: StopKubelet, node: a-1}, {at: 200s, type: StartKubelet, node: a-1}]",
            duration="600s",
        )
    )
    assert times(sim, "NodeReady", node="a-1", status="True") == [0.0, 200.0]
    assert times(
        sim, "TaintRemoved", node="a-1", key="node.kubernetes.io/unreachable", effect="NoSchedule"
    ) == [200.0]
    # The NoExecute taint goes at the first monitor pass that observes Ready=True.
    assert times(
        sim, "TaintRemoved", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == [200.0]
    assert events(sim, "PodDeleted", pod="default/web") == []
    cancel = events(sim, "K8sEvent", object="Pod/default/web", reason="TaintManagerEviction")
    assert [(e["t"], e["message"]) for e in cancel] == [
        (200_000, "Cancelling deletion of Pod default/web")
    ]


def test_kubelet_reported_not_ready_taints_at_once_without_node_not_ready_event() -> None:
    sim = simulate(scenario("[{at: 103s, type: SetNodeNotReady, node: a-1}]", duration="420s"))
    # Posted at the kubelet's next status tick (110 s), NoSchedule at once, NoExecute at the
    # first pass >= 110 that sees it.
    assert times(sim, "NodeReady", node="a-1", status="False") == [110.0]
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/not-ready", effect="NoSchedule"
    ) == [0.0, 110.0]
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/not-ready", effect="NoExecute"
    ) == [110.0]
    assert times(sim, "PodDeleted", pod="default/web") == [410.0]
    node_not_ready = events(sim, "K8sEvent", object="Node/a-1", reason="NodeNotReady")
    # Only the kubelet's own event: the pass at 110 already observes False (the kubelet posts
    # before the controller runs), so the controller sees no True -> not-True change.
    assert [e["t"] for e in node_not_ready] == [110_000]


def test_legacy_mode_deletes_pods_after_pod_eviction_timeout() -> None:
    sim = simulate(
        scenario(
            "[{at: 44s, type: StopKubelet, node: a-1}]",
            duration="200s",
            cm="{enableTaintManager: false, podEvictionTimeout: 2m}",
        )
    )
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [85.0]
    assert times(sim, "PodDeleted", pod="default/web") == [165.0]
    assert times(sim, "PodDeleted", pod="default/quick") == [165.0]
    assert events(sim, "PodDeleted", pod="kube-system/ds-pod") == []
    assert events(sim, "TaintAdded", effect="NoExecute") == []


@pytest.mark.parametrize(
    "fault, unknown_at",
    [
        pytest.param("PartitionNode", 145.0, id="partition: like a dead kubelet for the API"),
        pytest.param("PowerOffNode", 145.0, id="power off: lease stops"),
        pytest.param("StopKubelet", 145.0, id="stop kubelet"),
    ],
)
def test_each_liveness_fault_makes_the_node_unknown_after_the_grace_period(
    fault: str, unknown_at: float
) -> None:
    sim = simulate(scenario(f"[{{at: 105s, type: {fault}, node: a-1}}]", duration="200s"))
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [unknown_at]


def test_heal_after_partition_posts_ready_at_next_status_tick() -> None:
    sim = simulate(
        scenario(
            "[{at: 105s, type: PartitionNode, node: a-1}, {at: 203s, type: HealNode, node: a-1}]",
            duration="300s",
        )
    )
    assert times(sim, "NodeReady", node="a-1", status="True") == [0.0, 210.0]
    assert times(sim, "PodReady", pod="default/web", status="True") == [0.0, 210.0]
