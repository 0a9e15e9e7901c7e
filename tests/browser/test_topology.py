"""A person's view of a room, in a real Chromium: operator clicks "stop kubelet", time
passes, the node turns Unknown, the taint chips appear, the pods leave and come back on
other nodes; a viewer sees the same without fault buttons. Screenshots of each stage go to
test-artifacts/."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: browser}
spec:
  nodes:
    - {name: n-1, zone: zone-a}
    - {name: n-2, zone: zone-a}
    - {name: n-3, zone: zone-b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 6
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}]
            containers: [{name: web, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"""


def pods_on(page, node: str) -> int:
    return page.locator(f'article.node[data-node="{node}"] .pod:not(.terminating)').count()


@pytest.fixture
def room(live_stack):
    """Created before the browser starts (Playwright's sync API runs an event loop)."""
    room = create.room_create("browser", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_operator_breaks_a_node_and_both_browsers_see_it(live_stack, room, browser) -> None:
    operator, _ = open_room(browser, live_stack, room, wait_for=f"{card('n-1')} .pod")
    viewer, _ = open_room(browser, live_stack, room, operator=False, wait_for=f"{card('n-1')} .pod")
    assert pods_on(operator, "n-1") == 2
    assert viewer.locator("button.fault").count() == 0, "viewers get no fault buttons"
    assert operator.locator('button.fault[data-fault="StopKubelet"]').count() == 3
    operator.screenshot(path=ARTIFACTS / "1-healthy.png", full_page=True)

    node_action(operator, "n-1", "StopKubelet")
    operator.wait_for_selector('article.node[data-node="n-1"] .kstate', timeout=20_000)
    # 60 simulated seconds: Unknown at 45 s, unreachable taints at 45 s / 50 s.
    operator.click('button[data-ctl="step"]')  # +10 s
    for _ in range(5):
        operator.click('button[data-ctl="step"]')
    for page in (operator, viewer):
        page.wait_for_selector('article.node.unknown[data-node="n-1"]', timeout=20_000)
        page.wait_for_selector('article.node[data-node="n-1"] .chip.NoExecute', timeout=20_000)
    assert "unreachable:NoSchedule" in operator.inner_text('article.node[data-node="n-1"] .taints')
    operator.screenshot(path=ARTIFACTS / "2-unknown-tainted.png", full_page=True)

    # 20 s toleration: deleted at 70 s, recreated at once on the healthy nodes.
    for _ in range(2):
        operator.click('button[data-ctl="step"]')
    for page in (operator, viewer):
        page.wait_for_function(
            "document.querySelectorAll('article.node[data-node=\"n-1\"] .pod:not(.terminating)').length === 0",
            timeout=20_000,
        )
    operator.wait_for_function(
        "[...document.querySelectorAll('article.node:not([data-node=\"n-1\"]) .pod.ok')].length === 6",
        timeout=20_000,
    )
    assert pods_on(viewer, "n-2") + pods_on(viewer, "n-3") == 6
    timeline = operator.inner_text("#timeline")
    assert "taint manager deleted" in timeline
    operator.screenshot(path=ARTIFACTS / "3-rescheduled.png", full_page=True)
    viewer.screenshot(path=ARTIFACTS / "4-viewer.png", full_page=True)
