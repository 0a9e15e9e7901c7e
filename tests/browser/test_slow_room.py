"""A room too big for its worker's tick budget (the whole stack: Daphne, a Celery worker and
beat, Chromium): its clock runs slower than asked and its page says so beside the speed.
The screenshot of the header goes to test-artifacts/slow-room-note.png."""

from __future__ import annotations

import re

import pytest

from controller.rooms import create

from .conftest import ARTIFACTS
from .test_idle_and_limits import closes_db

pytestmark = pytest.mark.browser

# 600 nodes and 3,000 pods at 100x, a zone dark at 5 s: each beat (0.5 s) asks for 50
# simulated seconds of evictions and rescheduling, far more than a 10 ms budget allows.
SCENARIO = """\
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: too-big}
spec:
  nodes:
    - generate: {count: 300, namePrefix: a-, zone: zone-a}
    - generate: {count: 300, namePrefix: b-, zone: zone-b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 3000
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web}]}
  faults:
    - {at: 5s, type: ZoneOutage, zone: zone-a}
"""


@pytest.fixture
def stack_env(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_TICK_BUDGET_SECONDS", "0.01")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")


@closes_db
def test_a_room_too_big_for_its_budget_says_how_fast_it_really_runs(
    stack_env, live_stack, browser
) -> None:
    room = create.room_create("too big", SCENARIO, None, 100.0)
    page = browser.new_context(viewport={"width": 1300, "height": 700}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_stack}/rooms/{room.slug}/?name=student")
    page.wait_for_selector("#conn >> text=live", timeout=60_000)
    page.wait_for_selector("#speed-note:not([hidden])", timeout=60_000)
    note = page.inner_text("#speed-note")
    assert re.fullmatch(r"running at [0-9.]+× of the 100× asked: too big for this server", note), (
        note
    )
    assert page.inner_text("#speed") == "100×"
    page.locator("section.bar").screenshot(path=str(ARTIFACTS / "slow-room-note.png"))
    assert errors == []
