"""The picture during a lesson's question (tests/fixtures/lesson-heartbeat.yaml: a-2's kubelet
stops at 62 s; the room pauses at 70 s and asks when a-2 will be Ready=Unknown, 105 s): a
viewer's page shows no countdown that would answer it until the reveal, the operator's does;
both time scrubbers mark the open question where the room paused, and nothing past it."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.rooms import create

from .conftest import ARTIFACTS
from .helpers import card, open_room

pytestmark = pytest.mark.browser

LESSON = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()


@pytest.fixture
def room(live_stack):
    return create.room_create("lesson", LESSON, None, 10.0)


def test_no_countdown_answers_an_open_question_for_viewers(live_stack, room, browser) -> None:
    op, op_errors = open_room(browser, live_stack, room, wait_for=card("a-2"))
    viewer, errors = open_room(browser, live_stack, room, operator=False, wait_for=card("a-2"))
    for page in (op, viewer):
        page.wait_for_selector(
            '#lesson[data-phase] .lesson-question[data-checkpoint="silent"]', timeout=30_000
        )
        page.wait_for_selector('.cp-flag.cp-open[data-checkpoint="silent"]', timeout=10_000)
    # The operator sees a-2's grace period run out at the engine's 105 s; the viewer nothing.
    op.wait_for_selector(f"{card('a-2')}.in-grace .grace-text >> text=Unknown in 35 s")
    assert op.get_attribute(card("a-2"), "data-unknown-at") == "105"
    viewer.wait_for_timeout(600)  # four repaints
    assert viewer.locator(f"{card('a-2')} .grace").is_hidden()
    assert viewer.get_attribute(card("a-2"), "data-unknown-at") is None
    assert "Unknown in" not in viewer.inner_text("#zones")
    # The flag stands at the pause (70 s of 70 s: the end of the scrubber), no later marks.
    flag = viewer.locator('.cp-flag[data-checkpoint="silent"]')
    assert flag.evaluate("el => el.style.left") == "100%"
    assert "question 1" in flag.get_attribute("title")
    assert "105" not in viewer.inner_text("#scrubber")
    viewer.screenshot(path=str(ARTIFACTS / "26-lesson-question-viewer.png"), full_page=True)
    op.screenshot(path=str(ARTIFACTS / "26-lesson-question-operator.png"), full_page=True)
    # Revealed: the viewer sees the countdown too.
    op.click("button.lesson-reveal")
    viewer.wait_for_selector(f"{card('a-2')}.in-grace .grace-text >> text=Unknown in 35 s")
    assert viewer.get_attribute(card("a-2"), "data-unknown-at") == "105"
    assert errors == [] and op_errors == []
