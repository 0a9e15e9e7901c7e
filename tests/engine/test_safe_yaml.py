"""Issue #24, item 1: the one safe YAML loader (controller/engine/safe_yaml.py) refuses an alias
bomb, deep nesting, too many nodes and an oversized text in milliseconds, naming the limit, at
every entry point that reads YAML (scenario, kubectl import); ordinary documents read exactly
as yaml.safe_load reads them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from controller.engine import safe_yaml
from controller.engine.scenario import ScenarioError, load_scenario
from controller.kube_io.documents import read_documents

SCENARIOS = Path(__file__).resolve().parents[2] / "controller" / "scenarios"


def bomb(levels: int, width: int = 9) -> str:
    """Each level a list of ``width`` aliases of the level below: width**levels nodes."""
    lines = ['l0: &l0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def pod_annotation_bomb(levels: int = 9) -> str:
    """The issue's attack: about 800 bytes, a Pod whose annotations nest anchors and aliases
    (each level x9); the manifest reader turns non-string annotation values into text."""
    nest = ['      v0: &v0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        nest.append(f"      v{i}: &v{i} [" + ",".join([f"*v{i - 1}"] * 9) + "]")
    return (
        "apiVersion: playground/v1alpha1\nkind: Scenario\nmetadata: {name: b}\n"
        "spec:\n  kubernetesVersion: '1.34'\n  nodes: [{name: a-1}]\n  objects:\n"
        "  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n"
        "      annotations:\n" + "\n".join("  " + line for line in nest) + "\n"
        "    spec: {containers: [{name: c}]}\n"
    )


@pytest.mark.parametrize(
    ("text", "limits", "path", "why"),
    [
        pytest.param(
            bomb(9), {}, "l4[5]", "aliases expand to", id="nine levels of nine aliases (387M nodes)"
        ),
        pytest.param(bomb(5), {}, "l4[5]", "an alias bomb", id="five levels: 59,000 nodes"),
        pytest.param(
            bomb(30, width=2), {}, "l11[1]", "an alias bomb", id="thirty levels of two aliases"
        ),
        pytest.param(
            "a: " + "[" * 100_000 + "]" * 100_000,
            {},
            "",
            "nested deeper than 64 levels at line 1",
            id="100,000 levels of flow lists",
        ),
        pytest.param(
            "- x\n" * 5000, {"max_nodes": 1000}, "[999]", "more than 1000 nodes", id="node count"
        ),
        pytest.param(
            "a: &a x\nb: [" + ", ".join(["*a"] * 50) + "]\n",
            {"max_aliases": 20},
            "b[20]",
            "more than 20 aliases",
            id="alias count",
        ),
        pytest.param(
            "x: " + "y" * 2000, {"max_bytes": 1000}, "", "2003 bytes, more than 1000", id="size"
        ),
        pytest.param(
            "a: 1\nb: \ud800\n",
            {},
            "",
            "a lone surrogate (\\ud800) at line 2 is not text",
            id="a lone surrogate in the text (libyaml reads UTF-8; found by the fuzz target)",
        ),
        pytest.param(
            "a: 1\nb: {c: 2, c: 3}\n",
            {"unique_keys": True},
            "b.c",
            "duplicate key (again at line 2)",
            id="a duplicate key, when asked",
        ),
    ],
)
def test_over_a_limit_is_refused_in_milliseconds_naming_it(
    text: str, limits: dict[str, int], path: str, why: str
) -> None:
    start = time.perf_counter()
    with pytest.raises(safe_yaml.YamlLimitError) as err:
        safe_yaml.load_all(text, **limits)
    assert time.perf_counter() - start < 0.5
    assert err.value.path == path
    assert why in err.value.why


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(bomb(3), id="three levels of nine aliases (729 nodes: harmless)"),
        pytest.param("a: &a {x: 1}\nb: *a\nc: [*a, *a]\n", id="a few aliases"),
        pytest.param("---\na: 1\n---\n---\n- [1, 2, {b: c}]\n", id="several documents"),
        pytest.param("a: 1\na: 2\n", id="duplicate keys, when not asked (yaml.safe_load's way)"),
        *(pytest.param(p.read_text(), id=p.name) for p in sorted(SCENARIOS.glob("*.yaml"))),
    ],
)
def test_within_the_limits_it_reads_as_yaml_safe_load(text: str) -> None:
    assert safe_yaml.load_all(text) == [d for d in yaml.safe_load_all(text) if d is not None]


def test_the_alias_ratio_is_go_yamls() -> None:
    assert [
        safe_yaml.allowed_alias_ratio(n) for n in (0, 400_000, 2_200_000, 4_000_000, 10**9)
    ] == [0.99, 0.99, pytest.approx(0.545), 0.10, 0.10]


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(load_scenario, id="scenario (upload, form, CLI, room)"),
        pytest.param(read_documents, id="kubectl output (import)"),
    ],
)
def test_every_entry_point_refuses_the_issues_pod_annotation_bomb(read: object) -> None:
    text = pod_annotation_bomb()
    assert len(text) < 1000
    start = time.perf_counter()
    with pytest.raises(ScenarioError) as err:
        read(text)  # type: ignore[operator]
    assert time.perf_counter() - start < 0.5
    assert err.value.path == "spec.objects[0].metadata.annotations.v4[0]"
    assert "an alias bomb" in err.value.why


def test_the_scenario_loader_refuses_a_bomb_in_a_file_libyaml_cannot_read() -> None:
    # libyaml refuses a character the pure-Python reader takes: the second reading is behind
    # the same limits.
    text = bomb(9) + "tab:\t\x85\n"
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert "an alias bomb" in str(err.value) or "malformed YAML" in str(err.value)
