"""A lesson run as a class would: one operator, two viewers in their own browsers. The room
pauses at a checkpoint, both viewers answer, the operator sees the counts come in and reveals;
every page then shows the right answer, the class's counts and the why. Then the presenter
view: the step's node highlighted, the rest dimmed, N for the next step, a time question."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from controller.engine.scenario import load_scenario
from controller.models import LessonAnswer, LessonState, Room
from controller.rooms import catalog, create

from .conftest import ARTIFACTS
from .helpers import advance

pytestmark = pytest.mark.browser

LESSON = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()


@pytest.fixture
def room(live_stack):
    room = create.room_create("lesson", LESSON, None, 10.0)
    r = Room.objects.get(pk=room.pk)
    # 20 wall seconds at 10x: the clock stops at the 70 s checkpoint, paused.
    advance(r.pk, r.wall_anchor + timedelta(seconds=20))
    r = Room.objects.get(pk=room.pk)
    assert (r.sim_ms, r.paused) == (70_000, True)
    return r


def open_page(browser, url: str, width: int = 1280, height: int = 800):
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(url)
    page.wait_for_selector("#lesson:not([hidden])", timeout=20_000)
    return page


def phase(page, want: str, timeout: int = 20_000) -> None:
    page.wait_for_selector(f'#lesson[data-phase="{want}"]', timeout=timeout)


def test_two_viewers_answer_the_operator_reveals_and_every_page_shows_the_counts(
    live_stack, room, browser, monkeypatch
) -> None:
    # The test reads the database between Playwright calls (which run an event loop).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    base = f"{live_stack}/rooms/{room.slug}/"
    op = open_page(browser, f"{base}?token={room.operator_token}")
    v1 = open_page(browser, base)
    v2 = open_page(browser, base, 820, 1180)  # a tablet held upright
    for page in (op, v1, v2):
        assert page.locator(".lesson-title").inner_text() == "a-2 goes silent"
        assert "When will a-2 be Ready=Unknown?" in page.locator(".lesson-question").inner_text()
        assert page.locator("#lesson .lesson-head").inner_text().endswith("step 2 of 4")
    phase(op, "asking")
    assert op.locator("button.choice").count() == 0  # the operator asks, viewers answer
    phase(v1, "question")
    assert v1.locator("ul.bars").count() == 0  # no counts before the reveal
    v1.screenshot(path=str(ARTIFACTS / "lesson-1-viewer-question.png"))

    v1.click('button.choice[data-index="2"]')  # 105 s (right)
    v2.fill("input.answer-name", "Bo")
    v2.click('button.choice[data-index="1"]')  # 100 s (wrong)
    phase(v1, "answered")
    assert "Your answer: 105 s" in v1.locator(".answered-note").inner_text()
    # A reload keeps this browser's answer (its client id is in localStorage).
    v1.reload()
    phase(v1, "answered")
    assert "Your answer: 105 s" in v1.locator(".answered-note").inner_text()
    assert v1.locator('button.choice[data-index="2"]').get_attribute("aria-pressed") == "true"
    # The operator sees the answers come in: two, one each on 100 s and 105 s, with the name.
    op.wait_for_function(
        "document.querySelector('.answer-count').textContent.startsWith('2 answers')",
        timeout=20_000,
    )
    assert op.locator('.bar-row[data-key="1"] .bar-count').inner_text() == "1 (50%)"
    assert op.locator('.bar-row[data-key="2"] .bar-count').inner_text() == "1 (50%)"
    assert "Bo (100 s)" in op.locator(".names").inner_text()
    v1.wait_for_function(
        "document.querySelector('.answer-count').textContent.startsWith('2 answers')",
        timeout=20_000,
    )
    assert v1.locator("ul.bars").count() == 0 and v1.locator(".names").count() == 0
    op.screenshot(path=str(ARTIFACTS / "lesson-2-operator-counts.png"))

    op.click("button.lesson-reveal")
    for page, mine in ((op, None), (v1, "You got it right."), (v2, "Not quite")):
        phase(page, "revealed")
        assert "Answer: 105 s" in page.locator(".right-answer").inner_text()
        assert page.locator('.bar-row[data-key="2"]').get_attribute("class") == "bar-row right" + (
            " mine" if page is v1 else ""
        )
        assert page.locator('.bar-row[data-key="2"] .bar-count').inner_text().startswith("1 (50%)")
        assert page.locator('.bar-row[data-key="1"] .bar-count').inner_text().startswith("1 (50%)")
        assert "105 s pass" in page.locator(".why-text").inner_text()
        if mine:
            assert mine in page.locator(".reveal").inner_text()
    v1.screenshot(path=str(ARTIFACTS / "lesson-3-viewer-revealed.png"))
    v2.screenshot(path=str(ARTIFACTS / "lesson-4-tablet-revealed.png"))
    assert sorted(LessonAnswer.objects.values_list("value", "name")) == [(1.0, "Bo"), (2.0, "")]

    # The presenter view: large type, a-2 (the step's focus) highlighted, a-1 dimmed.
    op.click("#presenter")
    assert op.locator('article.node[data-node="a-2"]').get_attribute("class").count("focused")
    assert "unfocused" in op.locator('article.node[data-node="a-1"]').get_attribute("class")
    assert op.locator("body.presenter.lesson-focus").count() == 1
    op.screenshot(path=str(ARTIFACTS / "lesson-5-presenter-revealed.png"))
    # N: the next step, the clock runs again, up to the next checkpoint (the NoExecute
    # taint on a-2 at 110 s): a time question.
    op.keyboard.press("n")
    for page in (op, v1, v2):
        page.wait_for_function(
            "document.querySelector('.lesson-title').textContent === 'Unknown, then tainted'",
            timeout=20_000,
        )
    phase(v1, "question", 30_000)
    assert "When will web-1 be deleted?" in v1.locator(".lesson-question").inner_text()
    assert LessonState.objects.get(room=room).reached == {"silent": 70_000, "taint": 110_000}
    assert v1.locator("#clock").inner_text().startswith("01:50")
    # The focus now is zone a and a-2: every node of zone a is highlighted.
    assert "unfocused" not in op.locator('article.node[data-node="a-1"]').get_attribute("class")
    v1.fill("input.time-guess", "soon")
    v1.click(".time-form button")
    assert "Give a time in seconds" in v1.locator(".lesson-error").inner_text()
    v1.fill("input.time-guess", "6m50s")
    v1.click(".time-form button")
    phase(v1, "answered")
    op.wait_for_function(
        "document.querySelector('.answer-count').textContent.startsWith('1 answer ')",
        timeout=20_000,
    )
    op.screenshot(path=str(ARTIFACTS / "lesson-6-presenter-time-question.png"))
    op.click("button.lesson-reveal")
    phase(v1, "revealed")
    assert "Answer: 410 s (06:50), ± 5 s" in v1.locator(".right-answer").inner_text()
    assert "You got it right." in v1.locator(".reveal").inner_text()
    v1.screenshot(path=str(ARTIFACTS / "lesson-7-viewer-time-revealed.png"))
    # ← goes back a step (showing it, not rewinding; the question stays open), → forward
    # again to the question, → once more closes it and the clock runs on. "The pods go"
    # begins at 400 s: it is shown when the clock gets there, not before.
    op.keyboard.press("ArrowLeft")
    op.wait_for_function(
        "document.querySelector('.lesson-title').textContent === 'a-2 goes silent'",
        timeout=20_000,
    )
    assert "Still open" in op.locator(".lesson-question").inner_text()
    op.keyboard.press("ArrowRight")
    op.wait_for_selector('#lesson[data-flow="revealed"]', timeout=20_000)
    assert Room.objects.get(pk=room.pk).paused is True
    op.keyboard.press("ArrowRight")
    for page in (op, v1):
        page.wait_for_selector('#lesson[data-phase="step"]', timeout=20_000)
        assert page.locator(".lesson-title").inner_text() == "Unknown, then tainted"
    assert Room.objects.get(pk=room.pk).paused is False


def test_the_landing_page_lists_the_lessons_and_starts_one(
    live_stack, browser, monkeypatch
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(live_stack)
    lessons = page.locator("ul.lessons li")
    lessons.first.wait_for()
    ids = [lessons.nth(i).get_attribute("data-lesson") for i in range(lessons.count())]
    builtin = [s["id"] for s in catalog.builtin_lessons()]  # the demo lesson first
    assert ids == builtin and ids, ids
    page.screenshot(path=str(ARTIFACTS / "lesson-0-landing.png"), full_page=True)
    first = next(s for s in catalog.builtin_scenarios() if s["id"] == ids[0])
    lesson = load_scenario(first["yaml"]).lesson
    page.locator("ul.lessons li").first.locator("button.start-lesson").click()
    page.wait_for_selector("#lesson:not([hidden])", timeout=30_000)
    assert page.locator(".lesson-controls button.lesson-next").count() == 1  # the operator
    assert page.locator(".lesson-head").inner_text().startswith(lesson.title)
    # A class starts when the teacher starts it: paused at 0 s with the share link, the
    # projector link and Start (issue #38).
    room = Room.objects.get(slug=page.url.split("/rooms/")[1].split("/")[0])
    assert room.paused and room.sim_ms == 0
    assert page.locator("#start-class").is_visible()
    assert page.locator("#viewer-link").is_visible()
    assert page.locator("#projector-link").get_attribute("href").endswith("?present=1")
    page.wait_for_function("document.getElementById('clock').textContent.startsWith('00:00')")
    page.screenshot(path=str(ARTIFACTS / "class-0-before-start.png"), full_page=True)
    page.wait_for_timeout(1500)  # a while later, it still waits
    room.refresh_from_db()
    assert room.paused and room.sim_ms == 0
    page.click("#start-class")
    page.wait_for_selector("#not-started", state="hidden", timeout=10_000)
    room.refresh_from_db()
    assert not room.paused
    # A viewer joins with the viewer link; the clock runs to the first checkpoint and both
    # pages ask its question. The presenter view shows it beside the cluster.
    viewer = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    viewer.goto(page.url.split("?")[0])
    cp = lesson.checkpoints[0]
    page.keyboard.press("f")  # the presenter view (P is "previous" where a lesson is led)
    for p, want in ((page, "asking"), (viewer, "question")):
        phase(p, want, 60_000)
        assert cp.question in p.locator(".lesson-question").inner_text()
    page.screenshot(path=str(ARTIFACTS / "lesson-8-builtin-presenter.png"))
    viewer.screenshot(path=str(ARTIFACTS / "lesson-9-builtin-viewer.png"), full_page=True)
