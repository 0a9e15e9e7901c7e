"""What PostgreSQL finds and SQLite lets pass: NUL characters in text, a failed INSERT that
aborts the transaction (slug races), jsonb's key order. These run on both databases
(`PLAYGROUND_DB=postgres` is the second pass of scripts/test.sh) and must hold on both."""

from __future__ import annotations

import os

import pytest
from django.db import connection, transaction

from controller import services
from controller.engine.scenario import ScenarioError
from controller.models import Action, Comparison, Room

pytestmark = pytest.mark.django_db

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: db}
spec:
  nodes:
    - {name: n-1, zone: z}
    - {name: n-2, zone: z}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default, labels: {app: web}}
      spec: {nodeName: n-1, containers: [{name: web}]}
"""


def test_the_run_uses_the_database_it_was_asked_for() -> None:
    wanted = os.environ.get("PLAYGROUND_DB", "sqlite") or "sqlite"
    assert connection.vendor == {"sqlite": "sqlite", "postgres": "postgresql"}[wanted]


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("a\x00b", SCENARIO, "name: contains a NUL character"),
        (
            "",
            SCENARIO.replace("metadata: {name: db}", 'metadata: {name: "d\\0b"}'),
            "metadata.name: contains a NUL character",
        ),
        (
            "",
            SCENARIO.replace("labels: {app: web}", 'labels: {app: "w\\x00b"}'),
            "spec.objects[0].metadata.labels.app: contains a NUL character",
        ),
        (
            "",
            SCENARIO.replace("labels: {app: web}", 'labels: {"a\\u0000": web}'),
            "spec.objects[0].metadata.labels.a\x00: contains a NUL character",
        ),
    ],
    ids=["room-name", "scenario-name-yaml-\\0", "label-value-\\x00", "label-key-\\u0000"],
)
def test_nul_characters_in_a_new_room_are_refused_with_the_path(
    name: str, text: str, error: str
) -> None:
    with pytest.raises((services.ActionError, ScenarioError)) as info:
        services.room_create(name, text, None, 10.0)
    assert str(info.value).startswith(error)
    assert "cannot be stored" in str(info.value)
    assert Room.objects.count() == 0


@pytest.mark.parametrize(
    ("payload", "actor", "error"),
    [
        ({"type": "StopKubelet", "node": "n-1\x00"}, "op", "action.node: contains a NUL"),
        ({"type": "StopKubelet", "node": "n-1", "no\x00te": 1}, "op", "action.no\x00te:"),
        (
            {"type": "Apply", "object": {"kind": "Pod", "metadata": {"name": ["a\x00"]}}},
            "op",
            "action.object.metadata.name[0]: contains a NUL",
        ),
        ({"type": "StopKubelet", "node": "n-1"}, "o\x00p", "actor: contains a NUL"),
    ],
    ids=["value", "key", "nested-list", "actor"],
)
def test_nul_characters_in_an_action_are_refused_with_the_path(
    payload: dict, actor: str, error: str
) -> None:
    room = services.room_create("", SCENARIO, None, 10.0)
    with pytest.raises(services.ActionError) as info:
        services.action_submit(room, payload, actor)
    assert str(info.value).startswith(error)
    assert not Action.objects.filter(room=room).exists()


def test_nul_in_parameters_is_refused_with_the_path() -> None:
    room = services.room_create("", SCENARIO, None, 10.0)
    with pytest.raises(services.ActionError, match=r"^action\.kubelet\.x\x00:"):
        services.parameters_submit(room, {"kubelet": {"x\x00": 1}}, "op")
    assert not Action.objects.filter(room=room).exists()


def test_nul_in_a_comparison_label_is_refused_with_the_side() -> None:
    sides = [("a", {"apiServer": {}}), ("b\x00", {"apiServer": {}})]
    with pytest.raises(services.ActionError, match=r"^right\.label: contains a NUL"):
        services.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    assert Room.objects.count() == 0


def _racing(real, taken_by_other: str):
    """A slug picker that first returns a slug another request has just taken (its check ran
    before the other's INSERT), then behaves."""
    calls = []

    def pick(name: str, taken: frozenset[str] = frozenset()) -> str:
        calls.append(taken)
        return taken_by_other if len(calls) == 1 else real(name, taken)

    return pick, calls


def test_a_slug_taken_meanwhile_is_retried_inside_a_savepoint(monkeypatch) -> None:
    first = services.room_create("Same name", SCENARIO, None, 10.0)
    pick, calls = _racing(services._unique_slug, first.slug)
    monkeypatch.setattr(services, "_unique_slug", pick)
    # Inside an outer transaction (as a request's ATOMIC_REQUESTS or a caller's would be):
    # on PostgreSQL the duplicate INSERT aborts the transaction unless it ran in a savepoint.
    with transaction.atomic():
        second = services.room_create("Same name", SCENARIO, None, 10.0)
        assert Room.objects.count() == 2  # the transaction is still usable
    assert (first.slug, second.slug) == ("same-name", "same-name-2")
    assert calls == [frozenset(), frozenset({"same-name"})]


def test_a_comparison_slug_taken_meanwhile_is_retried(monkeypatch) -> None:
    sides = [("a", {"apiServer": {}}), ("b", {"apiServer": {}})]
    first = services.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    pick, calls = _racing(services._unique_comparison_slug, first.slug)
    monkeypatch.setattr(services, "_unique_comparison_slug", pick)
    second = services.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    assert (first.slug, second.slug) == ("compare-cmp", "compare-cmp-2")
    assert Comparison.objects.count() == 2


def test_json_fields_round_trip_and_the_export_has_one_key_order() -> None:
    room = services.room_create("", SCENARIO, None, 10.0)
    services.room_control(room.pk, "pause", None, "t")
    payload = {"type": "StopKubelet", "node": "n-1"}
    action = services.action_submit(room, payload, "Zoë ✓ op")
    action.refresh_from_db()
    assert (action.payload, action.actor) == (payload, "Zoë ✓ op")
    # Applied by hand as a tick would: the export lists the fault's keys at, type, then by
    # name, whatever order the database returns them in (jsonb sorts keys its own way).
    Action.objects.filter(pk=action.pk).update(status=Action.APPLIED, at_ms=1500)
    Action.objects.create(
        room=room,
        kind="Apply",
        status=Action.APPLIED,
        at_ms=2000,
        payload={"type": "Apply", "zz": {"b": 1, "a": [1.5, 2**53, "é"]}, "object": {}},
    )
    export = services.room_export(room)
    assert (
        "  - at: 1500ms\n    type: StopKubelet\n    node: n-1\n"
        "  - at: 2000ms\n    type: Apply\n    object: {}\n    zz:\n" in export
    )
    stored = Action.objects.get(kind="Apply").payload
    assert stored["zz"] == {"a": [1.5, 2**53, "é"], "b": 1}
