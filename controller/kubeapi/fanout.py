"""The watches' shared work, as kube-apiserver's watch cache does it
(staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go: one watch on storage, each event
computed once and handed by ``Cacher.dispatchEvent`` to every ``cacheWatcher``, which passes
it through its own filter).

One Hub per (room, resource, group, namespace, role) in this process while a watch of it is
open: it alone polls the room's sequence, reads the views the ticks changed (their notes:
controller/rooms/changes.py; without a note, every object of the resource), and turns them
into one Batch of events against its state (one dict of (resourceVersion, stored text) per
object for the process, not one per watcher), each object made once and serialised once per
flavour (JSON, or a Table row of one ``includeObject``). Batches are linked, each to the
next: a watcher holds the last one it sent and follows the links, so a watcher that lags
keeps alive only the batches it has still to send. How a watcher filters a batch through its
selectors is watchsend.py (cacher.go's ``cacheWatcher.convertToWatchEvent``)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from channels.db import database_sync_to_async as sync_to_async

from ..models import Room
from ..rooms import changes as room_changes
from . import printers, store

log = logging.getLogger(__name__)
POLL_S = 0.25
SLOW_STEP_S = 1.0  # a step this long is logged
RECENT = 2  # the last batches a watch from a resourceVersion may start at (by their end)
# A batch's bytes are sent in pieces of about this size (Django's ASGI handler sends 64 KiB
# at a time: a piece is not cut and copied again).
PIECE_BYTES = 1 << 16
# Resources whose objects change only when the tick notes their view changed (a Lease changes
# also as its kubelet renews it, at no tick's note: its hub compares every lease).
NOTED = {("nodes", ""): "node", ("pods", ""): "pod"}
# ("", "") objects as JSON; ("Table", include) Table rows of that includeObject.
Flavour = tuple[str, str]
Obj = dict[str, Any]


@dataclass(slots=True)
class Event:
    """One object's change as a watcher without selectors gets it (``obj`` None: a deleted
    object whose last state cannot be made again; no event, it is only forgotten)."""

    key: str
    type: str
    obj: Obj | None
    bodies: dict[tuple[Flavour, bool], bytes] = field(default_factory=dict)


def serialise(obj: Obj, flavour: Flavour, kind: str, clock: Any, rv: int, headers: bool) -> bytes:
    """An event's ``object``: the object, or a Table of its one row (``headers``: with the
    column definitions, the first event of a watch)."""
    if flavour[0]:
        meta = {"resourceVersion": str(rv)}
        return orjson.dumps(printers.table(kind, [obj], clock, flavour[1], meta, headers))
    return orjson.dumps(obj)


def line(kind: str, body: bytes) -> bytes:
    """orjson.dumps({"type": kind, "object": ...}) + newline, around an object's bytes."""
    return b'{"type":"' + kind.encode() + b'","object":' + body + b"}\n"


def pieces(lines: Iterable[bytes]) -> list[bytes]:
    """``lines`` joined into pieces of about PIECE_BYTES, each sent whole."""
    out: list[bytes] = []
    part: list[bytes] = []
    size = 0
    for one in lines:
        part.append(one)
        size += len(one)
        if size >= PIECE_BYTES:
            out.append(b"".join(part))
            part, size = [], 0
    if part:
        out.append(b"".join(part))
    return out


def at_rv(obj: Obj, rv: int) -> Obj:
    """The object with ``rv`` as its resourceVersion (a deletion's: a deletion is a write)."""
    if obj["metadata"].get("resourceVersion") == str(rv):
        return obj
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv)}}


@dataclass
class Batch:
    """The events of the ticks stored after ``start`` up to ``end`` (the read's
    resourceVersion), against the hub's state at ``start``. ``back``: the room's clock went
    back (a rewind: every watcher ends with 410); ``rewound``: a rewind was done since
    ``start`` (a watch from a resourceVersion ends with 410); ``ended``: the room is gone."""

    start: int
    end: int
    kind: str
    clock: Any
    events: list[Event]
    back: bool = False
    rewound: bool = False
    ended: bool = False
    next: Batch | None = None
    _pieces: dict[Flavour, list[bytes]] = field(default_factory=dict)

    def body(self, event: Event, flavour: Flavour, deleted: bool = False) -> bytes:
        """The event's object serialised once per flavour (``deleted``: at this batch's
        resourceVersion, for a watcher whose selectors it stopped matching)."""
        got = event.bodies.get((flavour, deleted))
        if got is None:
            assert event.obj is not None
            obj = at_rv(event.obj, self.end) if deleted else event.obj
            got = serialise(obj, flavour, self.kind, self.clock, self.end, False)
            event.bodies[(flavour, deleted)] = got
        return got

    def pieces(self, flavour: Flavour) -> list[bytes]:
        """Every event's line for a watcher without selectors, made once for all of them
        (each object serialised for them only: not kept for a watcher with selectors)."""
        got = self._pieces.get(flavour)
        if got is None:
            got = self._pieces[flavour] = pieces(
                line(
                    event.type,
                    event.bodies.get((flavour, False))
                    or serialise(event.obj, flavour, self.kind, self.clock, self.end, False),
                )
                for event in self.events
                if event.obj is not None
            )
        return got


