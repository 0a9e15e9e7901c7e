"""The foundation with real parts: a Celery task through the real Redis broker run by a real
worker process, a websocket client receiving a group message over the real channels_redis
layer, and /healthz (200 with everything up, 503 naming Redis when it is down, 200 again after
Redis comes back, without restarting anything)."""

from __future__ import annotations

import time

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from controller.engine.versions import NEWEST_VERSION
from controller.models import Room
from controller.rooms import broadcast, catalog, create
from controller.tasks import BEAT_KEY
from playground.asgi import application

DEMO = (catalog.BUILTIN_DIR / "01-single-node-failure.yaml").read_text()


def test_settings_point_at_the_private_redis_and_celery_is_not_eager(
    redis_server, evidence
) -> None:
    from playground.celery import app

    layer = get_channel_layer()
    assert redis_server.url == settings.REDIS_URL
    assert type(layer) is RedisChannelLayer
    assert app.conf.broker_url == redis_server.url
    assert app.conf.result_backend == redis_server.url
    assert app.conf.task_always_eager is False
    evidence(
        f"channel layer {type(layer).__name__}, Celery broker {app.conf.broker_url}, "
        f"task_always_eager={app.conf.task_always_eager}"
    )


def test_celery_task_runs_on_a_real_worker_through_redis(
    celery_worker_proc, redis_server, evidence
) -> None:
    from controller.tasks import ping_task

    started = time.monotonic()
    result = ping_task.delay(41)
    assert result.get(timeout=20) == 42
    # The worker process (not this one) ran it: its result came back through Redis.
    assert type(result.backend).__name__ == "RedisBackend"
    assert celery_worker_proc.proc.poll() is None
    evidence(
        f"ping_task(41) -> 42 in {time.monotonic() - started:.2f}s, sent through "
        f"{redis_server.url} to worker process {celery_worker_proc.proc.pid} "
        f"({celery_worker_proc.name})"
    )


@pytest.mark.django_db(transaction=True)
def test_websocket_client_receives_a_group_message_through_redis(evidence) -> None:
    room = create.room_create("ws", DEMO)

    async def scenario() -> dict:
        comm = WebsocketCommunicator(
            application, f"/ws/rooms/{room.slug}/", headers=[(b"origin", b"http://localhost")]
        )
        connected, _ = await comm.connect()
        assert connected
        snapshot = await comm.receive_json_from(timeout=10)
        assert snapshot["type"] == "snapshot" and snapshot["role"] == "viewer"
        layer = get_channel_layer()
        assert isinstance(layer, RedisChannelLayer)
        await layer.group_send(
            broadcast.group_name(room.pk),
            {"type": "room.message", "message": {"type": "hello", "via": "redis"}},
        )
        got: dict = {}
        for _ in range(5):
            msg = await comm.receive_json_from(timeout=5)
            if msg["type"] == "hello":
                got = msg
                break
        await comm.disconnect()
        return got

    assert async_to_sync(scenario)() == {"type": "hello", "via": "redis"}
    evidence(f"group message delivered to a WebsocketCommunicator through {settings.REDIS_URL}")


def _health(client) -> tuple[int, dict, float]:
    started = time.monotonic()
    response = client.get("/healthz")
    return response.status_code, response.json(), time.monotonic() - started


def _wait_for_200(client, seconds: float) -> tuple[int, dict, float]:
    deadline = time.monotonic() + seconds
    status, body, took = _health(client)
    while status != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
        status, body, took = _health(client)
    return status, body, took


def test_healthz_green_then_503_naming_redis_then_green_again(
    client, redis_server, celery_worker_proc, celery_beat_proc, evidence
) -> None:
    status, body, _ = _wait_for_200(client, 30)
    assert status == 200, body
    assert body["failing"] == []
    assert body["database"]["ok"] and body["redis"]["ok"]
    assert any(w.startswith(celery_worker_proc.name) for w in body["celery_worker"]["workers"])
    assert 0 <= body["celery_beat"]["age_seconds"] < 10
    beat_tick = redis.Redis.from_url(redis_server.url).get(BEAT_KEY)  # written by the worker
    assert beat_tick is not None

    redis_server.stop()
    try:
        status, body, took = _health(client)
        assert status == 503, body
        assert "redis" in body["failing"]
        assert not body["redis"]["ok"] and body["redis"]["error"]
        assert took < 3, f"/healthz took {took:.1f}s with Redis down"
    finally:
        redis_server.start()
    down_took, down_failing = took, body["failing"]

    status, body, _ = _wait_for_200(client, 30)
    assert status == 200, body
    evidence(
        f"/healthz 200 -> Redis stopped -> 503 failing={down_failing} in {down_took:.2f}s "
        "-> Redis started -> 200 (same process, no restart)"
    )


def test_landing_page_says_what_the_product_is_and_lists_rooms(client, db) -> None:
    Room.objects.all().delete()
    create.room_create("Class demo", DEMO)
    response = client.get("/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "node-failure playground" in page.lower()
    # Which Kubernetes: the releases from 1.27 to the newest, and 1.18, named.
    assert "exactly as Kubernetes does" in page
    assert f"(1.27 to {NEWEST_VERSION}," in page and "or v1.18" in page
    assert "Class demo" in page
    assert "/static/css/playground.css" in page
    css = client.get("/static/css/playground.css")
    assert css.status_code == 200
