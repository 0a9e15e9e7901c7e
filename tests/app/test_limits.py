"""Limits (controller/limits.py): each refused with a message that names the limit, its setting
and value, and what was asked; a refusal changes nothing."""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from controller.limits import LimitError
from controller.models import Action, Room
from controller.rooms import actions, compare, controls, imports, reading
from controller.rooms import create as rooms_create
from playground.asgi import application
from playground.settings import env_number, env_within
from tests.app.scenarios import pod, scenario, workload

SCENARIO = scenario(
    "limits",
    3,
    (pod(), workload("Deployment", "api", 4), workload("DaemonSet", "agent")),
)
# 3 nodes; pods: 1 + 4 + 3 (one agent per node) = 8

pytestmark = pytest.mark.usefixtures("fresh_channel_layer")


def refused(setting: str, value: int, what: str, call, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(LimitError) as info:
        call(*args, **kwargs)
    assert str(info.value) == f"{setting}={value}: {what}"
    assert info.value.setting == setting


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("PLAYGROUND_MAX_NODES_PER_ROOM", 2, "this scenario has 3 nodes"),
        ("PLAYGROUND_MAX_PODS_PER_ROOM", 7, "this scenario has 8 pods"),
        ("PLAYGROUND_MAX_SCENARIO_BYTES", 100, f"this scenario is {len(SCENARIO)} bytes"),
    ],
)
def test_a_scenario_over_a_limit_is_refused(settings, setting, value, message) -> None:
    setattr(settings, setting, value)
    refused(setting, value, message, rooms_create.room_create, "", SCENARIO, None, 10.0)
    assert Room.objects.count() == 0


# What a scenario's own faults add later counts too (found by make fuzz: a built-in scenario's
# ScaleWorkload mutated to 10^9 replicas was accepted and made 100,000 pods a simulated second).
ADD_NODE = "{at: 5s, type: AddNode, node: {name: n-%d, zone: z}}"
SCALE = "{at: 5s, type: ScaleWorkload, workload: %s, replicas: %d}"
APPLY = (
    "{at: 5s, type: Apply, object: {apiVersion: apps/v1, kind: Deployment, metadata: "
    "{name: %s}, spec: {replicas: %d, selector: {matchLabels: {app: %s}}, template: "
    "{metadata: {labels: {app: %s}}, spec: {containers: [{name: c}]}}}}}"
)
OBJECTS = (pod(), workload("Deployment", "api", 4), workload("DaemonSet", "agent"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setting", "value", "faults", "message"),
    [
        pytest.param(
            "PLAYGROUND_MAX_NODES_PER_ROOM",
            4,
            (ADD_NODE % 4, ADD_NODE % 5),
            "this scenario has 5 nodes after spec.faults[1] (AddNode)",
            id="AddNode: nodes, and a DaemonSet pod on each",
        ),
        pytest.param(
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            8,
            (ADD_NODE % 4,),
            "this scenario has 9 pods after spec.faults[0] (AddNode)",
            id="AddNode: the DaemonSet's pod on the new node",
        ),
        pytest.param(
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            1000,
            (SCALE % ("Deployment/api", 2**31 - 1),),
            "this scenario has 2147483651 pods after spec.faults[0] (ScaleWorkload)",
            id="ScaleWorkload to int32's largest",
        ),
        pytest.param(
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            12,
            (SCALE % ("Deployment/default/api", 9), SCALE % ("Deployment/api", 2)),
            "this scenario has 13 pods after spec.faults[0] (ScaleWorkload)",
            id="ScaleWorkload with its namespace: replaces the workload's replicas",
        ),
        pytest.param(
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            12,
            (APPLY % ("new", 5, "new", "new"),),
            "this scenario has 13 pods after spec.faults[0] (Apply)",
            id="Apply of a new Deployment",
        ),
    ],
)
def test_what_a_scenarios_faults_add_is_counted(settings, setting, value, faults, message) -> None:
    setattr(settings, setting, value)
    text = scenario("limits", 3, OBJECTS, faults)
    refused(setting, value, message, rooms_create.room_create, "", text, None, 10.0)
    assert Room.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "faults",
    [
        pytest.param(
            (SCALE % ("Deployment/api", 9), SCALE % ("Deployment/api", 2)),
            id="ScaleWorkload up to the limit, then down",
        ),
        pytest.param(
            ("{at: 5s, type: DeleteNode, node: n-3}", ADD_NODE % 4, ADD_NODE % 5),
            id="a node deleted before two are added: 4 at most, 13 pods",
        ),
        pytest.param(
            (APPLY % ("api", 9, "api", "api"),),
            id="Apply of the existing Deployment: its replicas replaced",
        ),
    ],
)
def test_faults_within_the_limits_are_accepted(settings, faults) -> None:
    settings.PLAYGROUND_MAX_NODES_PER_ROOM = 4
    settings.PLAYGROUND_MAX_PODS_PER_ROOM = 13
    rooms_create.room_create("", scenario("limits", 3, OBJECTS, faults), None, 10.0)
    assert Room.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("PLAYGROUND_MAX_NODES_PER_ROOM", 3),
        ("PLAYGROUND_MAX_PODS_PER_ROOM", 8),
        ("PLAYGROUND_MAX_SCENARIO_BYTES", len(SCENARIO)),
        ("PLAYGROUND_MAX_NODES_PER_ROOM", 0),  # 0: off
    ],
)
def test_a_scenario_at_the_limit_is_accepted(settings, setting, value) -> None:
    setattr(settings, setting, value)
    rooms_create.room_create("", SCENARIO, None, 10.0)
    assert Room.objects.count() == 1


