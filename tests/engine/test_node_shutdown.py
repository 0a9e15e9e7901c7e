"""Graceful node shutdown (the kubelet's node shutdown manager, GracefulNodeShutdown, 1.21+),
read from the 1.34 source (pkg/kubelet/nodeshutdown): story tests with exact simulated times.

The cluster of most stories: node a-1 runs two Deployment pods (priority 0) and one
system-node-critical pod; the kubelet has shutdownGracePeriod 30 s and
shutdownGracePeriodCriticalPods 10 s, so ordinary pods get 30 - 10 = 20 s and critical pods
10 s. The node is shut down at 60 s.
"""

from __future__ import annotations

import pytest

from controller.engine.kubelet.nodeshutdown import (
    group_by_priority,
    migrate_config,
)
from controller.engine.objects import Pod
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.versions import CURRENT_VERSION

from .conftest import events, simulate, times

MESSAGE = "Pod was terminated in response to imminent node shutdown."


def scenario(
    kubelet: str = "{shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}",
    faults: str = "    - {at: 60s, type: ShutdownNode, node: a-1}\n",
    web_grace: int = 30,
    version: str = CURRENT_VERSION,
    extra_objects: str = "",
    duration: str = "200s",
) -> str:
    return f"""
apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "{version}"
  duration: {duration}
  kubelet: {kubelet}
  nodes:
    - {{name: a-1, zone: a}}
    - {{name: a-2, zone: a}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web, namespace: default}}
      spec:
        replicas: 2
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            nodeSelector: {{kubernetes.io/hostname: a-1}}
            terminationGracePeriodSeconds: {web_grace}
            containers: [{{name: web}}]
    - apiVersion: v1
      kind: Pod
      metadata: {{name: agent, namespace: kube-system}}
      spec:
        nodeName: a-1
        priorityClassName: system-node-critical
        containers: [{{name: agent}}]
{extra_objects}  faults:
{faults}"""


def web_pods(sim) -> list[str]:
    return sorted(e["pod"] for e in events(sim, "PodCreated") if e["t"] == 0 and "web" in e["pod"])


# -- the manager's configuration (pure) ----------------------------------------------------------
@pytest.mark.parametrize(
    ("grace_ms", "critical_ms", "groups"),
    [
        pytest.param(0, 0, [], id="no grace period: no groups, the manager is a stub"),
        pytest.param(
            30_000, 10_000, [(0, 20), (2_000_000_000, 10)], id="30 s with 10 s for critical pods"
        ),
        pytest.param(30_000, 0, [(0, 30), (2_000_000_000, 0)], id="no critical share: 30 s and 0"),
        pytest.param(
            30_000, 30_000, [(0, 0), (2_000_000_000, 30)], id="all of it for critical pods"
        ),
        pytest.param(
            2_500, 1_000, [(0, 1), (2_000_000_000, 1)], id="whole seconds, truncated as Go does"
        ),
    ],
)
def test_migrate_config(grace_ms: int, critical_ms: int, groups: list) -> None:
    assert migrate_config(grace_ms, critical_ms) == groups


@pytest.mark.parametrize(
    ("priority", "group"),
    [
        pytest.param(-5, 0, id="below the lowest group: the lowest"),
        pytest.param(0, 0, id="priority 0: the ordinary group"),
        pytest.param(1_000_000_000, 0, id="a high user priority is still ordinary"),
        pytest.param(1_999_999_999, 0, id="just below system-cluster-critical"),
        pytest.param(2_000_000_000, 1, id="system-cluster-critical: the critical group"),
        pytest.param(2_000_001_000, 1, id="system-node-critical: above the highest, the highest"),
    ],
)
def test_group_by_priority(priority: int, group: int) -> None:
    pod = Pod(name="p", namespace="default", uid="u", creation_ms=0, priority=priority)
    groups = group_by_priority([(0, 20), (2_000_000_000, 10)], [pod])
    assert [len(g) for g in groups] == [1 - group, group]


def test_group_by_priority_between_custom_groups_takes_the_lower() -> None:
    pods = [
        Pod(name=f"p{p}", namespace="d", uid=str(p), creation_ms=0, priority=p)
        for p in (50, 100, 150, 10_000)
    ]
    groups = group_by_priority([(0, 5), (100, 10), (1000, 20)], pods)
    assert [[p.name for p in g] for g in groups] == [["p50"], ["p100", "p150"], ["p10000"]]


