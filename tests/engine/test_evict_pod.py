"""EvictPod (issue #36: ``kubectl drain`` through a room's Kubernetes API): a policy/v1
Eviction as EvictionREST.Create makes it, without PodDisruptionBudgets: DisruptionTarget
(EvictionByEvictionAPI) from 1.26 (PodDisruptionConditions), then a graceful DELETE."""

from __future__ import annotations

import pytest

from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: evict}}
spec:
  kubernetesVersion: "{release}"
  duration: 120s
  nodes:
    - generate: {{count: 2, namePrefix: a-, zone: a}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {{name: web-1, namespace: default}}
      spec:
        nodeName: a-1
        containers: [{{name: app}}]
  faults:
    - {{at: 20s, type: EvictPod, pod: default/web-1{grace}}}
"""


def _events(release: str, grace: str = "") -> list[dict]:
    sim = Simulation(load_scenario(SCENARIO.format(release=release, grace=grace)))
    sim.run(120_000)
    return [e for e in sim.timeline.events if e.get("pod") == "default/web-1"]


def test_an_eviction_marks_the_pod_then_deletes_it_gracefully() -> None:
    events = _events("1.34")
    target = next(e for e in events if e["type"] == "PodDisruptionTarget")
    assert (target["t"], target["reason"], target["message"]) == (
        20_000,
        "EvictionByEvictionAPI",
        "Eviction API: evicting",
    )
    deleted = next(e for e in events if e["type"] == "PodDeleted")
    assert (deleted["t"], deleted["reason"]) == (20_000, "EvictionByEvictionAPI")
    removed = next(e for e in events if e["type"] == "PodRemoved")
    assert removed["t"] > 20_000  # the kubelet stops it within its grace period first


def test_before_pod_disruption_conditions_there_is_no_condition() -> None:
    events = _events("1.18")
    assert not [e for e in events if e["type"] == "PodDisruptionTarget"]
    assert [e["t"] for e in events if e["type"] == "PodDeleted"] == [20_000]


@pytest.mark.parametrize("grace", ["-1", "x"])
def test_a_bad_grace_period_names_the_field(grace: str) -> None:
    from controller.engine.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="gracePeriodSeconds"):
        _events("1.34", f", gracePeriodSeconds: {grace}")
