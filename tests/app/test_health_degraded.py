"""/healthz says "degraded" (issue #35): for 16 minutes one room's tick held the database and
every other room's ticks failed, while /healthz stayed green. Now a running room whose last
tick is late (beyond beat's period by more than PLAYGROUND_HEALTH_TICK_LATE_SECONDS), or a
database slow to answer SELECT 1 (past PLAYGROUND_HEALTH_DB_SLOW_SECONDS), makes it
"degraded", naming which and how late or slow. Real Redis (the rooms' tick times) and the
test database; no worker or beat runs here, so those two parts fail and are not looked at."""

from __future__ import annotations

import time

import redis

from controller import health
from controller.affinity import TICKED_KEY
from controller.models import Room
from controller.rooms import catalog, controls, create

SINGLE = (catalog.BUILTIN_DIR / "01-single-node-failure.yaml").read_text()


def _ticked(redis_server, room: Room, seconds_ago: float) -> None:
    """What tasks._record_tick writes after a tick, ``seconds_ago``."""
    client = redis.Redis.from_url(redis_server.url)
    client.zadd(TICKED_KEY, {str(room.pk): time.time() - seconds_ago})


def test_late_ticks_make_healthz_degraded_naming_the_rooms(
    client, db, redis_server, settings
) -> None:
    settings.PLAYGROUND_TICK_SECONDS = 1.0
    settings.PLAYGROUND_HEALTH_TICK_LATE_SECONDS = 5.0
    late = create.room_create("late", SINGLE, None, 10.0)
    fine = create.room_create("fine", SINGLE, None, 10.0)
    paused = create.room_create("paused", SINGLE, None, 10.0)
    controls.room_control(paused.pk, "pause", None, "test")
    started = time.time()
    _ticked(redis_server, late, 31)
    _ticked(redis_server, fine, 0.5)
    _ticked(redis_server, paused, 600)  # a paused room is not expected to tick

    body = client.get("/healthz").json()
    took = time.time() - started  # (the worker's ping waits 1 s: none runs here)
    ticks = body["ticks"]
    assert "ticks" in body["degraded"]
    assert ticks["ok"] is True and ticks["rooms"] == 2 and ticks["late_rooms"] == 1
    assert 29.9 <= ticks["late_seconds"] <= 30.1 + took  # 31 s old, a 1 s period
    assert ticks["late"].startswith(
        "1 of 2 running rooms tick late (beyond beat's 1 s period by more than "
        f"PLAYGROUND_HEALTH_TICK_LATE_SECONDS, 5 s): {late.slug} "
    )

    _ticked(redis_server, late, 0.2)  # ticked again
    body = client.get("/healthz").json()
    assert "ticks" not in body["degraded"] and "late" not in body["ticks"]


def test_a_room_never_ticked_is_late_from_its_creation(db, redis_server, settings) -> None:
    settings.PLAYGROUND_TICK_SECONDS = 1.0
    settings.PLAYGROUND_HEALTH_TICK_LATE_SECONDS = 5.0
    room = create.room_create("never", SINGLE, None, 10.0)
    redis.Redis.from_url(redis_server.url).zrem(TICKED_KEY, str(room.pk))
    assert "late" not in health.check_ticks()  # just created
    later = health.check_ticks(now=time.time() + 60)
    assert later["late_rooms"] == 1 and 53 <= later["late_seconds"] <= 60


def test_a_slow_database_makes_healthz_degraded_saying_how_slow(client, db, settings) -> None:
    body = client.get("/healthz").json()
    assert "database" not in body["degraded"] and body["database"]["ok"]
    assert 0 <= body["database"]["seconds"] < settings.PLAYGROUND_HEALTH_DB_SLOW_SECONDS
    settings.PLAYGROUND_HEALTH_DB_SLOW_SECONDS = 0.0  # any answer is slower than this
    body = client.get("/healthz").json()
    assert "database" in body["degraded"] and body["database"]["ok"]
    assert body["database"]["slow"].startswith("SELECT 1 took ")
    assert body["database"]["slow"].endswith(" s (PLAYGROUND_HEALTH_DB_SLOW_SECONDS: 0 s)")


def test_degraded_alone_is_200_and_failing_wins() -> None:
    assert health.status_of({"a": {"ok": True}, "b": {"ok": True, "slow": "x"}}) == (
        200,
        "degraded",
        [],
        ["b"],
    )
    assert health.status_of({"a": {"ok": False}, "b": {"ok": True, "late": "x"}}) == (
        503,
        "failing",
        ["a"],
        ["b"],
    )
    assert health.status_of({"a": {"ok": True}}) == (200, "ok", [], [])
