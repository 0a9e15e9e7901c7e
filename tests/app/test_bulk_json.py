"""bulk.dumps, the JSON text of every view and event row a big room stores, and dumps_bytes, its
bytes (a timeline chunk's JSON): orjson without its OPT_NON_STR_KEYS (slower for every dict)
first, with it when a key is not a string. The text is the one the option always gives (the
straightforward path), on random values."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller import bulk, timeline_store

KEYS = st.one_of(st.text(max_size=8), st.integers(-(2**63), 2**63 - 1), st.booleans(), st.none())
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=30,
)


def _straightforward(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"a": 1, "b": [1, "é", None]}, id="string keys: the fast path"),
        pytest.param({1: "x", "y": {2.5: True}}, id="numeric keys, nested: strings as json.dumps"),
        pytest.param({None: 1, True: 2}, id="null and bool keys"),
        pytest.param([{"k": {7: []}}], id="a non-string key deep in a list"),
        pytest.param({"nan": float("nan")}, id="NaN: null either way"),
    ],
)
def test_dumps_is_the_straightforward_text(value) -> None:
    assert bulk.dumps(value) == _straightforward(value)
    assert bulk.dumps_bytes(value) == _straightforward(value).encode()


def test_dumps_refuses_what_the_straightforward_path_refuses() -> None:
    for value in ({"n": 2**64}, {1: 2**64}, {"o": object()}):
        with pytest.raises(TypeError):
            _straightforward(value)
        with pytest.raises(TypeError):
            bulk.dumps(value)
        with pytest.raises(TypeError):
            bulk.dumps_bytes(value)


def test_dumps_passes_encoded_text_as_it_is() -> None:
    text = bulk.Encoded('{"a":1}')
    assert bulk.dumps(text) is text


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_dumps_is_the_straightforward_text_on_random_values(value) -> None:
    assert bulk.dumps(value) == _straightforward(value)
    assert bulk.dumps_bytes(value) == _straightforward(value).encode()


@pytest.mark.parametrize(
    "part",
    [
        pytest.param([{"t": 0, "type": "PodPhase", "pod": "p"}] * 3, id="string keys"),
        pytest.param(
            [{"t": 0, "type": "X", "counts": {1: 2}}, {"t": 1, "type": "Y"}],
            id="an event with a numeric key",
        ),
    ],
)
def test_a_timeline_chunks_json_is_the_straightforward_text(part) -> None:
    assert timeline_store._text(part) == _straightforward(part).encode()
