"""Live rooms with real Redis, a real Celery worker and the real channels_redis layer."""

from __future__ import annotations

import io
import threading
import time

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from controller import timeline_store
from controller.engine import cli
from controller.engine.scenario import load_scenario
from controller.engine.timeline import to_json
from controller.locks import RoomLock
from controller.models import Action, EngineSnapshot, Room, TimelineEvent
from controller.rooms import actions as rooms_actions
from controller.rooms import controls, create, reading, runtime, tick
from controller.rooms import errors as rooms_errors
from playground.asgi import application
from tests.app.scenarios import pod, scenario

SCENARIO = scenario("live", 3, (pod(),))


def make_room() -> Room:
    room = create.room_create("live", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    return Room.objects.get(pk=room.pk)


def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def connect(room: Room, token: str = "", name: str = "x") -> WebsocketCommunicator:
    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={token}&name={name}",
        headers=[(b"origin", b"http://localhost")],
    )
    connected, _ = await comm.connect()
    assert connected
    return comm


async def receive_until(comm: WebsocketCommunicator, match, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = await comm.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        found = match(msg)
        if found:
            return msg, found
    raise AssertionError("no matching message")


def headless_events(room: Room, tmp_path) -> list[str]:
    path = tmp_path / "export.yaml"
    path.write_text(reading.room_export(room))
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(str(path), room.sim_ms / 1000, "jsonl", None, False, out, err) == 0, (
        err.getvalue()
    )
    return out.getvalue().splitlines()


def room_events(room: Room) -> list[str]:
    return [
        to_json({"t": t, "type": typ, **data}) for _idx, t, typ, data in timeline_store.after(room)
    ]


def test_operator_fault_reaches_both_clients_and_viewer_cannot_act(celery_worker_proc) -> None:
    room = make_room()

    async def scenario() -> None:
        op = await connect(room, room.operator_token, "teacher")
        viewer = await connect(room, "", "student")
        snap_op = await op.receive_json_from(timeout=10)
        snap_v = await viewer.receive_json_from(timeout=10)
        assert snap_op["role"] == "operator" and snap_v["role"] == "viewer"
        # The viewer may not act: refused with a message, nothing recorded.
        await viewer.send_json_to(
            {"type": "action", "action": {"type": "StopKubelet", "node": "n-1"}}
        )
        _, err = await receive_until(viewer, lambda m: m if m["type"] == "error" else None)
        assert "Only operators" in err["message"]
        # The operator stops n-1's kubelet (applied at t=0.001 s), then steps 60 s.
        await op.send_json_to({"type": "action", "action": {"type": "StopKubelet", "node": "n-1"}})
        await receive_until(op, lambda m: m if m["type"] == "ack" else None)
        await op.send_json_to({"type": "step", "value": 60})

        def unknown(m):
            if m.get("type") != "delta":
                return None
            return next(
                (e for e in m["events"] if e["type"] == "NodeReady" and e["status"] == "Unknown"),
                None,
            )

        for comm in (op, viewer):
            _, event = await receive_until(comm, unknown)
            # Last renewal at 0 s; first pass strictly past 0 + 40 s is 45 s.
            assert (event["node"], event["t"]) == ("n-1", 45.0)
        await op.disconnect()
        await viewer.disconnect()

    async_to_sync(scenario)()
    actions = list(Action.objects.filter(room=room).exclude(kind__in=runtime.CONTROL_KINDS))
    assert [(a.kind, a.status, a.actor) for a in actions] == [
        ("StopKubelet", "applied", "teacher (operator)")
    ]


def test_export_then_simulate_gives_the_identical_timeline(celery_worker_proc, tmp_path) -> None:
    room = make_room()
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    controls.room_control(room.pk, "step", 30, "t")
    tick.room_advance(room.pk)
    rooms_actions.action_submit(room, {"type": "Cordon", "node": "n-3"}, "t")
    controls.room_control(room.pk, "step", 400, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert room.sim_ms >= 430_000
    live = room_events(room)
    assert any('"PodDeleted"' in line for line in live)
    assert live == headless_events(room, tmp_path)


def test_a_node_added_live_with_its_own_kubelet_settings_keeps_the_scenarios_others(
    celery_worker_proc, tmp_path
) -> None:
    text = SCENARIO.replace(
        "spec:\n  nodes:", "spec:\n  kubelet: {nodeLeaseDurationSeconds: 20}\n  nodes:"
    )
    room = create.room_create("live", text, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    node = {"name": "n-4", "zone": "z", "kubelet": {"nodeStatusUpdateFrequency": "20s"}}
    rooms_actions.action_submit(room, {"type": "AddNode", "node": node}, "t")
    controls.room_control(room.pk, "step", 30, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    cfg = runtime._runtime(room).sim.kubelets["n-4"].cfg
    # As in a scenario file: the node's settings merge over the scenario's kubelet section.
    assert (cfg.node_lease_duration_seconds, cfg.node_status_update_frequency_ms) == (20, 20_000)
    exported = load_scenario(reading.room_export(room))
    (add,) = [f for f in exported.faults if f.type == "AddNode"]
    assert add.args["spec"].kubelet == cfg
    assert room_events(room) == headless_events(room, tmp_path)


def test_applying_a_manifest_live_shows_the_new_pod(celery_worker_proc) -> None:
    room = make_room()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "late", "namespace": "default"},
        "spec": {"containers": [{"name": "app"}]},
    }
    rooms_actions.action_submit(room, {"type": "Apply", "object": pod}, "t")
    controls.room_control(room.pk, "step", 5, "t")
    tick.room_advance(room.pk)
    assert Action.objects.get(room=room, kind="Apply").status == "applied"
    snap = reading.room_snapshot(Room.objects.get(pk=room.pk))
    assert "default/late" in {p["key"] for p in snap["pods"]}


def test_an_action_whose_node_another_operator_deleted_is_refused_and_the_room_goes_on(
    celery_worker_proc, tmp_path
) -> None:
    room = make_room()
    rooms_actions.action_submit(room, {"type": "DeleteNode", "node": "n-1"}, "alice")
    # Valid when sent (n-1 still exists), but n-1 is gone at its instant.
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "bob")
    controls.room_control(room.pk, "step", 5, "t")
    delta = tick.room_advance(room.pk)
    assert delta is not None
    assert delta["refused"] == [
        {"action": "StopKubelet", "actor": "bob", "error": 'action.node: unknown node "n-1"'}
    ]
    statuses = dict(Action.objects.filter(room=room).values_list("kind", "status"))
    assert (statuses["DeleteNode"], statuses["StopKubelet"]) == ("applied", "refused")
    # Only the deletion is in the timeline, and the room keeps ticking.
    faults = [e.data["fault"] for e in TimelineEvent.objects.filter(room=room, type="Fault")]
    assert faults == ["DeleteNode"]
    controls.room_control(room.pk, "step", 60, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert room.sim_ms >= 65_000
    # A worker restart replays only what was applied; the export simulates the same.
    runtime.forget_cache()
    controls.room_control(room.pk, "step", 5, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert room_events(room) == headless_events(room, tmp_path)


def test_a_snapshot_from_other_engine_code_is_not_trusted(celery_worker_proc) -> None:
    room = make_room()
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    controls.room_control(room.pk, "step", 60, "t")
    tick.room_advance(room.pk)
    before = room_events(Room.objects.get(pk=room.pk))
    # As after an upgrade: the stored snapshot was pickled by other code (and is unreadable).
    EngineSnapshot.objects.filter(room=room).update(engine_version="older", blob=b"junk")
    runtime.forget_cache()
    controls.room_control(room.pk, "step", 400, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    after = room_events(room)
    assert after[: len(before)] == before
    assert any('"PodDeleted"' in line for line in after[len(before) :])
    snap = EngineSnapshot.objects.get(room=room)
    assert snap.engine_version == runtime.ENGINE_VERSION


def test_export_keeps_objects_given_as_extra_yaml_documents(celery_worker_proc, tmp_path) -> None:
    extra = """---
apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: default}
spec: {nodeName: n-2, containers: [{name: c}]}
"""
    room = create.room_create("live", SCENARIO + extra, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-2"}, "t")
    controls.room_control(room.pk, "step", 400, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    live = room_events(room)
    assert any('"pod":"default/extra"' in line.replace(" ", "") for line in live)
    assert live == headless_events(room, tmp_path)


def test_twenty_operators_at_once_each_action_applied_exactly_once(celery_worker_proc) -> None:
    room = make_room()
    errors: list[BaseException] = []

    def operator(i: int) -> None:
        from django.db import connection

        try:
            node = f"n-{i % 3 + 1}"
            kind = "Cordon" if i % 2 else "Uncordon"
            rooms_actions.action_submit(room, {"type": kind, "node": node}, f"op{i}")
            from controller.tasks import room_tick_task

            room_tick_task.delay(room.pk)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=operator, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    wait_for(
        lambda: not Action.objects.filter(room=room, status="pending").exists(),
        what="all actions applied",
    )
    applied = list(
        Action.objects.filter(room=room, status="applied")
        .exclude(kind__in=runtime.CONTROL_KINDS)
        .order_by("id")
    )
    assert len(applied) == 20
    # Exactly once, in one order: one Fault event per action, in id order.
    faults = list(TimelineEvent.objects.filter(room=room, type="Fault").order_by("idx"))
    assert [(f.data["fault"], f.data["node"]) for f in faults] == [
        (a.kind, a.payload["node"]) for a in applied
    ]
    assert [f.t_ms for f in faults] == sorted(f.t_ms for f in faults)


def test_an_action_submitted_while_a_tick_runs_is_applied_before_the_tick_lets_go(
    transactional_db, redis_server, monkeypatch
) -> None:
    """An operator's action committed while the room's tick runs: its own tick finds the
    lock held and does nothing, so the running tick applies it before it lets go, instead of
    leaving it to the next beat (here there is none)."""
    from controller import tasks

    room = make_room()
    real = tick.room_advance
    calls: list[int] = []

    def advance(room_id, *args, **kwargs):
        calls.append(room_id)
        out = real(room_id, *args, **kwargs)
        if len(calls) == 1:  # after the first tick read its actions: another operator's,
            rooms_actions.action_submit(room, {"type": "Cordon", "node": "n-2"}, "late")
            with RoomLock(room_id) as got:  # whose own tick finds the lock held
                assert not got
        return out

    monkeypatch.setattr(tick, "room_advance", advance)
    rooms_actions.action_submit(room, {"type": "Cordon", "node": "n-1"}, "first")
    tasks.room_tick_task(room.pk)
    assert calls == [room.pk, room.pk]  # the tick ran again for the late action, then stopped
    statuses = dict(Action.objects.filter(room=room, kind="Cordon").values_list("actor", "status"))
    assert statuses == {"first": "applied", "late": "applied"}


def test_a_step_sent_while_a_tick_runs_is_done_before_the_tick_lets_go(
    transactional_db, redis_server, monkeypatch
) -> None:
    """The operator presses Step on a paused room while its tick runs (after that tick read the
    room): the step's own tick finds the lock held and does nothing. A step changes no
    action's status, so the running tick learns of it only from the owed-tick mark, and ticks
    again before it lets go; the room is 60 s further, with no beat (here there is none)."""
    from controller import tasks

    room = make_room()  # paused, at 0
    real = tick.room_advance
    calls: list[int] = []

    def advance(room_id, *args, **kwargs):
        calls.append(room_id)
        out = real(room_id, *args, **kwargs)
        if len(calls) == 1:
            controls.room_control(room_id, "step", 60, "teacher")
            tasks.room_tick_task(room_id)  # the step's tick: the lock is held
            assert calls == [room_id]  # it did not tick
        return out

    monkeypatch.setattr(tick, "room_advance", advance)
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "teacher")
    tasks.room_tick_task(room.pk)
    assert calls == [room.pk, room.pk]
    room.refresh_from_db()
    assert room.paused and room.sim_ms >= 60_000


def test_beat_ticks_a_paused_room_whose_step_is_not_done(
    transactional_db, redis_server, monkeypatch
) -> None:
    """A paused room's step whose tick was lost (its worker died): beat's next pass ticks it,
    as it ticks running rooms; a paused room with nothing owed is left alone."""
    from controller import tasks

    room, idle = make_room(), make_room()
    tasks.rooms_tick_task()  # each to the instant it was paused at
    room.refresh_from_db()
    idle.refresh_from_db()
    before = room.sim_ms
    controls.room_control(room.pk, "step", 30, "teacher")
    real = tick.room_advance
    ticked: list[int] = []

    def advance(room_id, *args, **kwargs):
        ticked.append(room_id)
        return real(room_id, *args, **kwargs)

    monkeypatch.setattr(tick, "room_advance", advance)
    tasks.rooms_tick_task()
    assert Room.objects.get(pk=room.pk).sim_ms == before + 30_000
    assert ticked == [room.pk]  # not the paused room with nothing owed


def test_worker_killed_mid_ticking_resumes_without_lost_or_duplicated_events(
    celery_worker_proc, tmp_path
) -> None:
    room = make_room()
    controls.room_control(room.pk, "resume", None, "t")
    controls.room_control(room.pk, "speed", 100, "t")
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    from controller.tasks import room_tick_task

    for _ in range(10):
        room_tick_task.delay(room.pk)
        time.sleep(0.1)
    celery_worker_proc.kill()  # mid-ticking
    runtime.forget_cache()
    celery_worker_proc.start()
    for _ in range(10):
        room_tick_task.delay(room.pk)
        time.sleep(0.1)
    wait_for(lambda: Room.objects.get(pk=room.pk).sim_ms > 60_000, what="the room to pass 60 s")
    controls.room_control(room.pk, "pause", None, "t")
    wait_for(lambda: not Action.objects.filter(room=room, status="pending").exists())
    time.sleep(1.0)  # let a tick in flight finish
    room.refresh_from_db()
    live = room_events(room)
    assert any('"NodeReady"' in line and '"Unknown"' in line for line in live)
    assert live == headless_events(room, tmp_path)


@pytest.mark.django_db(transaction=True)
def test_restart_of_every_process_keeps_rooms_time_and_timelines(tmp_path) -> None:
    room = make_room()
    rooms_actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    controls.room_control(room.pk, "step", 100, "t")
    tick.room_advance(room.pk)
    before = Room.objects.get(pk=room.pk)
    before_events = room_events(room)
    runtime.forget_cache()  # every process restarted: nothing in memory
    after = Room.objects.get(pk=room.pk)
    assert (after.sim_ms, after.event_count, after.seq) == (
        before.sim_ms,
        before.event_count,
        before.seq,
    )
    assert room_events(room) == before_events
    # ... and it goes on exactly as an uninterrupted run.
    controls.room_control(room.pk, "step", 400, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert room_events(room) == headless_events(room, tmp_path)


@pytest.mark.django_db(transaction=True)
def test_invalid_parameter_is_refused_with_the_same_message_everywhere(admin_client) -> None:
    room = make_room()
    before = (room.version, Action.objects.filter(room=room).count())
    expected = "controllerManager.nodeEvictionRate: must be >= 0, got -1"
    with pytest.raises(rooms_errors.ActionError) as info:
        rooms_actions.parameters_submit(room, {"controllerManager": {"nodeEvictionRate": -1}}, "t")
    assert expected in str(info.value)
    # The admin form.
    from controller.admin import ParametersForm

    # One field per setting of the room's release, each holding the value in force.
    blank = ParametersForm(instance=room.parameters)
    data = {name: blank.fields[name].initial for name in blank.setting_fields}
    data["controllerManager__nodeEvictionRate"] = "-1"
    form = ParametersForm(data=data, instance=room.parameters)
    assert not form.is_valid()
    assert expected in form.errors["controllerManager__nodeEvictionRate"][0]

    # The websocket.
    async def scenario() -> None:
        op = await connect(room, room.operator_token)
        await op.receive_json_from(timeout=10)
        await op.send_json_to(
            {"type": "params", "params": {"controllerManager": {"nodeEvictionRate": -1}}}
        )
        _, err = await receive_until(op, lambda m: m if m["type"] == "error" else None)
        assert expected in err["message"]
        await op.disconnect()

    async_to_sync(scenario)()
    room.refresh_from_db()
    assert (room.version, Action.objects.filter(room=room).count()) == before


@pytest.mark.parametrize(
    ("behind_wall_s", "expected_sim_ms"),
    [
        (100, 1_000_000),  # a slow worker: the tick catches up (10x: 1,000 simulated s)
        (300, 3_000_000),  # at the limit: still caught up
        (3 * 3600, 0),  # the stack was stopped for hours: resumes where its clock stood
    ],
)
def test_a_room_nobody_ticked_for_long_resumes_where_it_stood(
    db, settings, behind_wall_s, expected_sim_ms
) -> None:
    from datetime import timedelta

    settings.PLAYGROUND_MAX_CATCH_UP_SECONDS = 300
    room = create.room_create("stalled", SCENARIO, None, 10.0)
    anchor = room.wall_anchor
    Room.objects.filter(pk=room.pk).update(wall_anchor=anchor - timedelta(seconds=behind_wall_s))
    tick.room_advance(room.pk, anchor)
    room.refresh_from_db()
    assert room.sim_ms == expected_sim_ms
    if expected_sim_ms == 0:
        # Re-anchored at the tick: one wall second later it is 10 simulated seconds on.
        assert (room.sim_anchor_ms, room.wall_anchor) == (0, anchor)
        tick.room_advance(room.pk, anchor + timedelta(seconds=1))
        room.refresh_from_db()
        assert room.sim_ms == 10_000
