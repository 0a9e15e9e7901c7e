"""A scenario written as JSON is read by the json module (fast) into exactly what the YAML
path reads; anything the YAML path must judge (duplicate keys, deep nesting, numbers YAML 1.1
reads as strings) goes through it, with its messages. A big document libyaml refuses is not
parsed again by the pure-Python loader (seconds of CPU per MB): libyaml's own line and column."""

from __future__ import annotations

import json

import pytest
import yaml

from controller.bench.build import big_room_text
from controller.engine.scenario import (
    FAST_LOADER,
    MAX_NESTING,
    ScenarioError,
    _json_documents,
    load_scenario,
)


def yaml_docs(text: str) -> list:
    return [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            '{"a": 1e3, "b": 1.5, "c": 1.5e3, "d": 1.5e+3, "e": -0, "f": 10, "g": null}',
            id="numbers as YAML 1.1 reads them (1e3 and 1.5e3 are strings)",
        ),
        pytest.param('{"t": true, "f": false, "s": "x\\u00e9\\n", "l": [1, [2, {}]]}', id="misc"),
        pytest.param(big_room_text(30, 300), id="a generated big room"),
        pytest.param(
            '{"a": NaN, "b": Infinity, "c": -Infinity, "d": [NaN]}',
            id="NaN and Infinity: not JSON, plain strings in YAML",
        ),
    ],
)
def test_json_reads_as_yaml_does(text: str) -> None:
    assert _json_documents(text) == yaml_docs(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"a": 1, "a": 2}', id="duplicate key"),
        pytest.param('{"a": ' + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1) + "}", id="deep"),
        pytest.param("# comment\n{}", id="not starting with {"),
        pytest.param('{"a": 1} x', id="not JSON"),
    ],
)
def test_the_yaml_path_judges_the_rest(text: str) -> None:
    assert _json_documents(text) is None


def test_a_duplicate_key_in_json_is_refused_with_its_path_and_line() -> None:
    doc = json.loads(big_room_text(3, 3))
    text = json.dumps(doc, indent=1).replace('"name": "big-room-3"', '"name": "x", "name": "y"')
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert str(err.value).startswith("metadata.name: duplicate key (again at line")


def test_a_json_scenario_loads_as_its_yaml_twin() -> None:
    text = big_room_text(30, 300)
    twin = yaml.safe_dump(json.loads(text))
    a, b = load_scenario(text), load_scenario(twin)
    assert (a.raw, len(a.nodes), a.objects) == (b.raw, len(b.nodes), b.objects)


def test_a_big_malformed_document_gets_libyamls_error_without_a_second_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from controller.engine.scenario import documents

    def slow(text: str) -> list:
        raise AssertionError("parsed again by the pure-Python loader")

    monkeypatch.setattr(documents, "_slow_parse_for_the_error", slow)
    text = "spec:\n" + "  # padding\n" * (documents.SLOW_PARSE_MAX // 12) + '  a: "x\\ud800"\n'
    assert len(text) > documents.SLOW_PARSE_MAX
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert str(err.value).startswith(f"malformed YAML at line {text.count(chr(10))}, column")
