"""Issue #24: what an attacker found, one test per numbered item (the consumer, the room
services, the admin; item 1 is tests/engine/test_safe_yaml.py, item 7 test_supervision.py,
item 10 test_hardening_daphne.py). Real Redis and channels_redis layer, no mocks."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from controller.lessons import classroom
from controller.lessons.definition import LessonError
from controller.limits import LimitError
from controller.live.presence import presence_key
from controller.locks import redis_client
from controller.models import Action, LessonState, Room
from controller.rooms import actions, controls, create, errors, runtime
from controller.rooms import tick as rooms_tick
from playground.asgi import application
from tests.app.test_lessons import LESSON

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: hard}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: n-1, zone: zone-a}
    - {name: n-2, zone: zone-b}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: n-1, containers: [{name: web}]}
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api, namespace: default}
      spec:
        replicas: 2
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec: {containers: [{name: api}]}
"""

pytestmark = pytest.mark.usefixtures("fresh_channel_layer")


@pytest.fixture
def room(db: None) -> Room:
    room = create.room_create("hard", SCENARIO, None, 10.0)
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def tick(room: Room, wall_s: float) -> Room:
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


def _comm(room: Room | None, token: str | None = None, path: str = "") -> WebsocketCommunicator:
    if room is not None and token is None:
        token = room.operator_token
    return WebsocketCommunicator(
        application,
        path or f"/ws/rooms/{room.slug}/?token={token}&name=op",
        headers=[(b"origin", b"http://localhost")],
    )


