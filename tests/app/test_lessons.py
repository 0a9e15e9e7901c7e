"""Lesson rooms (LESSON-CONTRACT.md, room side): the clock pauses at each checkpoint (and stays
paused across a worker restart), viewers answer, the operator reveals and goes on; the room's
timeline is still exactly ``simulate`` of its export.

The fixture lesson (tests/fixtures/lesson-heartbeat.yaml, Kubernetes 1.18): a-2's kubelet
stops at 62 s (step "silent"); its checkpoint pauses at 70 s ("When will a-2 be Unknown?",
answer 105 s). Step "taint" begins there; its checkpoint waits for the unreachable:NoExecute
taint on a-2 (110 s; "When will web-1 be deleted?", time 410 ± 5). Step "gone" begins at 400 s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils.html import escape

from controller import timeline_store
from controller.lessons import classroom, definition, holding, messages
from controller.lessons.definition import LessonError
from controller.models import LessonAnswer, LessonState, Room
from controller.rooms import catalog, compare, controls, create, reading, runtime
from controller.rooms import tick as rooms_tick
from tests.app.test_rooms import headless_events, room_events

LESSON = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()
SPEED = 10.0


@pytest.fixture
def room(db: None) -> Iterator[Room]:
    room = create.room_create("lesson", LESSON, None, SPEED)
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def tick(room: Room, wall_s: float) -> Room:
    """A tick at ``wall_s`` wall seconds after the room's clock was last anchored."""
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


def lesson_state(room: Room) -> tuple[int, str, bool, dict[str, int]]:
    ls = LessonState.objects.get(room=room)
    return ls.step, ls.checkpoint, ls.revealed, ls.reached


def events(room: Room) -> list[tuple[int, str, dict[str, Any]]]:
    return [(t, typ, data) for _idx, t, typ, data in timeline_store.after(room)]


def test_a_lesson_room_gets_its_state_and_a_plain_room_none(room: Room) -> None:
    assert lesson_state(room) == (0, "", False, {})
    plain = create.room_create("plain", LESSON.split("  lesson:")[0], None, SPEED)
    assert not LessonState.objects.filter(room=plain).exists()
    assert reading.room_snapshot(plain)["lesson"] is None
    snap = reading.room_snapshot(room)["lesson"]
    assert snap["def"]["title"] == "Heartbeats and the grace period"
    # A step's text (title, question...) only once the lesson reaches it; the later ones are
    # counted (issue #38: a closing recap states earlier answers).
    assert snap["def"]["steps"][0]["id"] == "healthy"
    assert snap["def"]["steps"][1:] == [{"withheld": True}] * 3
    assert snap["state"]["checkpoint"] is None and snap["state"]["step"] == 0
    r = tick(room, 20)  # paused at the 70 s checkpoint of step "silent"
    snap = reading.room_snapshot(r)["lesson"]
    assert [s.get("id") for s in snap["def"]["steps"]] == ["healthy", "silent", None, None]
    assert snap["def"]["steps"][2:] == [{"withheld": True}] * 2
    # The page gets the questions, never the answers, whys, expectations or pause times.
    cp = snap["def"]["steps"][1]["checkpoint"]
    assert cp == {
        "id": "silent",
        "question": "When will a-2 be Ready=Unknown?",
        "kind": "choice",
        "choices": ["62 s", "100 s", "105 s", "never"],
        "tolerance": 0.0,
    }
    assert snap["def"]["steps"][1]["focus"] == {"nodes": ["a-2"], "zones": []}
    assert snap["state"]["checkpoint"] == "silent" and snap["state"]["step"] == 1


