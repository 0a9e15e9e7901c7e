"""A room's stored timeline: one TimelineEvent row per event, except where many events are
written at once (a big room's first instant, a rewind of one, a tick in which a zone's nodes
and pods all changed), which go in TimelineChunk rows of CHUNK events each (zlib of the JSON
list of the engine's event dicts). A 1,000-node room's t=0 is ~185,000 events: as
rows they took ~1.5 s to insert on SQLite (~10 s at 5,000 nodes); as chunks ~0.3 s. Chunks
and rows may alternate (a tick's chunk comes after earlier ticks' rows).

Everything that reads a room's events goes through here, so both forms read alike: events
come out as (idx, t_ms, type, data) in idx order."""

from __future__ import annotations

import bisect
import contextlib
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import orjson
from django.db.models import F, Sum

from . import bulk
from .models import Room, TimelineChunk, TimelineEvent

CHUNK = 10_000  # events per chunk: the last 300 events decode ~1 MB of JSON, not all of t=0
CHUNK_MIN = 2_000  # fewer events than this at once are plain rows

Row = tuple[int, int, str, dict[str, Any]]
_CHUNK_COLUMNS = ("room_id", "first_idx", "count", "first_t_ms", "last_t_ms", "blob")
_TYPES = ("int8", "int8", "int4", "int8", "int8", "bytea")  # for PostgreSQL's binary COPY


def write(room_id: int, start: int, events: list[dict[str, Any]]) -> int:
    """Store ``events`` (engine dicts) as events ``start``, ``start + 1``...; only for
    indices not stored yet (a room's first persist, right after a rewind deleted all, or a
    tick's from the room's event count on). Returns the bytes of their JSON text (a lower
    bound of their size in a delta, which adds each one's idx)."""
    if len(events) < CHUNK_MIN:
        return bulk.insert_events(room_id, start, events)
    written = [0]
    bulk._insert(
        TimelineChunk._meta.db_table,
        _CHUNK_COLUMNS,
        _chunks(room_id, start, events, written),
        _TYPES,
    )
    return written[0]


def prepare(
    room_id: int, start: int, events: list[dict[str, Any]]
) -> tuple[int, Callable[[], None]]:
    """``write`` in two: the rows made now (their JSON; many events' chunks compressed), and
    a function that stores them, to call later (a tick makes them before its short write
    transaction, and stores them in it). Returns their bytes (as ``write``) and the function."""
    if len(events) < CHUNK_MIN:
        rows, written = bulk.event_rows(start, events)
        return written, lambda: bulk.insert_event_rows(room_id, rows)
    count = [0]
    chunks = list(_chunks(room_id, start, events, count))
    return count[0], lambda: bulk._insert(
        TimelineChunk._meta.db_table, _CHUNK_COLUMNS, chunks, _TYPES
    )


def _chunks(
    room_id: int, start: int, events: list[dict[str, Any]], written: list[int]
) -> Iterator[tuple[Any, ...]]:
    """The chunk rows of ``events`` (their JSON's bytes added to ``written[0]``). Each chunk's
    JSON is compressed by a thread while the next one is encoded (zlib lets go of the GIL: a
    third of a 1,000-node room's timeline time)."""
    with ThreadPoolExecutor(1, thread_name_prefix="timeline-zlib") as pool:
        pending: list[tuple[tuple[Any, ...], Future[bytes]]] = []
        for lo in range(0, len(events), CHUNK):
            part = events[lo : lo + CHUNK]
            text = _text(part)
            written[0] += len(text)
            pending.append((_head(room_id, start + lo, part), pool.submit(zlib.compress, text, 1)))
            if len(pending) > 1:
                done, blob = pending.pop(0)
                yield (*done, blob.result())
        for done, blob in pending:
            yield (*done, blob.result())


@contextlib.contextmanager
def written_after(room_id: int, start: int, events: list[dict[str, Any]]) -> Iterator[None]:
    """Store ``events`` as ``write`` does, at the end of the block (unless it raises): their
    chunks are encoded and compressed by a thread meanwhile (a new room's: zlib lets go of
    the GIL, so while the block stores the room's views it runs on the machine's other core:
    a seventh of a 1,000-node room's store). Chunked events are taken over: ``events`` is
    emptied, and the thread lets go of each chunk's events once encoded (so it, not the
    caller, frees them: 935,000 event dicts at 5,000 nodes, a tenth of a second)."""
    if len(events) < CHUNK_MIN:
        yield
        bulk.insert_events(room_id, start, events)
        return
    parts = [events[lo : lo + CHUNK] for lo in range(0, len(events), CHUNK)]
    events.clear()
    with ThreadPoolExecutor(1, thread_name_prefix="timeline-chunks") as pool:
        rows = [
            pool.submit(_chunk_row, room_id, start + i * CHUNK, part)
            for i, part in enumerate(parts)
        ]
        parts.clear()  # each part now held by its job only (let go when the job is done)
        try:
            yield
        except BaseException:
            for row in rows:
                row.cancel()
            raise
        bulk._insert(
            TimelineChunk._meta.db_table, _CHUNK_COLUMNS, (row.result() for row in rows), _TYPES
        )


