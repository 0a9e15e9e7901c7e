"""A tick never holds a lock across engine work, and never runs unbounded (issue #35).

A room's engine runs outside any database transaction: while one room's engine is held
mid-run here (its ``Simulation.run`` waits in a thread), other rooms' snapshot.json, ticks
and creation go on, and what users do to that room meanwhile (pause, rewind, an action) is
not lost. A tick with a work budget stops when it is spent, re-anchors the room's clock there
and says how fast the room really goes. A room whose clock does not move costs no engine
work. Real Redis (the channel layer) and the test database (SQLite, or PostgreSQL with
PLAYGROUND_DB=postgres)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection

from controller import timeline_store
from controller.engine.simulation import Simulation
from controller.models import Action, Room
from controller.rooms import actions, controls, create, runtime, tick
from playground.asgi import application
from tests.app.scenarios import pod, scenario

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("redis_server", "fresh_channel_layer"),
]

SCENARIO = scenario("iso", 3, (pod(),), ("{at: 20s, type: StopKubelet, node: n-1}",))


class HeldEngine:
    """The first ``Simulation.run`` of the tick run by ``start`` waits until ``release``:
    the tick is "in its engine" meanwhile. ``in_transaction`` says whether the tick's thread
    was inside a database transaction there."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inside = threading.Event()
        self.released = threading.Event()
        self.in_transaction: bool | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        real = Simulation.run

        def run(sim: Simulation, until_ms: int) -> None:
            if threading.current_thread() is self.thread and not self.inside.is_set():
                self.in_transaction = connection.in_atomic_block
                self.inside.set()
                # Today's code held the database inside: a waiting control would wait here
                # as long, so the hold ends by itself.
                self.released.wait(10)
            real(sim, until_ms)

        monkeypatch.setattr(Simulation, "run", run)

    def start(self, room: Room, wall_s: float) -> None:
        def body() -> None:
            try:
                self.result = tick.room_advance(
                    room.pk, room.wall_anchor + timedelta(seconds=wall_s)
                )
            except BaseException as exc:  # shown by join()
                self.error = exc
            finally:
                connection.close()

        self.thread = threading.Thread(target=body, name="held-tick")
        self.thread.start()
        assert self.inside.wait(30), "the tick never reached its engine"

    def join(self) -> Any:
        self.released.set()
        assert self.thread is not None
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result


@contextmanager
def held(monkeypatch: pytest.MonkeyPatch, room: Room, wall_s: float) -> Iterator[HeldEngine]:
    engine = HeldEngine(monkeypatch)
    engine.start(room, wall_s)
    try:
        yield engine
    finally:
        engine.released.set()
        if engine.thread is not None:
            engine.thread.join(60)


def test_while_a_rooms_engine_runs_nothing_is_locked_and_other_rooms_go_on(
    client, monkeypatch
) -> None:
    """The engine part of a tick runs outside any transaction (today's code ran it inside
    one, with the room's row locked: on SQLite the whole database's write lock, so every
    other room's snapshot.json, tick and creation waited 20 s and failed "database is
    locked"). Here they all answer while the first room's engine is held mid-run."""
    big = create.room_create("big", SCENARIO, None, 10.0)
    other = create.room_create("other", SCENARIO, None, 10.0)
    with held(monkeypatch, big, 5) as engine:
        assert engine.in_transaction is False
        assert client.get(f"/rooms/{other.slug}/snapshot.json").status_code == 200
        delta = tick.room_advance(other.pk, other.wall_anchor + timedelta(seconds=5))
        assert delta is not None and delta["t"] == 50
        third = create.room_create("third", SCENARIO, None, 10.0)
        assert Room.objects.get(pk=third.pk).build_state == Room.LIVE
        assert engine.join()["t"] == 50
    assert Room.objects.get(pk=big.pk).sim_ms == 50_000


def test_a_pause_during_a_tick_wins_over_the_ticks_result(monkeypatch) -> None:
    """The operator pauses while the tick's engine runs toward a later instant than the
    pause's: the pause stands (the room stops where it was paused), the tick's result is
    dropped with its engine, and the next tick goes to the pause's instant and no further."""
    room = create.room_create("pause", SCENARIO, None, 10.0)
    with held(monkeypatch, room, 60) as engine:  # toward 600 s
        paused = controls.room_control(room.pk, "pause", None, "op")
        assert engine.join() is None
    assert room.pk not in runtime._CACHE  # dropped: the next tick rebuilds it
    r = Room.objects.get(pk=room.pk)
    assert r.paused and r.sim_ms == 0 and r.sim_anchor_ms == paused.sim_anchor_ms < 600_000
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=120))
    r.refresh_from_db()
    assert r.paused and r.sim_ms == paused.sim_anchor_ms


