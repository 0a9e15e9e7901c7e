"""Each object's resourceVersion: it changes only when the object's served JSON does, as
kube-apiserver's does (etcd bumps an object's modRevision only on a write to it), so a watch
sends MODIFIED only for an object that changed, and ``kubectl get nodes -w`` prints a node's
row again only then (a kubelet stopping changes the node's stored view, not the Node).

The content of an object is what the API serves of it with the wall-clock mapping left out:
for nodes, leases and pods the stored view's fields the object is made from (``NODE_FIELDS``,
``POD_FIELDS``; a lease's renew time at the read's instant); for the other resources a
fingerprint of their content the store makes. The room's sequence is everything's clock
(``Room.seq``, which only grows): an object whose content this process has not seen yet gets
the sequence of the read that sees it, and keeps it until its content changes. The versions
are this process's (the API's https port is served by one Daphne); after a restart each
object gets the sequence of its first read again, which is newer than any it had."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from .objects import Clock, lease_renew

# The fixed wall instant of simulated second 0 an object's content is made on (its
# timestamps then depend on the simulation only, not on when it is read).
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)

# The node view's fields objects.node makes the Node from (the others: the page's, such as
# the kubelet's state, the zone, the monitor's probe times, the lease's renew time).
NODE_FIELDS = (
    "name",
    "uid",
    "created",
    "labels",
    "unschedulable",
    "taints",
    "conditions",
    "kubeletVersion",
    "capacity",
    "allocatable",
)
# The pod view's fields objects.pod makes the Pod from (not: usage, terminating, the taint
# manager's timers, a leak).
POD_FIELDS = (
    "key",
    "uid",
    "created",
    "labels",
    "containers",
    "node",
    "owner",
    "phase",
    "reason",
    "message",
    "ready",
    "started",
    "deletionTimestamp",
    "qosClass",
    "priority",
    "tolerations",
    "unschedulableReason",
    "disruptionTarget",
)
ROOMS_KEPT = 4  # rooms whose versions this process keeps (the least recently read dropped)
KEYS_KEPT = 400_000  # objects of one resource in a room; over it the table starts again


def content_clock(sim_now_s: float) -> Clock:
    return Clock(sim_now_s, EPOCH + timedelta(seconds=sim_now_s))


def node_content(view: dict[str, Any]) -> bytes:
    return orjson.dumps([view.get(f) for f in NODE_FIELDS])


def pod_content(view: dict[str, Any]) -> bytes:
    return orjson.dumps([view.get(f) for f in POD_FIELDS])


def lease_content(view: dict[str, Any], duration_s: int, sim_now_s: float) -> bytes:
    return orjson.dumps(
        [
            view.get("name"),
            view.get("uid"),
            view.get("created"),
            duration_s,
            lease_renew(view, duration_s, sim_now_s),
        ]
    )


class Versions:
    """(room, resource) -> key -> (quick, content hash, resourceVersion). ``quick`` is the
    hash of the stored text the content was taken from: an unchanged text needs no content."""

    def __init__(self) -> None:
        self._rooms: OrderedDict[Any, dict[str, dict[str, tuple[int | None, int, int]]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def table(self, room_id: Any, resource: str) -> dict[str, tuple[int | None, int, int]]:
        with self._lock:
            tables = self._rooms.get(room_id)
            if tables is None:
                tables = self._rooms[room_id] = {}
                while len(self._rooms) > ROOMS_KEPT:
                    self._rooms.popitem(last=False)
            else:
                self._rooms.move_to_end(room_id)
            table = tables.get(resource)
            if table is None or len(table) > KEYS_KEPT:
                table = tables[resource] = {}
            return table

    @staticmethod
    def version(
        table: dict[str, tuple[int | None, int, int]],
        key: str,
        quick: int | None,
        content: Callable[[], bytes],
        now_rv: int,
    ) -> int:
        """The resourceVersion of ``key`` whose content is ``content()`` at ``now_rv``."""
        entry = table.get(key)
        if entry is not None and quick is not None and entry[0] == quick:
            return entry[2]
        digest = hash(content())
        if entry is not None and entry[1] == digest:
            table[key] = (quick, digest, entry[2])
            return entry[2]
        # A newer version than the one it had, also for a read that began before it was taken.
        rv = now_rv if entry is None or now_rv > entry[2] else entry[2] + 1
        table[key] = (quick, digest, rv)
        return rv

    def forget(self, room_id: Any) -> None:
        with self._lock:
            self._rooms.pop(room_id, None)


VERSIONS = Versions()
