"""Kubelet status fidelity in both profiles (issue #12 item, issue #16 items 1 and 4), read
from the Go source: story tests with exact simulated times.

1. Kubelet.tryUpdateNodeStatus (pkg/kubelet/kubelet_node_status.go) GETs the node from the
   API and compares the status its setters compute with that copy (nodeStatusHasChanged): a
   Ready=Unknown the node lifecycle controller wrote to a node whose kubelet is alive is
   replaced at the kubelet's next nodeStatusUpdateFrequency check, report due or not.
"""

from __future__ import annotations

import pytest

from controller.engine.versions import CURRENT_VERSION

from .conftest import simulate, times

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
