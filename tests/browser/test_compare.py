"""Compare mode: a teacher sets two toleration settings side by side and the merged timeline
shows where the two clusters part: the pod deleted 300 s vs 30 s after the taint."""

from __future__ import annotations

import pytest

from .conftest import ARTIFACTS
from .helpers import paused_comparison

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


@pytest.fixture
def comparison(live_stack):
    return paused_comparison(SCENARIO, 500)


def test_the_merged_timeline_marks_the_different_deletion_times(
    live_stack, comparison, browser
) -> None:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    token = comparison.left.operator_token
    page.goto(f"{live_stack}/compare/{comparison.slug}/?token={token}")
    page.wait_for_selector('.side[data-side="right"] .cmp-node[data-node="n-1"]', timeout=20_000)
    page.wait_for_selector("#merged li.side-right", timeout=20_000)
    # Unknown at 115 s (1.34: grace 50 s), NoExecute at 120 s: deleted at 150 s on the right,
    # at 420 s on the left; the NodeReady events are the same on both sides.
    right = page.locator("#merged li.side-right.t-PodDeleted")
    left = page.locator("#merged li.side-left.t-PodDeleted")
    assert float(right.get_attribute("data-t")) == 150.0
    assert float(left.get_attribute("data-t")) == 420.0
    assert page.locator("#merged li.side-both.t-NodeReady").count() >= 1
    page.check("#only-diff")
    assert page.locator("#merged li.side-both").count() == 0
    assert "Kubernetes 1.34" in page.locator('.side[data-side="left"] [data-version]').inner_text()
    page.screenshot(path=str(ARTIFACTS / "15-compare.png"), full_page=True)
