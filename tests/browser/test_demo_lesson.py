"""The demo lesson as a newcomer meets it (issue #13 acceptance): ``manage.py load_demo`` makes
the room "demo-lesson" and prints its links; a viewer (never an operator) opens the viewer
link, the operator (another browser) leads every step. At each of the six checkpoints the
viewer answers, the operator reveals, and the viewer's page shows the right answer and the
why: why b-1 goes Unknown after the grace period, why its pods stay 300 s, what a Deployment,
a StatefulSet and a DaemonSet do then, and why a zone outage slows evictions. A screenshot
of the viewer's page at each reveal (test-artifacts/demo-lesson-<n>-<step>.png)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from controller.engine.scenario import load_scenario
from controller.rooms import catalog

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser

TEXT = (catalog.BUILTIN_DIR / f"{catalog.DEMO_LESSON}.yaml").read_text()

# Per checkpoint: the viewer's (right) answer, what the right-answer line says, and words of
# the why that a newcomer must read there (the rule and its parameter).
STEPS = [
    (
        "heartbeats",
        "105",
        "Answer: 105 s (01:45), ± 2 s",
        ["nodeMonitorGracePeriod (50 s)", "nodeMonitorPeriod (5 s)", "50 + 50 = 100 s"],
    ),
    (
        "taint",
        "6m50s",
        "Answer: 410 s (06:50), ± 4 s",
        ["DefaultTolerationSeconds", "for 300 s", "110 + 300 = 410 s"],
    ),
    ("deployment", 1, "it creates a new api pod at once", ["creates a replacement at once"]),
    (
        "statefulset",
        1,
        "the old db-2 must be confirmed gone first",
        ["never runs two pods with the same identity", "DaemonSet pods tolerate these taints"],
    ),
    (
        "partial",
        2,
        "not at all while the zone stays like this",
        [
            "secondaryNodeEvictionRate, 0.01 node/s",
            "largeClusterSizeThreshold (50)",
            "nodeEvictionRate, 0.1 node/s",
        ],
    ),
    (
        "full",
        1,
        "one every 10 s",
        ["nodeEvictionRate (0.1 node/s)", "unhealthyZoneThreshold 0.55", "slows evictions"],
    ),
]


def phase(page, want: str, timeout: int = 90_000) -> None:
    page.wait_for_selector(f'#lesson[data-phase="{want}"]', timeout=timeout)


def title_is(page, title: str, timeout: int = 30_000) -> None:
    page.wait_for_function(
        "t => document.querySelector('.lesson-title')?.textContent === t",
        arg=title,
        timeout=timeout,
    )


def test_a_newcomer_follows_the_demo_lesson_as_a_viewer(live_stack, browser, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    links = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    viewer_url = live_stack + links["demo lesson (viewer link)"]
    operator_url = live_stack + links["demo lesson (operator link)"]
    assert "token=" not in viewer_url and "token=" in operator_url
    lesson = load_scenario(TEXT).lesson
    assert [s.id for s in lesson.steps if s.checkpoint] == [s[0] for s in STEPS]

    # The newcomer comes to the landing page: the demo lesson is the first lesson, with a link
    # to join its room as a viewer.
    viewer = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    viewer.goto(live_stack)
    first = viewer.locator("ul.lessons li").first
    assert first.get_attribute("data-lesson") == catalog.DEMO_LESSON
    assert "Start here" in first.inner_text()
    viewer.screenshot(path=str(ARTIFACTS / "demo-lesson-0-landing.png"))
    first.locator("a.join-demo-lesson").click()
    viewer.wait_for_url(viewer_url)
    viewer.wait_for_selector("#lesson:not([hidden])", timeout=20_000)
    assert viewer.locator("#app").get_attribute("data-operator") == "0"
    assert viewer.locator(".lesson-controls button.lesson-next").count() == 0
    assert viewer.locator("button.lesson-reveal").count() == 0
    op = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    op.goto(operator_url)
    op.wait_for_selector("#lesson:not([hidden])", timeout=20_000)
    assert op.locator("#app").get_attribute("data-operator") == "1"

    steps = {s.id: s for s in lesson.steps}
    for n, (sid, answer, right, words) in enumerate(STEPS, 1):
        step = steps[sid]
        cp = step.checkpoint
        title_is(viewer, step.title, 90_000)
        phase(viewer, "question")
        assert cp.question in viewer.locator(".lesson-question").inner_text()
        if cp.kind == "time":
            viewer.fill("input.time-guess", str(answer))
            viewer.click(".time-form button")
        else:
            viewer.click(f'button.choice[data-index="{answer}"]')
        phase(viewer, "answered")
        op.wait_for_function(
            "document.querySelector('.answer-count')?.textContent.startsWith('1 answer ')",
            timeout=30_000,
        )
        op.click("button.lesson-reveal")
        phase(viewer, "revealed", 30_000)
        assert right in viewer.locator(".right-answer").inner_text()
        assert "You got it right." in viewer.locator(".reveal").inner_text()
        why = viewer.locator(".why-text").inner_text()
        assert " ".join(why.split()) == "Why: " + cp.why, why
        for w in words:
            assert w in why, (sid, w)
        viewer.screenshot(path=str(ARTIFACTS / f"demo-lesson-{n}-{sid}.png"), full_page=True)
        op.click(".lesson-controls button.lesson-next")

    # The last step: no question, the story in a few sentences.
    recap = lesson.steps[-1]
    assert recap.checkpoint is None
    title_is(viewer, recap.title)
    text = viewer.locator("#lesson").inner_text()
    for w in ("nodeMonitorGracePeriod", "300 s", "slows down"):
        assert w in text, w
    viewer.screenshot(path=str(ARTIFACTS / "demo-lesson-7-recap.png"), full_page=True)
