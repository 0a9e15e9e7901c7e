"""The time scrubber and the header's clock show the same time (issue #38: the scrubber read
06:44 while the header was paused at 06:50.000): a click on the scrubber's handle that moves
nothing is not a drag, and the scrubber goes on following the clock."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import card, open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: scrubber}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: b-1, zone: zone-b}
"""


def test_the_scrubber_shows_the_headers_time(live_stack, browser, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    room = create.room_create("scrubber", SCENARIO, None, 5.0)
    page, errors = open_room(browser, live_stack, room, wait_for=card("a-1"))
    page.wait_for_function("window.playgroundRoom.state().simT > 3", timeout=20_000)
    # The operator clicks the handle (where the clock is) without moving it, and leaves it
    # there; the clock goes on.
    box = page.locator(".scrub-range").bounding_box()
    page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)
    page.wait_for_timeout(300)
    clicked = page.evaluate("window.playgroundRoom.state().simT")
    page.wait_for_function(f"window.playgroundRoom.state().simT > {clicked + 6}", timeout=20_000)
    controls.room_control(room.pk, "pause", None, "test")
    page.wait_for_selector("#speed:has-text('paused')", timeout=10_000)
    page.wait_for_timeout(600)  # (the scrubber paints four times a second)
    header = page.inner_text("#clock")
    label = page.inner_text(".scrub-label")
    page.locator(".bar").screenshot(path=str(ARTIFACTS / "scrubber-follows-header.png"))
    page.locator("#scrubber").screenshot(path=str(ARTIFACTS / "scrubber-follows.png"))
    assert label == header[:5], (label, header)
    assert "rewind" not in label
    assert room.actions.filter(kind="rewind").count() == 0
    assert errors == []
