"""The form's check of a scenario takes shortcuts that must read it exactly as the
straightforward path does: generated nodes made from the first one (parse_nodes), nesting
checked a level at a time (check_nesting), a plain ASCII text not scanned for hidden NULs
(values.text_may_hide_problems). Each is compared with the straightforward path."""

from __future__ import annotations

import random
from typing import Any

import pytest

from controller.engine import values
from controller.engine.config import KubeletConfig
from controller.engine.scenario import MAX_NESTING, ScenarioError, check_nesting
from controller.engine.scenario.nodes import parse_nodes
from controller.engine.versions import profile_for

PROFILE = profile_for("1.34")
TEMPLATES: list[dict[str, Any]] = [
    {},
    {"zone": "zone-a"},
    {"zone": "zone-b", "region": "r-1", "labels": {"tier": "web", "gpu": 1}},
    {"labels": {"kubernetes.io/hostname": "shared"}},
    {"capacity": {"cpu": "8", "memory": "32Gi", "pods": 50}, "usage": {"memory": "2Gi"}},
    {"images": [{"name": "nginx", "size": "100Mi", "inUse": True}, {"name": "x", "size": 5}]},
    {"pidMax": 4096, "inodes": 1000, "imagefs": "50Gi", "deadContainers": "1Gi"},
    {"kubeletOffset": "250ms", "unschedulable": True},
    {"kubelet": {"nodeLeaseDurationSeconds": 20}},  # a kubelet of its own: made per node
    {"kubeletVersion": "1.33", "zone": "zone-c"},
]


def _explicit(template: dict[str, Any], prefix: str, count: int) -> list[dict[str, Any]]:
    return [{**template, "name": f"{prefix}{n}"} for n in range(1, count + 1)]


def _parse(entries: list[Any]) -> Any:
    return parse_nodes(entries, KubeletConfig(), {}, "spec.nodes", PROFILE)


@pytest.mark.parametrize("template", TEMPLATES)
def test_generated_nodes_are_the_nodes_written_out(template: dict[str, Any]) -> None:
    generated = _parse([{"generate": {"count": 7, "namePrefix": "n-", **template}}])
    assert generated == _parse(_explicit(template, "n-", 7))
    # Each node has its own labels, resources and images, as parse_node gives them.
    for field in ("labels", "capacity", "usage", "images"):
        assert len({id(getattr(spec, field)) for spec in generated}) == 7


def test_generated_nodes_on_random_templates_are_the_nodes_written_out() -> None:
    rng = random.Random(27)
    for _ in range(200):
        template: dict[str, Any] = {}
        for part in rng.sample(TEMPLATES, rng.randint(0, 3)):
            template.update(part)
        count = rng.randint(1, 12)
        prefix = rng.choice(["n-", "a.", "node-x-"])
        generated = _parse([{"generate": {"count": count, "namePrefix": prefix, **template}}])
        assert generated == _parse(_explicit(template, prefix, count)), template


def test_a_generated_name_that_turns_invalid_is_refused_as_before() -> None:
    prefix = "a" * 251 + "-"  # n-9 is 253 characters, n-10 one too many
    with pytest.raises(ScenarioError) as err:
        _parse([{"generate": {"count": 12, "namePrefix": prefix}}])
    assert err.value.path == "spec.nodes[0].generate.name"
    assert f'"{prefix}10" is not a valid node name' in str(err.value)


def _depth(value: Any) -> int:
    """The straightforward nesting depth of mappings and lists."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _nested(rng: random.Random, depth: int) -> Any:
    """A value whose deepest branch is ``depth`` mappings and lists (scalars and shallow
    branches beside it, the deep one anywhere among them)."""
    value: Any = rng.choice([1, "x", None, 2.5, True])
    for _ in range(depth):
        children = [rng.choice([1, "x", None, [], {}, [0]]) for _ in range(rng.randint(0, 3))]
        children.insert(rng.randint(0, len(children)), value)
        if rng.random() < 0.5:
            value = children
        else:
            value = {f"k{i}": c for i, c in enumerate(children)}
    return value


def test_check_nesting_refuses_exactly_what_is_deeper_than_the_limit() -> None:
    rng = random.Random(7)
    seen = set()
    for _ in range(400):
        value = _nested(rng, rng.randint(0, MAX_NESTING + 3))
        deep = _depth(value) > MAX_NESTING
        seen.add(deep)
        if deep:
            with pytest.raises(ScenarioError, match=f"nested deeper than {MAX_NESTING}"):
                check_nesting(value, "x")
        else:
            check_nesting(value, "x")
    assert seen == {True, False}


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "plain ascii"}',
        '{"a": "\\u0000"}',
        'a: "\\0"',
        '{"a": "\\ud800"}',
        '{"a": "\\n and \\u00e9"}',
        "a: \x00",
        "a: \ud800",
        "a: caf\u00e9",
        "a: \\x00",
        "",
    ],
)
def test_text_may_hide_problems_is_the_regex(text: str) -> None:
    assert values.text_may_hide_problems(text) == (values._HIDING.search(text) is not None)
