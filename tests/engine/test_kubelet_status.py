"""Kubelet status fidelity in both profiles (issue #12 item, issue #16 items 1 and 4), read
from the Go source: story tests with exact simulated times.

1. Kubelet.tryUpdateNodeStatus (pkg/kubelet/kubelet_node_status.go) GETs the node from the
   API and compares the status its setters compute with that copy (nodeStatusHasChanged): a
   Ready=Unknown the node lifecycle controller wrote to a node whose kubelet is alive is
   replaced at the kubelet's next nodeStatusUpdateFrequency check, report due or not.
2. The status manager's syncBatch (pkg/kubelet/status/status_manager.go, every syncPeriod =
   10 s from the kubelet's start) reconciles the API's pod status with its own
   (needsReconcile): the Ready=False of MarkPodsNotReady on a pod the kubelet still runs is
   PATCHed back to Ready=True at the first syncBatch the kubelet reaches the API at.
3. What a partitioned kubelet does to its pods (an eviction: killPodNow ->
   statusManager.SetPodStatus) is sent when the API can be reached again, at the first
   syncBatch after the heal: the API, the ReplicaSet and the page see the Failed pod then.
   The timeline shows PodEvicted (and the kubelet's Evicted event) at the kubelet's act, and
   PodPhase Failed, and the replacement, at that syncBatch.
"""

from __future__ import annotations

import pytest

from controller.engine.versions import CURRENT_VERSION

from .conftest import events, simulate, times

VERSIONS = ["1.18", CURRENT_VERSION]


def long_lease(version: str, duration: str = "130s") -> str:
    """The lease is renewed every nodeLeaseDurationSeconds / 4 = 60 s, longer than the
    controller's grace period: the controller marks the live node Unknown between renewals."""
    return f"""
    apiVersion: playground/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "{version}"
      duration: {duration}
      kubelet: {{nodeLeaseDurationSeconds: 240}}
      nodes:
        - {{name: a-1, zone: a}}
      objects:
        - apiVersion: v1
          kind: Pod
          metadata: {{name: web, namespace: default}}
          spec:
            nodeName: a-1
            containers: [{{name: web}}]
    """


# (version, Ready=Unknown written by the controller, Ready=True patched back by the kubelet)
# 1.18: grace 40 s, status posted at 0 and lease renewed at 0: Unknown at the first 5 s pass
# strictly past 40 s (45 s); the kubelet's next 10 s status check is at 50 s (its report is not
# due before 300 s). The lease renewed at 60 s is the last probe: Unknown again at 105 s, True
# again at 110 s.
# 1.34: nodeMonitorGracePeriod 50 s: Unknown at 55 s, True at 60 s; again at 115 s / 120 s.
CASES = [
    ("1.18", [45.0, 105.0], [50.0, 110.0]),
    (CURRENT_VERSION, [55.0, 115.0], [60.0, 120.0]),
]


@pytest.mark.parametrize("version,unknown_at,true_at", CASES)
def test_kubelet_replaces_unknown_at_next_status_check(version, unknown_at, true_at):
    sim = simulate(long_lease(version))
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == unknown_at
    assert times(sim, "NodeReady", node="a-1", status="True") == [0.0, *true_at]


def set_condition(version: str, condition: str, status: str, at: str) -> str:
    return f"""
    apiVersion: playground/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "{version}"
      duration: 100s
      nodes:
        - {{name: a-1, zone: a}}
        - {{name: a-2, zone: a}}
      faults:
        - {{at: {at}, type: SetNodeCondition, node: a-1, condition: {condition}, status: "{status}"}}
    """


