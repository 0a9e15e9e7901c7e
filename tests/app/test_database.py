"""What PostgreSQL finds and SQLite lets pass: NUL characters in text, a failed INSERT that
aborts the transaction (slug races), jsonb's key order. These run on both databases
(`PLAYGROUND_DB=postgres` is the second pass of scripts/test.sh) and must hold on both."""

from __future__ import annotations

import math
import os
import threading

import pytest
from django.db import connection, transaction
from django.db.models import F

from controller.engine.scenario import ScenarioError
from controller.models import Action, Comparison, ObjectView, Room
from controller.rooms import actions, compare, controls, create, errors, reading
from tests.app.scenarios import pod, scenario

pytestmark = pytest.mark.django_db

SCENARIO = scenario("db", 2, (pod(labels="{app: web}"),))


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
            # the key shown escaped: the refusal itself is text that can be stored and sent
            "spec.objects[0].metadata.labels.a\\u0000: contains a NUL character",
        ),
    ],
    ids=["room-name", "scenario-name-yaml-\\0", "label-value-\\x00", "label-key-\\u0000"],
)
def test_nul_characters_in_a_new_room_are_refused_with_the_path(
    name: str, text: str, error: str
) -> None:
    with pytest.raises((errors.ActionError, ScenarioError)) as info:
        create.room_create(name, text, None, 10.0)
    assert str(info.value).startswith(error)
    assert "cannot be stored" in str(info.value)
    assert Room.objects.count() == 0