async def _until(comm: WebsocketCommunicator, types: tuple[str, ...]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = await comm.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        if msg.get("type") in types:
            return msg
    raise AssertionError(f"no {types} message")


# -- 2: one action's unstorable value froze the room ------------------------------------------
@pytest.mark.parametrize(
    ("payload", "path"),
    [
        pytest.param(
            {"type": "SetNodeNotReady", "node": "n-1", "message": "\ud800"},
            "action.message: contains a lone surrogate",
            id="a lone surrogate in SetNodeNotReady's message",
        ),
        pytest.param(
            {
                "type": "SetParameters",
                "apiServer": {"defaultUnreachableTolerationSeconds": 10**30},
            },
            "action.apiServer.defaultUnreachableTolerationSeconds: 10000000... (31 digits) is "
            "outside the 64-bit integer range",
            id="toleration seconds 10^30",
        ),
    ],
)
def test_an_unstorable_action_is_refused_at_submit_and_the_room_keeps_ticking(
    room: Room, payload: dict[str, Any], path: str
) -> None:
    with pytest.raises(errors.ActionError) as err:
        actions.action_submit(room, payload, "op")
    assert str(err.value).startswith(path)
    assert tick(room, 5).sim_ms == 50_000  # the clock goes on


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        pytest.param(
            "  apiServer: {defaultUnreachableTolerationSeconds: 1000000000000000000000000000000}\n",
            "spec.apiServer.defaultUnreachableTolerationSeconds: ",
            id="toleration seconds 10^30",
        ),
        pytest.param(
            '  faults: [{at: 5s, type: SetNodeNotReady, node: n-1, message: "\\ud800"}]\n',
            "spec.faults[0].message: contains a lone surrogate",
            id="a lone surrogate",
        ),
    ],
)
def test_the_same_values_in_a_scenario_are_refused_at_creation_not_a_500(
    client, db, extra: str, path: str
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = SCENARIO.replace("  nodes:", extra + "  nodes:")
    upload = SimpleUploadedFile("bad.yaml", bad.encode())
    response = client.post("/", {"name": "", "upload": upload, "speed": "10"})
    assert response.status_code == 200
    assert path in response.content.decode()
    assert Room.objects.count() == 0


# -- 3: a failed tick left the engine out of step with the database ----------------------------
def test_a_failing_tick_drops_the_engine_refuses_its_action_and_the_room_goes_on(
    room: Room, monkeypatch
) -> None:
    from controller.engine import faults

    real = faults.HANDLERS["Cordon"]

    def broken(sim, a, now):  # type: ignore[no-untyped-def]
        real(sim, a, now)  # changes the engine, then fails: the engine is half changed
        raise OverflowError("a bug")

    tick(room, 1)
    good = actions.action_submit(room, {"type": "Uncordon", "node": "n-2"}, "op")
    monkeypatch.setitem(faults.HANDLERS, "Cordon", broken)
    bad = actions.action_submit(room, {"type": "Cordon", "node": "n-1"}, "op")
    r = tick(room, 2)
    assert Action.objects.get(pk=bad.pk).status == Action.REFUSED
    assert "could not be applied (OverflowError: a bug)" in Action.objects.get(pk=bad.pk).error
    assert room.pk not in runtime._CACHE  # dropped: it may be half changed
    monkeypatch.setitem(faults.HANDLERS, "Cordon", real)
    r = tick(r, 3)
    assert r.sim_ms == 30_000  # the room goes on
    assert Action.objects.get(pk=good.pk).status == Action.APPLIED  # not lost, applied once
    from controller import timeline_store

    faults_seen = [d.get("fault") for _i, _t, typ, d in timeline_store.after(r) if typ == "Fault"]
    assert faults_seen == ["Uncordon"]
    # The engine in the worker is the one the database describes: n-1 is not cordoned.
    sim = runtime._runtime(r).sim
    assert sim.cluster.nodes["n-1"].unschedulable is False


def test_a_tick_that_fails_with_no_action_to_blame_pauses_the_room_saying_why(
    room: Room, monkeypatch
) -> None:
    from controller.rooms import tick as t

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("a bug in persist")

    monkeypatch.setattr(t, "_persist", broken)
    r = tick(room, 2)
    assert r.paused and r.sim_ms == 0
    note = Action.objects.filter(room=r, actor="server").get()
    assert note.error == "the room could not advance (ValueError: a bug in persist); it is paused"


def test_a_tick_the_database_cannot_store_blames_nobody_and_is_tried_again(
    room: Room, monkeypatch
) -> None:
    from django.db import OperationalError

    from controller.rooms import tick as t

    real = t._persist
    action = actions.action_submit(room, {"type": "Cordon", "node": "n-1"}, "op")

    def busy(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("database is locked")

    monkeypatch.setattr(t, "_persist", busy)
    with pytest.raises(OperationalError):
        tick(room, 2)
    r = Room.objects.get(pk=room.pk)
    assert not r.paused and Action.objects.get(pk=action.pk).status == Action.PENDING
    monkeypatch.setattr(t, "_persist", real)
    assert tick(r, 3).sim_ms == 30_000
    assert Action.objects.get(pk=action.pk).status == Action.APPLIED


# -- 4 and 12: frames and paths the consumer must survive ----------------------------------------
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("frame", "expect"),
    [
        pytest.param({"bytes_data": b"\x00"}, ("close", 4415), id="binary frame: 4415"),
        pytest.param({"text": ""}, ("error", "empty message"), id="empty frame"),
        pytest.param({"text_data": "  "}, ("error", "empty message"), id="blank frame"),
        pytest.param({"text_data": "{"}, ("error", "messages must be JSON objects"), id="not JSON"),
        pytest.param(
            {"text_data": '{"type": "nope"}'}, ("error", "unknown message type"), id="unknown type"
        ),
        pytest.param(
            {"text_data": '{"type": "action", "action": {"type": "Cordon", "node": "\\ud800"}}'},
            ("error", "action.node: contains a lone surrogate"),
            id="a lone surrogate anywhere",
        ),
    ],
)
def test_every_frame_gets_an_answer_and_presence_is_cleaned_up(
    frame: dict[str, Any], expect: tuple[str, Any]
) -> None:
    room = create.room_create("frames", SCENARIO, None, 10.0)

    async def run() -> tuple[Any, int]:
        comm = _comm(room)
        assert (await comm.connect())[0]
        await _until(comm, ("snapshot",))
        if "text" in frame:  # (send_to refuses an empty text)
            await comm.send_input({"type": "websocket.receive", **frame})
        else:
            await comm.send_to(**frame)
        if expect[0] == "close":
            out = await comm.receive_output(timeout=10)
            while out["type"] != "websocket.close":
                out = await comm.receive_output(timeout=10)
            got: Any = ("close", out.get("code"))
        else:
            msg = await _until(comm, ("error",))
            got = ("error", msg["message"])
            await comm.send_json_to({"type": "ping"})  # the socket is still open
            assert (await _until(comm, ("pong",)))["type"] == "pong"
        await comm.disconnect()
        return got, redis_client().hlen(presence_key(room.pk))

    got, present = async_to_sync(run)()
    assert got[0] == expect[0]
    assert got[1] == expect[1] if expect[0] == "close" else expect[1] in got[1]
    assert present == 0  # no ghost viewer


@pytest.mark.django_db(transaction=True)
def test_an_unknown_websocket_path_is_closed_cleanly_with_4404() -> None:
    async def run() -> Any:
        comm = _comm(None, path="/ws/nowhere/")
        connected, code = await comm.connect()
        out = await comm.receive_output(timeout=5) if connected else {"code": code}
        await comm.disconnect()
        return connected, out

    connected, out = async_to_sync(run)()
    assert (connected, out.get("type"), out.get("code")) == (True, "websocket.close", 4404)


# -- 5: rewind bounds ---------------------------------------------------------------------------
@pytest.mark.parametrize("t", [1e308, "1e308", 10**400, -1, float("inf"), "nan", 9.3e9])
def test_a_rewind_out_of_bounds_is_refused_with_the_field(room: Room, t: Any) -> None:
    tick(room, 2)
    with pytest.raises(errors.ActionError, match="^rewind: t must be"):
        controls.room_rewind(room.pk, t, "op")


# -- 6: Redis down ------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_with_redis_down_handshakes_succeed_sockets_stay_open_and_resume_by_themselves(
    redis_server, caplog
) -> None:
    room = create.room_create("redis", SCENARIO, None, 10.0)

    async def run() -> list[dict[str, Any]]:
        open_before = _comm(room)
        assert (await open_before.connect())[0]
        await _until(open_before, ("snapshot",))
        redis_server.stop()
        try:
            # A new handshake while Redis is down: accepted, snapshot, "paused".
            fresh = _comm(room, token="")
            assert (await fresh.connect())[0]
            await _until(fresh, ("snapshot",))
            paused_new = await _until(fresh, ("live",))
            # The open socket is told, and stays open: its messages are still answered
            # (the rate check fails open).
            paused_old = await _until(open_before, ("live",))
            await open_before.send_json_to({"type": "ping"})
            await _until(open_before, ("pong",))
        finally:
            redis_server.start()
        resumed = await _until(open_before, ("live",))
        await _until(open_before, ("snapshot",))
        await fresh.disconnect()
        await open_before.disconnect()
        return [paused_new, paused_old, resumed]

    paused_new, paused_old, resumed = async_to_sync(run)()
    assert paused_new["paused"] is True and "live updates paused" in paused_new["message"]
    assert paused_old["paused"] is True
    assert resumed == {"type": "live", "paused": False}
    assert [r.message for r in caplog.records].count(
        next(m for m in (r.message for r in caplog.records) if m.startswith("rate check skipped"))
    ) == 1


