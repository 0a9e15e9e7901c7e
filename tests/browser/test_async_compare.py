"""A comparison of a big scenario (issue #14, "Fast big rooms"): its page shows each side's
build progress, then the comparison itself once both rooms are live, on one clock."""

from __future__ import annotations

import json
import urllib.request

import pytest

from controller.bench.build import big_room_text
from controller.locks import redis_client
from controller.rooms import build, compare

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser


@pytest.fixture
def big_comparison(live_stack, monkeypatch):
    """Made before the browser starts (Django's ORM refuses Playwright's event loop). Its two
    builds are marked queued (so the beat does not queue them again) but sent to the worker
    only by the test (``send_builds``), once the page has shown them building: a worker
    quicker than the page would otherwise have made both rooms live before it loaded."""
    held: list[int] = []

    def hold(room_id: int) -> None:
        redis_client().set(f"playground:room:{room_id}:build-queued", "1", ex=build.QUEUED_S)
        held.append(room_id)

    monkeypatch.setattr(build, "queue_build", hold)
    c = compare.comparison_create(
        "",
        big_room_text(150, 4500),
        [
            ("default 300 s", {}),
            ("30 s", {"apiServer": {"defaultUnreachableTolerationSeconds": 30}}),
        ],
        None,
        10.0,
    )
    monkeypatch.undo()
    assert (c.left.build_state, c.right.build_state) == ("building", "building")
    assert sorted(held) == sorted([c.left.pk, c.right.pk])
    c.send_builds = lambda: [build.queue_build(pk) for pk in held]  # type: ignore[attr-defined]
    return c


def test_the_compare_page_shows_both_builds_then_the_comparison(
    live_stack, big_comparison, browser
) -> None:
    c = big_comparison
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{live_stack}/compare/{c.slug}/?token={c.left.operator_token}")
    page.wait_for_selector("#compare-building", timeout=20_000)
    assert page.locator(".compare-build li").count() == 2
    c.send_builds()
    page.wait_for_function(
        "() => !document.getElementById('compare-building') ||"
        " /creating|storing|waiting/.test("
        "document.getElementById('compare-building').textContent)",
        timeout=60_000,
    )
    page.screenshot(path=str(ARTIFACTS / "async-compare-building.png"))
    page.wait_for_selector("#compare", timeout=180_000)
    page.wait_for_function(
        "() => document.getElementById('conn').textContent === 'live'", timeout=30_000
    )
    for room in (c.left, c.right):
        url = f"{live_stack}/rooms/{room.slug}/build.json"
        assert json.loads(urllib.request.urlopen(url).read())["state"] == "live"
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "async-compare-live.png"))
