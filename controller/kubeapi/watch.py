"""``?watch=true``: a stream of ADDED / MODIFIED / DELETED events (Table rows when Tables are
asked for), BOOKMARKs when ``allowWatchBookmarks`` is set, as the room's clock advances.

The stream polls the room's sequence (``Room.seq``, one per stored tick: the
resourceVersion of everything, which only grows) and, when it moved, compares the stored
views of the nodes or pods the ticks since changed (their notes: controller/rooms/changes.py;
the rows read once per process for all the watches at the same instants) with the ones last
sent; without a note, every view of the resource. A watch from the resourceVersion of a list this process
served starts from that list's state, so nothing between the two is lost; from ``0`` or none
it starts with every object ADDED. A rewind is a new history: a watch from before it gets an
ERROR event with a 410 Status (as kube-apiserver's watch cache answers a too old
resourceVersion) and ends, and a client re-lists. The stream stays open while the client is
connected (kubectl ``get -w`` does not watch again when it ends), up to ``timeoutSeconds``.
``sendInitialEvents`` (the WatchList feature) is refused with 422 so that clients list, then
watch. Streams are bounded per token and per client address."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from channels.db import database_sync_to_async as sync_to_async
from django.conf import settings
from django.http import HttpRequest

from ..models import Room
from ..rooms import changes as room_changes
from . import printers, store
from .errors import ApiError, bad_request, gone, invalid, too_many_requests
from .request import Target, int_param

POLL_S = 0.25
BOOKMARK_S = 10.0
MAX_TIMEOUT_S = 24 * 3600
# The states (store.State: resourceVersion, stored text) of the lists this process served,
# by (room, resource, group, namespace, rv).
_LISTS: OrderedDict[tuple[Any, ...], dict[str, store.State]] = OrderedDict()
_LISTS_KEPT = 64
_ACTIVE: dict[str, int] = {}


def _list_key(room: tuple[Any, ...], target: Target, rv: int) -> tuple[Any, ...]:
    # By store.room_key (id and creation): a room deleted and another given its id (SQLite
    # reuses the highest id) must not be answered from the first one's lists.
    return (room, target.resource, target.group, target.namespace, rv)


def remember(
    room: tuple[Any, ...], target: Target, rv: int, states: dict[str, store.State]
) -> None:
    """A list's state at ``rv``, for a watch from it (kept for the last few lists); ``room``
    is store.room_key's."""
    key = _list_key(room, target, rv)
    _LISTS[key] = states
    _LISTS.move_to_end(key)
    while len(_LISTS) > _LISTS_KEPT:
        _LISTS.popitem(last=False)


@dataclass
class Plan:
    room_id: int
    target: Target
    match: Callable[[dict[str, Any]], bool]
    table: str
    include: str
    rv: int | None
    timeout_s: int
    bookmarks: bool
    counters: tuple[str, str]
    gone: bool = False
    role: str = "viewer"  # who watches (store.Read: what a held page does not get)
    previous: dict[str, store.State] | None = field(default=None)


def _limits() -> tuple[int, int]:
    return (
        int(getattr(settings, "PLAYGROUND_KUBEAPI_WATCHES_PER_TOKEN", 20)),
        int(getattr(settings, "PLAYGROUND_KUBEAPI_WATCHES_PER_ADDRESS", 50)),
    )


def plan(
    request: HttpRequest,
    room: Room,
    role: str,
    target: Target,
    match: Any,
    table: str,
    include: str,
) -> Plan:
    query = request.GET
    if "sendInitialEvents" in query:
        raise invalid(
            "ListOptions",
            "",
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            "sendInitialEvents",
        )
    if target.name is not None:
        raise bad_request(
            "watch: a single object is watched with fieldSelector=metadata.name=<name>"
        )
    raw = query.get("resourceVersion", "")
    rv: int | None = None
    if raw not in ("", "0"):
        try:
            rv = int(raw)
        except ValueError:
            raise bad_request(
                f"resourceVersion: not a resourceVersion of this room: {raw[:40]!r}"
            ) from None
    timeout = int_param(query, "timeoutSeconds", 0, MAX_TIMEOUT_S) or MAX_TIMEOUT_S
    token = hashlib.sha256(request.headers.get("Authorization", "").encode()).hexdigest()[:16]
    address = str(request.META.get("REMOTE_ADDR", ""))
    counters = (f"token:{room.pk}:{token}", f"address:{address}")
    per_token, per_address = _limits()
    if _ACTIVE.get(counters[0], 0) >= per_token or _ACTIVE.get(counters[1], 0) >= per_address:
        raise too_many_requests(
            f"too many watches open (at most {per_token} per token, {per_address} per address)", 5
        )
    out = Plan(
        room.pk,
        target,
        match,
        table,
        include,
        rv,
        timeout,
        query.get("allowWatchBookmarks") in ("true", "1"),
        counters,
        role=role,
    )
    if rv is not None:
        out.gone = rv < store.history_start(room)
        out.previous = _LISTS.get(_list_key(store.room_key(room), target, rv))
    return out


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


