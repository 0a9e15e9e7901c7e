"""A room's engine snapshot taken by a forked child (controller/snapshots.py, issue #14): the
tick releases the room's lock before it is stored, the stored one has the stamps of its
instant, a restore from it continues exactly, an older one never replaces a newer one, and a
failing child leaves the last good one. Rooms here are tiny: the fork threshold is set to 0.

The ticks run in this process (tasks.room_tick_task, with the room's real Redis lock), so that
the test can hold a child back: ``gate`` makes the child wait (in snapshots.dump, which the
child calls) until the test writes to a pipe."""

from __future__ import annotations

import io
import os
import signal
import tempfile
import time

import pytest

from controller import snapshots, tasks, timeline_store
from controller.engine import cli
from controller.engine.timeline import to_json
from controller.locks import redis_client
from controller.models import Action, EngineSnapshot, Room
from controller.rooms import actions, controls, create, reading, runtime
from tests.app.scenarios import scenario, workload

SCENARIO = scenario("bg", 3, (workload("Deployment", "web", 4),))


@pytest.fixture
def forked(settings, transactional_db, redis_server):
    """Every snapshot is forked (the rooms are tiny); no child is left running after."""
    settings.PLAYGROUND_SNAPSHOT_FORK = True
    settings.PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS = 0
    yield
    for child in list(snapshots._CHILDREN.values()):
        if not child.done.wait(5):
            os.kill(child.pid, signal.SIGKILL)  # held at a gate by a failed test
            child.done.wait(10)
    while GATES:
        path = GATES.pop()
        if os.path.exists(path):
            os.unlink(path)


GATES: list[str] = []  # their files, removed after each test


class Gate:
    """Children forked while it is shut wait in snapshots.dump until ``open`` (a file appears:
    a child keeps no descriptor of its parent's)."""

    def __init__(self, monkeypatch) -> None:
        fd, self.path = tempfile.mkstemp(prefix="snapshot-gate-")
        os.close(fd)
        os.unlink(self.path)
        GATES.append(self.path)
        real = snapshots.dump

        def held(sim):
            # In the child: wait for the test (at most a minute: a failed test leaves none).
            deadline = time.monotonic() + 60
            while not os.path.exists(self.path):
                if time.monotonic() > deadline:
                    raise TimeoutError("the gate was never opened")
                time.sleep(0.01)
            return real(sim)

        monkeypatch.setattr(snapshots, "dump", held)
        self.real = real
        self.monkeypatch = monkeypatch

    def open(self) -> None:
        with open(self.path, "w"):
            pass

    def remove(self) -> None:
        self.monkeypatch.setattr(snapshots, "dump", self.real)
        if os.path.exists(self.path):
            os.unlink(self.path)


def make_room() -> Room:
    room = create.room_create("bg", SCENARIO, None, 10.0)
    snapshots.wait(room.pk, 30)  # its first snapshot (forked when it went live)
    controls.room_control(room.pk, "pause", None, "test")
    return Room.objects.get(pk=room.pk)


def tick(room: Room, step_s: float, snapshot: bool = False) -> Room:
    """Step the paused room by ``step_s`` and tick it as a worker does (under its lock);
    ``snapshot``: its periodic snapshot is due at this tick."""
    controls.room_control(room.pk, "step", step_s, "t")
    if snapshot:
        runtime._CACHE[room.pk].snapshot_at = 0.0
    tasks.room_tick_task(room.pk)
    return Room.objects.get(pk=room.pk)


def stamps(room_id: int) -> tuple[int, int, int, int, str]:
    s = EngineSnapshot.objects.get(room_id=room_id)
    return (s.room_version, s.sim_ms, s.event_count, s.last_action_id, s.engine_version)


def room_events(room: Room) -> list[str]:
    return [
        to_json({"t": t, "type": typ, **data}) for _idx, t, typ, data in timeline_store.after(room)
    ]


