"""Bounded deltas, the clients' side: a tick too large to broadcast sends a ``resync`` notice
instead (rooms/broadcast.py: ``bounded``); every client then fetches the room's snapshot over
HTTP (``snapshot.json``), which is built once per room version and served gzipped to all of
them, and replays the deltas that arrived meanwhile. The websocket's snapshot on connect is
built from the same cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..models import ObjectView, Room
from ..rooms import reading

# -- one snapshot per room version, shared by every client of this process -----------------
_CACHE: OrderedDict[tuple[int, str, int, int], bytes] = OrderedDict()
_LOCK = threading.Lock()
_CACHE_SIZE = 8
# At most this many bytes of snapshots in all (the newest is always kept): a 5,000-node room's
# is ~89 MB, and eight of them would hold 700 MB in each web process.
CACHE_BYTES = 256 * 1024 * 1024


def snapshot_bytes(room: Room, extra: dict[str, Any] | None = None) -> bytes:
    """The room's snapshot as JSON bytes (reading.room_snapshot without the lesson, or with
    ``extra`` keys: a client's role and lesson state): its rows and events built once per
    (room, seq, version) by this process, so that a hundred clients connecting or resyncing
    after one big tick cost one build; its clock (reading.snapshot_clock) is of now, from
    ``room`` as the caller read it."""
    # The operator token too: a room id can come back (a rolled-back insert on SQLite, a
    # test database), with the same seq and version; the token is the room's own.
    key = (room.pk, room.operator_token, room.seq, room.version)
    with _LOCK:
        body = _CACHE.get(key)
        if body is not None:
            _CACHE.move_to_end(key)
    if body is None:
        # Without the lesson: its state is per role and changes without a new room version
        # (answers, reveal); a resyncing page keeps the lesson it has (and its broadcasts).
        body = reading.room_snapshot_json(room)
        with _LOCK:
            _CACHE[key] = body
            while len(_CACHE) > 1 and (
                len(_CACHE) > _CACHE_SIZE or sum(map(len, _CACHE.values())) > CACHE_BYTES
            ):
                _CACHE.popitem(last=False)
    return reading.with_tail(body, {**reading.snapshot_clock(room), **(extra or {})})


def view_rows(room: Room) -> int:
    """How many view rows (nodes, pods, zones...) the room has: its snapshot's size, without
    building it."""
    return ObjectView.objects.filter(room=room).count()
