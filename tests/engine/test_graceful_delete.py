"""podStrategy.CheckGracefulDelete: the API server removes a terminated (Failed or Succeeded)
or unscheduled pod at once, whatever grace period the DELETE asked for."""

from __future__ import annotations

import pytest

from controller.engine.cluster import check_graceful_delete
from controller.engine.objects import Pod
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.versions import CURRENT_VERSION


@pytest.mark.parametrize(
    ("node", "phase", "asked", "grace", "expected"),
    [
        pytest.param("n-1", "Running", None, 30, 30, id="running: the pod's own grace period"),
        pytest.param("n-1", "Running", 5, 30, 5, id="running: the grace period asked for"),
        pytest.param("", "Pending", None, 30, 0, id="not scheduled: at once"),
        pytest.param("n-1", "Failed", None, 30, 0, id="Failed: at once"),
        pytest.param("n-1", "Succeeded", 10, 30, 0, id="Succeeded: at once, even if asked"),
        pytest.param("n-1", "Running", -5, 30, 1, id="a negative grace period becomes 1"),
    ],
)
def test_check_graceful_delete(
    node: str, phase: str, asked: int | None, grace: int, expected: int
) -> None:
    pod = Pod("default", "p", "uid", 0, node_name=node, phase=phase)
    pod.termination_grace_period_s = grace
    assert check_graceful_delete(pod, asked) == expected


def test_pods_a_shutdown_failed_are_removed_when_the_taint_manager_deletes_them() -> None:
    """ShutdownNode at 60 s: Ready=False at once, so not-ready:NoExecute at 60 s; the pod fails
    at 80 s (min(30, 30 - 10) s) and the node powers off then. 300 s after the taint the taint
    manager deletes the Failed pod, and being terminated it is removed at that instant instead
    of staying Terminating on a node that is off."""
    sim = Simulation(
        load_scenario(
            f"""
apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "{CURRENT_VERSION}"
  kubelet: {{shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}}
  nodes:
    - {{name: n-1, zone: z}}
    - {{name: n-2, zone: z}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {{name: web, namespace: default}}
      spec: {{nodeName: n-1, containers: [{{name: web}}]}}
  faults:
    - {{at: 60s, type: ShutdownNode, node: n-1}}
"""
        )
    )
    sim.run(600_000)
    seen = [
        (e["t"], e["type"])
        for e in sim.timeline.events
        if e.get("pod") == "default/web" and e["type"] in ("PodPhase", "PodDeleted", "PodRemoved")
    ]
    failed = [t for t, kind in seen if kind == "PodPhase"][-1]
    deleted = [t for t, kind in seen if kind == "PodDeleted"]
    removed = [t for t, kind in seen if kind == "PodRemoved"]
    assert failed == 80_000
    assert deleted == removed == [360_000]
