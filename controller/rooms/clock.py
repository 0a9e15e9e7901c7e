"""A room's clock: where simulated time stands at a wall instant, re-anchoring it, and the
message its pages re-anchor from.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..models import (
    Room,
)


def _now_target(room: Room, wall_now: datetime) -> int:
    if room.paused:
        return max(room.sim_ms, room.sim_anchor_ms)  # a step moves the anchor of a paused room
    if room.idle_since is not None and wall_now > room.idle_since:
        wall_now = room.idle_since  # nobody watches: the clock stopped then
    elapsed = (wall_now - room.wall_anchor).total_seconds()
    return max(room.sim_ms, room.sim_anchor_ms + int(elapsed * room.speed * 1000))


def _clock_message(room: Room) -> dict[str, Any]:
    """What a room's pages re-anchor their clock from (speed, paused, simulated time)."""
    return {"type": "clock", "speed": room.speed, "paused": room.paused, "t": room.sim_ms / 1000}


# -- time controls --------------------------------------------------------------------------
def _reanchor(room: Room, wall_now: datetime) -> None:
    room.sim_anchor_ms = _now_target(room, wall_now)
    room.wall_anchor = wall_now