def headless_events(room: Room, tmp_path) -> list[str]:
    path = tmp_path / "export.yaml"
    path.write_text(reading.room_export(room))
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(str(path), room.sim_ms / 1000, "jsonl", None, False, out, err) == 0, (
        err.getvalue()
    )
    return out.getvalue().splitlines()


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_background_snapshot_has_the_stamps_of_its_instant_and_a_restore_from_it_is_exact(
    forked, monkeypatch, tmp_path
) -> None:
    room = make_room()
    actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    gate = Gate(monkeypatch)
    room = tick(room, 30, snapshot=True)
    child = snapshots.running(room.pk)
    assert child is not None
    # The last applied action then: the tick's step (the StopKubelet is before it).
    applied = Action.objects.filter(room=room, status=Action.APPLIED).order_by("id")
    last = applied.last()
    assert last.kind == "step" and applied.filter(kind="StopKubelet").exists()
    at_fork = (room.version, room.sim_ms, room.event_count, last.pk, runtime.ENGINE_VERSION)
    assert child.stamps == snapshots.Stamps(room.pk, *at_fork)
    # The room ticks on (and an action is applied) before the child's blob is stored.
    actions.action_submit(room, {"type": "StopKubelet", "node": "n-2"}, "t")
    room = tick(room, 20)
    assert room.sim_ms > at_fork[1] and room.event_count > at_fork[2]
    gate.open()
    assert snapshots.wait(room.pk, 30) is child and child.stored and not child.error
    assert stamps(room.pk) == at_fork
    assert reaped(child.pid)
    gate.remove()
    # A worker restart: the engine comes back from that snapshot (not from the scenario) plus
    # the actions applied after it, and goes on exactly as the export simulates.
    runtime._CACHE.pop(room.pk)

    def no_replay_from_the_start(*args, **kwargs):
        raise AssertionError("the room was replayed from its scenario, not its snapshot")

    with monkeypatch.context() as m:
        m.setattr(runtime, "_new_sim", no_replay_from_the_start)
        room = tick(room, 5)
    room = tick(room, 400)
    events = room_events(room)
    assert any('"PodDeleted"' in line for line in events)
    assert events == headless_events(room, tmp_path)


def test_the_lock_is_released_before_the_snapshot_is_stored(forked, monkeypatch) -> None:
    room = make_room()
    before = stamps(room.pk)
    gate = Gate(monkeypatch)
    room = tick(room, 10, snapshot=True)
    child = snapshots.running(room.pk)
    assert child is not None and not child.done.is_set()
    # The tick is over: its lock is free while the child still waits to pickle...
    assert not redis_client().exists(f"playground:room:{room.pk}:lock")
    assert stamps(room.pk) == before
    # ...and the room's next tick runs meanwhile (a second child is not forked).
    seq = room.seq
    room = tick(room, 10, snapshot=True)
    assert room.seq == seq + 1 and room.sim_ms >= 20_000
    assert snapshots.running(room.pk) is child and stamps(room.pk) == before
    gate.open()
    snapshots.wait(room.pk, 30)
    assert child.stored and stamps(room.pk)[1] == child.stamps.sim_ms < room.sim_ms


def test_an_older_background_snapshot_finishing_after_a_newer_one_is_not_stored(
    forked, monkeypatch, settings
) -> None:
    room = make_room()
    gate = Gate(monkeypatch)
    room = tick(room, 10, snapshot=True)
    old = snapshots.running(room.pk)
    assert old is not None
    # Meanwhile another worker ticked the room on and stored a newer snapshot (in its tick).
    settings.PLAYGROUND_SNAPSHOT_FORK = False
    gate.remove()
    room = tick(room, 30, snapshot=True)
    newer = stamps(room.pk)
    assert newer[:3] == (room.version, room.sim_ms, room.event_count)
    assert newer[0] > old.stamps.room_version
    gate.open()
    snapshots.wait(room.pk, 30)
    assert not old.stored and not old.error
    assert stamps(room.pk) == newer


def test_a_snapshot_from_before_a_rewind_finishing_after_it_is_not_stored(
    forked, monkeypatch, tmp_path
) -> None:
    room = make_room()
    actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "t")
    room = tick(room, 60)
    gate = Gate(monkeypatch)
    room = tick(room, 400, snapshot=True)
    old = snapshots.running(room.pk)
    assert old is not None
    controls.room_rewind(room.pk, 30, "t")
    gate.open()
    snapshots.wait(room.pk, 30)
    assert not old.stored
    # The rewind's tombstone stays (no engine): a restore replays the room from its scenario.
    assert stamps(room.pk)[1:] == (0, 0, 0, "")
    gate.remove()
    runtime._CACHE.pop(room.pk)
    room = tick(room, 100)
    snapshots.wait(room.pk, 30)  # the restore's fresh snapshot (forked)
    room = tick(room, 10)
    assert EngineSnapshot.objects.get(room=room).engine_version == runtime.ENGINE_VERSION
    assert room_events(room) == headless_events(room, tmp_path)


