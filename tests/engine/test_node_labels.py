"""The Label fault (``kubectl label node X key=value key2-``, issue #36): a node's labels change
at its instant, checked as kube-apiserver checks labels, capped per node; the controllers that
read labels see the change (the NodeLifecycleController's exclude-disruption label at its next
monitor pass, the scheduler's nodeSelector); the zone labels are refused (the node keeps the
zone it was created in)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.scenario import PER_OBJECT_CAPS, ScenarioError, load_scenario
from controller.engine.scenario.fault_specs import parse_fault
from controller.engine.simulation import Simulation
from controller.engine.versions import CURRENT_VERSION

EXCLUDE = "node.kubernetes.io/exclude-disruption"


def _scenario(version: str, a3_labels: str = "{}", faults: str = "", objects: str = "") -> str:
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "{version}"
  nodes:
    - {{name: a-1, zone: a}}
    - {{name: a-2, zone: a}}
    - {{name: a-3, zone: a, labels: {a3_labels}}}
    - {{name: a-4, zone: a}}
    - {{name: b-1, zone: b}}
    - {{name: b-2, zone: b}}
{objects}  faults:
    - {{at: 100s, type: StopKubelet, node: a-1}}
    - {{at: 100s, type: StopKubelet, node: a-2}}
    - {{at: 100s, type: StopKubelet, node: a-3}}
{faults}"""


def _zone_a_states(text: str) -> list[str]:
    sim = Simulation(load_scenario(text))
    sim.run(240_000)
    return [
        e["state"] for e in sim.timeline.events if e["type"] == "ZoneState" and e["zone"] == "a"
    ]


LABEL_A3 = f'    - {{at: 50s, type: Label, node: a-3, labels: {{"{EXCLUDE}": ""}}}}\n'
UNLABEL_A3 = f'    - {{at: 50s, type: Label, node: a-3, labels: {{"{EXCLUDE}": null}}}}\n'


def test_the_exclude_disruption_label_counts_from_the_next_monitor_pass() -> None:
    """Three of zone a's four nodes go silent: 3/4 NotReady is a PartialDisruption
    (ComputeZoneState: more than 2 and at least 0.55). Labelled at 50 s with
    node.kubernetes.io/exclude-disruption, a-3 is no longer counted (isNodeExcludedFromDisruption
    Checks reads the node's labels at every pass): 2 of 3, Normal. Removing the label from a
    node created with it counts it again. Under 1.18 the label needs the NodeDisruptionExclusion
    gate (alpha, off): it changes nothing."""
    assert "PartialDisruption" in _zone_a_states(_scenario(CURRENT_VERSION))
    assert "PartialDisruption" not in _zone_a_states(_scenario(CURRENT_VERSION, faults=LABEL_A3))
    labelled = f'{{"{EXCLUDE}": ""}}'
    assert "PartialDisruption" not in _zone_a_states(_scenario(CURRENT_VERSION, labelled))
    assert "PartialDisruption" in _zone_a_states(
        _scenario(CURRENT_VERSION, labelled, faults=UNLABEL_A3)
    )
    assert "PartialDisruption" in _zone_a_states(_scenario("1.18", faults=LABEL_A3))


def test_a_label_fault_sets_and_removes_and_the_timeline_says_so() -> None:
    fault = (
        '    - {at: 20s, type: Label, node: b-1, labels: {tier: gold, "example.com/disk": ssd}}\n'
    )
    fault += "    - {at: 30s, type: Label, node: b-1, labels: {tier: null}}\n"
    sim = Simulation(load_scenario(_scenario(CURRENT_VERSION, faults=fault)))
    sim.run(25_000)
    assert sim.cluster.nodes["b-1"].labels["tier"] == "gold"
    sim.run(35_000)
    labels = sim.cluster.nodes["b-1"].labels
    assert "tier" not in labels and labels["example.com/disk"] == "ssd"
    assert labels["topology.kubernetes.io/zone"] == "b"  # the kubelet's own stay
    shown = [e for e in sim.timeline.events if e["type"] == "Fault" and e["fault"] == "Label"]
    assert [(e["t"], e["node"], e["labels"]) for e in shown] == [
        (20_000, "b-1", {"tier": "gold", "example.com/disk": "ssd"}),
        (30_000, "b-1", {"tier": None}),
    ]


