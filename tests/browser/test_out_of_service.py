"""Non-graceful node shutdown from the room page, in a real Chromium: a StatefulSet's db-0 on a
powered-off node, the operator's "out-of-service" action, PodGC force-deleting the Terminating
pod at its next 20 s pass with its rule named in the timeline, db-0 recreated on another node,
then "in service". Under 1.18 the action is there too, and says it is only a NoExecute taint.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import pytest

from controller.engine.versions import CURRENT_VERSION
from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = pytest.mark.browser

SCENARIO = f"""\
# Out-of-service room. Watch for: db-0 force-deleted by PodGC and recreated elsewhere.
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: oos-room}}
spec:
  kubernetesVersion: "{CURRENT_VERSION}"
  nodes:
    - {{name: db-node, zone: z}}
    - {{name: spare-1, zone: z}}
    - {{name: spare-2, zone: z}}
  objects:
    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {{name: db, namespace: default}}
      spec:
        replicas: 1
        selector: {{matchLabels: {{app: db}}}}
        template:
          metadata: {{labels: {{app: db}}}}
          spec: {{containers: [{{name: db, resources: {{requests: {{memory: 1Gi}}}}}}]}}
"""

OLD = SCENARIO.replace(f'"{CURRENT_VERSION}"', '"1.18"')


def make_room(text: str, name: str):
    """Before the browser fixture: Playwright's sync API runs an event loop in this thread."""
    room = create.room_create(name, text, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


@pytest.fixture
def room(live_stack):
    return make_room(SCENARIO, "oos")


@pytest.fixture
def old_room(live_stack):
    return make_room(OLD, "oos-old")


def open_db_room(live_stack, browser, room):
    return open_room(
        browser, live_stack, room, wait_for=f'{card("db-node")} [data-pod="default/db-0"]'
    )


def step(page, times: int) -> None:
    """The room's "Step 10 s" button, ``times`` times (the paused room runs that far)."""
    for _ in range(times):
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(100)


def test_out_of_service_rescues_a_statefulset_pod_from_the_page(live_stack, room, browser) -> None:
    page, errors = open_db_room(live_stack, browser, room)
    node_action(page, "db-node", "PowerOffNode")
    # 1.34: Unknown 50 s after the last lease (0 s), unreachable:NoExecute a pass later.
    step(page, 7)
    page.wait_for_selector(f"{card('db-node')}.unknown", timeout=20_000)
    title = page.locator(f'{card("db-node")} button[data-fault="OutOfService"]').get_attribute(
        "title"
    )
    assert "PodGC force-deletes the node's Terminating pods" in title
    node_action(page, "db-node", "OutOfService")
    step(page, 3)
    page.wait_for_selector("#timeline >> text=PodGC gcTerminating", timeout=20_000)
    timeline = page.inner_text("#timeline")
    assert "the operator marked the node out-of-service" in timeline
    assert "taint-eviction-controller" in timeline
    assert "has the node.kubernetes.io/out-of-service taint" in timeline
    page.wait_for_selector(
        f'{card("spare-1")} [data-pod="default/db-0"], {card("spare-2")} [data-pod="default/db-0"]',
        timeout=20_000,
    )
    assert page.locator(f'{card("db-node")} [data-pod="default/db-0"]').count() == 0
    page.screenshot(path=ARTIFACTS / "13-out-of-service.png", full_page=True)
    node_action(page, "db-node", "RemoveOutOfService")
    step(page, 1)
    page.wait_for_selector("#timeline >> text=RemoveOutOfService, kubectl taint", timeout=20_000)
    assert "out-of-service" not in page.inner_text(f"{card('db-node')} .taints")
    page.screenshot(path=ARTIFACTS / "13-in-service.png", full_page=True)
    assert errors == []


def test_under_1_18_the_action_is_only_a_noexecute_taint(live_stack, old_room, browser) -> None:
    page, errors = open_db_room(live_stack, browser, old_room)
    button = page.locator(f'{card("db-node")} button[data-fault="OutOfService"]')
    # Offered only for a node that is down (the non-graceful shutdown procedure).
    assert button.count() == 0
    node_action(page, "db-node", "PowerOffNode")
    step(page, 7)  # 1.18: Unknown 40 s after the last lease
    page.wait_for_selector(f"{card('db-node')}.unknown", timeout=20_000)
    assert button.count() == 1
    assert "in 1.18 only a NoExecute taint" in button.get_attribute("title")
    node_action(page, "db-node", "OutOfService")
    step(page, 4)
    page.wait_for_selector("#timeline >> text=PodGC does not react", timeout=20_000)
    page.wait_for_selector("#timeline >> text=taint manager deleted default/db-0", timeout=20_000)
    page.wait_for_function(
        "document.querySelector('#clock').textContent >= '01:50'", timeout=20_000
    )
    # The taint manager deleted db-0, nothing force-deletes it: it stays on db-node.
    assert "PodGC gcTerminating" not in page.inner_text("#timeline")
    assert page.locator(f'{card("db-node")} [data-pod="default/db-0"]').count() == 1
    page.screenshot(path=ARTIFACTS / "13-out-of-service-1.18.png", full_page=True)
    assert errors == []
