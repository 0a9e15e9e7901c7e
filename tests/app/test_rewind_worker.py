"""A rewind is recorded and answered at once; the worker that owns the room runs it (issue
#35): its engine built outside any transaction, off the web process, under the room's Redis
lock; its results written in one short transaction. Meanwhile other rooms' snapshot.json and
ticks go on, and the room stands still. A pending rewind outlives a crash (beat sends it
again). Real Redis (the channel layer, the lock), the test database (SQLite, or PostgreSQL
with PLAYGROUND_DB=postgres); a real worker for the end-to-end case."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection

from controller import tasks
from controller.engine.simulation import Simulation
from controller.kubeapi import store
from controller.locks import redis_client
from controller.models import Action, Room
from controller.rooms import compare, controls, create, tick
from playground.asgi import application
from tests.app.scenarios import pod, scenario
from tests.app.test_rooms import headless_events, room_events

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("redis_server", "fresh_channel_layer"),
]

SCENARIO = scenario("rw", 3, (pod(),), ("{at: 20s, type: StopKubelet, node: n-1}",))
WORKER = "rewind-worker"


def advanced(name: str, wall_s: float) -> Room:
    room = create.room_create(name, SCENARIO, None, 10.0)
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


async def operator_socket(room: Room) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=op",
        headers=[(b"origin", b"http://localhost")],
    )
    assert (await comm.connect())[0]
    return comm


async def until(comm: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    while True:
        msg = await comm.receive_json_from(timeout=20)
        if msg["type"] == kind:
            return msg


def test_a_rewind_is_answered_at_once_and_its_engine_runs_in_the_owner_not_the_web(
    client, monkeypatch, tmp_path
) -> None:
    """Today's code re-simulated the room inside the websocket consumer, in a transaction
    with the room's row locked (SQLite: the database's write lock), for the whole engine run.
    Now the consumer answers "rewinding" with the room unchanged and a pending rewind; the
    worker's run (room_rewind_task) holds no transaction in its engine, which is held here
    while another room's snapshot.json and tick succeed and the room itself stays still."""
    big = advanced("big", 3)  # 30 s
    other = create.room_create("other", SCENARIO, None, 10.0)
    inside, released = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}
    real = Simulation.run

    def run(sim: Simulation, until_ms: int) -> None:
        if threading.current_thread().name == WORKER and not inside.is_set():
            seen["in_transaction"] = connection.in_atomic_block
            inside.set()
            released.wait(30)
        real(sim, until_ms)

    monkeypatch.setattr(Simulation, "run", run)

    async def flow() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        comm = await operator_socket(big)
        await comm.send_json_to({"type": "rewind", "t": 10})
        got: dict[str, dict[str, Any]] = {}
        while len(got) < 2:  # (in either order: the broadcast goes through the layer)
            msg = await comm.receive_json_from(timeout=20)
            if msg["type"] in ("ack", "rewinding"):
                got[msg["type"]] = msg
        await sync_to_async(while_it_rewinds)()
        reset = await until(comm, "reset")
        await comm.disconnect()
        return got["ack"], got["rewinding"], reset

    def while_it_rewinds() -> None:
        assert Room.objects.get(pk=big.pk).sim_ms == 30_000  # not done in the web process
        assert controls.rewind_pending(big.pk)
        # The room stands still until its rewind is run: a tick does not advance it.
        assert tick.room_advance(big.pk, big.wall_anchor + timedelta(seconds=9)) is None
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                tasks.room_rewind_task(big.pk)
            except BaseException as exc:
                errors.append(exc)
            finally:
                connection.close()

        thread = threading.Thread(target=worker, name=WORKER)
        thread.start()
        try:
            assert inside.wait(30), "the rewind's engine never ran"
            assert seen["in_transaction"] is False
            assert client.get(f"/rooms/{other.slug}/snapshot.json").status_code == 200
            delta = tick.room_advance(other.pk, other.wall_anchor + timedelta(seconds=5))
            assert delta is not None and delta["t"] == 50
            assert tasks._tick_locked(big.pk, None) is False  # its lock is the rewind's
        finally:
            released.set()
            thread.join(60)
        assert errors == [] and not thread.is_alive()

    ack, rewinding, reset = async_to_sync(flow)()
    assert ack == {"type": "ack", "control": "rewind", "rewinding": True}
    assert rewinding["t"] == 10
    assert reset["t"] == 10 and reset["rewound"] == 10
    r = Room.objects.get(pk=big.pk)
    assert r.sim_ms >= 10_000 and not controls.rewind_pending(big.pk)
    done = Action.objects.get(room=big, kind="rewind")
    assert done.status == Action.APPLIED and store.history_start(r) == done.payload["seq"]


