"""What an operator sees at the instant of a fault (issue #38, "Operating"): a node's view
says its runtime is down and which leaks run on it or its pods at once, before the kubelet's
next status update; a parameter change is logged as "Parameters changed: field old → new",
every duration as Go prints it."""

from __future__ import annotations

from controller.engine.state import node_state, pod_state
from controller.engine.timeline import format_table

from .conftest import events, simulate

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "1.34"
  duration: 60s
  nodes:
    - {name: a-1, zone: a}
    - {name: a-2, zone: a}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: a-1, containers: [{name: web}]}
  faults:
"""


def run(faults: str, until_s: float):
    return simulate(SCENARIO + faults, until_s)


def test_runtime_down_is_in_the_nodes_view_at_the_faults_instant() -> None:
    sim = run("    - {at: 12s, type: SetNodeNotReady, node: a-1}\n", 12.001)
    view = node_state(sim, sim.cluster.nodes["a-1"])
    # The kubelet reports Ready=False at its next status update (20 s): still True now, and
    # the view already says why it will not stay so.
    assert view["ready"] == "True"
    assert view["kubelet"]["runtimeReady"] is False
    assert node_state(sim, sim.cluster.nodes["a-2"])["kubelet"]["runtimeReady"] is True


def test_a_leak_is_in_its_pods_or_nodes_view_at_once_and_gone_when_stopped() -> None:
    faults = (
        "    - {at: 12s, type: LeakMemory, pod: default/web, rate: 50Mi}\n"
        "    - {at: 12s, type: FillDisk, node: a-2, rate: 500Mi, until: 30s}\n"
    )
    sim = run(faults, 12.001)
    web = pod_state(sim, sim.cluster.pods["default/web"])
    assert web["leaking"] == [{"resource": "memory", "rate": 50 * 2**20, "until": None}]
    disk = node_state(sim, sim.cluster.nodes["a-2"])
    assert disk["leaking"] == [
        {"resource": "ephemeral-storage", "rate": 500 * 2**20, "until": 42.0}
    ]
    # Nothing leaks on a-1 itself (its pod does): the key is left out, as on a quiet node.
    assert "leaking" not in node_state(sim, sim.cluster.nodes["a-1"])
    sim = run(faults + "    - {at: 20s, type: StopLeak, pod: default/web}\n", 45)
    assert "leaking" not in pod_state(sim, sim.cluster.pods["default/web"])
    assert "leaking" not in node_state(sim, sim.cluster.nodes["a-2"])  # its 30 s ran out


def test_a_parameter_change_reads_parameters_changed_field_old_new() -> None:
    sim = run(
        "    - {at: 5s, type: SetParameters, controllerManager: {nodeEvictionRate: 0.5},"
        " kubelet: {nodeStatusUpdateFrequency: 5s}}\n",
        6,
    )
    (change,) = events(sim, "Fault", fault="SetParameters")
    # The JSON keeps its fields; the status period reads as a duration (it read 10000 -> 5000).
    assert change["changes"] == [
        "controllerManager.nodeEvictionRate: 0.1 -> 0.5",
        "kubelet.nodeStatusUpdateFrequency: 10s -> 5s",
    ]
    assert change["controllerManager"] == {"nodeEvictionRate": 0.5}
    line = next(x for x in format_table([change]))
    assert (
        "Parameters changed: nodeEvictionRate 0.1 → 0.5; nodeStatusUpdateFrequency 10s → 5s" in line
    )
    assert "SetParameters" not in line
