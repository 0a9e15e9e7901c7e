"""Same scenario twice => byte-identical jsonl; the engine imports nothing from the outside."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from controller.engine import cli

from .conftest import OWN_SCENARIOS, SHARED_SCENARIOS

ENGINE = Path(__file__).resolve().parents[2] / "controller" / "engine"
BANNED_MODULES = {"django", "celery", "channels", "redis", "time", "datetime", "uuid"}


def all_scenarios() -> list[Path]:
    files = sorted(OWN_SCENARIOS.glob("*.yaml"))
    if SHARED_SCENARIOS.is_dir():
        files += sorted(SHARED_SCENARIOS.glob("*.yaml"))
    return files


@pytest.mark.parametrize("path", all_scenarios(), ids=lambda p: p.name)
def test_same_scenario_twice_gives_identical_jsonl(path: Path) -> None:
    outs = []
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        assert cli.run(str(path), None, "jsonl", None, False, out, err) == 0, err.getvalue()
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    assert outs[0].count("\n") > 0


def test_engine_imports_no_framework_and_no_wall_clock() -> None:
    offenders = []
    for py in ENGINE.rglob("*.py"):
        tree = ast.parse(py.read_text(), str(py))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in BANNED_MODULES:
                    offenders.append(f"{py.relative_to(ENGINE)}: {n}")
    assert offenders == []


def test_engine_uses_only_seeded_randomness() -> None:
    """``random`` may appear only as ``random.Random(seed)`` owned by the simulation."""
    offenders = []
    for py in ENGINE.rglob("*.py"):
        tree = ast.parse(py.read_text(), str(py))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
                and node.attr != "Random"
            ):
                offenders.append(f"{py.relative_to(ENGINE)}:{node.lineno} random.{node.attr}")
    assert offenders == []


@pytest.mark.parametrize("path", all_scenarios(), ids=lambda p: p.name)
def test_every_event_carries_exactly_the_fields_of_the_design(path: Path) -> None:
    from controller.engine.scenario import load_scenario_file
    from controller.engine.simulation import Simulation
    from controller.engine.timeline import EVENT_FIELDS, OPTIONAL_EVENT_FIELDS

    scenario = load_scenario_file(str(path))
    sim = Simulation(scenario)
    sim.run(scenario.duration_ms)
    for event in sim.timeline.events:
        fields = set(event) - {"t", "type"}
        if event["type"] == "Fault":
            assert "fault" in fields
            continue
        required = set(EVENT_FIELDS[event["type"]])
        optional = set(OPTIONAL_EVENT_FIELDS.get(event["type"], ()))
        assert required <= fields <= required | optional, event