@pytest.mark.django_db
def test_live_actions_that_add_nodes_or_pods_are_refused_over_the_limit(settings) -> None:
    room = rooms_create.room_create("", SCENARIO, None, 10.0)
    settings.PLAYGROUND_MAX_NODES_PER_ROOM = 3
    settings.PLAYGROUND_MAX_PODS_PER_ROOM = 10
    node = {"name": "n-4", "zone": "z"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    pod["spec"] = {"containers": [{"name": "p"}]}
    cases = [
        (
            {"type": "AddNode", "node": node},
            "PLAYGROUND_MAX_NODES_PER_ROOM",
            3,
            "this room has 3 nodes already",
        ),
        (
            {"type": "ScaleWorkload", "workload": "Deployment/default/api", "replicas": 7},
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            10,
            "this room has 8 pods and this action adds 3",
        ),
    ]
    for payload, setting, value, message in cases:
        refused(setting, value, message, actions.action_submit, room, payload, "op")
    assert not Action.objects.filter(room=room).exists()
    # Within the limits: scaling to 6 (+2 pods), one more pod, scaling down, a node at 4.
    actions.action_submit(
        room, {"type": "ScaleWorkload", "workload": "Deployment/default/api", "replicas": 6}, "op"
    )
    actions.action_submit(room, {"type": "Apply", "object": pod}, "op")
    actions.action_submit(
        room, {"type": "ScaleWorkload", "workload": "Deployment/default/api", "replicas": 1}, "op"
    )
    settings.PLAYGROUND_MAX_NODES_PER_ROOM = 4
    actions.action_submit(room, {"type": "AddNode", "node": node}, "op")
    assert Action.objects.filter(room=room).count() == 4


@pytest.mark.django_db
def test_running_rooms_on_the_server(settings) -> None:
    settings.PLAYGROUND_MAX_RUNNING_ROOMS = 2
    first = rooms_create.room_create("a", SCENARIO, None, 10.0)
    rooms_create.room_create("b", SCENARIO, None, 10.0)
    message = "the server already runs 2 rooms; pause one, or wait for one to be paused"
    refused("PLAYGROUND_MAX_RUNNING_ROOMS", 2, message, rooms_create.room_create, "c", SCENARIO)
    sides = [("x", {"apiServer": {}}), ("y", {"apiServer": {}})]
    with pytest.raises(LimitError, match="^PLAYGROUND_MAX_RUNNING_ROOMS=2: "):
        compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    assert Room.objects.count() == 2
    # A paused room does not run: another may start; resuming the paused one is refused.
    controls.room_control(first.pk, "pause", None, "op")
    rooms_create.room_create("c", SCENARIO, None, 10.0)
    refused(
        "PLAYGROUND_MAX_RUNNING_ROOMS",
        2,
        message,
        controls.room_control,
        first.pk,
        "resume",
        None,
        "op",
    )
    assert Room.objects.get(pk=first.pk).paused


@pytest.mark.django_db
def test_running_rooms_per_owner_through_the_form(settings) -> None:
    """Per owner: a signed-in user, else the client's address; the refusal is on the page."""
    settings.PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER = 1

    def create(client: Client, addr: str, name: str) -> Any:
        upload = SimpleUploadedFile("s.yaml", SCENARIO.encode(), "application/yaml")
        return client.post("/", {"name": name, "upload": upload, "speed": 10}, REMOTE_ADDR=addr)

    anon = Client()
    assert create(anon, "10.0.0.1", "one").status_code == 302
    page = create(anon, "10.0.0.1", "two")
    assert page.status_code == 200
    assert (
        "PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER=1: you already run 1 rooms; pause one of them first"
        in page.content.decode()
    )
    assert create(anon, "10.0.0.2", "three").status_code == 302  # another client
    user = get_user_model().objects.create_user("teacher", password="x" * 12)
    signed_in = Client()
    signed_in.force_login(user)
    assert create(signed_in, "10.0.0.1", "four").status_code == 302  # counted as the user
    assert create(signed_in, "10.0.0.9", "five").status_code == 200  # same user, refused
    assert sorted(Room.objects.values_list("name", flat=True)) == ["four", "one", "three"]
    assert Room.objects.get(name="four").creator == f"user:{user.pk}"


@pytest.mark.django_db
def test_an_upload_over_the_scenario_size_is_refused_by_the_form(settings) -> None:
    settings.PLAYGROUND_MAX_SCENARIO_BYTES = 100
    upload = SimpleUploadedFile("s.yaml", SCENARIO.encode(), "application/yaml")
    page = Client().post("/", {"upload": upload, "speed": 10})
    assert (
        f"upload: PLAYGROUND_MAX_SCENARIO_BYTES=100: this scenario is {len(SCENARIO)} bytes"
        in page.content.decode()
    )
    assert Room.objects.count() == 0


async def _replies(comm: WebsocketCommunicator, n: int) -> list[dict[str, Any]]:
    out = []
    deadline = time.monotonic() + 20
    while len(out) < n and time.monotonic() < deadline:
        msg = await comm.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        if msg.get("type") in ("ack", "error", "pong", "snapshot"):
            out.append(msg)
    return out


def _comm(room: Room, client: tuple[str, int] | None = None) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=op",
        headers=[(b"origin", b"http://localhost")],
    )
    if client:
        comm.scope["client"] = client
    return comm


