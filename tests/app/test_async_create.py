"""Asynchronous room creation (issue #14, "Fast big rooms"): the form validates the scenario
and returns at once; a worker builds the room while its page shows the progress; the room is
live when stored, or shows why its build failed."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from controller import timeline_store
from controller.locks import redis_client
from controller.models import EngineSnapshot, ObjectView, Room, TimelineChunk
from controller.rooms import build, controls, create, errors, reading, tick
from controller.rooms.runtime import ENGINE_VERSION
from tests.app.scenarios import scenario

from .conftest import Worker
from .test_rooms import wait_for

# 30 nodes + 400 pods: over build.INLINE_MAX_OBJECTS, so it is built by a worker.
BIG = """# What to watch for: a big room.
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: biggish}
spec:
  nodes:
    - generate: {count: 10, namePrefix: a-, zone: zone-a}
    - generate: {count: 10, namePrefix: b-, zone: zone-b}
    - generate: {count: 10, namePrefix: c-, zone: zone-c}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 390
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, resources: {requests: {cpu: 10m}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: solo, namespace: default}
      spec: {nodeName: a-1, containers: [{name: solo}]}
"""
SMALL = scenario("small", 1)


def _post(client, text: str, name: str = ""):
    data = {"name": name, "speed": "10", "upload": SimpleUploadedFile("s.yaml", text.encode())}
    return client.post("/", data)


def _views(room: Room) -> dict[str, list]:
    snap = reading.room_snapshot(room)
    return {"nodes": snap["nodes"], "pods": snap["pods"], "zones": snap["zones"]}


def test_the_form_returns_at_once_and_a_worker_makes_the_room_live(
    client, transactional_db, redis_server, tmp_path
) -> None:
    from django.db import connection

    # No worker yet: the form must return without building anything.
    response = _post(client, BIG, "async room")
    assert response.status_code == 302, response.content.decode()[:2000]
    room = Room.objects.get(name="async room")
    assert response["Location"].startswith(f"/rooms/{room.slug}/?token=")
    assert (room.build_state, room.build_progress) == ("building", "queued")
    assert ObjectView.objects.filter(room=room).count() == 0
    status = client.get(f"/rooms/{room.slug}/build.json").json()
    assert status == {"state": "building", "progress": "queued", "error": ""}
    page = client.get(response["Location"]).content.decode()
    assert 'id="building"' in page and "queued" in page and 'id="app"' not in page
    # A building room is not ticked.
    assert tick.room_advance(room.pk) is None
    assert Room.objects.get(pk=room.pk).sim_ms == 0

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "worker.log", heavy=True)
    worker.start()
    try:
        wait_for(
            lambda: Room.objects.get(pk=room.pk).build_state == "live", 60, "the room to be live"
        )
        # The heavy worker stores the room's snapshot after making it live, still holding its
        # lock (the ticking worker restores the engine from it): not killed before that.
        wait_for(lambda: EngineSnapshot.objects.filter(room=room).exists(), 60, "its snapshot")
    except AssertionError:
        r = Room.objects.get(pk=room.pk)
        log = worker.log.read_text(errors="replace")[-3000:]
        raise AssertionError(
            f"{r.build_state} {r.build_progress!r} {r.build_error!r}\n{log}"
        ) from None
    finally:
        worker.kill()
    room = Room.objects.get(pk=room.pk)
    assert client.get(f"/rooms/{room.slug}/build.json").json()["state"] == "live"
    page = client.get(response["Location"]).content.decode()
    assert 'id="app"' in page and 'id="building"' not in page
    # The same first state as a room created synchronously from the same scenario.
    same = create.room_create("sync", BIG, None, 10.0)
    assert _views(room) == _views(same)
    assert len(_views(room)["pods"]) == 391
    # Its first instant's events, stored as compressed chunks, read back as the same timeline.
    assert TimelineChunk.objects.filter(room=room).exists()
    assert timeline_store.count(room) == same.event_count > 1000
    assert room.event_count == same.event_count
    assert reading.room_timeline(room) == reading.room_timeline(same)
    assert EngineSnapshot.objects.filter(room=room).exists()


def test_the_build_reports_its_phases_and_goes_live(db, redis_server, monkeypatch) -> None:
    seen: list[tuple[str, str]] = []
    real = build._progress

    def record(room_id: int, message: str) -> None:
        real(room_id, message)
        seen.append((Room.objects.get(pk=room_id).build_state, message))

    monkeypatch.setattr(build, "_progress", record)
    room = build.room_start("phases", BIG, None, 10.0)
    assert Room.objects.get(pk=room.pk).build_state == "building"
    build.room_build(room.pk)
    room = Room.objects.get(pk=room.pk)
    assert room.build_state == "live" and room.build_progress == "" and room.build_error == ""
    assert [m for _, m in seen] == [
        "parsing the scenario",
        "creating 30 nodes and 391 pods",
        f"storing 30 nodes, 391 pods and {room.event_count:,} events",
    ]
    assert all(state == "building" for state, _ in seen)
    # Built again (a duplicate task after a worker restart): nothing changes.
    before = (room.seq, room.event_count, ObjectView.objects.filter(room=room).count())
    build.room_build(room.pk)
    room = Room.objects.get(pk=room.pk)
    assert (room.seq, room.event_count, ObjectView.objects.filter(room=room).count()) == before


def test_a_small_scenario_is_live_when_the_form_returns(client, db) -> None:
    response = _post(client, SMALL, "small room")
    assert response.status_code == 302
    room = Room.objects.get(name="small room")
    assert room.build_state == "live"
    assert [n["name"] for n in reading.room_snapshot(room)["nodes"]] == ["n-1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            BIG.replace("replicas: 390", "replicas: many"),
            "spec.objects[0].spec.replicas",
            id="a bad field of a big scenario",
        ),
        pytest.param(
            BIG.replace("count: 10, namePrefix: b-", "count: 0, namePrefix: b-"),
            "spec.nodes[1].generate.count",
            id="a bad node generator",
        ),
    ],
)
def test_a_bad_scenario_is_refused_on_the_form_and_nothing_is_stored(
    client, db, text: str, message: str
) -> None:
    response = _post(client, text, "bad room")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Room.objects.exists()


def test_a_failing_build_shows_its_error_on_the_room_page(
    client, db, redis_server, monkeypatch
) -> None:
    room = build.room_start("failing", BIG, None, 10.0)

    class Broken(build.Simulation):
        def run(self, until_ms: int) -> None:
            raise RuntimeError("the engine broke at t=0")

    monkeypatch.setattr(build, "Simulation", Broken)
    build.room_build(room.pk)
    room = Room.objects.get(pk=room.pk)
    assert room.build_state == "failed"
    assert room.build_error == "RuntimeError: the engine broke at t=0"
    assert ObjectView.objects.filter(room=room).count() == 0
    page = client.get(f"/rooms/{room.slug}/").content.decode()
    assert "could not be built" in page and "RuntimeError: the engine broke at t=0" in page
    assert client.get(f"/rooms/{room.slug}/build.json").json() == {
        "state": "failed",
        "progress": "",
        "error": "RuntimeError: the engine broke at t=0",
    }
    assert tick.room_advance(room.pk) is None  # never ticked


def test_a_lost_build_is_queued_again_by_the_beat(db, redis_server, monkeypatch) -> None:
    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    room = build.room_start("lost", BIG, None, 10.0)
    client = redis_client()
    client.set(f"playground:room:{room.pk}:build-queued", "1", ex=60)
    assert build.requeue_lost_builds() == []  # queued, not yet picked up
    client.delete(f"playground:room:{room.pk}:build-queued")
    client.set(f"playground:room:{room.pk}:lock", "builder", px=60_000)
    assert build.requeue_lost_builds() == []  # a worker is building it
    client.delete(f"playground:room:{room.pk}:lock")
    # Neither: the worker that had it is gone (the task is queued again; building twice is
    # harmless: the second build finds the room live and leaves it).
    assert build.requeue_lost_builds() == [room.pk]
    assert queued == [room.pk]


def test_a_worker_killed_mid_build_loses_nothing(
    client, transactional_db, redis_server, celery_worker_proc, celery_beat_proc, tmp_path
) -> None:
    """kill -9 of the heavy worker while it builds: its lock lapses (BUILD_LOCK_MS), the beat
    (its tick task, on the tick worker) queues the build again, another heavy worker builds
    it: the room is live, as if built once."""
    from django.db import connection

    from controller.bench.build import big_room_text

    db = connection.settings_dict["NAME"]
    first = Worker(db, tmp_path / "w1.log", heavy=True)
    first.start()
    try:
        response = _post(client, big_room_text(300, 9000), "killed")
        assert response.status_code == 302
        room = Room.objects.get(name="killed")
        wait_for(
            lambda: Room.objects.get(pk=room.pk).build_progress.startswith("creating"),
            60,
            "the build to be creating the objects",
        )
    finally:
        first.kill()  # kill -9, mid-build
    assert Room.objects.get(pk=room.pk).build_state == "building"
    second = Worker(db, tmp_path / "w2.log", heavy=True)
    second.start()
    try:
        wait_for(
            lambda: Room.objects.get(pk=room.pk).build_state == "live",
            120,
            "the build to be queued again and the room to be live",
        )
    finally:
        second.kill()
    room = Room.objects.get(pk=room.pk)
    assert (room.build_error, ObjectView.objects.filter(room=room, kind="pod").count()) == (
        "",
        9000,
    )
    assert timeline_store.count(room) == room.event_count > 9000


def test_a_building_room_cannot_be_rewound(db) -> None:
    room = build.room_start("rewind", BIG, None, 10.0)
    with pytest.raises(errors.ActionError, match="rewind: the room is not live yet"):
        controls.room_rewind(room.pk, 0, "teacher")
    assert ObjectView.objects.filter(room=room).count() == 0


def test_the_bench_build_row_times_every_phase_of_a_room_it_deletes_after(db) -> None:
    from controller.bench.build import build_phases, format_build_rows

    r = build_phases(30, 300)
    assert (r["nodes"], r["pods"]) == (30, 300)
    assert r["events"] > 300
    assert r["live_s"] >= r["engine_s"] > 0 and r["snapshot_s"] > 0
    assert r["page_s"] > 0 and r["page_kib"] > 300 * 200 // 1024  # every pod's view
    assert not Room.objects.exists()
    r.update(peak_mib=1.0, load=0.5)
    lines = format_build_rows([r])
    assert lines[1].split()[:4] == ["nodes", "pods", "events", "KiB"]
    assert lines[2].split()[:3] == ["30", "300", str(r["events"])]


@pytest.mark.parametrize(
    ("handed", "parses"),
    [
        pytest.param("kept", 0, id="the scenario the form parsed: not parsed again"),
        pytest.param("other engine code", 1, id="parsed by other engine code: the text parsed"),
        pytest.param("nothing", 1, id="nothing kept (Redis restarted): the text parsed"),
        pytest.param("forged", 1, id="a pickle this app did not seal: never unpickled"),
    ],
)
def test_the_worker_builds_the_scenario_the_form_parsed(
    db, redis_server, monkeypatch, django_capture_on_commit_callbacks, handed, parses
) -> None:
    """The form validated (parsed) a big room's scenario: the worker takes it from Redis rather
    than parsing the same text again; when it is not there, or other engine code made it, the
    stored text is parsed as before. Either way the room is the text's."""
    import pickle

    from controller.engine.scenario import load_scenario
    from controller.engine.simulation import Simulation

    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    with django_capture_on_commit_callbacks(execute=True):
        room = build.room_start("handed", BIG, None, 10.0)
    key = f"playground:room:{room.pk}:scenario"
    assert redis_client().exists(key)
    forged = pickle.dumps(load_scenario(BIG))
    if handed == "other engine code":
        stale = b"0123456789abcdef\n" + pickle.dumps(load_scenario(BIG))
        redis_client().set(key, stale)
    elif handed == "nothing":
        redis_client().delete(key)
    elif handed == "forged":  # this engine code's tag, but sealed without SECRET_KEY
        seal = hashlib.sha256(forged).hexdigest().encode()
        redis_client().set(key, ENGINE_VERSION.encode() + b"\n" + seal + b"\n" + forged)
    unpickled: list[bytes] = []
    real_loads = pickle.loads
    monkeypatch.setattr(
        build.pickle, "loads", lambda data, **kw: unpickled.append(data) or real_loads(data, **kw)
    )
    calls: list[str] = []
    real = build.load_scenario
    monkeypatch.setattr(build, "load_scenario", lambda text: calls.append(text) or real(text))
    build.room_build(room.pk)
    assert len(calls) == parses
    assert forged not in unpickled
    assert (len(unpickled) == 1) == (handed == "kept")
    assert not redis_client().exists(key)  # taken once
    room = Room.objects.get(pk=room.pk)
    assert room.build_state == "live"
    sim = Simulation(load_scenario(room.scenario_yaml))
    sim.run(room.sim_ms)
    assert reading.room_timeline(room) == [dict(e) for e in sim.timeline.events]
