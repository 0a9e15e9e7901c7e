"""The comparison page as issue #38 asked for it, in a real Chromium: each side drawn as the
room page draws its cluster (pod marks, the NoExecute countdowns), one scrubber and a rewind
for the pair (an empty rewind box refused); on the landing page, side labels that follow the
releases chosen; and a What-if of bare pods that says why its table is empty. Screenshot:
test-artifacts/38-compare.png."""

from __future__ import annotations

import math

import pytest

from controller.rooms import controls, create, imports

from .conftest import ARTIFACTS
from .helpers import card, open_room, paused_comparison

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: tolerations}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: n-1, zone: z}
    - {name: n-2, zone: z}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: n-1, containers: [{name: web}]}
  faults:
    - {at: 62s, type: StopKubelet, node: n-1}
"""

LEFT, RIGHT = '.side[data-side="left"]', '.side[data-side="right"]'


def clock(page) -> float:
    """The page's clock ("02:10.300") in seconds."""
    minutes, seconds = page.locator("#clock").inner_text().split(":")
    return int(minutes) * 60 + float(seconds)


def pod(side: str) -> str:
    return f'{side} .cmp-node[data-node="n-1"] .pod[data-pod="default/web"]'


@pytest.fixture
def comparison(live_stack):
    # Unknown at 115 s, NoExecute at 120 s: at 130 s the right pod has 20 s left, the left 290
    # (the clock runs a few seconds at 10x before the pause: the test reads it).
    return paused_comparison(SCENARIO, 130)


def test_the_comparison_shows_pod_marks_countdowns_a_scrubber_and_rewinds_both(
    live_stack, comparison, browser
) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_stack}/compare/{comparison.slug}/?token={comparison.left.operator_token}")
    # Pod marks with their countdowns, on both sides (the tiles had only counts).
    page.wait_for_selector(f"{pod(RIGHT)}.evicting", timeout=20_000)
    page.wait_for_selector(f"{pod(LEFT)}.evicting", timeout=20_000)
    # The room stood at about 130 s (its clock ran a little before the pause): the deletions
    # at 150 s (30 s) and 420 s (300 s), counted down from the time the page shows.
    t = clock(page)
    assert 130 <= t < 140, t
    assert page.locator(f"{pod(RIGHT)} .countdown").inner_text() == f"{math.ceil(150 - t)} s"
    left = math.ceil(420 - t)
    assert page.locator(f"{pod(LEFT)} .countdown").inner_text() == f"{left // 60}:{left % 60:02d}"
    assert "unreachable" in page.locator(f'{RIGHT} .cmp-node[data-node="n-1"] .taints').inner_text()
    # One scrubber for the pair, an operator's (its handle can be dragged to rewind).
    scrub = page.locator("#scrubber .scrub-range")
    assert scrub.is_enabled()
    page.wait_for_function(
        "() => Number(document.querySelector('#scrubber canvas.scrub-marks').dataset.marks) > 0",
        timeout=20_000,
    )
    page.screenshot(path=str(ARTIFACTS / "38-compare.png"), full_page=True)

    # An empty rewind box is refused with a message (it was read as 0 s on the room page).
    page.click('button[data-ctl="rewind"]')
    assert "give the time" in page.locator("#error").inner_text()
    assert clock(page) == t
    # A rewind to 60 s takes both rooms there: the kubelet runs, nothing counts down.
    page.fill("#rewind-t", "60")
    page.click('button[data-ctl="rewind"]')
    page.wait_for_function(
        "() => document.getElementById('clock').textContent.startsWith('01:00')", timeout=30_000
    )
    page.wait_for_selector(f"{pod(RIGHT)}:not(.evicting)", timeout=20_000)
    page.wait_for_selector(f"{pod(LEFT)}:not(.evicting)", timeout=20_000)
    for side in (LEFT, RIGHT):
        node = page.locator(f'{side} .cmp-node[data-node="n-1"]')
        assert node.locator(".ready-label").inner_text() == "Ready=True"
        assert node.locator(".kstate").count() == 0
    assert errors == []


def test_side_labels_follow_the_releases_chosen(live_stack, browser) -> None:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{live_stack}/")
    page.eval_on_selector("details.compare-card", "d => { d.open = true; }")
    options = page.locator("#id_cmp-left_version option").all_inner_texts()
    assert "Kubernetes 1.34 — same rules as 1.33; the built-in scenarios' release" in options
    assert not any("simulates as" in o for o in options)
    page.select_option("#id_cmp-left_version", "1.30")
    page.select_option("#id_cmp-right_version", "1.36")
    assert page.input_value("#id_cmp-left_label") == "Kubernetes 1.30"
    assert page.input_value("#id_cmp-right_label") == "Kubernetes 1.36, tolerations 30 s"
    page.fill("#id_cmp-right_changes", "")
    page.dispatch_event("#id_cmp-right_changes", "input")
    page.click("#compare-form button[type=submit]")
    page.wait_for_selector("#compare", timeout=60_000)
    labels = page.locator(".side .side-label").all_inner_texts()
    assert labels == ["Kubernetes 1.30", "Kubernetes 1.36"]


BARE_PODS = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: w-1
    labels: {topology.kubernetes.io/zone: zone-a, kubernetes.io/hostname: w-1}
  status:
    capacity: {cpu: "4", memory: 16Gi, pods: "110"}
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
    nodeInfo: {kubeletVersion: v1.34.1}
- apiVersion: v1
  kind: Node
  metadata:
    name: w-2
    labels: {topology.kubernetes.io/zone: zone-b, kubernetes.io/hostname: w-2}
  status:
    capacity: {cpu: "4", memory: 16Gi, pods: "110"}
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
    nodeInfo: {kubeletVersion: v1.34.1}
- apiVersion: v1
  kind: Pod
  metadata: {name: one, namespace: default}
  spec: {nodeName: w-1, containers: [{name: app, image: nginx}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: two, namespace: default}
  spec: {nodeName: w-2, containers: [{name: app, image: nginx}]}
  status: {phase: Running}
"""


@pytest.fixture
def bare_room(live_stack):
    """An imported cluster of bare pods (made before the browser: Playwright's sync API runs
    an event loop in this thread, where Django refuses database calls)."""
    text, _report = imports.import_scenario(BARE_PODS)
    room = create.room_create("bare pods", text, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_what_if_on_bare_pods_says_why_its_table_is_empty(live_stack, bare_room, browser) -> None:
    page, errors = open_room(browser, live_stack, bare_room, wait_for=card("w-2"))
    page.select_option("#whatif-form select[name=zone]", "zone-a")
    page.click("#whatif-form button[type=submit]")
    note = page.locator("#whatif-note")
    note.wait_for(state="visible", timeout=120_000)
    assert note.inner_text().startswith("No workload to show")
    assert "its 2 pods are bare (no controller owns them)" in note.inner_text()
    assert "1 of them was deleted after the failure and never came back" in note.inner_text()
    assert page.locator("#whatif-result").is_hidden()
    page.locator("#whatif").screenshot(path=str(ARTIFACTS / "38-whatif-empty.png"))
    assert errors == []
