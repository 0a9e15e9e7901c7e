"""The room's stored views as Kubernetes API objects (core/v1 Node, Pod, Event, Namespace,
Service; apps/v1 workloads; coordination.k8s.io/v1 Lease; events.k8s.io/v1 Event).

Time: the simulation's instants become wall-clock instants at answer time,
``wall(t) = wall_now - (sim_now - t)`` (``Clock``): kubectl computes ages from timestamps
against its own clock (``describe``), so a pod created 5 simulated minutes ago reads ``5m`` at
any speed. The price: at a speed other than 1 one object's timestamps move between two reads
(at 10x, 10 wall seconds later they are 90 s earlier). Addresses are synthesized (a node's
InternalIP from its name, a running pod's IP from its key), as the simulation has none."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
IMAGE = "registry.k8s.io/pause:3.10"  # the simulation keeps no images; every container shows this
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass
class Clock:
    """Simulated ``sim_now_s`` is wall instant ``wall_now`` (UTC). Each instant is formatted
    once per answer (a room's pods share few creation instants)."""

    sim_now_s: float
    wall_now: datetime
    _times: dict[float, str] = field(default_factory=dict, repr=False)
    _micros: dict[float, str] = field(default_factory=dict, repr=False)
    _ages: dict[str, float] = field(default_factory=dict, repr=False)
    # translateTimestampSince's text of each timestamp (printers.py), once per answer.
    shown: dict[str, str] = field(default_factory=dict, repr=False)

    def wall(self, t_s: float) -> datetime:
        return self.wall_now - timedelta(seconds=self.sim_now_s - t_s)

    def time(self, t_s: float | None) -> str | None:
        """metav1.Time: RFC 3339 in whole seconds."""
        if t_s is None:
            return None
        text = self._times.get(t_s)
        if text is None:
            text = self._times[t_s] = self.wall(t_s).strftime("%Y-%m-%dT%H:%M:%SZ")
        return text

    def micro(self, t_s: float | None) -> str | None:
        """metav1.MicroTime: RFC 3339 with microseconds."""
        if t_s is None:
            return None
        text = self._micros.get(t_s)
        if text is None:
            text = self._micros[t_s] = self.wall(t_s).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return text

    def seconds_since(self, ts: str) -> float:
        """Wall seconds from the timestamp ``ts`` (as this clock wrote it) to now."""
        age = self._ages.get(ts)
        if age is None:
            fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in ts else "%Y-%m-%dT%H:%M:%SZ"
            then = datetime.strptime(ts, fmt).replace(tzinfo=UTC)
            age = self._ages[ts] = (self.wall_now - then).total_seconds()
        return age


def now_clock(sim_now_s: float) -> Clock:
    return Clock(sim_now_s, datetime.now(UTC))


# -- quantities -----------------------------------------------------------------------------
def cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def bytes_quantity(n: int) -> str:
    for suffix, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n and n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)


def quantities(resources: dict[str, int]) -> dict[str, str]:
    out = {}
    for name, value in sorted(resources.items()):
        if name == "cpu":
            out[name] = cpu_quantity(int(value))
        elif name in ("memory", "ephemeral-storage"):
            out[name] = bytes_quantity(int(value))
        else:
            out[name] = str(value)
    return out


def _ip(prefix: str, text: str) -> str:
    h = zlib.crc32(text.encode())
    return f"{prefix}.{(h >> 8) & 0xFF}.{(h & 0xFF) or 1}"


def node_ip(name: str) -> str:
    return _ip(f"10.{(zlib.crc32(name.encode()) >> 16) & 0x3F}", name)


def pod_ip(key: str) -> str:
    return _ip("10.244", key)


