"""Per-object lists capped where they enter (issue #35): a node's taints (a Taint fault's list,
and what Taint faults add up to on one node), a pod's tolerations, containers, init
containers, volumes, node selector, owner references, an object's labels and annotations, a
selector's matchLabels, a node's images; in a scenario, a live action, an Apply and a kubectl
import alike. At the cap it is accepted; one more is refused with the field's path and the cap.

Before, a 464 KB List with one node of 12,500 NoExecute taints was imported and built in the
request (25.8 s), and 10,000 NoSchedule taints kept a worker busy 70 s in
Cluster.swap_node_taints, which is linear now."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from controller.engine.objects import Taint
from controller.engine.scenario import PER_OBJECT_CAPS, ScenarioError, load_scenario
from controller.engine.scenario.fault_specs import parse_fault
from controller.engine.simulation import Simulation
from controller.kube_io.importer import import_cluster

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"nodeName": "a-1", "containers": [{"name": "app"}]},
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "api", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "api"}},
        "template": {
            "metadata": {"labels": {"app": "api"}},
            "spec": {"containers": [{"name": "c"}]},
        },
    },
}


def scenario(
    nodes: list[dict[str, Any]] | None = None,
    objects: list[dict[str, Any]] | None = None,
    faults: list[dict[str, Any]] | None = None,
) -> str:
    spec = {
        "nodes": nodes or [{"name": "a-1"}],
        "objects": objects or [],
        "faults": faults or [],
    }
    doc = {"apiVersion": "playground/v1alpha1", "kind": "Scenario", "metadata": {"name": "c"}}
    return json.dumps({**doc, "spec": spec})


def _labels(n: int) -> dict[str, str]:
    return {f"l{i}": "v" for i in range(n)}


def _taints(n: int) -> list[dict[str, str]]:
    return [{"key": f"k{i}", "effect": "NoSchedule"} for i in range(n)]


def _pod(path: list[str], value: Any) -> dict[str, Any]:
    pod = copy.deepcopy(POD)
    at = pod
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return pod


def _deployment_selector(n: int) -> dict[str, Any]:
    d = copy.deepcopy(DEPLOYMENT)
    d["spec"]["selector"]["matchLabels"] = _labels(n)
    d["spec"]["template"]["metadata"]["labels"] = _labels(n)
    return d


# field -> (make the scenario with n items, the refused path)
SCENARIO_CASES: dict[str, tuple[Callable[[int], str], str]] = {
    "taints": (
        lambda n: scenario(
            faults=[{"at": "1s", "type": "Taint", "node": "a-1", "taints": _taints(n)}]
        ),
        "spec.faults[0].taints",
    ),
    "labels": (
        lambda n: scenario(nodes=[{"name": "a-1", "labels": _labels(n)}]),
        "spec.nodes[0].labels",
    ),
    "images": (
        lambda n: scenario(
            nodes=[{"name": "a-1", "images": [{"name": f"i{i}", "size": "1Mi"} for i in range(n)]}]
        ),
        "spec.nodes[0].images",
    ),
    "tolerations": (
        lambda n: scenario(
            objects=[
                _pod(
                    ["spec", "tolerations"],
                    [{"key": f"k{i}", "operator": "Exists"} for i in range(n)],
                )
            ]
        ),
        "spec.objects[0].spec.tolerations",
    ),
    "containers": (
        lambda n: scenario(
            objects=[_pod(["spec", "containers"], [{"name": f"c{i}"} for i in range(n)])]
        ),
        "spec.objects[0].spec.containers",
    ),
    "initContainers": (
        lambda n: scenario(
            objects=[_pod(["spec", "initContainers"], [{"name": f"i{i}"} for i in range(n)])]
        ),
        "spec.objects[0].spec.initContainers",
    ),
    "volumes": (
        lambda n: scenario(
            objects=[_pod(["spec", "volumes"], [{"name": f"v{i}"} for i in range(n)])]
        ),
        "spec.objects[0].spec.volumes",
    ),
    "nodeSelector": (
        lambda n: scenario(objects=[_pod(["spec", "nodeSelector"], _labels(n))]),
        "spec.objects[0].spec.nodeSelector",
    ),
    "annotations": (
        lambda n: scenario(objects=[_pod(["metadata", "annotations"], _labels(n))]),
        "spec.objects[0].metadata.annotations",
    ),
    "ownerReferences": (
        lambda n: scenario(
            objects=[
                _pod(
                    ["metadata", "ownerReferences"],
                    [{"kind": "ReplicaSet", "name": f"r{i}", "uid": f"u{i}"} for i in range(n)],
                )
            ]
        ),
        "spec.objects[0].metadata.ownerReferences",
    ),
    "matchLabels": (
        lambda n: scenario(objects=[_deployment_selector(n)]),
        "spec.objects[0].spec.selector.matchLabels",
    ),
}


def _refusal(field: str, path: str) -> str:
    most, what = PER_OBJECT_CAPS[field]
    return f"{path}: {most + 1} items, at most {most} {what}"


@pytest.mark.parametrize("field", list(SCENARIO_CASES))
def test_a_scenario_list_at_its_cap_loads_one_more_is_refused(field: str) -> None:
    make, path = SCENARIO_CASES[field]
    most, _what = PER_OBJECT_CAPS[field]
    load_scenario(make(most))
    if field == "labels":  # a node's labels: the three the kubelet sets come on top
        load_scenario(make(most - 3))
    with pytest.raises(ScenarioError) as exc:
        load_scenario(make(most + 1))
    assert str(exc.value) == _refusal(field, path)


def test_every_cap_is_tested() -> None:
    assert set(SCENARIO_CASES) | {"conditions"} == set(PER_OBJECT_CAPS)


def test_a_pod_template_label_map_is_capped_too() -> None:
    d = copy.deepcopy(DEPLOYMENT)
    d["spec"]["template"]["metadata"]["annotations"] = _labels(129)
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(objects=[d]))
    assert str(exc.value) == _refusal(
        "annotations", "spec.objects[0].spec.template.metadata.annotations"
    )


def _live_sim() -> Simulation:
    sim = Simulation(load_scenario(scenario(nodes=[{"name": "a-1"}, {"name": "a-2"}])))
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


def test_a_live_taint_action_and_an_apply_are_capped_where_they_enter() -> None:
    sim = _live_sim()
    with pytest.raises(ScenarioError) as exc:
        _action(sim, {"type": "Taint", "node": "a-1", "taints": _taints(65)})
    assert str(exc.value) == _refusal("taints", "action.taints")
    with pytest.raises(ScenarioError) as exc:
        _action(
            sim,
            {
                "type": "Apply",
                "object": _pod(["spec", "tolerations"], [{"operator": "Exists"}] * 65),
            },
        )
    assert str(exc.value) == _refusal("tolerations", "action.object.spec.tolerations")


def test_taint_faults_cannot_add_up_past_the_cap_on_one_node() -> None:
    """Each fault's list is within the cap, but the node would carry more: the fault that
    would pass it is refused whole (a live action: refused_actions; a scenario's own: a
    FaultRefused event), the others apply."""
    sim = _live_sim()
    own = len(sim.cluster.nodes["a-1"].taints)  # not-ready:NoSchedule until its first status
    most = PER_OBJECT_CAPS["taints"][0]
    first = [{"key": f"a{i}", "effect": "NoSchedule"} for i in range(most - own)]
    second = [{"key": "b", "effect": "NoSchedule"}]
    again = first[:3]  # taints the node has: nothing added, accepted
    for i, taints in enumerate((first, second, again)):
        fault = _action(sim, {"type": "Taint", "node": "a-1", "taints": taints})
        sim.sched.schedule(sim.now_ms + 1000 * (i + 1), 0, sim.apply_action, fault, i + 1)
    sim.run(10_000)
    node = sim.cluster.nodes["a-1"]
    assert sim.refused_actions == {
        2: f"action.taints: node a-1 would carry {most + 1} taints, at most {most} taints per node"
    }
    assert len([t for t in node.taints if t.key.startswith("a")]) == most - own
    assert not node.has_taint("b", "NoSchedule")
    # The other node is not concerned.
    fault = _action(sim, {"type": "Taint", "node": "a-2", "taints": second})
    sim.apply_action(fault, 9)
    assert 9 not in sim.refused_actions and sim.cluster.nodes["a-2"].has_taint("b", "NoSchedule")


def test_swap_node_taints_keeps_the_order_and_timeline_of_add_or_update_then_remove() -> None:
    """The linear swap gives what the list version gave: an updated value moves the taint to
    the end with the new time, an unchanged one is kept as it was (no event), a removed one
    goes, in the order given."""
    sim = _live_sim()
    node = sim.cluster.nodes["a-2"]
    base = [t.key for t in node.taints]
    c = sim.cluster
    c.swap_node_taints(node, [Taint("x", "NoSchedule", "1"), Taint("y", "NoExecute", "1")], [], 1)
    c.swap_node_taints(
        node,
        [Taint("x", "NoSchedule", "2"), Taint("y", "NoExecute", "1"), Taint("z", "NoSchedule")],
        [Taint("y", "NoExecute"), Taint("nope", "NoSchedule")],
        2,
    )
    assert [(t.key, t.value, t.time_added_ms) for t in node.taints if t.key not in base] == [
        ("x", "2", 2),
        ("z", "", 2),
    ]
    swaps = [
        (e["t"], e["type"], e["key"])
        for e in sim.timeline.events
        if e["type"] in ("TaintAdded", "TaintRemoved") and e.get("node") == "a-2" and e["t"] > 0
    ]
    assert swaps == [
        (1, "TaintAdded", "x"),
        (1, "TaintAdded", "y"),
        (2, "TaintAdded", "x"),
        (2, "TaintAdded", "z"),
        (2, "TaintRemoved", "y"),
    ]


# -- the kubectl import: refused before the List's items are read --------------------------------
def _node_item(**spec_status: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {}},
        "spec": {},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    for where, value in spec_status.items():
        part, key = where.split("__")
        item[part][key] = value
    return item


IMPORT_CASES = [
    (
        "taints",
        _node_item(spec__taints=[{"key": f"k{i}", "effect": "NoExecute"} for i in range(65)]),
        "items[0].spec.taints",
    ),
    (
        "conditions",
        _node_item(status__conditions=[{"type": f"C{i}", "status": "False"} for i in range(65)]),
        "items[0].status.conditions",
    ),
    ("labels", _node_item(metadata__labels=_labels(129)), "items[0].metadata.labels"),
    (
        "annotations",
        _node_item(metadata__annotations=_labels(129)),
        "items[0].metadata.annotations",
    ),
    (
        "tolerations",
        {**POD, "spec": {**POD["spec"], "tolerations": [{"operator": "Exists"}] * 65}},
        "items[0].spec.tolerations",
    ),
    (
        "containers",
        {**POD, "spec": {"containers": [{"name": f"c{i}"} for i in range(65)]}},
        "items[0].spec.containers",
    ),
    (
        "nodeSelector",
        {**POD, "spec": {**POD["spec"], "nodeSelector": _labels(65)}},
        "items[0].spec.nodeSelector",
    ),
]


@pytest.mark.parametrize(("field", "item", "path"), IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_the_import_refuses_an_item_over_a_cap_naming_it(
    field: str, item: dict[str, Any], path: str
) -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [item]})
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert str(exc.value) == _refusal(field, path)


def test_the_issues_12500_taints_are_refused_at_the_import() -> None:
    item = _node_item(spec__taints=[{"key": f"k{i}", "effect": "NoExecute"} for i in range(12_500)])
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [item]})
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert str(exc.value) == "items[0].spec.taints: 12500 items, at most 64 taints per node"


def test_a_node_at_the_cap_imports() -> None:
    taints = [{"key": f"k{i}", "effect": "NoExecute"} for i in range(64)]
    text = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [_node_item(spec__taints=taints)]}
    )
    scenario_doc, _report = import_cluster(text)
    assert len(scenario_doc["spec"]["faults"][0]["taints"]) == 64
    load_scenario(json.dumps(scenario_doc))
