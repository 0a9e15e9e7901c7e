"""Server-side printing: the Tables kube-apiserver answers to
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``. Ports of
k8s.io/kubernetes/pkg/printers/internalversion/printers.go (AddHandlers' column definitions,
printNode, printPod, printEvent, printLease, printNamespace, printDeployment, printReplicaSet,
printStatefulSet, printDaemonSet, printService, printPodDisruptionBudget) and of
k8s.io/apimachinery/pkg/util/duration.HumanDuration. The server prints with
``GenerateOptions{Wide: true}``; the wide columns carry ``priority: 1`` and kubectl shows them
with ``-o wide`` only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .objects import Clock, pod_ip, pod_meta

NAME_DOC = "Name must be unique within a namespace."
AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def _col(
    name: str, kind: str = "string", priority: int = 0, fmt: str = "", doc: str = ""
) -> dict[str, Any]:
    return {"name": name, "type": kind, "format": fmt, "description": doc, "priority": priority}


NAME = _col("Name", fmt="name", doc=NAME_DOC)
AGE = _col("Age", doc=AGE_DOC)
WORKLOAD_WIDE = [
    _col("Containers", priority=1, doc="Names of each container in the template."),
    _col("Images", priority=1, doc="Images referenced by each container in the template."),
    _col("Selector", priority=1, doc="Label selector for pods."),
]
COLUMNS: dict[str, list[dict[str, Any]]] = {
    "Node": [
        NAME,
        _col("Status", doc="The status of the node"),
        _col("Roles", doc="The roles of the node"),
        AGE,
        _col("Version", doc="Kubelet Version reported by the node."),
        _col("Internal-IP", priority=1, doc="List of addresses reachable to the node."),
        _col("External-IP", priority=1, doc="List of addresses reachable to the node."),
        _col("OS-Image", priority=1, doc="OS Image reported by the node from /etc/os-release."),
        _col("Kernel-Version", priority=1, doc="Kernel Version reported by the node."),
        _col("Container-Runtime", priority=1, doc="ContainerRuntime Version reported by the node."),
    ],
    "Pod": [
        NAME,
        _col("Ready", doc="The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", doc="The aggregate status of the containers in this pod."),
        _col(
            "Restarts",
            doc="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        _col("IP", priority=1, doc="IP address allocated to the pod."),
        _col("Node", priority=1, doc="Name of the node the pod is scheduled on."),
        _col("Nominated Node", priority=1, doc="Name of the node nominated for the pod."),
        _col("Readiness Gates", priority=1, doc="Readiness gates of the pod."),
    ],
    "Event": [
        _col(
            "Last Seen",
            doc="The time at which the most recent occurrence of this event was recorded.",
        ),
        _col(
            "Type",
            doc="Type of this event (Normal, Warning), new types could be added in the future",
        ),
        _col(
            "Reason",
            doc="This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        _col("Object", doc="The object that this event is about."),
        _col("Subobject", priority=1, doc="The field of the object this event is about."),
        _col("Source", priority=1, doc="The component reporting this event."),
        _col("Message", doc="A human-readable description of the status of this operation."),
        _col("First Seen", priority=1, doc="The time at which the event was first recorded."),
        _col("Count", priority=1, doc="The number of times this event has occurred."),
        _col("Name", priority=1, fmt="name", doc=NAME_DOC),
    ],
    "Lease": [
        NAME,
        _col(
            "Holder", doc="holderIdentity contains the identity of the holder of a current lease."
        ),
        AGE,
    ],
    "Namespace": [NAME, _col("Status", doc="The status of the namespace"), AGE],
    "Service": [
        NAME,
        _col("Type", doc="type determines how the Service is exposed."),
        _col("Cluster-IP", doc="clusterIP is the IP address of the service."),
        _col("External-IP", doc="externalIPs of the service."),
        _col("Port(s)", doc="The list of ports that are exposed by this service."),
        AGE,
        _col(
            "Selector",
            priority=1,
            doc="Route service traffic to pods with label keys and values matching this selector.",
        ),
    ],
    "Deployment": [
        NAME,
        _col("Ready", doc="Number of the pod with ready state"),
        _col(
            "Up-to-date",
            doc="Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
        ),
        _col(
            "Available",
            doc="Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        *WORKLOAD_WIDE,
    ],
    "ReplicaSet": [
        NAME,
        _col("Desired", "integer", doc="Replicas is the number of desired replicas."),
        _col(
            "Current", "integer", doc="Replicas is the most recently observed number of replicas."
        ),
        _col("Ready", "integer", doc="The number of ready replicas for this replica set."),
        AGE,
        *WORKLOAD_WIDE,
    ],
    "StatefulSet": [
        NAME,
        _col("Ready", doc="Number of the pod with ready state"),
        AGE,
        *WORKLOAD_WIDE[:2],
    ],
    "DaemonSet": [
        NAME,
        _col(
            "Desired",
            "integer",
            doc="The total number of nodes that should be running the daemon pod.",
        ),
        _col(
            "Current", "integer", doc="The number of nodes that are running at least 1 daemon pod."
        ),
        _col(
            "Ready",
            "integer",
            doc="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
        ),
        _col(
            "Up-to-date",
            "integer",
            doc="The total number of nodes that are running updated daemon pod",
        ),
        _col(
            "Available",
            "integer",
            doc="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
        ),
        _col(
            "Node Selector",
            doc="NodeSelector is a selector which must be true for the pod to fit on a node.",
        ),
        AGE,
        *WORKLOAD_WIDE,
    ],
    "PodDisruptionBudget": [
        NAME,
        _col("Min Available", doc="The minimum number of pods that must be available."),
        _col("Max Unavailable", doc="The maximum number of pods that may be unavailable."),
        _col(
            "Allowed Disruptions",
            "integer",
            doc="Calculated number of pods that may be disrupted at this time.",
        ),
        AGE,
    ],
}


# -- duration.HumanDuration, translateTimestampSince ----------------------------------------
def human_duration(seconds_f: float) -> str:
    """Port of duration.HumanDuration."""
    seconds = int(seconds_f)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def translate_timestamp_since(ts: str | None, clock: Clock) -> str:
    """Port of translateTimestampSince: ``<unknown>`` for a zero time."""
    if not ts:
        return "<unknown>"
    shown = clock.shown.get(ts)
    if shown is None:
        shown = clock.shown[ts] = human_duration(clock.seconds_since(ts))
    return shown


# -- the printers ----------------------------------------------------------------------------
def find_node_roles(labels: dict[str, str]) -> list[str]:
    """Port of findNodeRoles."""
    roles = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return sorted(roles)


def print_node(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printNode (NodeAllConditions is Ready alone)."""
    status = []
    for c in obj["status"].get("conditions") or []:
        if c["type"] == "Ready":
            status.append("Ready" if c["status"] == "True" else "NotReady")
    if not status:
        status.append("Unknown")
    if obj["spec"].get("unschedulable"):
        status.append("SchedulingDisabled")
    roles = ",".join(find_node_roles(obj["metadata"].get("labels") or {})) or "<none>"
    info = obj["status"].get("nodeInfo") or {}
    addresses = obj["status"].get("addresses") or []
    internal = next((a["address"] for a in addresses if a["type"] == "InternalIP"), "<none>")
    external = next((a["address"] for a in addresses if a["type"] == "ExternalIP"), "<none>")
    return [
        obj["metadata"]["name"],
        ",".join(status),
        roles,
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
        info.get("kubeletVersion", ""),
        internal,
        external,
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


POD_SUCCESS = [
    {
        "type": "Completed",
        "status": "True",
        "reason": "Succeeded",
        "message": "The pod has completed successfully.",
    }
]
POD_FAILED = [
    {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
]


def print_pod(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printPod (no init containers, no restarts in the simulation)."""
    status = obj["status"]
    spec = obj["spec"]
    reason = status.get("reason") or status.get("phase", "")
    ready = 0
    has_running = False
    for c in reversed(status.get("containerStatuses") or []):
        state = c.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated", {}).get("reason"):
            reason = state["terminated"]["reason"]
        elif c.get("ready") and "running" in state:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        reason = "Running"
    meta = obj["metadata"]
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        reason = "Terminating"
    return [
        meta["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        "0",
        translate_timestamp_since(meta.get("creationTimestamp"), clock),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        "<none>",
    ]


def pod_view_row(view: dict[str, Any], clock: Clock, rv: int, include: str) -> dict[str, Any]:
    """``row("Pod", objects.pod(view), ...)`` for ``includeObject`` Metadata or None, made
    straight from the pod's stored view (printPod over what objects.pod would report: its
    containers' states, reason, IP), without making the whole object: a 150,000-pod Table."""
    meta = pod_meta(view, clock, rv)
    phase = view.get("phase") or "Pending"
    containers = view.get("containers") or ((),)
    reason = view.get("reason") or phase
    ready = 0
    node_name = view.get("node")
    running = bool(view.get("started")) and phase == "Running"
    if node_name and phase not in ("Failed", "Succeeded"):
        if not running:
            reason = "ContainerCreating"
        elif view.get("ready"):
            ready = len(containers)
            if reason == "Completed":
                reason = "Running"
    if meta.get("deletionTimestamp") and view.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Failed", "Succeeded"):
        reason = "Terminating"
    ip = pod_ip(view["key"]) if node_name and running else "<none>"
    out: dict[str, Any] = {
        "cells": [
            meta["name"],
            f"{ready}/{len(containers)}",
            reason,
            "0",
            translate_timestamp_since(meta["creationTimestamp"], clock),
            ip,
            node_name or "<none>",
            "<none>",
            "<none>",
        ]
    }
    if phase in ("Succeeded", "Failed"):
        out["conditions"] = POD_SUCCESS if phase == "Succeeded" else POD_FAILED
    if include != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
        }
    return out


def _row_conditions_pod(obj: dict[str, Any]) -> list[dict[str, Any]] | None:
    phase = obj["status"].get("phase")
    return POD_SUCCESS if phase == "Succeeded" else POD_FAILED if phase == "Failed" else None


def format_event_source(source: dict[str, Any], controller: str, instance: str) -> str:
    """Port of formatEventSource."""
    if not controller:
        component, host = source.get("component", ""), source.get("host", "")
        return f"{component}, {host}" if host else component
    return f"{controller}, {instance}" if instance else controller


def print_event(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printEvent (Wide) for a core/v1 Event; events.k8s.io/v1 ones are printed
    through their core form, as the server's internal type is one."""
    if obj["apiVersion"] == "events.k8s.io/v1":
        obj = {
            "metadata": obj["metadata"],
            "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
            "lastTimestamp": obj.get("deprecatedLastTimestamp"),
            "count": obj.get("deprecatedCount"),
            "involvedObject": obj.get("regarding") or {},
            "type": obj.get("type", ""),
            "reason": obj.get("reason", ""),
            "message": obj.get("note", ""),
            "source": obj.get("deprecatedSource") or {},
            "reportingComponent": obj.get("reportingController", ""),
            "reportingInstance": obj.get("reportingInstance", ""),
        }
    first = translate_timestamp_since(obj.get("firstTimestamp"), clock)
    last = (
        translate_timestamp_since(obj.get("lastTimestamp"), clock)
        if obj.get("lastTimestamp")
        else first
    )
    ref = obj.get("involvedObject") or {}
    kind = str(ref.get("kind", "")).lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        ref.get("fieldPath", ""),
        format_event_source(
            obj.get("source") or {},
            obj.get("reportingComponent", ""),
            obj.get("reportingInstance", ""),
        ),
        str(obj.get("message", "")).strip(),
        first,
        int(obj.get("count") or 1),
        obj["metadata"]["name"],
    ]


def print_lease(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printLease."""
    return [
        obj["metadata"]["name"],
        obj["spec"].get("holderIdentity") or "",
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
    ]


def print_namespace(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printNamespace."""
    return [
        obj["metadata"]["name"],
        obj["status"]["phase"],
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
    ]


def _layout_container_cells(obj: dict[str, Any]) -> tuple[str, str]:
    """Port of layoutContainerCells."""
    containers = obj["spec"]["template"]["spec"].get("containers") or []
    return ",".join(c["name"] for c in containers), ",".join(c.get("image", "") for c in containers)


def _selector_string(obj: dict[str, Any]) -> str:
    labels = obj["spec"].get("selector", {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


def print_deployment(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printDeployment."""
    s = obj["status"]
    containers, images = _layout_container_cells(obj)
    return [
        obj["metadata"]["name"],
        f"{s.get('readyReplicas', 0)}/{obj['spec'].get('replicas', 0)}",
        s.get("updatedReplicas", 0),
        s.get("availableReplicas", 0),
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
        containers,
        images,
        _selector_string(obj),
    ]


def print_replica_set(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printReplicaSet."""
    s = obj["status"]
    containers, images = _layout_container_cells(obj)
    return [
        obj["metadata"]["name"],
        obj["spec"].get("replicas", 0),
        s.get("replicas", 0),
        s.get("readyReplicas", 0),
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
        containers,
        images,
        _selector_string(obj),
    ]


def print_stateful_set(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printStatefulSet."""
    containers, images = _layout_container_cells(obj)
    return [
        obj["metadata"]["name"],
        f"{obj['status'].get('readyReplicas', 0)}/{obj['spec'].get('replicas', 0)}",
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
        containers,
        images,
    ]


def print_daemon_set(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """Port of printDaemonSet."""
    s = obj["status"]
    containers, images = _layout_container_cells(obj)
    selector = obj["spec"]["template"]["spec"].get("nodeSelector") or {}
    return [
        obj["metadata"]["name"],
        s.get("desiredNumberScheduled", 0),
        s.get("currentNumberScheduled", 0),
        s.get("numberReady", 0),
        s.get("updatedNumberScheduled", 0),
        s.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
        translate_timestamp_since(obj["metadata"].get("creationTimestamp"), clock),
        containers,
        images,
        _selector_string(obj),
    ]


PRINTERS: dict[str, Callable[[dict[str, Any], Clock], list[Any]]] = {
    "Node": print_node,
    "Pod": print_pod,
    "Event": print_event,
    "Lease": print_lease,
    "Namespace": print_namespace,
    "Deployment": print_deployment,
    "ReplicaSet": print_replica_set,
    "StatefulSet": print_stateful_set,
    "DaemonSet": print_daemon_set,
}


def print_default(obj: dict[str, Any], clock: Clock) -> list[Any]:
    """The default TableConvertor's row (k8s.io/apiserver/pkg/registry/rest.defaultTableConvertor):
    Name and Created At."""
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp")]


DEFAULT_COLUMNS = [NAME, _col("Created At", fmt="date", doc=AGE_DOC)]


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"],
    }


def row(kind: str, obj: dict[str, Any], clock: Clock, include: str) -> dict[str, Any]:
    """One TableRow: the cells and, by ``includeObject``, the object's metadata
    (PartialObjectMetadata, the default), the whole object, or nothing."""
    out: dict[str, Any] = {"cells": PRINTERS.get(kind, print_default)(obj, clock)}
    if kind == "Pod":
        conditions = _row_conditions_pod(obj)
        if conditions:
            out["conditions"] = conditions
    if include == "Object":
        out["object"] = obj
    elif include != "None":
        out["object"] = partial_metadata(obj)
    return out


def table(
    kind: str,
    objects: list[dict[str, Any]],
    clock: Clock,
    include: str,
    meta: dict[str, Any],
    headers: bool = True,
) -> dict[str, Any]:
    """metav1.Table of ``objects`` of ``kind`` (``headers=False``: a watch event's after the
    first, which carry no column definitions)."""
    out: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    out["columnDefinitions"] = COLUMNS.get(kind, DEFAULT_COLUMNS) if headers else None
    out["rows"] = [row(kind, o, clock, include) for o in objects]
    return out