def test_the_clock_pauses_at_each_checkpoint_and_next_resumes_it(room: Room, tmp_path) -> None:
    # 20 wall s at 10x would be 200 s: the clock stops at the 70 s checkpoint instead.
    r = tick(room, 20)
    assert (r.sim_ms, r.paused) == (70_000, True)
    assert lesson_state(r) == (1, "silent", False, {"silent": 70_000})
    assert (62_000, "Fault", "StopKubelet") in [(t, ty, d.get("fault")) for t, ty, d in events(r)]
    # Paused: later ticks do not move it.
    r = tick(r, 60)
    assert (r.sim_ms, r.paused) == (70_000, True)
    # Next on a question not yet revealed reveals it (the clock stays); a second Next closes
    # it, shows the next step and runs the clock again.
    assert classroom.next_step(r.pk, "teacher") == {"lesson": "reveal", "step": 1, "resumed": False}
    assert lesson_state(r) == (1, "silent", True, {"silent": 70_000})
    assert Room.objects.get(pk=r.pk).paused is True
    assert classroom.next_step(r.pk, "teacher") == {"lesson": "next", "step": 2, "resumed": True}
    r = Room.objects.get(pk=r.pk)
    assert r.paused is False
    assert lesson_state(r) == (2, "", False, {"silent": 70_000})
    # The event checkpoint: the first unreachable:NoExecute taint on a-2 (at 110 s); the clock
    # stops at the end of that instant.
    r = tick(r, 30)
    assert (r.sim_ms, r.paused) == (110_000, True)
    assert lesson_state(r) == (2, "taint", False, {"silent": 70_000, "taint": 110_000})
    taints = [
        t
        for t, ty, d in events(r)
        if ty == "TaintAdded" and d["node"] == "a-2" and d["effect"] == "NoExecute"
    ]
    assert taints == [110_000]
    assert max(t for t, _ty, _d in events(r)) == 110_000
    classroom.reveal(r.pk)
    classroom.next_step(r.pk, "teacher")
    # Step "gone" begins at 400 s: until the clock gets there the step of the closed
    # question stays shown (its text would speak of what has not happened yet).
    assert lesson_state(r)[:2] == (2, "")
    with pytest.raises(LessonError, match="lesson.next: the clock has not reached the next step"):
        classroom.next_step(r.pk, "teacher")
    # Step "gone" is the last: the clock runs to the end; the step shown follows it.
    r = tick(Room.objects.get(pk=r.pk), 50)
    assert (r.sim_ms, r.paused) == (610_000, False)
    assert lesson_state(r)[:2] == (3, "")
    deleted = [(t, d["pod"]) for t, ty, d in events(r) if ty == "PodDeleted"]
    assert deleted == [(410_000, "default/web-1")]
    # Pausing never changed the simulation: the timeline is simulate of the export.
    assert room_events(r) == headless_events(r, tmp_path)


def test_the_step_shown_follows_the_clock_past_a_steps_begin(db: None) -> None:
    # Without the checkpoints' pauses in between: step "silent" shows once 62 s has passed.
    room = create.room_create("lesson", LESSON, None, SPEED)
    try:
        r = tick(room, 5)
        assert (r.sim_ms, lesson_state(r)[:2]) == (50_000, (0, ""))
        r = tick(r, 6.5)
        assert (r.sim_ms, lesson_state(r)[:2]) == (65_000, (1, ""))
        # The operator looks back at step 0: the next tick does not take it away again.
        classroom.prev_step(r.pk)
        r = tick(r, 6.8)
        assert (r.sim_ms, lesson_state(r)[:2]) == (68_000, (0, ""))
    finally:
        runtime.forget_cache()


def test_a_paused_checkpoint_survives_a_worker_restart(room: Room) -> None:
    r = tick(room, 20)
    assert r.sim_ms == 70_000
    runtime.forget_cache()  # the worker restarts: its engine and everything in memory go
    r = tick(r, 100)
    assert (r.sim_ms, r.paused) == (70_000, True)
    classroom.reveal(r.pk)  # a question is never left unrevealed
    classroom.next_step(r.pk, "t")
    runtime.forget_cache()
    # The restored engine still stops at the event checkpoint, at its instant.
    r = tick(Room.objects.get(pk=r.pk), 100)
    assert (r.sim_ms, lesson_state(r)[1]) == (110_000, "taint")


@pytest.fixture
def asking(room: Room) -> Room:
    return tick(room, 20)  # paused at "silent"


def test_answers_one_per_client_the_last_counts_and_the_reveal(asking: Room) -> None:
    pk = asking.pk
    assert classroom.answer(pk, "c1", {"checkpoint": "silent", "answer": 1}) == {
        "lesson": "answer",
        "checkpoint": "silent",
        "answer": 1,
    }
    classroom.answer(pk, "c1", {"checkpoint": "silent", "answer": 2, "name": " Ada "})  # last wins
    classroom.answer(pk, "c2", {"checkpoint": "silent", "answer": 2})
    classroom.answer(pk, "c3", {"checkpoint": "silent", "answer": 0.0})
    msg = messages.message(
        asking, definition.lesson_of(asking), LessonState.objects.get(room=asking)
    )
    # The lesson up to its latest step (the consumer sends it to a page that lacks it).
    lesson_def = msg.pop("def")
    assert [s.get("id") for s in lesson_def["steps"]] == ["healthy", "silent", None, None]
    assert msg == {
        "type": "lesson",
        "step": 1,
        "checkpoint": "silent",
        "paused": True,
        "counts": {"0": 1, "1": 0, "2": 2, "3": 0},
        "answered": 3,
        "revealed": False,
        "names": [{"name": "Ada", "answer": 2}],
        "latest": 1,
        "solo": False,
        # For the consumers only: what a page that answers must not get (engine/holdback.py).
        "hold": {
            "checkpoint": "silent",
            "hide": ["predictions"],
            "expect": [{"type": "NodeReady", "node": "a-2", "status": "Unknown", "at": 105}],
            "when": None,
            "at": 70.0,
        },
    }
    viewer = messages.for_role(msg, operator=False)
    assert viewer["counts"] == {} and "names" not in viewer and viewer["answered"] == 3
    assert "hold" not in viewer and "hold" not in messages.for_role(msg, operator=True)
    assert messages.holds(msg, operator=False) is not None
    assert messages.holds(msg, operator=True) is None
    assert messages.holds({**msg, "solo": True}, operator=True) is not None
    assert classroom.reveal(pk) == {"lesson": "reveal", "checkpoint": "silent"}
    ls = LessonState.objects.get(room=asking)
    msg = messages.message(asking, definition.lesson_of(asking), ls)
    assert (msg["revealed"], msg["answer"], msg["right"]) == (True, 2, 2)
    assert "strictly past" in msg["why"]
    viewer = messages.for_role(msg, operator=False)
    assert viewer["counts"] == {"0": 1, "1": 0, "2": 2, "3": 0} and "names" not in viewer
    # Each client gets its own answer back on reconnect.
    assert reading.room_snapshot(asking, client="c1")["lesson"]["state"]["mine"] == 2
    assert reading.room_snapshot(asking, client="nobody")["lesson"]["state"]["mine"] is None


