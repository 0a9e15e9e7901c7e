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
from collections.abc import Callable
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


# A hole: (is_age, simulated instant t); the same pair is filled with the same bytes in one
# answer (``fill``: an answer's memo of them).
Hole = tuple[bool, float]
Template = tuple[int, int, str, bytes, tuple[Hole, ...], tuple[bytes, ...]]


def template(
    view: dict[str, Any], rv: int, include: str, quick: int, holes_clock: Clock | None = None
) -> Template:
    """(quick, rv, include, JSON with holes, holes, the JSON's pieces around the holes): a
    Table row (``include`` Metadata or None), or with ``include`` "Item" the Pod as a list's
    item (objects.pod without kind and apiVersion). ``holes_clock``: a _TemplateClock to
    reuse (one per answer; a new one by default)."""
    clock = holes_clock or _TemplateClock()
    if include == ITEM:
        obj = pod(view, clock, rv)
        del obj["kind"], obj["apiVersion"]
        blob = orjson.dumps(obj)
    else:
        blob = orjson.dumps(pod_view_row(view, clock, rv, include))
    holes: list[Hole] = []
    pieces: list[bytes] = []
    at = 0
    for m in _HOLE.finditer(blob):
        age = m.group(1) is not None
        holes.append((age, float(m.group(1) if age else m.group(2))))
        pieces.append(blob[at : m.start()])
        at = m.end()
    pieces.append(blob[at:])
    return (quick, rv, include, blob, tuple(holes), tuple(pieces))


def render(t: Template, clock: Clock, fill: dict[Hole, bytes] | None = None) -> bytes:
    """The row or item at ``clock``; ``fill``: this answer's memo of the holes' bytes (an
    answer's rows share few instants), kept by the caller for one answer (one clock) only."""
    holes = t[4]
    if not holes:
        return t[3]
    if fill is None:
        fill = {}
    pieces = t[5]
    parts = [pieces[0]]
    for hole, piece in zip(holes, pieces[1:], strict=True):
        text = fill.get(hole)
        if text is None:
            ts = clock.time(hole[1]) or ""
            text = fill[hole] = (translate_timestamp_since(ts, clock) if hole[0] else ts).encode()
        parts.append(text)
        parts.append(piece)
    return b"".join(parts)


def rows(
    cached: dict[str, Template],
    keys: list[str],
    texts: dict[str, bytes],
    form: str,
    clock: Clock,
    view_rv: Callable[..., int],
) -> tuple[list[bytes], dict[str, tuple[int, bytes]]]:
    """The rows (or items) of the pods ``keys`` (their stored ``texts``) at ``clock``, and
    their states (resourceVersion, text) for a watch: each made from its template in
    ``cached`` (one room's and form's, ROWS.table), made again when its view changed. A view
    is parsed at most once (for its resourceVersion's content and its template alike);
    ``view_rv`` is store.Read.view_rv."""
    out: list[bytes] = []
    states: dict[str, tuple[int, bytes]] = {}
    fill: dict[Hole, bytes] = {}  # this answer's holes, each filled once
    holes_clock = None
    for k in keys:
        text = texts[k]
        quick = hash(text)
        got = cached.get(k)
        view = None
        if got is None or got[0] != quick or got[2] != form:
            view = orjson.loads(text)
        rv = view_rv("pods", k, text, view)
        if got is not None and view is None and got[1] != rv:
            view = orjson.loads(text)
        if view is not None:
            # Serialised once per view; the answer's clock fills its holes.
            holes_clock = holes_clock or _TemplateClock()
            got = cached[k] = template(view, rv, form, quick, holes_clock)
        assert got is not None
        states[k] = (rv, text)
        out.append(render(got, clock, fill))
    return out, states


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
