"""The tick: apply pending actions, advance the engine to the room's "now", persist what
changed (timeline rows, views, series, the clock) and broadcast it after commit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from typing import Any

import redis
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from .. import bulk, timeline_store
from ..engine.scenario import (
    ScenarioError,
)
from ..engine.series import points_since
from ..engine.simulation import ActionFailed, Simulation
from ..engine.state import (
    SharedTolerations,
    node_state,
    parameters_view,
    pod_state,
    zone_states,
)
from ..lessons import progress
from ..models import (
    Action,
    ObjectView,
    Room,
    SeriesPoint,
)
from . import phases
from .broadcast import _broadcast_after_commit, bounded, max_bytes, resync_notice
from .clock import _clock_message, _now_target
from .runtime import (
    _CACHE,
    CONTROL_KINDS,
    SNAPSHOT_COST_FACTOR,
    SNAPSHOT_EVERY_S,
    Runtime,
    _fault_from_action,
    _runtime,
    _schedule_action,
    _snapshot,
    gc_paused,
    keep_engines_frozen,
)

log = logging.getLogger(__name__)
# Errors of the services a tick uses, not of the room or an action: the tick is retried.
TRANSIENT = (OperationalError, InterfaceError, redis.RedisError)
# A new room's first delta with more events, nodes and pods than this is not broadcast: a
# resync notice is (room_went_live).
FIRST_DELTA_MAX = 2000


def has_pending_actions(room_id: int) -> bool:
    """Whether a live room has faults waiting for a tick (controls are applied at once)."""
    return (
        Action.objects.filter(room_id=room_id, status=Action.PENDING, room__build_state=Room.LIVE)
        .exclude(kind__in=CONTROL_KINDS)
        .exists()
    )


def room_advance(
    room_id: int, wall_now: datetime | None = None, extra_ms: int = 0
) -> dict[str, Any] | None:
    """The tick: apply pending actions, advance the engine to the room's "now", persist
    what changed and broadcast it after commit. Callers hold the room's Redis lock.

    All or nothing: when anything in it raises, its transaction is rolled back, the cached
    engine (which may be half changed) is dropped (the next tick restores it from the snapshot
    and the action log), and the action that caused it is refused with the reason (the one
    being applied, else the newest this tick applied), so that the room goes on without it;
    the operator sees why. With no action to blame, the room is paused with the reason."""
    applied: list[int] = []
    try:
        with gc_paused():
            return _advance(room_id, wall_now or timezone.now(), extra_ms, applied)
    except TRANSIENT:
        # The database or Redis did not answer (SQLite busy, a restart): nobody's fault; the
        # rolled-back tick is tried again by the next beat, from a rebuilt engine.
        _CACHE.pop(room_id, None)
        log.warning("room %s: tick not done (the database or Redis)", room_id, exc_info=True)
        raise
    except Exception as exc:
        _CACHE.pop(room_id, None)
        cause_id = exc.action_id if isinstance(exc, ActionFailed) else None
        cause_id = cause_id or (applied[-1] if applied else None)
        log.exception("room %s: tick failed (action %s)", room_id, cause_id)
        _tick_failed(room_id, cause_id, exc)
        return None


def _tick_failed(room_id: int, cause_id: int | None, exc: BaseException) -> None:
    root = exc.__cause__ if isinstance(exc, ActionFailed) and exc.__cause__ else exc
    reason = f"{type(root).__name__}: {str(root)[:200]}".rstrip(": ")
    with transaction.atomic():
        room = Room.objects.select_for_update().filter(pk=room_id).first()
        if room is None:
            return
        if cause_id is not None:
            action = Action.objects.filter(pk=cause_id).first()
            if action is None:
                return
            action.status, action.at_ms = Action.REFUSED, None
            action.error = f"action: could not be applied ({reason}); the room goes on without it"
            action.save(update_fields=["status", "error", "at_ms"])
            refused = {"action": action.kind, "actor": action.actor, "error": action.error}
        else:  # nothing of this tick to blame: the room stops where it was, saying why
            room.paused, room.sim_anchor_ms = True, room.sim_ms
            room.save(update_fields=["paused", "sim_anchor_ms"])
            Action.objects.create(
                room=room,
                actor="server",
                kind="pause",
                payload={"type": "pause", "value": None},
                status=Action.REFUSED,
                error=f"the room could not advance ({reason}); it is paused",
            )
            refused = {"action": "tick", "actor": "server", "error": f"paused: {reason}"}
            _broadcast_after_commit(room.pk, _clock_message(room))
        # The pages fetch a fresh snapshot (what they hold may be ahead of the rolled-back
        # state) and the operator is shown why.
        _broadcast_after_commit(room.pk, {"type": "resync", "seq": room.seq, "refused": [refused]})


def _stalled(room: Room, target: int, wall_now: datetime) -> bool:
    """A running room that no worker ticked for more than PLAYGROUND_MAX_CATCH_UP_SECONDS of
    its clock (the whole stack was stopped, say, and started again hours later) resumes from
    where its clock stood, as if it had been paused meanwhile: re-anchored at ``wall_now``
    (saved, and a clock message sent to its pages). Catching up instead would simulate hours in
    one tick, holding the room (and on SQLite the whole database) for minutes."""
    limit = settings.PLAYGROUND_MAX_CATCH_UP_SECONDS
    if room.paused or limit <= 0 or room.speed <= 0:
        return False
    behind_s = (target - room.sim_ms) / (room.speed * 1000)
    if behind_s <= limit:
        return False
    log.warning(
        "room %s: its clock is %.0f s behind (nobody ticked it); it resumes from %.1f s",
        room.pk,
        behind_s,
        room.sim_ms / 1000,
    )
    room.sim_anchor_ms = room.sim_ms
    room.wall_anchor = wall_now
    room.save(update_fields=["sim_anchor_ms", "wall_anchor"])
    _broadcast_after_commit(
        room.pk,
        _clock_message(room),
    )
    return True


def _advance(
    room_id: int, wall_now: datetime, extra_ms: int, applied: list[int]
) -> dict[str, Any] | None:
    phases.start()
    with transaction.atomic():
        load = phases.mark()
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.build_state != Room.LIVE:
            return None  # still being built by a worker (build.py), or its build failed
        rt = _runtime(room)
        keep_engines_frozen()
        sim = rt.sim
        pending = list(room.actions.filter(status=Action.PENDING).order_by("id"))
        target = _now_target(room, wall_now) + extra_ms
        if _stalled(room, target, wall_now):
            target = room.sim_ms + extra_ms
        for action in pending:
            if action.kind in CONTROL_KINDS:
                continue
            at = max(sim.now_ms + 1, room.sim_ms + 1)
            action.at_ms = at
            try:
                fault = _fault_from_action(action, set(sim.cluster.nodes), sim)
                if "pod" in fault.args and fault.args["pod"] not in sim.cluster.pods:
                    raise ScenarioError("action.pod", f'unknown pod "{fault.args["pod"]}"')
            except ScenarioError as exc:
                action.status, action.error, action.at_ms = Action.REFUSED, str(exc), None
                action.save(update_fields=["status", "error", "at_ms"])
                continue
            _schedule_action(sim, fault, action.pk)
            applied.append(action.pk)
            action.status = Action.APPLIED
            action.save(update_fields=["status", "at_ms"])
            target = max(target, at)
        if target <= room.sim_ms and not pending:
            return None
        phases.since("load", load)
        with phases.phase("advance"):
            # A lesson's clock stops right after the instant a checkpoint is reached (paused).
            lesson_msg = progress.run(room, sim, target)
        refused = _record_refusals(room, sim)
        room.sim_ms = sim.now_ms
        if room.paused:
            room.sim_anchor_ms = room.sim_ms
        delta = _persist(room, rt, limit=max_bytes())
        if refused:
            delta["refused"] = refused
        commit = phases.mark()
    phases.since("commit", commit)
    with phases.phase("broadcast"):
        # The lesson's message first: a question reached in this tick holds back, for whoever
        # answers it, what this very delta would tell them (live.consumers, engine/holdback.py).
        if lesson_msg is not None:
            _broadcast_after_commit(room.pk, lesson_msg)
        _broadcast_after_commit(room.pk, bounded(delta))
    return delta


def _record_refusals(room: Room, sim: Simulation) -> list[dict[str, Any]]:
    """Actions valid when sent but whose target was gone at their instant (two operators,
    one tick): refused with the engine's reason, never replayed or exported."""
    out: list[dict[str, Any]] = []
    if not sim.refused_actions:
        return out
    for action in room.actions.filter(pk__in=list(sim.refused_actions)).order_by("id"):
        error = sim.refused_actions[action.pk]  # "action.node: ..." (the fault's path)
        action.status, action.error, action.at_ms = Action.REFUSED, error, None
        action.save(update_fields=["status", "error", "at_ms"])
        out.append({"action": action.kind, "actor": action.actor, "error": action.error})
    sim.refused_actions.clear()
    return out


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
        if e["type"] == "Fault" and e.get("fault") in ("AddNode", "DeleteNode"):
            zones = True  # a zone may appear or lose its last node
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
) -> dict[str, Any]:
    """Write what changed: new timeline rows, views of touched objects, the room's clock.
    ``fresh``: the room's first rows (none stored yet): every view, plain fast inserts, and
    no snapshot (the caller takes it once the room is live). ``limit``: a delta that would
    be bigger than this many bytes is not made: the resync notice that stands for it is
    returned instead (broadcast.bounded would send it)."""
    with phases.phase("persist"):
        delta, force_snapshot = _write(room, rt, force_snapshot, fresh, limit)
    every = max(SNAPSHOT_EVERY_S, SNAPSHOT_COST_FACTOR * rt.snapshot_cost)
    if (force_snapshot and not fresh) or time.monotonic() - rt.snapshot_at > every:
        with phases.phase("snapshot"):
            _snapshot(room, rt)
    return delta


