"""``?watch=true``: a stream of ADDED / MODIFIED / DELETED events (Table rows when Tables are
asked for), BOOKMARKs when ``allowWatchBookmarks`` is set, as the room's clock advances.

The watches of one resource of a room share their work (fanout.py, as kube-apiserver's
watch cache does): one hub polls the room's sequence (``Room.seq``, one per stored tick: the
resourceVersion of everything, which only grows) and, when it moved, compares the stored
views of the nodes or pods the ticks since changed (their notes: controller/rooms/changes.py)
with its state; without a note, every object of the resource. Each watcher passes the
events through its selectors and writes them (watchsend.py). A watch from the
resourceVersion of a list this process served (of the same selectors) starts from that
list's state, so nothing between the two is lost; from ``0`` or none it starts with every
object ADDED. A rewind is a new history: a watch from before it gets an
ERROR event with a 410 Status (as kube-apiserver's watch cache answers a too old
resourceVersion) and ends, and a client re-lists. The stream stays open while the client is
connected (kubectl ``get -w`` does not watch again when it ends), up to ``timeoutSeconds``.
``sendInitialEvents`` (the WatchList feature) is refused with 422 so that clients list, then
watch. Streams are bounded per token and per client address."""

from __future__ import annotations

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
from . import fanout, store, watchsend
from .errors import ApiError, bad_request, gone, invalid, too_many_requests
from .request import Target, int_param

POLL_S = fanout.POLL_S
BOOKMARK_S = 10.0
MAX_TIMEOUT_S = 24 * 3600
# The states (store.State: resourceVersion, stored text) of the lists this process served,
# by (room, resource, group, namespace, rv).
_LISTS: OrderedDict[tuple[Any, ...], dict[str, store.State]] = OrderedDict()
_LISTS_KEPT = 64
_ACTIVE: dict[str, int] = {}


def selection(query: Any) -> tuple[str, str]:
    """A request's label and field selectors: a watch starts from the state of a list of
    the same objects only (not from ``kubectl describe node``'s list of one node's pods)."""
    return (query.get("labelSelector", "").strip(), query.get("fieldSelector", "").strip())


def _list_key(
    room: tuple[Any, ...], target: Target, rv: int, selected: tuple[str, str]
) -> tuple[Any, ...]:
    # By store.room_key (id and creation): a room deleted and another given its id (SQLite
    # reuses the highest id) must not be answered from the first one's lists.
    return (room, target.resource, target.group, target.namespace, rv, selected)


def remember(
    room: tuple[Any, ...],
    target: Target,
    rv: int,
    states: dict[str, store.State],
    selected: tuple[str, str] = ("", ""),
) -> None:
    """A list's state at ``rv``, for a watch from it (kept for the last few lists); ``room``
    is store.room_key's, ``selected`` its selection (``selection``)."""
    key = _list_key(room, target, rv, selected)
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
    room: tuple[Any, ...] = ()  # store.room_key's (the hub's, with the resource and role)
    selective: bool = False  # label or field selectors: the watcher filters the events


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
        room=store.room_key(room),
        selective=any(selection(query)),
    )
    if rv is not None:
        out.gone = rv < store.history_start(room)
        out.previous = _LISTS.get(_list_key(out.room, target, rv, selection(query)))
    return out


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


def _status_event(error: ApiError) -> bytes:
    return _line("ERROR", error.status())


async def stream(p: Plan) -> AsyncIterator[bytes]:
    for counter in p.counters:
        _ACTIVE[counter] = _ACTIVE.get(counter, 0) + 1
    try:
        if p.gone:
            yield _status_event(
                gone(f"too old resource version: {p.rv} (the room was rewound since)")
            )
            return
        flavour: fanout.Flavour = ("Table", p.include) if p.table else ("", "")
        shared = None if p.selective else flavour
        hub = fanout.hub_for(p.room, p.room_id, p.target, p.role, shared)
        try:
            async for chunk in _follow(p, hub, flavour):
                yield chunk
        finally:
            fanout.leave(hub, shared)
    finally:
        for counter in p.counters:
            _ACTIVE[counter] = _ACTIVE.get(counter, 1) - 1
            if _ACTIVE[counter] <= 0:
                _ACTIVE.pop(counter, None)


async def _follow(p: Plan, hub: fanout.Hub, flavour: fanout.Flavour) -> AsyncIterator[bytes]:
    joined = await sync_to_async(watchsend.join)(hub, p, flavour)
    if joined is None:
        return
    watcher, chunks = joined
    for chunk in chunks:
        yield chunk
    deadline = time.monotonic() + p.timeout_s
    last_bookmark = time.monotonic()
    while time.monotonic() < deadline:
        await hub.wait(POLL_S)
        await hub.poll()
        if watcher.cursor.next is None:
            if p.bookmarks and time.monotonic() - last_bookmark > BOOKMARK_S:
                last_bookmark = time.monotonic()
                yield _line("BOOKMARK", _bookmark(p, watcher.cursor.end))
            continue
        while watcher.cursor.next is not None:
            batch = watcher.cursor.next
            if batch.ended:
                return
            if batch.back or (p.rv is not None and batch.rewound):
                yield _status_event(
                    gone("too old resource version: the room was rewound (a new history)")
                )
                return
            for chunk in watcher.send(batch):
                yield chunk
    if p.bookmarks:
        yield _line("BOOKMARK", _bookmark(p, watcher.cursor.end))


def _bookmark(p: Plan, rv: int) -> dict[str, Any]:
    return {
        "kind": p.target.info.kind,
        "apiVersion": p.target.info.group_version,
        "metadata": {"resourceVersion": str(rv)},
    }
