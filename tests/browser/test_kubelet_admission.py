"""The kubelet's admission and eviction on the room page: a person reads, in the timeline, why a
bound pod that does not fit was rejected, and why an evicted pod got its DisruptionTarget."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import advance, card, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: admission}
spec:
  kubernetesVersion: "1.34"
  kubelet: {evictionHard: {memory.available: 2Gi}}
  nodes:
    - {name: a-1, zone: zone-a, capacity: {cpu: "2", memory: 8Gi}, usage: {memory: 1Gi}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default, annotations: {usage.playground/memory: 1Gi}}
      spec:
        nodeName: a-1
        containers: [{name: web, resources: {requests: {cpu: 1500m, memory: 512Mi}}}]
  faults:
    - at: 5s
      type: Apply
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: big, namespace: default}
        spec: {nodeName: a-1, containers: [{name: big, resources: {requests: {cpu: "1"}}}]}
    - {at: 15s, type: SetUsage, node: a-1, memory: 5632Mi}
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("admission", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    controls.room_control(room.pk, "step", 30, "test")
    advance(room.pk)
    return room


def test_the_timeline_says_why_the_kubelet_rejected_and_evicted(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for=card("a-1"))
    rejected = page.locator("li.ev.t-PodRejected").first
    rejected.wait_for(timeout=20_000)
    assert "default/big" in rejected.inner_text()
    assert "kubelet resource-fit admission" in rejected.locator(".why").inner_text()
    assert "cpu request does not fit" in rejected.locator(".why").inner_text()
    # 6.5Gi used of 8Gi at the 20 s sync: web is evicted (1 s kill), Failed with DisruptionTarget at 21 s.
    target = page.locator("li.ev.t-PodDisruptionTarget").first
    target.wait_for(timeout=20_000)
    assert "00:21.000" in target.inner_text()
    assert target.locator(".why").inner_text().startswith("kubelet eviction manager (evictPod")
    page.screenshot(path=str(ARTIFACTS / "kubeletadmit-why.png"), full_page=True)
    assert errors == []
