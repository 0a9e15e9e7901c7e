"""The Kubernetes version of a room: chosen on the form, shown in the parameters, exported."""

from __future__ import annotations

import pytest

from controller import services
from controller.engine.scenario import load_scenario
from controller.engine.versions import CURRENT_VERSION
from controller.models import Room
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
    params = services.room_snapshot(room)["params"]
    assert params["kubernetesVersion"] == runs
    # The export says the release, so simulate of it runs the same cluster.
    exported = load_scenario(services.room_export(room))
    assert exported.profile.version == runs
    assert exported.raw["spec"]["kubernetesVersion"] == runs
    # The scenario's explanation survives the rewrite; run under another release than its
    # own (a file without a version is 1.18), it says its times may not hold.
    about = services.scenario_about(room.scenario_yaml)
    assert about.endswith("What to watch for: one node stops.")
    warned = f"Written for Kubernetes 1.18, run here as {runs}" in about
    assert warned is (runs != "1.18")


def test_the_parameters_of_the_current_release_leave_out_what_it_removed(db) -> None:
    room = services.room_create("v", SCENARIO, None, 10.0, kubernetes_version=CURRENT_VERSION)
    cm = services.room_snapshot(room)["params"]["controllerManager"]
    assert cm["nodeMonitorGracePeriod"] == 50
    assert "podEvictionTimeout" not in cm and "enableTaintManager" not in cm
    old = services.room_create("v", SCENARIO, None, 10.0)
    cm = services.room_snapshot(old)["params"]["controllerManager"]
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
    with pytest.raises(services.ScenarioError) as exc:
        services.room_create("v", text, None, 10.0, kubernetes_version=CURRENT_VERSION)
    assert exc.value.path == "spec.controllerManager.podEvictionTimeout"
    assert f"not in Kubernetes {CURRENT_VERSION}" in str(exc.value)


def test_a_removed_setting_is_refused_as_a_live_parameter_change(db) -> None:
    room = services.room_create("v", SCENARIO, None, 10.0, kubernetes_version=CURRENT_VERSION)
    with pytest.raises(services.ActionError) as exc:
        services.parameters_submit(room, {"controllerManager": {"podEvictionTimeout": "1m"}}, "op")
    assert "podEvictionTimeout" in str(exc.value) and CURRENT_VERSION in str(exc.value)


def test_built_in_scenarios_say_their_release_in_their_title(db) -> None:
    for s in services.builtin_scenarios():
        assert s["title"].endswith(f"(Kubernetes {s['version']})")
