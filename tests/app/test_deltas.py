"""Bounded deltas (controller/rooms/broadcast.py, controller/live/deltas.py): no tick
broadcasts more than PLAYGROUND_DELTA_MAX_BYTES; a bigger one becomes a resync notice, and
snapshot.json gives every client the state it stands for. Real Redis channel layer, real
websocket consumer."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from controller.live import deltas
from controller.models import ObjectView, Room
from controller.rooms import broadcast, controls, create, reading, tick
from tests.app.test_rooms import connect, receive_until

# Several websocket clients, each in its own event loop (async_to_sync): a fresh channel
# layer before and after every test (tests/app/conftest.py::fresh_channel_layer).
pytestmark = pytest.mark.usefixtures("fresh_channel_layer")

# Two zones of 6 nodes, 5 bare pods each; zone-a goes dark at 1 s.
NODES = [{"name": f"{z}-{i}", "zone": f"zone-{z}"} for z in "ab" for i in range(1, 7)]
PODS = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{n['name']}-p{j}", "namespace": "default"},
        "spec": {"nodeName": n["name"], "containers": [{"name": "app"}]},
    }
    for n in NODES
    for j in range(5)
]
SCENARIO = json.dumps(
    {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "deltas"},
        "spec": {
            "kubernetesVersion": "1.18",
            "nodes": NODES,
            "objects": PODS,
            "faults": [{"at": "1s", "type": "ZoneOutage", "zone": "zone-a"}],
        },
    }
)


def _room() -> Room:
    room = create.room_create("deltas", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return Room.objects.get(pk=room.pk)


def test_a_tick_over_the_limit_broadcasts_a_resync_notice_and_snapshot_json_has_its_state(
    transactional_db, redis_server, settings, client
) -> None:
    room = _room()
    # 60 s of this room as one tick: zone-a's six nodes go Unknown (1.18: last status at
    # 0 s, first monitor pass strictly past 40 s is 45 s) and their 30 pods NotReady, far more
    # than the 4 KiB allowed here. A small tick afterwards is an ordinary delta.
    settings.PLAYGROUND_DELTA_MAX_BYTES = 4096
    seen: list[dict] = []

    async def scenario() -> None:
        viewer = await connect(room, "", "student")
        snap = await viewer.receive_json_from(timeout=10)
        assert snap["type"] == "snapshot"
        await viewer.send_json_to({"type": "ping"})
        await sync_to_async(controls.room_control)(room.pk, "step", 60, "test")
        await sync_to_async(tick.room_advance)(room.pk)
        notice, _ = await receive_until(viewer, lambda m: m["type"] in ("resync", "delta"))
        seen.append(notice)
        await sync_to_async(controls.room_control)(room.pk, "step", 1, "test")
        await sync_to_async(tick.room_advance)(room.pk)
        small, _ = await receive_until(viewer, lambda m: m["type"] in ("resync", "delta"))
        seen.append(small)
        await viewer.disconnect()

    async_to_sync(scenario)()
    notice, small = seen
    full = Room.objects.get(pk=room.pk)
    assert notice["type"] == "resync"
    assert notice["seq"] == full.seq - 1
    assert notice["bytes"] > 4096 and notice["limit"] == 4096
    assert broadcast.encoded_size(notice) <= 4096
    assert small["type"] == "delta" and small["seq"] == full.seq
    assert broadcast.encoded_size(small) <= 4096

    resp = client.get(f"/rooms/{room.slug}/snapshot.json", HTTP_ACCEPT_ENCODING="gzip")
    assert resp.status_code == 200 and resp["Content-Encoding"] == "gzip"
    body = json.loads(client.get(f"/rooms/{room.slug}/snapshot.json").content)
    assert body["seq"] == full.seq >= notice["seq"]
    ready = {n["name"]: n["ready"] for n in body["nodes"]}
    assert {k: v for k, v in ready.items() if k.startswith("a-")} == {
        f"a-{i}": "Unknown" for i in range(1, 7)
    }
    assert {v for k, v in ready.items() if k.startswith("b-")} == {"True"}
    assert len(body["pods"]) == 60


def test_deltas_under_the_limit_are_broadcast_whole(
    transactional_db, redis_server, settings
) -> None:
    room = _room()
    settings.PLAYGROUND_DELTA_MAX_BYTES = 256 * 1024
    delta = tick.room_advance(room.pk, extra_ms=60_000)
    assert delta is not None and delta["type"] == "delta"
    assert broadcast.bounded(delta) is delta
    unknown = sorted(
        e["node"] for e in delta["events"] if e["type"] == "NodeReady" and e["status"] == "Unknown"
    )
    assert unknown == [f"a-{i}" for i in range(1, 7)]


def test_a_tick_knows_its_delta_is_over_the_limit_before_making_it(
    transactional_db, redis_server, settings
) -> None:
    """The same 60 s in two rooms of one scenario: under a 4 KiB limit the tick returns the
    resync notice it stored instead of a delta (the delta is not made); the bytes it names
    are a lower bound of the delta the other room, without the limit, broadcast whole."""
    small, big = _room(), _room()
    # Both paused at 0 s (each was paused a few wall ms after its creation, at 1x).
    Room.objects.filter(pk__in=[small.pk, big.pk]).update(sim_anchor_ms=0)
    settings.PLAYGROUND_DELTA_MAX_BYTES = 4096
    notice = tick.room_advance(small.pk, extra_ms=60_000)
    settings.PLAYGROUND_DELTA_MAX_BYTES = 1024 * 1024
    delta = tick.room_advance(big.pk, extra_ms=60_000)
    assert notice is not None and delta is not None
    assert (notice["type"], delta["type"]) == ("resync", "delta")
    assert broadcast.bounded(notice) is notice
    assert (notice["seq"], notice["t"]) == (delta["seq"], delta["t"])
    assert notice["events"] == len(delta["events"])
    assert 4096 < notice["bytes"] <= broadcast.encoded_size(delta)
    assert notice["limit"] == 4096
    # The rows are the same whether the delta was made or not.
    stored = [
        sorted(ObjectView.objects.filter(room=r).values_list("kind", "key", "data"))
        for r in (small, big)
    ]
    assert stored[0] == stored[1] and len(stored[0]) > 60


@pytest.fixture
def builds(monkeypatch) -> list[tuple[int, int]]:
    """(room id, seq) of every snapshot build (reading.room_snapshot_json)."""
    made: list[tuple[int, int]] = []
    real = reading.room_snapshot_json

    def counted(r, *args, **kwargs):
        made.append((r.pk, r.seq))
        return real(r, *args, **kwargs)

    monkeypatch.setattr(reading, "room_snapshot_json", counted)
    return made


def test_snapshot_json_is_built_once_per_room_version(
    transactional_db, redis_server, builds
) -> None:
    room = _room()
    first = deltas.snapshot_bytes(room)
    assert deltas.snapshot_bytes(Room.objects.get(pk=room.pk)) == first
    assert builds == [(room.pk, room.seq)]  # the second from the cache
    tick.room_advance(room.pk, extra_ms=5_000)
    again = deltas.snapshot_bytes(Room.objects.get(pk=room.pk))
    assert builds == [(room.pk, room.seq), (room.pk, room.seq + 1)]
    assert json.loads(again)["seq"] == json.loads(first)["seq"] + 1


def _snapshot_from_decoded_rows(room: Room) -> dict:
    """A snapshot as room_snapshot made it before it spliced the stored JSON texts: every
    view row decoded by its JSONField, sorted, and the recent events."""
    from controller import timeline_store
    from controller.models import ObjectView

    views = list(ObjectView.objects.filter(room=room).values_list("kind", "data"))
    return {
        "nodes": sorted((d for k, d in views if k == "node"), key=lambda n: n["name"]),
        "pods": sorted((d for k, d in views if k == "pod"), key=lambda p: p["key"]),
        "zones": next((d for k, d in views if k == "zone"), []),
        "workloads": next((d for k, d in views if k == "metrics"), {}),
        "params": next((d for k, d in views if k == "params"), None),
        "events": [
            {"idx": i, "t": t / 1000, "type": typ, **data}
            for i, t, typ, data in timeline_store.last(room, 300)
        ],
    }


def test_the_snapshot_is_the_stored_rows_and_its_clock_is_of_now(
    transactional_db, redis_server
) -> None:
    """The snapshot is spliced from the view rows' JSON texts: the same nodes, pods, zones,
    workloads, parameters and events as the rows decoded; its clock (t, speed, paused) is
    of the moment it is served even when its rows come from the cache."""
    room = _room()
    tick.room_advance(room.pk, extra_ms=5_000)  # zone-a dark: Unknown nodes, taints
    room = Room.objects.get(pk=room.pk)
    body = json.loads(deltas.snapshot_bytes(room))
    expected = _snapshot_from_decoded_rows(room)
    assert {k: body[k] for k in expected} == expected
    assert len(body["nodes"]) == 12 and len(body["pods"]) == 60
    assert (body["type"], body["seq"], body["simT"]) == ("snapshot", room.seq, room.sim_ms / 1000)
    assert (body["t"], body["speed"], body["paused"]) == (room.sim_ms / 1000, 1.0, True)
    assert reading.room_snapshot(room, lesson=False) == body
    # Resumed at 5x (no new rows, so the rows come from the cache): the clock is the new one.
    controls.room_control(room.pk, "speed", 5.0, "test")
    controls.room_control(room.pk, "resume", None, "test")
    room = Room.objects.get(pk=room.pk)
    again = json.loads(deltas.snapshot_bytes(room))
    assert (again["speed"], again["paused"]) == (5.0, False)
    assert again["t"] >= room.sim_ms / 1000
    assert {k: again[k] for k in expected} == expected


def test_clients_connecting_share_one_snapshot_build_with_their_own_role(
    transactional_db, redis_server, builds
) -> None:
    """A class joining a big room: the snapshot's rows are built once for every client of
    this process; each client still gets its own role (the operator's token or none)."""
    room = _room()

    async def join(token: str) -> dict:
        comm = await connect(room, token=token)
        msg, _ = await receive_until(comm, lambda m: m.get("type") == "snapshot")
        await comm.disconnect()
        return msg

    snaps = [async_to_sync(join)(t) for t in ("", room.operator_token, "", "")]
    assert builds == [(room.pk, room.seq)]  # one build for the four clients
    assert [s["role"] for s in snaps] == ["viewer", "operator", "viewer", "viewer"]
    assert all(s["lesson"] is None for s in snaps)
    assert all(len(s["pods"]) == 60 and s["seq"] == room.seq for s in snaps)


def test_the_snapshot_cache_holds_at_most_its_bytes_and_always_the_newest(
    transactional_db, redis_server, builds, monkeypatch
) -> None:
    """Big rooms' snapshots are tens of MB: the cache drops the oldest when the bytes would
    pass CACHE_BYTES, but keeps the newest even when it alone is bigger."""
    room = _room()
    size = len(deltas.snapshot_bytes(room))
    monkeypatch.setattr(deltas, "CACHE_BYTES", size + size // 2)  # room for one, not two
    deltas._CACHE.clear()
    deltas.snapshot_bytes(room)
    tick.room_advance(room.pk, extra_ms=1_000)
    newer = Room.objects.get(pk=room.pk)
    deltas.snapshot_bytes(newer)
    assert list(deltas._CACHE) == [
        (room.pk, room.operator_token, newer.seq, newer.version)
    ]  # the older dropped
    monkeypatch.setattr(deltas, "CACHE_BYTES", 1)  # smaller than any snapshot
    deltas.snapshot_bytes(newer)
    assert list(deltas._CACHE) == [(room.pk, room.operator_token, newer.seq, newer.version)]  # kept
    builds.clear()
    deltas.snapshot_bytes(newer)
    assert builds == []  # served from the cache