def _status_event(error: ApiError) -> bytes:
    return _line("ERROR", error.status())


def _same(old: store.State | None, new: store.State) -> bool:
    """The object did not change: its resourceVersion is the same (versions.py: it changes
    only when the object's content does; a stored view's other fields may have)."""
    return old is not None and old[0] == new[0]


def _changes(
    p: Plan, previous: dict[str, store.State] | None
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, store.State], Any]:
    """The events since ``previous`` (None: take the current state as known), the new state
    and the read they were made at."""
    room = Room.objects.get(pk=p.room_id)
    read = store.Read.of(room, p.role)
    current: dict[str, store.State] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    seen = set()
    for key, fp, make in read.items(p.target.resource, p.target.group, p.target.namespace):
        seen.add(key)
        if previous is not None and _same(previous.get(key), fp):
            current[key] = fp
            continue
        if previous is None:
            obj = make()
            if p.match(obj):
                current[key] = fp
            continue
        obj = make()
        matched = p.match(obj)
        if key in previous:
            old = read.gone_object(p.target.resource, previous[key][1])
            if old is not None and old["metadata"]["uid"] != obj["metadata"]["uid"]:
                # Deleted and made again under its name (a StatefulSet's pod): two events,
                # as kube-apiserver has two objects (kubectl delete waits for the first).
                out.append(("DELETED", old))
                previous = {k: v for k, v in previous.items() if k != key}
        if matched:
            current[key] = fp
            out.append(("MODIFIED" if key in previous else "ADDED", obj))
        elif key in previous:
            out.append(("DELETED", obj))
    for key, fp in (previous or {}).items():
        if key not in seen:
            obj = read.gone_object(p.target.resource, fp[1])
            if obj is not None:
                out.append(("DELETED", obj))
    return out, current, read


# Resources whose objects change only when the tick notes their view changed (a Lease changes
# also as its kubelet renews it, at no tick's note: a lease watch compares every lease).
NOTED = {("nodes", ""): "node", ("pods", ""): "pod"}
# Changed rows read for one watch, reused by the others at the same instants (this process).
_ROWS: OrderedDict[tuple[Any, ...], dict[str, bytes]] = OrderedDict()
_ROWS_KEPT = 16


def _changed_rows(read: Any, kind: str, keys: list[str], span: tuple[int, int]) -> dict[str, bytes]:
    cache_key = (store.room_key(read.room), kind, span)
    rows = _ROWS.get(cache_key)
    if rows is None:
        rows = _ROWS[cache_key] = read.texts_of(kind, keys)
        while len(_ROWS) > _ROWS_KEPT:
            _ROWS.popitem(last=False)
    return rows


def _noted_changes(
    p: Plan, previous: dict[str, store.State], noted: dict[str, set[str]], span: tuple[int, int]
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, store.State], Any]:
    """_changes from the ticks' notes: only the noted nodes or pods are read."""
    kind = NOTED[(p.target.resource, p.target.group)]
    room = Room.objects.get(pk=p.room_id)
    read = store.Read.of(room, p.role)
    prefix = f"{p.target.namespace}/" if kind == "pod" and p.target.namespace else ""
    keys = sorted(k for k in noted[kind] if k.startswith(prefix))
    rows = _changed_rows(read, kind, keys, span)
    current = dict(previous)
    out: list[tuple[str, dict[str, Any]]] = []
    for key in keys:
        text = rows.get(key)
        old_state = current.get(key)
        if text is None:
            if old_state is not None:
                obj = read.gone_object(p.target.resource, old_state[1])
                del current[key]
                if obj is not None:
                    out.append(("DELETED", obj))
            continue
        if old_state is not None and old_state[1] == text:
            continue
        state = (read.view_rv(p.target.resource, key, text), text)
        if _same(old_state, state):
            current[key] = state  # its view changed, not the object: no event
            continue
        obj = read.gone_object(p.target.resource, text, state[0])
        if obj is None:
            continue
        matched = p.match(obj)
        if old_state is not None:
            old = read.gone_object(p.target.resource, old_state[1])
            if old is not None and old["metadata"]["uid"] != obj["metadata"]["uid"]:
                out.append(("DELETED", old))
                del current[key]
                old_state = None
        if matched:
            out.append(("MODIFIED" if old_state is not None else "ADDED", obj))
            current[key] = state
        elif old_state is not None:
            out.append(("DELETED", obj))
            del current[key]
    return out, current, read


