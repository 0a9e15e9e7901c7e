"""Fast first rows of a new room: plain multi-row INSERTs through the database cursor on
SQLite, COPY on PostgreSQL, without a model instance per row (a 1,000-node room stores
~31,000 view rows at t=0; building model instances for them cost more than the inserts, and
PostgreSQL's INSERTs took 1.5 s where COPY takes ~0.2 s). Ticks use them too: their new
timeline rows, and their changed views as one INSERT ... ON CONFLICT DO UPDATE (upsert_views).
The inserts only for rows that cannot exist yet (a room's first persist, right after a rewind
deleted them all, or timeline rows from the room's event count on)."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import Any

import orjson
from django.db import connection

from .models import ObjectView, TimelineEvent

log = logging.getLogger(__name__)
MULTI_ROWS = 500  # rows per INSERT statement (fewer when the database takes fewer parameters)


def _json_adapter() -> Any:
    """What the JSON columns take: JSON text on SQLite and in PostgreSQL's COPY (which parses
    it into jsonb), the field's own preparation on other databases."""
    if connection.vendor in ("sqlite", "postgresql"):
        return dumps
    field = ObjectView._meta.get_field("data")
    return lambda value: field.get_db_prep_save(_decoded(value), connection)


class Encoded(str):
    """JSON text encoded already (by ``dumps``): stored as it is."""


def dumps(value: Any) -> str:
    """JSON text of ``value``, as json.dumps gives it (non-string keys become strings)."""
    if isinstance(value, Encoded):
        return value
    return dumps_bytes(value).decode()


def dumps_bytes(value: Any) -> bytes:
    """``dumps``' text as UTF-8 bytes (a timeline chunk's JSON, which is compressed)."""
    try:
        # Without OPT_NON_STR_KEYS, which checks every key's type: a quarter of the
        # encoding of a big room's views, whose keys are all strings (a third of its events').
        return orjson.dumps(value)
    except TypeError:  # a key that is not a string (or what orjson refuses either way)
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _decoded(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, Encoded) else value


def _insert(
    table: str,
    columns: Sequence[str],
    rows: Iterable[tuple[Any, ...]],
    binary_types: Sequence[str] | None = None,
    room_id: int | None = None,
) -> None:
    """Rows into ``table``: COPY on PostgreSQL (streamed: the server parses and stores the rows
    while ``rows`` is still being computed; ``binary_types``, the columns' types, for a binary
    COPY, which sends bytea as it is rather than as hex text), multi-row INSERTs elsewhere.
    ``room_id``: every row's room_id, a column before ``columns`` that the rows leave out; on
    SQLite a number written into the statement, not a parameter of each row (a big room's
    155,000 views: a tenth of their insert at 5,000 nodes)."""
    if room_id is not None:
        room_id = int(room_id)  # written into SQL: a number, nothing else
        columns = ("room_id", *columns)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    if room_id is not None and connection.vendor != "sqlite":
        rows = ((room_id, *row) for row in rows)
    # The backend's own cursor (Django's debug cursor, DEBUG=1, would log every statement with
    # its parameters quoted into it, which costs as much as the insert); its errors raised as
    # Django's (a busy SQLite is an OperationalError that the tick retries).
    with connection.cursor() as wrapper, connection.wrap_database_errors:
        cursor = wrapper.cursor
        if connection.vendor == "postgresql":
            binary = " (FORMAT BINARY)" if binary_types else ""
            copy_sql = f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN{binary}"
            with cursor.copy(copy_sql) as copy:
                if binary_types:
                    copy.set_types(list(binary_types))
                for row in rows:
                    copy.write_row(row)
            return
        if connection.vendor == "sqlite":
            # sqlite3's own execute, with its own placeholders: Django's SQLite cursor
            # rewrites each statement's thousands of %s into ? (a tenth of a big room's store).
            execute, mark = partial(sqlite3.Cursor.execute, cursor), "?"
            # The JSON columns' CHECK (json_valid) parses every row's JSON again, a sixth of a
            # big room's store: these texts are orjson's own (dumps), valid by construction.
            cursor.execute("PRAGMA ignore_check_constraints = ON")
            try:
                _insert_rows(table, names, len(columns), rows, execute, mark, room_id)
            finally:
                cursor.execute("PRAGMA ignore_check_constraints = OFF")
            return
        _insert_rows(table, names, len(columns), rows, cursor.execute, "%s")


