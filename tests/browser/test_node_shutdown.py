"""Graceful node shutdown from the room page, in a real Chromium: the node's "shut down"
button (only where the room's Kubernetes release has the feature), the card saying
"shutting down" with Ready=False, the pods killed ordinary first and critical last with the
rule named in the timeline, then the machine off. Screenshots go to test-artifacts/."""

from __future__ import annotations

import pytest

from controller.engine.versions import CURRENT_VERSION
from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

READY_A1 = f"{card('a-1')}.ready"

pytestmark = pytest.mark.browser

SCENARIO = f"""\
# Graceful shutdown room. Watch for: ordinary pods killed first, the critical one last.
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: shutdown-room}}
spec:
  kubernetesVersion: "{CURRENT_VERSION}"
  kubelet: {{shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}}
  nodes:
    - {{name: a-1, zone: zone-a}}
    - {{name: a-2, zone: zone-a}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web, namespace: default}}
      spec:
        replicas: 1
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            nodeSelector: {{kubernetes.io/hostname: a-1}}
            containers: [{{name: web}}]
    - apiVersion: v1
      kind: Pod
      metadata: {{name: agent, namespace: kube-system}}
      spec:
        nodeName: a-1
        priorityClassName: system-node-critical
        containers: [{{name: agent}}]
"""


OLD = SCENARIO.replace(f'"{CURRENT_VERSION}"', '"1.18"').replace(
    "  kubelet: {shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}\n", ""
)


def make_room(text: str, name: str):
    """Before the browser fixture: Playwright's sync API runs an event loop in this thread."""
    room = create.room_create(name, text, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


@pytest.fixture
def room(live_stack):
    return make_room(SCENARIO, "shutdown")


@pytest.fixture
def old_room(live_stack):
    return make_room(OLD, "old")


def test_shut_down_a_node_from_the_page(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for=READY_A1)
    card = 'article.node[data-node="a-1"]'
    node_action(page, "a-1", "ShutdownNode")
    page.wait_for_selector("#timeline >> text=ShutdownNode", timeout=20_000)
    # At once: the Shutdown event, Ready=False posted by the kubelet, the card says so.
    page.wait_for_selector("article.node.notready[data-node='a-1'] >> text=shutting down")
    assert "Shutdown manager detected shutdown event" in page.inner_text("#timeline")
    assert "node is shutting down" in page.inner_text("#timeline")
    page.screenshot(path=ARTIFACTS / "12-shutting-down.png", full_page=True)
    # 20 s for the web pod, then 10 s for the agent, then the machine is off.
    for _ in range(4):
        page.click('button[data-ctl="step"]')
    page.wait_for_selector("#timeline .t-NodePoweredOff", timeout=20_000)
    timeline = page.inner_text("#timeline")
    assert "non-critical pods killed first within shutdownGracePeriod" in timeline
    assert "(20 s)" in timeline
    assert "critical pods (priority >= 2000000000) killed last" in timeline
    assert "the pod's containers stopped, so it is Failed" in timeline
    page.wait_for_selector(f"{card} >> text=kubelet PoweredOff", timeout=20_000)
    assert page.locator(f'{card} .pod.failed[data-pod="kube-system/agent"]').count() == 1
    page.screenshot(path=ARTIFACTS / "12-shut-down.png", full_page=True)
    assert errors == []


def test_no_shut_down_button_where_the_release_has_no_graceful_shutdown(
    live_stack, old_room, browser
):
    page, errors = open_room(browser, live_stack, old_room, wait_for=READY_A1)
    card = 'article.node[data-node="a-1"]'
    assert page.locator(f'{card} button[data-fault="PowerOffNode"]').count() == 1
    assert page.locator(f'{card} button[data-fault="ShutdownNode"]').count() == 0
    assert errors == []
