"""Process faults with real processes (issue #14): Redis restarted under a ticking room with
clients connected through a real Daphne, Daphne restarted, two beats at once. Clients are
controller.bench.liveclient.LiveClient, which follows the page's protocol (snapshot, seq, resync,
reconnect after a second)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from controller import timeline_store
from controller.bench.liveclient import LiveClient, wait_until
from controller.bench.procs import Beat, Daphne
from controller.models import Room, TimelineEvent
from controller.rooms import actions, controls, create, tick
from tests.app.conftest import Worker
from tests.app.test_rooms import SCENARIO, headless_events, room_events

pytestmark = pytest.mark.usefixtures("fresh_channel_layer")

RESYNC_S = 10.0  # the bound: every client back in sync this long after the fault


def _running_room(name: str) -> Room:
    room = create.room_create(name, SCENARIO, None, 10.0)
    actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    return room


def _server(room_id: int) -> tuple[int, int]:
    room = Room.objects.get(pk=room_id)
    return room.seq, room.sim_ms


server = sync_to_async(_server)


async def _clients(web: Daphne, room: Room) -> list[LiveClient]:
    clients = [
        LiveClient("127.0.0.1", web.port, room.slug, room.operator_token, "teacher"),
        LiveClient("127.0.0.1", web.port, room.slug, "", "student"),
    ]
    for c in clients:
        c.start()
    seq0, _ = await server(room.pk)
    # Both connected and following the ticks.
    await wait_until(
        lambda: all(c.snapshots >= 1 and c.seq >= seq0 + 2 for c in clients),
        20,
        "both clients to follow two ticks",
    )
    return clients


def _how(clients: list[LiveClient], fault_at: float) -> str:
    def back(c: LiveClient) -> str:
        later = [t - fault_at for t in c.connected_at if t > fault_at]
        return f"reconnected after {later[0]:.1f} s" if later else "never disconnected"

    return "; ".join(
        f"{c.name}: {back(c)}, {c.connects} connects, {c.snapshots} snapshots, "
        f"{c.resyncs} resyncs, {c.gaps} gaps"
        for c in clients
    )


async def _in_sync_after(
    clients: list[LiveClient], room: Room, fault_at: float, back_at: float
) -> float:
    """Every client received a snapshot (or resync) after ``fault_at`` and the room ticked on
    (past where it was when the failed process came back at ``back_at``) with every client
    on the server's seq; then the room is paused and every client must end with the
    server's seq. Returns the seconds from ``back_at`` until every client was in step."""
    seq_back, sim_back = await server(room.pk)

    def resynced() -> bool:
        return all(
            any(r.wall > fault_at and r.type in ("snapshot", "resync") for r in c.received)
            for c in clients
        )

    await wait_until(resynced, RESYNC_S + 5, "every client to receive a snapshot or resync")
    # Ticks resume: the room goes on past where it was at the fault.
    deadline = time.monotonic() + RESYNC_S + 5
    while True:
        seq, sim = await server(room.pk)
        if seq > seq_back and sim > sim_back:
            in_step = all(c.seq == seq for c in clients)
            if in_step:
                break
        assert time.monotonic() < deadline, (
            f"ticks did not resume or clients lag: server seq {seq}, clients "
            f"{[c.seq for c in clients]}, errors {[c.errors[-3:] for c in clients]}"
        )
        await asyncio.sleep(0.05)
    took = time.monotonic() - back_at
    await sync_to_async(controls.room_control)(room.pk, "pause", None, "t")
    await asyncio.sleep(1.5)  # a tick in flight lands
    seq, _ = await server(room.pk)
    assert [c.seq for c in clients] == [seq, seq]
    return took


def _same_as_headless(room: Room, tmp_path: Path) -> None:
    """The room, paused, has reached n-1's Unknown (45 s simulated; a room paused before that,
    on a loaded machine, is stepped on by 60 s), and its stored timeline then equals
    simulate's of its export."""

    def unknown() -> bool:
        return TimelineEvent.objects.filter(
            room=room, type="NodeReady", data__status="Unknown"
        ).exists()

    controls.room_control(room.pk, "pause", None, "t")
    time.sleep(1.0)  # a tick in flight finishes
    if not unknown():
        controls.room_control(room.pk, "step", 60, "t")
        tick.room_advance(room.pk)
    room.refresh_from_db()
    live = room_events(room)
    assert any('"NodeReady"' in e and '"Unknown"' in e for e in live)
    assert live == headless_events(room, tmp_path)
    idx = [row[0] for row in timeline_store.after(room)]
    assert idx == list(range(len(idx))), "timeline rows numbered once each, no gap"


@pytest.fixture
def fresh_redis_connections() -> Iterator[None]:
    """After a Redis restart, this process's pooled connections are dead: drop them so that
    the next test's fixtures (a worker's ping) connect afresh."""
    yield
    from channels.layers import channel_layers
    from kombu import pools

    from playground.celery import app

    pools.reset()  # closes and forgets kombu's connection and producer pools
    app._pool = None
    app.amqp._producer_pool = None
    channel_layers.backends.clear()


