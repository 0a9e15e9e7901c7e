"""Imports built asynchronously (issue #14, "Fast big rooms"): the import form returns at once
for a big cluster; kubectl output over build.IMPORT_INLINE_MAX_CHARS is imported by the worker
too (the room page shows "importing the cluster", then the build's progress, then the live
room with its import report); an import error there marks the room failed with the item and
the field, and changes nothing else. Small imports keep their errors on the form."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.utils.html import escape

from controller.bench.kubectl_list import big_kubectl_list
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
from controller.kube_io.importer import import_cluster
from controller.kube_io.report import import_report_of
from controller.models import (
    ClusterParameters,
    EngineSnapshot,
    ObjectView,
    PendingImport,
    Room,
    TimelineEvent,
)
from controller.rooms import build, imports, reading, runtime, tick

from .conftest import Worker
from .test_rooms import wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl"
THREE_ZONES = (FIXTURES / "three-zones.yaml").read_text()
BAD_MEMORY = THREE_ZONES.replace("memory: 256Mi\n", 'memory: "16GB"\n', 1)


def _upload(client, text: str, **fields: str):
    upload = io.BytesIO(text.encode())
    upload.name = "cluster.yaml"
    data = {"imp-speed": "10", "imp-name": "", "imp-flags": "", **fields}
    data["imp-upload"] = upload
    return client.post("/", data)


def _the_form_error(text: str) -> str:
    """What the form says of this kubectl output when it imports it in the request."""
    with pytest.raises(ScenarioError) as caught:
        import_cluster(text, name="imported-cluster")
    return str(caught.value)


def _wait_live(room: Room, worker: Worker, timeout: float = 120) -> Room:
    try:
        wait_for(
            lambda: Room.objects.get(pk=room.pk).build_state != "building",
            timeout,
            "the room to be built",
        )
    except AssertionError:
        r = Room.objects.get(pk=room.pk)
        log = worker.log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"{r.build_progress!r}\n{log}") from None
    room = Room.objects.get(pk=room.pk)
    assert (room.build_state, room.build_error) == ("live", "")
    return room


def test_a_big_import_returns_at_once_and_the_worker_imports_and_builds_it(
    client, transactional_db, redis_server, tmp_path
) -> None:
    from django.db import connection

    # 40 nodes, 1,000 pods: 1.4 MB of kubectl YAML, over the limit of a parse in the request.
    text = big_kubectl_list(40, 25, "yaml")
    assert len(text) > build.IMPORT_INLINE_MAX_CHARS
    response = _upload(client, text, **{"imp-name": "big shop", "create": "1"})
    assert response.status_code == 302, response.content.decode()[:2000]
    room = Room.objects.get(name="big shop")
    assert response["Location"].startswith(f"/rooms/{room.slug}/?token=")
    # Nothing imported, nothing built in the request: the worker does both.
    assert (room.build_state, room.build_progress, room.scenario_yaml) == ("building", "queued", "")
    assert PendingImport.objects.get(room=room).text == text
    assert ObjectView.objects.filter(room=room).count() == 0
    assert not ClusterParameters.objects.filter(room=room).exists()
    page = client.get(response["Location"]).content.decode()
    assert 'id="building"' in page and 'data-importing="1"' in page
    assert "kubectl output is imported first" in page and 'id="import-report"' not in page

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "worker.log", heavy=True)
    worker.start()
    try:
        room = _wait_live(room, worker)
        # Its first snapshot is taken just after it went live.
        wait_for(lambda: EngineSnapshot.objects.filter(room=room).exists(), 30, "a snapshot")
    finally:
        worker.kill()
    assert not PendingImport.objects.filter(room=room).exists()
    # The scenario is the one the form would have stored, the room keeps its given name.
    scenario_yaml, report = imports.import_scenario(text, name="big shop")
    assert room.scenario_yaml == scenario_yaml
    assert (room.name, room.scenario_name) == ("big shop", "big shop")
    # Its timeline is the engine's, of its stored scenario.
    sim = Simulation(load_scenario(room.scenario_yaml))
    sim.run(room.sim_ms)
    assert reading.room_timeline(room) == [dict(e) for e in sim.timeline.events]
    assert room.event_count == len(sim.timeline.events) > 1000
    assert ObjectView.objects.filter(room=room, kind="pod").count() == 1000
    assert ClusterParameters.objects.filter(room=room).exists()
    # The live room's page shows the import report, as a room imported in the request does.
    page = client.get(response["Location"]).content.decode()
    assert 'id="app"' in page and 'id="import-report"' in page
    assert import_report_of(room.scenario_yaml) == report
    for r in report:
        assert escape(r["why"]) in page


def test_the_worker_reports_the_import_phases(db, redis_server, monkeypatch) -> None:
    seen: list[str] = []
    real = build._progress

    def record(room_id: int, message: str) -> None:
        real(room_id, message)
        seen.append(message)

    monkeypatch.setattr(build, "_progress", record)
    text = big_kubectl_list(7, 50, "json")  # 350 pods: over the inline build limit too
    room = build.import_start("", text, {}, None, 10.0, inline_max_chars=1000)
    assert (room.name, room.build_state, room.scenario_yaml) == ("imported-cluster", "building", "")
    build.room_build(room.pk)
    room = Room.objects.get(pk=room.pk)
    assert room.build_state == "live", room.build_error
    assert seen == [
        f"importing the cluster ({len(text) / 1e6:.1f} MB of kubectl output)",
        "checking the imported scenario",
        "creating 7 nodes and 350 pods",
        f"storing 7 nodes, 350 pods and {room.event_count:,} events",
    ]
    assert (room.name, room.scenario_name) == ("imported-cluster", "imported-cluster")


@pytest.mark.parametrize(
    ("text", "settings_change", "message"),
    [
        pytest.param(BAD_MEMORY, {}, None, id="a bad quantity (item and field)"),
        pytest.param(
            THREE_ZONES.replace("kind: Node", "kind: Node\n  kind: Pod", 1),
            {},
            None,
            id="a duplicate key (YAML, with its line)",
        ),
        pytest.param(
            THREE_ZONES,
            {"PLAYGROUND_MAX_NODES_PER_ROOM": 5},
            "PLAYGROUND_MAX_NODES_PER_ROOM=5: this scenario has 6 nodes",
            id="a limit",
        ),
    ],
)
def test_an_import_error_in_the_worker_marks_the_room_failed_and_changes_nothing_else(
    client, db, redis_server, settings, text, settings_change, message
) -> None:
    for key, value in settings_change.items():
        setattr(settings, key, value)
    message = message or _the_form_error(text)
    assert message.startswith("items[") or "line" in message or "PLAYGROUND" in message
    room = build.import_start("shop", text, {"name": "shop"}, None, 10.0, inline_max_chars=0)
    build.room_build(room.pk)
    room = Room.objects.get(pk=room.pk)
    assert (room.build_state, room.build_progress, room.build_error) == ("failed", "", message)
    assert room.scenario_yaml == ""
    assert not PendingImport.objects.filter(room=room).exists()
    assert not ClusterParameters.objects.filter(room=room).exists()
    assert ObjectView.objects.filter(room=room).count() == 0
    assert TimelineEvent.objects.filter(room=room).count() == 0
    assert not EngineSnapshot.objects.filter(room=room).exists()
    assert Room.objects.count() == 1
    page = client.get(f"/rooms/{room.slug}/").content.decode()
    assert "could not be built" in page
    assert client.get(f"/rooms/{room.slug}/build.json").json() == {
        "state": "failed",
        "progress": "",
        "error": message,
    }
    assert tick.room_advance(room.pk) is None  # never ticked


def test_the_bad_quantity_message_names_the_item_and_the_field() -> None:
    assert _the_form_error(BAD_MEMORY).startswith(
        'items[6].spec.template.spec.containers[0].resources.requests.memory: "16GB" is not'
    )


def test_a_big_bad_import_from_the_form_fails_on_the_room_page(
    client, db, redis_server, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    monkeypatch.setattr(build, "IMPORT_INLINE_MAX_CHARS", 1000)
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, BAD_MEMORY, **{"create": "1"})
    assert response.status_code == 302
    room = Room.objects.get()
    assert queued == [room.pk] and room.build_state == "building"
    build.room_build(room.pk)
    page = client.get(response["Location"]).content.decode()
    assert "could not be built" in page and escape(_the_form_error(BAD_MEMORY)) in page
    assert Room.objects.get().build_state == "failed"


def test_small_import_errors_stay_on_the_form(client, db) -> None:
    response = _upload(client, BAD_MEMORY, **{"create": "1"})
    assert response.status_code == 200
    assert escape(_the_form_error(BAD_MEMORY)) in response.content.decode()
    assert not Room.objects.exists() and not PendingImport.objects.exists()


def test_a_medium_import_is_parsed_in_the_request_and_built_by_the_worker(
    client, db, redis_server, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """Under the parse limit but over the build limit (320 pods): imported in the request
    (its errors would be on the form), built by the worker; the building page already shows
    the import report."""
    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    text = big_kubectl_list(10, 32, "yaml")
    assert len(text) < build.IMPORT_INLINE_MAX_CHARS
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, text, **{"create": "1"})
    assert response.status_code == 302
    room = Room.objects.get()
    assert queued == [room.pk]
    assert room.build_state == "building"
    assert room.scenario_yaml == imports.import_scenario(text)[0]
    assert not PendingImport.objects.exists()
    page = client.get(response["Location"]).content.decode()
    assert 'data-importing="0"' in page and 'id="import-report"' in page
    build.room_build(room.pk)
    assert Room.objects.get().build_state == "live"
    assert ObjectView.objects.filter(room=room, kind="pod").count() == 320


def test_a_small_import_is_live_when_the_form_returns(client, db) -> None:
    response = _upload(client, THREE_ZONES, **{"create": "1"})
    assert response.status_code == 302
    room = Room.objects.get()
    assert room.build_state == "live"
    assert ObjectView.objects.filter(room=room, kind="pod").count() == 15


def test_preview_builds_no_engine_even_for_a_big_list(
    client, db, redis_server, monkeypatch
) -> None:
    """A long output's Preview (kept for a worker, whose part runs here) builds no engine and
    stores no room."""

    class NoEngine(Simulation):
        def __init__(self, *args, **kwargs) -> None:
            raise AssertionError("Preview built an engine")

    monkeypatch.setattr(build, "Simulation", NoEngine)
    monkeypatch.setattr(runtime, "Simulation", NoEngine)
    text = big_kubectl_list(40, 25, "yaml")
    assert len(text) > build.IMPORT_INLINE_MAX_CHARS
    response = _upload(client, text, **{"preview": "1"})
    assert response.status_code == 302
    imports.preview_run(response["Location"].split("/")[-2])  # the worker's part
    page = client.get(response["Location"]).content.decode()
    assert "Imported from kubectl output: 40 nodes in 3 zones" in page
    assert not Room.objects.exists() and not PendingImport.objects.exists()


def test_a_room_waiting_for_its_import_answers_every_page(client, db, monkeypatch) -> None:
    """Before the worker has imported the cluster the room has no scenario: its exports say
    so (409), the rest answers as for any room being built."""
    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    room = build.import_start("p", THREE_ZONES, {}, None, 10.0, inline_max_chars=0)
    for page in ("export.yaml", "manifests.yaml"):
        response = client.get(f"/rooms/{room.slug}/{page}")
        assert response.status_code == 409, page
        assert response.content == b"The room's cluster is not imported yet: nothing to export.\n"
    for page in ("", "build.json", "events.json", "timeline.csv", "events.yaml", "series.json"):
        assert client.get(f"/rooms/{room.slug}/{page}").status_code == 200, page
    assert client.get(f"/rooms/{room.slug}/snapshot.json").status_code == 200
    Room.objects.filter(pk=room.pk).update(build_state="failed")
    response = client.get(f"/rooms/{room.slug}/export.yaml")
    assert (response.status_code, response.content) == (
        409,
        b"The room's cluster could not be imported: nothing to export.\n",
    )


@pytest.mark.parametrize("fixture", ["three-zones.yaml", "unusual.json"])
def test_the_worker_path_makes_the_same_room_as_the_request_path(
    db, redis_server, monkeypatch, fixture: str
) -> None:
    """The worker parses the scenario from the imported mapping, not from its text: the same
    scenario, the same first state and timeline as the room imported in the request."""
    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    text = (FIXTURES / fixture).read_text()
    flags = "--node-monitor-grace-period=30s --node-eviction-rate=0.05"
    options = {"name": "", "flags": flags}
    late = build.import_start("", text, options, None, 10.0, inline_max_chars=0)
    build.room_build(late.pk)
    late = Room.objects.get(pk=late.pk)
    now = build.import_start("", text, options, None, 10.0, inline_max=10**6)
    assert (late.build_state, now.build_state) == ("live", "live")
    assert late.scenario_yaml == now.scenario_yaml
    assert reading.room_timeline(late) == reading.room_timeline(now)
    snap_late, snap_now = reading.room_snapshot(late), reading.room_snapshot(now)
    for part in ("nodes", "pods", "zones"):
        assert snap_late[part] == snap_now[part], part
    late_params = ClusterParameters.objects.get(room=late)
    now_params = ClusterParameters.objects.get(room=now)
    assert (late_params.controller_manager, late_params.kubelet, late_params.api_server) == (
        now_params.controller_manager,
        now_params.kubelet,
        now_params.api_server,
    )


def test_a_big_import_the_database_cannot_store_is_refused_on_the_form(
    client, db, monkeypatch
) -> None:
    monkeypatch.setattr(build, "IMPORT_INLINE_MAX_CHARS", 1000)
    response = _upload(client, THREE_ZONES.replace("eu-west-1a", "eu-west-1a\x00", 1), create="1")
    assert response.status_code == 200
    assert (
        "kubectl output: contains a NUL character (\\u0000), which cannot be stored"
        in response.content.decode()
    )
    assert not Room.objects.exists() and not PendingImport.objects.exists()


def test_a_long_outputs_preview_returns_at_once_and_a_worker_imports_it(
    client, transactional_db, redis_server, tmp_path
) -> None:
    """Preview of kubectl output over build.IMPORT_INLINE_MAX_CHARS: the request keeps the text
    and returns the preview's page at once; a worker imports it; the page then shows what the
    Preview in the request shows (the summary, the report), or the error naming the item and
    the field; its "Import and create room" makes the room as the form would."""
    from django.db import connection

    text = big_kubectl_list(40, 25, "yaml")  # 1.4 MB
    bad = text.replace("memory: 128Mi", 'memory: "16GB"', 1)
    assert len(bad) > build.IMPORT_INLINE_MAX_CHARS
    good = _upload(client, text, **{"imp-name": "big shop", "preview": "1"})
    broken = _upload(client, bad, preview="1")
    for response in (good, broken):
        assert response.status_code == 302 and response["Location"].startswith("/import/preview/")
        page = client.get(response["Location"]).content.decode()
        assert 'data-state="running"' in page and "Importing the cluster (1.4" in page
    assert not Room.objects.exists()

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "worker.log", heavy=True)
    worker.start()
    try:
        for response in (good, broken):
            url = response["Location"][:-1] + ".json"
            wait_for(lambda u=url: client.get(u).json()["state"] != "running", 120, "preview")
    except AssertionError:
        raise AssertionError(worker.log.read_text(errors="replace")[-3000:]) from None
    finally:
        worker.kill()
    summary, report = imports.import_preview(text, name="big shop")
    page = client.get(good["Location"]).content.decode()
    assert 'data-state="done"' in page and 'id="import-report"' in page
    assert f'<p class="import-summary" id="import-summary">{escape(summary)}</p>' in page
    for r in report:
        assert escape(r["why"]) in page
    page = client.get(broken["Location"]).content.decode()
    assert 'data-state="failed"' in page
    assert f'id="import-error">{escape(_the_form_error(bad))}</p>' in page
    # Create from the preview: a long text, so stored and imported by the worker as the form's.
    response = client.post(good["Location"], {"create": "1"})
    room = Room.objects.get(name="big shop")
    assert response["Location"].startswith(f"/rooms/{room.slug}/?token=")
    assert (room.build_state, room.scenario_yaml) == ("building", "")
    assert PendingImport.objects.get(room=room).text == text
    assert client.get("/import/preview/no-such-preview/").status_code == 404
