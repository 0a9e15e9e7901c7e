"""/healthz: database, Redis, a Celery worker (ping) and beat (age of its last tick), each
"ok" or failing (503); and two signs of a server that answers but lags, "degraded" (200):
the database slow to answer a trivial query, the running rooms' ticks late."""

from __future__ import annotations

import time
from typing import Any

import redis
from django.conf import settings
from django.db import connection

BEAT_MAX_AGE_S = 10.0


def check_database() -> dict[str, Any]:
    """SELECT 1, timed: failing when it raises; "slow" (degraded) past
    PLAYGROUND_HEALTH_DB_SLOW_SECONDS (a database held by a long write answers late)."""
    started = time.perf_counter()
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchone()
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}
    took = time.perf_counter() - started
    limit = settings.PLAYGROUND_HEALTH_DB_SLOW_SECONDS
    out: dict[str, Any] = {"ok": True, "seconds": round(took, 4)}
    if took > limit:
        out["slow"] = f"SELECT 1 took {took:.3f} s (PLAYGROUND_HEALTH_DB_SLOW_SECONDS: {limit:g} s)"
    return out


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=0.5, socket_connect_timeout=0.5)


def check_redis() -> dict[str, Any]:
    try:
        _redis().ping()
        return {"ok": True}
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}


def check_worker() -> dict[str, Any]:
    from playground.celery import app

    try:
        replies = app.control.ping(timeout=1.0)
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}
    if not replies:
        return {"ok": False, "error": "no Celery worker answered a ping within 1 s"}
    return {"ok": True, "workers": sorted(name for r in replies for name in r)}


def check_beat() -> dict[str, Any]:
    from .tasks import BEAT_KEY

    try:
        raw = _redis().get(BEAT_KEY)
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}
    if raw is None:
        return {"ok": False, "error": "beat has not ticked yet"}
    age = time.time() - float(raw)
    return {"ok": age <= BEAT_MAX_AGE_S, "age_seconds": round(age, 2)}


def check_ticks(now: float | None = None) -> dict[str, Any]:
    """How late the running rooms' ticks are: each room that should tick (live, not paused,
    watched, not expired) against when it was last ticked (tasks._record_tick; a room never
    ticked, from when it was created). Beat ticks every PLAYGROUND_TICK_SECONDS, so a room whose last tick
    is more than that plus PLAYGROUND_HEALTH_TICK_LATE_SECONDS old is late; ``late`` says so
    with the latest rooms (worst first) and how late they are."""
    from .affinity import TICKED_KEY
    from .locks import redis_client
    from .models import Room

    now = time.time() if now is None else now
    period = settings.PLAYGROUND_TICK_SECONDS
    allowed = settings.PLAYGROUND_HEALTH_TICK_LATE_SECONDS
    try:
        rooms = list(
            Room.objects.filter(
                build_state=Room.LIVE, paused=False, idle_since__isnull=True, expired_at=None
            ).values_list("id", "slug", "created_at")
        )
        ticked = redis_client().zmscore(TICKED_KEY, [str(r[0]) for r in rooms]) if rooms else []
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}
    lateness = []
    for (_id, slug, created), last in zip(rooms, ticked, strict=True):
        since = last if last is not None else created.timestamp()
        late = now - since - period
        if late > allowed:
            lateness.append((late, slug))
    lateness.sort(reverse=True)
    out: dict[str, Any] = {"ok": True, "rooms": len(rooms), "late_rooms": len(lateness)}
    if lateness:
        worst = ", ".join(f"{slug} {late:.1f} s" for late, slug in lateness[:5])
        out["late_seconds"] = round(lateness[0][0], 1)
        out["late"] = (
            f"{len(lateness)} of {len(rooms)} running rooms tick late (beyond beat's "
            f"{period:g} s period by more than PLAYGROUND_HEALTH_TICK_LATE_SECONDS, "
            f"{allowed:g} s): {worst}"
        )
    return out


def health() -> tuple[int, dict[str, Any]]:
    """The parts, and the status: "failing" (503) when a part fails, else "degraded" (200)
    when the database is slow or ticks are late (``degraded`` names which, each part says
    how), else "ok"."""
    parts = {"database": check_database(), "redis": check_redis()}
    if parts["redis"]["ok"]:
        parts["celery_worker"] = check_worker()
        parts["celery_beat"] = check_beat()
        parts["ticks"] = check_ticks()
    else:
        parts["celery_worker"] = {"ok": False, "error": "Redis (the broker) is down"}
        parts["celery_beat"] = {"ok": False, "error": "Redis (the broker) is down"}
        parts["ticks"] = {"ok": False, "error": "Redis (the rooms' tick times) is down"}
    code, status, failing, degraded = status_of(parts)
    return code, {"status": status, "failing": failing, "degraded": degraded, **parts}


def status_of(parts: dict[str, dict[str, Any]]) -> tuple[int, str, list[str], list[str]]:
    """(HTTP status, status, the failing parts, the degraded parts): a part fails when not
    ok, is degraded when it says it is slow or late."""
    failing = [name for name, part in parts.items() if not part["ok"]]
    degraded = [name for name, part in parts.items() if part.get("slow") or part.get("late")]
    status = "failing" if failing else "degraded" if degraded else "ok"
    return (503 if failing else 200), status, failing, degraded
