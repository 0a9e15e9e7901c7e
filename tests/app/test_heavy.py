"""Issue #35, "heavy work apart from ticks": room builds, import previews, imports and what-if
runs go to the "heavy" queue, which only heavy workers consume (playground/workers.py), so
that rooms go on ticking while they run; one address has at most
PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS of them at once (controller/heavy.py); each stops at
PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS and says so. Real Redis, real workers."""

from __future__ import annotations

import io
import json
import time
from html import escape
from pathlib import Path

import pytest

from controller import affinity, heavy
from controller.bench.build import big_room_text
from controller.bench.kubectl_list import big_kubectl_list
from controller.locks import redis_client
from controller.models import Room
from controller.rooms import build, create, imports
from playground.workers import HEAVY_QUEUE, TICK_QUEUE
from scripts.supervisor_conf import config
from tests.app.conftest import Worker
from tests.app.test_import_export import _room
from tests.app.test_rooms import SCENARIO, wait_for

CAP = "PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS=2: your address already has 2 heavy jobs"
LIST = big_kubectl_list(40, 25, "yaml")  # 1.4 MB: a Preview imported by a worker
LONG_LIST = big_kubectl_list(80, 25, "yaml")  # 2.8 MB: seconds of a worker's CPU each


def _queued(queue: str) -> list[str]:
    """The task names waiting in ``queue`` (kombu's Redis list)."""
    out = []
    for raw in redis_client().lrange(queue, 0, -1):
        out.append(json.loads(raw)["headers"]["task"])
    return out


def _preview(client, text: str = LIST, address: str = "10.0.0.1"):
    upload = io.BytesIO(text.encode())
    upload.name = "cluster.yaml"
    data = {"imp-speed": "10", "imp-name": "", "imp-flags": "", "imp-upload": upload}
    return client.post("/", {**data, "preview": "1"}, REMOTE_ADDR=address)


def _what_if(client, room: Room, address: str = "10.0.0.1"):
    return client.post(
        f"/rooms/{room.slug}/whatif",
        {"zone": "eu-west-1b", "token": room.operator_token},
        REMOTE_ADDR=address,
    )


def _big_room(client, name: str, address: str = "10.0.0.1"):
    upload = io.BytesIO(big_room_text(30, 600).encode())
    upload.name = "s.yaml"
    return client.post("/", {"name": name, "speed": "10", "upload": upload}, REMOTE_ADDR=address)


def test_previews_what_ifs_and_builds_go_to_the_heavy_queue_not_the_ticks(
    client, transactional_db, redis_server
) -> None:
    client_redis = redis_client()
    client_redis.delete(HEAVY_QUEUE, TICK_QUEUE)
    room = _room()
    assert _preview(client).status_code == 302
    assert _what_if(client, room, "10.0.0.2").status_code == 200
    assert _big_room(client, "big", "10.0.0.3").status_code == 302
    assert sorted(_queued(HEAVY_QUEUE)) == [
        "controller.tasks.import_preview_task",
        "controller.tasks.room_build_task",
        "controller.tasks.what_if_task",
    ]
    assert _queued(TICK_QUEUE) == []
    # Not on a tick worker's own queue either (a build went to the room's owner's before).
    affinity.beat(client_redis, "tick-w@h")
    try:
        build.queue_build(Room.objects.get(name="big").pk)
        assert _queued("tick-w@h.dq2") == [] and len(_queued(HEAVY_QUEUE)) == 4
    finally:
        affinity.leave(client_redis, "tick-w@h")


def test_the_third_heavy_job_of_one_address_is_refused_and_a_slot_expires(
    client, transactional_db, redis_server
) -> None:
    room = _room()
    assert _preview(client).status_code == 302
    assert _what_if(client, room).status_code == 200
    # The third, of whatever kind, is refused with the setting named; nothing is stored.
    kept = len(redis_client().keys("playground:import-preview:*"))
    page = _preview(client).content.decode()
    assert escape(CAP) in page
    assert len(redis_client().keys("playground:import-preview:*")) == kept
    refused = _what_if(client, room)
    assert refused.status_code == 429 and refused.json()["error"].startswith(CAP)
    assert escape(CAP) in _big_room(client, "third").content.decode()
    assert not Room.objects.filter(name="third").exists()
    # Another address is not held back.
    assert _big_room(client, "other", "10.9.9.9").status_code == 302
    # A worker killed mid-job never gives its slot back: it expires by itself.
    owner = "addr:10.0.0.1"
    assert len(heavy.running(owner)) == 2
    key = f"playground:heavy:{owner}"
    for job in heavy.running(owner):
        redis_client().zadd(key, {job: time.time() - 1})
    assert _preview(client).status_code == 302
    assert 0 < redis_client().ttl(key) <= heavy.QUEUED_S + 1


