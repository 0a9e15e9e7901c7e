"""No step's text reaches a page before the lesson reaches that step (issue #38).

A lesson's later steps speak of what is still to come, and a closing recap states the answers
of earlier choice questions. Every built-in lesson is walked question by question, as a class's
viewer and projector and as a learner alone (tests/app/test_answers_on_the_wire.py's walk:
every websocket message from the question's opening on, the snapshot asked for again, the page
opened again, the downloads and the room's Kubernetes API as a viewer's kubectl). While each
question is open, nothing received may carry a later step's text, title, question, choices or
kubectl commands, nor the open question's correct choice where its wording is its own (no
other choice and no step reached so far says it), besides its answers and expectations
(``leaks``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async

from controller.engine.lesson import Checkpoint, Lesson
from controller.engine.scenario import load_scenario
from controller.lessons import classroom
from controller.rooms import catalog, create, runtime

from .test_answers_on_the_wire import LESSONS, _squash, _walk, leaks, walk_lesson
from .test_lessons import LESSON, SPEED, _connect, _until, tick

# A choice's wording shorter than this ("web", "Unknown") is a word any page may say.
DISTINCTIVE = 12


def _said(step: Any) -> list[str]:
    """Everything a step says in words."""
    out = [step.title, step.text, *step.kubectl]
    if step.checkpoint is not None:
        out += [step.checkpoint.question, *(step.checkpoint.choices or [])]
    return [_squash(t) for t in out if t]


def _secrets(lesson: Lesson, cp: Checkpoint) -> tuple[list[str], list[str], str | None]:
    """For the open ``cp``: the texts of the steps after it (chunks: a text is found when its
    beginning or end is), the short words of those steps that no step so far says (found as a
    whole value: a title, a command, a choice), and the right choice's distinctive wording."""
    q = lesson.step_index(cp.id)
    known = " | ".join(t for s in lesson.steps[: q + 1] for t in _said(s))
    chunks: list[str] = []
    words: list[str] = []
    for s in lesson.steps[q + 1 :]:
        for t in _said(s):
            if t in known:
                continue
            if len(t) >= 60:
                chunks += [t[:60], t[-60:]]
            elif " " in t and len(t) >= 8:  # (a lone word is a name any page may show)
                words.append(t)
    right = None
    if cp.kind == "choice":
        label = _squash(cp.choices[int(cp.answer)])
        others = [_squash(c) for i, c in enumerate(cp.choices) if i != int(cp.answer)]
        mine = [_squash(cp.question), *_said(lesson.steps[q])[:2]]
        before = [t for s in lesson.steps[:q] for t in _said(s)]
        if (
            len(label) >= DISTINCTIVE
            and not any(label in o for o in others)
            and not any(label in t for t in mine + before)
        ):
            right = label
    return chunks, words, right


def later_steps(lesson: Lesson) -> Any:
    """A ``walk_lesson`` check: ``leaks``, and any later step's words or the right choice."""

    def check(cp: Checkpoint, pause_s: float, where: str, body: Any, mine: Any) -> list[str]:
        found = leaks(cp, pause_s, where, body, mine)
        chunks, words, right = _secrets(lesson, cp)
        for path, v in _walk(body):
            if not isinstance(v, str):
                continue
            s = _squash(v)
            for chunk in chunks:
                if chunk in s:
                    found.append(f"{where}{path}: a later step's text {chunk[:50]!r}...")
            if s in words:
                found.append(f"{where}{path}: a later step's {s[:50]!r}")
            if right and right in s and not re.search(r"\.choices\[\d+\]$", path):
                found.append(f"{where}{path}: the right choice {right[:50]!r}")
        return found

    return check


@pytest.mark.usefixtures("fresh_channel_layer")
@pytest.mark.parametrize("solo", [False, True], ids=["class", "alone"])
@pytest.mark.parametrize("builtin", LESSONS, ids=[s["id"] for s in LESSONS])
def test_no_page_gets_an_answer_or_a_step_the_lesson_has_not_reached(
    transactional_db: None, builtin: dict[str, Any], solo: bool
) -> None:
    """Both rules on one walk: ``leaks`` (tests/app/test_answers_on_the_wire.py: nothing
    answers the open question) and no later step's words (``later_steps`` checks both)."""
    lesson = load_scenario(builtin["yaml"]).lesson
    assert lesson is not None
    problems = walk_lesson(builtin, solo, later_steps(lesson))
    assert not problems, "\n".join(dict.fromkeys(problems))


