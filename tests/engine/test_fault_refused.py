"""A scenario's own fault whose target a live action removed (issue #35, "rooms that cannot be
bricked"): the fault is refused at its instant with a ``FaultRefused`` timeline event (the
fault as written and ``error``, its path and reason), nothing of it is applied, and the room
goes on: the faults and controllers after it run at their times, as without it.

Before, the fault's ScenarioError left the engine's run: the room's tick failed and paused
the room, and every resume failed the same way until a rewind."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from controller.engine.expect import check_all
from controller.engine.scenario import load_scenario
from controller.engine.scenario.fault_specs import parse_fault
from controller.engine.simulation import Simulation
from controller.engine.timeline import format_table, to_json

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: refused}
spec:
  kubernetesVersion: "1.18"
  duration: 200s
  nodes:
    - generate: {count: 3, namePrefix: a-, zone: a}
    - {name: b-1, labels: {topology.kubernetes.io/zone: b}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-1, namespace: default}
      spec: {nodeName: a-2, containers: [{name: app}]}
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api, namespace: default}
      spec:
        replicas: 1
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec: {containers: [{name: app}]}
  faults:
%s
    - {at: 150s, type: StopKubelet, node: a-3}
"""

# (case, the scenario's fault at 62 s, the live action before it (at, fault), the refusal's error)
CASES = [
    (
        "node deleted, StopKubelet",
        "{at: 62s, type: StopKubelet, node: a-2}",
        (30_000, {"type": "DeleteNode", "node": "a-2"}),
        'spec.faults[0].node: unknown node "a-2"',
    ),
    (
        "node deleted, Cordon",
        "{at: 62s, type: Cordon, node: a-2}",
        (30_000, {"type": "DeleteNode", "node": "a-2"}),
        'spec.faults[0].node: unknown node "a-2"',
    ),
    (
        "node deleted, Taint",
        "{at: 62s, type: Taint, node: a-2, key: k, effect: NoSchedule}",
        (61_999, {"type": "DeleteNode", "node": "a-2"}),
        'spec.faults[0].node: unknown node "a-2"',
    ),
    (
        "pod deleted, SetUsage",
        "{at: 62s, type: SetUsage, pod: default/web-1, memory: 1Gi}",
        (10_000, {"type": "DeletePod", "pod": "default/web-1", "force": True}),
        'spec.faults[0].pod: unknown pod "default/web-1"',
    ),
    (
        "pod deleted, DeletePod",
        "{at: 62s, type: DeletePod, pod: default/web-1}",
        (10_000, {"type": "DeletePod", "pod": "default/web-1", "force": True}),
        'spec.faults[0].pod: unknown pod "default/web-1"',
    ),
    (
        "node added live first, AddNode",
        "{at: 62s, type: AddNode, node: {name: c-1}}",
        (20_000, {"type": "AddNode", "node": {"name": "c-1"}}),
        'spec.faults[0].node.name: node "c-1" already exists',
    ),
    (
        "zone's last node deleted, ZoneOutage",
        "{at: 62s, type: ZoneOutage, zone: b}",
        (5_000, {"type": "DeleteNode", "node": "b-1"}),
        'spec.faults[0].zone: no node is in zone "b"',
    ),
]


def _sim(fault: str) -> Simulation:
    return Simulation(load_scenario(textwrap.dedent(SCENARIO % f"    - {fault}")))


def _act(sim: Simulation, at_ms: int, raw: dict[str, Any], action_id: int = 1) -> None:
    """A live action as a room schedules one (rooms/runtime._schedule_action)."""
    from controller.engine.core import Phase

    fault = parse_fault(
        {**raw, "at": at_ms / 1000},
        None,
        sim.config.kubelet,
        sim.scenario.kubelet_raw,
        "action",
        sim.config.profile,
    )
    sim.sched.schedule(at_ms, Phase.FAULT, sim.apply_action, fault, action_id)


@pytest.mark.parametrize(
    ("fault", "action", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_fault_whose_target_is_gone_is_refused_and_the_room_goes_on(
    fault: str, action: tuple[int, dict[str, Any]], error: str
) -> None:
    sim = _sim(fault)
    sim.run(0)
    _act(sim, *action)
    sim.run(200_000)  # raised ScenarioError at 62 s before
    assert not sim.refused_actions  # the live action itself applied
    refused = [e for e in sim.timeline.events if e["type"] == "FaultRefused"]
    assert len(refused) == 1
    e = refused[0]
    assert e["t"] == 62_000
    assert e["error"] == error
    written = load_scenario(textwrap.dedent(SCENARIO % f"    - {fault}")).faults[0]
    assert e["fault"] == written.type
    for k in ("node", "pod", "zone"):
        if k in written.args and isinstance(e[k], str):
            assert e[k] == written.args[k]
    # Nothing of it applied: no Fault event at 62 s for it; the run went on past it.
    assert [x["t"] for x in sim.timeline.events if x["type"] == "Fault"] == [action[0], 150_000]
    assert sim.now_ms == 200_000
    assert sim.kubelets["a-3"].alive is False  # the fault at 150 s ran
    # The headless CLI's two formats say it.
    assert json.loads(to_json(e)) == {**{k: v for k, v in e.items() if k != "t"}, "t": 62.0}
    (line,) = format_table([e])
    assert line.startswith("01:02.000  FaultRefused") and f"refused: {error}" in line


def test_without_the_action_the_fault_applies() -> None:
    sim = _sim("{at: 62s, type: StopKubelet, node: a-2}")
    sim.run(200_000)
    assert not [e for e in sim.timeline.events if e["type"] == "FaultRefused"]
    assert [e["t"] for e in sim.timeline.events if e["type"] == "Fault"] == [62_000, 150_000]


def test_refused_faults_can_be_expected() -> None:
    """``spec.expect`` takes the new type with the fault's fields and its error."""
    text = textwrap.dedent(SCENARIO % "    - {at: 62s, type: StopKubelet, node: a-2}")
    text += (
        "  expect:\n"
        "    - {type: FaultRefused, fault: StopKubelet, node: a-2, at: 62,"
        ' error: "spec.faults[0].node: unknown node \\"a-2\\""}\n'
    )
    scenario = load_scenario(text)
    sim = Simulation(scenario)
    sim.run(0)
    _act(sim, 30_000, {"type": "DeleteNode", "node": "a-2"})
    sim.run(scenario.duration_ms)
    assert check_all(scenario.expect, sim.timeline.events) == []
