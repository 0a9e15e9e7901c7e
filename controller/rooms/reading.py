"""Reading a room: the snapshot a client gets, the timeline, charts, manifests and the
export (``simulate`` replays it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import yaml
from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from .. import timeline_store
from ..engine import safe_yaml
from ..engine.versions import profile_for
from ..lessons import messages
from ..models import (
    Action,
    ObjectView,
    Room,
    SeriesPoint,
)
from .clock import _now_target, effective_of
from .runtime import CONTROL_KINDS, _restore, gc_paused

log = logging.getLogger(__name__)


def room_series(room: Room) -> dict[str, Any]:
    """The room's charts from t=0 (seconds): ready nodes per zone, nodes waiting in each
    zone's queue, and desired/ready replicas per workload, each a list of changes."""
    out: dict[str, Any] = {"t": room.sim_ms / 1000, "zones": [], "queue": {}, "workloads": {}}
    rows = SeriesPoint.objects.filter(room=room).order_by("t_ms", "id")
    for series, t_ms, value in rows.values_list("series", "t_ms", "value"):
        t = t_ms / 1000
        if series == "zones":
            ready = {z: states[0] for z, states in value.items()}
            out["zones"].append([t, ready])
        elif series.startswith("queue/"):
            out["queue"].setdefault(series[6:], []).append([t, value])
        else:
            out["workloads"].setdefault(series[9:], []).append([t, *value])
    return out


# -- reading --------------------------------------------------------------------------------
@contextmanager
def one_committed_state() -> Iterator[None]:
    """A transaction whose reads all see one committed state (the room, its views and events
    of one tick), without waiting for a tick. SQLite's transaction gives that (it holds the
    database's lock); PostgreSQL's default, READ COMMITTED, gives each statement what was
    committed when it began, so a tick committing between two reads would mix two ticks:
    the outermost transaction asks for REPEATABLE READ (one snapshot, no locks taken)."""
    outermost = not transaction.get_connection().in_atomic_block
    with transaction.atomic():
        connection = transaction.get_connection()
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def room_snapshot(
    room: Room, last_events: int = 300, client: str = "", lesson: bool = True
) -> dict[str, Any]:
    """What a client gets on connect: every view row, the recent events, the clock, seq;
    for a lesson room the lesson and its state (``client``'s own answer included; the
    consumer filters it by role). ``lesson=False`` leaves the key out (the shared HTTP
    snapshot: the lesson's state is per role and changes without a new room version)."""
    room = Room.objects.get(pk=room.pk)
    out = orjson.loads(with_tail(room_snapshot_json(room, last_events), snapshot_clock(room)))
    if lesson:
        out["lesson"] = messages.snapshot(room, client)
    return out


def snapshot_clock(room: Room) -> dict[str, Any]:
    """A snapshot's clock, as of now: the simulated time the page shows (``t``), speed,
    paused, and the speed it really runs at when its ticks cannot keep up (``effective``,
    None when it keeps up: clock.effective_of). Not part of ``room_snapshot_json`` (built
    once per room version), so that a snapshot served from that cache has the clock of the
    moment it is served."""
    return {
        "t": _now_target(room, timezone.now()) / 1000 if not room.paused else room.sim_ms / 1000,
        "speed": room.speed,
        "paused": room.paused,
        "effective": effective_of(room),
    }


def with_tail(body: bytes, tail: dict[str, Any]) -> bytes:
    """The JSON object ``body`` with the (non-empty) ``tail``'s keys added at its end."""
    return body[:-1] + b"," + orjson.dumps(tail, option=orjson.OPT_NON_STR_KEYS)[1:]


def room_snapshot_json(room: Room, last_events: int = 300) -> bytes:
    """``room_snapshot(room, lesson=False)`` without its clock (snapshot_clock) as JSON
    bytes, made from the view rows' stored JSON texts without decoding them: a 1,000-node
    room's snapshot is 17 MB of JSON, and decoding its 31,000 rows and encoding them again
    took ~1 s per client."""
    with one_committed_state(), gc_paused():
        room = Room.objects.get(pk=room.pk)
        views = list(
            ObjectView.objects.filter(room=room).values_list(
                "kind", "key", Cast("data", output_field=TextField())
            )
        )
        events = timeline_store.last(room, last_events)
    nodes = sorted((key, text) for kind, key, text in views if kind == "node")
    pods = sorted((key, text) for kind, key, text in views if kind == "pod")
    one = {kind: text for kind, _key, text in views if kind in ("zone", "metrics", "params")}
    head = orjson.dumps(
        {
            "type": "snapshot",
            "seq": room.seq,
            "simT": room.sim_ms / 1000,
            "room": {"name": room.name, "slug": room.slug, "scenario": room.scenario_name},
        }
    )
    recent = [{"idx": idx, "t": t / 1000, "type": typ, **data} for idx, t, typ, data in events]
    return b"".join(
        [
            head[:-1],
            b',"nodes":[',
            ",".join(text for _key, text in nodes).encode(),
            b'],"pods":[',
            ",".join(text for _key, text in pods).encode(),
            b'],"zones":',
            one["zone"].encode() if "zone" in one else b"[]",
            b',"workloads":',
            one["metrics"].encode() if "metrics" in one else b"{}",
            b',"params":',
            one["params"].encode() if "params" in one else b"null",
            b',"events":',
            orjson.dumps(recent, option=orjson.OPT_NON_STR_KEYS),
            b"}",
        ]
    )


