"""Explain this: a person clicks a silent node and a pod and reads why, and what happens when."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import advance, card, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: explain}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: n-1, zone: zone-a}
    - {name: n-2, zone: zone-a}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: n-1, containers: [{name: web}]}
  faults:
    - {at: 62s, type: StopKubelet, node: n-1}
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("explain", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    controls.room_control(room.pk, "step", 80, "test")
    advance(room.pk)
    return room


def test_a_silent_node_says_when_it_goes_unknown_and_its_pod_when_it_goes(
    live_stack, room, browser
) -> None:
    page, _ = open_room(browser, live_stack, room, viewport=(1280, 800), wait_for=card("n-1"))
    page.click('article.node[data-node="n-1"] header strong')
    box = page.locator(".outlook")
    box.wait_for()
    # Renewed at 60 s (seen by the 60 s pass), silent from 62 s: Unknown at the first pass
    # past 60 + 50 s, 115 s, as the engine says.
    assert "its kubelet is stopped" in box.inner_text()
    assert "01:55.000 Ready=Unknown" in box.inner_text()
    page.screenshot(path=str(ARTIFACTS / "9-explain-node.png"))
    # Later: unreachable:NoExecute at 120 s, the pod's 300 s default toleration: 420 s.
    for _ in range(6):
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(300)
    page.wait_for_function(
        "document.getElementById('clock').textContent >= '02:20'", timeout=20_000
    )
    page.click('.pod[data-pod="default/web"]')
    page.wait_for_function(
        "document.querySelector('.outlook') && document.querySelector('.outlook').innerText.includes('07:00.000')",
        timeout=20_000,
    )
    assert "tolerates it 300 s" in page.locator(".outlook").inner_text()
    page.screenshot(path=str(ARTIFACTS / "10-explain-pod.png"))