def _chunk_row(room_id: int, first_idx: int, part: list[dict[str, Any]]) -> tuple[Any, ...]:
    return (*_head(room_id, first_idx, part), zlib.compress(_text(part), 1))


def _head(room_id: int, first_idx: int, part: list[dict[str, Any]]) -> tuple[int, ...]:
    """A chunk row's columns before its blob (_CHUNK_COLUMNS)."""
    return (room_id, first_idx, len(part), part[0]["t"], part[-1]["t"])


def _text(part: list[dict[str, Any]]) -> bytes:
    """A chunk's JSON, before compression (level 1): orjson's with OPT_NON_STR_KEYS, made
    without the option where every key is a string (bulk.dumps_bytes: a third less of the
    chunk thread's time holding the GIL, which the thread storing the views waits for)."""
    return bulk.dumps_bytes(part)


def _decode(chunk: TimelineChunk) -> list[Row]:
    out: list[Row] = []
    for i, event in enumerate(orjson.loads(zlib.decompress(bytes(chunk.blob)))):
        t, typ = event.pop("t"), event.pop("type")
        out.append((chunk.first_idx + i, t, typ, event))
    return out


def _row(r: TimelineEvent) -> Row:
    return (r.idx, r.t_ms, r.type, r.data)


def _by_idx(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: r[0])


def after(room: Room | int, since: int = -1, limit: int | None = None) -> list[Row]:
    """Events with idx > ``since``, in order, at most ``limit``."""
    query = TimelineEvent.objects.filter(room=room, idx__gt=since).order_by("idx")
    rows = [_row(r) for r in (query[:limit] if limit is not None else query)]
    chunked: list[Row] = []
    chunks = (
        TimelineChunk.objects.filter(room=room)
        .alias(end=F("first_idx") + F("count"))
        .filter(end__gt=since + 1)
        .order_by("first_idx")
    )
    for chunk in chunks:
        if limit is not None and (
            len(chunked) >= limit or (len(rows) >= limit and chunk.first_idx > rows[-1][0])
        ):
            break  # what follows comes after the first ``limit`` events
        chunked += [r for r in _decode(chunk) if r[0] > since]
    out = _by_idx(chunked + rows) if chunked else rows
    return out[:limit] if limit is not None else out


def last(room: Room | int, n: int) -> list[Row]:
    """The last ``n`` events, in order."""
    if n <= 0:
        return []
    rows = [_row(r) for r in TimelineEvent.objects.filter(room=room).order_by("-idx")[:n]]
    rows.reverse()
    got: list[Row] = []
    for chunk in TimelineChunk.objects.filter(room=room).order_by("-first_idx"):
        newest = chunk.first_idx + chunk.count - 1
        newer_rows = len(rows) - bisect.bisect_right([r[0] for r in rows], newest)
        if len(got) + newer_rows >= n:
            break  # n events newer than this chunk are held already
        got = _decode(chunk) + got
    out = _by_idx(got + rows) if got else rows
    return out[-n:]


def at(room: Room | int, t_ms: int) -> list[Row]:
    """The events of simulated instant ``t_ms``, in order."""
    out: list[Row] = []
    for chunk in TimelineChunk.objects.filter(
        room=room, first_t_ms__lte=t_ms, last_t_ms__gte=t_ms
    ).order_by("first_idx"):
        out += [r for r in _decode(chunk) if r[1] == t_ms]
    out += [_row(r) for r in TimelineEvent.objects.filter(room=room, t_ms=t_ms).order_by("idx")]
    return _by_idx(out)


def count(room: Room | int) -> int:
    """How many events are stored."""
    chunked = TimelineChunk.objects.filter(room=room).aggregate(n=Sum("count"))["n"] or 0
    return chunked + TimelineEvent.objects.filter(room=room).count()


def delete(room: Room | int) -> None:
    """Forget the room's whole timeline (a rewind)."""
    TimelineEvent.objects.filter(room=room).delete()
    TimelineChunk.objects.filter(room=room).delete()
