"""Fuzz: what a kubectl (or anyone with a room's token) sends the rooms' Kubernetes API and the
server parses before any room is read: label and field selectors (``?labelSelector=``,
``?fieldSelector=``, controller/kubeapi/selectors.py) and a node patch's taints
(writes._taint_actions, what ``kubectl taint`` and a strategic merge patch send). Each is
accepted or refused with a Kubernetes Status (ApiError: 400 BadRequest or 422 Invalid naming
the field); nothing else is raised, nothing takes a second. Selectors accepted are then
matched against random objects of the store's shape, which must not raise either."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from controller.kubeapi.errors import ApiError
from controller.kubeapi.selectors import FIELDS, parse_fields, parse_labels
from controller.kubeapi.writes import _taint_actions
from tests.fuzz.harness import EDGE_TEXT, JSON, SETTINGS, Tally

# Pieces of real selectors, so that random joins of them reach past the first check.
PIECES = st.sampled_from(
    [
        "app",
        "app=web",
        "app==web",
        "app!=web",
        "!app",
        "env in (a,b)",
        "env notin (a)",
        "tier in ()",
        "k8s.io/x",
        "a/b/c",
        "spec.nodeName=a-1",
        "status.phase!=Failed",
        "status.phase!=Succeeded",
        "metadata.name=x",
        "metadata.namespace==default",
        "involvedObject.kind=Node",
        "involvedObject.name=a-1",
        "involvedObject.uid=",
        "spec.unschedulable=true",
        ",",
        "(",
        ")",
        "=",
        " ",
        "\x00",
        "é",
    ]
)
SELECTOR = st.one_of(
    st.lists(PIECES, max_size=8).map(",".join),
    st.lists(PIECES, max_size=8).map("".join),
    st.text(max_size=80),
    EDGE_TEXT,
    st.integers(4000, 5000).map(lambda n: "a" * n),
)
# Objects as the store makes them (metadata, spec and status always maps), with random content.
OBJECT = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": st.text(max_size=8),
                "namespace": st.one_of(st.text(max_size=8), JSON),
                "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8)),
            },
        ),
        "spec": st.dictionaries(st.sampled_from(["nodeName", "unschedulable", "x"]), JSON),
        "status": st.dictionaries(st.sampled_from(["phase", "x"]), JSON),
    },
    optional={"involvedObject": st.dictionaries(st.sampled_from(["kind", "name", "uid"]), JSON)},
)


def _select(what: tuple[str, str, str, list[Any]]) -> None:
    labels, fields, kind, objects = what
    match_labels = parse_labels(labels)
    match_fields = parse_fields(fields, kind)
    for obj in objects:
        meta = obj.get("metadata")
        found = meta.get("labels") if isinstance(meta, dict) else None
        match_labels(found if isinstance(found, dict) else {})
        match_fields(obj)


def test_fuzz_selectors() -> None:
    tally = Tally("kubeapi: label and field selectors", _select, ApiError)

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        labels = data.draw(SELECTOR, label="labelSelector")
        fields = data.draw(SELECTOR, label="fieldSelector")
        kind = data.draw(st.sampled_from([*sorted(FIELDS), "Lease", "x"]), label="kind")
        objects = data.draw(st.lists(OBJECT, max_size=3), label="objects")
        tally.judge((labels, fields, kind, objects))

    tally.fuzz(one)


def _taints(what: tuple[list[Any], Any]) -> None:
    old, new = what
    for action in _taint_actions("n-1", old, new):
        assert action["type"] in ("Taint", "Untaint") and action["taints"], action


TAINT = st.fixed_dictionaries(
    {},
    optional={
        "key": st.one_of(st.text(max_size=12), JSON),
        "value": st.one_of(st.text(max_size=12), JSON),
        "effect": st.one_of(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]), JSON),
        "timeAdded": JSON,
        "x": JSON,
    },
)


def test_fuzz_node_patch_taints() -> None:
    """spec.taints of a node patch: a list (near and past the 64 cap), null, or anything."""
    tally = Tally(
        "kubeapi: a node patch's taints",
        _taints,
        ApiError,
        refused_ok=lambda exc: "spec.taints" in str(exc),
    )

    @SETTINGS
    @given(st.data())
    def one(data: st.DataObject) -> None:
        old = data.draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "key": st.text(max_size=6),
                        "effect": st.sampled_from(["NoExecute", "NoSchedule"]),
                    }
                ),
                max_size=4,
            ),
            label="old",
        )
        new = data.draw(
            st.one_of(
                st.none(),
                JSON,
                st.lists(TAINT, max_size=5),
                st.integers(60, 70).map(
                    lambda n: [{"key": f"k{i}", "effect": "NoExecute"} for i in range(n)]
                ),
            ),
            label="new",
        )
        tally.judge((old, new))

    tally.fuzz(one)
