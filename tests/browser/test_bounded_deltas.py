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


@pytest.mark.stack_env(PLAYGROUND_DELTA_MAX_BYTES="4096", PLAYGROUND_SNAPSHOT_FETCH_ROWS="1")
@pytest.mark.parametrize("operator", [True, False])
def test_a_big_room_is_fetched_by_the_worker_on_connect(
    live_stack, room, browser, operator
) -> None:
    """A room over PLAYGROUND_SNAPSHOT_FETCH_ROWS view rows (1 here) sends a note on connect,
    not its snapshot: the page's worker fetches snapshot.json and the page shows what the
    inline snapshot showed (the server's nodes, the client's role)."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
    workers: list[str] = []
    page.on("worker", lambda w: workers.append(w.url))
    query = f"?token={room.operator_token}" if operator else ""
    page.goto(f"{live_stack}/rooms/{room.slug}/{query}")
    page.wait_for_selector(f"{card('a-1')} .pod", timeout=20_000)
    note = json.loads(next(f for f in frames if '"snapshot"' in f))
    assert note == {
        "type": "snapshot",
        "fetch": True,
        "seq": note["seq"],
        "lesson": None,
        "role": "operator" if operator else "viewer",
    }
    assert [u.rsplit("/", 1)[-1] for u in workers] == ["snapshot-worker.js"]
    server = json.loads(
        urllib.request.urlopen(f"{live_stack}/rooms/{room.slug}/snapshot.json").read()
    )
    got = page.evaluate("[...window.playgroundRoom.state().nodes.keys()].sort()")
    assert got == sorted(n["name"] for n in server["nodes"])
    assert page.evaluate("window.playgroundRoom.state().role") == note["role"]
    assert page.locator("#conn").inner_text() == "live"
    assert errors == []