@pytest.mark.usefixtures("fresh_channel_layer")
def test_a_page_gets_each_step_when_the_lesson_reaches_it_and_keeps_it(
    transactional_db: None,
) -> None:
    """The fixture lesson (tests/app/test_lessons.py): a viewer connected at 0 s has step 1
    and three steps withheld; the pause at 70 s brings step "silent" (the lesson message
    carries the definition, as the latest step changed); an answer counted does not send it
    again; the reveal and Next bring step "taint"; Previous shows "silent" from what the page
    has; a page connecting then gets the same three steps."""
    room = create.room_create("steps", LESSON, None, SPEED)

    def ids(d: dict[str, Any]) -> list[Any]:
        return [s.get("id") for s in d["steps"]]

    async def scenario() -> None:
        viewer = await _connect(room, "", "v1")
        other = await _connect(room, "", "v2")
        try:
            snap = await _until(viewer, lambda m: m["type"] == "snapshot")
            assert ids(snap["lesson"]["def"]) == ["healthy", None, None, None]
            assert snap["lesson"]["def"]["steps"][1:] == [{"withheld": True}] * 3
            await _until(other, lambda m: m["type"] == "snapshot")
            await database_sync_to_async(tick)(room, 20)  # paused at "silent" (70 s)
            m = await _until(viewer, lambda m: m["type"] == "lesson" and m["checkpoint"])
            assert (m["step"], m["latest"]) == (1, 1)
            assert ids(m["def"]) == ["healthy", "silent", None, None]
            assert m["def"]["steps"][1]["checkpoint"]["question"]
            await other.send_json_to({"type": "lesson.answer", "checkpoint": "silent", "answer": 1})
            m = await _until(viewer, lambda m: m["type"] == "lesson" and m["answered"] == 1)
            assert "def" not in m
            await database_sync_to_async(classroom.reveal)(room.pk)
            m = await _until(viewer, lambda m: m["type"] == "lesson" and m["revealed"])
            assert "def" not in m
            await database_sync_to_async(classroom.next_step)(room.pk, "teacher")
            m = await _until(viewer, lambda m: m["type"] == "lesson" and m["step"] == 2)
            assert ids(m["def"]) == ["healthy", "silent", "taint", None]
            await database_sync_to_async(classroom.prev_step)(room.pk)
            m = await _until(viewer, lambda m: m["type"] == "lesson" and m["step"] == 1)
            assert ("def" not in m, m["latest"]) == (True, 2)
            late = await _connect(room, "", "v3")
            try:
                snap = await _until(late, lambda m: m["type"] == "snapshot")
                assert ids(snap["lesson"]["def"]) == ["healthy", "silent", "taint", None]
            finally:
                await late.disconnect()
        finally:
            await viewer.disconnect()
            await other.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        runtime.forget_cache()


def test_a_learner_alone_runs_no_what_if_before_the_lesson_is_over(
    client: Any, db: None, redis_server: Any
) -> None:
    """A learner alone is their room's operator, and a What-if runs the room's scenario
    ahead headless with its lesson's faults (the tour's b-1 failing at 60 s...): its rows
    would say when the api Deployment is whole again, the answers of the tour's questions.
    Refused until every question is revealed; a class's operator still runs one (queued)."""
    tour = next(s for s in LESSONS if s["id"] == catalog.DEMO_LESSON)
    alone = create.room_create("alone", tour["yaml"], None, SPEED)
    classroom.make_solo(alone)
    taught = create.room_create("class", tour["yaml"], None, SPEED)
    try:
        form = {"nodes": ["c-5"], "at": "0"}
        got = client.post(f"/rooms/{alone.slug}/whatif", {**form, "token": alone.operator_token})
        assert got.status_code == 403
        assert got.json() == {
            "error": "What-if: not in a lesson learned alone until its last answer is revealed"
        }
        ok = client.post(f"/rooms/{taught.slug}/whatif", {**form, "token": taught.operator_token})
        assert ok.status_code == 200 and ok.json()["id"]
    finally:
        runtime.forget_cache()
