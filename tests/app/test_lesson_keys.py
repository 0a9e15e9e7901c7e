"""Issue #38, the server's side of a class led by keys and of the rewind box:

- a lead press carries the state its page showed (``at``); one made on a state the lesson has
  left (N pressed twice before the first press's answer came) does nothing, quietly, and that
  page is told where the lesson is (it once got "lesson.next: the clock has not reached the
  next step yet", a red error);
- learning alone, the clock stops where each step's text begins; Next goes on from there;
- a rewind needs its time (a websocket rewind without one reset the room to 0 s), and one that
  would take injected faults away for everyone is asked again first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from controller.lessons import classroom
from controller.lessons.definition import LessonError
from controller.models import Action, LessonState, Room
from controller.rooms import controls, create, runtime
from controller.rooms import tick as rooms_tick
from controller.rooms.errors import ActionError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LESSON = (FIXTURES / "lesson-heartbeat.yaml").read_text()
READING = (FIXTURES / "lesson-reading.yaml").read_text()


@pytest.fixture
def room(db: None) -> Iterator[Room]:
    room = create.room_create("keys", LESSON, None, 10.0)
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def tick(room: Room, wall_s: float) -> Room:
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


def where(room: Room) -> tuple[int, str, bool]:
    ls = LessonState.objects.get(room=room)
    return ls.step, ls.checkpoint, ls.revealed


def test_a_press_on_a_state_the_lesson_has_left_does_nothing(room: Room) -> None:
    r = tick(room, 20)
    assert (r.sim_ms, where(r)) == (70_000, (1, "silent", False))
    asking = {"step": 1, "checkpoint": "silent", "revealed": False}
    assert classroom.next_step(r.pk, "t", at=asking)["lesson"] == "reveal"
    revealed = {**asking, "revealed": True}
    assert classroom.next_step(r.pk, "t", at=revealed)["lesson"] == "next"
    assert (where(r), Room.objects.get(pk=r.pk).paused) == ((2, "", False), False)
    # The same key again, pressed on the revealed question the page still showed: nothing.
    for press in (
        lambda: classroom.next_step(r.pk, "t", at=revealed),
        lambda: classroom.reveal(r.pk, at=revealed),
        lambda: classroom.prev_step(r.pk, at=revealed),
    ):
        reply = press()
        assert reply["lesson"] == "stale"
        assert reply["state"]["step"] == 2 and reply["state"]["checkpoint"] is None
    assert (where(r), Room.objects.get(pk=r.pk).paused) == ((2, "", False), False)
    # Without ``at`` (another client), as before: an error naming what is wrong.
    with pytest.raises(LessonError, match="lesson.next: the clock has not reached"):
        classroom.next_step(r.pk, "t")


def test_play_or_step_pressed_on_a_state_left_is_dropped(room: Room) -> None:
    """The room's Play and Step carry the lesson state their page showed: pressed on a state
    the lesson has left, the consumer drops them (``stale_control`` says so) instead of the
    lesson's rule acting on a question that page never showed."""
    r = tick(room, 20)
    revealed = {"step": 1, "checkpoint": "silent", "revealed": True}
    assert classroom.stale_control(r.pk, "step", None) is None  # (no ``at``: as before)
    assert classroom.stale_control(r.pk, "step", revealed)["checkpoint"] == "silent"
    classroom.reveal(r.pk)
    assert classroom.stale_control(r.pk, "step", revealed) is None
    assert classroom.stale_control(r.pk, "resume", revealed) is None
    with pytest.raises(LessonError, match="^step.at.revealed: "):
        classroom.stale_control(r.pk, "step", {**revealed, "revealed": 1})


@pytest.mark.parametrize(
    "at, field",
    [
        ("now", "lesson.next.at"),
        ({"step": "1", "checkpoint": None, "revealed": False}, "lesson.next.at.step"),
        ({"step": 1, "checkpoint": 7, "revealed": False}, "lesson.next.at.checkpoint"),
        ({"step": 1, "checkpoint": None, "revealed": "no"}, "lesson.next.at.revealed"),
        ({"step": 1, "checkpoint": None, "revealed": False, "x": 1}, "lesson.next.at"),
    ],
)
def test_a_bad_at_is_refused_naming_the_field(room: Room, at: Any, field: str) -> None:
    tick(room, 20)
    before = where(room)
    with pytest.raises(LessonError) as info:
        classroom.next_step(room.pk, "t", at=at)
    assert str(info.value).startswith(f"{field}:"), info.value
    assert where(room) == before


