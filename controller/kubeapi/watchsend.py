"""One watcher of a shared watch (fanout.py): where it starts among its hub's batches, and
each batch passed through its selectors, as kube-apiserver's ``cacheWatcher`` does
(staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go ``convertToWatchEvent``):
an object it had and still matches is MODIFIED, one it did not have and matches ADDED, one it
had and matches no more DELETED (at the batch's resourceVersion). What it had is a set of
keys, for a watcher with selectors only; a watcher without them has every object of the hub
and writes the batch's bytes as they are, made once for all of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import store
from .fanout import Batch, Flavour, Hub, Obj, at_rv, line, pieces, serialise


@dataclass
class Watcher:
    hub: Hub
    match: Callable[[Obj], bool]
    flavour: Flavour
    cursor: Batch  # the last batch sent
    sent: set[str] | None = None  # the keys it has (None: every object of the hub)
    headers: bool = False  # a Table's column definitions still to send (its first event)

    def _one(self, kind: str, obj: Obj, clock: Any, rv: int) -> bytes:
        """An event made for this watcher alone (its first, or one of its start)."""
        table = self.headers
        self.headers = False
        body = serialise(
            at_rv(obj, rv) if kind == "DELETED" else obj,
            self.flavour,
            self.hub.kind,
            clock,
            rv,
            table,
        )
        return line(kind, body)

    def private(self, events: list[tuple[str, Obj]], clock: Any, rv: int) -> list[bytes]:
        return pieces(self._one(kind, obj, clock, rv) for kind, obj in events)

    def send(self, batch: Batch) -> list[bytes]:
        """The bytes of ``batch`` for this watcher, which then is at its end."""
        self.cursor = batch
        if self.sent is None and not self.headers:
            return batch.pieces(self.flavour)
        out: list[bytes] = []
        for event in batch.events:
            obj = event.obj
            if self.sent is None:
                if obj is None:
                    continue
                kind, deleted = event.type, False
            else:
                had = event.key in self.sent
                if event.type == "DELETED":
                    self.sent.discard(event.key)
                    if not had or obj is None:
                        continue
                    kind, deleted = "DELETED", False
                elif obj is not None and self.match(obj):
                    self.sent.add(event.key)
                    kind, deleted = ("MODIFIED" if had else "ADDED"), False
                elif had:
                    self.sent.discard(event.key)
                    kind, deleted = "DELETED", True
                else:
                    continue
            assert obj is not None
            if self.headers:
                out.append(self._one(kind, obj, batch.clock, batch.end))
            else:
                out.append(line(kind, batch.body(event, self.flavour, deleted)))
        return pieces(out)


def _caught_up(
    hub: Hub, previous: dict[str, store.State], match: Callable[[Obj], bool]
) -> tuple[list[tuple[str, Obj]], set[str]]:
    """The events from a list's state ``previous`` (its objects matching the watcher's
    selectors) to the hub's, and the keys the watcher then has."""
    read = hub.read
    assert read is not None
    resource = hub.target[0]
    out: list[tuple[str, Obj]] = []
    sent: set[str] = set()
    for key, state in hub.state.items():
        old = previous.get(key)
        if old is not None and old[0] == state[0]:
            sent.add(key)
            continue
        obj = hub.make(key)
        matched = match(obj)
        if old is not None:
            gone = read.gone_object(resource, old[1])
            if gone is not None and gone["metadata"]["uid"] != obj["metadata"]["uid"]:
                # Deleted and made again under its name: two events.
                out.append(("DELETED", gone))
                old = None
        if matched:
            sent.add(key)
            out.append(("MODIFIED" if old is not None else "ADDED", obj))
        elif old is not None:
            out.append(("DELETED", obj))
    for key, old in previous.items():
        if key not in hub.state:
            gone = read.gone_object(resource, old[1])
            if gone is not None:
                out.append(("DELETED", gone))
    return out, sent


def join(hub: Hub, plan: Any, flavour: Flavour) -> tuple[Watcher, list[bytes]] | None:
    """A watcher of ``plan`` (watch.Plan) at the hub's newest batch, and its first events:
    from no resourceVersion every matching object ADDED; from a list's, what changed since
    its state; from a resourceVersion a batch ends at, the batches after it. None: the room
    is gone."""
    with hub.lock:
        hub._step()
        if hub.ended or hub.tail is None or hub.read is None:
            return None
        watcher = Watcher(hub, plan.match, flavour, hub.tail, headers=bool(flavour[0]))
        events: list[tuple[str, Obj]] = []
        sent: set[str] | None = None
        if plan.rv is None:
            sent = set()
            for key in hub.state:
                obj = hub.make(key)
                if plan.match(obj):
                    sent.add(key)
                    events.append(("ADDED", obj))
        elif plan.previous is not None:
            events, sent = _caught_up(hub, plan.previous, plan.match)
        elif plan.rv in hub.recent and not plan.selective:
            watcher.cursor = hub.recent[plan.rv]
        elif plan.selective:
            # Without the list's state: the hub's now is taken as known.
            sent = {k for k in hub.state if plan.match(hub.make(k))}
        watcher.sent = sent if plan.selective else None
        return watcher, watcher.private(events, hub.read.clock, hub.at)
