"""A tick's results stored: new timeline rows, the views of the objects that changed, chart
points, the room's counters and clock; the delta that tells the pages (tick.py, and the
rewind and the first persist of a new room).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from .. import bulk, timeline_store
from ..engine.series import points_since
from ..engine.simulation import Simulation
from ..engine.state import (
    SharedTolerations,
    node_state,
    parameters_view,
    pod_state,
    zone_states,
)
from ..models import ObjectView, Room, SeriesPoint
from . import phases
from .broadcast import resync_notice
from .changes import note_after_commit
from .runtime import SNAPSHOT_COST_FACTOR, SNAPSHOT_EVERY_S, Runtime, _snapshot

# A new room's first delta with more events, nodes and pods than this is not broadcast: a
# resync notice is (room_went_live).
FIRST_DELTA_MAX = 2000
# The room's fields a persist writes (its counters and clock).
SAVED_FIELDS = [
    "series_t_ms",
    "sim_ms",
    "sim_anchor_ms",
    "wall_anchor",
    "event_count",
    "seq",
    "version",
    "speed",
    "paused",
]


def _touched(events: list[dict[str, Any]]) -> tuple[set[str], set[str], bool]:
    nodes, pods, zones = set(), set(), False
    for e in events:
        node, pod = e.get("node"), e.get("pod")
        if isinstance(node, dict):  # an AddNode fault carries the node spec
            node = node.get("name")
        if node:
            nodes.add(node)
        if isinstance(pod, str) and pod:
            pods.add(pod)
        if e["type"] == "Fault" and e.get("fault") in ("AddNode", "DeleteNode", "Label"):
            zones = True  # a zone may appear or lose its last node (or a node its counting)
        if e["type"] in (
            "ZoneState",
            "ZoneRate",
            "TaintAdded",
            "TaintRemoved",
            "NodeReady",
            "PodDeleted",
        ):
            zones = True
        obj = e.get("object")
        if not isinstance(obj, str):  # an Apply fault carries the manifest
            continue
        if obj.startswith("Node/"):
            nodes.add(obj[5:])
        elif obj.startswith("Pod/"):
            pods.add(obj[4:])
    return nodes, pods, zones


def _persist(
    room: Room,
    rt: Runtime,
    force_snapshot: bool = False,
    fresh: bool = False,
    limit: int | None = None,
    later: list[Callable[[], object]] | None = None,
) -> dict[str, Any]:
    """Write what changed: new timeline rows, views of touched objects, the room's clock.
    ``fresh``: the room's first rows (none stored yet): every view, plain fast inserts, and
    no snapshot (the caller takes it once the room is live). ``limit``: a delta that would
    be bigger than this many bytes is not made: the resync notice that stands for it is
    returned instead (broadcast.bounded would send it). ``later`` (a tick's): nothing is
    written now; what is written is made now (the events' rows, the views' JSON, the chart
    points) and the writes are appended to ``later``, functions for the caller to call in
    order inside its short transaction; the room's counters and clock are set on ``room``,
    not saved (the caller saves the room as it is then)."""

    def run(write: Callable[[], object]) -> None:
        if later is None:
            write()
        else:
            later.append(write)

    with phases.phase("persist"):
        delta, force_snapshot = _write(room, rt, force_snapshot, fresh, limit, run, later is None)
    every = max(SNAPSHOT_EVERY_S, SNAPSHOT_COST_FACTOR * rt.snapshot_cost)
    if (force_snapshot and not fresh) or time.monotonic() - rt.snapshot_at > every:

        def snapshot() -> None:
            with phases.phase("snapshot"):
                _snapshot(room, rt)

        run(snapshot)
    return delta


def _write(
    room: Room,
    rt: Runtime,
    force_snapshot: bool,
    fresh: bool,
    limit: int | None,
    run: Callable[[Callable[[], object]], None],
    save: bool,
) -> tuple[dict[str, Any], bool]:
    """_persist's rows and the delta; whether a snapshot is due now (a fresh start). Each
    write is passed to ``run``; ``save``: the room's row saved (else left to the caller)."""
    sim = rt.sim
    events = list(sim.timeline.events)
    sim.timeline.events.clear()
    start = room.event_count
    size = 0
    if fresh and len(events) > FIRST_DELTA_MAX:
        # A big new room: its first delta is a resync notice (room_went_live), so its views
        # are not kept for it; they go straight into the database as they are made (on
        # PostgreSQL the server stores each while the next is made), while a thread makes
        # its timeline's chunks (stored after them).
        count = len(events)
        with timeline_store.written_after(room.pk, start, events):  # takes the events over
            bulk.insert_views(room.pk, _all_views(sim))
        getattr(sim, "observed_nodes", set()).clear()
        return _saved(room, rt, start, count, None, _no_changes(), True, size, limit, run, save)
    if fresh or start == 0:
        # Nothing stored yet (a new room, or a rewind that deleted everything): many events
        # at once go in compressed chunks (timeline_store).
        _store_events(room.pk, start, events, run, save)
        force_snapshot = True
    elif events:
        # From event_count on: none stored yet (many at once in chunks, as a new room's).
        # Their JSON's bytes: the delta's lower bound begins.
        size += _store_events(room.pk, start, events, run, save)
    # A fresh room's views are all of them (below): which objects its events touched is moot.
    nodes, pods, zones_changed = (set(), set(), True) if fresh else _touched(events)
    # Kubelets whose eviction signals moved at a sync: their view carries the new figures.
    observed = getattr(sim, "observed_nodes", set())
    nodes |= observed
    observed.clear()
    if force_snapshot:
        nodes = set(sim.cluster.nodes)
        pods = set(sim.cluster.pods)
        zones_changed = True
    # Taint-manager countdowns and heartbeat ages move without events: the page derives
    # them from timestamps in the views.
    changes = _no_changes()
    upserts: list[tuple[str, str, Any]] = []
    deletes: list[tuple[str, str]] = []
    # Each view is encoded once, for its row; the lengths add up to a lower bound of the
    # delta's size, so that a delta over ``limit`` is known before it is built (its views are
    # not kept, the delta not made nor encoded: a resync notice stands for it).
    # Pods holding the same tolerations share their dicts (state.tolerations_view).
    shared: SharedTolerations = {}
    for kind, names, objects, view in (
        ("node", nodes, sim.cluster.nodes, node_state),
        ("pod", pods, sim.cluster.pods, partial(pod_state, shared=shared)),
    ):
        out = changes[kind + "s"]
        for name in sorted(names):
            obj = objects.get(name)
            if obj is None:
                deletes.append((kind, name))
                out[name] = None
                continue
            data = view(sim, obj)
            if fresh:
                upserts.append((kind, name, data))
                out[name] = data
                continue
            text = bulk.Encoded(bulk.dumps(data))
            upserts.append((kind, name, text))
            size += len(text) + len(name)
            if limit is None or size <= limit:
                out[name] = data
    if zones_changed:
        zs = zone_states(sim)
        changes["zones"] = zs
        upserts.append(("zone", "*", zs))
    if force_snapshot or any(
        e["type"] == "Fault" and e.get("fault") in ("SetParameters", "RestartControllerManager")
        for e in events
    ):
        params = parameters_view(sim)
        changes["params"] = params
        upserts.append(("params", "*", params))
    if pods:
        # Ready/desired replicas per workload, for the page's chart (only when pods changed).
        wl = {ref: list(v) for ref, v in sim.workloads.metrics().items()}
        changes["workloads"] = wl
        upserts.append(("metrics", "workloads", wl))
    run(partial(note_after_commit, room.pk, room.seq + 1, nodes, pods, force_snapshot))
    if deletes:
        run(partial(_delete_views, room.pk, deletes))
    if fresh:
        run(partial(bulk.insert_views, room.pk, upserts))
    elif upserts:
        run(partial(bulk.upsert_views, room.pk, upserts))
    return _saved(
        room, rt, start, len(events), events, changes, force_snapshot, size, limit, run, save
    )


def _store_events(
    room_id: int,
    start: int,
    events: list[dict[str, Any]],
    run: Callable[[Callable[[], object]], None],
    now: bool,
) -> int:
    """The events stored from index ``start`` (``now``: at once, else their rows made now and
    the insert passed to ``run``); their JSON's bytes."""
    if now:
        return timeline_store.write(room_id, start, events)
    size, store = timeline_store.prepare(room_id, start, events)
    run(store)
    return size


def _delete_views(room_id: int, deletes: list[tuple[str, str]]) -> None:
    for kind, key in deletes:
        ObjectView.objects.filter(room_id=room_id, kind=kind, key=key).delete()


def _no_changes() -> dict[str, Any]:
    """A delta's changed views before any is added: nodes and pods by name, the zones, the
    workloads' replicas, the parameters (None: unchanged)."""
    return {"nodes": {}, "pods": {}, "zones": None, "workloads": None, "params": None}


def _all_views(sim: Simulation) -> Iterator[tuple[str, str, Any]]:
    """Every view of a new room, as _write stores them: nodes, pods (by name), the zones,
    the parameters, the workloads' replicas."""
    for name in sorted(sim.cluster.nodes):
        yield ("node", name, node_state(sim, sim.cluster.nodes[name]))
    shared: SharedTolerations = {}  # pods holding the same tolerations share their dicts
    for key in sorted(sim.cluster.pods):
        yield ("pod", key, pod_state(sim, sim.cluster.pods[key], shared))
    yield ("zone", "*", zone_states(sim))
    yield ("params", "*", parameters_view(sim))
    if sim.cluster.pods:
        yield ("metrics", "workloads", {r: list(v) for r, v in sim.workloads.metrics().items()})


def _saved(
    room: Room,
    rt: Runtime,
    start: int,
    count: int,
    events: list[dict[str, Any]] | None,
    changes: dict[str, Any],
    force_snapshot: bool,
    size: int,
    limit: int | None,
    run: Callable[[Callable[[], object]], None],
    save: bool,
) -> tuple[dict[str, Any], bool]:
    """The end of _write: the series, the room's counters and clock saved (``count`` new
    events); the delta (a resync notice when ``size`` passed ``limit``) with ``events``, or
    with None for them (a big new room's, sent as a resync notice: room_went_live)."""
    sim = rt.sim
    run(partial(_store_series, room.pk, room.series_t_ms, _series_rows(room, sim)))
    room.series_t_ms = sim.now_ms
    room.event_count = start + count
    room.seq += 1
    room.version += 1
    rt.version = room.version
    if save:
        room.save(update_fields=SAVED_FIELDS)
    delta = {
        "type": "delta",
        "seq": room.seq,
        "t": sim.now_ms / 1000,
        "speed": room.speed,
        "paused": room.paused,
    }
    if limit is not None and size > limit:
        return resync_notice(delta, size, limit, count), force_snapshot
    delta |= {
        # A new room's first instant is sent as a resync notice when it is big (room_went_live):
        # its events are not made into messages (935,000 of them at 5,000 nodes: 1.5 s).
        "events": None
        if events is None
        else [_public_event(start + i, e) for i, e in enumerate(events)],
        **changes,
    }
    return delta, force_snapshot


def _series_rows(room: Room, sim: Simulation) -> list[SeriesPoint]:
    """The chart points the engine kept since the last tick. Points of the last stored
    instant are written again (a later sample in one instant replaces the earlier), so every
    point from ``series_t_ms`` on is replaced by the engine's (``_store_series``)."""
    since = room.series_t_ms
    wl = sim.workloads
    rows = [
        SeriesPoint(room=room, series="zones", t_ms=t, value={z[0]: list(z[1:]) for z in zones})
        for t, _pods, zones in points_since(wl.cluster_series, since)
    ]
    for key, points in wl.workload_series.items():
        rows += [
            SeriesPoint(room=room, series=f"workload/{key}", t_ms=t, value=[desired, ready])
            for t, desired, ready in points_since(points, since)
        ]
    for zone, points in sim.queue_series.items():
        rows += [
            SeriesPoint(room=room, series=f"queue/{zone}", t_ms=t, value=n)
            for t, n in points_since(points, since)
        ]
    return rows


def _store_series(room_id: int, since: int, rows: list[SeriesPoint]) -> None:
    SeriesPoint.objects.filter(room_id=room_id, t_ms__gte=since).delete()
    SeriesPoint.objects.bulk_create(rows, batch_size=1000)


def _public_event(idx: int, e: dict[str, Any]) -> dict[str, Any]:
    out = dict(e)
    out["t"] = e["t"] / 1000
    if "first" in out:  # a K8sEvent's firstTimestamp, as t
        out["first"] = e["first"] / 1000
    out["idx"] = idx
    return out
