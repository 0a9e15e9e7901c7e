"""The downloads written with libyaml's emitter (safe_yaml.FAST_DUMPER) are the text PyYAML's
own safe emitter writes: events.yaml and manifests.yaml of built-in scenarios, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from controller.engine import safe_yaml
from controller.engine.scenario import load_scenario_file
from controller.engine.simulation import Simulation
from controller.engine.timeline import to_public
from controller.kube_io import exports

SCENARIOS = Path(__file__).resolve().parents[2] / "controller" / "scenarios"


@pytest.mark.parametrize("name", ["00-demo.yaml", "25-lesson-node-failure-tour.yaml"])
def test_events_and_manifests_are_pyyamls_text(name: str) -> None:
    path = SCENARIOS / name
    scenario = load_scenario_file(str(path))
    sim = Simulation(scenario)
    sim.run(scenario.duration_ms // 2)
    events = [to_public(e) for e in sim.timeline.events]
    doc = exports.timeline_events(events)
    assert exports.timeline_events_yaml(events) == yaml.safe_dump(doc, sort_keys=False, width=120)
    raw = safe_yaml.load_all(path.read_text())[0]
    manifests = exports.cluster_manifests(sim, raw)
    assert exports.cluster_manifests_yaml(sim, raw) == yaml.safe_dump_all(
        manifests, sort_keys=False
    )
    assert safe_yaml.FAST_DUMPER is getattr(yaml, "CSafeDumper", yaml.SafeDumper)
