"""The foundation with real parts: a Celery task through the real Redis broker run by a
real worker, a websocket client receiving a group message over the real channels_redis
layer, and /healthz (200 with everything up, 503 naming Redis when it is down)."""

from __future__ import annotations

import time

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings

from controller import services
from controller.models import Room
from playground.asgi import application
from tests.redis_plugin import TEST_REDIS

DEMO = (services.BUILTIN_DIR / "01-single-node-failure.yaml").read_text()


def test_settings_use_real_redis_and_no_eager_celery() -> None:
    assert TEST_REDIS.url == settings.REDIS_URL
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    print(
        f"\nredis under test: {settings.REDIS_URL}; channel layer: {type(get_channel_layer()).__name__}"
    )


def test_celery_task_runs_on_a_real_worker_through_redis(celery_worker_proc) -> None:
    from controller.tasks import ping_task
    from playground.celery import app

    assert app.conf.broker_url == TEST_REDIS.url
    result = ping_task.delay(41)
    assert result.get(timeout=20) == 42
    print(f"\ncelery: task {result.id} ran on {list(app.control.ping(timeout=1))}")


@pytest.mark.django_db(transaction=True)
def test_websocket_client_receives_a_group_message_through_redis() -> None:
    room = services.room_create("ws", DEMO)

    async def scenario() -> None:
        comm = WebsocketCommunicator(
            application, f"/ws/rooms/{room.slug}/", headers=[(b"origin", b"http://localhost")]
        )
        connected, _ = await comm.connect()
        assert connected
        snapshot = await comm.receive_json_from(timeout=10)
        assert snapshot["type"] == "snapshot" and snapshot["role"] == "viewer"
        layer = get_channel_layer()
        await layer.group_send(
            services.group_name(room.pk),
            {"type": "room.message", "message": {"type": "hello", "via": "redis"}},
        )
        got = None
        for _ in range(5):
            msg = await comm.receive_json_from(timeout=5)
            if msg["type"] == "hello":
                got = msg
                break
        assert got == {"type": "hello", "via": "redis"}
        await comm.disconnect()

    async_to_sync(scenario)()


def _health(client):
    response = client.get("/healthz")
    return response.status_code, response.json()


def test_healthz_green_then_503_naming_redis_then_green_again(
    client, celery_worker_proc, celery_beat_proc
) -> None:
    deadline = time.monotonic() + 30
    status, body = _health(client)
    while status != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
        status, body = _health(client)
    assert status == 200, body
    assert body["failing"] == []
    TEST_REDIS.stop()
    try:
        status, body = _health(client)
        assert status == 503
        assert "redis" in body["failing"]
    finally:
        TEST_REDIS.start()
    deadline = time.monotonic() + 30
    status, body = _health(client)
    while status != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
        status, body = _health(client)
    assert status == 200, body


def test_landing_page_lists_rooms(client, db) -> None:
    Room.objects.all().delete()
    services.room_create("Class demo", DEMO)
    page = client.get("/").content.decode()
    assert "node-failure playground" in page.lower()
    assert "Class demo" in page