def test_time_answers_count_per_whole_second_and_right_within_the_tolerance(room: Room) -> None:
    r = tick(room, 20)
    classroom.reveal(r.pk)  # a question is never left unrevealed
    classroom.next_step(r.pk, "t")
    r = tick(Room.objects.get(pk=r.pk), 30)
    assert lesson_state(r)[1] == "taint"
    for client, value in (("a", 410), ("b", 414.6), ("c", 140), ("d", 416)):
        classroom.answer(r.pk, client, {"checkpoint": "taint", "answer": value})
    classroom.reveal(r.pk)
    msg = messages.message(r, definition.lesson_of(r), LessonState.objects.get(room=r))
    assert msg["counts"] == {"410": 1, "415": 1, "140": 1, "416": 1}
    assert (msg["answer"], msg["right"]) == (410, 2)


@pytest.mark.parametrize(
    "content, words",
    [
        ({"answer": 2}, "lesson.answer.checkpoint: give the id"),
        ({"checkpoint": "nope", "answer": 2}, 'no question "nope"'),
        ({"checkpoint": "taint", "answer": 410}, 'question "taint" is not open'),
        ({"checkpoint": "silent", "answer": 4}, "index into choices (0..3), got 4"),
        ({"checkpoint": "silent", "answer": -1}, "index into choices (0..3)"),
        ({"checkpoint": "silent", "answer": 1.5}, "index into choices (0..3), got 1.5"),
        ({"checkpoint": "silent", "answer": True}, "lesson.answer.answer: must be an index"),
        ({"checkpoint": "silent", "answer": "2"}, "lesson.answer.answer: must be an index"),
        ({"checkpoint": "silent"}, "lesson.answer.answer: must be an index"),
        ({"checkpoint": "silent", "answer": 2, "name": 7}, "lesson.answer.name: must be text"),
        ({"checkpoint": "silent", "answer": 2, "name": "x" * 41}, "lesson.answer.name: at most"),
    ],
)
def test_a_bad_answer_names_the_field_and_stores_nothing(
    asking: Room, content: dict[str, Any], words: str
) -> None:
    classroom.answer(asking.pk, "kept", {"checkpoint": "silent", "answer": 1})
    with pytest.raises(LessonError, match=words.replace("(", r"\(").replace(")", r"\)")):
        classroom.answer(asking.pk, "kept", content)
    assert list(LessonAnswer.objects.values_list("client", "value")) == [("kept", 1.0)]


def test_no_answers_after_the_reveal_or_without_a_client(asking: Room) -> None:
    with pytest.raises(LessonError, match="no client id"):
        classroom.answer(asking.pk, "", {"checkpoint": "silent", "answer": 1})
    classroom.reveal(asking.pk)
    with pytest.raises(LessonError, match='lesson.answer: the answer to "silent" is already'):
        classroom.answer(asking.pk, "c", {"checkpoint": "silent", "answer": 1})
    assert not LessonAnswer.objects.exists()


def test_time_answers_refused_when_not_a_time(room: Room) -> None:
    r = tick(room, 20)
    classroom.reveal(r.pk)  # a question is never left unrevealed
    classroom.next_step(r.pk, "t")
    r = tick(Room.objects.get(pk=r.pk), 30)
    for bad, words in ((-1, "0 or more, got -1"), (float("inf"), "0 or more"), ("410", "seconds")):
        with pytest.raises(LessonError, match=f"lesson.answer.answer: must be .*{words}"):
            classroom.answer(r.pk, "c", {"checkpoint": "taint", "answer": bad})
    assert not LessonAnswer.objects.exists()


