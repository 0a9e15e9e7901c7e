"""Bounded deltas (controller/deltas.py): no tick broadcasts more than
PLAYGROUND_DELTA_MAX_BYTES; a bigger one becomes a resync notice, and snapshot.json gives
every client the state it stands for. Real Redis channel layer, real websocket consumer."""

from __future__ import annotations

import json

from asgiref.sync import async_to_sync, sync_to_async

from controller import deltas, services
from controller.models import Room
from tests.app.test_rooms import connect, receive_until

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
    room = services.room_create("deltas", SCENARIO, None, 1.0)
    services.room_control(room.pk, "pause", None, "test")
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
        await sync_to_async(services.room_control)(room.pk, "step", 60, "test")
        await sync_to_async(services.room_advance)(room.pk)
        notice, _ = await receive_until(viewer, lambda m: m["type"] in ("resync", "delta"))
        seen.append(notice)
        await sync_to_async(services.room_control)(room.pk, "step", 1, "test")
        await sync_to_async(services.room_advance)(room.pk)
        small, _ = await receive_until(viewer, lambda m: m["type"] in ("resync", "delta"))
        seen.append(small)
        await viewer.disconnect()

    async_to_sync(scenario)()
    notice, small = seen
    full = Room.objects.get(pk=room.pk)
    assert notice["type"] == "resync"
    assert notice["seq"] == full.seq - 1
    assert notice["bytes"] > 4096 and notice["limit"] == 4096
    assert deltas.encoded_size(notice) <= 4096
    assert small["type"] == "delta" and small["seq"] == full.seq
    assert deltas.encoded_size(small) <= 4096

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
    delta = services.room_advance(room.pk, extra_ms=60_000)
    assert delta is not None and delta["type"] == "delta"
    assert deltas.bounded(delta) is delta
    unknown = sorted(
        e["node"] for e in delta["events"] if e["type"] == "NodeReady" and e["status"] == "Unknown"
    )
    assert unknown == [f"a-{i}" for i in range(1, 7)]


def test_snapshot_json_is_built_once_per_room_version(transactional_db, redis_server) -> None:
    room = _room()
    first = deltas.snapshot_bytes(room)
    assert deltas.snapshot_bytes(Room.objects.get(pk=room.pk)) is first
    services.room_advance(room.pk, extra_ms=5_000)
    again = deltas.snapshot_bytes(Room.objects.get(pk=room.pk))
    assert again is not first and json.loads(again)["seq"] == json.loads(first)["seq"] + 1
