"""The operator's other tools, in a real Chromium: the scenario's "what to watch for", scaling
a workload from the workloads table, a memory leak on a node and that node's eviction
signals charted against the threshold until the kubelet evicts, a zone outage from the zone
header and the zone's token bucket. Screenshots go to test-artifacts/."""

from __future__ import annotations

import threading

import pytest

from controller.rooms import actions, controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = pytest.mark.browser

SCENARIO = """\
# A small room for the operator tools. Watch for: the leaking pod evicted once
# memory.available drops under 3Gi.
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: operator-tools}
spec:
  kubelet:
    evictionHard: {memory.available: 3Gi}
  nodes:
    - {name: a-1, zone: zone-a, capacity: {cpu: "4", memory: 4Gi, pods: "110"}}
    - {name: a-2, zone: zone-a, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
    - {name: b-1, zone: zone-b, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: leaky, namespace: default}
      spec:
        nodeName: a-1
        containers: [{name: app, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            nodeSelector: {kubernetes.io/hostname: a-2}
            containers: [{name: web, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("tools", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def step(page, times: int = 1) -> None:
    for _ in range(times):
        page.click('button[data-ctl="step"]')


def test_scale_leak_and_zone_outage_from_the_page(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, viewport=(1400, 1100))
    assert "memory.available drops under 3Gi" in page.inner_text("#about")
    row = 'tr[data-workload="Deployment/default/web"]'
    page.wait_for_selector(f"{row} >> text=2 / 2 ready", timeout=20_000)

    # Scale up from the workloads table: a third replica is created and becomes ready.
    page.click(f'{row} button.scale[title="scale up"]')
    page.wait_for_selector(f"{row} >> text=/\\d / 3 ready/", timeout=20_000)
    step(page)
    page.wait_for_selector(f"{row} >> text=3 / 3 ready", timeout=20_000)

    # A memory leak on a-1 (50Mi/s into its pod); the node's signals chart follows it.
    node_action(page, "a-1", "LeakMemory")
    page.wait_for_selector("#timeline >> text=LeakMemory", timeout=20_000)
    page.click('article.node[data-node="a-1"] header')
    step(page, 3)
    page.wait_for_selector('.chart[data-node="a-1"] .uplot', timeout=20_000)
    assert "memory.available threshold" in page.inner_text('.chart[data-node="a-1"]')
    # 4Gi capacity, 3Gi threshold: the kubelet evicts the leaking pod within ~20 s of leak.
    step(page, 3)
    page.wait_for_selector("#timeline .t-PodEvicted", timeout=20_000)
    assert "memory.available below its hard threshold" in page.inner_text("#timeline")
    page.screenshot(path=ARTIFACTS / "5-leak-evicted.png", full_page=True)

    # Zone outage from zone-b's header: b-1 goes Unknown after the grace period.
    page.click('.zone[data-zone="zone-b"] button[data-fault="ZoneOutage"]')
    page.wait_for_selector("#timeline >> text=ZoneOutage", timeout=20_000)
    step(page, 6)
    page.wait_for_selector('article.node.unknown[data-node="b-1"]', timeout=20_000)
    page.wait_for_selector('.zone[data-zone="zone-b"] .state.s-FullDisruption', timeout=20_000)
    assert page.locator('.zone[data-zone="zone-a"] .bucket-text').inner_text().startswith("bucket ")
    page.screenshot(path=ARTIFACTS / "6-zone-outage.png", full_page=True)

    # Rewind from the timeline to just after the outage was injected: b-1 is Ready again.
    unknown = page.locator(
        "#timeline li.t-NodeReady", has_text="no Lease renewal or status from b-1"
    )
    assert unknown.count() == 1
    fault = page.locator("#timeline li.t-Fault", has_text="zone-b")
    at = float(fault.locator("button.rewind-here").get_attribute("data-t"))
    fault.locator("button.rewind-here").click()
    page.wait_for_selector('article.node.ready[data-node="b-1"]', timeout=20_000)
    assert unknown.count() == 0, "the rewound timeline ends before b-1 went Unknown"
    assert page.inner_text("#clock").startswith(f"{int(at // 60):02d}:{int(at % 60):02d}")
    assert errors == []


def test_add_node_from_the_page(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for=card("a-1"))
    page.click("#add-node")
    page.wait_for_selector("#timeline >> text=AddNode", timeout=20_000)
    added = page.locator('.zone[data-zone="zone-a"] article.node[data-node^="added-"]')
    added.wait_for(timeout=20_000)
    step(page)
    page.wait_for_selector('.zone[data-zone="zone-a"] article.node.ready[data-node^="added-"]')
    assert page.locator("#error").is_hidden()
    assert errors == []


def test_an_operator_sees_why_an_action_was_refused_at_its_instant(live_stack, room, browser):
    page, _ = open_room(browser, live_stack, room, wait_for=card("b-1"))

    def two_operators() -> None:
        """Both valid when sent, in one commit so that one tick applies both: bob's stop
        finds b-1 deleted by alice's action just before it."""
        from django.db import connection, transaction

        try:
            with transaction.atomic():
                actions.action_submit(room, {"type": "DeleteNode", "node": "b-1"}, "alice")
                actions.action_submit(room, {"type": "StopKubelet", "node": "b-1"}, "bob")
        finally:
            connection.close()

    # The ORM is called off the thread where Playwright's event loop runs.
    worker = threading.Thread(target=two_operators)
    worker.start()
    worker.join()
    page.wait_for_selector(
        '#error >> text=StopKubelet by bob refused: action.node: unknown node "b-1"'
    )
    page.wait_for_selector('article.node[data-node="b-1"]', state="detached", timeout=20_000)
    # b-1 was zone-b's only node: the empty zone leaves the page.
    page.wait_for_selector('.zone[data-zone="zone-b"]', state="detached", timeout=20_000)
    page.screenshot(path=ARTIFACTS / "7-refused-action.png")
