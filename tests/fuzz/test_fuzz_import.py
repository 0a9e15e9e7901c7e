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
