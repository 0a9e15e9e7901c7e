"""What if a zone or nodes failed: the room's scenario run headless (controller/whatif.py);
the room is not touched.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson
import redis

from ..engine import safe_yaml
from ..engine.scenario import (
    Scenario,
    load_scenario,
)
from ..locks import redis_client
from ..models import (
    Room,
)
from .errors import ActionError

WHAT_IF_DURATION_S = 1800
# How long a What-if run's result can be read through its room: Celery keeps a task's result
# a day (result_expires' default), so does the note of which room queued it.
WHAT_IF_KEPT_S = 24 * 3600
# How long a scenario's What-if choices are kept (rooms expire well before: 2 h idle).
CHOICES_S = 24 * 3600
TASK_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _run_key(task_id: str) -> str:
    return f"playground:whatif:{task_id}"


def what_if_queued(room: Room, task_id: str) -> None:
    """Notes that ``task_id`` is ``room``'s What-if run: its result is read through that room
    only (``what_if_of``)."""
    redis_client().set(_run_key(task_id), room.pk, ex=WHAT_IF_KEPT_S)


def what_if_of(room: Room, task_id: str) -> bool:
    """Whether ``task_id`` is a What-if run queued through ``room`` (and not expired): another
    room's run, an unknown id or anything but a task id is not (the view answers 404; before,
    any room's URL read any run, and an unknown id answered "running" forever)."""
    if not TASK_ID.fullmatch(task_id):
        return False
    owner = redis_client().get(_run_key(task_id))
    return owner is not None and owner.decode() == str(room.pk)


def _choices_key(text: str) -> str:
    return f"playground:whatif-choices:{hashlib.sha256(text.encode()).hexdigest()}"


def choices_of(scenario: Scenario) -> dict[str, list[str]]:
    """The zones and nodes of ``scenario`` a What-if may fail (zones by their
    topology.kubernetes.io/zone label, else the display name of their zone key)."""
    from ..engine.nodelifecycle.zones import get_zone_key, zone_display

    zones = []
    for n in scenario.nodes:
        zone = n.labels.get("topology.kubernetes.io/zone") or zone_display(get_zone_key(n.labels))
        if zone and zone not in zones:
            zones.append(zone)
    return {"zones": zones, "nodes": [n.name for n in scenario.nodes]}


def remember_choices(text: str, scenario: Scenario) -> None:
    """Keeps the What-if choices of a scenario text where ``what_if_choices`` finds them: the
    heavy worker that builds a room has its scenario parsed anyway; the web process must not
    parse a big one again for each page view and each What-if form (issue #35, attack 4: four
    What-if POSTs on a 1,500-node import took 23 s of Daphne's CPU and 365 MiB)."""
    try:
        redis_client().set(_choices_key(text), orjson.dumps(choices_of(scenario)), ex=CHOICES_S)
    except redis.RedisError:
        pass  # what_if_choices works them out again


def what_if_choices(room: Room) -> dict[str, list[str]]:
    """The zones and nodes a What-if may fail: the room's scenario's, as its build kept them
    (``remember_choices``), else worked out from its text and kept."""
    text = room.scenario_yaml
    try:
        kept = redis_client().get(_choices_key(text))
    except redis.RedisError:
        kept = None
    if kept is not None:
        return orjson.loads(kept)
    scenario = load_scenario(text)
    remember_choices(text, scenario)
    return choices_of(scenario)


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
    from ..whatif import empty_note, what_if_run

    what_if_check(room, zone, nodes, at_s)
    docs = safe_yaml.load_all(room.scenario_yaml)
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    if len(docs) > 1:  # extra documents are objects
        root.setdefault("spec", {}).setdefault("objects", []).extend(
            d for d in docs if d is not root
        )
    run = what_if_run(
        root,
        zone=zone or None,
        nodes=list(nodes),
        at_ms=round(at_s * 1000),
        duration_ms=WHAT_IF_DURATION_S * 1000,
    )
    result = {
        "zone": zone,
        "nodes": list(nodes),
        "at_ms": round(at_s * 1000),
        "duration_ms": WHAT_IF_DURATION_S * 1000,
        "rows": run["rows"],
        "bare": run["bare"],
    }
    # An empty table says why (a cluster of bare pods has no workload to recover).
    result["note"] = empty_note(result)
    return result