# -- 8: lesson.next half-applied -----------------------------------------------------------------
def test_lesson_next_at_the_owners_running_room_limit_is_refused_whole(db, settings) -> None:
    room = create.room_create("lesson", LESSON, None, 10.0)
    room = tick(room, 20)  # paused at the first checkpoint
    ls = LessonState.objects.get(room=room)
    assert room.paused and ls.checkpoint
    classroom.reveal(room.pk)  # (Next on an unrevealed question reveals it first)
    ls = LessonState.objects.get(room=room)
    settings.PLAYGROUND_MAX_RUNNING_ROOMS = 1
    create.room_create("another, running", SCENARIO, None, 10.0)
    with pytest.raises(LimitError, match="^PLAYGROUND_MAX_RUNNING_ROOMS=1"):
        classroom.next_step(room.pk, "op")
    after = LessonState.objects.get(room=room)
    # nothing moved: the same step, the question still open and revealed
    assert (after.step, after.checkpoint, after.revealed) == (ls.step, ls.checkpoint, True)
    assert Room.objects.get(pk=room.pk).paused
    runtime.forget_cache()


# -- 9 and 13: lesson answers --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("checkpoint", "answer", "error"),
    [
        pytest.param(
            "silent",
            {"answer": 2, "name": "\ud800"},
            "lesson.answer.name: contains a lone surrogate",
            id="a lone surrogate in the name",
        ),
        pytest.param(
            "silent",
            {"answer": 2, "client": "\ud800"},
            "lesson.answer: the page's client id contains a lone surrogate",
            id="a lone surrogate in the client id (found by the fuzz target)",
        ),
        pytest.param(
            "taint",
            {"answer": 1e308},
            "lesson.answer.answer: must be a time in seconds (at most 9223372036,",
            id="a time of 1e308",
        ),
        pytest.param(
            "taint",
            {"answer": 10**400},
            "lesson.answer.answer: 10000000... (401 digits) is outside the 64-bit integer range",
            id="a time of 10^400",
        ),
    ],
)
def test_a_lesson_answer_that_cannot_be_stored_is_refused_with_the_field(
    db, checkpoint: str, answer: dict[str, Any], error: str
) -> None:
    room = tick(create.room_create("lesson", LESSON, None, 10.0), 20)  # at "silent"
    if checkpoint == "taint":
        classroom.reveal(room.pk)  # a question is never left unrevealed
        classroom.next_step(room.pk, "t")
        room = tick(Room.objects.get(pk=room.pk), 30)
    assert LessonState.objects.get(room=room).checkpoint == checkpoint
    client = answer.pop("client", "c1")
    with pytest.raises(LessonError) as err:
        classroom.answer(room.pk, client, {"checkpoint": checkpoint, **answer})
    assert str(err.value).startswith(error)
    runtime.forget_cache()


