"""The room page's parameters panel, in a real Chromium: it shows kube-scheduler's client
(clientConnection.qps / burst, 50 / 100 by default) with the controller-manager's settings; an
operator changes them there (a SetParameters, logged as "Parameters changed"), and a bad value
is refused with a message naming the field. Screenshots (the panel before and after, the
whole page) to test-artifacts/."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, open_room

pytestmark = pytest.mark.browser

SCENARIO = """\
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: scheduler-client}
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
"""

QPS = '#params input[name="scheduler.clientConnection.qps"]'
BURST = '#params input[name="scheduler.clientConnection.burst"]'


@pytest.fixture
def room(live_stack):
    room = create.room_create("scheduler-client", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_the_panel_shows_and_changes_the_schedulers_client(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, viewport=(1400, 1400), wait_for=card("n-2"))
    page.wait_for_selector("#params", state="visible", timeout=20_000)
    qps, burst = page.locator(QPS), page.locator(BURST)
    # Shown, labelled as kube-scheduler's, with their defaults greyed.
    assert qps.is_visible() and burst.is_visible()
    labels = page.locator("#params label").all_inner_texts()
    assert "kube-scheduler clientConnection.qps" in [t.strip() for t in labels]
    assert "kube-scheduler clientConnection.burst" in [t.strip() for t in labels]
    assert (qps.get_attribute("placeholder"), burst.get_attribute("placeholder")) == ("50", "100")
    # Beside the controller-manager's own client (--kube-api-qps / --kube-api-burst, 20 / 30).
    assert "kube-controller-manager --kube-api-qps" in [t.strip() for t in labels]
    cm = [
        page.locator(f'#params input[name="controllerManager.{n}"]')
        for n in ("kubeAPIQPS", "kubeAPIBurst")
    ]
    assert [i.get_attribute("placeholder") for i in cm] == ["20", "30"]
    page.locator("#params").scroll_into_view_if_needed()
    page.locator("#params").screenshot(path=str(ARTIFACTS / "scheduler-client-defaults.png"))

    # A bad burst: refused, the message names the field, the values stay.
    page.fill(BURST, "-1")
    page.click('#params button[type="submit"]')
    error = page.locator("#error")
    error.wait_for(state="visible", timeout=20_000)
    assert "scheduler.clientConnection.burst" in error.inner_text()
    assert "must be non-negative" in error.inner_text()

    # A good change: applied at the room's next tick, logged, and shown greyed.
    page.fill(QPS, "5")
    page.fill(BURST, "10")
    page.click('#params button[type="submit"]')
    # Applied by the stack's worker at its next tick (a paused room's actions too).
    entry = page.locator("#timeline li.t-Fault", has_text="Parameters changed")
    entry.wait_for(timeout=20_000)
    assert entry.locator(".ev-subj").inner_text() == (
        "kube-scheduler clientConnection.burst 100 → 10; kube-scheduler clientConnection.qps 50 → 5"
    )
    page.wait_for_function(
        "([q, b]) => document.querySelector(q).placeholder === '5'"
        " && document.querySelector(b).placeholder === '10'",
        arg=[QPS, BURST],
        timeout=20_000,
    )
    page.fill(QPS, "")
    page.fill(BURST, "")
    page.locator("#params").scroll_into_view_if_needed()
    page.locator("#params").screenshot(path=str(ARTIFACTS / "scheduler-client-changed.png"))
    page.screenshot(path=str(ARTIFACTS / "scheduler-client-room.png"), full_page=True)
    assert errors == []
