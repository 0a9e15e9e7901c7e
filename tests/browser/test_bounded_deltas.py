"""A tick too large to broadcast (a zone outage) reaches the page as a resync notice; the page
fetches snapshot.json and ends with exactly the server's state. The stack runs with a 4 KiB
delta limit so that a 12-node zone outage is "large"."""

from __future__ import annotations

import json
import urllib.request

import pytest

from controller.rooms import controls, create
from tests.app.test_deltas import SCENARIO

from .conftest import ARTIFACTS
from .helpers import card, open_room

pytestmark = [pytest.mark.browser, pytest.mark.stack_env(PLAYGROUND_DELTA_MAX_BYTES="4096")]


@pytest.fixture
def room(live_stack):
    room = create.room_create("deltas", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_the_page_resyncs_after_a_tick_over_the_limit_and_matches_the_server(
    live_stack, room, browser
) -> None:
    page, _ = open_room(
        browser, live_stack, room, viewport=(1280, 800), wait_for=f"{card('a-1')} .pod"
    )
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "snapshot.json" in r.url else None)
    # The snapshot is fetched and parsed by a worker (static/js/snapshot-worker.js).
    workers: list[str] = []
    page.on("worker", lambda w: workers.append(w.url))
    # One 60 s step: zone-a's nodes go Unknown at 45 s and their pods NotReady, in one tick
    # whose delta is far over 4 KiB.
    for _ in range(6):
        page.click('button[data-ctl="step"]')
    for i in range(1, 7):
        page.wait_for_selector(f'article.node.unknown[data-node="a-{i}"]', timeout=20_000)
    assert fetched, "the page fetched snapshot.json after a resync notice"
    assert [u.rsplit("/", 1)[-1] for u in workers] == ["snapshot-worker.js"]
    # Let the clock settle, then the page's nodes are the server's.
    page.wait_for_timeout(1500)
    server = json.loads(
        urllib.request.urlopen(f"{live_stack}/rooms/{room.slug}/snapshot.json").read()
    )
    want = {n["name"]: n["ready"] for n in server["nodes"]}
    got = page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('article.node')].map(e => "
        "[e.dataset.node, e.classList.contains('unknown') ? 'Unknown' : "
        "(e.classList.contains('notready') ? 'False' : 'True')]))"
    )
    assert got == want
    assert page.locator("#conn").inner_text() == "live"
    page.screenshot(path=ARTIFACTS / "bounded-deltas-resynced.png", full_page=True)
