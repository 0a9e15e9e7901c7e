"""What if: run an imported scenario forward headless with some nodes failed and read, per
workload, when it is back to its desired replicas (pure, no Django)."""

from __future__ import annotations

import copy
from typing import Any

from .engine.scenario import ScenarioError, parse_scenario
from .engine.simulation import Simulation

DEFAULT_AT_MS = 60_000
DEFAULT_DURATION_MS = 1_800_000


def recovery(series: dict[str, list[dict[str, int]]], fault_ms: int) -> list[dict[str, Any]]:
    """Per workload (``Kind/namespace/name``), from its (t, desired, ready) series: when it
    first fell short of its desired replicas at or after ``fault_ms``, the fewest ready, and
    when it was whole again (None: not by the end)."""
    out = []
    for key, points in sorted(series.items()):
        down_at = back_at = None
        lowest = None
        desired = points[-1]["desired"] if points else 0
        for p in points:
            if p["t"] < fault_ms:
                continue
            short = p["ready"] < p["desired"]
            if short and down_at is None:
                down_at = p["t"]
            if down_at is not None:
                lowest = p["ready"] if lowest is None else min(lowest, p["ready"])
                if not short and back_at is None:
                    back_at = p["t"]
                elif short:
                    back_at = None
        kind, ns, name = key.split("/", 2)
        out.append(
            {
                "workload": f"{kind}/{name}",
                "namespace": ns,
                "desired": desired,
                "down_at_ms": down_at,
                "lowest_ready": lowest,
                "back_at_ms": back_at,
            }
        )
    return out


def what_if(
    scenario: dict[str, Any],
    zone: str | None = None,
    nodes: list[str] | None = None,
    at_ms: int = DEFAULT_AT_MS,
    duration_ms: int = DEFAULT_DURATION_MS,
) -> list[dict[str, Any]]:
    """Fail ``zone`` (ZoneOutage) or ``nodes`` (PartitionNode each) at ``at_ms`` in a copy of
    ``scenario`` (its own later faults dropped) and run it to ``duration_ms``: per workload,
    its recovery (``recovery``)."""
    return what_if_run(scenario, zone, nodes, at_ms, duration_ms)["rows"]


def what_if_run(
    scenario: dict[str, Any],
    zone: str | None = None,
    nodes: list[str] | None = None,
    at_ms: int = DEFAULT_AT_MS,
    duration_ms: int = DEFAULT_DURATION_MS,
) -> dict[str, Any]:
    """``what_if``'s run: ``rows`` (per workload) and ``bare``, the pods no controller owns
    (nothing recreates them): how many there are, how many were deleted after the failure
    and the first of those ({pod, at_ms, by}), so that a cluster without workloads gets an
    answer too (issue #38: its table was empty, with no word why)."""
    if not zone and not nodes:
        raise ScenarioError("zone", "pick a zone or at least one node to fail")
    data = copy.deepcopy(scenario)
    spec = data.setdefault("spec", {})
    faults = [f for f in spec.get("faults") or [] if _at_ms(f) == 0]  # the initial taints
    if zone:
        faults.append({"at": f"{at_ms}ms", "type": "ZoneOutage", "zone": zone})
    for n in nodes or []:
        faults.append({"at": f"{at_ms}ms", "type": "PartitionNode", "node": n})
    spec["faults"] = faults
    spec["duration"] = f"{duration_ms}ms"
    spec.pop("expect", None)
    sim = Simulation(parse_scenario(data))
    bare: set[str] = set()
    deleted: dict[str, dict[str, Any]] = {}

    def watch(e: dict[str, Any]) -> None:
        if e["type"] == "PodCreated" and e.get("owner") is None:
            bare.add(e["pod"])
        elif e["type"] == "PodDeleted" and e["pod"] in bare and e["t"] >= at_ms:
            deleted.setdefault(e["pod"], {"pod": e["pod"], "at_ms": e["t"], "by": e["by"]})

    sim.timeline.listeners.append(watch)
    sim.run(duration_ms)
    series = {
        key: [{"t": t, "desired": d, "ready": r} for t, d, r in points]
        for key, points in sim.workloads.workload_series.items()
    }
    return {
        "rows": recovery(series, at_ms),
        "bare": {
            "pods": len(bare),
            "deleted": len(deleted),
            "first": min(deleted.values(), key=_by_time) if deleted else None,
        },
    }


def _by_time(d: dict[str, Any]) -> tuple[int, str]:
    return d["at_ms"], d["pod"]


def empty_note(result: dict[str, Any]) -> str:
    """Why a What-if's table has no row, in words: the cluster has no workload (Deployment,
    StatefulSet, ReplicaSet, DaemonSet) whose recovery it could show, and what became of its
    bare pods. "" when there are rows."""
    if result["rows"]:
        return ""
    bare = result["bare"]
    start = (
        "No workload to show: this cluster has no Deployment, StatefulSet, ReplicaSet or "
        "DaemonSet, whose recovery the table measures"
    )
    if not bare["pods"]:
        return start + ", and no pods."
    pods = f"{bare['pods']} pod{'s' if bare['pods'] != 1 else ''}"
    owned = f"its {pods} {'are' if bare['pods'] != 1 else 'is'} bare (no controller owns them)"
    gone = bare["deleted"]
    if not gone or bare["first"] is None:
        return (
            f"{start}; {owned}, and none of them was deleted by the failure within the run "
            f"({result['duration_ms'] // 1000} s)."
        )
    first = bare["first"]
    return (
        f"{start}; {owned}, so nothing recreates one that is deleted: {gone} of them "
        f"{'were' if gone != 1 else 'was'} deleted after the failure and never came back "
        f"(the first, {first['pod']}, at {first['at_ms'] / 1000:g} s by {first['by']})."
    )


def _at_ms(fault: Any) -> int | None:
    from .engine.quantity import parse_duration_ms

    try:
        return parse_duration_ms(fault.get("at", 0))
    except Exception:
        return None