def test_reveal_prev_next_refused_where_they_make_no_sense(room: Room) -> None:
    with pytest.raises(LessonError, match="lesson.reveal: no question is open"):
        classroom.reveal(room.pk)
    with pytest.raises(LessonError, match="lesson.prev: this is the first step"):
        classroom.prev_step(room.pk)
    # Not at a checkpoint, at 0 s: the next step begins at 62 s, Next cannot show it.
    with pytest.raises(LessonError, match="lesson.next: the clock has not reached the next step"):
        classroom.next_step(room.pk, "t")
    assert Room.objects.get(pk=room.pk).sim_ms == 0
    assert lesson_state(room) == (0, "", False, {})


# The flow's one rule on the server (the page's lesson.js press is the same table): from the
# question of step 2 ("taint", paused at 110 s), every Next, Previous, Reveal, Play and Step.
FLOW = [
    pytest.param(["next"], (2, "taint", True), True, id="next on the open question reveals it"),
    pytest.param(
        ["next", "next"], (2, "taint", False), False, id="a second next closes it and resumes"
    ),
    pytest.param(["resume"], (2, "taint", True), True, id="play reveals it, the clock stays"),
    pytest.param(
        ["resume", "resume"], (2, "taint", False), False, id="a second play closes it and resumes"
    ),
    pytest.param(["step"], (2, "taint", True), True, id="step reveals it, the clock stays"),
    pytest.param(
        ["prev"], (1, "taint", False), True, id="prev shows step 1, the question stays open"
    ),
    pytest.param(
        ["prev", "prev", "next"],
        (1, "taint", False),
        True,
        id="next from step 0 goes to step 1, not past the question",
    ),
    pytest.param(
        ["prev", "next", "next"],
        (2, "taint", True),
        True,
        id="back at the question, next reveals it",
    ),
    pytest.param(
        ["prev", "resume"],
        (2, "taint", True),
        True,
        id="play while looking back reveals, showing the question's step",
    ),
    pytest.param(
        ["prev", "reveal", "prev", "next", "next"],
        (2, "taint", False),
        False,
        id="revealed: next from step 1 forward, then closes",
    ),
]


@pytest.mark.parametrize(("presses", "want", "paused"), FLOW)
def test_a_question_is_never_left_unrevealed(
    room: Room, presses: list[str], want: tuple[int, str, bool], paused: bool
) -> None:
    r = tick(room, 20)
    classroom.reveal(r.pk)
    classroom.next_step(r.pk, "t")
    r = tick(Room.objects.get(pk=r.pk), 30)
    assert (r.sim_ms, lesson_state(r)[:3]) == (110_000, (2, "taint", False))
    for press in presses:
        if press in ("resume", "step"):
            controls.room_control(r.pk, press, 10 if press == "step" else None, "t")
        else:
            {
                "next": lambda: classroom.next_step(r.pk, "t"),
                "prev": lambda: classroom.prev_step(r.pk),
                "reveal": lambda: classroom.reveal(r.pk),
            }[press]()
    step, cp, revealed, _reached = lesson_state(r)
    if want[1] and not paused:  # closed: no question open any more
        assert (step, cp) == (2, ""), "closed, and step 3 begins only at 400 s"
    else:
        assert (step, cp, revealed) == want
    r = tick(Room.objects.get(pk=r.pk), 1)
    assert r.paused is paused
    if paused:
        assert r.sim_ms == 110_000, "the clock never moves past an open question"


def test_a_rewind_before_a_checkpoint_forgets_it_and_its_answers(room: Room) -> None:
    r = tick(room, 20)
    classroom.answer(r.pk, "c1", {"checkpoint": "silent", "answer": 2})
    controls.room_rewind(r.pk, 30, "t")
    assert lesson_state(r) == (0, "", False, {})
    assert not LessonAnswer.objects.exists()
    controls.room_control(r.pk, "resume", None, "t")
    r = tick(Room.objects.get(pk=r.pk), 10)
    assert (r.sim_ms, lesson_state(r)[1]) == (70_000, "silent")


# -- the websocket: roles, and what each page gets ------------------------------------------
async def _connect(room: Room, token: str, client: str) -> WebsocketCommunicator:
    from playground.asgi import application

    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={token}&name={client}&client={client}",
        headers=[(b"origin", b"http://localhost")],
    )
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _until(comm: WebsocketCommunicator, want) -> dict[str, Any]:
    for _ in range(50):
        msg = await comm.receive_json_from(timeout=10)
        if want(msg):
            return msg
    raise AssertionError("no matching message")


