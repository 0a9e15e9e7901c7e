"""A pod Table row (or a pod list's item) serialised once per pod view (``kubectl get pods -A`` of a 150,000-pod
room): what printers.pod_view_row makes of a view, as JSON bytes with holes where the
answer's clock goes (the wall-clock timestamps and the AGE cell, which move as the room's
clock runs), kept while the view's text and resourceVersion stay. An answer fills the holes
with its own clock (objects.Clock: each instant formatted once per answer), so the rows are
the ones pod_view_row makes, byte for byte, without parsing the view again.

Kept for the room listed last, in this process (about 0.6 KB a pod's row, 1.7 KB its item)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

import orjson

from .objects import Clock, pod
from .printers import pod_view_row, translate_timestamp_since

# (room, form) pairs kept: one room's Table rows and its list items. At 150,000 pods the
# rows take about 80 MB, the items about 250 MB (measured at 30,000: 16 and 49 MB).
ROOMS_KEPT = 2
ITEM = "Item"
KEYS_KEPT = 400_000  # pods of one room; over it the table starts again
# In the template: a timestamp of simulated instant t is "\u0000t\u0000", its age
# "\u0001\u0000t\u0000\u0001" (orjson escapes the control characters this way).
_HOLE = re.compile(rb"\\u0001\\u0000([^\\]*)\\u0000\\u0001|\\u0000([^\\]*)\\u0000")


class _Ages(dict):  # type: ignore[type-arg]
    """translateTimestampSince's cache of the template clock: every age is a hole."""

    def get(self, ts: str, default: Any = None) -> str:
        return "\x01" + ts + "\x01"


class _TemplateClock(Clock):
    """A clock whose every timestamp is a hole."""

    def __init__(self) -> None:
        super().__init__(0.0, datetime(2000, 1, 1, tzinfo=UTC))
        self.shown = _Ages()

    def time(self, t_s: float | None) -> str | None:
        return None if t_s is None else f"\x00{float(t_s)!r}\x00"


Template = tuple[int, int, str, bytes, tuple[tuple[int, int, bool, float], ...]]


def template(view: dict[str, Any], rv: int, include: str, quick: int) -> Template:
    """(quick, rv, include, JSON with holes, holes: (start, end, is_age, t)): a Table row
    (``include`` Metadata or None), or with ``include`` "Item" the Pod as a list's item
    (objects.pod without kind and apiVersion)."""
    if include == ITEM:
        obj = pod(view, _TemplateClock(), rv)
        del obj["kind"], obj["apiVersion"]
        blob = orjson.dumps(obj)
    else:
        blob = orjson.dumps(pod_view_row(view, _TemplateClock(), rv, include))
    holes = []
    for m in _HOLE.finditer(blob):
        age = m.group(1) is not None
        holes.append((m.start(), m.end(), age, float(m.group(1) if age else m.group(2))))
    return (quick, rv, include, blob, tuple(holes))


def render(t: Template, clock: Clock) -> bytes:
    blob, holes = t[3], t[4]
    if not holes:
        return blob
    parts = []
    at = 0
    for start, end, age, t_s in holes:
        parts.append(blob[at:start])
        ts = clock.time(t_s) or ""
        parts.append((translate_timestamp_since(ts, clock) if age else ts).encode())
        at = end
    parts.append(blob[at:])
    return b"".join(parts)


class Rows:
    """room -> pod key -> Template."""

    def __init__(self) -> None:
        self._rooms: OrderedDict[Any, dict[str, Template]] = OrderedDict()
        self._lock = threading.Lock()

    def table(self, room_id: Any) -> dict[str, Template]:
        with self._lock:
            rows = self._rooms.get(room_id)
            if rows is None:
                rows = self._rooms[room_id] = {}
                while len(self._rooms) > ROOMS_KEPT:
                    self._rooms.popitem(last=False)
            else:
                self._rooms.move_to_end(room_id)
            if len(rows) > KEYS_KEPT:
                rows = self._rooms[room_id] = {}
            return rows


ROWS = Rows()
