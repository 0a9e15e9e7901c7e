"""A person opens a room twenty minutes in: the charts start at t=0, a click on a chart
scrolls the timeline to that moment, and a chart saves as a PNG."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import advance, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: late}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: a-2, zone: zone-a}
    - {name: a-3, zone: zone-a}
    - {name: b-1, zone: zone-b}
    - {name: b-2, zone: zone-b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 5
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web}]}
  faults:
    - {at: 100s, type: ZoneOutage, zone: zone-a}
    - {at: 900s, type: ZoneRestore, zone: zone-a}
"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("late", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    for _ in range(20):  # twenty minutes, in one-minute ticks
        controls.room_control(room.pk, "step", 60, "test")
        advance(room.pk)
    return room


def test_a_page_opened_at_twenty_minutes_charts_from_zero(live_stack, room, browser) -> None:
    page, _ = open_room(
        browser,
        live_stack,
        room,
        operator=False,
        viewport=(1280, 900),
        context={"accept_downloads": True},
    )
    page.wait_for_function(
        "document.querySelectorAll('#charts .chart[data-from]').length >= 3", timeout=20_000
    )
    for chart in page.locator("#charts .chart[data-from]").all()[:3]:
        assert float(chart.get_attribute("data-from")) == 0.0
        assert float(chart.get_attribute("data-to")) >= 1200.0
    # Every group on one time range: the workloads' charts do not stop where their last
    # change was while the zones' run on (zones went to 3,000 s, workloads to 750 s).
    page.wait_for_function(
        "document.querySelectorAll('#charts .multiples .chart[data-x-max]').length >= 4",
        timeout=20_000,
    )
    ranges = page.eval_on_selector_all(
        "#charts .multiples .chart[data-x-max]",
        "(els) => els.map((e) => [e.closest('.multiples').dataset.group, e.dataset.xMin, e.dataset.xMax])",
    )
    assert {"zones", "replicas"} <= {g for g, _lo, _hi in ranges}, ranges
    assert len({(lo, hi) for _g, lo, hi in ranges}) == 1, ranges
    page.locator("#charts").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "14-charts-from-zero.png"), full_page=True)
    # Click the ready-nodes chart at about two-fifths of its width (~ 8 minutes in).
    over = page.locator("#charts .chart").first.locator(".u-over")
    box = over.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] / 2)
    page.mouse.click(box["x"] + box["width"] * 0.4, box["y"] + box["height"] / 2)
    picked = page.locator("#timeline li.picked")
    picked.wait_for(timeout=5_000)
    assert float(picked.get_attribute("data-t")) <= 1200
    with page.expect_download() as download:
        page.locator("#charts .chart").first.locator("button.chart-png").click()
    assert download.value.suggested_filename.endswith(".png")
