"""Taint templates and the condition -> taint tables of node_lifecycle_controller.go."""

from __future__ import annotations

from ..objects import (
    DISK_PRESSURE,
    FALSE,
    MEMORY_PRESSURE,
    NETWORK_UNAVAILABLE,
    NO_EXECUTE,
    NO_SCHEDULE,
    PID_PRESSURE,
    READY,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    TRUE,
    UNKNOWN,
    Node,
    Taint,
)

UNREACHABLE_TAINT_TEMPLATE = Taint(TAINT_UNREACHABLE, NO_EXECUTE)
NOT_READY_TAINT_TEMPLATE = Taint(TAINT_NOT_READY, NO_EXECUTE)

# nodeConditionToTaintKeyStatusMap: condition type -> {status: taint key}
NODE_CONDITION_TO_TAINT_KEY_STATUS_MAP: dict[str, dict[str, str]] = {
    READY: {FALSE: TAINT_NOT_READY, UNKNOWN: TAINT_UNREACHABLE},
    MEMORY_PRESSURE: {TRUE: TAINT_MEMORY_PRESSURE},
    DISK_PRESSURE: {TRUE: TAINT_DISK_PRESSURE},
    NETWORK_UNAVAILABLE: {TRUE: TAINT_NETWORK_UNAVAILABLE},
    PID_PRESSURE: {TRUE: TAINT_PID_PRESSURE},
}

# taintKeyToNodeConditionMap: the keys doNoScheduleTaintingPass owns.
TAINT_KEY_TO_NODE_CONDITION_MAP: dict[str, str] = {
    key: ctype
    for ctype, by_status in NODE_CONDITION_TO_TAINT_KEY_STATUS_MAP.items()
    for key in by_status.values()
}


def no_schedule_taint_diff(node: Node) -> tuple[list[Taint], list[Taint]]:
    """The diff ``doNoScheduleTaintingPass`` applies: (taints to add, taints to remove).

    Port of Controller.doNoScheduleTaintingPass: desired condition taints plus
    ``unschedulable`` when cordoned, compared only against the node's NoSchedule taints
    with those keys (taintutils.TaintSetDiff).
    """
    desired: list[Taint] = []
    for c in node.conditions:
        by_status = NODE_CONDITION_TO_TAINT_KEY_STATUS_MAP.get(c.type)
        if by_status is not None:
            key = by_status.get(c.status)
            if key is not None:
                desired.append(Taint(key, NO_SCHEDULE))
    if node.unschedulable:
        desired.append(Taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE))
    existing = [
        t
        for t in node.taints
        if t.effect == NO_SCHEDULE
        and (t.key == TAINT_UNSCHEDULABLE or t.key in TAINT_KEY_TO_NODE_CONDITION_MAP)
    ]
    to_add = [t for t in desired if not any(t.matches(e) for e in existing)]
    to_remove = [e for e in existing if not any(e.matches(t) for t in desired)]
    return to_add, to_remove
