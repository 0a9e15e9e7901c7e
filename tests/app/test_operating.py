"""Operating a room, as issue #38 found it: a parameter change logged as "Parameters changed:
field old → new" in the exports (its JSON kept), every duration of the admin in one unit
style."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.test import Client

from controller.models import Action, Room
from controller.rooms import actions, create, runtime
from controller.rooms import tick as rooms_tick
from tests.app.scenarios import pod, scenario

SCENARIO = scenario("ops", 2, (pod(),), spec='  kubernetesVersion: "1.34"\n')


@pytest.fixture
def room(db: None) -> Room:
    room = create.room_create("ops", SCENARIO, None, 10.0)
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


@pytest.fixture
def staff(db: None) -> Client:
    user = get_user_model().objects.create_superuser("admin", "a@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def tick(room: Room, wall_s: float) -> Room:
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


# -- "SetParameters logged as 'Parameters changed: field old → new'" ------------------------------
def test_a_parameter_change_reads_parameters_changed_in_the_exports(client, room: Room) -> None:
    actions.parameters_submit(
        room,
        {
            "controllerManager": {"nodeEvictionRate": 0.5},
            "kubelet": {"nodeStatusUpdateFrequency": "5s"},
        },
        "op",
    )
    tick(room, 1)
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/rooms/{room.slug}/timeline.csv").content.decode()))
    )
    (row,) = [r for r in rows if "SetParameters" in r["fields"]]
    assert row["what"] == (
        "Parameters changed: nodeEvictionRate 0.1 → 0.5; nodeStatusUpdateFrequency 10s → 5s"
    )
    listed = yaml.safe_load(client.get(f"/rooms/{room.slug}/events.yaml").content)
    notes = [item["note"] for item in listed["items"]]
    assert any(n.startswith("Parameters changed: nodeEvictionRate 0.1 → 0.5") for n in notes)
    # The JSON timeline's contract is kept: type Fault, the fault as written, its changes.
    (event,) = [
        e
        for e in client.get(f"/rooms/{room.slug}/events.json").json()["events"]
        if e.get("fault") == "SetParameters"
    ]
    assert event["type"] == "Fault"
    assert event["controllerManager"] == {"nodeEvictionRate": 0.5}
    assert event["changes"] == [
        "controllerManager.nodeEvictionRate: 0.1 -> 0.5",
        "kubelet.nodeStatusUpdateFrequency: 10s -> 5s",  # it read "10000 -> 5000"
    ]


# -- "every duration in the admin in one unit style" ----------------------------------------------
def test_the_admins_lists_show_simulated_times_as_durations(staff, room: Room) -> None:
    """The room list read sim_ms "20000" and the action log at_ms "10001" where every
    duration of the parameters form reads "5s", "50s"."""
    tick(room, 1)
    actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "op")
    room = tick(room, 2)
    assert room.sim_ms == 20_000
    rooms = staff.get("/admin/controller/room/").content.decode()
    assert ">20s<" in rooms and ">20000<" not in rooms
    change = staff.get(f"/admin/controller/room/{room.pk}/change/").content.decode()
    assert "20s" in change and 'name="sim_anchor_ms"' not in change
    action = Action.objects.get(room=room, kind="StopKubelet")
    log = staff.get("/admin/controller/action/").content.decode()
    assert f">{action.at_ms / 1000:g}s<" in log and f">{action.at_ms}<" not in log
    shown = staff.get(f"/admin/controller/action/{action.pk}/change/").content.decode()
    assert f"{action.at_ms / 1000:g}s" in shown


def test_the_admins_parameter_message_reads_as_the_timeline(staff, room: Room) -> None:
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    form = staff.get(url).context["adminform"].form
    data = {name: form.fields[name].initial for name in form.setting_fields}
    data["kubelet__nodeStatusUpdateFrequency"] = "5s"
    page = staff.post(url, data, follow=True).content.decode()
    assert "nodeStatusUpdateFrequency 10s → 5s" in page


# -- issue #37: kube-scheduler's clientConnection in the admin's form ------------------------------
def test_the_admin_edits_the_schedulers_client_rate_limit(staff, room: Room) -> None:
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    page = staff.get(url)
    text = page.content.decode()
    assert "scheduler.clientConnection.qps" in text and "scheduler.clientConnection.burst" in text
    assert "kube-scheduler clientConnection.qps. Default in Kubernetes 1.34: 50" in text
    assert "kube-scheduler clientConnection.burst. Default in Kubernetes 1.34: 100" in text
    form = page.context["adminform"].form
    data = {name: form.fields[name].initial for name in form.setting_fields}
    assert (
        data["scheduler__clientConnection__qps"],
        data["scheduler__clientConnection__burst"],
    ) == (
        "50",
        "100",
    )
    data["scheduler__clientConnection__qps"] = "200"
    shown = staff.post(url, data, follow=True).content.decode()
    assert "qps 50 → 200" in shown
    action = Action.objects.get(room=room, kind="SetParameters")
    assert action.payload == {
        "type": "SetParameters",
        "scheduler": {"clientConnection": {"qps": 200}},
    }
    r = tick(room, 1)
    from controller import timeline_store

    fault = next(d for _i, _t, typ, d in timeline_store.after(r) if typ == "Fault")
    assert fault["changes"] == ["scheduler.clientConnection.qps: 50 -> 200"]
    rows = list(
        csv.DictReader(io.StringIO(staff.get(f"/rooms/{r.slug}/timeline.csv").content.decode()))
    )
    (row,) = [x for x in rows if "SetParameters" in x["fields"]]
    assert row["what"] == "Parameters changed: qps 50 → 200"
    # The form shows the value in force: the scenario's, with the applied action after it.
    again = staff.get(url).context["adminform"].form
    assert again.fields["scheduler__clientConnection__qps"].initial == "200"
    assert again.fields["scheduler__clientConnection__burst"].initial == "100"


def test_the_admin_refuses_a_bad_scheduler_burst_on_its_field(staff, room: Room) -> None:
    url = f"/admin/controller/clusterparameters/{room.parameters.pk}/change/"
    form = staff.get(url).context["adminform"].form
    data = {name: form.fields[name].initial for name in form.setting_fields}
    data["scheduler__clientConnection__qps"] = "200"
    data["scheduler__clientConnection__burst"] = "-1"
    response = staff.post(url, data)
    assert response.status_code == 200  # the form again, with the error
    errors_ = response.context["adminform"].form.errors
    assert "scheduler.clientConnection.burst" in str(errors_["scheduler__clientConnection__burst"])
    assert "must be non-negative" in response.content.decode()
    assert not Action.objects.filter(room=room, kind="SetParameters").exists()


def test_parameters_submit_takes_the_scheduler_section(room: Room) -> None:
    """The page's path (and the admin's): the scheduler section is a known one."""
    action = actions.parameters_submit(
        room, {"scheduler": {"clientConnection": {"burst": 20}}}, "op"
    )
    assert action.payload == {
        "type": "SetParameters",
        "scheduler": {"clientConnection": {"burst": 20}},
    }
    with pytest.raises(actions.ActionError, match="scheduler.clientConnection.qps"):
        actions.parameters_submit(room, {"scheduler": {"clientConnection": {"qps": "fast"}}}, "op")
