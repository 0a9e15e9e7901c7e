"""Rooms that cannot be bricked (issue #35): an operator's ``DeleteNode a-2`` in the
single-node-failure room, whose scenario stops a-2's kubelet at 62 s. Before, the tick that
crossed 62 s failed with ``spec.faults[0].node: unknown node "a-2"`` and paused the room, and
each resume failed the same way. Now the fault is refused in the timeline (``FaultRefused``,
with the reason) and the room goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from controller.models import Action, Room
from controller.rooms import actions, catalog, controls, create, reading, runtime, tick

SINGLE = (catalog.BUILTIN_DIR / "01-single-node-failure.yaml").read_text()


@pytest.fixture
def room(db: None) -> Iterator[Room]:
    room = create.room_create("single", SINGLE, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def test_a_deleted_node_that_a_later_fault_names_does_not_brick_the_room(room: Room) -> None:
    actions.action_submit(room, {"type": "DeleteNode", "node": "a-2"}, "test")
    tick.room_advance(room.pk, extra_ms=10_000)
    assert Action.objects.get(room=room, kind="DeleteNode").status == Action.APPLIED
    delta = tick.room_advance(room.pk, extra_ms=60_000)  # past the StopKubelet at 62 s
    assert delta is not None
    r = Room.objects.get(pk=room.pk)
    assert r.sim_ms > 62_000
    refused = [e for e in reading.room_timeline(r) if e["type"] == "FaultRefused"]
    assert refused == [
        {
            "t": 62_000,
            "type": "FaultRefused",
            "fault": "StopKubelet",
            "node": "a-2",
            "error": 'spec.faults[0].node: unknown node "a-2"',
        }
    ]
    assert [e["type"] for e in delta["events"] if e["type"] == "FaultRefused"] == ["FaultRefused"]
    # The room goes on: resumed, it ticks past the refusal again (a rebuilt engine too).
    controls.room_control(room.pk, "resume", None, "test")
    runtime.forget_cache()
    assert tick.room_advance(room.pk, extra_ms=30_000) is not None
    r = Room.objects.get(pk=room.pk)
    assert not r.paused and r.sim_ms > 92_000
    assert len([e for e in reading.room_timeline(r) if e["type"] == "FaultRefused"]) == 1


def test_the_kubernetes_api_caps_a_nodes_taints_naming_the_field(db) -> None:
    """A PATCH of a node's spec.taints through the room's Kubernetes API (kubectl taint) is a
    Taint action: more than 64 taints is 422 Invalid naming spec.taints and the cap, before
    any is read, and nothing is recorded."""
    from django.test import Client

    from tests.app.test_kubeapi_kubectl import SCENARIO as API_SCENARIO

    room = create.room_create("api", API_SCENARIO, None, 10.0)
    url = f"/k8s/rooms/{room.slug}/api/v1/nodes/a-1"
    operator = {"HTTP_AUTHORIZATION": f"Bearer {room.operator_token}"}

    def patch(n: int) -> Any:
        taints = [{"key": f"k{i}", "effect": "NoSchedule"} for i in range(n)]
        body = json.dumps({"spec": {"taints": taints}}).encode()
        return Client().patch(url, body, content_type="application/merge-patch+json", **operator)

    answer = patch(65)
    assert answer.status_code == 422 and answer.json()["reason"] == "Invalid"
    assert "65 items, at most 64 taints per node" in answer.json()["message"]
    assert answer.json()["details"]["causes"][0]["field"] == "spec.taints"
    assert room.actions.count() == 0
