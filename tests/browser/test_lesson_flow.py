"""The lesson flow's one rule, in the browser, for every key and button at every state: a
question is never left unrevealed. The operator's page in the presenter view (where the keys
lead), the heartbeat fixture paused at its 70 s question ("silent", step 2 of 4). Each case
puts the room in a state (the database, then a reload), presses one key or button, and reads
where the room is then: the step shown, the question open or not, revealed or not, the clock.
static/js/lesson.js's ``press`` is the table; tests/js/lesson.test.mjs walks it without a
browser."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest

from controller.lessons import classroom
from controller.models import LessonState, Room
from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import advance

pytestmark = pytest.mark.browser

LESSON = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()

# state name -> (step shown, open question, revealed, the page's data-flow)
STATES = {
    "asking": (1, "silent", False, "asking"),
    "asking-back": (0, "silent", False, "asking-back"),
    "revealed": (1, "silent", True, "revealed"),
    "revealed-back": (0, "silent", True, "revealed-back"),
    # The question closed (step 3 begins at its pause), the clock held by Pause.
    "reading": (2, "", False, "reading"),
    "back": (1, "", False, "back"),
}
KEYS = {"N": "n", "→": "ArrowRight", "PageDown": "PageDown", "←": "ArrowLeft", "B": "b"}
KEYS["PageUp"] = "PageUp"
BUTTONS = {
    "Next": ".lesson-controls button.lesson-next",
    "Previous": ".lesson-controls button.lesson-prev",
    "Reveal": ".lesson-controls button.lesson-reveal",
    "Play": 'button[data-ctl="resume"]',
    "Step": 'button[data-ctl="step"]',
}
NEXT = ["N", "→", "PageDown", "Next"]
PREV = ["←", "B", "PageUp", "Previous"]

# (state, input, then: (step, question, revealed) or "closed", clock runs on?)
# "closed": the question is closed and the clock runs (to the next question, at 110 s).
CASES = [
    *[("asking", i, (1, "silent", True), False) for i in [*NEXT, "Reveal", "Play", "Step"]],
    *[("asking", i, (0, "silent", False), False) for i in PREV],
    *[("asking-back", i, (1, "silent", False), False) for i in NEXT],
    *[("asking-back", i, (1, "silent", True), False) for i in ["Reveal", "Play", "Step"]],
    *[("asking-back", i, (0, "silent", False), False) for i in PREV],  # the first step: stays
    *[("revealed", i, "closed", True) for i in [*NEXT, "Play"]],
    *[("revealed", i, (0, "silent", True), False) for i in PREV],
    ("revealed", "Step", (1, "silent", True), True),  # after the reveal the clock may step
    *[("revealed-back", i, (1, "silent", True), False) for i in NEXT],
    ("revealed-back", "Play", "closed", True),
    *[("reading", i, (2, "", False), False) for i in NEXT],  # the clock leads: no step ahead
    *[("reading", i, (1, "", False), False) for i in PREV],
    ("reading", "Play", "running", True),
    *[("back", i, (2, "", False), False) for i in NEXT],
]


def _set(room: Room, state: str) -> None:
    """The room at 70 s, paused, the lesson in ``state``."""
    controls.room_control(room.pk, "pause", None, "test")
    r = Room.objects.get(pk=room.pk)
    if (r.sim_ms, r.sim_anchor_ms) != (70_000, 70_000):  # paused at a later anchor: not yet run
        controls.room_rewind(room.pk, 70, "test")  # a paused room stays paused
    assert Room.objects.get(pk=room.pk).sim_ms == 70_000
    step, cp, revealed, _flow = STATES[state]
    LessonState.objects.filter(room=room).update(step=step, checkpoint=cp, revealed=revealed)


def _press(page, name: str) -> None:
    if name in KEYS:
        page.keyboard.press(KEYS[name])
    else:  # a disabled button (Previous on the first step) is clicked too: nothing happens
        page.click(BUTTONS[name], force=True)


def _where(room: Room) -> tuple[int, str, bool, bool, int]:
    ls = LessonState.objects.get(room=room)
    r = Room.objects.get(pk=room.pk)
    return ls.step, ls.checkpoint, ls.revealed, r.paused, r.sim_ms


def _to_the_first_question(room: Room) -> None:
    """The room run to its first question (70 s at 10x: 20 s of wall clock from its anchor),
    under the room's Redis lock as a worker's tick is (tasks._tick_locked): the live stack's
    own worker ticks the new room too, and a tick of ours that one of its ticks overtook is
    dropped (tick.Superseded, "a control came during the tick"). On a loaded machine five
    tries without the lock all lost (CI)."""
    deadline = time.monotonic() + 60
    while _where(room)[1] != "silent":
        assert time.monotonic() < deadline, ("never at the first question", _where(room))
        r = Room.objects.get(pk=room.pk)
        advance(r.pk, r.wall_anchor + timedelta(seconds=20))


def test_every_key_and_button_at_every_state(live_stack, browser, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    room = create.room_create("flow", LESSON, None, 10.0)
    _to_the_first_question(room)
    assert (Room.objects.get(pk=room.pk).sim_ms, _where(room)[1]) == (70_000, "silent")
    page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    url = f"{live_stack}/rooms/{room.slug}/?token={room.operator_token}&present=1"
    covered: set[tuple[str, str]] = set()
    shots: set[str] = set()
    for state, name, then, runs in CASES:
        _set(room, state)
        page.goto(url)
        page.wait_for_selector(f'#lesson[data-flow="{STATES[state][3]}"]', timeout=20_000)
        if state not in shots:
            shots.add(state)
            page.screenshot(path=str(ARTIFACTS / f"lesson-flow-{state}.png"))
        _press(page, name)
        deadline = time.monotonic() + 15
        while True:
            step, cp, revealed, paused, sim_ms = _where(room)
            if then == "closed":
                ok = cp == "" and not paused
            elif then == "running":
                ok = not paused
            else:
                ok = (step, cp, revealed) == then and (paused is not runs or sim_ms > 70_000)
            if ok or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert ok, (state, name, then, (step, cp, revealed, paused, sim_ms))
        if not runs:  # nothing moved the clock past the question, even a moment later
            time.sleep(0.6)
            log = list(room.actions.order_by("id").values_list("kind", "actor", "at_ms"))[-6:]
            assert _where(room)[3:] == (True, 70_000), (state, name, log)
            assert _where(room)[:3] == then, (state, name)
        covered.add((state, name))
    # Every key and button at every state with a question open.
    for state in ("asking", "asking-back", "revealed"):
        missing = {*KEYS, "Next", "Previous", "Play"} - {n for s, n in covered if s == state}
        assert not missing, (state, missing)


def test_looking_back_at_an_open_question_names_its_step(live_stack, browser, monkeypatch) -> None:
    """Step 6/5 of issue #25: Previous on an open question showed the earlier step's title
    over the open question with nothing to tell them apart; Next then skipped it."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    room = create.room_create("flow-back", LESSON, None, 10.0)
    _to_the_first_question(room)
    classroom.prev_step(room.pk)
    pages = []
    for url, w in ((f"?token={room.operator_token}&present=1", 1920), ("", 1280)):
        page = browser.new_context(viewport={"width": w, "height": 1080}).new_page()
        page.goto(f"{live_stack}/rooms/{room.slug}/{url}")
        page.wait_for_selector('#lesson[data-flow="asking-back"]', timeout=20_000)
        assert page.locator(".lesson-title").inner_text() == "A healthy cluster"
        note = page.locator(".lesson-question .question-of").inner_text()
        assert 'Still open: the question of step 2, "a-2 goes silent"' in note
        pages.append(page)
    op, viewer = pages
    assert op.locator(".lesson-next").inner_text().startswith("Back to the question")
    op.screenshot(path=str(ARTIFACTS / "lesson-flow-looking-back-presenter.png"))
    viewer.screenshot(path=str(ARTIFACTS / "lesson-flow-looking-back-viewer.png"))
    op.keyboard.press("n")
    op.wait_for_selector('#lesson[data-flow="asking"]', timeout=10_000)
    assert _where(room)[:3] == (1, "silent", False)
