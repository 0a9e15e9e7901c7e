"""/healthz: database, Redis, a Celery worker (ping) and beat (age of its last tick)."""

from __future__ import annotations

import time
from typing import Any

import redis
from django.conf import settings
from django.db import connection

BEAT_MAX_AGE_S = 10.0


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
        return {"ok": True}
    except Exception as exc:
        return {"ok": False, "error": str(exc)[:200]}


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


def health() -> tuple[int, dict[str, Any]]:
    parts = {"database": check_database(), "redis": check_redis()}
    if parts["redis"]["ok"]:
        parts["celery_worker"] = check_worker()
        parts["celery_beat"] = check_beat()
    else:
        parts["celery_worker"] = {"ok": False, "error": "Redis (the broker) is down"}
        parts["celery_beat"] = {"ok": False, "error": "Redis (the broker) is down"}
    failing = [name for name, part in parts.items() if not part["ok"]]
    body = {"status": "ok" if not failing else "failing", "failing": failing, **parts}
    return (200 if not failing else 503), body