@pytest.mark.django_db(transaction=True)
def test_websocket_message_size(settings) -> None:
    settings.PLAYGROUND_MAX_MESSAGE_BYTES = 200
    room = rooms_create.room_create("", SCENARIO, None, 10.0)
    before = Action.objects.filter(room=room).count()
    big = '{"type":"speed","value":20,"pad":"' + "x" * 300 + '"}'
    size = len(big)

    async def run() -> list[dict[str, Any]]:
        comm = _comm(room)
        assert (await comm.connect())[0]
        await _replies(comm, 1)  # the snapshot
        await comm.send_to(text_data=big)
        await comm.send_json_to({"type": "ping"})
        replies = await _replies(comm, 2)
        await comm.disconnect()
        return replies

    replies = async_to_sync(run)()
    assert replies == [
        {
            "type": "error",
            "message": f"PLAYGROUND_MAX_MESSAGE_BYTES=200: this message is {size} bytes",
            "limit": "PLAYGROUND_MAX_MESSAGE_BYTES",
        },
        {"type": "pong"},
    ]
    assert Action.objects.filter(room=room).count() == before
    assert Room.objects.get(pk=room.pk).speed == 10.0


@pytest.mark.django_db(transaction=True)
def test_messages_per_second_per_address_across_connections(settings) -> None:
    # (Each connection has its own limit too: tests/app/test_hardening_ws.py.)
    settings.PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS = 3
    room = rooms_create.room_create("", SCENARIO, None, 10.0)
    before = Action.objects.filter(room=room).count()

    async def run() -> list[dict[str, Any]]:
        # Two connections of one client (one address) share its count; wait for a fresh
        # second so that the ten messages fall into at most two one-second windows.
        a, b = _comm(room, ("10.1.1.1", 1000)), _comm(room, ("10.1.1.1", 1001))
        for comm in (a, b):
            assert (await comm.connect())[0]
            await _replies(comm, 1)
        while time.time() % 1 > 0.5:
            time.sleep(0.05)
        for i in range(10):
            await (a if i % 2 else b).send_json_to({"type": "speed", "value": 11 + i})
        replies = await _replies(a, 5) + await _replies(b, 5)
        await a.disconnect()
        await b.disconnect()
        return replies

    replies = async_to_sync(run)()
    acks = [r for r in replies if r["type"] == "ack"]
    errors = [r for r in replies if r["type"] == "error"]
    assert len(replies) == 10
    assert 3 <= len(acks) <= 6, replies  # 3 per second, at most two seconds
    assert all(e["limit"] == "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS" for e in errors)
    assert errors[0]["message"].startswith(
        "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS=3: the connections from this address sent "
    )
    assert errors[0]["message"].endswith(" messages this second; slow down")
    assert Action.objects.filter(room=room).count() == before + len(acks)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("many", "PLAYGROUND_MAX_NODES_PER_ROOM='many': expected int"),
        ("-1", "PLAYGROUND_MAX_NODES_PER_ROOM='-1': must not be negative (0 turns it off)"),
    ],
)
def test_a_bad_limit_setting_names_its_variable(monkeypatch, raw, error) -> None:
    monkeypatch.setenv("PLAYGROUND_MAX_NODES_PER_ROOM", raw)
    with pytest.raises(ImproperlyConfigured) as info:
        env_number("PLAYGROUND_MAX_NODES_PER_ROOM", 5000)
    assert str(info.value) == error
    monkeypatch.setenv("PLAYGROUND_MAX_NODES_PER_ROOM", "12")
    assert env_number("PLAYGROUND_MAX_NODES_PER_ROOM", 5000) == 12


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("0", "PLAYGROUND_TICK_SECONDS=0.0: must be from 0.05 to 60.0"),  # beat would spin
        ("0.01", "PLAYGROUND_TICK_SECONDS=0.01: must be from 0.05 to 60.0"),
        ("3600", "PLAYGROUND_TICK_SECONDS=3600.0: must be from 0.05 to 60.0"),
        ("nan", "PLAYGROUND_TICK_SECONDS=nan: must be from 0.05 to 60.0"),
        ("inf", "PLAYGROUND_TICK_SECONDS=inf: must be from 0.05 to 60.0"),
        ("soon", "PLAYGROUND_TICK_SECONDS='soon': expected float"),
    ],
)
def test_a_beat_period_out_of_bounds_names_its_variable(monkeypatch, raw, error) -> None:
    monkeypatch.setenv("PLAYGROUND_TICK_SECONDS", raw)
    with pytest.raises(ImproperlyConfigured) as info:
        env_within("PLAYGROUND_TICK_SECONDS", 0.75, 0.05, 60.0)
    assert str(info.value) == error
    for raw, value in (("", 0.75), ("0.05", 0.05), ("60", 60.0), (" 2 ", 2.0)):
        monkeypatch.setenv("PLAYGROUND_TICK_SECONDS", raw)
        assert env_within("PLAYGROUND_TICK_SECONDS", 0.75, 0.05, 60.0) == value


