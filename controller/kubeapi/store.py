"""The room service of the API: a room's objects read from its stored views and timeline
rows (what the page reads; never the engine, so the web process needs none), as Kubernetes
objects of one resource at one instant."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import redis
from django.db import connection
from django.db.models import F, TextField
from django.db.models.functions import Cast, Collate

from .. import timeline_store
from ..engine.events import stored_events
from ..engine.holdback import Hold
from ..lessons.holding import current_hold
from ..live import presence
from ..locks import redis_client
from ..models import Action, ObjectView, Room
from ..rooms.controls import room_wake
from . import events, metrics, objects, versions, workloads
from .auth import OPERATOR
from .errors import ApiError, not_found
from .objects import Clock

log = logging.getLogger(__name__)
# What a list or watch knows of an object: its resourceVersion (which changes only when its
# content does: versions.py) and its stored text (a node's or pod's view, from which its last
# state is made again when it is gone).
State = tuple[int, bytes]
# The newest timeline rows searched for Kubernetes events (the API keeps an hour of them).
EVENT_ROWS = 20_000


def _binary_key(query: Any) -> Any:
    """The rows with ``bkey``: their key compared byte by byte (SQLite's default; PostgreSQL's
    "C" collation), so database pages follow Python's order of the keys."""
    if connection.vendor == "postgresql":
        return query.annotate(bkey=Collate("key", "C"))
    return query.annotate(bkey=F("key"))


def room_of(slug: str) -> Room:
    """The live room ``slug``, read for this request (once per page of a list: unordered, the
    slug being unique; Room's default ordering cost a millisecond of query building a page)."""
    room = next(iter(Room.objects.filter(slug=slug).order_by()[:1]), None)
    if room is None or room.build_state != Room.LIVE:
        raise ApiError(
            404, "NotFound", f'the server could not find the requested resource (room "{slug}")'
        )
    return room


_SEEN: dict[int, float] = {}
SEEN_EVERY_S = 5.0


def watched(room: Room) -> None:
    """A kubectl request watches the room as a page does: its watched time is renewed (rooms
    nobody watches stop their clock, rooms.controls.room_idle) and an idle room wakes up.
    At most every few seconds per room and process."""
    now = time.time()
    if now - _SEEN.get(room.pk, 0.0) < SEEN_EVERY_S and room.idle_since is None:
        return
    _SEEN[room.pk] = now
    try:
        redis_client().set(presence.watched_key(room.pk), repr(now), ex=presence.WATCHED_TTL)
    except redis.RedisError:
        log.warning("kubeapi: Redis is not answering; room %s not marked as watched", room.slug)
    if room.idle_since is not None and room_wake(room.pk):
        from ..tasks import send_tick

        send_tick(room.pk)


_STARTS: dict[tuple[Any, int], int] = {}


def room_key(room: Room) -> tuple[int, float]:
    """A room's key in this process's caches (its id and creation: a test database's next
    room may get an id again)."""
    return (room.pk, room.created_at.timestamp() if room.created_at else 0.0)


def history_start(room: Room) -> int:
    """The resourceVersion the room's current history begins at: the room's sequence at its
    last rewind done (0 without one; one asked and not run yet has no sequence yet). A watch
    from before it gets 410 Gone. Read once per room and sequence (a rewind stores a new one;
    a list's 300 pages ask at the same)."""
    key = (room_key(room), room.seq)
    start = _STARTS.get(key)
    if start is None:
        start = _STARTS[key] = _history_start(room)
        if len(_STARTS) > 256:
            _STARTS.clear()
            _STARTS[key] = start
    return start


def _history_start(room: Room) -> int:
    rewind = (
        Action.objects.filter(room=room, kind="rewind", status=Action.APPLIED)
        .order_by("-id")
        .values_list("payload", flat=True)
        .first()
    )
    if rewind and isinstance(rewind.get("seq"), int):
        return int(rewind["seq"])
    return 0


