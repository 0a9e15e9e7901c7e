"""What happens next, from the engine's own timers: the page's "explain this" reads them.

Each case stops a kubelet (or cuts it off) at some instant, asks the engine then when the node
will go Unknown, runs on, and compares with the NodeReady=Unknown the monitor pass writes."""

from __future__ import annotations

import pytest

from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state, pod_state
from controller.engine.versions import CURRENT_VERSION


def scenario(version: str, fault: str, offset: str = "0s", kubelet: str = "{}") -> Simulation:
    text = f"""
apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "{version}"
  kubelet: {kubelet}
  nodes:
    - {{name: n-1, zone: z, kubeletOffset: {offset}}}
    - {{name: n-2, zone: z}}
    - {{name: n-3, zone: z}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {{name: web, namespace: default}}
      spec: {{nodeName: n-1, containers: [{{name: web}}]}}
  faults:
    - {fault}
"""
    return Simulation(load_scenario(text))


def unknown_times(sim: Simulation) -> list[int]:
    return [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == "NodeReady" and e["node"] == "n-1" and e["status"] == "Unknown"
    ]


@pytest.mark.parametrize(
    ("version", "fault", "offset", "kubelet", "unknown_s"),
    [
        pytest.param(
            "1.18",
            "{at: 62s, type: StopKubelet, node: n-1}",
            "0s",
            "{}",
            105,
            id="1.18: renewed at 60 s, seen by the 60 s pass: Unknown at the first pass past 100 s",
        ),
        pytest.param(
            CURRENT_VERSION,
            "{at: 62s, type: StopKubelet, node: n-1}",
            "0s",
            "{}",
            115,
            id="current: the same with the 50 s grace period",
        ),
        pytest.param(
            "1.18",
            "{at: 54s, type: StopKubelet, node: n-1}",
            "3s",
            "{}",
            100,
            id="a renewal at 53 s not yet seen at 54 s: the 55 s pass will see it",
        ),
        pytest.param(
            "1.18",
            "{at: 41s, type: PartitionNode, node: n-1}",
            "0s",
            "{}",
            85,
            id="a partitioned kubelet is silent for the API too",
        ),
        pytest.param(
            "1.18",
            "{at: 30s, type: PowerOffNode, node: n-1}",
            "0s",
            "{nodeLeaseDurationSeconds: 20, nodeStatusUpdateFrequency: 4s}",
            80,
            id="status seen at 30 s rebuilds nodeHealthData without its lease, so the 35 s pass "
            "sees the 25 s lease as new: probe 35 s, Unknown at the first pass past 75 s",
        ),
    ],
)
def test_the_engine_says_when_a_silent_node_goes_unknown(
    version: str, fault: str, offset: str, kubelet: str, unknown_s: int
) -> None:
    sim = scenario(version, fault, offset, kubelet)
    at_ms = int(float(fault.split("at: ")[1].split("s,")[0]) * 1000)
    sim.run(at_ms)
    predicted = node_state(sim, sim.cluster.nodes["n-1"])["unknownAt"]
    sim.run(400_000)
    assert unknown_times(sim) == [unknown_s * 1000]
    assert predicted == unknown_s


def test_a_reporting_node_has_no_unknown_time() -> None:
    sim = scenario("1.18", "{at: 62s, type: Cordon, node: n-2}")
    sim.run(100_000)
    assert node_state(sim, sim.cluster.nodes["n-1"])["unknownAt"] is None


def test_a_pod_on_a_tainted_node_says_when_its_timer_was_set_and_fires() -> None:
    sim = scenario("1.18", "{at: 62s, type: StopKubelet, node: n-1}")
    sim.run(200_000)
    view = pod_state(sim, sim.cluster.pods["default/web"])
    # Unknown at 105 s, unreachable:NoExecute one pass later (110 s), 300 s default toleration.
    assert (view["taintEvictionSince"], view["taintEvictionAt"]) == (110, 410)
