"""A teacher creates a big room from the form: the page opens at once on the build's
progress, then becomes the live room by itself."""

from __future__ import annotations

import json
import urllib.request

import pytest

from controller.bench.build import big_room_text

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_the_form_opens_the_progress_then_the_live_room(live_stack, browser, tmp_path) -> None:
    scenario = tmp_path / "big.json"
    scenario.write_text(big_room_text(300, 9000))
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(f"{live_stack}/")
    form = page.locator("form:has(select[name=kubernetes_version])")  # "Create a room"
    form.locator("input[name=name]").fill("big class")
    form.locator("input[name=upload]").set_input_files(str(scenario))
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#building", timeout=20_000)
    seen = [page.locator("#build-progress").inner_text()]
    page.screenshot(path=str(ARTIFACTS / "async-create-building.png"))
    # The progress moves on ("creating 300 nodes and 9,000 pods", "storing ...").
    page.wait_for_function(
        "() => { const p = document.getElementById('build-progress');"
        " return !p || /creating|storing/.test(p.textContent); }",
        timeout=60_000,
    )
    if page.locator("#build-progress").count():
        seen.append(page.locator("#build-progress").inner_text())
        page.screenshot(path=str(ARTIFACTS / "async-create-progress.png"))
    # Then the page turns into the live room by itself, with the operator's controls.
    page.wait_for_selector("#app", timeout=120_000)
    page.wait_for_function(
        "() => document.getElementById('conn').textContent === 'live'", timeout=30_000
    )
    assert page.locator("#controls").is_visible()
    slug = page.url.split("/rooms/")[1].split("/")[0]
    status = json.loads(urllib.request.urlopen(f"{live_stack}/rooms/{slug}/build.json").read())
    assert status == {"state": "live", "progress": "", "error": ""}
    assert seen[0] in ("queued", "parsing the scenario") or seen[0].startswith("creating")
    assert any(s.startswith(("creating 300 nodes and 9,000 pods", "storing")) for s in seen), seen
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "async-create-live.png"))