def _write(
    room: Room, rt: Runtime, force_snapshot: bool, fresh: bool, limit: int | None
) -> tuple[dict[str, Any], bool]:
    """_persist's rows and the delta; whether a snapshot is due now (a fresh start)."""
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
        return _saved(room, rt, start, count, None, _no_changes(), True, size, limit)
    if fresh or start == 0:
        # Nothing stored yet (a new room, or a rewind that deleted everything): many events
        # at once go in compressed chunks (timeline_store).
        timeline_store.write(room.pk, start, events)
        force_snapshot = True
    elif events:
        # From event_count on: none stored yet (many at once in chunks, as a new room's).
        # Their JSON's bytes: the delta's lower bound begins.
        size += timeline_store.write(room.pk, start, events)
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
    for kind, key in deletes:
        ObjectView.objects.filter(room=room, kind=kind, key=key).delete()
    if fresh:
        bulk.insert_views(room.pk, upserts)
    elif upserts:
        bulk.upsert_views(room.pk, upserts)
    return _saved(room, rt, start, len(events), events, changes, force_snapshot, size, limit)


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
) -> tuple[dict[str, Any], bool]:
    """The end of _write: the series, the room's counters and clock saved (``count`` new
    events); the delta (a resync notice when ``size`` passed ``limit``) with ``events``, or
    with None for them (a big new room's, sent as a resync notice: room_went_live)."""
    sim = rt.sim
    _persist_series(room, sim)
    room.event_count = start + count
    room.seq += 1
    room.version += 1
    rt.version = room.version
    room.save(
        update_fields=[
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
    )
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


def _persist_series(room: Room, sim: Simulation) -> None:
    """Store the chart points the engine kept since the last tick. Points of the last stored
    instant are written again (a later sample in one instant replaces the earlier), so every
    point from ``series_t_ms`` on is replaced by the engine's."""
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
    SeriesPoint.objects.filter(room=room, t_ms__gte=since).delete()
    SeriesPoint.objects.bulk_create(rows, batch_size=1000)
    room.series_t_ms = sim.now_ms


def _public_event(idx: int, e: dict[str, Any]) -> dict[str, Any]:
    out = dict(e)
    out["t"] = e["t"] / 1000
    out["idx"] = idx
    return out
