"""Messages to a room's pages: sent to its Channels group once the transaction commits."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

log = logging.getLogger(__name__)


# -- broadcasting ---------------------------------------------------------------------------
def group_name(room_id: int) -> str:
    return f"room-{room_id}"


def _broadcast_after_commit(room_id: int, message: dict[str, Any]) -> None:
    def send() -> None:
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(
                group_name(room_id), {"type": "room.message", "message": message}
            )
        except Exception:  # the layer (Redis) is down: clients resync by snapshot later
            log.exception("broadcast to room %s failed", room_id)

    transaction.on_commit(send)
