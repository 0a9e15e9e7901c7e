"""The room page's parameters panel and kube-scheduler's client: the page offers
``clientConnection.qps`` / ``burst`` beside the controller-manager's settings, the snapshot it
reads carries them (defaulted 50 / 100), and an operator's change of them over the page's
socket is a SetParameters like any other: applied, logged, and a bad value refused with a
message naming the field, nothing changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from controller.models import Action, Room
from controller.rooms import controls, create, runtime, tick
from tests.app.scenarios import pod, scenario

SCENARIO = scenario("sched-params", 2, (pod(),), spec='  kubernetesVersion: "1.34"\n')
CUSTOM = scenario(
    "sched-custom",
    2,
    (pod(),),
    spec="  scheduler:\n    clientConnection: {qps: 20, burst: 40}\n",
)


@pytest.fixture
def room(db: None) -> Iterator[Room]:
    room = create.room_create("sched-params", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def snapshot_params(client: Client, room: Room) -> dict[str, Any]:
    """The parameters the page's snapshot carries (what its panel shows)."""
    response = client.get(f"/rooms/{room.slug}/snapshot.json")
    assert response.status_code == 200
    return response.json()["params"]


def client_connection(client: Client, room: Room) -> dict[str, Any]:
    return snapshot_params(client, room)["scheduler"]["clientConnection"]


def test_the_page_offers_the_schedulers_client_qps_and_burst(client: Client, room: Room) -> None:
    page = client.get(f"/rooms/{room.slug}/?token={room.operator_token}").content.decode()
    assert "kube-scheduler clientConnection.qps" in page
    assert 'name="scheduler.clientConnection.qps"' in page
    assert "kube-scheduler clientConnection.burst" in page
    assert 'name="scheduler.clientConnection.burst"' in page


def test_the_snapshot_carries_the_schedulers_client_beside_the_controller_managers(
    client: Client, room: Room
) -> None:
    params = snapshot_params(client, room)
    assert params["scheduler"] == {"clientConnection": {"qps": 50.0, "burst": 100}}
    # Beside the controller-manager's own client (--kube-api-qps / --kube-api-burst).
    assert {"kubeAPIQPS", "kubeAPIBurst"} <= set(params["controllerManager"])


def test_a_scenarios_scheduler_settings_are_what_the_snapshot_carries(
    client: Client, db: None
) -> None:
    room = create.room_create("sched-custom", CUSTOM, None, 10.0)
    try:
        assert client_connection(client, room) == {"qps": 20.0, "burst": 40}
    finally:
        runtime.forget_cache()


def operate(room: Room, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` sent on the room's socket as its operator's page sends it: the reply (an
    ack or an error), deltas and presence skipped."""
    from playground.asgi import application

    async def run() -> dict[str, Any]:
        comm = WebsocketCommunicator(
            application,
            f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=ops",
            headers=[(b"origin", b"http://localhost")],
        )
        connected, _ = await comm.connect()
        assert connected
        try:
            assert (await comm.receive_json_from(timeout=10))["type"] == "snapshot"
            await comm.send_json_to(message)
            while True:
                reply = await comm.receive_json_from(timeout=5)
                if reply["type"] not in ("presence", "delta", "clock"):
                    return reply
        finally:
            await comm.disconnect()

    return async_to_sync(run)()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_an_operator_changes_the_schedulers_client_from_the_page() -> None:
    client = Client()
    room = create.room_create("sched-ws", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    try:
        change = {"scheduler": {"clientConnection": {"qps": 5, "burst": 10}}}
        reply = operate(room, {"type": "params", "params": change})
        assert reply["type"] == "ack", reply
        tick.room_advance(room.pk, extra_ms=1000)
        assert client_connection(client, room) == {"qps": 5.0, "burst": 10}
        action = Action.objects.get(room=room, kind="SetParameters")
        assert action.status == Action.APPLIED
        assert action.payload["scheduler"] == {"clientConnection": {"qps": 5, "burst": 10}}
        (event,) = [
            e
            for e in client.get(f"/rooms/{room.slug}/events.json").json()["events"]
            if e.get("fault") == "SetParameters"
        ]
        assert event["changes"] == [
            "scheduler.clientConnection.burst: 100 -> 10",
            "scheduler.clientConnection.qps: 50 -> 5",
        ]
    finally:
        runtime.forget_cache()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "client_connection_, field, words",
    [
        pytest.param({"burst": -1}, "burst", "must be non-negative", id="negative burst"),
        pytest.param({"burst": "lots"}, "burst", "lots", id="burst word"),
        pytest.param({"qps": "fast"}, "qps", "must be a number", id="qps word"),
        pytest.param({"qps": 0.0001}, "qps", "below the playground's floor", id="qps too low"),
        pytest.param({"qps": 5, "burst": -3}, "burst", "must be non-negative", id="one bad"),
    ],
)
def test_a_bad_scheduler_client_value_is_refused_naming_the_field(
    client_connection_: dict[str, Any], field: str, words: str
) -> None:
    client = Client()
    room = create.room_create("sched-bad", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    try:
        message = {
            "type": "params",
            "params": {"scheduler": {"clientConnection": client_connection_}},
        }
        reply = operate(room, message)
        assert reply["type"] == "error", reply
        assert f"scheduler.clientConnection.{field}" in reply["message"], reply
        assert words in reply["message"], reply
        # Nothing changed: no action recorded, the values as they were after a tick.
        assert not Action.objects.filter(room=room, kind="SetParameters").exists()
        tick.room_advance(room.pk, extra_ms=1000)
        assert client_connection(client, room) == {"qps": 50.0, "burst": 100}
    finally:
        runtime.forget_cache()