@pytest.mark.parametrize("how", ["unpicklable", "killed", "timed out"])
def test_a_failing_child_leaves_the_last_good_snapshot_and_the_room_ticking(
    forked, monkeypatch, settings, tmp_path, caplog, how
) -> None:
    room = make_room()
    good = stamps(room.pk)
    blob = bytes(EngineSnapshot.objects.get(room=room).blob)
    if how == "unpicklable":
        sim = runtime._runtime(room).sim
        sim.not_picklable = lambda: None  # as a bug might leave in the engine
        room = tick(room, 10, snapshot=True)
        child = snapshots.wait(room.pk, 30)
        assert child is not None and child.error == "exited with code 1"
        del sim.not_picklable
    elif how == "killed":
        gate = Gate(monkeypatch)
        room = tick(room, 10, snapshot=True)
        child = snapshots.running(room.pk)
        assert child is not None
        os.kill(child.pid, signal.SIGKILL)
        snapshots.wait(room.pk, 30)
        assert child.error == f"killed by signal {signal.SIGKILL}"
        gate.remove()
    else:  # held at its gate past the timeout: the collector kills it
        gate = Gate(monkeypatch)
        settings.PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS = 0.2
        room = tick(room, 10, snapshot=True)
        child = snapshots.wait(room.pk, 30)
        assert child is not None and child.error == "timed out"
        gate.remove()
        settings.PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS = 600
    assert not child.stored and reaped(child.pid)
    assert "the last good snapshot stays" in caplog.text
    snap = EngineSnapshot.objects.get(room=room)
    assert stamps(room.pk) == good and bytes(snap.blob) == blob
    # The room ticks on; its next periodic snapshot is stored.
    seq = room.seq
    room = tick(room, 10, snapshot=True)
    assert room.seq == seq + 1
    child = snapshots.wait(room.pk, 30)
    assert child is not None and child.stored
    assert stamps(room.pk)[:3] == (room.version, room.sim_ms, room.event_count)
    runtime._CACHE.pop(room.pk)
    room = tick(room, 300)
    assert room_events(room) == headless_events(room, tmp_path)


def test_a_small_engine_is_snapshotted_in_its_tick_unless_it_would_take_long(
    settings, monkeypatch, transactional_db, redis_server
) -> None:
    settings.PLAYGROUND_SNAPSHOT_FORK = True
    settings.PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS = 0.05
    assert not snapshots.use_fork(0.0, 1000)  # estimated 25 ms
    assert snapshots.use_fork(0.0, 2000)  # estimated 50 ms
    assert snapshots.use_fork(0.06, 10) and not snapshots.use_fork(0.01, 100_000)
    # A worker of 10 GiB: its fork (~0.2 s) costs more than a 0.1 s pickle.
    assert 0 < snapshots.fork_cost_s() < 0.05  # this test process
    monkeypatch.setattr(snapshots, "fork_cost_s", lambda: 0.2)
    assert not snapshots.use_fork(0.1, 10) and snapshots.use_fork(0.3, 10)
    settings.PLAYGROUND_SNAPSHOT_FORK = False
    assert not snapshots.use_fork(10.0, 100_000)
    settings.PLAYGROUND_SNAPSHOT_FORK = True
    monkeypatch.undo()
    room = create.room_create("bg", SCENARIO, None, 10.0)
    assert snapshots.running(room.pk) is None
    assert stamps(room.pk)[:3] == (room.version, room.sim_ms, room.event_count)


def test_a_fork_that_fails_falls_back_to_a_snapshot_in_the_tick(forked, monkeypatch, caplog):
    room = make_room()

    def no_fork():
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(snapshots.os, "fork", no_fork)
    room = tick(room, 10, snapshot=True)
    assert snapshots.running(room.pk) is None
    assert "could not fork a snapshot child" in caplog.text
    assert stamps(room.pk)[:3] == (room.version, room.sim_ms, room.event_count)