def _insert_rows(
    table: str,
    names: str,
    width: int,
    rows: Iterable[tuple[Any, ...]],
    execute: Any,
    mark: str,
    room_id: int | None = None,
) -> None:
    """Many rows per statement: a third less time than executemany's one row per statement
    (31,000 views of a 1,000-node room: 0.09 s instead of 0.14 s on SQLite). ``room_id``: the
    first column's value in every row, written into the statement (the rows leave it out)."""
    marks = [mark] * width
    if room_id is not None:
        marks[0] = str(room_id)
    params = width - (room_id is not None)
    per = max(1, min(MULTI_ROWS, connection.features.max_query_params // params))
    head = f"INSERT INTO {connection.ops.quote_name(table)} ({names}) VALUES "
    one = f"({', '.join(marks)})"
    full = head + ", ".join([one] * per)
    batch: list[Any] = []
    n = 0
    for row in rows:
        batch += row
        n += 1
        if n == per:
            execute(full, batch)
            batch, n = [], 0
    if n:
        execute(head + ", ".join([one] * n), batch)


_EVENT_COLUMNS = ("idx", "t_ms", "type", "data")


def insert_events(room_id: int, start: int, events: list[dict[str, Any]]) -> int:
    """TimelineEvent rows ``start``, ``start + 1``... of ``events`` (engine dicts). Returns
    the bytes of their data's JSON text (0 where the database takes other values)."""
    dump = _json_adapter()
    skip = ("t", "type")
    written = 0

    def rows() -> Iterable[tuple[Any, ...]]:
        nonlocal written
        for i, e in enumerate(events):
            data = dump({k: v for k, v in e.items() if k not in skip})
            written += len(data) if isinstance(data, str) else 0
            yield (start + i, e["t"], e["type"], data)

    _insert(TimelineEvent._meta.db_table, _EVENT_COLUMNS, rows(), room_id=room_id)
    return written


def event_rows(start: int, events: list[dict[str, Any]]) -> tuple[list[tuple[Any, ...]], int]:
    """insert_events' rows made now (to store with ``insert_event_rows`` later) and their
    bytes."""
    dump = _json_adapter()
    skip = ("t", "type")
    rows = []
    written = 0
    for i, e in enumerate(events):
        data = dump({k: v for k, v in e.items() if k not in skip})
        written += len(data) if isinstance(data, str) else 0
        rows.append((start + i, e["t"], e["type"], data))
    return rows, written


def insert_event_rows(room_id: int, rows: list[tuple[Any, ...]]) -> None:
    _insert(TimelineEvent._meta.db_table, _EVENT_COLUMNS, rows, room_id=room_id)


def upsert_views(room_id: int, rows: list[tuple[str, str, Any]]) -> None:
    """ObjectView rows (kind, key, data: a value or its ``Encoded`` JSON) of a room: inserted,
    or their data replaced where the (room, kind, key) row exists (a tick's changed nodes and
    pods: 18,000 of them when a zone of a 5,000-node room goes dark). One INSERT ... ON
    CONFLICT DO UPDATE, run for every row, on SQLite and PostgreSQL; model instances on other
    databases."""
    if connection.vendor not in ("sqlite", "postgresql"):
        ObjectView.objects.bulk_create(
            [ObjectView(room_id=room_id, kind=k, key=key, data=_decoded(d)) for k, key, d in rows],
            update_conflicts=True,
            unique_fields=["room", "kind", "key"],
            update_fields=["data"],
        )
        return
    q = connection.ops.quote_name
    value = "CAST(%s AS jsonb)" if connection.vendor == "postgresql" else "%s"
    sql = (
        f"INSERT INTO {q(ObjectView._meta.db_table)} ({q('room_id')}, {q('kind')}, {q('key')}, "
        f"{q('data')}) VALUES (%s, %s, %s, {value}) "
        f"ON CONFLICT ({q('room_id')}, {q('kind')}, {q('key')}) "
        f"DO UPDATE SET {q('data')} = excluded.{q('data')}"
    )
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(room_id, kind, key, dumps(data)) for kind, key, data in rows])


