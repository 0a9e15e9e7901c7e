"""A big room's picture, in a real Chromium: past Config.compactAbove (300) nodes the page
draws one square per node on a canvas. A delta repaints only the squares of the nodes it
touched, on the squares' places as laid out (topology.js): the picture after a zone outage
(a small zone: its delta stays under PLAYGROUND_DELTA_MAX_BYTES, so no resync redraws it all)
must be the one a full redraw gives, the zone's header must count its nodes, and a click on
a square opens that node. Screenshot: test-artifacts/compact-zone-outage.png."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: compact}
spec:
  nodes:
    - {generate: {count: 140, namePrefix: a-, zone: zone-a}}
    - {generate: {count: 140, namePrefix: b-, zone: zone-b}}
    - {generate: {count: 30, namePrefix: c-, zone: zone-c}}
"""

# The square's colour at its centre, as the canvas holds it: [r, g, b].
PIXEL = """(name) => {
  const t = window.playgroundRoom.topology(), cell = t.layout.cells.get(name);
  const ctx = document.getElementById("compact").getContext("2d");
  return [...ctx.getImageData(cell.x + 3, cell.y + 3, 1, 1).data.slice(0, 3)];
}"""
GREEN, GREY = [46, 157, 79], [127, 140, 141]  # compactColor: Ready, Unknown


@pytest.fixture
def room(live_stack):
    room = create.room_create("compact", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_a_zone_outage_repaints_its_squares_only(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for="#compact:not([hidden])")
    page.wait_for_function("window.playgroundRoom.topology().layout !== null")
    assert page.locator("article.node").count() == 0, "no tiles past 300 nodes"
    assert page.evaluate(PIXEL, "c-5") == GREEN
    # Once the charts are drawn the page is as tall as it gets (its scrollbar, which narrows
    # the canvas and so lays the squares out again, is there).
    page.wait_for_selector("#charts .chart canvas", timeout=10_000)
    # The node-controller registers 310 nodes through its client's token bucket (burst 30, then
    # 20/s: RegisteredNode events until ~14 s), more than one delta may carry: the page resyncs
    # (a full redraw) once in those seconds. The outage comes after them.
    for _ in range(2):
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(200)
    page.wait_for_function("window.playgroundRoom.state().t >= 20", timeout=20_000)
    page.wait_for_timeout(300)
    page.evaluate("window.__layout = window.playgroundRoom.topology().layout")
    page.click('button.fault[data-fault="ZoneOutage"][data-zone="zone-c"]')
    page.wait_for_function(
        "window.playgroundRoom.state().events.some((e) => e.type === 'Fault')", timeout=10_000
    )
    for _ in range(6):  # 60 s: past nodeMonitorGracePeriod (40 s) and the next monitor pass
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(200)
    page.wait_for_function(
        """(() => { const s = window.playgroundRoom.state();
             return [...s.nodes.values()].filter((n) => n.zone === 'zone-c')
               .every((n) => n.ready === 'Unknown'); })()""",
        timeout=20_000,
    )
    page.wait_for_timeout(300)
    assert page.evaluate("window.playgroundRoom.topology().layout === window.__layout"), (
        "the deltas moved no node: the squares were painted over, not laid out again"
    )
    assert page.evaluate(PIXEL, "c-5") == GREY
    assert page.evaluate(PIXEL, "c-30") == GREY
    assert page.evaluate(PIXEL, "a-5") == GREEN
    assert page.evaluate(PIXEL, "b-140") == GREEN
    head = page.locator('.zone[data-zone="zone-c"] .zone-ready').text_content()
    assert head == "0/30 Ready"
    assert page.locator('.zone[data-zone="zone-c"]').get_attribute("data-state") == (
        "FullDisruption"
    )
    # The painted-over picture is the one a full redraw gives, pixel for pixel.
    same = page.evaluate(
        """(() => {
          const c = document.getElementById("compact"), ctx = c.getContext("2d");
          const before = ctx.getImageData(0, 0, c.width, c.height).data;
          const t = window.playgroundRoom.topology();
          t.layout = null; t.drawCompact();
          const after = ctx.getImageData(0, 0, c.width, c.height).data;
          return before.length === after.length && before.every((v, i) => v === after[i]);
        })()"""
    )
    assert same
    page.screenshot(path=ARTIFACTS / "compact-zone-outage.png", full_page=False)
    # A click on a square opens its node.
    box = page.locator("#compact").bounding_box()
    cell = page.evaluate("window.playgroundRoom.topology().layout.cells.get('c-5')")
    page.mouse.click(box["x"] + cell["x"] + 3, box["y"] + cell["y"] + 3)
    page.wait_for_selector("#detail h3:has-text('node c-5')", timeout=5_000)
    assert errors == []


def test_clicking_a_square_shows_its_details_without_jumping(live_stack, room, browser) -> None:
    """In a big room a click on a square scrolled the page down to Details (issue #38): the
    node's details now open beside the square, the page stays where it is."""
    page, errors = open_room(browser, live_stack, room, wait_for="#compact:not([hidden])")
    page.wait_for_function("window.playgroundRoom.topology().layout !== null")
    page.wait_for_selector("#charts .chart canvas", timeout=10_000)
    page.wait_for_timeout(500)
    assert page.evaluate(
        "document.querySelector('.detail-card').getBoundingClientRect().top > innerHeight"
    ), "Details must be out of sight for the check to mean something"
    before = page.evaluate("scrollY")
    box = page.locator("#compact").bounding_box()
    cell = page.evaluate("window.playgroundRoom.topology().layout.cells.get('b-7')")
    x, y = box["x"] + cell["x"] + 3, box["y"] + cell["y"] + 3
    page.mouse.click(x, y)
    pop = page.locator("#square-detail")
    pop.wait_for(state="visible", timeout=5_000)
    assert "node b-7" in pop.inner_text()
    assert "null" not in pop.inner_text()
    page.wait_for_timeout(500)
    assert page.evaluate("scrollY") == before, "the page jumped"
    near = pop.bounding_box()
    assert near["y"] < 1000 and near["y"] + near["height"] > 0  # in sight
    page.screenshot(path=ARTIFACTS / "compact-square-detail.png")
    # Details below has the node too (history, YAML), for whoever scrolls there.
    assert page.locator("#detail h3").first.inner_text() == "node b-7"
    page.keyboard.press("Escape")
    pop.wait_for(state="hidden", timeout=5_000)
    assert errors == []
