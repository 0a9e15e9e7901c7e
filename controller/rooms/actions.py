"""An operator's faults and parameter changes: validated against the scenario and the room's
nodes, recorded pending; the next tick applies them.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.db.models import F

from .. import limits
from ..engine.config import KubeletConfig
from ..engine.scenario import (
    Scenario,
    ScenarioError,
    check_nesting,
    load_scenario,
    parse_fault,
)
from ..engine.versions import Profile
from ..models import (
    Action,
    ObjectView,
    Room,
)
from .errors import ActionError, refuse_expired, refuse_unstorable


# -- actions --------------------------------------------------------------------------------
def validate_action(room: Room, payload: dict[str, Any]) -> dict[str, Any]:
    """Check an operator's fault against the scenario format and the room's current nodes."""
    if not isinstance(payload, dict):
        raise ActionError("action: must be a mapping")
    try:
        check_nesting(payload, "action")
    except ScenarioError as exc:
        raise ActionError(str(exc)) from None
    # NUL first: PostgreSQL refuses it even in a query's parameters (the lookups below).
    refuse_unstorable(payload, "action", numbers=False)
    payload = {k: v for k, v in payload.items() if k != "at"}
    known = set(ObjectView.objects.filter(room=room, kind="node").values_list("key", flat=True))
    kubelet, kubelet_raw, profile = _scenario_kubelet(room.scenario_yaml)
    try:
        parse_fault({**payload, "at": 0}, known, kubelet, kubelet_raw, "action", profile)
    except ScenarioError as exc:
        raise ActionError(str(exc)) from None
    _refuse_unknown_targets(room, payload)
    refuse_unstorable(payload, "action")  # a NaN the fault's own checks let through
    return payload


def _refuse_unknown_targets(room: Room, payload: dict[str, Any]) -> None:
    """What an action names must exist in the room's cluster now (its views, as the last
    tick stored them): a pod, a zone (a node's zone, or its topology label), a workload. The
    node is checked by parse_fault against the node views. Refused at submit with the path,
    rather than acknowledged and refused by the next tick."""
    views = ObjectView.objects.filter(room=room)
    pod = payload.get("pod")
    if pod is not None and not views.filter(kind="pod", key=pod).exists():
        raise ActionError(f'action.pod: unknown pod "{pod}"')
    zone = payload.get("zone") if payload.get("type") in ("ZoneOutage", "ZoneRestore") else None
    if zone is not None and not (
        views.filter(kind="node", data__zone=zone).exists()
        or views.filter(kind="node", **{"data__labels__topology.kubernetes.io/zone": zone}).exists()
    ):
        raise ActionError(f'action.zone: no node of this room is in zone "{zone}"')
    workload = payload.get("workload") if payload.get("type") == "ScaleWorkload" else None
    if workload is not None and not _workload_exists(views, workload):
        raise ActionError(f'action.workload: unknown workload "{workload}"')


def _workload_exists(views: Any, ref: str) -> bool:
    """``Kind/name`` or ``Kind/namespace/name`` among the room's workloads (the metrics view
    lists each as ``Kind/namespace/name``; a Deployment's own ReplicaSets only by their
    pods' owner)."""
    parts = ref.split("/")
    metrics = views.filter(kind="metrics", key="workloads").values_list("data", flat=True).first()
    for key in metrics or {}:
        kind, ns, name = (key.split("/") + ["", "", ""])[:3]
        if parts in ([kind, ns, name], [kind, name]):
            return True
    return (
        parts[0] == "ReplicaSet"
        and views.filter(kind="pod", data__owner=f"ReplicaSet/{parts[-1]}").exists()
    )


# scenario text -> its kubelet settings (typed, raw) and Kubernetes release: AddNode's node spec
# and every action are parsed against them.
# Parsing a 1,000-node scenario takes seconds and a click should not, so room_create fills this
# and validation reads it; at most a few scenarios are kept.
_KUBELET_OF: dict[str, tuple[KubeletConfig, dict[str, Any], Profile]] = {}


def _scenario_kubelet(
    text: str, scenario: Scenario | None = None
) -> tuple[KubeletConfig, dict[str, Any], Profile]:
    if text not in _KUBELET_OF:
        scenario = scenario or load_scenario(text)
        while len(_KUBELET_OF) >= 8:
            del _KUBELET_OF[next(iter(_KUBELET_OF))]
        _KUBELET_OF[text] = (scenario.config.kubelet, scenario.kubelet_raw, scenario.profile)
    return _KUBELET_OF[text]


def action_submit(room: Room, payload: dict[str, Any], actor: str) -> Action:
    """Record an operator's fault; the next tick applies it (exactly once, in id order)."""
    room.expired_at = Room.objects.filter(pk=room.pk).values_list("expired_at", flat=True).get()
    refuse_expired(room, "action")
    payload = validate_action(room, payload)
    refuse_unstorable(actor, "actor")
    more = limits.check_action(room, payload)
    with transaction.atomic():
        _one_submission_at_a_time(room.pk)
        if more:  # the room's cost grows by what it adds (limits.check_action)
            Room.objects.filter(pk=room.pk).update(cost_objects=F("cost_objects") + more)
        return Action.objects.create(
            room=room, actor=actor[:120], kind=payload["type"], payload=payload
        )


# The advisory lock's first key: the room's actions (the second is the room's id).
_SUBMIT_LOCK = 0x706C6179


def _one_submission_at_a_time(room_id: int) -> None:
    """PostgreSQL hands out an action's id from its sequence before the INSERT commits, so
    two operators' actions could commit in the other order, and a tick between the two
    commits would apply the higher id first. A room's submissions take a transaction-scoped
    advisory lock one after another: an action is visible only once every lower id of its
    room is (ticks do not take it, so a submission never waits for a tick). SQLite writes
    one transaction at a time already."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", [_SUBMIT_LOCK, room_id & 0x7FFFFFFF]
            )


def parameters_submit(room: Room, params: dict[str, Any], actor: str) -> Action:
    """Change cluster parameters: validated with the scenario loader's code, applied as a
    SetParameters action so that replay and export see it too."""
    if not isinstance(params, dict):
        raise ActionError("parameters: must be a mapping of sections")
    sections = ("controllerManager", "kubelet", "apiServer", "scheduler")
    unknown = sorted(set(params) - set(sections))
    if unknown:
        raise ActionError(
            f"parameters.{unknown[0]}: unknown section (known: controllerManager, kubelet, "
            "apiServer, scheduler)"
        )
    payload = {"type": "SetParameters"}
    for key in sections:
        if params.get(key):
            payload[key] = params[key]
    if len(payload) == 1:
        raise ActionError("parameters: nothing to change")
    return action_submit(room, payload, actor)
