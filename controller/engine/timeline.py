"""Typed timeline events: the JSON contract of design.md ("The headless CLI").

An event is a plain dict ``{"t": ms, "type": ..., <fields>}`` held in integer
milliseconds; ``to_json`` turns ``t`` into seconds with millisecond precision.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .clock import fmt_mmss

# type -> the fields it carries (besides t and type), in display order.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "NodeReady": ("node", "status", "reason"),
    "NodeCondition": ("node", "condition", "status"),
    "TaintAdded": ("node", "key", "effect"),
    "TaintRemoved": ("node", "key", "effect"),
    "ZoneState": ("zone", "state"),
    "ZoneRate": ("zone", "qps"),
    "PodCreated": ("pod", "owner"),
    "PodScheduled": ("pod", "node"),
    "PodReady": ("pod", "status"),
    "PodDeleted": ("pod", "node", "by", "reason"),
    "PodRemoved": ("pod", "node"),
    "PodPhase": ("pod", "phase", "reason"),
    "PodEvicted": (
        "pod",
        "node",
        "signal",
        "resource",
        "soft",
        "gracePeriodSeconds",
        "message",
    ),
    "PodRejected": ("pod", "node", "reason"),
    "PodDisruptionTarget": ("pod", "node", "reason", "message"),
    "NodeReclaim": ("node", "resource", "what", "amount"),
    # A ShutdownNode's machine powers off: after the kubelet's graceful shutdown
    # (GracefulShutdownDone) or with nothing delaying it (ShutdownNotDelayed).
    "NodePoweredOff": ("node", "reason"),
    # A recorder's Event as the API stores it (engine/events.py): optional ``count`` when it
    # patches a repeat, ``first`` (ms) then or when it was recorded before ``t`` (it waited in
    # its sink's queue), ``aggregated`` and ``recorded`` (the call's own message) when
    # combined; K8sEventDropped: a call the spam filter dropped.
    "K8sEvent": ("object", "reason", "message", "eventType"),
    "K8sEventDropped": ("object", "reason", "message", "eventType"),
    "Fault": (),
    # A scenario fault whose node, pod, zone or workload is gone at its instant (a live
    # action removed it): the fault as written, not applied, and why (its path and reason).
    "FaultRefused": ("fault", "error"),
}

# type -> the fields it may carry besides EVENT_FIELDS' (a K8sEvent's correlator fields).
OPTIONAL_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "K8sEvent": ("count", "first", "aggregated", "recorded"),
}

Event = dict[str, Any]


class Timeline:
    """Append-only list of events in emission order (which is time order).

    ``listeners`` get every event as it is appended (the live runtime streams them).
    ``record=False`` keeps only a count, for benchmarks of huge clusters.
    """

    def __init__(self, record: bool = True) -> None:
        self.events: list[Event] = []
        self.count = 0
        self.record = record
        self.listeners: list[Callable[[Event], None]] = []

    def emit(self, t_ms: int, type_: str, **fields: Any) -> Event:
        event: Event = {"t": t_ms, "type": type_, **fields}
        self.count += 1
        if self.record:
            self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    def add(self, event: Event) -> None:
        """``emit`` of an event the caller built whole, ``{"t": ms, "type": ..., <fields in
        EVENT_FIELDS' order>}``: the writers of a pod's every-day events (created,
        scheduled, phase, ready, a K8sEvent) build it as a dict literal, without the
        keyword-argument dict ``emit`` makes and copies (about 6 events per pod at t=0)."""
        self.count += 1
        if self.record:
            self.events.append(event)
        if self.listeners:
            for listener in self.listeners:
                listener(event)


def to_public(event: Event) -> dict[str, Any]:
    """The event as the JSON contract has it: ``t`` (and a K8sEvent's ``first``) in seconds."""
    out = dict(event)
    out["t"] = round(event["t"] / 1000, 3)
    if "first" in out:
        out["first"] = round(event["first"] / 1000, 3)
    return out


def to_json(event: Event) -> str:
    """One jsonl line: sorted keys, compact separators (byte-reproducible)."""
    return json.dumps(to_public(event), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _describe(event: Event) -> tuple[str, str]:
    """(subject, details) for the table format."""
    e = event
    t = e["type"]
    if t == "Fault" and e.get("fault") == "SetParameters" and isinstance(e.get("changes"), list):
        return "", parameters_changed(e["changes"])
    if t == "Fault":
        rest = {k: v for k, v in e.items() if k not in ("t", "type", "fault")}
        target = rest.pop("node", None) or rest.pop("pod", None) or rest.pop("zone", None) or ""
        details = " ".join(f"{k}={_short(v)}" for k, v in sorted(rest.items()))
        return str(target), f"{e.get('fault')} {details}".strip()
    if t == "FaultRefused":
        target = e.get("node") or e.get("pod") or e.get("zone") or e.get("workload") or ""
        return str(target), f"{e.get('fault')} refused: {e.get('error')}"
    if t == "K8sEvent":
        count = f" (x{e['count']})" if e.get("count", 1) > 1 else ""
        return e["object"], f"{e['eventType']} {e['reason']}: {e['message']}{count}"
    if t == "K8sEventDropped":
        return e["object"], f"dropped by the spam filter: {e['reason']}: {e['message']}"
    if t in ("NodeReady",):
        return e["node"], f"Ready={e['status']} ({e['reason']})"
    if t == "NodeCondition":
        return e["node"], f"{e['condition']}={e['status']}"
    if t in ("TaintAdded", "TaintRemoved"):
        sign = "+" if t == "TaintAdded" else "-"
        return e["node"], f"{sign} {e['key']}:{e['effect']}"
    if t == "ZoneState":
        return f"zone {e['zone'] or '(none)'}", e["state"]
    if t == "ZoneRate":
        return f"zone {e['zone'] or '(none)'}", f"eviction rate {e['qps']}/s"
    if t == "PodCreated":
        return e["pod"], f"created (owner {e['owner']})" if e["owner"] else "created"
    if t == "PodScheduled":
        return e["pod"], f"scheduled to {e['node']}"
    if t == "PodReady":
        return e["pod"], f"Ready={e['status']}"
    if t == "PodDeleted":
        return e["pod"], f"deleted by {e['by']} on {e['node'] or '-'}: {e['reason']}"
    if t == "PodRemoved":
        return e["pod"], f"removed from {e['node'] or '-'}"
    if t == "PodPhase":
        return e["pod"], f"phase {e['phase']}" + (f" ({e['reason']})" if e["reason"] else "")
    if t == "PodEvicted":
        kind = "soft" if e["soft"] else "hard"
        return e[
            "pod"
        ], f"evicted by kubelet on {e['node']} ({e['signal']}, {kind}): {e['message']}"
    if t == "PodRejected":
        return e["pod"], f"rejected by {e['node']}: {e['reason']}"
    if t == "PodDisruptionTarget":
        return e["pod"], f"DisruptionTarget {e['reason']}: {e['message']}"
    if t == "NodePoweredOff":
        return e["node"], f"powered off ({e['reason']})"
    if t == "NodeReclaim":
        return e["node"], f"{e['what']} freed {e['amount']} of {e['resource']}"
    rest = {k: v for k, v in e.items() if k not in ("t", "type")}
    return "", " ".join(f"{k}={v}" for k, v in sorted(rest.items()))


def parameters_changed(changes: list[Any]) -> str:
    """A SetParameters as it reads: ``Parameters changed: nodeEvictionRate 0.1 → 0.5``, from
    its event's ``changes`` (``controllerManager.nodeEvictionRate: 0.1 -> 0.5``, kept as they
    are in the JSON; the page's timeline says the same, static/js/timeline.js)."""
    return "Parameters changed: " + ("; ".join(map(change_shown, changes)) or "nothing")


def change_shown(change: Any) -> str:
    """``section.field: old -> new`` -> ``field old → new``; anything else as it is."""
    text = str(change)
    path, sep, values = text.partition(": ")
    if not sep or values.count(" -> ") != 1:
        return text
    old, new = values.split(" -> ")
    return f"{path.rsplit('.', 1)[-1]} {old} → {new}"


def _short(v: Any) -> str:
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def format_table(events: Iterable[Event]) -> Iterable[str]:
    """Aligned, human-readable lines: time, type, subject, what happened."""
    rows = [(fmt_mmss(e["t"]), e["type"], *_describe(e)) for e in events]
    if not rows:
        return []
    w_type = max(len(r[1]) for r in rows)
    w_subj = min(max(len(r[2]) for r in rows), 48)
    return [f"{r[0]}  {r[1]:<{w_type}}  {r[2]:<{w_subj}}  {r[3]}".rstrip() for r in rows]