def test_a_pause_after_the_instant_the_tick_reached_keeps_its_result(monkeypatch) -> None:
    """A pause whose instant is past what the tick's engine reached: the tick's result is
    kept, the room stays paused at the pause's instant (the next tick goes there)."""
    room = create.room_create("pause-late", SCENARIO, None, 10.0)
    with held(monkeypatch, room, 0.001) as engine:  # toward 10 ms
        paused = controls.room_control(room.pk, "pause", None, "op")
        assert engine.join()["t"] == 0.01
    r = Room.objects.get(pk=room.pk)
    assert r.paused and r.sim_ms == 10 and r.sim_anchor_ms == paused.sim_anchor_ms >= 10


def test_a_rewind_during_a_tick_wins_and_the_timeline_stays_the_scenarios(
    monkeypatch, tmp_path
) -> None:
    from tests.app.test_rooms import headless_events, room_events

    room = create.room_create("rewind", SCENARIO, None, 10.0)
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=3))  # 30 s
    with held(monkeypatch, room, 7) as engine:  # toward 70 s
        controls.room_rewind(room.pk, 10, "op")
        assert engine.join() is None
    r = Room.objects.get(pk=room.pk)
    assert r.sim_ms == 10_000
    assert room_events(r) == headless_events(r, tmp_path)
    paused = controls.room_control(room.pk, "pause", None, "op")  # (its clock ran on)
    controls.room_control(room.pk, "step", 50, "op")
    tick.room_advance(room.pk)
    r.refresh_from_db()
    assert r.sim_ms == paused.sim_anchor_ms + 50_000
    assert any('"StopKubelet"' in line for line in room_events(r))
    assert room_events(r) == headless_events(r, tmp_path)


def test_an_action_submitted_during_a_tick_stays_pending_for_the_next(monkeypatch) -> None:
    room = create.room_create("late-action", SCENARIO, None, 10.0)
    first = actions.action_submit(room, {"type": "Cordon", "node": "n-1"}, "first")
    with held(monkeypatch, room, 3) as engine:
        late = actions.action_submit(room, {"type": "Cordon", "node": "n-2"}, "late")
        assert engine.join()["t"] == 30
    assert Action.objects.get(pk=first.pk).status == Action.APPLIED
    assert Action.objects.get(pk=late.pk).status == Action.PENDING
    assert tick.has_pending_actions(room.pk)
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=3))
    assert Action.objects.get(pk=late.pk).status == Action.APPLIED
    cordons = [
        (t, d["node"])
        for _i, t, typ, d in timeline_store.after(room)
        if typ == "Fault" and d["fault"] == "Cordon"
    ]
    assert cordons == [(1, "n-1"), (30_001, "n-2")]


def test_a_room_its_budget_cannot_keep_up_with_runs_slower_and_its_pages_are_told(
    settings,
) -> None:
    """A tick whose budget is spent stops short of "now" and re-anchors the room's clock
    where the engine stopped; once the room's pace is measured, its deltas (and the message
    its pages get) carry the speed it really runs at. A budget of 0 stops after one step (the
    first of a new engine is FIRST_STEP_MS, the next ones what the budget left: 1 ms)."""
    room = create.room_create("slow", SCENARIO, None, 10.0)
    anchor = room.wall_anchor

    def advance(wall_s: int) -> dict[str, Any]:
        return tick.room_advance(room.pk, anchor + timedelta(seconds=wall_s), budget_s=0)

    async def two_slow_ticks() -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
        comm = WebsocketCommunicator(
            application, f"/ws/rooms/{room.slug}/", headers=[(b"origin", b"http://localhost")]
        )
        assert (await comm.connect())[0]
        first = await sync_to_async(advance)(1)
        second = await sync_to_async(advance)(2)
        sent = []
        while len(sent) < 2:
            msg = await comm.receive_json_from(timeout=10)
            if msg["type"] in ("delta", "resync"):
                sent.append(msg["effective"])
        await comm.disconnect()
        return first, second, sent

    first, second, sent = async_to_sync(two_slow_ticks)()
    assert first["t"] == tick.FIRST_STEP_MS / 1000 < 10
    assert first["effective"] is None  # not measured yet
    r = Room.objects.get(pk=room.pk)
    assert r.sim_ms == tick.FIRST_STEP_MS + 1
    assert (r.sim_anchor_ms, r.wall_anchor) == (r.sim_ms, anchor + timedelta(seconds=2))
    assert second["t"] == first["t"] + 0.001
    assert second["effective"] == 0.001  # 1 simulated ms in a wall second, of the 10x asked
    assert sent == [None, 0.001]  # what the pages got
    # Unbounded ticks keep up again: the note goes once the last short tick is SLOWED_TICKS
    # ticks back (the moving average climbs meanwhile).
    from controller.rooms.clock import SLOWED_TICKS

    shown = []
    for i in range(3, 3 + SLOWED_TICKS):
        shown.append(tick.room_advance(room.pk, anchor + timedelta(seconds=i))["effective"])
    assert shown[0] is not None and 0.001 < shown[0] < 10
    assert shown[-1] is None
    r.refresh_from_db()
    assert r.sim_ms == second["t"] * 1000 + SLOWED_TICKS * 10_000


