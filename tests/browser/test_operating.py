"""Operating a room, as issue #38 found it, in a real Chromium: a fault shows on its node at
once ("leaking", "runtime down") while the node's status still says Ready; a parameter change
is logged as "Parameters changed: field old → new"; a room whose data has not arrived says
"building" and shows no parameters (it showed 1.18's podEvictionTimeout 300s). Screenshots go
to test-artifacts/."""

from __future__ import annotations

import re

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = pytest.mark.browser

SCENARIO = """\
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: operating}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: n-1, zone: z}
    - {name: n-2, zone: z}
    - {name: n-3, zone: z}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: n-1, containers: [{name: web}]}
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("operating", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def ready_label(page, node: str) -> str:
    return page.locator(f"{card(node)} .ready-label").inner_text()


def test_faults_show_on_their_node_at_once_and_parameter_changes_read_as_such(
    live_stack, room, browser
) -> None:
    page, errors = open_room(browser, live_stack, room, viewport=(1400, 1000), wait_for=card("n-3"))
    # The room is paused: the kubelets post no status, so Ready stays True; the tiles say
    # what was done to them at once (they showed nothing until the next status update).
    node_action(page, "n-1", "LeakMemory")
    page.wait_for_selector(f'{card("n-1")} .fault-badge[data-badge="leaking"]', timeout=20_000)
    leaking = page.locator(f'{card("n-1")} .fault-badge[data-badge="leaking"]')
    assert leaking.get_attribute("title") == "leaking: memory 50Mi/s into default/web"
    assert "leaking memory 50Mi/s" in page.locator(f"{card('n-1')} .pod").get_attribute("title")
    node_action(page, "n-2", "SetNodeNotReady")
    page.wait_for_selector(f'{card("n-2")} .fault-badge[data-badge="runtime-down"]', timeout=20_000)
    assert page.locator(f"{card('n-2')} .fault-badge").inner_text() == "runtime down"
    assert ready_label(page, "n-1") == ready_label(page, "n-2") == "Ready=True"
    page.locator(card("n-1")).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "38-leaking-node.png"))
    # "stop leaks" takes the badge off; the menu knows the leak from the views.
    node_action(page, "n-1", "StopLeak")
    page.wait_for_selector(f"{card('n-1')} .fault-badge", state="detached", timeout=20_000)

    # A parameter change from the page's form: logged as it reads, not "Fault SetParameters".
    page.fill('#params input[name="controllerManager.nodeEvictionRate"]', "0.5")
    page.click('#params button[type="submit"]')
    entry = page.locator("#timeline li.t-Fault", has_text="Parameters changed")
    entry.wait_for(timeout=20_000)
    assert entry.locator(".ev-type").inner_text() == "Parameters changed:"
    assert entry.locator(".ev-subj").inner_text() == "nodeEvictionRate 0.1 → 0.5"
    assert "SetParameters" not in page.locator("#timeline li .ev-subj").all_inner_texts()
    assert errors == []


def test_a_room_shows_building_and_no_parameters_until_its_data_arrives(
    live_stack, room, browser
) -> None:
    """The page before the room's data: it showed a bare page and a parameters form with
    1.18's values (podEvictionTimeout 300s) in a 1.34 room."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    # The room's socket is held (nothing arrives), as for a big room whose data is on its way.
    page.route_web_socket(re.compile(r"/ws/rooms/"), lambda ws: None)
    page.goto(f"{live_stack}/rooms/{room.slug}/?token={room.operator_token}")
    waiting = page.locator("#room-waiting")
    waiting.wait_for(timeout=20_000)
    assert waiting.inner_text().strip().startswith("building")
    assert page.locator("#params").is_hidden()
    assert page.locator("#params-head").is_hidden()
    # No value before the room's: 1.18's 300 s was written into the page.
    for field in page.locator("#params input").all():
        assert not field.get_attribute("placeholder"), field.get_attribute("name")
    page.screenshot(path=str(ARTIFACTS / "38-room-waiting.png"))

    # With its data: no "building", and the release's own parameters (1.34 has no
    # podEvictionTimeout; its grace period is 50 s).
    page2, errors = open_room(browser, live_stack, room, wait_for=card("n-3"))
    page2.wait_for_selector("#params", state="visible", timeout=20_000)
    assert page2.locator("#room-waiting").count() == 0
    grace = page2.locator('#params input[name="controllerManager.nodeMonitorGracePeriod"]')
    assert grace.get_attribute("placeholder") == "50s"
    assert page2.locator('#params input[name="controllerManager.podEvictionTimeout"]').is_hidden()
    assert errors == []
