"""Messages to a room's pages: sent to its Channels group once the transaction commits.

Bounded deltas: no tick broadcasts more than ``PLAYGROUND_DELTA_MAX_BYTES`` (256 KiB by
default). A tick that changed more (a zone outage in a 1,000-node room changes thousands of
pods at one instant) broadcasts a small ``resync`` notice instead (``bounded``); every client
then fetches the room's snapshot over HTTP (live/deltas.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from typing import Any

from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)


def max_bytes() -> int:
    return int(getattr(settings, "PLAYGROUND_DELTA_MAX_BYTES", 256 * 1024))


def encoded_size(message: dict[str, Any]) -> int:
    """Bytes of ``message`` as the channel layer sends it to a browser (compact JSON)."""
    return len(json.dumps(message, separators=(",", ":")).encode())


def bounded(delta: dict[str, Any]) -> dict[str, Any]:
    """``delta`` itself when it fits, else the resync notice that stands for it: the same
    ``seq`` (so clients keep their order), the clock, the refusals for the operator, and why."""
    if delta["type"] == "resync":
        return delta  # the tick knew it would not fit before making it (tick._persist)
    size = encoded_size(delta)
    limit = max_bytes()
    if size <= limit:
        return delta
    return resync_notice(delta, size, limit, len(delta.get("events") or []))


def resync_notice(delta: dict[str, Any], size: int, limit: int, events: int) -> dict[str, Any]:
    """The notice that stands for ``delta`` (its seq, clock and refusals; it has ``size``
    bytes or more, and ``events`` events)."""
    notice = {
        "type": "resync",
        "seq": delta["seq"],
        "t": delta["t"],
        "speed": delta["speed"],
        "paused": delta["paused"],
        "bytes": size,
        "limit": limit,
        "events": events,
    }
    if delta.get("refused"):
        notice["refused"] = delta["refused"]
    return notice


# -- broadcasting ---------------------------------------------------------------------------
def group_name(room_id: int) -> str:
    return f"room-{room_id}"


_LOOP_LOCK = threading.Lock()
_LOOP: tuple[int, asyncio.AbstractEventLoop] | None = None  # (process id, loop)
SEND_TIMEOUT_S = 10.0


def _loop() -> asyncio.AbstractEventLoop:
    """This process's broadcasting event loop, run by a daemon thread started on first use
    (again in a forked child). async_to_sync made a new loop in a new thread for every
    message, and the channel layer a new Redis connection for each loop: 1.9 ms of CPU per
    broadcast, 0.2 ms here (a worker ticking 25 rooms a second sends 25)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP[0] != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="broadcast", daemon=True).start()
            _LOOP = (os.getpid(), loop)
        return _LOOP[1]


def _group_send(layer: Any, group: str, event: dict[str, Any]) -> None:
    """``layer.group_send`` from sync code: on this process's loop for channels_redis (tried
    twice: a connection Redis closed, after its restart, fails once and is replaced), else
    through async_to_sync (another layer may bind its queues to the caller's loops)."""
    from channels_redis.core import RedisChannelLayer

    if not isinstance(layer, RedisChannelLayer):
        from asgiref.sync import async_to_sync

        async_to_sync(layer.group_send)(group, event)
        return
    for attempt in (1, 2):
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, event), _loop())
        try:
            future.result(timeout=SEND_TIMEOUT_S)
            return
        except Exception:
            future.cancel()
            if attempt == 2:
                raise


def _broadcast_after_commit(room_id: int, message: dict[str, Any]) -> None:
    def send() -> None:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        try:
            _group_send(layer, group_name(room_id), {"type": "room.message", "message": message})
        except Exception:  # the layer (Redis) is down: clients resync by snapshot later
            log.exception("broadcast to room %s failed", room_id)

    transaction.on_commit(send)