def _uid(obj: Obj | None) -> Any:
    return None if obj is None else obj["metadata"]["uid"]


def noted_events(
    read: store.Read, resource: str, state: dict[str, store.State], keys: list[str]
) -> list[Event]:
    """The events of the noted ``keys`` (sorted) against ``state``, which becomes the new
    one: their views only are read."""
    rows = read.texts_of(NOTED[(resource, "")], keys)
    out: list[Event] = []
    for key in keys:
        text = rows.get(key)
        old = state.get(key)
        if text is None:
            if old is not None:
                del state[key]
                out.append(Event(key, "DELETED", read.gone_object(resource, old[1])))
            continue
        if old is not None and old[1] == text:
            continue
        rv = read.view_rv(resource, key, text)
        state[key] = (rv, text)
        if old is not None and old[0] == rv:
            continue  # its view changed, not the object: no event
        obj = read.gone_object(resource, text, rv)
        if old is not None and orjson.loads(old[1]).get("uid") != orjson.loads(text).get("uid"):
            gone = read.gone_object(resource, old[1])
            if _uid(gone) != _uid(obj):
                # Deleted and made again under its name (a StatefulSet's pod): two events,
                # as kube-apiserver has two objects (kubectl delete waits for the first).
                out.append(Event(key, "DELETED", gone))
                old = None
        out.append(Event(key, "ADDED" if old is None else "MODIFIED", obj))
    return out


def full_events(
    read: store.Read,
    target: tuple[str, str, str | None],
    state: dict[str, store.State],
    makes: dict[str, Callable[[], Obj]],
) -> list[Event]:
    """The events of every object of ``target`` (resource, group, namespace) against
    ``state`` (and ``makes``, the objects without a stored text), which become the new."""
    resource = target[0]
    out: list[Event] = []
    seen = set()
    for key, fp, make in read.items(*target):
        seen.add(key)
        old = state.get(key)
        state[key] = fp
        if not fp[1]:
            makes[key] = make
        if old is not None and old[0] == fp[0]:
            continue
        obj = make()
        if old is not None:
            gone = read.gone_object(resource, old[1])
            if gone is not None and _uid(gone) != _uid(obj):
                out.append(Event(key, "DELETED", gone))
                old = None
        out.append(Event(key, "ADDED" if old is None else "MODIFIED", obj))
    for key in [k for k in state if k not in seen]:
        old = state.pop(key)
        makes.pop(key, None)
        out.append(Event(key, "DELETED", read.gone_object(resource, old[1])))
    return out