def test_a_job_that_ends_gives_its_slot_back(client, transactional_db, redis_server) -> None:
    bad = LIST.replace("memory: 128Mi", 'memory: "16GB"', 1)
    for _ in range(2):
        response = _preview(client, bad)
        assert response.status_code == 302
        preview_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
        imports.preview_run(preview_id)  # as the heavy worker does (here: failed, the error)
        assert imports.preview_state(preview_id)["state"] == "failed"
    assert heavy.running("addr:10.0.0.1") == []
    assert _preview(client).status_code == 302 and _preview(client).status_code == 302


def test_a_preview_is_kept_minutes_not_an_hour(client, transactional_db, redis_server) -> None:
    response = _preview(client)
    preview_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    ttl = redis_client().ttl(f"playground:import-preview:{preview_id}")
    assert 0 < ttl <= 900


def test_rooms_tick_while_the_heavy_worker_is_busy(
    transactional_db, redis_server, celery_beat_proc, tmp_path: Path
) -> None:
    """Six long Previews at once (as the attack's four POSTs, plus two): the heavy worker takes
    them one by one, the tick worker's threads stay free: the room ticks on while all of them
    are still running. (On one shared worker they held every thread: no tick until they
    ended.) The heavy worker's previews wait, once started, until the test releases them
    (tests/app/heavy_hold.py), so "still running" does not depend on the machine's load."""
    from django.db import connection

    from tests.app import heavy_hold

    db = connection.settings_dict["NAME"]
    ticker = Worker(db, tmp_path / "w.log")
    busy = Worker(db, tmp_path / "h.log", heavy=True, include="tests.app.heavy_hold")
    redis_client().delete(heavy_hold.HELD, heavy_hold.RELEASE)
    ticker.start()
    busy.start()
    try:
        room = create.room_create("ticking", SCENARIO, None, 10.0)
        stats = affinity.stats_key(room.pk)

        def ticks() -> int:
            return int(redis_client().hget(stats, "ticks") or 0)

        wait_for(lambda: ticks() >= 2, 120, "the room to tick")
        ids = [imports.preview_start(LONG_LIST, {"options": {}}) for _ in range(6)]

        def unfinished() -> int:
            return sum(imports.preview_state(i)["state"] == "running" for i in ids)

        wait_for(
            lambda: redis_client().scard(heavy_hold.HELD) >= 1,
            120,
            "the heavy worker to start a preview",
        )
        before = ticks()
        wait_for(lambda: ticks() >= before + 3, 120, "three more ticks")
        assert unfinished() == 6, "a held preview finished"
        assert {m.decode() for m in redis_client().smembers(heavy_hold.HELD)} <= set(ids)
        redis_client().set(heavy_hold.RELEASE, 1)
        wait_for(lambda: unfinished() < 6, 300, "a released preview to finish")
    except AssertionError as exc:
        logs = busy.log.read_text(errors="replace")[-2000:]
        raise AssertionError(f"{exc}\n{logs}") from None
    finally:
        ticker.kill()
        busy.kill()
        redis_client().delete(heavy_hold.HELD, heavy_hold.RELEASE)


