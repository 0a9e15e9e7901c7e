"""What if a zone or nodes failed: the room's scenario run headless (controller/whatif.py);
the room is not touched.
"""

from __future__ import annotations

from typing import Any

from ..engine import safe_yaml
from ..engine.scenario import (
    load_scenario,
)
from ..models import (
    Room,
)
from .errors import ActionError

WHAT_IF_DURATION_S = 1800


def what_if_choices(room: Room) -> dict[str, list[str]]:
    """The zones and nodes a What-if may fail: the room's scenario's (zones by their
    topology.kubernetes.io/zone label, else the display name of their zone key)."""
    from ..engine.nodelifecycle.zones import get_zone_key, zone_display

    scenario = load_scenario(room.scenario_yaml)
    zones = []
    for n in scenario.nodes:
        zone = n.labels.get("topology.kubernetes.io/zone") or zone_display(get_zone_key(n.labels))
        if zone and zone not in zones:
            zones.append(zone)
    return {"zones": zones, "nodes": [n.name for n in scenario.nodes]}


def what_if_check(room: Room, zone: str, nodes: list[str], at_s: float) -> None:
    """ActionError naming the field when the What-if cannot run: an unknown zone or node,
    nothing to fail, or ``at_s`` outside the run. The form's request is checked with it
    before its run is queued."""
    choices = what_if_choices(room)
    if zone and zone not in choices["zones"]:
        raise ActionError(f'zone: unknown zone "{zone}"')
    for n in nodes:
        if n not in choices["nodes"]:
            raise ActionError(f'nodes: unknown node "{n}"')
    if not zone and not nodes:
        raise ActionError("pick a zone or at least one node to fail")
    if not (isinstance(at_s, int | float) and 0 <= at_s < WHAT_IF_DURATION_S):
        raise ActionError(f"at: must be between 0 and {WHAT_IF_DURATION_S} seconds")


def room_what_if(room: Room, zone: str, nodes: list[str], at_s: float) -> dict[str, Any]:
    """What if ``zone`` (or ``nodes``) failed at ``at_s`` in the room's scenario: per workload,
    when it falls short of its desired replicas and when it is whole again (ms), run headless
    for WHAT_IF_DURATION_S simulated seconds. The room is not touched."""
    from ..whatif import what_if

    what_if_check(room, zone, nodes, at_s)
    docs = safe_yaml.load_all(room.scenario_yaml)
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    if len(docs) > 1:  # extra documents are objects
        root.setdefault("spec", {}).setdefault("objects", []).extend(
            d for d in docs if d is not root
        )
    rows = what_if(
        root,
        zone=zone or None,
        nodes=list(nodes),
        at_ms=round(at_s * 1000),
        duration_ms=WHAT_IF_DURATION_S * 1000,
    )
    return {
        "zone": zone,
        "nodes": list(nodes),
        "at_ms": round(at_s * 1000),
        "duration_ms": WHAT_IF_DURATION_S * 1000,
        "rows": rows,
    }
