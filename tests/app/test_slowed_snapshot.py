"""A room too big for its ticks' work budget: a page opened now is told at once how fast it
really runs (snapshot.json and the websocket's snapshot carry ``effective``, as the deltas
do), so the "running at X× of the Y× asked" note shows before the next delta. Real Redis,
the test database."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from controller.models import Room
from controller.rooms import clock, controls, create, tick
from playground.asgi import application
from tests.app.scenarios import pod, scenario

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("redis_server", "fresh_channel_layer"),
]

SCENARIO = scenario("slowed", 3, (pod(),), ())


async def socket_snapshot(room: Room) -> dict[str, Any]:
    comm = WebsocketCommunicator(
        application, f"/ws/rooms/{room.slug}/", headers=[(b"origin", b"http://localhost")]
    )
    assert (await comm.connect())[0]
    while True:
        msg = await comm.receive_json_from(timeout=20)
        if msg["type"] == "snapshot":
            await comm.disconnect()
            return msg


def test_a_slowed_rooms_snapshots_carry_its_effective_speed(client) -> None:
    room = create.room_create("slowed", SCENARIO, None, 10.0)
    assert client.get(f"/rooms/{room.slug}/snapshot.json").json()["effective"] is None
    anchor = room.wall_anchor
    for wall_s in (1, 2):  # a budget of 0: one step a tick (tests/app/test_tick_isolation.py)
        delta = tick.room_advance(room.pk, anchor + timedelta(seconds=wall_s), budget_s=0)
    assert delta["effective"] == 0.001
    assert client.get(f"/rooms/{room.slug}/snapshot.json").json()["effective"] == 0.001
    assert async_to_sync(socket_snapshot)(room)["effective"] == 0.001
    # Paused: no note (its clock stands still as asked).
    controls.room_control(room.pk, "pause", None, "op")
    assert client.get(f"/rooms/{room.slug}/snapshot.json").json()["effective"] is None
    controls.room_control(room.pk, "resume", None, "op")
    # Keeping up again: the note goes once the last short tick is SLOWED_TICKS ticks back.
    r = Room.objects.get(pk=room.pk)
    for i in range(1, clock.SLOWED_TICKS + 3):
        last = tick.room_advance(room.pk, r.wall_anchor + timedelta(seconds=i))
    assert last["effective"] is None
    assert client.get(f"/rooms/{room.slug}/snapshot.json").json()["effective"] is None
