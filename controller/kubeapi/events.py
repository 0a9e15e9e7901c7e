"""The room's stored Kubernetes events (the timeline's K8sEvent rows, merged by
``engine.events.stored_events``: a repeat patches its Event's count and lastTimestamp, as
client-go's EventCorrelator does) as core/v1 Events and events.k8s.io/v1 Events, one store for
both (as kube-apiserver serves them). Calls the spam filter dropped (K8sEventDropped) are not
stored."""

from __future__ import annotations

from typing import Any

from ..kube_io.exports import EVENT_SOURCES
from .objects import Clock

KINDS_APPS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
# Kubernetes' default --event-ttl: events older than this are gone from the API.
EVENT_TTL_S = 3600


def involved(data: dict[str, Any], uids: dict[str, str]) -> dict[str, Any]:
    """The event's object reference: ``Node/a-1``, ``Pod/ns/name``, ``Deployment/ns/name``.
    A kubelet records its node's events with the node's name as uid (that is why ``kubectl
    describe node`` asks for both); the controllers use the object's uid (``uids`` of the
    objects still there)."""
    parts = str(data["object"]).split("/")
    kind, name = parts[0], parts[-1]
    ns = parts[1] if len(parts) == 3 else ""
    ref: dict[str, Any] = {"kind": kind, "name": name}
    if ns:
        ref["namespace"] = ns
    key = f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"
    if kind == "Node" and _source(data["reason"]) == "kubelet":
        ref["uid"] = name
    else:
        ref["uid"] = uids.get(key, "")
    ref["apiVersion"] = "apps/v1" if kind in KINDS_APPS else "v1"
    return ref


def _source(reason: str) -> str:
    return EVENT_SOURCES.get(reason, "kube-controller-manager")


def core_event(
    idx: int, t_ms: int, data: dict[str, Any], uids: dict[str, str], clock: Clock
) -> dict[str, Any]:
    ref = involved(data, uids)
    ns = ref.get("namespace", "default")
    at = clock.time(t_ms / 1000)
    first = clock.time(data.get("first", t_ms) / 1000)
    created = clock.time(data.get("created", t_ms) / 1000)  # when the API server stored it
    component = _source(data["reason"])
    source: dict[str, Any] = {"component": component}
    if component == "kubelet" and ref["kind"] == "Node":
        source["host"] = ref["name"]
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": f"{ref['name']}.{idx:016x}",
            "namespace": ns,
            "uid": f"event-{idx:016x}",
            "resourceVersion": str(int(data.get("lastIdx", idx)) + 1),
            "creationTimestamp": created,
        },
        "involvedObject": ref,
        "reason": data["reason"],
        "message": data["message"],
        "source": source,
        "firstTimestamp": first,
        "lastTimestamp": at,
        "count": int(data.get("count", 1)),
        "type": data["eventType"] if data["eventType"] in ("Normal", "Warning") else "Normal",
        "eventTime": None,
        "reportingComponent": component,
        "reportingInstance": source.get("host", ""),
    }


def events_v1(core: dict[str, Any]) -> dict[str, Any]:
    """events.k8s.io/v1 Event of a core/v1 one (k8s.io/kubernetes/pkg/apis/events/v1
    conversion: regarding, note, deprecated* fields)."""
    return {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": core["metadata"],
        "eventTime": None,
        "reportingController": core["reportingComponent"],
        "reportingInstance": core["reportingInstance"],
        "reason": core["reason"],
        "regarding": core["involvedObject"],
        "note": core["message"],
        "type": core["type"],
        "deprecatedSource": core["source"],
        "deprecatedFirstTimestamp": core["firstTimestamp"],
        "deprecatedLastTimestamp": core["lastTimestamp"],
        "deprecatedCount": core["count"],
    }
