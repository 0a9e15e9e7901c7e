"""``simulate --check`` flags a lesson text that gives its own question's answer away
(controller/engine/giveaway.py, issue #38): a giveaway phrase, a time question's answer
named in its step (its kubectl commands too) or question, a choice question's right choice
said in the step's words.
In tests.engine.test_lessons' base(): step 0 asks a choice (shown from 0, asks at 30 s); step
1 asks "When does a-2 go Unknown?" (answer 75 ± 5, shown from 30 s, asks at 75 s); step 2
asks "When is web-1 deleted?" (answer 380, shown from 75 s, asks at 80 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.engine.giveaway import giveaways, times_written
from controller.engine.lesson import Checkpoint

from .test_lessons import _check, _set, base

CP0 = "lesson.steps.0.checkpoint"
CP1 = "lesson.steps.1.checkpoint"

GIVEAWAYS = [
    pytest.param(
        {
            "lesson.steps.1.text": "Most nodes failing together; evicting everything would then do harm."
        },
        ['FAIL spec.lesson.steps[1].text: "would then do harm" says the controller holds back'],
        id="the zone step's phrase",
    ),
    pytest.param(
        {"lesson.steps.0.title": "The answer is yes"},
        ['FAIL spec.lesson.steps[0].title: "The answer is" states the answer'],
        id="'the answer is' in a title",
    ),
    pytest.param(
        {"lesson.steps.2.text": "web-1 is gone 380 s in."},
        ["FAIL spec.lesson.steps[2].text: names 380 s, the answer to its question (380 ± 0 s)"],
        id="a time answer in the step, as a duration",
    ),
    pytest.param(
        {"lesson.steps.2.text": "Count on 6m20s."},
        ["FAIL spec.lesson.steps[2].text: names 380 s, the answer to its question"],
        id="a time answer as minutes and seconds",
    ),
    pytest.param(
        {f"{CP1}.question": "When does a-2 go Unknown (about 78 seconds)?"},
        [
            "FAIL spec.lesson.steps[1].checkpoint.question: names 78 s, the answer to its question (75 ± 5 s)"
        ],
        id="a time within the tolerance, in the question",
    ),
    pytest.param(
        {
            f"{CP0}.choices": [
                "yes, its kubelet renews the Lease",
                "no, it has been silent too long",
            ],
            "lesson.steps.0.text": "Every kubelet renews the Lease.",
        },
        ['FAIL spec.lesson.steps[0].text: says "kubelet renews the lease" of the right choice'],
        id="the right choice in the step's words",
    ),
    pytest.param(
        {
            f"{CP0}.choices": [
                "yes, its kubelet renews the Lease",
                "no, its kubelet renews the Lease late",
            ],
            "lesson.steps.0.text": "Every kubelet renews the Lease.",
        },
        [],
        id="words that a wrong choice has too give nothing away",
    ),
    pytest.param(
        {"lesson.steps.1.text": "a-2's Lease lasts 40 s; the controller waits 50 s (70 s on)."},
        ["FAIL spec.lesson.steps[1].text: names 70 s, the answer to its question (75 ± 5 s)"],
        id="any time within the tolerance",
    ),
    pytest.param(
        {"lesson.steps.2.text": "a-2 went Unknown at 75 s."},
        [
            "FAIL spec.lesson.steps[2].text: names 75 s, the answer to "
            "spec.lesson.steps[1].checkpoint.question (75 s): a page has every step's text"
        ],
        id="a later step naming an earlier time answer (the page has it from the start)",
    ),
    pytest.param(
        {"lesson.steps.1.text": "a-2's Lease lasts 40 s; the controller waits 50 s."},
        [],
        id="durations that are not the answer",
    ),
    pytest.param(
        {"lesson.steps.2.kubectl": ["kubectl wait --for=delete pod/web-1 --timeout 380s"]},
        ["FAIL spec.lesson.steps[2].kubectl[0]: names 380 s, the answer to its question"],
        id="a time answer in a kubectl command the step lists",
    ),
    pytest.param(
        {
            "lesson.steps.2.kubectl": [
                "kubectl get events --sort-by=.lastTimestamp",
                "kubectl logs x --since=75s",
            ]
        },
        [
            "FAIL spec.lesson.steps[2].kubectl[1]: names 75 s, the answer to "
            "spec.lesson.steps[1].checkpoint.question (75 s): a page has every step's text"
        ],
        id="a later step's kubectl command naming an earlier time answer",
    ),
    pytest.param(
        {"lesson.steps.1.kubectl": ["kubectl get nodes -w", "kubectl describe node a-2"]},
        [],
        id="kubectl commands that name no answer",
    ),
]


@pytest.mark.parametrize(("changes", "want"), GIVEAWAYS)
def test_check_flags_a_text_that_gives_its_question_away(
    tmp_path: Path, changes: dict[str, object], want: list[str]
) -> None:
    doc = base()
    for path, value in changes.items():
        doc = _set(doc, path, value)
    code, fails = _check(tmp_path, doc)
    assert code == (1 if want else 0), fails
    assert len(fails) == len(want), fails
    for got, prefix in zip(fails, want, strict=True):
        assert got.startswith(prefix), (got, prefix)


def test_the_zone_steps_old_wording_is_flagged() -> None:
    """Lessons 22 and 25 said this before the question "what happens to its nodes?" (the
    built-in lessons pass --check now: tests.engine.test_lessons)."""
    cp = Checkpoint("z", "What happens?", "choice", 2, "", [], ["10 s", "100 s", "no taint"])
    old = "Many nodes failing at once looks more like a network problem than dead machines, and evicting everything would then do harm."
    assert [k for k, _why in giveaways({"text": old}, cp)] == ["text"]


def test_times_written() -> None:
    assert times_written("at 115 s, 1m55s, 01:55, = 115, 115 seconds") == [115.0] * 5
    assert times_written("a-2, 3 of 5, 0.55") == []
