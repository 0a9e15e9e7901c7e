"""Idle rooms and limits on the whole stack (Daphne, a Celery worker and beat, Chromium):
beat stops a room nobody watches; a viewer opening the page resumes it where it stopped; an
operator clicking faster than PLAYGROUND_MAX_ACTIONS_PER_SECOND sees the limit's message.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import functools
import time

import pytest
from django.db import connections

from controller.models import Room
from controller.rooms import controls, create

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser

SCENARIO = """\
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: idle-room}
spec:
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: a-2, zone: zone-a}
"""


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def closes_db(test):
    """Close the test body's database connections when it ends: the body runs in
    Playwright's greenlet, whose connection is not the one pytest-django closes, and one left
    open keeps PostgreSQL from dropping the test database at the end of the run."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        finally:
            connections.close_all()

    return run


@pytest.fixture
def stack_env(monkeypatch):
    """Settings of the stack's processes (live_stack copies os.environ when it starts)."""
    monkeypatch.setenv("PLAYGROUND_IDLE_PAUSE_SECONDS", "2")
    monkeypatch.setenv("PLAYGROUND_MAX_ACTIONS_PER_SECOND", "3")
    # The test reads the database while Playwright's loop runs in this thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")


def clock_seconds(page) -> float:
    text = page.inner_text("#clock")  # mm:ss.mmm
    minutes, seconds = text.split(":")
    return int(minutes) * 60 + float(seconds)


@closes_db
def test_an_unwatched_room_stops_and_resumes_when_a_viewer_opens_it(
    stack_env, live_stack, browser
) -> None:
    room = create.room_create("idle", SCENARIO, None, 10.0)
    # Nobody opens it: beat (0.5 s) stops it about 2 s after it first saw it unwatched.
    wait_for(lambda: Room.objects.get(pk=room.pk).idle_since is not None, 30, "the room to go idle")
    stopped = Room.objects.get(pk=room.pk)
    time.sleep(2)
    assert Room.objects.get(pk=room.pk).sim_ms == stopped.sim_ms  # not ticking
    page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_stack}/rooms/{room.slug}/?name=student")
    page.wait_for_selector("#conn >> text=live", timeout=20_000)
    woken = wait_for(
        lambda: (r := Room.objects.get(pk=room.pk)).idle_since is None and r, 20, "the wake"
    )
    assert woken.sim_anchor_ms == stopped.sim_ms  # on from where it stopped, no jump
    # The clock runs again, on the page and in the database.
    wait_for(lambda: clock_seconds(page) > stopped.sim_ms / 1000 + 5, 20, "the page clock")
    wait_for(
        lambda: Room.objects.get(pk=room.pk).sim_ms > stopped.sim_ms, 20, "a tick after waking"
    )
    page.screenshot(path=str(ARTIFACTS / "idle-room-resumed.png"))
    assert errors == []


@closes_db
def test_an_operator_over_the_message_rate_sees_the_limit(stack_env, live_stack, browser) -> None:
    room = create.room_create("rate", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    page.goto(f"{live_stack}/rooms/{room.slug}/?token={room.operator_token}&name=teacher")
    page.wait_for_selector("#conn >> text=live", timeout=20_000)
    # Eight steps within one second from one client (its connections share the count).
    page.evaluate(
        """() => { for (let i = 0; i < 8; i++) document.querySelector('button[data-ctl="step"]').click(); }"""
    )
    page.wait_for_selector("#error:not([hidden])", timeout=10_000)
    message = page.inner_text("#error")
    assert message.startswith("PLAYGROUND_MAX_ACTIONS_PER_SECOND=3: this client sent ")
    assert message.endswith(" messages this second; slow down")
    page.screenshot(path=str(ARTIFACTS / "limit-actions-per-second.png"))
    steps = wait_for(
        lambda: Room.objects.get(pk=room.pk).actions.filter(kind="step").count(), 10, "steps"
    )
    # Counted when each is handled: on a busy machine the eight may span two or three
    # one-second windows, but never all pass.
    assert 1 <= steps < 8
