"""The Kubernetes version of a room: chosen on the form, shown in the parameters, exported."""

from __future__ import annotations

import pytest

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.versions import CURRENT_VERSION
from controller.models import Room
from controller.rooms import actions, catalog, create, errors, reading
from tests.app.scenarios import scenario

SCENARIO = scenario("versioned", 2, comment="What to watch for: one node stops.")


def _create(client, **fields) -> Room:
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {"name": "", "speed": "10", **fields}
    data["upload"] = SimpleUploadedFile("s.yaml", SCENARIO.encode())
    response = client.post("/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return Room.objects.latest("id")


@pytest.mark.parametrize(
    ("chosen", "runs"),
    [
        pytest.param("", "1.18", id="as the scenario says: a file without a version is 1.18"),
        pytest.param(CURRENT_VERSION, CURRENT_VERSION, id="the current release, chosen"),
        pytest.param("1.18", "1.18", id="1.18, chosen"),
    ],
)
def test_the_form_runs_the_scenario_under_the_chosen_release(
    client, db, chosen: str, runs: str
) -> None:
    room = _create(client, kubernetes_version=chosen)
    params = reading.room_snapshot(room)["params"]
    assert params["kubernetesVersion"] == runs
    # The export says the release, so simulate of it runs the same cluster.
    exported = load_scenario(reading.room_export(room))
    assert exported.profile.version == runs
    assert exported.raw["spec"]["kubernetesVersion"] == runs
    # The scenario's explanation survives the rewrite; run under another release than its
    # own (a file without a version is 1.18), it says its times may not hold.
    about = catalog.scenario_about(room.scenario_yaml)
    assert about.endswith("What to watch for: one node stops.")
    warned = f"Written for Kubernetes 1.18, run here as {runs}" in about
    assert warned is (runs != "1.18")


def test_the_parameters_of_the_current_release_leave_out_what_it_removed(db) -> None:
    room = create.room_create("v", SCENARIO, None, 10.0, kubernetes_version=CURRENT_VERSION)
    cm = reading.room_snapshot(room)["params"]["controllerManager"]
    assert cm["nodeMonitorGracePeriod"] == 50
    assert "podEvictionTimeout" not in cm and "enableTaintManager" not in cm
    old = create.room_create("v", SCENARIO, None, 10.0)
    cm = reading.room_snapshot(old)["params"]["controllerManager"]
    assert (cm["nodeMonitorGracePeriod"], cm["podEvictionTimeout"]) == (40, 300)


def test_a_release_that_is_not_simulated_is_refused_on_the_form(client, db) -> None:
    before = Room.objects.count()
    response = client.post(
        "/",
        {
            "name": "",
            "speed": "10",
            "scenario": "01-single-node-failure",
            "kubernetes_version": "1.25",
        },
    )
    assert response.status_code == 200
    assert Room.objects.count() == before


def test_a_removed_setting_is_refused_when_the_room_runs_the_current_release(db) -> None:
    text = SCENARIO.replace("spec:\n", "spec:\n  controllerManager: {podEvictionTimeout: 2m}\n")
    with pytest.raises(ScenarioError) as exc:
        create.room_create("v", text, None, 10.0, kubernetes_version=CURRENT_VERSION)
    assert exc.value.path == "spec.controllerManager.podEvictionTimeout"
    assert f"not in Kubernetes {CURRENT_VERSION}" in str(exc.value)


def test_a_removed_setting_is_refused_as_a_live_parameter_change(db) -> None:
    room = create.room_create("v", SCENARIO, None, 10.0, kubernetes_version=CURRENT_VERSION)
    with pytest.raises(errors.ActionError) as exc:
        actions.parameters_submit(room, {"controllerManager": {"podEvictionTimeout": "1m"}}, "op")
    assert "podEvictionTimeout" in str(exc.value) and CURRENT_VERSION in str(exc.value)


def test_built_in_scenarios_say_their_release_in_their_title(db) -> None:
    for s in catalog.builtin_scenarios():
        assert s["title"].endswith(f"(Kubernetes {s['version']})")


def test_the_room_form_and_the_compare_form_offer_every_release(client, db) -> None:
    from controller.engine.versions import PROFILES

    page = client.get("/").content.decode()
    for release in PROFILES:
        for field in ("kubernetes_version", "cmp-left_version", "cmp-right_version"):
            select = page.split(f'name="{field}"', 1)[1].split("</select>", 1)[0]
            assert f'<option value="{release}">' in select, (field, release)


def test_compare_puts_two_releases_side_by_side(client, db) -> None:
    """'What changes when we upgrade from 1.30 to 1.36?': each side runs its release."""
    from controller.models import Comparison

    response = client.post(
        "/",
        {
            "cmp-scenario": "14-same-failure-1.34",
            "cmp-left_label": "before the upgrade",
            "cmp-left_version": "1.30",
            "cmp-left_changes": "",
            "cmp-right_label": "after",
            "cmp-right_version": "1.36",
            "cmp-right_changes": "",
            "cmp-speed": "10",
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    c = Comparison.objects.latest("id")
    left = reading.room_snapshot(c.left)["params"]
    right = reading.room_snapshot(c.right)["params"]
    assert (left["kubernetesVersion"], right["kubernetesVersion"]) == ("1.30", "1.36")
    assert left["controllerManager"]["nodeMonitorGracePeriod"] == 40.0
    assert right["controllerManager"]["nodeMonitorGracePeriod"] == 50.0


def test_a_release_given_twice_on_the_compare_form_is_refused(client, db) -> None:
    from controller.models import Comparison

    before = Comparison.objects.count()
    response = client.post(
        "/",
        {
            "cmp-scenario": "14-same-failure-1.34",
            "cmp-left_label": "a",
            "cmp-left_version": "1.30",
            "cmp-left_changes": 'kubernetesVersion: "1.31"',
            "cmp-right_label": "b",
            "cmp-right_changes": "",
            "cmp-speed": "10",
        },
    )
    assert response.status_code == 200
    assert "left.kubernetesVersion: the changes say" in response.content.decode()
    assert Comparison.objects.count() == before