def test_learning_alone_the_clock_stops_at_each_steps_text(db: None) -> None:
    room = create.room_create("reading", READING, None, 10.0)
    classroom.make_solo(room)
    try:
        r = tick(room, 10)  # 100 simulated seconds asked: it stops where "middle" begins
        assert (r.sim_ms, r.paused, where(r)) == (20_000, True, (1, "", False))
        assert tick(r, 10).sim_ms == 20_000  # and stays there
        assert classroom.next_step(r.pk, "me")["lesson"] == "go"
        r = Room.objects.get(pk=r.pk)
        assert not r.paused
        r = tick(r, 10)  # the question, at 40 s
        assert (r.sim_ms, r.paused, where(r)) == (40_000, True, (2, "ask", False))
        classroom.next_step(r.pk, "me")  # reveal
        assert classroom.next_step(r.pk, "me")["lesson"] == "next"  # the last step: on
        r = tick(Room.objects.get(pk=r.pk), 10)
        assert (r.paused, where(r)[0]) == (False, 3)
        # The clock running, Next has nothing to go on from: nothing, not an error.
        assert classroom.next_step(r.pk, "me")["lesson"] == "none"
    finally:
        runtime.forget_cache()


def test_a_class_is_not_stopped_at_a_steps_text(db: None) -> None:
    room = create.room_create("reading-class", READING, None, 10.0)
    try:
        r = tick(room, 10)  # the clock leads a class: past "middle" to the question
        assert (r.sim_ms, r.paused, where(r)) == (40_000, True, (2, "ask", False))
    finally:
        runtime.forget_cache()


def test_a_rewind_needs_its_time(room: Room) -> None:
    tick(room, 3)
    for t in (None, "", "  "):
        with pytest.raises(ActionError, match="rewind: t is required"):
            controls.rewind_request(room.pk, t, "t")
    assert not room.actions.filter(kind="rewind").exists()


def _ws(room: Room, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from playground.asgi import application

    async def scenario() -> list[dict[str, Any]]:
        comm = WebsocketCommunicator(
            application,
            f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=op&client=op",
            headers=[(b"origin", b"http://localhost")],
        )
        connected, _ = await comm.connect()
        assert connected
        replies = []
        try:
            assert (await comm.receive_json_from(timeout=10))["type"] == "snapshot"
            for message in messages:
                await comm.send_json_to(message)
                while True:
                    reply = await comm.receive_json_from(timeout=10)
                    if reply["type"] in ("ack", "error"):
                        replies.append(reply)
                        break
        finally:
            await comm.disconnect()
        return replies

    return async_to_sync(scenario)()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_channel_layer")
def test_websocket_rewind_without_a_time_or_over_faults(monkeypatch) -> None:
    from controller import tasks

    monkeypatch.setattr(tasks, "send_rewind", lambda rid: None)  # recorded, not run here
    plain = LESSON.split("  lesson:")[0]
    room = create.room_create("rewind-ws", plain, None, 10.0)
    controls.room_control(room.pk, "pause", None, "t")
    controls.room_control(room.pk, "step", 10, "t")
    room = tick(room, 0)
    try:
        [missing] = _ws(room, [{"type": "rewind"}])
        assert missing["type"] == "error"
        assert missing["message"].startswith("rewind: t is required"), missing
        assert not room.actions.filter(kind="rewind").exists()
        # A fault injected at 10 s, the clock past 20 s: a rewind to 5 s would take it away.
        Action.objects.create(
            room=room,
            actor="alice (operator)",
            kind="StopKubelet",
            payload={"type": "StopKubelet", "node": "a-3"},
            status=Action.APPLIED,
            at_ms=10_000,
        )
        controls.room_control(room.pk, "step", 10, "t")
        room = tick(room, 0)
        assert room.sim_ms >= 20_000
        asked, later, sure = _ws(
            room,
            [
                {"type": "rewind", "t": 5},
                {"type": "rewind", "t": 15},
                {"type": "rewind", "t": 5, "confirm": True},
            ],
        )
        assert asked["type"] == "error" and asked["confirm"] == {"type": "rewind", "t": 5}
        assert "rewinding to 00:05 takes away 1 action" in asked["message"]
        assert "StopKubelet a-3 at 00:10 by alice (operator)" in asked["message"]
        assert asked["undoes"] == [
            {"kind": "StopKubelet", "target": "a-3", "at": 10.0, "actor": "alice (operator)"}
        ]
        assert later["type"] == "ack"  # after the fault: nothing to ask
        assert sure["type"] == "ack"
        assert list(
            room.actions.filter(kind="rewind").order_by("id").values_list("at_ms", flat=True)
        ) == [15_000, 5_000]
    finally:
        runtime.forget_cache()