@pytest.mark.parametrize("value", ["0", "nan", "11", "a lot"])
def test_a_budget_setting_out_of_its_bounds_names_the_variable(value: str) -> None:
    from tests.app.test_settings import manage

    done = manage("check", PLAYGROUND_TICK_BUDGET_SECONDS=value)
    assert done.returncode != 0
    assert "PLAYGROUND_TICK_BUDGET_SECONDS" in done.stderr


def test_a_room_whose_clock_does_not_move_costs_no_engine_work() -> None:
    """A paused room with nothing pending (or an idle one, its clock stopped), ticked:
    nothing is restored or run (today's code rebuilt an engine not cached before it looked)."""
    room = create.room_create("still", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "op")
    tick.room_advance(room.pk)  # to the instant it was paused at
    runtime.forget_cache()
    restores = runtime.RESTORES
    assert tick.room_advance(room.pk, room.wall_anchor + timedelta(hours=1)) is None
    assert restores == runtime.RESTORES and room.pk not in runtime._CACHE


def test_a_tick_makes_what_it_writes_before_its_write_transaction(monkeypatch) -> None:
    """The views of the objects a tick changed, its events' rows and its chart points are made
    before its write transaction begins (a zone going dark in a big room changes tens of
    thousands of them: seconds of work that held the database before); inside it, only the
    writes."""
    from controller import bulk
    from controller.rooms import persist

    made: dict[str, bool] = {}

    def recording(real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            made[real.__name__] = made.get(real.__name__, False) or connection.in_atomic_block
            return real(*args, **kwargs)

        return wrapper

    room = create.room_create("made-before", SCENARIO, None, 10.0)
    monkeypatch.setattr(persist, "node_state", recording(persist.node_state))
    monkeypatch.setattr(persist, "_series_rows", recording(persist._series_rows))
    monkeypatch.setattr(bulk, "event_rows", recording(bulk.event_rows))
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=6))  # n-1 silent at 20 s
    assert made == {"node_state": False, "_series_rows": False, "event_rows": False}
    assert Room.objects.get(pk=room.pk).sim_ms == 60_000
    assert any(typ == "NodeReady" for _i, _t, typ, _d in timeline_store.after(room))


def test_a_compared_room_out_of_budget_keeps_the_one_clock_of_the_two() -> None:
    """Two rooms compared side by side keep one clock: a side whose tick runs out of its
    budget is not re-anchored (that would leave it behind its partner for good); it catches
    up in its next ticks, to the instant its partner is at."""
    from controller.rooms import compare

    c = compare.comparison_create("", SCENARIO, [("a", {}), ("b", {})], None, 10.0)
    wall = c.left.wall_anchor + timedelta(seconds=3)
    tick.room_advance(c.left.pk, wall, budget_s=0)  # one step: 1 s of the 30
    tick.room_advance(c.right.pk, wall, budget_s=0)
    left, right = Room.objects.get(pk=c.left.pk), Room.objects.get(pk=c.right.pk)
    assert left.sim_ms == right.sim_ms < 30_000
    assert (left.sim_anchor_ms, left.wall_anchor) == (0, c.left.wall_anchor)
    tick.room_advance(c.left.pk, wall)
    tick.room_advance(c.right.pk, wall)
    left.refresh_from_db()
    right.refresh_from_db()
    assert left.sim_ms == right.sim_ms == 30_000
