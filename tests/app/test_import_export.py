"""Importing a cluster from the landing page, and a room's exports (issue #15)."""

from __future__ import annotations

import csv
import io
import uuid
from pathlib import Path

import pytest
import yaml

from controller.kube_io.importer import import_cluster
from controller.models import Room
from controller.rooms import actions, catalog, controls, create, imports, tick, whatif

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl"
THREE_ZONES = (FIXTURES / "three-zones.yaml").read_text()


def _post(client, **fields):
    data = {"imp-speed": "10", "imp-name": "", "imp-flags": "", **fields}
    return client.post("/", data)


def test_paste_preview_shows_the_report_and_creates_nothing(client, db) -> None:
    response = _post(client, **{"imp-kubectl": THREE_ZONES, "preview": "1"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Import report: 8 things the simulation cannot represent" in page
    assert "volumeClaimTemplates: persistent volumes are not simulated" in page
    assert (
        '<p class="import-summary" id="import-summary">Imported from kubectl output: 6 nodes in '
        "3 zones, 4 workloads, 15 pods; 8 notes in the import report.</p>"
    ) in page
    assert Room.objects.count() == 0


def test_a_paste_too_large_says_upload_instead(client, db, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 60_000
    response = _post(client, **{"imp-kubectl": THREE_ZONES, "create": "1"})
    assert response.status_code == 200
    assert "The pasted text is larger than 0.1 MiB: upload the file instead." in (
        response.content.decode()
    )
    assert Room.objects.count() == 0
    upload = io.BytesIO(THREE_ZONES.encode())
    upload.name = "cluster.yaml"
    response = client.post("/", {"imp-speed": "10", "imp-upload": upload, "create": "1"})
    assert response.status_code == 302


def test_paste_creates_a_room_that_looks_like_the_cluster(client, db) -> None:
    response = _post(
        client,
        **{
            "imp-kubectl": THREE_ZONES,
            "imp-name": "shop prod",
            "imp-flags": "--node-monitor-grace-period=30s",
            "create": "1",
        },
    )
    assert response.status_code == 302
    room = Room.objects.get()
    assert room.name == "shop prod"
    assert response["Location"].startswith(f"/rooms/{room.slug}/?token=")
    scenario, _report = import_cluster(THREE_ZONES, flags="--node-monitor-grace-period=30s")
    stored = next(d for d in yaml.safe_load_all(room.scenario_yaml) if d)
    assert stored["spec"] == scenario["spec"]
    page = client.get(f"/rooms/{room.slug}/").content.decode()
    assert 'id="import-report"' in page
    assert "ReplicaSet of Deployment web" in page
    # The report is apart from the "what to watch for" paragraph.
    assert (
        '<p id="about">Imported from kubectl output: 6 nodes in 3 zones, 4 workloads, 15 pods; '
        "8 notes in the import report.</p>"
    ) in page
    for link in ("manifests.yaml", "events.yaml", "timeline.csv"):
        assert f'href="/rooms/{room.slug}/{link}"' in page


def test_upload_json_creates_a_room(client, db) -> None:
    import json

    body = json.dumps(yaml.safe_load(THREE_ZONES)).encode()
    upload = io.BytesIO(body)
    upload.name = "cluster.json"
    response = client.post("/", {"imp-speed": "10", "imp-upload": upload, "create": "1"})
    assert response.status_code == 302
    assert Room.objects.get().scenario_name == "imported-cluster"


@pytest.mark.parametrize(
    "fields, message",
    [
        (
            {"imp-kubectl": THREE_ZONES.replace("memory: 256Mi\n", 'memory: "16GB"\n', 1)},
            "items[6].spec.template.spec.containers[0].resources.requests.memory: "
            "&quot;16GB&quot; is not a Kubernetes quantity",
        ),
        (
            {"imp-kubectl": THREE_ZONES, "imp-flags": "--node-eviction-rate=-1"},
            "--node-eviction-rate: must be &gt;= 0, got -1",
        ),
        ({"imp-kubectl": "  "}, "Paste or upload the output of kubectl get ... -o yaml."),
    ],
)
def test_bad_input_names_the_field_and_creates_nothing(client, db, fields, message) -> None:
    response = _post(client, **fields, create="1")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Room.objects.count() == 0


def _room(db_flags: str = "") -> Room:
    text, _report = imports.import_scenario(THREE_ZONES)
    room = create.room_create("shop", text, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    return Room.objects.get(pk=room.pk)


def test_exports_after_a_zone_outage(client, db) -> None:
    room = _room()
    actions.action_submit(room, {"type": "ZoneOutage", "zone": "eu-west-1b"}, "test")
    controls.room_control(room.pk, "step", 150, "test")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert room.sim_ms >= 150_000
    outage = room.actions.get(kind="ZoneOutage").at_ms

    response = client.get(f"/rooms/{room.slug}/timeline.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{room.slug}-timeline.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == room.events.count()
    deleted = [r for r in rows if r["type"] == "PodDeleted"]
    # Cut off at once: the last lease renewal is at 0 s, the zone goes Unknown at the 55 s
    # monitor pass (nodeMonitorGracePeriod 50 s), ip-10-0-2-21 is tainted NoExecute at the
    # 60 s tainting pass, and api tolerates that for 30 s.
    assert [(r["type"], r["pod"]) for r in deleted] == [("PodDeleted", "shop/api-58b7f9d6c8-k9rlx")]
    assert outage < 1000
    assert deleted[0]["t_seconds"] == "90.000"
    unknown = [r["t_seconds"] for r in rows if r["type"] == "NodeReady" and "Unknown" in r["what"]]
    assert unknown == ["55.000", "55.000"]

    response = client.get(f"/rooms/{room.slug}/events.yaml")
    assert response.status_code == 200
    events = yaml.safe_load(response.content)
    assert (events["apiVersion"], events["kind"]) == ("events.k8s.io/v1", "EventList")
    assert len(events["items"]) == room.events.count()
    eviction = next(e for e in events["items"] if e["reason"] == "TaintManagerEviction")
    assert eviction["regarding"] == {
        "kind": "Pod",
        "name": "api-58b7f9d6c8-k9rlx",
        "namespace": "shop",
        "apiVersion": "v1",
    }

    response = client.get(f"/rooms/{room.slug}/manifests.yaml")
    assert response.status_code == 200
    text = response.content.decode()
    again, _report = import_cluster(text)
    pods = {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}"
        for o in again["spec"]["objects"]
        if o["kind"] == "Pod"
    }
    assert "shop/api-58b7f9d6c8-k9rlx" not in pods  # deleted at 140 s
    assert len(pods) == 15  # its replacement instead


def test_manifests_round_trip_at_t0(client, db) -> None:
    room = _room()
    text = client.get(f"/rooms/{room.slug}/manifests.yaml").content.decode()
    first, _report = import_cluster(THREE_ZONES)
    again, report = import_cluster(text)
    assert report == []
    assert again["spec"] == first["spec"]


# -- What if -----------------------------------------------------------------------------------
def test_what_if_service_runs_headless_and_leaves_the_room(db) -> None:
    room = _room()
    before = (room.sim_ms, room.events.count(), room.actions.count())
    result = whatif.room_what_if(room, "eu-west-1b", [], 60)
    rows = {r["workload"]: r for r in result["rows"]}
    assert (rows["Deployment/api"]["down_at_ms"], rows["Deployment/api"]["back_at_ms"]) == (
        105_000,
        140_000,
    )
    assert rows["Deployment/web"]["back_at_ms"] == 420_000
    assert rows["StatefulSet/db"]["back_at_ms"] is None
    room.refresh_from_db()
    assert (room.sim_ms, room.events.count(), room.actions.count()) == before


def test_what_if_nodes(db) -> None:
    room = _room()
    result = whatif.room_what_if(room, "", ["ip-10-0-1-12"], 0)
    rows = {r["workload"]: r for r in result["rows"]}
    # ip-10-0-1-12 runs api-...-w2fjd and db-0; cut off at 0 s, Unknown at 55 s, tainted at
    # once (the zone keeps a ready node: Normal, rate 0.1), api deleted 30 s later.
    assert rows["Deployment/api"]["down_at_ms"] == 55_000
    assert rows["Deployment/api"]["back_at_ms"] == 90_000
    assert rows["Deployment/web"]["down_at_ms"] is None


def test_what_if_choices(db) -> None:
    room = _room()
    assert whatif.what_if_choices(room) == {
        "zones": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
        "nodes": [
            "ip-10-0-1-11",
            "ip-10-0-1-12",
            "ip-10-0-2-21",
            "ip-10-0-2-22",
            "ip-10-0-3-31",
            "ip-10-0-3-32",
        ],
    }


@pytest.mark.parametrize(
    "data, status, message",
    [
        ({"zone": "eu-west-1b"}, 403, "only the room's operator may run a What-if"),
        ({"zone": "mars", "token": "T"}, 400, 'zone: unknown zone "mars"'),
        ({"nodes": ["nope"], "token": "T"}, 400, 'nodes: unknown node "nope"'),
        ({"token": "T"}, 400, "pick a zone or at least one node to fail"),
        (
            {"zone": "eu-west-1b", "at": "-5", "token": "T"},
            400,
            "at: must be between 0 and 1800 seconds",
        ),
    ],
)
def test_what_if_view_refuses(client, db, data, status, message) -> None:
    room = _room()
    if data.get("token") == "T":
        data = {**data, "token": room.operator_token}
    response = client.post(f"/rooms/{room.slug}/whatif", data)
    assert response.status_code == status
    assert response.json() == {"error": message}


def test_what_if_card_only_for_the_operator_of_an_imported_cluster(client, db) -> None:
    other = create.room_create("demo", catalog.builtin_scenarios()[0]["yaml"], None, 10.0)
    page = client.get(f"/rooms/{other.slug}/?token={other.operator_token}").content.decode()
    assert 'id="whatif"' not in page
    room = _room()
    viewer = client.get(f"/rooms/{room.slug}/").content.decode()
    assert 'id="whatif"' not in viewer
    operator = client.get(f"/rooms/{room.slug}/?token={room.operator_token}").content.decode()
    assert '<details class="card whatif" id="whatif" open>' in operator
    assert "<option>eu-west-1b</option>" in operator


def test_a_what_if_run_is_read_through_its_own_room_only(client, db, redis_server) -> None:
    """Another room's URL and an unknown id are 404 (before: any room read any run, and an
    unknown id answered {"state": "running"} forever). No worker runs it here: queued."""
    room, other = _room(), _room()
    response = client.post(
        f"/rooms/{room.slug}/whatif", {"zone": "eu-west-1b", "token": room.operator_token}
    )
    run = response.json()["id"]
    assert client.get(f"/rooms/{room.slug}/whatif/{run}").json() == {"state": "running"}
    for url in (
        f"/rooms/{other.slug}/whatif/{run}",
        f"/rooms/{room.slug}/whatif/{uuid.uuid4()}",
        f"/rooms/{room.slug}/whatif/no-such-task",
        f"/rooms/{room.slug}/whatif/{run.upper()}",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json() == {"error": "no such What-if run in this room"}


def test_what_if_in_the_worker(client, heavy_worker_proc) -> None:
    import time

    room = _room()
    response = client.post(
        f"/rooms/{room.slug}/whatif", {"zone": "eu-west-1b", "token": room.operator_token}
    )
    assert response.status_code == 200
    url = f"/rooms/{room.slug}/whatif/{response.json()['id']}"
    deadline = time.monotonic() + 60
    body = client.get(url).json()
    while body["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.3)
        body = client.get(url).json()
    assert body["state"] == "done"
    rows = {r["workload"]: r["back_at_ms"] for r in body["rows"]}
    assert rows == {
        "DaemonSet/node-exporter": None,
        "Deployment/api": 140_000,
        "Deployment/web": 420_000,
        "StatefulSet/db": None,
    }


def test_manifests_carry_the_settings_changed_since(client, db) -> None:
    room = _room()
    actions.parameters_submit(
        room, {"controllerManager": {"nodeMonitorGracePeriod": "20s"}}, "test"
    )
    controls.room_control(room.pk, "step", 5, "test")
    tick.room_advance(room.pk)
    text = client.get(f"/rooms/{room.slug}/manifests.yaml").content.decode()
    again, _report = import_cluster(text)
    assert again["spec"]["controllerManager"] == {"nodeMonitorGracePeriod": "20s"}