@pytest.mark.usefixtures("fresh_channel_layer")
def test_websocket_viewers_answer_only_the_operator_reveals_and_goes_on(
    transactional_db: None,
) -> None:
    room = create.room_create("lesson-ws", LESSON, None, SPEED)
    tick(room, 20)  # paused at "silent"

    async def scenario() -> None:
        op = await _connect(room, room.operator_token, "teacher")
        v1 = await _connect(room, "", "v1")
        v2 = await _connect(room, "", "v2")
        try:
            for comm, role in ((op, "operator"), (v1, "viewer"), (v2, "viewer")):
                snap = await _until(comm, lambda m: m["type"] == "snapshot")
                assert snap["role"] == role
                assert snap["lesson"]["state"]["checkpoint"] == "silent"
                assert "answer" not in snap["lesson"]["def"]["steps"][1]["checkpoint"]
            # A viewer may not lead the lesson.
            for kind in ("lesson.reveal", "lesson.next", "lesson.prev"):
                await v1.send_json_to({"type": kind})
                err = await _until(v1, lambda m: m["type"] == "error")
                assert err["message"] == f"{kind}: only the operator leads the lesson."
            await v1.send_json_to({"type": "lesson.answer", "checkpoint": "silent", "answer": 2})
            ack = await _until(v1, lambda m: m["type"] == "ack")
            assert ack == {"type": "ack", "lesson": "answer", "checkpoint": "silent", "answer": 2}
            await v2.send_json_to(
                {"type": "lesson.answer", "checkpoint": "silent", "answer": 9, "name": "Bo"}
            )
            err = await _until(v2, lambda m: m["type"] == "error")
            assert "lesson.answer.answer: must be an index into choices (0..3)" in err["message"]
            await v2.send_json_to(
                {"type": "lesson.answer", "checkpoint": "silent", "answer": 0, "name": "Bo"}
            )
            # The operator sees the counts come in, with the name given; viewers only how many.
            seen = await _until(op, lambda m: m["type"] == "lesson" and m["answered"] == 2)
            assert seen["counts"] == {"0": 1, "1": 0, "2": 1, "3": 0}
            assert seen["names"] == [{"name": "Bo", "answer": 0}]
            seen = await _until(v1, lambda m: m["type"] == "lesson" and m["answered"] == 2)
            assert seen["counts"] == {} and "names" not in seen and "answer" not in seen
            await op.send_json_to({"type": "lesson.reveal"})
            for comm in (op, v1, v2):
                shown = await _until(comm, lambda m: m["type"] == "lesson" and m["revealed"])
                assert (shown["answer"], shown["right"]) == (2, 1)
                assert shown["counts"] == {"0": 1, "1": 0, "2": 1, "3": 0}
                assert "105 s pass" in shown["why"]
            await op.send_json_to({"type": "lesson.next"})
            for comm in (op, v1, v2):
                nxt = await _until(comm, lambda m: m["type"] == "lesson" and m["step"] == 2)
                assert (nxt["checkpoint"], nxt["paused"], nxt["counts"]) == (None, False, {})
        finally:
            for comm in (op, v1, v2):
                await comm.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        runtime.forget_cache()
    assert Room.objects.get(pk=room.pk).paused is False
    assert sorted(LessonAnswer.objects.values_list("client", "value", "name")) == [
        ("v1", 2.0, ""),
        ("v2", 0.0, "Bo"),
    ]
    # The clock control of "next" is logged like any other.
    assert room.actions.filter(kind="resume", actor="teacher (operator)").exists()


@pytest.mark.usefixtures("fresh_channel_layer")
def test_websocket_a_viewer_gets_the_pausing_delta_held_and_the_whole_state_at_the_reveal(
    transactional_db: None,
) -> None:
    """Both pages are connected when the tick reaches the 70 s question: the delta that
    carries a-2's row (its kubelet stopped at 62 s) has its Unknown time (105 s) for the
    operator and not for the viewer; at the reveal the viewer gets a whole snapshot with it."""
    room = create.room_create("lesson-hold", LESSON, None, SPEED)

    def a2(rows):
        rows = rows.values() if isinstance(rows, dict) else rows
        return next(n for n in rows if n and n["name"] == "a-2")

    async def scenario() -> None:
        op = await _connect(room, room.operator_token, "teacher")
        v1 = await _connect(room, "", "v1")
        try:
            for comm in (op, v1):
                await _until(comm, lambda m: m["type"] == "snapshot")
            from channels.db import database_sync_to_async

            await database_sync_to_async(tick)(room, 20)  # to the 70 s question
            for comm, want in ((op, 105), (v1, None)):
                asked = await _until(comm, lambda m: m["type"] == "lesson")
                assert asked["checkpoint"] == "silent" and "hold" not in asked
                delta = await _until(comm, lambda m: m["type"] == "delta")
                assert a2(delta["nodes"])["unknownAt"] == want
            await op.send_json_to({"type": "lesson.next"})  # reveals first
            shown = await _until(v1, lambda m: m["type"] == "lesson" and m["revealed"])
            assert shown["answer"] == 2
            snap = await _until(v1, lambda m: m["type"] == "snapshot")
            assert a2(snap["nodes"])["unknownAt"] == 105 and "held" not in snap
        finally:
            for comm in (op, v1):
                await comm.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        runtime.forget_cache()