@dataclass
class Read:
    """One answer's view of the room: its clock mapping, release and resourceVersion, and
    the rows read so far (each kind once)."""

    room: Room
    clock: Clock
    rv: int
    _rows: dict[str, dict[str, bytes]] = field(default_factory=dict)
    _params: dict[str, Any] | None = None
    _versions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Who reads (auth.VIEWER or OPERATOR; None: the server itself): a page that answers the
    # room's lesson (a viewer; the operator of a room learning alone) does not get the
    # Kubernetes Events an open question's expect names (lessons.holding, as on the page).
    role: str | None = None

    @classmethod
    def of(cls, room: Room, role: str | None = None, fresh: bool = False) -> Read:
        """The room as it is now (``fresh``: ``room`` was read from the database for this
        answer just before; not read again)."""
        if not fresh:
            room.refresh_from_db()
        return cls(room, objects.now_clock(room.sim_ms / 1000), room.seq, role=role)

    def hold(self) -> Hold | None:
        """The open question's hold for this reader (None: nothing held)."""
        if self.role is None:
            return None
        return current_hold(self.room, operator=self.role == OPERATOR)

    # -- raw rows --------------------------------------------------------------------------
    def texts(
        self,
        kind: str,
        key: str | None = None,
        prefix: str | None = None,
        node: str | None = None,
    ) -> dict[str, bytes]:
        """The stored JSON texts of the views of ``kind`` (one ``key``, or keys starting with
        ``prefix``; pods bound to ``node``), by key."""
        if node is not None:
            query = ObjectView.objects.filter(room=self.room, kind=kind, data__node=node)
            if prefix is not None:
                query = query.filter(key__startswith=prefix)
            return {
                k: t.encode()
                for k, t in query.values_list("key", Cast("data", output_field=TextField()))
            }
        if key is None and prefix is None and kind in self._rows:
            return self._rows[kind]
        query = ObjectView.objects.filter(room=self.room, kind=kind)
        if key is not None:
            query = query.filter(key=key)
        elif prefix is not None:
            query = query.filter(key__startswith=prefix)
        rows = {
            k: t.encode()
            for k, t in query.values_list("key", Cast("data", output_field=TextField()))
        }
        if key is None and prefix is None:
            self._rows[kind] = rows
        return rows

    def page_texts(
        self, kind: str, after: str, count: int, prefix: str | None = None
    ) -> dict[str, bytes]:
        """At most ``count`` stored texts of ``kind`` whose keys come after ``after`` (in
        code-point order, as Python sorts), in key order: one page of a list read by the
        database's index, not every row of the room."""
        sql, params = self.page_sql(kind, after, count, prefix)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return {k: t.encode() for k, t in cursor.fetchall()}

    def page_sql(
        self, kind: str, after: str, count: int, prefix: str | None = None
    ) -> tuple[str, list[Any]]:
        """``page_texts``' query and its parameters: one plain query on the (room, kind,
        key) index (the ORM's rows cost as much again as the database's at 150,000 pods read
        500 at a time). On PostgreSQL the keys compare in the "C" collation, which the index
        of migration 0016 has, so a page is read in index order, not sorted."""
        q = connection.ops.quote_name
        key = f'{q("key")} COLLATE "C"' if connection.vendor == "postgresql" else q("key")
        where = [f"{q('room_id')} = %s", f"{q('kind')} = %s"]
        params: list[Any] = [self.room.pk, kind]
        if after:
            where.append(f"{key} > %s")
            params.append(after)
        if prefix is not None:
            # The keys that start with ``prefix``, in code-point (UTF-8 byte) order.
            where.append(f"{key} >= %s AND {key} < %s")
            params += [prefix, prefix + "\U0010ffff"]
        sql = (
            f"SELECT {q('key')}, CAST({q('data')} AS TEXT) FROM "
            f"{q(ObjectView._meta.db_table)} WHERE {' AND '.join(where)} "
            f"ORDER BY {key} LIMIT %s"
        )
        return sql, [*params, count]

    def texts_of(self, kind: str, keys: list[str]) -> dict[str, bytes]:
        """The stored texts of these keys of ``kind`` (the ones that exist), read a few
        hundred at a time."""
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            query = ObjectView.objects.filter(room=self.room, kind=kind, key__in=keys[i : i + 500])
            for k, t in query.values_list("key", Cast("data", output_field=TextField())):
                out[k] = t.encode()
        return out

    def count_after(self, kind: str, after: str, prefix: str | None = None) -> int:
        query = ObjectView.objects.filter(room=self.room, kind=kind)
        if prefix is not None:
            query = query.filter(key__startswith=prefix)
        return _binary_key(query).filter(bkey__gt=after).count()

    def params(self) -> dict[str, Any]:
        if self._params is None:
            text = self.texts("params").get("*")
            self._params = orjson.loads(text) if text else {}
        return self._params

    @property
    def release(self) -> str:
        return str(self.params().get("kubernetesVersion") or "1.34")

    @property
    def lease_duration(self) -> int:
        return int((self.params().get("kubelet") or {}).get("nodeLeaseDurationSeconds") or 40)

    # -- versions --------------------------------------------------------------------------
    def view_rv(self, resource: str, key: str, text: bytes, view: Any = None) -> int:
        """The resourceVersion of the node, lease or pod ``key`` made from the stored
        ``text`` (``view``: the text parsed, when it is): changed only when its content did."""
        table = self._versions.get(resource)
        if table is None:
            table = self._versions[resource] = versions.VERSIONS.table(
                room_key(self.room), resource
            )
        if resource == "leases":
            duration, now = self.lease_duration, self.clock.sim_now_s

            def content() -> bytes:
                return versions.lease_content(view or orjson.loads(text), duration, now)

            return versions.Versions.version(table, key, None, content, self.rv)
        quick = hash(text)
        entry = table.get(key)
        if entry is not None and entry[0] == quick:
            return entry[2]  # the same text: the same object (versions.Versions.version)
        project = versions.node_content if resource == "nodes" else versions.pod_content
        return versions.Versions.version(
            table, key, quick, lambda: project(view or orjson.loads(text)), self.rv
        )

    def content_rv(self, resource: str, key: str, content: bytes) -> int:
        """The resourceVersion of ``key`` of ``resource`` whose content is ``content``."""
        table = versions.VERSIONS.table(room_key(self.room), resource)
        return versions.Versions.version(table, key, None, lambda: content, self.rv)

    # -- objects ---------------------------------------------------------------------------
    def node(self, text: bytes, rv: int | None = None) -> dict[str, Any]:
        return objects.node(orjson.loads(text), self.release, self.clock, rv or self.rv)

    def items(
        self,
        resource: str,
        group: str,
        namespace: str | None,
        name: str | None = None,
        node: str | None = None,
        page: tuple[str, int] | None = None,
    ) -> Iterator[tuple[str, State, Any]]:
        """(key, state, make) of each object: ``make()`` builds the object; the state's
        resourceVersion changes when the object does (a watch compares them). ``node``: only
        the pods bound to it (a ``spec.nodeName=`` field selector, read from the rows'
        index instead of every pod: describe node, drain). ``page`` (after, count): at most
        ``count`` nodes, leases or pods after the key ``after``, in key order (``paged``)."""
        if group == "metrics.k8s.io":
            yield from self._metrics(resource, namespace, name)
        elif resource == "nodes":
            rows = self.texts("node", key=name) if page is None else self.page_texts("node", *page)
            for key, text in rows.items():
                rv = self.view_rv("nodes", key, text)
                yield key, (rv, text), (lambda t=text, r=rv: self.node(t, r))
        elif resource == "leases":
            if namespace not in (None, objects.NODE_LEASE_NAMESPACE):
                return
            rows = self.texts("node", key=name) if page is None else self.page_texts("node", *page)
            for key, text in rows.items():
                view = orjson.loads(text)
                rv = self.view_rv("leases", key, text, view)
                yield (
                    key,
                    (rv, text),
                    (lambda v=view, r=rv: objects.lease(v, self.lease_duration, self.clock, r)),
                )
        elif resource == "pods":
            if page is not None and name is None and node is None:
                rows = self.page_texts("pod", *page, prefix=f"{namespace}/" if namespace else None)
            elif namespace is not None and name is not None:
                rows = self.texts("pod", key=f"{namespace}/{name}")
            elif node is not None:
                rows = self.texts("pod", prefix=f"{namespace}/" if namespace else None, node=node)
            elif namespace is not None:
                rows = self.texts("pod", prefix=f"{namespace}/")
            else:
                rows = self.texts("pod")
            for key, text in rows.items():
                rv = self.view_rv("pods", key, text)
                yield (
                    key,
                    (rv, text),
                    (lambda t=text, r=rv: objects.pod(orjson.loads(t), self.clock, r)),
                )
        elif resource == "namespaces":
            names = set(objects.SYSTEM_NAMESPACES) | {
                k.partition("/")[0] for k in self.texts("pod")
            }
            for ns in sorted(names):
                if name is None or ns == name:
                    rv = self.content_rv("namespaces", ns, b"")
                    yield ns, (rv, b""), (lambda n=ns, r=rv: objects.namespace(n, self.clock, r))
        elif resource == "events":
            yield from self._events(group, namespace, name)
        elif resource in ("deployments", "replicasets", "statefulsets", "daemonsets"):
            yield from self._workloads(resource, namespace, name)

    def _events(
        self, group: str, namespace: str | None, name: str | None
    ) -> Iterator[tuple[str, State, Any]]:
        rows = timeline_store.last(self.room, EVENT_ROWS)
        since_ms = self.room.sim_ms - events.EVENT_TTL_S * 1000
        uids = self.uids()
        # The Event objects the API holds: a row that patches a repeat (count > 1) updates
        # the Event its key created (engine/events.py, stored_events).
        recorded = [(idx, {**data, "t": t_ms, "type": typ}) for idx, t_ms, typ, data in rows]
        hold = self.hold()
        for idx, data in stored_events(recorded):
            if data["t"] < since_ms:
                continue
            if hold is not None and not hold.keeps({**data, "t": data["t"] / 1000}):
                continue
            core = events.core_event(idx, data["t"], data, uids, self.clock)
            meta = core["metadata"]
            if namespace is not None and meta["namespace"] != namespace:
                continue
            if name is not None and meta["name"] != name:
                continue
            obj = events.events_v1(core) if group == "events.k8s.io" else core
            # An Event changes only when a repeat patches it: its resourceVersion is one past
            # the timeline row that last wrote it (events.core_event).
            rv = int(meta["resourceVersion"])
            yield f"{meta['namespace']}/{meta['name']}", (rv, b""), (lambda o=obj: o)

    def _metrics(
        self, resource: str, namespace: str | None, name: str | None
    ) -> Iterator[tuple[str, State, Any]]:
        if resource == "nodes":
            for key, text in self.texts("node", key=name).items():
                yield (
                    key,
                    (self.rv, text),
                    (lambda t=text: metrics.node_metrics(orjson.loads(t), self.clock, self.rv)),
                )
            return
        one = f"{namespace}/{name}" if namespace and name else None
        prefix = f"{namespace}/" if namespace and not name else None
        for key, text in self.texts("pod", key=one, prefix=prefix).items():
            view = orjson.loads(text)
            if view.get("phase") == "Running" and view.get("node"):
                yield (
                    key,
                    (self.rv, text),
                    (lambda v=view: metrics.pod_metrics(v, self.clock, self.rv)),
                )

    def uids(self) -> dict[str, str]:
        out = {}
        for key, text in self.texts("node").items():
            out[f"Node/{key}"] = orjson.loads(text).get("uid", "")
        for key, text in self.texts("pod").items():
            out[f"Pod/{key}"] = orjson.loads(text).get("uid", "")
        return out

    def _workloads(
        self, resource: str, namespace: str | None, name: str | None
    ) -> Iterator[tuple[str, State, Any]]:
        kind = {
            "deployments": "Deployment",
            "replicasets": "ReplicaSet",
            "statefulsets": "StatefulSet",
            "daemonsets": "DaemonSet",
        }[resource]
        text = self.texts("metrics").get("workloads")
        metrics = orjson.loads(text) if text else {}
        pods = [
            orjson.loads(t)
            for t in (
                self.texts("pod", prefix=f"{namespace}/") if namespace else self.texts("pod")
            ).values()
        ]
        fixed = versions.content_clock(self.clock.sim_now_s)
        for k, ns, n, facts in workloads.collect(metrics, pods):
            if (
                k != kind
                or (namespace is not None and ns != namespace)
                or (name is not None and n != name)
            ):
                continue
            # Its content: the object made on the fixed clock (versions.content_clock).
            content = orjson.dumps(workloads.workload(k, ns, n, facts, fixed, 0))
            rv = self.content_rv(resource, f"{ns}/{n}", content)
            yield (
                f"{ns}/{n}",
                (rv, b""),
                (lambda a=(k, ns, n, facts), r=rv: workloads.workload(*a, self.clock, r)),
            )

    def one(self, resource: str, group: str, namespace: str | None, name: str) -> dict[str, Any]:
        for _key, _fp, make in self.items(resource, group, namespace, name):
            return make()
        raise not_found(group, resource, name)

    def gone_object(
        self, resource: str, text: bytes, rv: int | None = None
    ) -> dict[str, Any] | None:
        """The last state of a deleted node, lease or pod, from its last stored view (``rv``:
        its resourceVersion; the read's by default)."""
        if resource == "nodes":
            return self.node(text, rv)
        if resource == "leases":
            return objects.lease(orjson.loads(text), self.lease_duration, self.clock, rv or self.rv)
        if resource == "pods":
            return objects.pod(orjson.loads(text), self.clock, rv or self.rv)
        return None
