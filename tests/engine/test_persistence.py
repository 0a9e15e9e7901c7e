"""The live runtime stores a room's engine between ticks: a Simulation must survive a pickle
round trip mid-run and go on exactly as an uninterrupted run does."""

from __future__ import annotations

import pickle

import pytest

from controller.engine.scenario import load_scenario_file
from controller.engine.simulation import Simulation

from .conftest import OWN_SCENARIOS, SHARED_SCENARIOS


def scenario_files() -> list:
    files = sorted(OWN_SCENARIOS.glob("*.yaml"))
    if SHARED_SCENARIOS.is_dir():
        files += sorted(SHARED_SCENARIOS.glob("*.yaml"))
    return files


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_pickled_midway_simulation_continues_identically(path) -> None:
    scenario = load_scenario_file(str(path))
    whole = Simulation(scenario)
    whole.run(scenario.duration_ms)

    first = Simulation(load_scenario_file(str(path)))
    first.run(scenario.duration_ms // 3)
    events_before = list(first.timeline.events)
    first.timeline.events.clear()  # the runtime drains persisted events before snapshotting
    restored: Simulation = pickle.loads(pickle.dumps(first))
    restored.run(scenario.duration_ms)
    assert events_before + restored.timeline.events == whole.timeline.events


SHARED_TOLERATIONS = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: shared}
spec:
  apiServer: {defaultUnreachableTolerationSeconds: 120}
  nodes: [{name: n-1, zone: z}, {name: n-2, zone: z}]
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 5
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: own, namespace: default}
      spec:
        containers: [{name: c}]
        tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}]
"""


def test_pods_share_the_default_tolerations_which_nothing_changes_in_place() -> None:
    """DefaultTolerationSeconds gives every pod the same two objects (a snapshot pickles each
    once); a Toleration is frozen, so no pod can change another's."""
    import dataclasses

    from controller.engine.scenario import load_scenario

    sim = Simulation(load_scenario(SHARED_TOLERATIONS))
    sim.run(1000)
    pods = sim.cluster.pods
    web = [p for key, p in sorted(pods.items()) if key != "default/own"]
    assert len(web) == 5
    shared = {id(t) for p in web for t in p.tolerations}
    assert len(shared) == 2
    assert [(t.key, t.toleration_seconds) for t in web[0].tolerations] == [
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 120),
    ]
    # A pod with its own not-ready toleration gets only the unreachable one, the same object.
    own = pods["default/own"].tolerations
    assert [t.toleration_seconds for t in own] == [None, 120]
    assert own[1] is web[0].tolerations[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        own[1].toleration_seconds = 1
    restored = pickle.loads(pickle.dumps(sim))
    again = [p for key, p in sorted(restored.cluster.pods.items()) if key != "default/own"]
    assert len({id(t) for p in again for t in p.tolerations}) == 2