def test_redis_restart_ticks_resume_and_every_client_resyncs(
    fresh_redis_connections,
    celery_worker_proc,
    celery_beat_proc,
    daphne_proc,
    redis_server,
    tmp_path,
    evidence,
) -> None:
    """Daphne's consumers fail on the lost channel layer connection and close their sockets;
    the clients reconnect (group membership, lost with Redis, is made anew) and get a
    snapshot. The worker's consumer reconnects on kombu's back-off (2 s, then 4 s later...),
    so ticks resume about 4 s after Redis is back."""
    room = _running_room("redis-fault")

    async def scenario() -> tuple[float, str]:
        clients = await _clients(daphne_proc, room)
        try:
            redis_server.stop()  # every queue, group, lock and heartbeat is gone with it
            fault_at = time.monotonic()
            await asyncio.sleep(2.0)
            redis_server.start()  # the same port, empty
            back_at = time.monotonic()
            took = await _in_sync_after(clients, room, fault_at, back_at)
            return took, _how(clients, fault_at)
        finally:
            for c in clients:
                await c.close()

    took, how = async_to_sync(scenario)()
    evidence(
        f"Redis down 2 s; ticks resumed and both clients in step {took:.1f} s after it was "
        f"back ({how})"
    )
    assert took < RESYNC_S
    _same_as_headless(room, tmp_path)


def test_daphne_restart_clients_reconnect_and_resync(
    celery_worker_proc, celery_beat_proc, daphne_proc, tmp_path, evidence
) -> None:
    room = _running_room("daphne-fault")

    async def scenario() -> tuple[float, list[int], str]:
        clients = await _clients(daphne_proc, room)
        try:
            before = [c.connects for c in clients]
            await asyncio.to_thread(daphne_proc.kill)  # SIGKILL: sockets cut, no close frame
            fault_at = time.monotonic()
            await asyncio.sleep(1.0)
            await asyncio.to_thread(daphne_proc.start)
            took = await _in_sync_after(clients, room, fault_at, time.monotonic())
            reconnects = [c.connects - b for c, b in zip(clients, before, strict=True)]
            return took, reconnects, _how(clients, fault_at)
        finally:
            for c in clients:
                await c.close()

    took, reconnects, how = async_to_sync(scenario)()
    evidence(f"Daphne killed, started again; clients in step {took:.1f} s after ({how})")
    assert all(n >= 1 for n in reconnects), reconnects
    assert took < RESYNC_S
    _same_as_headless(room, tmp_path)


def _busy_scenario(per_zone: int, pods_per_node: int) -> str:
    """Three zones of ``per_zone`` nodes with bare pods; zone-a goes dark at 20 s: hundreds
    of events per tick once its nodes go NotReady and their pods are evicted."""
    import json

    from controller.bench.scenarios import ZONES, bare_pods

    spec = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "busy"},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": bare_pods(per_zone, pods_per_node),
            "faults": [{"at": "20s", "type": "ZoneOutage", "zone": "zone-a"}],
        },
    }
    return json.dumps(spec)


def test_two_beats_at_once_never_advance_a_room_twice(
    celery_worker_proc, stack_env, tmp_path, evidence
) -> None:
    """Two beats, each sending every room's tick five times a second, and two workers, for
    10 s, on rooms whose ticks take a while (so that two ticks of one room overlap): the room
    lock keeps each room advancing once per instant; the timeline is the headless run's."""
    env = {**stack_env, "PLAYGROUND_TICK_SECONDS": "0.2"}
    beats = [Beat(env, tmp_path / "beat1.log"), Beat(env, tmp_path / "beat2.log")]
    other = Worker(celery_worker_proc.db_name, tmp_path / "worker2.log")
    other.start()
    text = _busy_scenario(40, 5)
    rooms = [create.room_create(f"beats-{i}", text, None, 100.0) for i in range(2)]
    for r in rooms:
        controls.room_control(r.pk, "pause", None, "t")
    for beat in beats:
        beat.start()
    try:
        time.sleep(3.0)  # both beats up
        for r in rooms:
            controls.room_control(r.pk, "resume", None, "t")
        time.sleep(10.0)
    finally:
        for beat in beats:
            beat.kill()
        other.kill()
    for r in rooms:
        controls.room_control(r.pk, "pause", None, "t")
    time.sleep(1.0)
    for r in rooms:
        room = Room.objects.get(pk=r.pk)
        # Ten seconds at 100x: about 1,000 s, not twice that.
        assert 800_000 <= room.sim_ms <= 1_300_000, room.sim_ms
        assert TimelineEvent.objects.filter(room=room, type="PodDeleted").exists()
        (tmp_path / f"r{r.pk}").mkdir()
        _same_as_headless(room, tmp_path / f"r{r.pk}")
    evidence(
        "two beats at 5 Hz, two workers, 10 s at 100x: 2 rooms of 120 nodes; "
        "timelines = simulate, no row twice"
    )