def test_the_rewound_timeline_is_the_headless_one_and_two_rewinds_in_a_row(tmp_path) -> None:
    """The result is today's: the timeline the headless simulate gives for the room's
    scenario and actions up to t. Two rewinds asked before either ran are run in order; one
    whose t is past the clock the first left is refused, visibly, and changes nothing."""
    room = advanced("twice", 6)  # 60 s
    controls.rewind_request(room.pk, 40, "op")
    controls.rewind_request(room.pk, 25, "op")
    assert tasks._tick_locked(room.pk, None, rewind=True)
    r = Room.objects.get(pk=room.pk)
    assert [a.status for a in Action.objects.filter(room=r, kind="rewind")] == ["applied"] * 2
    assert r.sim_ms >= 25_000
    controls.room_control(room.pk, "pause", None, "op")
    r = Room.objects.get(pk=room.pk)
    assert room_events(r) == headless_events(r, tmp_path)

    controls.room_rewind(room.pk, 10, "op")
    controls.rewind_request(room.pk, 5, "op")
    ahead = Room.objects.get(pk=room.pk)
    controls.rewind_request(room.pk, 8, "op")  # valid when asked (the clock is at 10 s)
    controls.rewind_run(room.pk)
    refused = Action.objects.filter(room=room, kind="rewind").order_by("-id").first()
    assert refused.status == Action.REFUSED and "between 0 and 5 s" in refused.error
    r = Room.objects.get(pk=room.pk)
    assert r.sim_ms == 5_000 and r.version == ahead.version + 1
    assert room_events(r) == headless_events(r, tmp_path)


def test_a_rewind_during_a_tick_waits_for_its_lock_and_wins(monkeypatch, tmp_path) -> None:
    """A tick holds the room's lock: the rewind's run tries again later (it is sent again,
    not lost); once run, the tick's result is superseded and the timeline is the rewind's."""
    room = advanced("during", 3)
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(
        tasks, "send_rewind", lambda rid, tries=0, countdown=None: sent.append((rid, tries))
    )
    controls.rewind_request(room.pk, 10, "op")
    lock = tasks.RoomLock(room.pk)
    with lock as got:
        assert got
        tasks.room_rewind_task(room.pk)  # the lock is held: sent again
        assert sent == [(room.pk, 1)] and controls.rewind_pending(room.pk)
    tasks.room_rewind_task(room.pk, 1)
    r = Room.objects.get(pk=room.pk)
    assert not controls.rewind_pending(room.pk) and r.sim_ms >= 10_000
    controls.room_control(room.pk, "pause", None, "op")
    r = Room.objects.get(pk=room.pk)
    assert room_events(r) == headless_events(r, tmp_path)


def test_a_lost_rewind_is_sent_again_by_beat(monkeypatch) -> None:
    """The worker running a rewind died: the rewind is still pending, its "sent" mark expires,
    and the next beat's tick of the room sends its run again (a tick does not advance it)."""
    room = advanced("lost", 3)
    sent: list[int] = []
    monkeypatch.setattr(tasks, "send_rewind", lambda rid, tries=0, countdown=None: sent.append(rid))
    controls.rewind_request(room.pk, 10, "op")
    tasks.mark_rewind_sent(room.pk)
    assert tasks._tick_locked(room.pk, None) and sent == []  # sent already: not again
    redis_client().delete(f"playground:room:{room.pk}:rewind-sent")  # (its mark expired)
    assert tasks._tick_locked(room.pk, None) and sent == [room.pk]
    assert Room.objects.get(pk=room.pk).sim_ms == 30_000 and controls.rewind_pending(room.pk)


def test_compared_rooms_rewind_together_on_one_clock() -> None:
    pair = compare.comparison_create(
        "pair",
        SCENARIO,
        [("1.18", {"kubernetesVersion": "1.18"}), ("1.34", {"kubernetesVersion": "1.34"})],
    )
    for rid in (pair.left_id, pair.right_id):
        r = Room.objects.get(pk=rid)
        tick.room_advance(rid, r.wall_anchor + timedelta(seconds=3))
    ids = controls.rewind_request(pair.right_id, 10, "op")
    assert ids == sorted([pair.left_id, pair.right_id])
    for rid in ids:
        assert tasks._tick_locked(rid, None, rewind=True)
    left, right = (Room.objects.get(pk=rid) for rid in ids)
    assert left.wall_anchor == right.wall_anchor and left.sim_anchor_ms == 10_000
    assert right.sim_anchor_ms == 10_000


def test_a_worker_runs_a_rewind_sent_to_it(celery_worker_proc) -> None:
    """End to end: the request sends the run to the owner (a real worker); the room is
    rewound there and its pending rewind applied."""
    room = advanced("e2e", 3)
    for rid in controls.rewind_request(room.pk, 10, "op"):
        tasks.send_rewind(rid)
    deadline = time.monotonic() + 60
    while controls.rewind_pending(room.pk) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not controls.rewind_pending(room.pk)
    assert Action.objects.get(room=room, kind="rewind").status == Action.APPLIED