# -- stories ---------------------------------------------------------------------------------------
def test_without_a_grace_period_the_node_just_powers_off() -> None:
    """shutdownGracePeriod 0 (the default): NewManager returns the stub, nothing holds an
    inhibitor lock, the machine powers off at once like PowerOffNode: no Shutdown event, no pod
    status; the controller marks the node Unknown 50 s after the last lease renewal (50 s),
    at the first monitor pass strictly past it (105 s)."""
    sim = simulate(scenario(kubelet="{}"))
    assert events(sim, "NodePoweredOff") == [
        {"t": 60_000, "type": "NodePoweredOff", "node": "a-1", "reason": "ShutdownNotDelayed"}
    ]
    assert not [e for e in events(sim, "K8sEvent") if e["reason"] == "Shutdown"]
    assert not events(sim, "PodPhase", phase="Failed")
    assert not events(sim, "PodDisruptionTarget")
    assert times(sim, "NodeReady", node="a-1", status="False") == []
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [105]
    assert sim.kubelets["a-1"].powered is False


def test_ordinary_pods_first_then_critical_then_power_off() -> None:
    sim = simulate(scenario())
    web = web_pods(sim)
    # 60 s: the Shutdown event, then Ready=False posted at once (go m.syncNodeStatus()).
    shutdown = [e for e in events(sim, "K8sEvent") if e["reason"] == "Shutdown"]
    assert shutdown == [
        {
            "t": 60_000,
            "type": "K8sEvent",
            "object": "Node/a-1",
            "reason": "Shutdown",
            "message": "Shutdown manager detected shutdown event",
            "eventType": "Normal",
        }
    ]
    assert events(sim, "NodeReady", node="a-1", status="False") == [
        {
            "t": 60_000,
            "type": "NodeReady",
            "node": "a-1",
            "status": "False",
            "reason": "KubeletNotReady",
        }
    ]
    # Ordinary pods: min(30 s terminationGracePeriodSeconds, 30 - 10 s) = 20 s; critical: 10 s.
    assert {e["pod"]: e["t"] for e in events(sim, "PodPhase", phase="Failed")} == {
        web[0]: 80_000,
        web[1]: 80_000,
        "kube-system/agent": 90_000,
    }
    assert times(sim, "NodePoweredOff", node="a-1", reason="GracefulShutdownDone") == [90]
    # The kubelet is dead from 90 s: its last renewal was at 80 s, Unknown after 80 + 50 s.
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [135]


def test_ready_false_message_is_the_shutdown_managers_error() -> None:
    sim = simulate(scenario(), until_s=70)
    ready = next(c for c in sim.cluster.nodes["a-1"].conditions if c.type == "Ready")
    assert (ready.status, ready.reason, ready.message) == (
        "False",
        "KubeletNotReady",
        "node is shutting down",
    )
    assert ready.last_transition_ms == 60_000
    assert sim.kubelets["a-1"].shutdown.shutting_down


def test_a_killed_pods_status_disruption_target_and_order() -> None:
    """The status manager holds the terminal phase (and with it DisruptionTarget) back until
    the containers stopped: Running and Ready during the 20 s grace, then one status write
    with DisruptionTarget, phase Failed (Terminated) and Ready False."""
    sim = simulate(scenario())
    pod = web_pods(sim)[0]
    mine = [e for e in sim.timeline.events if e.get("pod") == pod and e["t"] >= 60_000]
    assert [(e["t"], e["type"]) for e in mine[:3]] == [
        (80_000, "PodDisruptionTarget"),
        (80_000, "PodPhase"),
        (80_000, "PodReady"),
    ]
    assert mine[0]["reason"] == "TerminationByKubelet"
    assert mine[0]["message"] == MESSAGE
    assert (mine[1]["phase"], mine[1]["reason"]) == ("Failed", "Terminated")
    assert mine[2]["status"] == "False"
    obj = sim.cluster.pods[pod]
    assert (obj.phase, obj.reason, obj.message) == ("Failed", "Terminated", MESSAGE)
    assert obj.disruption_target == ("TerminationByKubelet", MESSAGE)


def test_still_running_and_ready_during_the_grace_period() -> None:
    sim = simulate(scenario(), until_s=79.999)
    pod = sim.cluster.pods[web_pods(sim)[0]]
    assert (pod.phase, pod.ready, pod.started) == ("Running", True, True)


def test_a_group_done_early_starts_the_next_group_at_once() -> None:
    """Ordinary pods with terminationGracePeriodSeconds 5: killed at 65 s; wg.Wait() returns
    before the group's 20 s timer, so the critical group starts at 65 s and ends at 75 s."""
    sim = simulate(scenario(web_grace=5))
    assert sorted(times(sim, "PodPhase", phase="Failed")) == [65, 65, 75]
    assert times(sim, "NodePoweredOff") == [75]


def test_no_pods_in_a_group_means_no_wait() -> None:
    """Only the critical pod runs (no Deployment pods on a-1): the ordinary group is skipped,
    the critical pod gets its 10 s, power off at 70 s."""
    text = scenario().replace("replicas: 2", "replicas: 0")
    sim = simulate(text)
    assert times(sim, "PodPhase", phase="Failed") == [70]
    assert times(sim, "NodePoweredOff") == [70]