def test_a_pending_pod_is_scheduled_once_a_node_gets_its_label() -> None:
    """A pod whose nodeSelector no node matches stays Pending; the label's node update wakes
    the scheduler (NodeLabelChange), which binds it there."""
    pod = """  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: picky, namespace: default}
      spec:
        nodeSelector: {disk: ssd}
        containers: [{name: c, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
"""
    fault = "    - {at: 30s, type: Label, node: b-2, labels: {disk: ssd}}\n"
    sim = Simulation(load_scenario(_scenario(CURRENT_VERSION, faults=fault, objects=pod)))
    sim.run(29_000)
    assert sim.cluster.pods["default/picky"].node_name in ("", None)
    sim.run(60_000)
    assert sim.cluster.pods["default/picky"].node_name == "b-2"


def _live_sim() -> Simulation:
    sim = Simulation(load_scenario(_scenario(CURRENT_VERSION)))
    sim.run(0)
    return sim


def _action(sim: Simulation, raw: dict[str, Any]) -> Any:
    """A live action as the room validates it (rooms/actions -> parse_fault, path "action")."""
    return parse_fault(
        {**raw, "at": 0},
        None,
        sim.config.kubelet,
        sim.scenario.kubelet_raw,
        "action",
        sim.config.profile,
    )


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        pytest.param(
            {"topology.kubernetes.io/zone": "b"},
            "action.labels.topology.kubernetes.io/zone: the simulated cluster keeps a node in "
            "the zone it was created in: a zone or region label cannot change (add a node in "
            "the other zone instead)",
            id="the zone label",
        ),
        pytest.param(
            {"failure-domain.beta.kubernetes.io/region": None},
            "action.labels.failure-domain.beta.kubernetes.io/region: the simulated cluster",
            id="the beta region label, removed",
        ),
        pytest.param(
            {"bad key": "x"},
            'action.labels.bad key: "bad key": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            id="a key that is not a qualified name",
        ),
        pytest.param(
            {"Example.com/x": "y"},
            'action.labels.Example.com/x: "Example.com/x": prefix part a DNS-1123 subdomain',
            id="an upper-case prefix",
        ),
        pytest.param(
            {"x": "v" * 64},
            f'action.labels.x: "{"v" * 64}": must be no more than 63 characters',
            id="a 64-character value",
        ),
        pytest.param({"x": "-v"}, 'action.labels.x: "-v": a valid label', id="a bad value"),
        pytest.param({"x": True}, "action.labels.x: label values must be strings", id="a boolean"),
        pytest.param({}, "action.labels: must name at least one label", id="none"),
        pytest.param(
            {f"k{i}": "v" for i in range(129)},
            "action.labels: 129 items, at most 128 labels per object",
            id="over the cap in one fault",
        ),
    ],
)
def test_a_label_fault_refuses_what_kube_apiserver_refuses(labels: Any, why: str) -> None:
    sim = _live_sim()
    with pytest.raises(ScenarioError) as exc:
        _action(sim, {"type": "Label", "node": "a-1", "labels": labels})
    assert str(exc.value).startswith(why), str(exc.value)


def test_label_faults_cannot_add_up_past_the_cap_on_one_node() -> None:
    sim = _live_sim()
    own = len(sim.cluster.nodes["a-1"].labels)
    most = PER_OBJECT_CAPS["labels"][0]
    first = {f"l{i}": "v" for i in range(most - own)}
    for i, labels in enumerate((first, {"one-more": "v"}, {"l0": None}, {"one-more": "v"})):
        fault = _action(sim, {"type": "Label", "node": "a-1", "labels": labels})
        sim.sched.schedule(sim.now_ms + 1000 * (i + 1), 0, sim.apply_action, fault, i + 1)
    sim.run(10_000)
    assert sim.refused_actions == {
        2: f"action.labels: node a-1 would carry {most + 1} labels, at most {most} labels per "
        "object"
    }
    labels = sim.cluster.nodes["a-1"].labels
    assert len(labels) == most and "l0" not in labels and labels["one-more"] == "v"
