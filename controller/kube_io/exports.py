"""Exports of a room (issue #15), pure Python: the timeline as CSV and as an
``events.k8s.io/v1`` EventList, and the current cluster as manifests (workloads, pods and the
scenario, which ``import_cluster`` reads back into the same scenario).
"""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from ..engine.events import EVENT_SOURCES
from ..engine.objects import Pod
from ..engine.safe_yaml import FAST_DUMPER
from ..engine.simulation import Simulation
from ..engine.timeline import _describe

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # t=0 of an export that is given no wall time
CSV_COLUMNS = ("t_seconds", "type", "subject", "node", "pod", "zone", "what", "fields")
REPORTER = "node-failure-playground"
# Who "reports" a playground event: the component whose rule produced it.
REPORTING = {
    "NodeReady": "node-lifecycle-controller",
    "NodeCondition": "kubelet",
    "TaintAdded": "node-lifecycle-controller",
    "TaintRemoved": "node-lifecycle-controller",
    "ZoneState": "node-lifecycle-controller",
    "ZoneRate": "node-lifecycle-controller",
    "PodCreated": "kube-apiserver",
    "PodScheduled": "default-scheduler",
    "PodReady": "kubelet",
    "PodPhase": "kubelet",
    "PodEvicted": "kubelet",
    "PodRejected": "kubelet",
    "PodRemoved": "kubelet",
    "NodeReclaim": "kubelet",
    "NodePoweredOff": "kubelet",
    "Fault": REPORTER,
    "FaultRefused": REPORTER,
}


# The component that records a Kubernetes event, by its reason (as kube-controller-manager's
# controllers, the scheduler and the kubelet name themselves in events' source).