def test_the_beat_ticks_rooms_every_0_75_s_unless_set() -> None:
    """Beat's schedule and the tick's expiry follow PLAYGROUND_TICK_SECONDS, 0.75 s when it is
    not set (the page's picture stays under a second behind "now" at p95), read by a fresh
    process as the server reads it."""
    import json
    import os
    import subprocess
    import sys

    show = (
        "import json; from playground import settings as s; "
        "e = s.CELERY_BEAT_SCHEDULE['rooms-tick']; "
        "print(json.dumps([s.PLAYGROUND_TICK_SECONDS, e['schedule'], e['options']['expires']]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_TICK_SECONDS"}
    for value, expected in ((None, [0.75, 0.75, 1.5]), ("2", [2.0, 2.0, 4.0])):
        if value is not None:
            env["PLAYGROUND_TICK_SECONDS"] = value
        out = subprocess.run(
            [sys.executable, "-c", show], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(out.stdout) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(("value", "accepted"), [(15, True), (14, False)])
def test_an_imported_clusters_pods_are_counted_once(settings, value, accepted) -> None:
    """An imported cluster lists each workload and its pods (owned by the workload's
    controller, adopted at t=0): 15 pods, not 30 (workload replicas + the pods)."""
    from pathlib import Path

    listing = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl" / "three-zones.yaml"
    text, _report = imports.import_scenario(listing.read_text())
    settings.PLAYGROUND_MAX_PODS_PER_ROOM = value
    if accepted:
        room = rooms_create.room_create("", text, None, 10.0)
        assert len(reading.room_snapshot(room)["pods"]) == 15
    else:
        refused(
            "PLAYGROUND_MAX_PODS_PER_ROOM",
            14,
            "this scenario has 15 pods",
            rooms_create.room_create,
            "",
            text,
            None,
            10.0,
        )
        assert Room.objects.count() == 0


@pytest.mark.parametrize(
    ("name", "high"),
    [
        ("PLAYGROUND_MAX_REQUEST_BYTES", 64 * 2**20),
        ("PLAYGROUND_MAX_UNSENT_BYTES", 256 * 2**20),
        ("PLAYGROUND_MAX_SOCKETS_PER_ADDRESS", 100_000),
    ],
)
def test_the_wire_limits_are_bounded_and_name_their_variable(monkeypatch, name, high) -> None:
    """Issue #35: what a request body and a websocket may hold is bounded where it enters."""
    from playground.settings import env_at_most

    for raw, error in (
        (str(high + 1), f"{name}={high + 1}: must be at most {high} (0 turns it off)"),
        ("-1", f"{name}='-1': must not be negative (0 turns it off)"),
        ("lots", f"{name}='lots': expected int"),
    ):
        monkeypatch.setenv(name, raw)
        with pytest.raises(ImproperlyConfigured) as info:
            env_at_most(name, 7, high)
        assert str(info.value) == error
    for raw, value in (("", 7), ("0", 0), (str(high), high)):
        monkeypatch.setenv(name, raw)
        assert env_at_most(name, 7, high) == value