def test_replicaset_replaces_the_failed_pods_at_once() -> None:
    """FilterActivePods drops Failed pods: the ReplicaSet creates two replacements at 80 s."""
    sim = simulate(scenario())
    created = [e for e in events(sim, "PodCreated") if e["t"] > 0]
    assert [(e["t"], e["owner"].split("/")[0]) for e in created] == [
        (80_000, "ReplicaSet"),
        (80_000, "ReplicaSet"),
    ]


def test_statefulset_recreates_its_failed_pod() -> None:
    extra = """    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db, namespace: default}
      spec:
        replicas: 1
        selector: {matchLabels: {app: db}}
        template:
          metadata: {labels: {app: db}}
          spec: {nodeSelector: {kubernetes.io/hostname: a-1}, containers: [{name: db}]}
"""
    sim = simulate(scenario(extra_objects=extra))
    assert times(sim, "PodPhase", pod="default/db-0", phase="Failed") == [80]
    assert times(sim, "PodDeleted", pod="default/db-0", by="StatefulSet/db") == [80]
    assert times(sim, "PodRemoved", pod="default/db-0") == [80]
    assert times(sim, "PodCreated", pod="default/db-0") == [0, 80]


def test_pods_bound_during_the_shutdown_are_rejected() -> None:
    faults = (
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
        "    - at: 65s\n"
        "      type: Apply\n"
        "      object: {apiVersion: v1, kind: Pod, metadata: {name: late, namespace: default},"
        " spec: {nodeName: a-1, containers: [{name: c}]}}\n"
    )
    sim = simulate(scenario(faults=faults))
    assert events(sim, "PodRejected", pod="default/late") == [
        {
            "t": 65_000,
            "type": "PodRejected",
            "pod": "default/late",
            "node": "a-1",
            "reason": "NodeShutdown",
        }
    ]
    rejected = [e for e in events(sim, "K8sEvent") if e["object"] == "Pod/default/late"]
    assert rejected[-1]["message"] == "Pod was rejected as the node is shutting down."


def test_power_on_starts_a_fresh_kubelet_and_failed_pods_stay_failed() -> None:
    faults = (
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
        "    - {at: 150s, type: PowerOnNode, node: a-1}\n"
    )
    sim = simulate(scenario(faults=faults))
    assert times(sim, "NodeReady", node="a-1", status="True") == [0, 150]
    assert not sim.kubelets["a-1"].shutdown.shutting_down
    assert sim.cluster.pods["kube-system/agent"].phase == "Failed"
    ready = next(c for c in sim.cluster.nodes["a-1"].conditions if c.type == "Ready")
    assert ready.message == "kubelet is posting ready status"


def test_stopping_the_kubelet_mid_shutdown_releases_the_lock() -> None:
    """The delay inhibitor lock goes with the kubelet process: logind powers off at once."""
    faults = (
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
        "    - {at: 70s, type: StopKubelet, node: a-1}\n"
    )
    sim = simulate(scenario(faults=faults))
    assert events(sim, "NodePoweredOff") == [
        {"t": 70_000, "type": "NodePoweredOff", "node": "a-1", "reason": "ShutdownNotDelayed"}
    ]
    assert not events(sim, "PodPhase", phase="Failed")


def test_with_the_runtime_down_the_kills_never_finish_and_the_timers_run_out() -> None:
    faults = (
        "    - {at: 50s, type: SetNodeNotReady, node: a-1}\n"
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
    )
    sim = simulate(scenario(faults=faults), until_s=100)
    assert not events(sim, "PodPhase", phase="Failed")
    assert times(sim, "NodePoweredOff") == [90]
    ready = next(c for c in sim.cluster.nodes["a-1"].conditions if c.type == "Ready")
    assert ready.message == "[container runtime is down, node is shutting down]"


def test_a_partitioned_kubelet_kills_but_cannot_tell_the_api() -> None:
    faults = (
        "    - {at: 50s, type: PartitionNode, node: a-1}\n"
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
    )
    sim = simulate(scenario(faults=faults), until_s=100)
    assert not [e for e in events(sim, "K8sEvent") if e["reason"] == "Shutdown"]
    assert not events(sim, "PodPhase", phase="Failed")
    assert times(sim, "NodePoweredOff") == [90]
    assert sim.cluster.pods["kube-system/agent"].phase == "Running"