def test_a_scenario_without_a_lesson_is_not_parsed_for_one(monkeypatch) -> None:
    def fail(text: str) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(definition, "load_scenario", fail)
    assert (
        definition.lesson_of_text(LESSON.split("  lesson:")[0] + "\n# lesson: in a comment\n")
        is None
    )
    with pytest.raises(AssertionError, match="parsed"):
        definition.lesson_of_text(LESSON + "\n# another text\n")


def test_the_landing_page_offers_each_built_in_lesson(client, db: None) -> None:
    builtin = [s for s in catalog.builtin_scenarios() if s["lesson"]]
    assert builtin, "no built-in lesson"
    page = client.get("/").content.decode()
    for s in builtin:
        assert f'data-lesson="{s["id"]}"' in page
        assert escape(s["lesson"]["title"]) in page
    assert page.count('class="start-lesson"') == len(builtin)
    assert page.count('class="learn-alone') == len(builtin)
    # The lessons' notes (what happens when: the answers) are not on the landing page.
    tour = next(s for s in builtin if s["id"] == catalog.DEMO_LESSON)
    assert "goes Ready=Unknown at 105 s" in tour["about"]
    for lesson in builtin:
        assert escape(lesson["about"][:120]) not in page, lesson["id"]
    # Start one: a lesson room, its operator sent to it.
    resp = client.post("/", {"scenario": builtin[0]["id"], "speed": "10", "name": "class"})
    assert resp.status_code == 302
    room = Room.objects.get(name="class")
    assert LessonState.objects.filter(room=room).exists()
    assert resp["Location"].endswith(f"?token={room.operator_token}")
    assert LessonState.objects.get(room=room).solo is False
    # A class starts when its teacher starts it: paused at 0 s, a tick moves nothing, and
    # the operator's page offers Start and the projector link (issue #38).
    assert room.paused and room.sim_ms == 0
    room = tick(room, 30)
    assert room.sim_ms == 0
    operator_page = client.get(resp["Location"]).content.decode()
    assert 'id="start-class"' in operator_page and "?present=1" in operator_page
    viewer = Client().get(f"/rooms/{room.slug}/").content.decode()  # no operator session
    assert 'id="start-class"' not in viewer
    runtime.forget_cache()


def test_learn_alone_a_private_room_its_learner_answers_reveals_and_goes_on(
    client, db: None
) -> None:
    """The landing page's "Learn alone" (and /?solo): a room of the lesson whose operator is
    the learner, not listed on the landing page, held back like a viewer."""
    page = client.get("/?solo").content.decode()
    assert 'name="solo" value="1"' in page and catalog.DEMO_LESSON in page
    assert "solo: no built-in lesson" in client.get("/?solo=nope").content.decode()
    resp = client.post(
        "/", {"scenario": catalog.DEMO_LESSON, "speed": "10", "name": "mine", "solo": "1"}
    )
    assert resp.status_code == 302
    room = Room.objects.get(name="mine")
    assert LessonState.objects.get(room=room).solo is True
    assert 'href="/rooms/' + room.slug not in client.get("/").content.decode()
    # It waits at 0 s for the learner's Start (issue #38).
    assert (room.paused, room.sim_ms, tick(room, 10).sim_ms) == (True, 0, 0)
    controls.room_control(room.pk, "resume", None, "me")
    # The learner (the operator) is held back while a question is open: at 60 s, b-1's
    # Unknown time (105 s) is in the views, not in what the learner gets.
    r = tick(room, 10)
    assert (r.sim_ms, lesson_state(r)[1]) == (60_000, "heartbeats")
    assert holding.current_hold(r, operator=True) is not None
    assert holding.keeps_secrets(r, operator=True)
    url = f"/rooms/{r.slug}/snapshot.json?token={r.operator_token}"
    b1 = next(n for n in client.get(url).json()["nodes"] if n["name"] == "b-1")
    assert b1["unknownAt"] is None
    page = client.get(f"/rooms/{r.slug}/?token={r.operator_token}").content.decode()
    assert "105 s" not in page
    export = client.get(f"/rooms/{r.slug}/export.yaml?token={r.operator_token}").content
    assert b"answer:" not in export and b"lesson:" not in export and b"why:" not in export
    # The learner answers, reveals (Next), goes on (Next again).
    classroom.answer(r.pk, "me", {"checkpoint": "heartbeats", "answer": 105})
    assert classroom.next_step(r.pk, "me")["lesson"] == "reveal"
    assert holding.current_hold(r, operator=True) is None
    b1 = next(n for n in client.get(url).json()["nodes"] if n["name"] == "b-1")
    assert b1["unknownAt"] == 105
    assert classroom.next_step(r.pk, "me")["lesson"] == "next"
    assert Room.objects.get(pk=r.pk).paused is False
    runtime.forget_cache()