# (condition written by a fault, status, at, the kubelet's own status PATCHed back at): the
# kubelet's checks run at 0, 10, 20 ... s; a fault at a check's instant runs before it (phase
# order), so that check already sees it. A condition the kubelet does not own stays.
SET_CONDITION_CASES = [
    ("MemoryPressure", "True", "33s", "MemoryPressure", "False", [0.0, 40.0]),
    ("DiskPressure", "True", "40s", "DiskPressure", "False", [0.0, 40.0]),
    ("Ready", "False", "41s", "Ready", "True", [0.0, 50.0]),
    ("NetworkUnavailable", "True", "33s", "NetworkUnavailable", "False", []),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("condition,status,at,check,back,back_at", SET_CONDITION_CASES)
def test_kubelet_overwrites_a_condition_it_owns(
    version, condition, status, at, check, back, back_at
):
    sim = simulate(set_condition(version, condition, status, at))
    if check == "Ready":
        got = times(sim, "NodeReady", node="a-1", status=back)
    else:
        got = times(sim, "NodeCondition", node="a-1", condition=check, status=back)
    assert got == back_at
    assert times(sim, "NodeReady", node="a-2", status="True") == [0.0]


# -- 2. the status manager restores Ready ----------------------------------------------------
# (version, pod Ready=False by MarkPodsNotReady, Ready=True again by the kubelet's syncBatch)
# The long-lease node of the first test: the kubelet reaches the API all along, so its
# syncBatch at the next 10 s tick after the controller's write puts Ready back.
LONG_LEASE_READY_CASES = [
    ("1.18", [45.0, 105.0], [0.0, 50.0, 110.0]),
    (CURRENT_VERSION, [55.0, 115.0], [0.0, 60.0, 120.0]),
]


@pytest.mark.parametrize("version,not_ready_at,ready_at", LONG_LEASE_READY_CASES)
def test_status_manager_restores_ready_on_a_reachable_kubelet(version, not_ready_at, ready_at):
    sim = simulate(long_lease(version))
    assert times(sim, "PodReady", pod="default/web", status="False") == not_ready_at
    assert times(sim, "PodReady", pod="default/web", status="True") == ready_at


def restart(version: str) -> str:
    return f"""
    apiVersion: playground/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "{version}"
      duration: 200s
      nodes:
        - {{name: a-1, zone: a}}
        - {{name: a-2, zone: a}}
      objects:
        - apiVersion: v1
          kind: Pod
          metadata: {{name: web, namespace: default}}
          spec:
            nodeName: a-1
            containers: [{{name: web}}]
      faults:
        - {{at: 62s, type: StopKubelet, node: a-1}}
        - {{at: 133s, type: StartKubelet, node: a-1}}
    """


@pytest.mark.parametrize("version,not_ready_at", [("1.18", 105.0), (CURRENT_VERSION, 115.0)])
def test_a_new_kubelet_process_sends_ready_at_once(version, not_ready_at):
    # A restarted kubelet has an empty status cache: its first syncPod's SetPodStatus differs
    # from nothing and is sent at once, not at a syncBatch.
    sim = simulate(restart(version))
    assert times(sim, "PodReady", pod="default/web", status="False") == [not_ready_at]
    assert times(sim, "PodReady", pod="default/web", status="True") == [0.0, 133.0]


def partition(version: str, status_frequency: str, heal: str) -> str:
    return f"""
    apiVersion: playground/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "{version}"
      duration: 200s
      kubelet: {{nodeStatusUpdateFrequency: {status_frequency}}}
      nodes:
        - {{name: a-1, zone: a}}
        - {{name: a-2, zone: a}}
      objects:
        - apiVersion: v1
          kind: Pod
          metadata: {{name: web, namespace: default}}
          spec:
            nodeName: a-1
            containers: [{{name: web}}]
      faults:
        - {{at: 62s, type: PartitionNode, node: a-1}}
        - {{at: {heal}, type: HealNode, node: a-1}}
    """


# (version, nodeStatusUpdateFrequency, heal, pod NotReady at, node Ready again at, pod Ready
# again at). The lease was last renewed at 60 s: Unknown at 105 s (1.18, grace 40 s) or 115 s
# (1.34, grace 50 s). After the heal the node status goes at the kubelet's next status check,
# the pod's Ready at its next syncBatch (10 s ticks from 0), whichever comes first.
PARTITION_CASES = [
    ("1.18", "10s", "133s", 105.0, 140.0, 140.0),
    ("1.18", "4s", "133s", 105.0, 136.0, 140.0),
    ("1.18", "1m", "133s", 105.0, 180.0, 140.0),
    ("1.18", "10s", "140s", 105.0, 140.0, 140.0),
    ("1.18", "4s", "141s", 105.0, 144.0, 150.0),
    (CURRENT_VERSION, "4s", "133s", 115.0, 136.0, 140.0),
    (CURRENT_VERSION, "1m", "133s", 115.0, 180.0, 140.0),
]


@pytest.mark.parametrize(
    "version,frequency,heal,not_ready_at,node_ready_at,pod_ready_at", PARTITION_CASES
)
def test_status_manager_restores_ready_after_a_partition(
    version, frequency, heal, not_ready_at, node_ready_at, pod_ready_at
):
    sim = simulate(partition(version, frequency, heal))
    assert times(sim, "PodReady", pod="default/web", status="False") == [not_ready_at]
    assert times(sim, "NodeReady", node="a-1", status="True") == [0.0, node_ready_at]
    assert times(sim, "PodReady", pod="default/web", status="True") == [0.0, pod_ready_at]


# -- 3. a partitioned kubelet cannot write ---------------------------------------------------
def partitioned_eviction(version: str, heal: str) -> str:
    """Node m is cut off at 62 s; its memory use jumps at 75 s and the eviction manager's 80 s
    sync evicts the ReplicaSet's BestEffort pod (hard threshold, grace 0). The replacement can
    only go to m (nodeSelector)."""
    return f"""
    apiVersion: playground/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "{version}"
      duration: 200s
      kubelet: {{evictionHard: {{memory.available: 2Gi}}}}
      nodes:
        - {{name: m, zone: z, capacity: {{cpu: "8", memory: 8Gi, pods: "110"}}, usage: {{memory: 1Gi}}}}
        - {{name: n, zone: z, capacity: {{cpu: "8", memory: 8Gi, pods: "110"}}, usage: {{memory: 1Gi}}}}
      objects:
        - apiVersion: apps/v1
          kind: ReplicaSet
          metadata: {{name: web, namespace: default}}
          spec:
            replicas: 1
            selector: {{matchLabels: {{app: web}}}}
            template:
              metadata: {{labels: {{app: web}}, annotations: {{usage.playground/memory: 300Mi}}}}
              spec:
                nodeSelector: {{kubernetes.io/hostname: m}}
                containers: [{{name: web}}]
      faults:
        - {{at: 62s, type: PartitionNode, node: m}}
        - {{at: 75s, type: SetUsage, node: m, memory: 7Gi}}
        - {{at: {heal}, type: HealNode, node: m}}
    """


# (version, heal, Failed seen by the API (and the replacement created) at): the first syncBatch
# tick (10 s from 0) at or after the heal; a heal at a tick's instant comes before it.
PARTITIONED_EVICTION_CASES = [
    ("1.18", "133s", 140.0),
    ("1.18", "140s", 140.0),
    ("1.18", "141s", 150.0),
    (CURRENT_VERSION, "133s", 140.0),
    (CURRENT_VERSION, "161s", 170.0),
]


@pytest.mark.parametrize("version,heal,failed_at", PARTITIONED_EVICTION_CASES)
def test_partitioned_kubelet_evicts_locally_and_writes_after_the_heal(version, heal, failed_at):
    sim = simulate(partitioned_eviction(version, heal))
    evicted = events(sim, "PodEvicted")
    assert [(e["t"] / 1000, e["node"]) for e in evicted] == [(80.0, "m")]
    pod = evicted[0]["pod"]
    assert times(sim, "K8sEvent", object=f"Pod/{pod}", reason="Evicted") == [80.0]
    assert times(sim, "PodPhase", pod=pod, phase="Failed", reason="Evicted") == [failed_at]
    created = [e for e in events(sim, "PodCreated", owner="ReplicaSet/web") if e["pod"] != pod]
    assert [e["t"] / 1000 for e in created] == [failed_at]


@pytest.mark.parametrize("version", VERSIONS)
def test_partitioned_kubelet_status_is_its_own_until_the_heal(version):
    sim = simulate(partitioned_eviction(version, "133s"), until_s=130)
    (pod,) = [p for p in sim.cluster.pods.values() if p.node_name == "m"]
    assert pod.phase == "Running"  # the API's copy
    kubelet = sim.kubelets["m"]
    assert kubelet.status.phase_of(pod) == "Failed"  # the kubelet's own
    assert not pod.started  # its containers are gone
    sim.run(140_000)
    assert pod.phase == "Failed"
    assert not kubelet.status.pending


@pytest.mark.parametrize("version,disruption_at", [("1.18", []), (CURRENT_VERSION, [140.0])])
def test_a_status_set_while_partitioned_carries_its_disruption_target(version, disruption_at):
    # SetPodStatus with a DisruptionTarget condition (the kubelet's own kills, 1.26+) while
    # the API cannot be reached: the condition and the phase go together at the heal's
    # syncBatch, the condition first.
    sim = simulate(partition(version, "10s", "133s"), until_s=70)
    pod = sim.cluster.pods["default/web"]
    sim.kubelets["a-1"].status.set_pod_status(
        pod, 70_000, "Failed", "Evicted", "m", False, ("TerminationByKubelet", "m")
    )
    sim.run(200_000)
    assert times(sim, "PodDisruptionTarget", pod="default/web") == disruption_at
    assert times(sim, "PodPhase", pod="default/web", phase="Failed") == [140.0]
    at_heal = [e["type"] for e in events_at(sim, 140_000) if e.get("pod") == "default/web"]
    assert at_heal == (["PodDisruptionTarget", "PodPhase"] if disruption_at else ["PodPhase"])


def events_at(sim, t_ms: int) -> list[dict]:
    return [e for e in sim.timeline.events if e["t"] == t_ms]


# (heal, the two web pods' Failed phase seen by the API at). Graceful shutdown (1.34) of a
# partitioned node: cut off at 50 s, shut down at 60 s; the web pods (grace 5 s) are killed by
# 65 s, the critical pod by 75 s, when the machine powers off. The killed pods' statuses wait
# for a syncBatch that reaches the API: 70 s after a heal at 70 s. After a heal at 73 s the
# next tick (80 s) comes after the power-off, but the critical pod's own status at 75 s
# (reachable) wakes the 1.27+ goroutine's syncBatch(false), which writes every status whose
# version is ahead of the API's (status_loop.py): the web pods' Failed go with it, at 75 s.
SHUTDOWN_CASES = [("70s", [70.0, 70.0]), ("73s", [75.0, 75.0])]


@pytest.mark.parametrize("heal,failed_at", SHUTDOWN_CASES)
def test_partitioned_shutdown_statuses_wait_for_a_sync_after_the_heal(heal, failed_at):
    from .test_node_shutdown import scenario

    faults = (
        "    - {at: 50s, type: PartitionNode, node: a-1}\n"
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
        f"    - {{at: {heal}, type: HealNode, node: a-1}}\n"
    )
    sim = simulate(scenario(faults=faults, web_grace=5))
    web = [
        e["t"] / 1000
        for e in events(sim, "PodPhase", phase="Failed", reason="Terminated")
        if e["pod"].startswith("default/web-")
    ]
    assert web == failed_at
    assert times(sim, "NodePoweredOff", node="a-1") == [75.0]
