"""The picture a class reads at a glance, in a real Chromium: a silent node counts down its
grace period, its pods count down their 300 s once it is tainted (the times agree with the
engine's own), a zone that is all down is a red FullDisruption band, the charts are small
multiples on whole-number axes, and the operator drags the time scrubber to rewind the room
(a viewer's scrubber is read-only). Screenshots of each state go to test-artifacts/."""

from __future__ import annotations

import math
import re

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: picture}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: a-2, zone: zone-a}
    - {name: b-1, zone: zone-b}
    - {name: b-2, zone: zone-b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 4
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, resources: {requests: {cpu: 100m}}}]}
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api, namespace: default}
      spec:
        replicas: 2
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec: {containers: [{name: api, resources: {requests: {cpu: 100m}}}]}
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("picture", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def step(page, times: int) -> None:
    for _ in range(times):
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(150)


def engine(page, js: str):
    """A value from the page's applied state (the engine's views as received)."""
    return page.evaluate(f"(() => {{ const s = window.playgroundRoom.state(); return {js}; }})()")


def test_countdowns_bands_multiples_and_the_scrubber(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for=f"{card('a-1')} .pod")
    viewer, viewer_errors = open_room(
        browser, live_stack, room, operator=False, wait_for=f"{card('a-1')} .pod"
    )
    # Pods are marks coloured by owner: web's and api's differ.
    colours = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.pod')].map(
            (p) => [p.dataset.pod.split('-')[0], p.style.getPropertyValue('--owner')]))"""
    )
    assert colours["default/web"] != colours["default/api"]

    # a-1's kubelet stops at 0 s: its grace period counts down to the engine's unknownAt.
    node_action(page, "a-1", "StopKubelet")
    step(page, 1)
    page.wait_for_selector(f"{card('a-1')}.in-grace", timeout=20_000)
    for p in (page, viewer):
        p.wait_for_selector(f"{card('a-1')} .grace-text >> text=/Unknown in \\d+ s/")
    shown = float(page.get_attribute(card("a-1"), "data-unknown-at"))
    assert shown == engine(page, "s.nodes.get('a-1').unknownAt")
    page.screenshot(path=str(ARTIFACTS / "20-grace-period.png"), full_page=True)
    page.locator(card("a-1")).screenshot(path=str(ARTIFACTS / "20-node-tile-grace.png"))

    # 1.34: Unknown 50 s after the last lease, tainted unreachable:NoExecute: the 300 s run.
    step(page, 6)
    page.wait_for_selector(f"{card('a-1')} .pod.evicting .countdown", timeout=20_000)
    evicting = page.locator(f"{card('a-1')} .pod.evicting")
    assert evicting.count() == engine(
        page, "[...s.pods.values()].filter((p) => p.node === 'a-1' && !p.terminating).length"
    )
    for i in range(evicting.count()):
        mark = evicting.nth(i)
        key = mark.get_attribute("data-pod")
        assert float(mark.get_attribute("data-evict-at")) == engine(
            page, f"s.pods.get('{key}').taintEvictionAt"
        )
        left = math.ceil(engine(page, f"s.pods.get('{key}').taintEvictionAt - s.simT") - 1e-9)
        assert mark.locator(".countdown").inner_text() == f"{left // 60}:{left % 60:02d}"
        assert 240 < left <= 300
    assert page.locator(f"{card('a-1')} .grace").is_hidden(), "Unknown: the grace period is over"
    page.wait_for_selector(f"{card('a-1')} .chip.NoExecute")
    page.screenshot(path=str(ARTIFACTS / "21-pods-counting-down-300s.png"), full_page=True)
    page.locator(card("a-1")).screenshot(path=str(ARTIFACTS / "21-node-tile-300s.png"))

    # zone-b all down: a FullDisruption band.
    page.click('.zone[data-zone="zone-b"] button[data-fault="ZoneOutage"]')
    step(page, 7)
    for p in (page, viewer):
        p.wait_for_selector('.zone[data-zone="zone-b"][data-state="FullDisruption"]')
    band = page.locator('.zone[data-zone="zone-b"]')
    assert "0/2 Ready" in band.inner_text()
    assert band.evaluate("el => getComputedStyle(el).borderLeftColor") == "rgb(192, 57, 43)"
    page.screenshot(path=str(ARTIFACTS / "22-zone-full-disruption.png"), full_page=True)

    # Small multiples: a chart per zone (twice) and per workload, whole numbers on the axes.
    page.wait_for_function(
        "document.querySelectorAll('.multiples[data-group=\"replicas\"] .chart[data-panel] .uplot').length === 2",
        timeout=20_000,
    )
    panels = page.eval_on_selector_all(
        ".multiples .chart[data-panel]", "els => els.map((e) => e.dataset.panel)"
    )
    assert panels == ["zone-a", "zone-b", "zone-a", "zone-b"] + [
        "Deployment/default/api",
        "Deployment/default/web",
    ] or sorted(panels[4:]) == ["Deployment/default/api", "Deployment/default/web"]
    # Every count axis' ticks (uPlot draws them on its canvas: its splits, as drawn).
    splits = page.evaluate(
        """() => { const c = window.playgroundRoom.charts();
            return [c.ready, c.queue, c.replicas].flatMap((g) => [...g.panels.values()])
                .map((p) => p.plot.axes[1]._splits); }"""
    )
    assert len(splits) == 6
    assert all(s and all(float(v).is_integer() for v in s) for s in splits), splits
    page.locator("#charts").screenshot(path=str(ARTIFACTS / "23-small-multiples.png"))

    # The scrubber: events as marks; the viewer's is read-only.
    page.wait_for_function(
        "Number(document.querySelector('.scrub-marks').dataset.marks) > 3", timeout=20_000
    )
    assert viewer.locator(".scrub-range").is_disabled()
    # Hovering the viewer's track at its start says when, and what the marks there are.
    track = viewer.locator(".scrub-track").bounding_box()
    viewer.mouse.move(track["x"] + 2, track["y"] + track["height"] / 2)
    assert re.match(r"00:00: .*zone", viewer.get_attribute(".scrub-track", "title"))
    assert page.locator(".scrub-range").is_enabled()
    now = engine(page, "s.simT")
    page.locator("#scrubber").screenshot(path=str(ARTIFACTS / "24-scrubber.png"))
    # Drag the handle from now back to about a third: the room rewinds there.
    box = page.locator(".scrub-range").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] - 3, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * 0.33, y, steps=5)
    assert "rewind to" in page.inner_text(".scrub-label")
    page.mouse.up()
    page.wait_for_function(f"window.playgroundRoom.state().simT < {now * 0.5}", timeout=20_000)
    back = engine(page, "s.simT")
    assert now * 0.2 < back < now * 0.5
    assert engine(page, "Math.max(...s.events.map((e) => e.t))") <= back
    viewer.wait_for_function(f"window.playgroundRoom.state().simT < {now * 0.5}")
    page.locator("#scrubber").screenshot(path=str(ARTIFACTS / "25-scrubber-rewound.png"))
    # By keyboard: the arrows only choose a time, Escape cancels, Enter rewinds.
    page.focus(".scrub-range")
    for _ in range(20):
        page.keyboard.press("ArrowLeft")
    assert "(Enter)" in page.inner_text(".scrub-label")
    page.wait_for_timeout(1500)
    assert engine(page, "s.simT") == back
    page.keyboard.press("Escape")
    for _ in range(20):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_function(f"window.playgroundRoom.state().simT < {back}", timeout=20_000)
    assert errors == [] and viewer_errors == []