def room_timeline(room: Room) -> list[dict[str, Any]]:
    """The room's whole timeline (``t`` in ms), as stored."""
    return [{"t": t, "type": typ, **data} for _idx, t, typ, data in timeline_store.after(room)]


def room_events(room: Room, since: int = -1, limit: int = 5000) -> list[dict[str, Any]]:
    """The timeline after event ``since`` (at most ``limit``; ``t`` in seconds, each with its
    index), for clients catching up."""
    rows = timeline_store.after(room, since, limit=limit)
    return [{"idx": i, "t": t / 1000, "type": typ, **data} for i, t, typ, data in rows]


def room_manifests(room: Room, without_answers: bool = False) -> str:
    """The room's cluster now: the scenario (nodes, settings with the parameter changes
    applied so far), workloads and pods, which ``import_cluster`` reads back into the same
    scenario. ``without_answers``: a lesson's compiled out (lessons.holding.keeps_secrets)."""
    from ..kube_io.exports import cluster_manifests_yaml

    # Rebuilt from the stored state (this process's cached engine may be behind the worker's).
    sim, _snapshot_due = _restore(room)
    docs = safe_yaml.load_all(room.scenario_yaml)
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    if without_answers:
        _without_lesson(room, root)
    # The settings as they are now: the parameter changes applied so far, in order.
    spec = root.setdefault("spec", {})
    for action in room.actions.filter(status=Action.APPLIED, kind="SetParameters").order_by("id"):
        for section in ("controllerManager", "kubelet", "apiServer"):
            if action.payload.get(section):
                spec[section] = {**(spec.get(section) or {}), **action.payload[section]}
    header = (
        f"# Room {room.slug!r} at simulated {room.sim_ms / 1000:g} s: the scenario (nodes, "
        "settings), then workloads and pods.\n# manage.py import_cluster reads it back.\n"
    )
    return cluster_manifests_yaml(sim, root, header)


def _without_lesson(room: Room, root: dict[str, Any]) -> None:
    from ..engine.holdback import without_lesson
    from ..lessons.definition import lesson_of

    lesson = lesson_of(room)
    if lesson is not None:  # the faults still to come too: they tell what the next steps do
        without_lesson(root, lesson, until_ms=room.sim_ms)


def room_export(room: Room, without_answers: bool = False) -> str:
    """The scenario plus the applied action log as one YAML that ``simulate`` replays.
    ``without_answers``: a lesson's compiled out (lessons.holding.keeps_secrets), the same
    timeline."""
    # The room's own copy (validated at creation), so it is changed freely.
    docs = safe_yaml.load_all(room.scenario_yaml)
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    if without_answers:
        _without_lesson(room, root)
    spec = root.setdefault("spec", {})
    # Say the release even when the scenario did not (it ran as 1.18 then).
    spec["kubernetesVersion"] = profile_for(spec.get("kubernetesVersion")).version
    faults = list(spec.get("faults") or [])
    for action in (
        room.actions.filter(status=Action.APPLIED).exclude(kind__in=CONTROL_KINDS).order_by("id")
    ):
        # at, type, then the fields by name: PostgreSQL's jsonb does not keep key order.
        payload = dict(action.payload)
        fault = {"at": f"{action.at_ms}ms", "type": payload.pop("type")}
        faults.append({**fault, **dict(sorted(payload.items()))})
    spec["faults"] = faults
    spec["duration"] = f"{max(room.sim_ms, 1)}ms"
    spec.pop("expect", None)
    header = f"# Exported from room {room.slug!r} at simulated {room.sim_ms / 1000:g} s\n"
    # Extra documents are objects too (load_scenario): they stay, after the scenario.
    others = [d for d in docs if d is not root]
    return header + yaml.safe_dump_all([root, *others], sort_keys=False)
