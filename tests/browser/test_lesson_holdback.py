"""Nothing answers an open question before its reveal: a viewer's page during each checkpoint
of every built-in lesson. The room runs at 100x; at each question the viewer's page (and the
"why, and what happens next" of each node and zone the step points at) is read and compared
with the checkpoint: no time answer in any of its forms (105 s, 01:45, 1m45s), no event its
expect names in the page's timeline (but the one it waited for), no zone rate where the
checkpoint hides it, no prediction in the page's data, not the scenario's notes. The operator
then reveals and goes on. Screenshots: test-artifacts/holdback-<lesson>-<n>-<checkpoint>.png."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest

from controller.engine.holdback import Hold
from controller.engine.scenario import load_scenario
from controller.lessons import classroom
from controller.models import LessonState, Room
from controller.rooms import catalog, create

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser

LESSONS = [s for s in catalog.builtin_scenarios() if s["lesson"]]


def in_thread(fn: Any, *args: Any) -> Any:
    """A room service called from the test (Playwright runs an event loop in this thread,
    and a service's broadcast needs a thread without one)."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn(*args)))
    t.start()
    t.join()
    return out[0] if out else None


def time_forms(seconds: float) -> list[str]:
    """How a page could write a time answer."""
    s = int(round(seconds))
    m, r = divmod(s, 60)
    forms = [rf"\b{s}(?:\.0+)?\s?s\b", rf"(?<![\d:]){m:02d}:{r:02d}(?![\d])", rf"\b{m}m\s?{r}s\b"]
    if m < 10:
        forms.append(rf"(?<![\d:]){m}:{r:02d}(?![\d])")
    return forms


def page_text(page, focus: dict[str, list[str]]) -> tuple[str, str]:
    """The page's text, and the text about the cluster now (the topology, and the "why, and
    what happens next" of each node in focus): the timeline's past rates are history."""
    texts = [page.locator("body").inner_text()]
    now = [page.locator("#zones").inner_text()]
    for node in focus.get("nodes", []):
        el = page.locator(f'#zones [data-node="{node}"]').first
        if el.count():
            el.click()
            page.wait_for_timeout(150)
            texts.append(page.locator("body").inner_text())
            now.append(page.locator("#detail").inner_text())
    return "\n".join(texts), "\n".join(now)


@pytest.mark.parametrize("lesson", LESSONS, ids=[s["id"] for s in LESSONS])
def test_a_viewers_page_during_each_question_does_not_answer_it(
    live_stack, browser, monkeypatch, lesson
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    scenario = load_scenario(lesson["yaml"])
    steps = {s.id: s for s in scenario.lesson.steps}
    room = create.room_create(f"hold-{lesson['id']}", lesson["yaml"], None, 100.0)
    viewer = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    viewer.goto(f"{live_stack}/rooms/{room.slug}/")
    viewer.wait_for_selector("#lesson:not([hidden])", timeout=20_000)
    assert lesson["about"][:60] not in viewer.locator("body").inner_text()  # the notes
    for n, cp in enumerate(scenario.lesson.checkpoints, 1):
        deadline = time.monotonic() + 60
        while LessonState.objects.get(room=room).checkpoint != cp.id:
            assert time.monotonic() < deadline, f"never paused at {cp.id}"
            time.sleep(0.2)
        viewer.wait_for_selector(f'.lesson-question[data-checkpoint="{cp.id}"]', timeout=20_000)
        r = Room.objects.get(pk=room.pk)
        viewer.wait_for_function(f"window.playgroundRoom.state().seq >= {r.seq}", timeout=20_000)
        focus = steps[cp.id].focus
        text, now = page_text(viewer, focus)
        viewer.screenshot(path=str(ARTIFACTS / f"holdback-{lesson['id']}-{n}-{cp.id}.png"))
        (ARTIFACTS / f"holdback-{lesson['id']}-{n}-{cp.id}.txt").write_text(text)
        where = f"{lesson['id']} {cp.id} at {r.sim_ms / 1000:g} s"
        # A time answer, in any form, is nowhere on the page.
        if cp.kind == "time":
            for form in time_forms(cp.answer):
                hit = re.search(form, text)
                assert hit is None, (where, form, text[max(0, hit.start() - 80) : hit.end() + 80])
        # Nor the why, before the reveal.
        assert cp.why[:60] not in text, where
        state = viewer.evaluate(
            "(() => { const s = window.playgroundRoom.state();"
            " return { events: s.events, zones: s.zones,"
            " nodes: [...s.nodes.values()], pods: [...s.pods.values()] }; })()"
        )
        hold = Hold.of(cp, r.sim_ms)
        for e in state["events"]:
            assert hold.keeps(e), (where, e)
        assert all(x.get("unknownAt") is None for x in state["nodes"]), where
        assert all(x.get("taintEvictionAt") is None for x in state["pods"]), where
        if "zoneRate" in cp.hide:
            for z in state["zones"]:
                assert z["qps"] is None and z["tokens"] is None, (where, z)
            hit = re.search(r"\d node/s|evictions stopped|bucket \d", now)
            assert hit is None, (where, now[max(0, hit.start() - 80) : hit.end() + 80])
        in_thread(classroom.reveal, room.pk)
        viewer.wait_for_selector('#lesson[data-phase="revealed"]', timeout=20_000)
        in_thread(classroom.next_step, room.pk, "teacher")
