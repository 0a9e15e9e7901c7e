"""Fuzz: the import of kubectl output (controller/kube_io/importer.py: ``kubectl get ... -o yaml|json``
and component configuration) with random documents and one random change to the test
fixtures' clusters. Each is accepted (a scenario the loader then takes, or refuses with a
path), or refused with a ScenarioError; nothing else is raised, nothing takes a second."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from controller.engine.scenario import ScenarioError, parse_scenario
from controller.kube_io.importer import import_cluster
from tests.fuzz.harness import EDGE_TEXT, JSON, SETTINGS, Tally, as_text, mutate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl"
CLUSTERS = {
    "three-zones.yaml": yaml.safe_load((FIXTURES / "three-zones.yaml").read_text()),
    "unusual.json": json.loads((FIXTURES / "unusual.json").read_text()),
}
KINDS = ["Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "List", "x"]


def _import(what: tuple[str, str | None]) -> None:
    text, flags = what
    mapping, _report = import_cluster(text, flags=flags)
    try:
        parse_scenario(mapping)
    except ScenarioError as exc:  # the import's own result must be a scenario
        raise AssertionError(f"the import gave a scenario the loader refuses: {exc}") from None


def test_fuzz_kubectl_output() -> None:
    tally = Tally("import: kubectl output", _import, ScenarioError)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        shape = data.draw(st.sampled_from(["mutated", "items", "any"]), label="shape")
        if shape == "mutated":
            doc = mutate(CLUSTERS[data.draw(st.sampled_from(sorted(CLUSTERS)))], data)
        elif shape == "items":
            items = data.draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "apiVersion": st.sampled_from(["v1", "apps/v1"]),
                            "kind": st.sampled_from(KINDS),
                        },
                        optional={"metadata": JSON, "spec": JSON, "status": JSON},
                    ),
                    max_size=4,
                ),
                label="items",
            )
            doc = {"apiVersion": "v1", "kind": "List", "items": items}
        else:
            doc = data.draw(JSON, label="doc")
        text = as_text(doc, data)
        flags = data.draw(st.one_of(st.none(), st.text(max_size=60), EDGE_TEXT), label="flags")
        tally.judge((text, flags))

    tally.fuzz(one)


def test_fuzz_long_lists_in_kubectl_output() -> None:
    """A fixture cluster with one item's taints, conditions, labels, annotations, owner
    references, containers, tolerations or node selector grown near or far past the cap
    (PER_OBJECT_CAPS): imported, or refused with the field's path, never slow (a node of
    12,500 taints took 25.8 s to import)."""
    import copy

    from controller.engine.scenario import PER_OBJECT_CAPS

    places = {
        "Node": {
            "taints": ["spec", "taints"],
            "conditions": ["status", "conditions"],
            "labels": ["metadata", "labels"],
            "annotations": ["metadata", "annotations"],
        },
        "Pod": {
            "containers": ["spec", "containers"],
            "tolerations": ["spec", "tolerations"],
            "nodeSelector": ["spec", "nodeSelector"],
            "ownerReferences": ["metadata", "ownerReferences"],
            "annotations": ["metadata", "annotations"],
        },
    }

    def make(field: str, n: int, data: st.DataObject) -> object:
        if data.draw(st.booleans(), label="random items"):
            return [data.draw(JSON, label="item")] * n  # one random value, n times
        if field in ("labels", "annotations", "nodeSelector"):
            return {f"k{i}": "v" for i in range(n)}
        if field == "taints":
            return [{"key": f"k{i}", "effect": "NoExecute"} for i in range(n)]
        if field == "conditions":
            return [{"type": f"C{i}", "status": "False"} for i in range(n)]
        if field == "tolerations":
            return [{"key": f"k{i}", "operator": "Exists"} for i in range(n)]
        if field == "ownerReferences":
            return [{"kind": "ReplicaSet", "name": f"r{i}", "uid": f"u{i}"} for i in range(n)]
        return [{"name": f"c{i}", "image": "x"} for i in range(n)]

    tally = Tally("import: long per-object lists", _import, ScenarioError)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        doc = copy.deepcopy(CLUSTERS[data.draw(st.sampled_from(sorted(CLUSTERS)), label="cluster")])
        items = [i for i in doc.get("items", []) if i.get("kind") in places]
        if not items:
            return
        item = data.draw(st.sampled_from(items), label="item")
        field = data.draw(st.sampled_from(sorted(places[item["kind"]])), label="field")
        most = PER_OBJECT_CAPS[field][0]
        n = data.draw(
            st.one_of(st.integers(most - 2, most + 2), st.integers(0, 200 * most)), label="n"
        )
        at = item
        path = places[item["kind"]][field]
        for key in path[:-1]:
            if not isinstance(at.get(key), dict):
                at[key] = {}
            at = at[key]
        at[path[-1]] = make(field, n, data)
        tally.judge((as_text(doc, data), None))

    tally.fuzz(one)
