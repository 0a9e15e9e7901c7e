"""A room's lesson: read from its scenario's ``spec.lesson`` (controller/engine/lesson.py parses
it; cached per scenario text), its checkpoints, and the definition the page shows.
"""

from __future__ import annotations

import re
from typing import Any

from ..engine.lesson import Checkpoint, Lesson, LessonRuntime
from ..engine.scenario import Scenario, ScenarioError, load_scenario
from ..models import LessonState, Room

MAX_NAME = 40

# scenario text -> its lesson (None: not a lesson). A few are kept: parsing a scenario is slow.
_LESSONS: dict[str, Lesson | None] = {}
_HAS_LESSON = re.compile(r"^\s+lesson:|[{,]\s*lesson:", re.MULTILINE)


class LessonError(ValueError):
    """A lesson message refused: the message names the field and says why."""


def lesson_of_text(text: str, scenario: Scenario | None = None) -> Lesson | None:
    """The scenario's lesson. A text without a ``lesson:`` key is not parsed at all (a
    1,000-node scenario takes seconds): rooms that are not lessons pay nothing."""
    if scenario is None and not _HAS_LESSON.search(text):
        return None
    if text not in _LESSONS:
        if scenario is None:
            scenario = load_scenario(text)
        while len(_LESSONS) >= 16:
            del _LESSONS[next(iter(_LESSONS))]
        _LESSONS[text] = scenario.lesson
    return _LESSONS[text]


def lesson_of(room: Room) -> Lesson | None:
    return lesson_of_text(room.scenario_yaml)


def is_lesson_text(text: str) -> bool:
    """Whether a scenario is a lesson, without parsing it whole (for the landing page)."""
    try:
        return lesson_of_text(text) is not None
    except ScenarioError:
        return False


# -- time: where steps begin and where the clock stops ---------------------------------------
def _checkpoints(lesson: Lesson) -> list[tuple[int, Checkpoint]]:
    return [(i, s.checkpoint) for i, s in enumerate(lesson.steps) if s.checkpoint is not None]


# -- reading ----------------------------------------------------------------------------------
def public_def(lesson: Lesson, upto: int) -> dict[str, Any]:
    """The lesson as the page gets it: no answers, whys or expectations (those come with the
    reveal), and of the steps after ``upto`` (the latest the lesson has reached) nothing but
    that they are there (``{"withheld": true}``: the page counts them). A later step's text
    speaks of what is still to come, and a closing recap states earlier questions' answers
    while they are still open (issue #38)."""
    steps: list[dict[str, Any]] = []
    for i, s in enumerate(lesson.steps):
        if i > upto:
            steps.append({"withheld": True})
            continue
        cp = s.checkpoint
        focus = s.focus or {}
        steps.append(
            {
                "id": s.id,
                "title": s.title,
                "text": s.text,
                "at": s.at_ms / 1000 if s.at_ms is not None else None,
                "focus": {
                    "nodes": list(focus.get("nodes") or []),
                    "zones": list(focus.get("zones") or []),
                }
                if focus
                else None,
                "kubectl": list(s.kubectl),
                "checkpoint": None
                if cp is None
                else {
                    "id": cp.id,
                    "question": cp.question,
                    "kind": cp.kind,
                    "choices": list(cp.choices or []),
                    "tolerance": cp.tolerance,
                },
            }
        )
    return {"title": lesson.title, "summary": lesson.summary, "steps": steps}


def _checkpoint(lesson: Lesson, cp_id: str) -> Checkpoint | None:
    return next((cp for _i, cp in _checkpoints(lesson) if cp.id == cp_id), None)


def latest_step(lesson: Lesson, ls: LessonState, now_ms: int) -> int:
    """The last step the clock has reached: Next never shows a step after it (a step's text
    speaks of its begin, and a later one's of what has not happened yet). At an open question
    it is the question's step."""
    if ls.checkpoint:
        return lesson.step_index(ls.checkpoint)
    rt = LessonRuntime.from_dict(lesson, {"reached": ls.reached})
    best = 0
    for j in range(1, len(lesson.steps)):
        earlier = [s.checkpoint for s in lesson.steps[:j] if s.checkpoint is not None]
        if any(c.id not in ls.reached for c in earlier):
            break
        begin = rt.step_begin_ms(j)
        if begin is None or begin > now_ms:
            break
        best = j
    return max(best, min(ls.step, len(lesson.steps) - 1))
