"""Idle rooms: a room nobody watches for PLAYGROUND_IDLE_PAUSE_SECONDS stops ticking (beat
skips it, its clock stands still); a viewer's arrival resumes it from where it stopped.
Beat's task runs here in the test process against the real Redis (presence, watched keys)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from controller import tasks
from controller.live import presence
from controller.locks import redis_client
from controller.models import Room
from controller.rooms import compare, controls, create, reading
from playground.asgi import application
from tests.app.scenarios import scenario

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]

SCENARIO = scenario("idle", 1)


@pytest.fixture
def redis_keys(redis_server, monkeypatch):
    # Every tick runs here, in the test process: no worker owns a room (affinity), even if
    # another test's worker left its heartbeat in this Redis.
    monkeypatch.setattr(tasks.affinity, "live_workers", lambda client, now=None: [])
    client = redis_client()
    yield client
    for key in client.scan_iter("playground:room:*"):
        client.delete(key)


def unwatched_for(room: Room, seconds: float) -> None:
    redis_client().set(presence.watched_key(room.pk), repr(time.time() - seconds))


def beat() -> None:
    tasks.rooms_tick_task()


def test_unwatched_room_stops_and_a_viewer_resumes_it_where_it_stopped(
    settings, redis_keys
) -> None:
    settings.PLAYGROUND_IDLE_PAUSE_SECONDS = 5
    room = create.room_create("idle", SCENARIO, None, 10.0)
    # Created 20 s ago (at 10x: 200 simulated seconds), last watched 6 s ago.
    Room.objects.filter(pk=room.pk).update(wall_anchor=room.wall_anchor - timedelta(seconds=20))
    unwatched_for(room, 6)
    beat()
    room.refresh_from_db()
    assert room.idle_since is not None
    # The last tick ran exactly to the instant the clock stopped at.
    stopped_at = room.sim_ms
    elapsed = (room.idle_since - room.wall_anchor).total_seconds()
    assert stopped_at == int(elapsed * 10 * 1000)
    assert 200_000 <= stopped_at < 210_000
    version = room.version
    time.sleep(0.5)
    beat()
    room.refresh_from_db()
    assert (room.sim_ms, room.version) == (stopped_at, version)  # not ticked
    assert reading.room_snapshot(room)["t"] == stopped_at / 1000  # the clock stands still

    async def arrive() -> dict:
        comm = WebsocketCommunicator(
            application,
            f"/ws/rooms/{room.slug}/?name=student",
            headers=[(b"origin", b"http://localhost")],
        )
        assert (await comm.connect())[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            msg = await comm.receive_json_from(timeout=10)
            if msg["type"] == "snapshot":
                break
        await comm.disconnect()
        return msg

    woke_at = time.time()
    snapshot = async_to_sync(arrive)()
    room.refresh_from_db()
    assert room.idle_since is None
    # Resumed where it stopped, from the viewer's arrival: no jump over the idle time.
    assert room.sim_anchor_ms == stopped_at
    assert abs(room.wall_anchor.timestamp() - woke_at) < 2
    assert stopped_at / 1000 <= snapshot["t"] < stopped_at / 1000 + 20
    time.sleep(0.3)
    beat()
    room.refresh_from_db()
    assert stopped_at < room.sim_ms < stopped_at + 20_000


def test_a_watched_room_keeps_ticking(settings, redis_keys) -> None:
    settings.PLAYGROUND_IDLE_PAUSE_SECONDS = 5
    room = create.room_create("watched", SCENARIO, None, 10.0)
    unwatched_for(room, 60)
    redis_keys.hset(presence.presence_key(room.pk), "some-channel", '{"name":"a","role":"viewer"}')
    beat()
    room.refresh_from_db()
    assert room.idle_since is None
    # The beat refreshed "last watched", so the viewer leaving starts a new count.
    seen = float(redis_keys.get(presence.watched_key(room.pk)))
    assert time.time() - seen < 2


@pytest.mark.parametrize(
    ("idle_setting", "watched_ago", "idle"),
    [
        (5, None, False),  # never seen: the count starts at this beat
        (5, 4, False),
        (5, 6, True),
        (0, 3600, False),  # 0: rooms never stop
    ],
)
def test_when_a_room_counts_as_idle(settings, redis_keys, idle_setting, watched_ago, idle) -> None:
    settings.PLAYGROUND_IDLE_PAUSE_SECONDS = idle_setting
    room = create.room_create("r", SCENARIO, None, 10.0)
    if watched_ago is not None:
        unwatched_for(room, watched_ago)
    beat()
    room.refresh_from_db()
    assert (room.idle_since is not None) == idle


def test_compared_rooms_stop_and_resume_together(settings, redis_keys) -> None:
    settings.PLAYGROUND_IDLE_PAUSE_SECONDS = 5
    sides = [("a", {"apiServer": {}}), ("b", {"apiServer": {}})]
    cmp = compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    left, right = cmp.left, cmp.right
    unwatched_for(left, 10)
    redis_keys.hset(presence.presence_key(right.pk), "ch", '{"name":"a","role":"viewer"}')
    beat()  # the right one is watched: neither stops
    assert Room.objects.filter(idle_since__isnull=False).count() == 0
    redis_keys.delete(presence.presence_key(right.pk))
    unwatched_for(right, 10)
    beat()
    left.refresh_from_db()
    right.refresh_from_db()
    assert left.idle_since is not None
    assert left.idle_since == right.idle_since
    assert controls.room_wake(right.pk)
    assert Room.objects.filter(idle_since__isnull=False).count() == 0
    left.refresh_from_db()
    right.refresh_from_db()
    assert left.wall_anchor == right.wall_anchor