class Hub:
    """The shared watch of one (room, resource, group, namespace, role): cacher.go's
    ``Cacher`` for one resource, its state the watch cache's store."""

    def __init__(self, key: tuple[Any, ...], room_id: int, target: Any, role: str) -> None:
        self.key = key
        self.room_id = room_id
        self.target: tuple[str, str, str | None] = (
            target.resource,
            target.group,
            target.namespace,
        )
        self.kind = target.info.kind
        self.role = role
        self.lock = threading.Lock()
        self.state: dict[str, store.State] = {}
        self.makes: dict[str, Callable[[], Obj]] = {}
        self.read: store.Read | None = None
        self.at = -1
        self.sim_ms = 0
        self.tail: Batch | None = None
        self.recent: OrderedDict[int, Batch] = OrderedDict()
        self.ended = False
        self.watchers = 0
        self.flavours: Counter[Flavour] = Counter()
        self.polled = 0.0
        self.marked = 0.0
        self._stepping: tuple[Any, asyncio.Event] | None = None
        self._grown: tuple[Any, asyncio.Event] | None = None

    # -- the room's steps ------------------------------------------------------------------
    def step(self) -> None:
        """Bring the state to the room's sequence now, adding a batch if it moved."""
        with self.lock:
            self._step()

    def _room(self) -> Room | None:
        room = Room.objects.filter(pk=self.room_id).first()
        if room is None or store.room_key(room) != self.key[0]:
            self.ended = True
            self._append(Batch(self.at, self.at, self.kind, None, [], ended=True))
            return None
        store.watched(room)  # an open watch keeps the room's clock going, as a page does
        now = time.monotonic()
        if now - self.marked > room_changes.WATCHING_TTL_S / 3:
            self.marked = now
            room_changes.mark_watching(self.room_id)
        return room

    def _step(self) -> None:
        if self.ended:
            return
        if self.tail is None:
            # Noted from now on (mark_watching before the read): every later tick has a note.
            self.marked = time.monotonic()
            room_changes.mark_watching(self.room_id)
        room = self._room()
        if room is None or room.seq == self.at:
            return
        began = time.perf_counter()
        read = store.Read.of(room, self.role, fresh=True)
        if self.tail is None:
            full_events(read, self.target, self.state, self.makes)  # the state, no events
            self._append(Batch(read.rv, read.rv, self.kind, read.clock, []))
        else:
            start = self.at
            kind = NOTED.get(self.target[:2])
            noted = room_changes.changed(self.room_id, start, read.rv) if kind else None
            if noted is not None:
                prefix = f"{self.target[2]}/" if kind == "pod" and self.target[2] else ""
                keys = sorted(k for k in noted[kind] if k.startswith(prefix))
                events = noted_events(read, self.target[0], self.state, keys)
            else:
                events = full_events(read, self.target, self.state, self.makes)
            batch = Batch(start, read.rv, self.kind, read.clock, events)
            batch.back = room.sim_ms < self.sim_ms
            batch.rewound = store.history_start(room) > start
            for flavour in list(self.flavours):
                batch.pieces(flavour)  # serialised here, off the event loop
            self._append(batch)
        self.at, self.sim_ms, self.read = read.rv, room.sim_ms, read
        took = time.perf_counter() - began
        log.log(
            logging.INFO if took >= SLOW_STEP_S else logging.DEBUG,
            "kubeapi watch: room %s %s to %s: %d events for %d watchers in %.2f s",
            self.room_id,
            self.target[0],
            read.rv,
            len(self.tail.events) if self.tail else 0,
            self.watchers,
            took,
        )

    def _append(self, batch: Batch) -> None:
        if self.tail is not None:
            self.tail.next = batch
        self.tail = batch
        self.recent[batch.end] = batch
        self.recent.move_to_end(batch.end)
        while len(self.recent) > RECENT:
            self.recent.popitem(last=False)

    async def poll(self) -> None:
        """Step if nobody did in the last POLL_S; one step at a time: a watcher arriving
        during another's step waits for it."""
        loop = asyncio.get_running_loop()
        stepping = self._stepping
        if stepping is not None and stepping[0] is loop:
            await stepping[1].wait()
            return
        if time.monotonic() - self.polled < POLL_S * 0.8:
            return
        done = asyncio.Event()
        self._stepping = (loop, done)
        tail = self.tail
        try:
            await sync_to_async(self.step)()
        finally:
            self.polled = time.monotonic()
            self._stepping = None
            done.set()
            grown = self._grown
            if self.tail is not tail and grown is not None and grown[0] is loop:
                self._grown = None
                grown[1].set()

    async def wait(self, timeout_s: float) -> None:
        """Until a step adds a batch (the watchers that sleep then send at once), at most
        ``timeout_s``."""
        loop = asyncio.get_running_loop()
        grown = self._grown
        if grown is None or grown[0] is not loop:
            grown = self._grown = (loop, asyncio.Event())
        try:
            await asyncio.wait_for(grown[1].wait(), timeout_s)
        except TimeoutError:
            pass

    # -- objects at the hub's instant --------------------------------------------------------
    def make(self, key: str) -> Obj:
        """The object ``key`` as the hub's state has it (at its last read)."""
        make = self.makes.get(key)
        if make is not None:
            return make()
        assert self.read is not None
        rv, text = self.state[key]
        obj = self.read.gone_object(self.target[0], text, rv)
        assert obj is not None
        return obj


_HUBS: dict[tuple[Any, ...], Hub] = {}
_HUBS_LOCK = threading.Lock()


def hub_for(
    room: tuple[Any, ...], room_id: int, target: Any, role: str, flavour: Flavour | None
) -> Hub:
    """The hub of this watch (made for the first of its watchers), counted as watched;
    ``flavour``: the form a watcher without selectors writes (each batch's bytes made in it
    as the batch is), None for one with selectors."""
    key = (room, target.resource, target.group, target.namespace, role)
    with _HUBS_LOCK:
        hub = _HUBS.get(key)
        if hub is None or hub.ended:
            hub = _HUBS[key] = Hub(key, room_id, target, role)
        hub.watchers += 1
        if flavour is not None:
            hub.flavours[flavour] += 1
    return hub


def leave(hub: Hub, flavour: Flavour | None) -> None:
    """A watcher of ``hub`` ended; the last one's end drops the hub and its state."""
    with _HUBS_LOCK:
        hub.watchers -= 1
        if flavour is not None:
            hub.flavours[flavour] -= 1
            if hub.flavours[flavour] <= 0:
                del hub.flavours[flavour]
        if hub.watchers <= 0 and _HUBS.get(hub.key) is hub:
            del _HUBS[hub.key]