def _meta(
    name: str, rv: int, created: str | None, uid: str = "", namespace: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["uid"] = uid or f"{name}-uid"
    meta["resourceVersion"] = str(rv)
    meta["creationTimestamp"] = created
    return meta


# -- nodes and leases ------------------------------------------------------------------------
def node(view: dict[str, Any], release: str, clock: Clock, rv: int) -> dict[str, Any]:
    name = view["name"]
    meta = _meta(name, rv, clock.time(view.get("created", 0)), view.get("uid", ""))
    meta["labels"] = dict(view.get("labels") or {})
    meta["annotations"] = {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    spec: dict[str, Any] = {}
    if view.get("unschedulable"):
        spec["unschedulable"] = True
    taints = []
    for t in view.get("taints") or []:
        taint = {"key": t["key"], "effect": t["effect"]}
        if t.get("value"):
            taint["value"] = t["value"]
        if t.get("timeAdded") is not None:
            taint["timeAdded"] = clock.time(t["timeAdded"])
        taints.append(taint)
    if taints:
        spec["taints"] = taints
    conditions = [
        {
            "type": c["type"],
            "status": c["status"],
            "lastHeartbeatTime": clock.time(c["lastHeartbeatTime"]),
            "lastTransitionTime": clock.time(c["lastTransitionTime"]),
            "reason": c["reason"],
            "message": c["message"],
        }
        for c in view.get("conditions") or []
    ]
    kubelet = view.get("kubeletVersion") or release
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": meta,
        "spec": spec,
        "status": {
            "capacity": quantities(view.get("capacity") or {}),
            "allocatable": quantities(view.get("allocatable") or view.get("capacity") or {}),
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": node_ip(name)},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kernelVersion": "6.1.0-simulated",
                "osImage": "node-failure playground (simulated)",
                "containerRuntimeVersion": "containerd://1.7.0",
                "kubeletVersion": f"v{kubelet}.0",
                "kubeProxyVersion": f"v{kubelet}.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def lease_renew(view: dict[str, Any], duration_s: int, sim_now_s: float) -> float | None:
    """The Lease's renewTime (simulated seconds) at ``sim_now_s``: a kubelet that reaches the
    API renews every quarter of the duration (NodeLeaseRenewIntervalFraction); the engine
    computes renewals lazily and the view keeps the one as of its last change, so the
    renewals since are on its grid."""
    renew = view.get("leaseRenewTime")
    if renew is not None and (view.get("kubelet") or {}).get("state") == "Running":
        period = duration_s / 4
        renew += max(0, int((sim_now_s - renew) / period)) * period
    return renew


def lease(view: dict[str, Any], duration_s: int, clock: Clock, rv: int) -> dict[str, Any]:
    """The node's Lease in kube-node-lease: renewed by its kubelet (leaseRenewTime)."""
    name = view["name"]
    created = view.get("created", 0)
    meta = _meta(
        name, rv, clock.time(created), f"lease-{view.get('uid', name)}", NODE_LEASE_NAMESPACE
    )
    meta["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Node", "name": name, "uid": view.get("uid", "")}
    ]
    spec: dict[str, Any] = {"holderIdentity": name, "leaseDurationSeconds": duration_s}
    renew = lease_renew(view, duration_s, clock.sim_now_s)
    if renew is not None:
        spec["renewTime"] = clock.micro(renew)
    return {
        "kind": "Lease",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": meta,
        "spec": spec,
    }


# -- pods ------------------------------------------------------------------------------------
def _owner_ref(owner: str, namespace: str) -> dict[str, Any]:
    kind, _, name = owner.partition("/")
    return {
        "apiVersion": "apps/v1"
        if kind in ("ReplicaSet", "StatefulSet", "DaemonSet", "Deployment")
        else "v1",
        "kind": kind,
        "name": name,
        "uid": f"{kind.lower()}-{namespace}-{name}",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_meta(view: dict[str, Any], clock: Clock, rv: int) -> dict[str, Any]:
    """A pod's metadata (all a Table row carries of it without ``includeObject=Object``)."""
    namespace, _, name = view["key"].partition("/")
    meta = _meta(name, rv, clock.time(view.get("created", 0)), view.get("uid", ""), namespace)
    meta["labels"] = dict(view.get("labels") or {})
    if view.get("owner"):
        meta["ownerReferences"] = [_owner_ref(view["owner"], namespace)]
    if view.get("deletionTimestamp") is not None:
        meta["deletionTimestamp"] = clock.time(view["deletionTimestamp"])
        meta["deletionGracePeriodSeconds"] = 30
    return meta


def pod(view: dict[str, Any], clock: Clock, rv: int) -> dict[str, Any]:
    created = view.get("created", 0)
    meta = pod_meta(view, clock, rv)
    containers = view.get("containers") or [{"name": "main", "requests": {}}]
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": c["name"],
                "image": IMAGE,
                "resources": {"requests": quantities(c.get("requests") or {})}
                if c.get("requests")
                else {},
            }
            for c in containers
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "priority": view.get("priority", 0),
        "tolerations": list(view.get("tolerations") or []),
    }
    node_name = view.get("node")
    if node_name:
        spec["nodeName"] = node_name
    phase = view.get("phase") or "Pending"
    status: dict[str, Any] = {"phase": phase, "qosClass": view.get("qosClass") or "BestEffort"}
    if view.get("reason"):
        status["reason"] = view["reason"]
    if view.get("message"):
        status["message"] = view["message"]
    created_at = clock.time(created)
    conditions = []
    ready = bool(view.get("ready"))
    if node_name:
        status["hostIP"] = node_ip(node_name)
        status["hostIPs"] = [{"ip": node_ip(node_name)}]
        status["startTime"] = created_at
        conditions.append(_cond("PodScheduled", "True", created_at))
        if view.get("started") and phase == "Running":
            ip = pod_ip(view["key"])
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        conditions.append(_cond("Initialized", "True", created_at))
        flag = "True" if ready else "False"
        conditions.append(_cond("ContainersReady", flag, created_at))
        conditions.append(_cond("Ready", flag, created_at))
    else:
        why = view.get("unschedulableReason") or ""
        cond = _cond("PodScheduled", "False", created_at)
        if why:
            cond["reason"] = "Unschedulable"
            cond["message"] = why
        conditions.append(cond)
    if view.get("disruptionTarget"):
        reason, message = view["disruptionTarget"]
        conditions.append(
            {**_cond("DisruptionTarget", "True", created_at), "reason": reason, "message": message}
        )
    status["conditions"] = conditions
    statuses = _container_statuses(view, containers, phase, created_at, ready)
    if statuses is not None:
        status["containerStatuses"] = statuses
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": status}


def _cond(kind: str, status: str, at: str | None) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": at}


def _container_statuses(
    view: dict[str, Any], containers: list[dict[str, Any]], phase: str, at: str | None, ready: bool
) -> list[dict[str, Any]] | None:
    """What the kubelet reports: running (ready as the pod) once started, ContainerCreating
    while bound and not started; none before scheduling, nor for a pod in a terminal phase
    (its reason, such as Evicted, is what kubectl's STATUS column shows then)."""
    if not view.get("node") or phase in ("Failed", "Succeeded"):
        return None
    out = []
    for c in containers:
        running = bool(view.get("started")) and phase == "Running"
        state = (
            {"running": {"startedAt": at}}
            if running
            else {"waiting": {"reason": "ContainerCreating"}}
        )
        out.append(
            {
                "name": c["name"],
                "state": state,
                "lastState": {},
                "ready": running and ready,
                "restartCount": 0,
                "image": IMAGE,
                "imageID": "",
                "started": running,
            }
        )
    return out


# -- namespaces, services --------------------------------------------------------------------
def namespace(name: str, clock: Clock, rv: int) -> dict[str, Any]:
    meta = _meta(name, rv, clock.time(0), f"namespace-{name}")
    meta["labels"] = {"kubernetes.io/metadata.name": name}
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": meta,
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
