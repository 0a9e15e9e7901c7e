"""Where a lesson's checkpoints are, as the page's time scrubber marks them: every checkpoint
reached says where it paused the room (the time the page's clock showed then); a checkpoint
not yet reached gives no pause time away. The fixture lesson as in test_lessons.py: "silent"
pauses at 70 s, "taint" waits for a-2's NoExecute taint (110 s)."""

from __future__ import annotations

import pytest

from controller.lessons import classroom, messages
from controller.models import Room
from controller.rooms import create, runtime
from tests.app.test_lessons import LESSON, SPEED, tick


@pytest.fixture
def room(db: None):
    room = create.room_create("lesson", LESSON, None, SPEED)
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def test_a_reached_checkpoint_says_where_it_paused_the_room_and_nothing_more(room: Room) -> None:
    snap = messages.snapshot(room)
    assert snap["state"]["reached"] == {}
    # Not reached: not even its step is told (issue #38), let alone a pause time.
    assert snap["def"]["steps"][1:] == [{"withheld": True}] * 3
    r = tick(room, 20)
    assert messages.snapshot(r)["state"]["reached"] == {"silent": 70.0}
    classroom.next_step(r.pk, "teacher")  # reveals
    classroom.next_step(r.pk, "teacher")  # goes on
    r = tick(Room.objects.get(pk=r.pk), 30)
    snap = messages.snapshot(r)
    assert snap["state"]["reached"] == {"silent": 70.0, "taint": 110.0}
    cps = [s["checkpoint"] for s in snap["def"]["steps"] if s.get("checkpoint")]
    assert [cp["id"] for cp in cps] == ["silent", "taint"]
    assert all("at" not in cp and "answer" not in cp and "expect" not in cp for cp in cps)
