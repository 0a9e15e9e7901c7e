"""A room's clock: where simulated time stands at a wall instant, re-anchoring it, the
message its pages re-anchor from, and the pace it really keeps (a room too big for its
ticks' work budget runs slower than asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from django.conf import settings

from ..locks import redis_client
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


def _clock_message(room: Room, effective: float | None = None) -> dict[str, Any]:
    """What a room's pages re-anchor their clock from (speed, paused, simulated time), and
    the speed it really runs at when its ticks cannot keep up (``effective``, tick.py; None
    when it keeps up or is not known: a control's message)."""
    return {
        "type": "clock",
        "speed": room.speed,
        "paused": room.paused,
        "t": room.sim_ms / 1000,
        "effective": effective,
    }


# -- time controls --------------------------------------------------------------------------
def _reanchor(room: Room, wall_now: datetime) -> None:
    room.sim_anchor_ms = _now_target(room, wall_now)
    room.wall_anchor = wall_now


def clock_fields(room: Room) -> tuple[Any, ...]:
    """What moves a room's clock besides its ticks: speed, pause, the anchors (a control, a
    step, a wake), idle. A tick that finds them changed after its engine ran knows that a
    user (or beat) did something meanwhile."""
    return (room.speed, room.paused, room.sim_anchor_ms, room.wall_anchor, room.idle_since)


# A room is said to be slowed while one of its last SLOWED_TICKS ticks ran out of its work
# budget and its pace is under SLOWED_BELOW of the speed asked.
SLOWED_TICKS = 4
SLOWED_BELOW = 0.95
PACE_WEIGHT = 0.3  # of a tick's figures in the moving averages


@dataclass
class Pace:
    """How fast a room's clock really goes in this worker: moving averages of the simulated
    ms a tick gained and of the wall ms since the tick before (the ticks' wall instants, as
    beat gives them), measured while nothing but the ticks moved the clock. A room that keeps
    up gains exactly ``speed`` times the wall time; one whose ticks run out of their budget
    (tick.py) gains what the budget allowed."""

    clock: tuple[Any, ...]  # clock_fields as the last tick left them
    wall: datetime  # the last tick's wall instant
    gain: float = 0.0
    span: float = 0.0
    since_short: int = SLOWED_TICKS  # ticks since one ran out of its budget
    published: float | None = None  # the effective speed last told snapshots (publish)

    def tick(self, clock: tuple[Any, ...], wall: datetime, gained_ms: int, ran_out: bool) -> None:
        """A tick that found the room's clock as ``clock``, ran at ``wall`` and gained
        ``gained_ms``; ``ran_out``: its budget was spent before the room's "now"."""
        span = (wall - self.wall).total_seconds() * 1000
        if clock != self.clock or span <= 0:
            self.gain = self.span = 0.0  # a control moved the clock: measured afresh
        elif self.span == 0:
            self.gain, self.span = float(gained_ms), span
        else:
            self.gain += PACE_WEIGHT * (gained_ms - self.gain)
            self.span += PACE_WEIGHT * (span - self.span)
        self.wall = max(self.wall, wall)
        self.since_short = 0 if ran_out else self.since_short + 1

    def slowed(self, room: Room) -> float | None:
        """The room's effective speed (simulated s per wall s) when it is slowed, else
        None (it keeps up, is paused, or there are no figures yet)."""
        if room.paused or self.since_short >= SLOWED_TICKS or self.span <= 0:
            return None
        effective = self.gain / self.span
        return round(effective, 3) if effective < SLOWED_BELOW * room.speed else None


def _effective_key(room_id: int) -> str:
    return f"playground:room:{room_id}:effective"


def publish_effective(room_id: int, pace: Pace, effective: float | None) -> None:
    """What the room's snapshots (snapshot.json, the websocket's) say of its effective
    speed, so that a page opened now shows the note at once: kept in Redis by the worker
    that ticks it, for a few beats (renewed while slowed, gone when it keeps up). Best
    effort: Redis away, snapshots say nothing until it is back."""
    if effective is None and pace.published is None:
        return
    try:
        if effective is None:
            redis_client().delete(_effective_key(room_id))
        else:
            ttl = max(10, 3 * SLOWED_TICKS * settings.PLAYGROUND_TICK_SECONDS)
            redis_client().set(_effective_key(room_id), repr(effective), ex=int(ttl))
        pace.published = effective
    except redis.RedisError:
        pass


def effective_of(room: Room) -> float | None:
    """The room's effective speed as its worker last published it (None: it keeps up, is
    paused, or nothing is known)."""
    if room.paused:
        return None
    try:
        value = redis_client().get(_effective_key(room.pk))
        effective = float(value) if value is not None else None
    except (redis.RedisError, ValueError):
        return None
    return effective if effective is not None and effective < room.speed else None