def _initial(p: Plan) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, store.State], Any]:
    return _changes(p, {})


async def stream(p: Plan) -> AsyncIterator[bytes]:
    for counter in p.counters:
        _ACTIVE[counter] = _ACTIVE.get(counter, 0) + 1
    try:
        if p.gone:
            yield _status_event(
                gone(f"too old resource version: {p.rv} (the room was rewound since)")
            )
            return
        headers = True
        previous = p.previous
        if p.rv is None:
            events, previous, read = await sync_to_async(_initial)(p)
            for chunk in _render(p, events, read, headers):
                headers = False
                yield chunk
        deadline = time.monotonic() + p.timeout_s
        last_bookmark = time.monotonic()
        await sync_to_async(room_changes.mark_watching)(p.room_id)
        marked = time.monotonic()
        seen = await sync_to_async(_seq)(p.room_id)
        if previous is None:
            _events, previous, _read = await sync_to_async(_changes)(p, None)
        elif seen is not None and p.rv is not None and seen[0] != p.rv:
            # Ticks stored since the list (a write answered in between): what they changed,
            # against the list's state (their notes may not exist: no watch was open).
            events, previous, read = await sync_to_async(_changes)(p, previous)
            for chunk in _render(p, events, read, headers):
                headers = False
                yield chunk
        while time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            now_seq = await sync_to_async(_seq)(p.room_id)
            if now_seq is None:
                return
            if time.monotonic() - marked > room_changes.WATCHING_TTL_S / 3:
                marked = time.monotonic()
                await sync_to_async(room_changes.mark_watching)(p.room_id)
            if now_seq[0] == seen[0]:
                if p.bookmarks and time.monotonic() - last_bookmark > BOOKMARK_S:
                    last_bookmark = time.monotonic()
                    yield _line("BOOKMARK", _bookmark(p, now_seq[0]))
                continue
            if now_seq[1] < seen[1] or (
                p.rv is not None and await sync_to_async(_rewound_after)(p.room_id, seen[0])
            ):
                yield _status_event(
                    gone("too old resource version: the room was rewound (a new history)")
                )
                return
            span = (seen[0], now_seq[0])
            seen = now_seq
            noted = None
            if (p.target.resource, p.target.group) in NOTED:
                noted = await sync_to_async(room_changes.changed)(p.room_id, *span)
            if noted is not None:
                events, previous, read = await sync_to_async(_noted_changes)(
                    p, previous, noted, span
                )
            else:
                events, previous, read = await sync_to_async(_changes)(p, previous)
            for chunk in _render(p, events, read, headers):
                headers = False
                yield chunk
        if p.bookmarks:
            yield _line("BOOKMARK", _bookmark(p, seen[0]))
    finally:
        for counter in p.counters:
            _ACTIVE[counter] = _ACTIVE.get(counter, 1) - 1
            if _ACTIVE[counter] <= 0:
                _ACTIVE.pop(counter, None)


def _seq(room_id: int) -> tuple[int, int] | None:
    room = Room.objects.filter(pk=room_id).first()
    if room is not None:
        store.watched(room)  # an open watch keeps the room's clock going, as a page does
    row = Room.objects.filter(pk=room_id).values_list("seq", "sim_ms").first()
    return (int(row[0]), int(row[1])) if row else None


def _rewound_after(room_id: int, seq: int) -> bool:
    room = Room.objects.filter(pk=room_id).first()
    return room is not None and store.history_start(room) > seq


def _bookmark(p: Plan, rv: int) -> dict[str, Any]:
    return {
        "kind": p.target.info.kind,
        "apiVersion": p.target.info.group_version,
        "metadata": {"resourceVersion": str(rv)},
    }


def _render(
    p: Plan, events: list[tuple[str, dict[str, Any]]], read: Any, headers: bool
) -> list[bytes]:
    out = []
    for kind, obj in events:
        if kind == "DELETED":
            # A deletion is a write: the object's last state at the deletion's version.
            obj["metadata"]["resourceVersion"] = str(read.rv)
        if p.table:
            body = printers.table(
                p.target.info.kind,
                [obj],
                read.clock,
                p.include,
                {"resourceVersion": str(read.rv)},
                headers,
            )
            headers = False
            out.append(_line(kind, body))
        else:
            out.append(_line(kind, obj))
    return out