def test_a_snapshot_due_while_the_process_has_its_most_children_is_taken_at_a_later_tick(
    forked, monkeypatch, settings
) -> None:
    settings.PLAYGROUND_SNAPSHOT_MAX_CHILDREN = 1
    first, second = make_room(), make_room()
    gate = Gate(monkeypatch)
    first = tick(first, 10, snapshot=True)
    held = snapshots.running(first.pk)
    assert held is not None
    before = stamps(second.pk)
    second = tick(second, 10, snapshot=True)
    assert snapshots.running(second.pk) is None and stamps(second.pk) == before
    assert runtime._CACHE[second.pk].snapshot_at == 0.0  # still due
    gate.open()
    snapshots.wait(first.pk, 30)
    gate.remove()
    second = tick(second, 10)
    child = snapshots.wait(second.pk, 30)
    assert child is not None and child.stored
    assert stamps(second.pk)[:3] == (second.version, second.sim_ms, second.event_count)


@pytest.fixture
def fork_everything_in_workers(monkeypatch) -> None:
    """Celery workers started after this fork every snapshot (their environment)."""
    monkeypatch.setenv("PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS", "0")


def test_a_celery_worker_forks_the_snapshot_from_its_pool_thread_and_stores_it(
    fork_everything_in_workers, celery_worker_proc
) -> None:
    room = create.room_create("bg", SCENARIO, None, 10.0)  # its snapshot: in this process
    # As after an upgrade: the worker's restore replays the room and snapshots it at once.
    EngineSnapshot.objects.filter(room=room).update(engine_version="older", blob=b"junk")
    tasks.room_tick_task.delay(room.pk)

    def stored() -> bool:
        return EngineSnapshot.objects.get(room=room).engine_version == runtime.ENGINE_VERSION

    deadline = time.monotonic() + 30
    while not stored():
        assert time.monotonic() < deadline, celery_worker_proc.log.read_text()[-2000:]
        time.sleep(0.1)
    room.refresh_from_db()
    snap = EngineSnapshot.objects.get(room=room)
    assert 0 < snap.room_version <= room.version and snap.blob
    assert "snapshot" not in celery_worker_proc.log.read_text()  # no failure logged


EXITS_AT_ONCE = """
import os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
django.setup()
from controller import snapshots
from controller.rooms import actions, controls, create, reading, runtime
real = snapshots.dump
def slow(sim):  # the child takes a second: longer than this process takes to exit
    time.sleep(1.0)
    return real(sim)
snapshots.dump = slow
room = create.room_create("exits", sys.stdin.read(), None, 10.0)
print(room.pk)
"""


def test_a_process_that_exits_right_after_forking_a_snapshot_waits_until_it_is_stored(
    transactional_db, redis_server
) -> None:
    """A short-lived process (a management command that made a big room) forks the room's
    first snapshot and exits: its collector thread would die with it and the snapshot never
    be stored, so that the worker replays the room from its scenario. It waits at exit."""
    import subprocess
    import sys
    from pathlib import Path

    from django.db import connection

    from tests.postgres_plugin import database_url
    from tests.redis_plugin import TEST_REDIS

    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
        "REDIS_URL": TEST_REDIS.url,
        "PLAYGROUND_SNAPSHOT_FORK": "1",
        "PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS": "0",
    }
    env.pop("PLAYGROUND_TEST_DB", None)
    proc = subprocess.run(
        [sys.executable, "-c", EXITS_AT_ONCE],
        input=SCENARIO,
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    room_id = int(proc.stdout.strip().splitlines()[-1])
    snap = EngineSnapshot.objects.get(room_id=room_id)  # stored before the process ended
    assert snap.blob and snap.engine_version == runtime.ENGINE_VERSION
    assert "snapshot" not in proc.stderr  # no failure logged


def test_rooms_restored_together_take_their_periodic_snapshots_in_different_beats(
    settings, transactional_db, redis_server
) -> None:
    """A worker restart restores all its rooms in one beat. Their periodic snapshots (each
    SNAPSHOT_EVERY_S after the room's last) must not then all fall due in one beat, every
    SNAPSHOT_EVERY_S: that beat's ticks would all be late (50 small rooms: 1.6 s)."""
    settings.PLAYGROUND_SNAPSHOT_FORK = False
    rooms = [create.room_create("spread", SCENARIO, None, 10.0) for _ in range(10)]
    runtime.forget_cache()  # the restart
    restored = [runtime._runtime(Room.objects.get(pk=room.pk)) for room in rooms]
    now = time.monotonic()
    due = sorted(rt.snapshot_at + runtime.SNAPSHOT_EVERY_S - now for rt in restored)
    assert due[-1] <= runtime.SNAPSHOT_EVERY_S  # none later than without the spread
    # ten rooms over 30 s: at least a beat (1 s) between any two
    assert min(b - a for a, b in zip(due, due[1:])) >= 1.0, due
