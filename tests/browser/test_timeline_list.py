"""A big room's timeline list, in a real Chromium: past Config.compactAbove nodes a full render
(the snapshot, a resync, the filter) shows the first 40 entries at once and the rest over the
next frames (timeline.js). Once done the list must read as a rebuilt one would: the newest
(up to 400) events that match the filter, newest first, each with its time, type, subject and why; a
filter typed and cleared ends on the same list, the entries read the same."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .helpers import open_room

pytestmark = pytest.mark.browser

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: timeline-list}
spec:
  nodes:
    - {generate: {count: 160, namePrefix: a-, zone: zone-a}}
    - {generate: {count: 160, namePrefix: b-, zone: zone-b}}
"""

# What a rebuilt list reads, from the page's state, and what the list reads.
EXPECTED = """async (filter) => {
  const { eventMatches } = await import("/static/js/state.js");
  const s = window.playgroundRoom.state(), out = [];
  for (let i = s.events.length - 1; i >= 0 && out.length < 400; i--) {
    const e = s.events[i];
    if (!eventMatches(e, filter, s)) continue;
    out.push([String(e.t), e.type, e.pod || e.node || e.zone || e.object || e.fault || "", e.why]);
  }
  return out;
}"""
SHOWN = """() => [...document.querySelectorAll("#timeline > li")].map((li) =>
  [li.dataset.t, li.querySelector(".ev-type").textContent, li.querySelector(".ev-subj").textContent,
   li.querySelector(".why").textContent])"""
COUNT = "document.querySelectorAll('#timeline > li').length"
# Typed into the filter: the entries shown in the same task.
TYPE = """(text) => {
  const f = document.getElementById("filter");
  f.value = text; f.dispatchEvent(new Event("input"));
  return document.querySelectorAll("#timeline > li").length;
}"""


@pytest.fixture
def room(live_stack):
    room = create.room_create("timeline-list", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_a_big_rooms_list_reads_as_rebuilt(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for="#compact:not([hidden])")
    expected = page.evaluate(EXPECTED, "")
    assert len(expected) > 100, "many more entries than come at once"
    page.wait_for_function(f"{COUNT} === {len(expected)}", timeout=10_000)
    assert page.evaluate(SHOWN) == expected
    # A filter, then none: the same list again (kept entries and made ones alike).
    shown = page.evaluate(TYPE, "b-")
    want = page.evaluate(EXPECTED, "b-")
    assert 40 < len(want) < len(expected)
    assert shown == min(40, len(want)), "in a big room the first 40 at once"
    page.wait_for_function(f"{COUNT} === {len(want)}", timeout=10_000)
    assert page.evaluate(SHOWN) == want
    assert page.evaluate(TYPE, "") == 40
    page.wait_for_function(f"{COUNT} === {len(expected)}", timeout=10_000)
    assert page.evaluate(SHOWN) == expected
    assert not errors
