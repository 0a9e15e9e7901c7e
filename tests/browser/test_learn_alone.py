"""Learning alone (issue #25): a newcomer with no teacher opens the landing page, presses
"Learn alone" on the demo lesson and finishes it at their own pace: at each question they
answer, press N (the answer and why are revealed), read, press N again (the clock goes on).
Nothing answers a question before its reveal (test_lesson_holdback.py checks the data; here
the learner's own page is checked for the time answers). The ``?solo`` link starts the same.
Screenshots: test-artifacts/solo-<n>-<checkpoint>-{question,revealed}.png."""

from __future__ import annotations

import re
import time

import pytest

from controller.engine.scenario import load_scenario
from controller.models import LessonState, Room
from controller.rooms import catalog

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser

TEXT = (catalog.BUILTIN_DIR / f"{catalog.DEMO_LESSON}.yaml").read_text()
# The learner's answers: right ones, as a newcomer who read the steps would give them.
ANSWERS = {"heartbeats": "1m45s", "taint": "410", "deployment": 1, "statefulset": 1}
ANSWERS |= {"partial": 2, "full": 1}
# What a class page has and a page for one must not (both have "Use kubectl": issue #36).
CLASS_CONTROLS = (
    "#viewer-link",
    "#operator-link",
    "#projector-link",
    "#presence",
    "input.answer-name",
    ".answer-count",
    "ul.bars",
    "#add-node",
    "#params",
    ".zone-actions",
    "details.node-menu",
)


def _until_question(page, cp_id: str, stops: list[str]) -> None:
    """Wait for question ``cp_id``; where the clock stops at a step's text on the way (Next
    says "Go on"), read it (it stays) and go on with N."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if page.locator(f'.lesson-question[data-checkpoint="{cp_id}"]').count():
            return
        if page.locator('#lesson[data-next="go"]').count():
            step = page.locator("#lesson").get_attribute("data-step")
            page.wait_for_timeout(1000)  # it stays while the learner reads
            # A stop is the clock still waiting a second later: right after N closes a
            # revealed question, the page shows the next step's text with the clock paused
            # until the server's resume lands (a moment, longer on a loaded machine).
            if page.locator('#lesson[data-next="go"]').count():
                assert page.locator("#lesson").get_attribute("data-step") == step
                if step not in stops:
                    stops.append(step)
                    page.screenshot(path=str(ARTIFACTS / f"solo-text-{step}.png"))
                page.keyboard.press("n")
                page.wait_for_timeout(500)
        page.wait_for_timeout(200)
    raise AssertionError(f"question {cp_id} never came")


def test_a_learner_alone_finishes_the_demo_lesson(live_stack, browser, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    lesson = load_scenario(TEXT).lesson
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.goto(live_stack)
    first = page.locator("ul.lessons li").first
    assert first.get_attribute("data-lesson") == catalog.DEMO_LESSON
    page.screenshot(path=str(ARTIFACTS / "solo-0-landing.png"))
    first.locator("button.learn-alone").click()
    page.wait_for_selector("#lesson:not([hidden])", timeout=30_000)
    room = Room.objects.get(slug=page.url.split("/rooms/")[1].split("/")[0])
    assert LessonState.objects.get(room=room).solo is True
    assert "token=" in page.url  # the learner leads their own room
    # A page for one (issue #38): it waits at 0 s for the learner's Start, and shows no class
    # control (no share links, no name, no counts, no operator tools beyond the clock's).
    assert room.paused and room.sim_ms == 0
    page.wait_for_selector("#start-class")
    assert page.locator(".lesson-title").inner_text() == lesson.steps[0].title
    for absent in CLASS_CONTROLS:
        assert page.locator(absent).count() == 0, absent
    # kubectl on their own room (issue #36): the learner leads it, so the operator's kubeconfig
    # (test_use_kubectl.py downloads it and runs kubectl).
    assert page.locator("#use-kubectl #kubeconfig-operator").count() == 1
    page.screenshot(path=str(ARTIFACTS / "solo-0-before-start.png"), full_page=True)
    page.click("#start-class")
    page.wait_for_selector("#not-started", state="hidden", timeout=10_000)
    # Not listed for others.
    other = browser.new_context().new_page()
    other.goto(live_stack)
    assert f"/rooms/{room.slug}/" not in other.content()
    steps = {s.id: s for s in lesson.steps}
    stops: list[str] = []
    for n, cp in enumerate(lesson.checkpoints, 1):
        _until_question(page, cp.id, stops)
        page.wait_for_selector('#lesson[data-phase="question"]', timeout=10_000)
        assert page.locator(".lesson-title").inner_text() == steps[cp.id].title
        assert page.locator("ul.bars").count() == 0  # no counts before the reveal
        text = page.locator("body").inner_text()
        if cp.kind == "time":
            m, s = divmod(int(cp.answer), 60)
            assert not re.search(rf"\b{int(cp.answer)}\s?s\b|\b{m:02d}:{s:02d}\b", text), cp.id
        for absent in CLASS_CONTROLS:
            assert page.locator(absent).count() == 0, absent
        page.screenshot(path=str(ARTIFACTS / f"solo-{n}-{cp.id}-question.png"))
        answer = ANSWERS[cp.id]
        if cp.kind == "time":
            page.fill("input.time-guess", str(answer))
            page.click(".time-form button")
        else:
            page.click(f'button.choice[data-index="{answer}"]')
        page.wait_for_selector('#lesson[data-phase="answered"]', timeout=10_000)
        page.keyboard.press("n")  # learning alone, the keys lead (no presenter view needed)
        page.wait_for_selector('#lesson[data-phase="revealed"]', timeout=10_000)
        assert "You got it right." in page.locator(".reveal").inner_text()
        assert " ".join(page.locator(".why-text").inner_text().split()) == "Why: " + cp.why
        page.screenshot(path=str(ARTIFACTS / f"solo-{n}-{cp.id}-revealed.png"), full_page=True)
        page.keyboard.press("n")
    # The clock stopped where each step's text began before its question came (issue #38:
    # the text stays until the learner goes on).
    assert stops == ["partial", "full"], stops
    recap = lesson.steps[-1]
    page.wait_for_function(
        "t => document.querySelector('.lesson-title')?.textContent === t",
        arg=recap.title,
        timeout=90_000,
    )
    assert "slows down" in page.locator("#lesson").inner_text()
    page.screenshot(path=str(ARTIFACTS / "solo-7-recap.png"), full_page=True)


def test_the_solo_link_starts_a_learners_own_room(live_stack, browser, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    page = browser.new_context().new_page()
    page.goto(f"{live_stack}/?solo")
    page.wait_for_selector("#lesson:not([hidden])", timeout=30_000)
    room = Room.objects.get(slug=page.url.split("/rooms/")[1].split("/")[0])
    assert LessonState.objects.get(room=room).solo is True
    assert room.scenario_yaml == TEXT