# -- 11: rate limits per connection and per operator link ---------------------------------------
@pytest.mark.django_db(transaction=True)
def test_a_flooding_viewer_does_not_starve_the_operator_on_the_same_address(settings) -> None:
    settings.PLAYGROUND_MAX_ACTIONS_PER_SECOND = 5
    room = create.room_create("rate", SCENARIO, None, 10.0)

    async def run() -> tuple[list[str], list[str]]:
        viewer, operator = _comm(room, token=""), _comm(room)
        for comm in (viewer, operator):
            comm.scope["client"] = ("10.2.2.2", 1234)  # one address (one NAT)
            assert (await comm.connect())[0]
            await _until(comm, ("snapshot",))
        while time.time() % 1 > 0.3:
            time.sleep(0.05)
        for _ in range(30):
            await viewer.send_json_to({"type": "ping"})
        for v in (11, 12, 13):
            await operator.send_json_to({"type": "speed", "value": v})
        flood = [(await _until(viewer, ("pong", "error")))["type"] for _ in range(30)]
        mine = [(await _until(operator, ("ack", "error")))["type"] for _ in range(3)]
        await viewer.disconnect()
        await operator.disconnect()
        return flood, mine

    flood, mine = async_to_sync(run)()
    assert flood.count("error") >= 20  # the flooder is limited...
    assert mine == ["ack", "ack", "ack"]  # ...the operator beside it is not


# -- 13: targets that do not exist are refused at submit -----------------------------------------
@pytest.mark.parametrize(
    ("payload", "error"),
    [
        pytest.param(
            {"type": "ZoneOutage", "zone": "zone-x"},
            'action.zone: no node of this room is in zone "zone-x"',
            id="unknown zone",
        ),
        pytest.param(
            {"type": "ScaleWorkload", "workload": "Deployment/nope", "replicas": 3},
            'action.workload: unknown workload "Deployment/nope"',
            id="unknown workload",
        ),
        pytest.param(
            {"type": "Cordon", "node": "n-9"}, "action.node: unknown node", id="unknown node"
        ),
        pytest.param(
            {"type": "DeletePod", "pod": "default/nope"},
            'action.pod: unknown pod "default/nope"',
            id="unknown pod",
        ),
        pytest.param(
            {"type": "LeakMemory", "pod": "default/web", "rate": "1e308"},
            "action.rate: ",
            id="LeakMemory rate 1e308",
        ),
        pytest.param(
            {"type": "SetParameters", "controllerManager": {"nodeEvictionRate": 1e308}},
            "action.controllerManager.nodeEvictionRate: 1e+308 is out of range",
            id="nodeEvictionRate 1e308",
        ),
        pytest.param(
            {"type": "SetParameters", "controllerManager": {"nodeEvictionRate": 1e-320}},
            "action.controllerManager.nodeEvictionRate: ",
            id="nodeEvictionRate 1e-320",
        ),
    ],
)
def test_an_action_naming_what_does_not_exist_or_out_of_range_is_refused_at_submit(
    room: Room, payload: dict[str, Any], error: str
) -> None:
    with pytest.raises(errors.ActionError) as err:
        actions.action_submit(room, payload, "op")
    assert str(err.value).startswith(error), err.value
    assert not Action.objects.filter(room=room, kind=payload["type"]).exists()


