"""Room affinity (controller/affinity.py): each room's ticks run on one worker process, the
one that holds its engine; when that worker dies (kill -9), its rooms move to another live
worker within seconds and go on from where they were, with no event lost or repeated."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller import affinity
from controller.locks import redis_client
from controller.models import Room
from controller.rooms import actions, controls, create
from tests.app.conftest import Worker
from tests.app.test_rooms import SCENARIO, headless_events, room_events, wait_for


@pytest.mark.parametrize(
    ("workers", "gone"),
    [
        (["w1@h", "w2@h"], "w1@h"),
        (["w1@h", "w2@h", "w3@h"], "w2@h"),
        (["a@x", "b@x", "c@x", "d@x"], "d@x"),
    ],
)
def test_rendezvous_owner_is_stable_and_only_a_dead_workers_rooms_move(workers, gone) -> None:
    before = {room: affinity.owner(room, workers) for room in range(200)}
    assert set(before.values()) == set(workers), "every worker gets rooms"
    after = {room: affinity.owner(room, [w for w in workers if w != gone]) for room in range(200)}
    moved = {room for room in before if before[room] != after[room]}
    assert moved == {room for room, w in before.items() if w == gone}
    assert affinity.owner(7, []) is None


def _stats(room_id: int) -> dict[str, str]:
    raw = redis_client().hgetall(affinity.stats_key(room_id))
    return {k.decode(): v.decode() for k, v in raw.items()}


def test_rooms_tick_on_their_owner_and_move_when_it_is_killed(
    transactional_db, redis_server, celery_beat_proc, tmp_path: Path
) -> None:
    from django.db import connection

    db = connection.settings_dict["NAME"]
    one, two = Worker(db, tmp_path / "w1.log"), Worker(db, tmp_path / "w2.log")
    one.start()
    two.start()
    try:
        rooms = []
        for i in range(4):
            room = create.room_create(f"aff-{i}", SCENARIO, None, 10.0)
            actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
            rooms.append(room)
        live = wait_for(
            lambda: (w := affinity.live_workers(redis_client())) and len(w) == 2 and w,
            what="both workers to announce themselves",
        )
        owners = {r.pk: affinity.owner(r.pk, live) for r in rooms}
        # Count from here: before the workers announced themselves, ticks ran anywhere (and
        # ticks queued then may still run for a moment).
        time.sleep(2 * affinity.HEARTBEAT_S)
        redis_client().delete(*(affinity.stats_key(r.pk) for r in rooms))
        # Several ticks each, every one on the room's owner, the engine built once there.
        wait_for(
            lambda: all(int(_stats(r.pk).get("ticks", 0)) >= 6 for r in rooms),
            what="six ticks of every room",
        )
        for r in rooms:
            s = _stats(r.pk)
            assert s["worker"] == owners[r.pk], (r.pk, s)
            assert [k for k in s if k.startswith("ticks:")] == [f"ticks:{owners[r.pk]}"], s
            assert int(s["restores"]) <= 1, f"room {r.pk} rebuilt its engine: {s}"
        victim = one if one.name in owners[rooms[0].pk] else two
        survivor = two if victim is one else one
        moved = [r for r in rooms if owners[r.pk].startswith(f"{victim.name}@")]
        assert moved
        victim.kill()  # SIGKILL: no goodbye, its heartbeat just stops
        killed_at = time.monotonic()
        for r in moved:
            wait_for(
                lambda r=r: _stats(r.pk)["worker"].startswith(f"{survivor.name}@"),
                timeout=affinity.WORKER_TTL_S + 10,
                what=f"room {r.pk} to tick on the surviving worker",
            )
        handover_s = time.monotonic() - killed_at
        print(f"rooms of the killed worker ticking elsewhere after {handover_s:.1f} s")
        ticks = {r.pk: int(_stats(r.pk)["ticks"]) for r in moved}
        wait_for(
            lambda: all(int(_stats(r.pk)["ticks"]) >= ticks[r.pk] + 3 for r in moved),
            what="the moved rooms to go on ticking",
        )
        for r in rooms:
            controls.room_control(r.pk, "pause", None, "t")
        time.sleep(1.0)  # a tick in flight finishes
        for r in rooms:
            room = Room.objects.get(pk=r.pk)
            assert room.sim_ms > 50_000
            live_events = room_events(room)
            assert any('"NodeReady"' in e and '"Unknown"' in e for e in live_events)
            (tmp_path / f"r{r.pk}").mkdir()
            assert live_events == headless_events(room, tmp_path / f"r{r.pk}")
    finally:
        one.kill()
        two.kill()


def _queued(client, queue: str) -> list[dict]:
    """The task messages waiting in a worker's direct queue (kombu's Redis list): task name
    and arguments."""
    import base64
    import json

    out = []
    for raw in client.lrange(queue, 0, -1):
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append({"task": message["headers"]["task"], "args": args})
    return out


def test_beat_sends_each_other_worker_one_message_with_all_its_rooms(
    transactional_db, redis_server
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from controller import tasks

    client = redis_client()
    names = ["inline", "w-a@h", "w-b@h"]  # "inline": this process, outside a worker
    for name in names:
        affinity.beat(client, name)
    try:
        # Rooms until every worker owns two (which ids a worker gets depends on the hash).
        rooms: list[Room] = []
        owners: dict[int, str | None] = {}
        while min(sum(w == n for w in owners.values()) for n in names) < 2:
            assert len(rooms) < 60, owners
            room = create.room_create(f"batch-{len(rooms)}", SCENARIO, None, 10.0)
            rooms.append(room)
            owners[room.pk] = affinity.owner(room.pk, names)
        versions = {r.pk: r.version for r in rooms}
        Room.objects.filter(pk__in=versions).update(
            wall_anchor=timezone.now() - timedelta(seconds=5)
        )
        tasks.rooms_tick_task()
        for other in ("w-a@h", "w-b@h"):
            [message] = _queued(client, f"{other}.dq2")  # one message, not one per room
            assert message["task"] == "controller.tasks.worker_tick_task"
            mine = sorted(pk for pk, w in owners.items() if w == other)
            assert message["args"][0] == mine
        for r in rooms:
            r.refresh_from_db()
            ticked_here = r.version > versions[r.pk]
            assert ticked_here == (owners[r.pk] == "inline"), (r.pk, owners[r.pk])
        # The other worker runs its message: its rooms tick to the beat's instant; a message
        # older than STALE_BEATS beats is dropped.
        [message] = _queued(client, "w-a@h.dq2")
        room_ids, wall = message["args"]
        stale = (timezone.now() - timedelta(seconds=10)).isoformat()
        tasks.worker_tick_task(room_ids, stale)
        assert all(Room.objects.get(pk=pk).version == versions[pk] for pk in room_ids)
        tasks.worker_tick_task(room_ids, wall)
        assert all(Room.objects.get(pk=pk).version > versions[pk] for pk in room_ids)
    finally:
        for name in names:
            affinity.leave(client, name)
            client.delete(f"{name}.dq2")
        for key in client.scan_iter("playground:room:*"):
            client.delete(key)


def test_a_killed_workers_direct_queue_is_deleted_once_it_is_gone(
    transactional_db, redis_server
) -> None:
    """A worker killed with its direct queue full: the ticks nobody will run stay in Redis
    until the worker has been silent for GONE_S; then the beat forgets the worker and
    deletes its queue (every priority list). A live worker's queue, and one silent for less
    (paused, not killed), are left alone."""
    from kombu.transport.redis import Channel

    from controller import tasks

    client = redis_client()
    now = time.time()
    beats = {"dead@h": now - affinity.GONE_S - 1, "paused@h": now - 30, "live@h": now}
    client.zadd(affinity.WORKERS_KEY, beats)
    keys = {
        name: [f"{name}.dq2", f"{name}.dq2{Channel.sep}3", f"{name}.dq2{Channel.sep}9"]
        for name in beats
    }
    try:
        for lists in keys.values():
            for key in lists:
                client.rpush(key, b"{}")
        assert tasks.drop_gone_workers_queues() == ["dead@h"]
        assert not any(client.exists(key) for key in keys["dead@h"])
        for name in ("paused@h", "live@h"):
            assert all(client.llen(key) == 1 for key in keys[name]), name
        members = {m.decode() for m in client.zrange(affinity.WORKERS_KEY, 0, -1)}
        assert members == {"paused@h", "live@h"}
        assert affinity.live_workers(client, now) == ["live@h"]
        assert tasks.drop_gone_workers_queues() == []  # nothing more to forget
    finally:
        client.delete(affinity.WORKERS_KEY)
        for lists in keys.values():
            client.delete(*lists)