@pytest.mark.parametrize("version", [None, "1.29"])
def test_a_class_viewer_is_offered_the_same_lesson_alone(client, db: None, version) -> None:
    """A viewer of a class's room of a built-in lesson (also run under another release) gets
    a link that starts that lesson alone; its operator, a learner already alone, a plain room
    and an uploaded lesson get none."""
    tour = next(s for s in catalog.builtin_lessons() if s["id"] == catalog.DEMO_LESSON)
    cls = create.room_create("class", tour["yaml"], None, SPEED, kubernetes_version=version)
    link = f'href="/?solo={catalog.DEMO_LESSON}"'
    viewer = client.get(f"/rooms/{cls.slug}/").content.decode()
    assert 'id="learn-alone"' in viewer and link in viewer
    assert link not in client.get(f"/rooms/{cls.slug}/?token={cls.operator_token}").content.decode()
    # The link opens the page that starts the learner's own room of that lesson.
    solo_page = client.get(f"/?solo={catalog.DEMO_LESSON}").content.decode()
    assert 'name="solo" value="1"' in solo_page and escape(tour["lesson"]["title"]) in solo_page
    alone = create.room_create("alone", tour["yaml"], None, SPEED)
    classroom.make_solo(alone)
    uploaded = create.room_create("uploaded", LESSON, None, SPEED)
    plain = create.room_create("plain", LESSON.split("  lesson:")[0], None, SPEED)
    for other in (alone, uploaded, plain):
        assert 'id="learn-alone"' not in client.get(f"/rooms/{other.slug}/").content.decode()
    runtime.forget_cache()


def test_what_a_viewer_gets_while_a_question_is_open(client, db: None) -> None:
    """The tour's question 1 open (paused at 60 s): b-1's Unknown time is in the operator's
    data and in nobody else's: not the snapshot, the notes, the downloads."""
    tour = next(s for s in catalog.builtin_scenarios() if s["id"] == catalog.DEMO_LESSON)
    room = create.room_create("tour", tour["yaml"], None, SPEED)
    r = tick(room, 10)
    assert (r.sim_ms, lesson_state(r)[1]) == (60_000, "heartbeats")
    op = f"?token={r.operator_token}"
    base = f"/rooms/{r.slug}/"

    def b1(snap):
        return next(n for n in snap["nodes"] if n["name"] == "b-1")["unknownAt"]

    assert b1(client.get(base + "snapshot.json" + op).json()) == 105
    assert b1(client.get(base + "snapshot.json").json()) is None
    assert "goes Ready=Unknown at 105 s" in client.get(base + op).content.decode()
    assert "goes Ready=Unknown at 105 s" not in client.get(base).content.decode()
    for download in ("export.yaml", "manifests.yaml"):
        mine = client.get(base + download).content.decode()
        assert "answer: 105" not in mine and "why:" not in mine and "expect:" not in mine
        if download == "export.yaml":  # the lesson's faults stay, as spec.faults
            assert "type: StopKubelet" in mine and "at: 60000ms" in mine
        assert "answer: 105" in client.get(base + download + op).content.decode()
    runtime.forget_cache()


BUILTIN_LESSONS = [s for s in catalog.builtin_scenarios() if s["lesson"]]