def test_existing_zone_and_workload_are_accepted(room: Room) -> None:
    actions.action_submit(room, {"type": "ZoneOutage", "zone": "zone-a"}, "op")
    actions.action_submit(
        room, {"type": "ScaleWorkload", "workload": "Deployment/api", "replicas": 3}, "op"
    )


# -- 13 and #25: the admin's room parameters ---------------------------------------------------
@pytest.fixture
def staff(db: None) -> Client:
    user = get_user_model().objects.create_superuser("admin", "a@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_offers_only_the_releases_fields_with_its_defaults(staff, room: Room) -> None:
    page = staff.get(f"/admin/controller/clusterparameters/{room.parameters.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "controllerManager.nodeEvictionRate" in text
    assert "Default in Kubernetes 1.34: 0.1" in text
    assert "podEvictionTimeout" not in text and "enableTaintManager" not in text


def test_the_admin_shows_every_duration_in_one_unit_style(staff, room: Room) -> None:
    """nodeStatusUpdateFrequency read "10000" where every other duration read "5s", "50s"."""
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    form = staff.get(url).context["adminform"].form
    shown = {name: form.fields[name].initial for name in form.setting_fields}
    assert shown["kubelet__nodeStatusUpdateFrequency"] == "10s"
    assert shown["controllerManager__nodeMonitorPeriod"] == "5s"
    periods = [n for n, (_s, _k, kind) in form.setting_fields.items() if kind == "status period"]
    assert periods and all(str(shown[n]).endswith("s") for n in periods)
    # Unchanged, the form applies nothing (the shown value reads back as the same duration).
    assert staff.post(url, shown).status_code == 302
    assert not Action.objects.filter(room=room, kind="SetParameters").exists()


def test_the_admin_refuses_a_bad_value_naming_the_field(staff, room: Room) -> None:
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    form = staff.get(url).context["adminform"].form
    data = {name: form.fields[name].initial for name in form.setting_fields}
    data["controllerManager__nodeEvictionRate"] = "1.0e+308"
    response = staff.post(url, data)
    assert response.status_code == 200  # the form again, with the error
    assert "nodeEvictionRate: 1e+308 is out of range" in response.content.decode()
    assert not Action.objects.filter(room=room, kind="SetParameters").exists()


def test_the_admin_applies_a_change_as_one_logged_set_parameters_action(staff, room: Room) -> None:
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    form = staff.get(url).context["adminform"].form
    data = {name: form.fields[name].initial for name in form.setting_fields}
    data["controllerManager__nodeEvictionRate"] = "0.5"
    data["controllerManager__nodeMonitorGracePeriod"] = "60s"
    response = staff.post(url, data)
    assert response.status_code == 302, response.content.decode()[-2000:]
    action = Action.objects.get(room=room, kind="SetParameters")
    assert action.payload == {
        "type": "SetParameters",
        "controllerManager": {"nodeMonitorGracePeriod": "60s", "nodeEvictionRate": 0.5},
    }
    r = tick(room, 1)
    from controller import timeline_store

    fault = next(d for _i, _t, typ, d in timeline_store.after(r) if typ == "Fault")
    # By field name, whatever the stored payload's key order (jsonb keeps none).
    assert fault["changes"] == [
        "controllerManager.nodeEvictionRate: 0.1 -> 0.5",
        "controllerManager.nodeMonitorGracePeriod: 50s -> 60s",  # (1.34's default: 50s)
    ]