# -- timeline as CSV -----------------------------------------------------------------------
# A cell a spreadsheet would read as a formula (OWASP, "CSV Injection"): one that starts with
# = + - @, a tab or a carriage return. A TaintAdded's "what" reads "+ key:effect", and a
# scenario's names and messages are the visitor's text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """``value`` as a CSV cell that no spreadsheet runs: a cell that starts like a formula
    gets a single quote in front (OWASP's advice), which the spreadsheet shows as text; the
    csv writer quotes the rest (commas, double quotes, line breaks)."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def timeline_csv(events: Iterable[dict[str, Any]]) -> str:
    """One row per timeline event (``t`` in ms in the events): time in seconds, type, the
    subject and what happened as the table format says them, the node/pod/zone columns for
    filtering, and every field as JSON. No cell starts like a formula (``csv_cell``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in events:
        subject, what = _describe(e)
        rest = {k: v for k, v in e.items() if k not in ("t", "type")}
        if "first" in rest:  # a K8sEvent's firstTimestamp, in seconds as the time column
            rest["first"] = round(rest["first"] / 1000, 3)
        row = [
            f"{e['t'] / 1000:.3f}",
            e["type"],
            subject,
            e.get("node", ""),
            e.get("pod", ""),
            e.get("zone", ""),
            what,
            json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        ]
        writer.writerow([csv_cell(cell) for cell in row])
    return out.getvalue()


# -- timeline as events.k8s.io/v1 Events ------------------------------------------------------
def _micro_time(start: datetime, t_ms: int) -> str:
    """metav1.MicroTime as the API server writes it (RFC 3339, microseconds, Z)."""
    return (start + timedelta(milliseconds=t_ms)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _regarding(e: dict[str, Any]) -> dict[str, str]:
    if e["type"] == "K8sEvent":
        parts = str(e["object"]).split("/")
        kind = parts[0]
        ref = {"kind": kind, "name": parts[-1]}
        if len(parts) == 3:
            ref["namespace"] = parts[1]
        ref["apiVersion"] = (
            "apps/v1" if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") else "v1"
        )
        return ref
    if e.get("pod"):
        ns, _, name = str(e["pod"]).partition("/")
        return {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name}
    if e.get("node"):
        return {"apiVersion": "v1", "kind": "Node", "name": str(e["node"])}
    return {}


def _stored_key(e: dict[str, Any]) -> tuple[Any, ...]:
    """The key whose repeats patch one stored Event (engine.events.stored_events)."""
    if e.get("aggregated"):
        return ("a", e["object"], e["eventType"], e["reason"])
    return ("e", e["object"], e["eventType"], e["reason"], e["message"])


def timeline_events(
    events: Iterable[dict[str, Any]], start: datetime = EPOCH, first_index: int = 0
) -> dict[str, Any]:
    """An ``events.k8s.io/v1`` EventList: a recorded Kubernetes event (K8sEvent) as the
    component recorded it; every other timeline event as an Event whose reason is its type
    and whose note says what happened (reportingController: the component whose rule made it,
    or the playground for faults and zone states)."""
    items = []
    stored: dict[tuple[Any, ...], dict[str, Any]] = {}  # a K8sEvent's key: its item
    for i, e in enumerate(events, start=first_index):
        regarding = _regarding(e)
        subject, what = _describe(e)
        if e["type"] == "K8sEventDropped":
            continue  # the spam filter's: never stored
        if e["type"] == "K8sEvent" and e.get("count", 1) > 1:
            # A repeat patches the stored Event (EventCorrelator): its series grows.
            key = _stored_key(e)
            if key in stored:
                stored[key]["note"] = e["message"][:1024]
                stored[key]["series"] = {
                    "count": e["count"],
                    "lastObservedTime": _micro_time(start, e["t"]),
                }
                continue
        if e["type"] == "K8sEvent":
            reason, note, etype = e["reason"], e["message"], e["eventType"]
            controller = EVENT_SOURCES.get(reason) or REPORTER
            if reason in ("SuccessfulCreate", "SuccessfulDelete"):
                controller = f"{regarding.get('kind', 'replicaset').lower()}-controller"
        else:
            reason = e["fault"] if e["type"] == "Fault" else e["type"]
            note = f"{subject}: {what}" if subject else what
            etype = "Warning" if e["type"] == "FaultRefused" else "Normal"
            controller = REPORTING.get(e["type"], REPORTER)
        ns = regarding.get("namespace", "default")
        name = regarding.get("name") or "cluster"
        item: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{name}.{i:016x}",
                "namespace": ns,
                "annotations": {"playground/t-seconds": f"{e['t'] / 1000:g}"},
            },
            "eventTime": _micro_time(start, e["t"]),
            "reportingController": f"playground/{controller}",
            "reportingInstance": f"{controller}-simulated",
            "action": e["type"],
            "reason": reason,
            "note": note[:1024],
            "type": etype if etype in ("Normal", "Warning") else "Normal",
        }
        if regarding:
            item["regarding"] = regarding
        if e["type"] == "K8sEvent":
            stored[_stored_key(e)] = item
        items.append(item)
    return {"apiVersion": "events.k8s.io/v1", "kind": "EventList", "metadata": {}, "items": items}


def timeline_events_yaml(
    events: Iterable[dict[str, Any]], start: datetime = EPOCH, first_index: int = 0
) -> str:
    doc = timeline_events(events, start, first_index)
    return yaml.dump(doc, Dumper=FAST_DUMPER, sort_keys=False, width=120)


# -- the current cluster as manifests ---------------------------------------------------------
def cluster_manifests(sim: Simulation, scenario_raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario (nodes, settings, its t=0 faults; no objects, no expectations), then the
    workloads and the pods as they are now. A manifest the scenario holds is exported as
    written (with a workload's current replicas); what controllers created is built from its
    workload's template. Pods being deleted and a Deployment's ReplicaSets (the Deployment
    controller's own) are left out."""
    root = copy.deepcopy(scenario_raw)
    spec = root.setdefault("spec", {})
    written = [o for o in spec.pop("objects", None) or [] if isinstance(o, dict)]
    spec.pop("expect", None)
    spec["faults"] = [f for f in spec.get("faults") or [] if _at_zero(f)]
    if not spec["faults"]:
        del spec["faults"]
    by_key = {_manifest_key(m): m for m in written}
    workloads = []
    order = {k: i for i, k in enumerate(by_key)}
    live = [
        w
        for w in sim.workloads.workloads.values()
        if not (w.kind == "ReplicaSet" and w.owner is not None)
    ]
    live.sort(key=lambda w: (order.get((w.kind, w.namespace, w.name), len(order)), w.key))
    for w in live:
        m = copy.deepcopy(by_key.get((w.kind, w.namespace, w.name)))
        if m is None:
            m = {
                "apiVersion": "apps/v1",
                "kind": w.kind,
                "metadata": {"name": w.name, "namespace": w.namespace},
                "spec": {"selector": {"matchLabels": dict(w.selector)}},
            }
        m.setdefault("spec", {})
        if w.kind != "DaemonSet":
            m["spec"]["replicas"] = w.replicas
        m["spec"]["template"] = copy.deepcopy(w.template)
        workloads.append(m)
    pods = []
    for pod in sim.cluster.pods.values():
        if pod.terminating:
            continue
        m = copy.deepcopy(by_key.get(("Pod", pod.namespace, pod.name)))
        if m is None:
            m = _pod_manifest(sim, pod)
        elif pod.node_name:
            m.setdefault("spec", {})["nodeName"] = pod.node_name
        pods.append(m)
    return [root, *workloads, *pods]


def cluster_manifests_yaml(sim: Simulation, scenario_raw: dict[str, Any], header: str = "") -> str:
    docs = cluster_manifests(sim, scenario_raw)
    return header + yaml.dump_all(docs, Dumper=FAST_DUMPER, sort_keys=False)


def _at_zero(f: Any) -> bool:
    return isinstance(f, dict) and f.get("at") in (0, "0", "0s", "0ms")


def _manifest_key(m: dict[str, Any]) -> tuple[str, str, str]:
    meta = m.get("metadata") or {}
    return (str(m.get("kind")), str(meta.get("namespace") or "default"), str(meta.get("name")))


def _pod_manifest(sim: Simulation, pod: Pod) -> dict[str, Any]:
    """A controller-made pod: its workload's template, its name, owner, node and the
    tolerations admission gave it."""
    spec: dict[str, Any] = {}
    template: dict[str, Any] = {}
    if pod.owner is not None:
        w = sim.workloads.workloads.get(f"{pod.owner.kind}/{pod.namespace}/{pod.owner.name}")
        if w is not None:
            template = copy.deepcopy(w.template)
            spec = template.get("spec") or {}
    if not spec:
        spec = {
            "containers": [
                {
                    "name": c.name,
                    "resources": {
                        k: v
                        for k, v in (
                            ("requests", dict(c.request_formats)),
                            ("limits", dict(c.limit_formats)),
                        )
                        if v
                    },
                }
                for c in pod.containers
            ]
        }
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.annotations:
        meta["annotations"] = dict(pod.annotations)
    if pod.owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": pod.owner.kind,
                "name": pod.owner.name,
                "controller": True,
            }
        ]
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.tolerations:
        spec["tolerations"] = [t.to_dict() for t in pod.tolerations]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