@pytest.mark.parametrize(
    ("payload", "actor", "error"),
    [
        ({"type": "StopKubelet", "node": "n-1\x00"}, "op", "action.node: contains a NUL"),
        # (a key is shown escaped: the refusal itself is text that can be stored and sent)
        ({"type": "StopKubelet", "node": "n-1", "no\x00te": 1}, "op", "action.no\\u0000te:"),
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
    room = create.room_create("", SCENARIO, None, 10.0)
    with pytest.raises(errors.ActionError) as info:
        actions.action_submit(room, payload, actor)
    assert str(info.value).startswith(error)
    assert not Action.objects.filter(room=room).exists()


@pytest.mark.parametrize(
    ("kind", "value", "error"),
    [
        (
            "pause",
            math.nan,
            "pause.value: nan is not a finite number (JSON has no NaN or Infinity)",
        ),
        ("resume", [1, math.inf], "resume.value[1]: inf is not a finite number"),
        ("pause", {"a": "\x00"}, "pause.value.a: contains a NUL character"),
    ],
)
def test_a_control_with_an_unstorable_value_is_refused(kind: str, value, error: str) -> None:
    """jsonb refuses NaN and Infinity (and NUL): the control's log entry could not be stored."""
    room = create.room_create("", SCENARIO, None, 10.0)
    if kind == "resume":
        controls.room_control(room.pk, "pause", None, "op")
    before = (Room.objects.get(pk=room.pk).paused, Action.objects.filter(room=room).count())
    with pytest.raises(errors.ActionError) as info:
        controls.room_control(room.pk, kind, value, "op")
    assert str(info.value).startswith(error)
    after = (Room.objects.get(pk=room.pk).paused, Action.objects.filter(room=room).count())
    assert after == before


def test_a_nan_the_fault_does_not_read_is_refused_in_an_action() -> None:
    room = create.room_create("", SCENARIO, None, 10.0)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    pod["metadata"]["annotations"] = {"x": math.nan}
    pod["spec"] = {"containers": [{"name": "p"}]}
    with pytest.raises(errors.ActionError) as info:
        actions.action_submit(room, {"type": "Apply", "object": pod}, "op")
    assert str(info.value) == (
        "action.object.metadata.annotations.x: nan is not a finite number "
        "(JSON has no NaN or Infinity)"
    )
    assert not Action.objects.filter(room=room).exists()


def test_nul_in_parameters_is_refused_with_the_path() -> None:
    room = create.room_create("", SCENARIO, None, 10.0)
    with pytest.raises(errors.ActionError, match=r"^action\.kubelet\.x\\u0000:"):
        actions.parameters_submit(room, {"kubelet": {"x\x00": 1}}, "op")
    assert not Action.objects.filter(room=room).exists()


def test_nul_in_a_comparison_label_is_refused_with_the_side() -> None:
    sides = [("a", {"apiServer": {}}), ("b\x00", {"apiServer": {}})]
    with pytest.raises(errors.ActionError, match=r"^right\.label: contains a NUL"):
        compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
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
    first = create.room_create("Same name", SCENARIO, None, 10.0)
    pick, calls = _racing(create._unique_slug, first.slug)
    monkeypatch.setattr(create, "_unique_slug", pick)
    # Inside an outer transaction (as a request's ATOMIC_REQUESTS or a caller's would be):
    # on PostgreSQL the duplicate INSERT aborts the transaction unless it ran in a savepoint.
    with transaction.atomic():
        second = create.room_create("Same name", SCENARIO, None, 10.0)
        assert Room.objects.count() == 2  # the transaction is still usable
    assert (first.slug, second.slug) == ("same-name", "same-name-2")
    assert calls == [frozenset(), frozenset({"same-name"})]


def test_a_comparison_slug_taken_meanwhile_is_retried(monkeypatch) -> None:
    sides = [("a", {"apiServer": {}}), ("b", {"apiServer": {}})]
    first = compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    pick, calls = _racing(compare._unique_comparison_slug, first.slug)
    monkeypatch.setattr(compare, "_unique_comparison_slug", pick)
    second = compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    assert (first.slug, second.slug) == ("compare-cmp", "compare-cmp-2")
    assert Comparison.objects.count() == 2


def test_json_fields_round_trip_and_the_export_has_one_key_order() -> None:
    room = create.room_create("", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "t")
    payload = {"type": "StopKubelet", "node": "n-1"}
    action = actions.action_submit(room, payload, "Zoë ✓ op")
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
    export = reading.room_export(room)
    assert (
        "  - at: 1500ms\n    type: StopKubelet\n    node: n-1\n"
        "  - at: 2000ms\n    type: Apply\n    object: {}\n    zz:\n" in export
    )
    stored = Action.objects.get(kind="Apply").payload
    assert stored["zz"] == {"a": [1.5, 2**53, "é"], "b": 1}


@pytest.mark.django_db(transaction=True)
def test_a_snapshot_is_one_ticks_state_when_a_tick_commits_between_its_reads(
    monkeypatch,
) -> None:
    """A tick commits (seq + 1, a node's view) after the snapshot read the room and before it
    reads the views: the snapshot is still the state of one tick (the earlier one)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's transaction holds the database lock: no commit comes between")
    room = create.room_create("", SCENARIO, None, 10.0)
    seq = Room.objects.get(pk=room.pk).seq

    def tick() -> None:
        with transaction.atomic():
            Room.objects.filter(pk=room.pk).update(seq=F("seq") + 1)
            ObjectView.objects.all().filter(room=room, kind="node").update(
                data={"name": "n-1", "changed": True}
            )
        connection.close()

    def filter_after_a_tick(*args, **kwargs):
        thread = threading.Thread(target=tick)
        thread.start()
        thread.join(timeout=20)
        assert not thread.is_alive(), "the tick waited for the snapshot"
        monkeypatch.undo()
        return ObjectView.objects.all().filter(*args, **kwargs)

    monkeypatch.setattr(ObjectView.objects, "filter", filter_after_a_tick)
    snapshot = reading.room_snapshot(room)
    assert snapshot["seq"] == seq
    assert not any(n.get("changed") for n in snapshot["nodes"])
    later = reading.room_snapshot(room)  # the next one sees the tick, whole
    assert later["seq"] == seq + 1
    assert all(n.get("changed") for n in later["nodes"])