def test_a_job_past_its_time_limit_stops_and_says_so(
    client, transactional_db, redis_server, tmp_path: Path, monkeypatch
) -> None:
    from django.db import connection

    monkeypatch.setenv("PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS", "1")
    stopped = "stopped: took longer than 1 s (PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS)"
    long_list = big_kubectl_list(120, 30, "yaml")
    preview = _preview(client, long_list)
    # 1,500 nodes / 45,000 pods: about 3.5 s of CPU to build here, well past the 1 s limit
    # (300 / 9,000 took 0.7 s on a quiet machine and went live).
    room = build.room_start("too big", big_room_text(1500, 45000), None, 10.0)
    worker = Worker(connection.settings_dict["NAME"], tmp_path / "h.log", heavy=True)
    worker.start()
    try:
        url = preview["Location"][:-1] + ".json"
        wait_for(lambda: client.get(url).json()["state"] != "running", 120, "the preview")
        wait_for(lambda: Room.objects.get(pk=room.pk).build_state != "building", 120, "the build")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{worker.log.read_text(errors='replace')[-3000:]}") from None
    finally:
        worker.kill()
    page = client.get(preview["Location"]).content.decode()
    assert 'data-state="failed"' in page and f'id="import-error">{escape(stopped)}</p>' in page
    room.refresh_from_db()
    assert (room.build_state, room.build_error) == ("failed", stopped)
    assert heavy.running("addr:10.0.0.1") == []


def test_a_preview_whose_process_was_killed_at_the_hard_limit_says_so(
    client, transactional_db, redis_server, settings
) -> None:
    settings.PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS = 5
    preview_id = imports.preview_start(LIST, {"options": {}})
    key = imports._preview_key(preview_id)
    redis_client().hset(key, "started", repr(time.time() - 5 - heavy.HARD_GRACE_S - 6))
    state = imports.preview_state(preview_id)
    assert state["state"] == "failed"
    assert state["error"] == "stopped: took longer than 5 s (PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS)"


def test_a_what_if_past_its_time_limit_fails_with_the_message(client, db, settings) -> None:
    from celery.exceptions import TimeLimitExceeded

    settings.PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS = 7
    message = "stopped: took longer than 7 s (PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS)"
    assert heavy.failure_message(TimeLimitExceeded(37)) == message
    assert heavy.failure_message(heavy.JobStopped(message)) == message
    assert heavy.failure_message(ValueError("zone: unknown")) == "zone: unknown"


@pytest.mark.parametrize(("heavies", "concurrency"), [(None, None), ("2", "1")])
def test_make_run_starts_tick_and_heavy_workers(tmp_path: Path, heavies, concurrency) -> None:
    env = {"WORKER_PROCESSES": "2"}
    if heavies:
        env |= {"HEAVY_WORKER_PROCESSES": heavies, "HEAVY_WORKER_CONCURRENCY": concurrency}
    conf = config(tmp_path, env)
    programs = [line for line in conf.splitlines() if line.startswith("[program:")]
    count = int(heavies or 1)
    assert programs == [
        "[program:web-0]",
        "[program:worker-1]",
        "[program:worker-2]",
        *(f"[program:heavy-{i}]" for i in range(1, count + 1)),
        "[program:beat]",
    ]
    for i in range(1, count + 1):
        command = next(
            line for line in conf.split(f"[program:heavy-{i}]")[1].splitlines() if "command" in line
        )
        assert f"--pool=prefork --concurrency={concurrency or 2} -Q heavy" in command
        assert f"-n heavy-{i}@%%h" in command and "--max-memory-per-child=" in command
    worker = next(
        line for line in conf.split("[program:worker-1]")[1].splitlines() if "command" in line
    )
    assert "--pool=threads --concurrency=4 -Q celery" in worker


def test_a_build_killed_at_its_hard_limit_is_failed_not_queued_again(
    db, redis_server, monkeypatch, settings
) -> None:
    settings.PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS = 60
    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    rooms = [build.room_start(f"r{i}", big_room_text(30, 600), None, 10.0) for i in range(2)]
    client = redis_client()
    for room in rooms:
        client.delete(f"playground:room:{room.pk}:build-queued")
    # The first was killed 10 s into its build (kill -9): queued again. The second had run
    # past its time limit when its process went: failed, with the limit's message.
    client.set(build._started_key(rooms[0].pk), repr(time.time() - 10))
    client.set(build._started_key(rooms[1].pk), repr(time.time() - 61))
    assert sorted(build.requeue_lost_builds()) == sorted(r.pk for r in rooms)
    assert queued == [rooms[0].pk]
    assert client.get(build._started_key(rooms[0].pk)) is None
    states = {r.pk: (r.build_state, r.build_error) for r in Room.objects.filter(pk__in=queued)}
    assert states == {rooms[0].pk: ("building", "")}
    failed = Room.objects.get(pk=rooms[1].pk)
    assert (failed.build_state, failed.build_error) == (
        "failed",
        "stopped: took longer than 60 s (PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS)",
    )