@pytest.mark.parametrize("builtin", BUILTIN_LESSONS, ids=[s["id"] for s in BUILTIN_LESSONS])
def test_each_built_in_lesson_runs_in_a_room_pausing_where_simulate_says(
    db: None, builtin: dict[str, Any], tmp_path
) -> None:
    """The whole lesson through the room's tick, ``next`` at every checkpoint: it pauses at
    each checkpoint at the time checkpoint_times finds in simulate's timeline, in step order,
    and ends with simulate's timeline of the export."""
    from controller.engine.lesson import checkpoint_times
    from controller.engine.scenario import load_scenario

    scenario = load_scenario(builtin["yaml"])
    lesson = scenario.lesson
    end = scenario.duration_ms
    room = create.room_create("builtin", builtin["yaml"], None, 100.0)
    pauses: list[tuple[str, int]] = []
    try:
        r = Room.objects.get(pk=room.pk)
        for _ in range(40):
            # To the scenario's end at 100x (+5 µs: timedelta rounding).
            r = tick(r, (end - r.sim_ms) / 100 / 1000 + 5e-6)
            if not r.paused:
                break
            ls = LessonState.objects.get(room=r)
            assert ls.step == lesson.step_index(ls.checkpoint)
            pauses.append((ls.checkpoint, r.sim_ms))
            classroom.reveal(r.pk)  # a question is never left unrevealed
            classroom.next_step(r.pk, "t")
            r = Room.objects.get(pk=r.pk)
        assert r.sim_ms == end
        headless = [json.loads(line) for line in headless_events(r, tmp_path)]
        times = checkpoint_times(lesson, [{**e, "t": round(e["t"] * 1000)} for e in headless], end)
        assert pauses == [(cp.id, times[cp.id]) for cp in lesson.checkpoints]
        assert room_events(r) == headless_events(r, tmp_path)
    finally:
        runtime.forget_cache()


def test_a_lesson_compared_side_by_side_runs_as_a_plain_scenario(db: None) -> None:
    comparison = compare.comparison_create(
        "",
        LESSON,
        [("1.18", {}), ("grace 20s", {"controllerManager": {"nodeMonitorGracePeriod": "20s"}})],
    )
    try:
        rooms = [comparison.left, comparison.right]
        assert not LessonState.objects.filter(room__in=rooms).exists()
        for room in rooms:
            r = tick(room, 20)  # past the 70 s checkpoint: one clock, no pause
            assert (r.sim_ms, r.paused) == (200_000, False)
            assert reading.room_snapshot(r)["lesson"] is None
            with pytest.raises(LessonError, match="compared side by side"):
                classroom.next_step(r.pk, "t")
    finally:
        runtime.forget_cache()


def test_the_shared_http_snapshot_leaves_the_lesson_out(client, asking: Room) -> None:
    # snapshot.json is built once per room version for every page, operator or viewer; the
    # lesson's state (counts before the reveal, names) is per role and changes without a new
    # version, so it comes only over the websocket.
    classroom.answer(asking.pk, "c1", {"checkpoint": "silent", "answer": 2, "name": "Ada"})
    body = client.get(f"/rooms/{asking.slug}/snapshot.json").json()
    assert body["type"] == "snapshot" and "lesson" not in body
    assert reading.room_snapshot(asking)["lesson"]["state"]["names"] == [
        {"name": "Ada", "answer": 2}
    ]


@pytest.mark.usefixtures("fresh_channel_layer")
def test_websocket_a_question_opening_replaces_what_the_page_had_with_a_held_snapshot(
    transactional_db: None,
) -> None:
    """Lesson 21: web-1's deletion time (420 s) reaches every page when the taint comes at
    120 s (after question 2's reveal the clock runs); question 3 (at 180 s) asks for it. When
    it opens, a viewer gets a whole held snapshot: no page keeps the answer from before."""
    text = (catalog.BUILTIN_DIR / "21-lesson-taints-tolerations.yaml").read_text()
    room = create.room_create("lesson-21", text, None, SPEED)

    def web1(rows):
        rows = rows.values() if isinstance(rows, dict) else rows
        return next(p for p in rows if p and p["key"] == "default/web-1")

    async def scenario() -> None:
        from channels.db import database_sync_to_async

        v1 = await _connect(room, "", "v1")
        try:
            await _until(v1, lambda m: m["type"] == "snapshot")
            for cp in ("pods", "taints"):  # reach each, reveal, go on
                await database_sync_to_async(tick)(room, 30)
                await _until(v1, lambda m, cp=cp: m["type"] == "lesson" and m["checkpoint"] == cp)
                await database_sync_to_async(classroom.reveal)(room.pk)
                await database_sync_to_async(classroom.next_step)(room.pk, "t")
            # Between 120 s and 180 s the page had web-1's deletion time.
            await _until(
                v1, lambda m: m["type"] == "snapshot" and web1(m["pods"])["taintEvictionAt"] == 420
            )
            await database_sync_to_async(tick)(room, 30)  # to question 3, at 180 s
            asked = await _until(v1, lambda m: m["type"] == "lesson" and m["checkpoint"] == "web")
            assert asked["revealed"] is False
            held = await _until(v1, lambda m: m["type"] == "snapshot")
            assert held["lesson"]["state"]["checkpoint"] == "web"
            assert web1(held["pods"])["taintEvictionAt"] is None
            assert web1(held["pods"])["held"] == ["taintEvictionAt", "taintEvictionSince"]
        finally:
            await v1.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        runtime.forget_cache()