def test_grace_periods_by_pod_priority() -> None:
    """shutdownGracePeriodByPodPriority: ordinary pods (priority 0) get 7 s, pods at 2e9 and
    above 3 s: killed at 67 s and 70 s."""
    kubelet = (
        "{shutdownGracePeriodByPodPriority: [{priority: 2000000000, shutdownGracePeriodSeconds: 3},"
        " {priority: 0, shutdownGracePeriodSeconds: 7}]}"
    )
    sim = simulate(scenario(kubelet=kubelet))
    assert sorted(times(sim, "PodPhase", phase="Failed")) == [67, 67, 70]
    assert times(sim, "NodePoweredOff") == [70]


def test_a_node_that_is_already_off_ignores_the_shutdown() -> None:
    faults = (
        "    - {at: 50s, type: PowerOffNode, node: a-1}\n"
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
    )
    sim = simulate(scenario(faults=faults), until_s=100)
    assert events(sim, "NodePoweredOff") == []


# -- bad input and other releases ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("kubelet", "path", "why"),
    [
        pytest.param(
            "{shutdownGracePeriod: 10s, shutdownGracePeriodCriticalPods: 30s}",
            "spec.kubelet.shutdownGracePeriodCriticalPods",
            "30s must be <= shutdownGracePeriod 10s",
            id="critical pods' share above the whole grace period",
        ),
        pytest.param(
            "{shutdownGracePeriod: 500ms}",
            "spec.kubelet.shutdownGracePeriod",
            "0.5s must be either zero or otherwise >= 1 sec",
            id="a grace period under a second",
        ),
        pytest.param(
            "{shutdownGracePeriod: 30s, shutdownGracePeriodByPodPriority:"
            " [{priority: 0, shutdownGracePeriodSeconds: 5}]}",
            "spec.kubelet.shutdownGracePeriodByPodPriority",
            "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod",
            id="both ways of configuring it",
        ),
        pytest.param(
            "{shutdownGracePeriodByPodPriority: [{priority: 0}]}",
            "spec.kubelet.shutdownGracePeriodByPodPriority[0].shutdownGracePeriodSeconds",
            "is required",
            id="a priority entry without its seconds",
        ),
        pytest.param(
            "{shutdownGracePeriod: -1s}",
            "spec.kubelet.shutdownGracePeriod",
            "negative",
            id="a negative grace period",
        ),
    ],
)
def test_bad_configuration_is_refused_with_the_path(kubelet: str, path: str, why: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(kubelet=kubelet))
    assert exc.value.path == path
    assert why in exc.value.why


def test_the_fault_is_refused_under_1_18_with_path_and_release() -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(kubelet="{}", version="1.18"))
    assert exc.value.path == "spec.faults[0].type"
    assert exc.value.why == (
        "ShutdownNode is not in Kubernetes 1.18: the kubelet's graceful node shutdown came in "
        "Kubernetes 1.21 (GracefulNodeShutdown)"
    )


@pytest.mark.parametrize(
    "field",
    ["shutdownGracePeriod", "shutdownGracePeriodCriticalPods", "shutdownGracePeriodByPodPriority"],
)
def test_the_kubelet_fields_are_refused_under_1_18(field: str) -> None:
    value = "[]" if field.endswith("Priority") else "30s"
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(kubelet=f"{{{field}: {value}}}", version="1.18", faults="    []\n"))
    assert exc.value.path == f"spec.kubelet.{field}"
    assert exc.value.why.startswith("not in Kubernetes 1.18: ")


def test_set_parameters_turns_the_manager_on_for_the_next_shutdown() -> None:
    """A kubelet reconfigured with a grace period (SetParameters at 10 s) shuts down
    gracefully at 60 s: groups come from the configuration in force at the shutdown."""
    faults = (
        "    - {at: 10s, type: SetParameters, kubelet: {shutdownGracePeriod: 30s,"
        " shutdownGracePeriodCriticalPods: 10s}}\n"
        "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
    )
    sim = simulate(scenario(kubelet="{}", faults=faults))
    assert sorted(times(sim, "PodPhase", phase="Failed")) == [80, 80, 90]
    assert times(sim, "NodePoweredOff", reason="GracefulShutdownDone") == [90]


def test_a_terminating_pod_is_killed_with_the_shorter_grace() -> None:
    """A web pod deleted by a user at 55 s (30 s grace, done at 85 s) is still active at the
    shutdown (60 s): the shutdown kill (20 s) finishes first, at 80 s, and the pod object goes."""
    faults = "    - {at: 60s, type: ShutdownNode, node: a-1}\n"
    sim = simulate(scenario(faults=faults), until_s=0)
    web = web_pods(sim)[0]
    faults = f"    - {{at: 55s, type: DeletePod, pod: {web}}}\n" + faults
    sim = simulate(scenario(faults=faults))
    assert times(sim, "PodRemoved", pod=web) == [80]
    assert times(sim, "PodPhase", pod=web, phase="Failed") == [80]