def insert_views(room_id: int, rows: list[tuple[str, str, Any]]) -> None:
    """ObjectView rows (kind, key, data) of a room that has none of them yet."""
    dump = _json_adapter()
    _insert(
        ObjectView._meta.db_table,
        ("kind", "key", "data"),
        ((kind, key, dump(data)) for kind, key, data in rows),
        room_id=room_id,
    )


# SQLite's page cache during a big write (KiB): room for the whole transaction's pages
# (~125 MB at 5,000 nodes; the cache takes only what is written). With the connection's
# default (2 MB) SQLite spilled pages to its log in the middle of the transaction and wrote
# and read many of them again (at 1,000 nodes ~25,000 more writes and ~17,000 more reads of
# a page): a third of the views' insert and commit (5,000 nodes: 0.5 -> 0.35 s of CPU).
BIG_WRITE_CACHE_KIB = 256 * 1024


@contextlib.contextmanager
def big_write() -> Iterator[None]:
    """Around a big write's transaction (a new room's first rows): its commit does not
    checkpoint (``checkpoint_later``) and, on SQLite, the connection's page cache may hold
    all of its pages (``roomy_cache``)."""
    with checkpoint_later(), roomy_cache():
        yield


@contextlib.contextmanager
def roomy_cache() -> Iterator[None]:
    """SQLite's page cache up to BIG_WRITE_CACHE_KIB meanwhile; then its size as before and
    the pages past that size freed (SQLite's shrink_memory). Nothing on other databases."""
    if connection.vendor != "sqlite":
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    (size,) = raw.execute("PRAGMA cache_size").fetchone()
    raw.execute(f"PRAGMA cache_size = {-BIG_WRITE_CACHE_KIB}")
    try:
        yield
    finally:
        if connection.connection is raw:
            raw.execute(f"PRAGMA cache_size = {int(size)}")
            raw.execute("PRAGMA shrink_memory")
            threading.Thread(target=_trim_heap, name="malloc-trim", daemon=True).start()


def _trim_heap() -> None:
    """Give the freed page cache back to the system: glibc keeps freed small blocks in the
    process (a 5,000-node room's build left the worker 140 MB bigger; malloc_trim: ~15 ms,
    in this thread, the GIL let go). Nothing where the C library has no malloc_trim."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def checkpoint_later() -> Iterator[None]:
    """Around a big write's transaction (a new room's first rows: ~100 MB of SQLite's
    write-ahead log at 5,000 nodes): its commit does not copy the log into the database file
    (SQLite's checkpoint, with its two fsyncs: 0.45 s at 5,000 nodes, the last of the store);
    a thread does it after the commit, while the room is already live. The committed rows
    are in the log either way: a crash loses none of them (the next connection checkpoints
    them). Nothing changes on other databases, in memory, or inside an outer transaction
    (whose commit checkpoints as before)."""
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    (every,) = raw.execute("PRAGMA wal_autocheckpoint").fetchone()
    raw.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        yield
    finally:
        if connection.connection is raw:
            raw.execute(f"PRAGMA wal_autocheckpoint = {int(every)}")
    if not connection.in_atomic_block:
        name = str(connection.settings_dict["NAME"])
        threading.Thread(
            target=_checkpoint, args=(name,), name="sqlite-checkpoint", daemon=True
        ).start()


def _checkpoint(name: str) -> None:
    """Copy what SQLite's write-ahead log holds into the database file, on a connection of
    its own, waiting for nobody (PASSIVE: what a reader still uses is copied by a later
    checkpoint)."""
    try:
        with contextlib.closing(sqlite3.connect(name, timeout=20)) as raw:
            raw.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.Error:
        log.warning("checkpoint of %s after a big write failed", name, exc_info=True)
