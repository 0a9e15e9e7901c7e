"""The answer box and the projector while a question is open (issue #38), in the demo lesson
(its first two questions are both times: b-1 Unknown at 105 s, its pods deleted at 410 s).

- The time box's hint names no time (it said "e.g. 410 or 6m50s": 410 s is the second
  question's answer) and no lesson's answer is in it or in its error.
- Each question starts with an empty box: at the second question the first one's answer is
  not in it, and pressing Answer on the empty box sends nothing (it was sent again, and
  counted in the class's bars).
- The projector shows how many answered, not how, until the reveal; then the bars.
Screenshots: test-artifacts/answer-box-*.png."""

from __future__ import annotations

import re
import time

import pytest

from controller.engine.scenario import load_scenario
from controller.lessons import classroom
from controller.models import LessonAnswer, LessonState
from controller.rooms import catalog, create

from .conftest import ARTIFACTS
from .test_lesson_holdback import in_thread, time_forms

pytestmark = pytest.mark.browser


def _all_time_answers() -> list[float]:
    out = []
    for s in catalog.builtin_lessons():
        out += [
            float(cp.answer)
            for cp in load_scenario(s["yaml"]).lesson.checkpoints
            if cp.kind == "time"
        ]
    return out


def _wait_for(room, cp_id: str) -> None:
    deadline = time.monotonic() + 60
    while LessonState.objects.get(room=room).checkpoint != cp_id:
        assert time.monotonic() < deadline, f"never paused at {cp_id}"
        time.sleep(0.2)


def test_the_time_box_starts_empty_names_no_answer_and_the_projector_counts_only(
    live_stack, browser, monkeypatch
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    tour = next(s for s in catalog.builtin_lessons() if s["id"] == catalog.DEMO_LESSON)
    cps = load_scenario(tour["yaml"]).lesson.checkpoints
    first, second = cps[0], cps[1]
    assert (first.kind, second.kind) == ("time", "time")
    room = create.room_create("box", tour["yaml"], None, 100.0)
    base = f"{live_stack}/rooms/{room.slug}/"
    viewer = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    viewer.goto(base)
    projector = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    projector.goto(f"{base}?token={room.operator_token}&present=1")
    for page in (viewer, projector):
        page.wait_for_selector("#lesson:not([hidden])", timeout=20_000)

    _wait_for(room, first.id)
    viewer.wait_for_selector(f'.lesson-question[data-checkpoint="{first.id}"] input.time-guess')
    box = viewer.locator("input.time-guess")
    hint = box.get_attribute("placeholder") or ""
    assert hint and not re.search(r"\d", hint), hint
    assert box.input_value() == ""
    # A wrong form: the error says how to write a time, with no time in it either.
    box.fill("soon")
    viewer.locator("form.time-form button").click()
    error = viewer.locator(".lesson-error").inner_text()
    assert "Give a time" in error and not re.search(r"\d", error), error
    for t in _all_time_answers():
        for form in time_forms(t):
            assert not re.search(form, hint + " " + error), (t, hint, error)
    box.fill("100")
    viewer.locator("form.time-form button").click()
    viewer.wait_for_selector('#lesson[data-phase="answered"]', timeout=20_000)
    in_thread(classroom.answer, room.pk, "c2", {"checkpoint": first.id, "answer": 110})
    # The projector: "2 answers so far", no bars, no percentages, before the reveal.
    projector.wait_for_function(
        "document.querySelector('.answer-count')?.textContent.startsWith('2 answers')",
        timeout=20_000,
    )
    panel = projector.locator("#lesson").inner_text()
    assert projector.locator("#lesson .bars").count() == 0, panel
    assert "%" not in panel and "No answers yet" not in panel, panel
    projector.screenshot(path=str(ARTIFACTS / "answer-box-projector-asking.png"))
    in_thread(classroom.reveal, room.pk)
    projector.wait_for_selector('#lesson[data-phase="revealed"] .bars', timeout=20_000)
    assert "(50%)" in projector.locator("#lesson .bars").inner_text()
    projector.screenshot(path=str(ARTIFACTS / "answer-box-projector-revealed.png"))
    in_thread(classroom.next_step, room.pk, "teacher")

    # The next time question: an empty box; Answer on it sends nothing.
    _wait_for(room, second.id)
    viewer.wait_for_selector(f'.lesson-question[data-checkpoint="{second.id}"] input.time-guess')
    assert viewer.locator("input.time-guess").input_value() == ""
    viewer.screenshot(path=str(ARTIFACTS / "answer-box-second-question.png"))
    viewer.locator("form.time-form button").click()
    viewer.wait_for_selector(".lesson-error", timeout=20_000)
    viewer.wait_for_timeout(500)
    assert not LessonAnswer.objects.filter(room=room, checkpoint=second.id).exists()
    assert viewer.locator("#lesson").get_attribute("data-phase") == "question"
