"""API objects of the simulated cluster: Node, Pod, Lease, Taint, Toleration, conditions.

Plain dataclasses with slots. Field names follow the Kubernetes API (snake_case);
times are simulated milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Taint keys and effects [src: k8s.io/api/core/v1 well_known_taints.go]
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
# v1.TaintNodeOutOfService: an operator's mark that a node is shut down for good (non-graceful
# node shutdown, NodeOutOfServiceVolumeDetach GA 1.28); value as in the Kubernetes docs.
TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
OUT_OF_SERVICE_VALUE = "nodeshutdown"

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

# Node condition types and statuses
READY = "Ready"
MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"
NETWORK_UNAVAILABLE = "NetworkUnavailable"
NODE_CONDITION_TYPES = (READY, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE, NETWORK_UNAVAILABLE)
TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

LABEL_ZONE_STABLE = "topology.kubernetes.io/zone"
LABEL_REGION_STABLE = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
LABEL_EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


@dataclass(slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""
    time_added_ms: int | None = None

    def matches(self, other: Taint) -> bool:
        """Port of v1.Taint.MatchTaint: same key and effect."""
        return self.key == other.key and self.effect == other.effect

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        if self.time_added_ms is not None:
            out["timeAdded"] = self.time_added_ms / 1000
        return out


# Frozen: one Toleration may be shared by many pods (admission's default tolerations, a
# workload template's), so nothing may change one in place; a pod's list is replaced instead.
@dataclass(slots=True, frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Port of v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # Equal (the default): values must match.
        return self.value == taint.value

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"operator": self.operator}
        if self.key:
            out["key"] = self.key
        if self.value:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out


def tolerations_tolerate_taint(tolerations: list[Toleration], taint: Taint) -> bool:
    """Port of v1helper.TolerationsTolerateTaint."""
    for t in tolerations:
        if t.tolerates(taint):
            return True
    return False


@dataclass(slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_heartbeat_ms: int = 0
    last_transition_ms: int = 0

    def copy(self) -> NodeCondition:
        return NodeCondition(
            self.type,
            self.status,
            self.reason,
            self.message,
            self.last_heartbeat_ms,
            self.last_transition_ms,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastHeartbeatTime": self.last_heartbeat_ms / 1000,
            "lastTransitionTime": self.last_transition_ms / 1000,
        }


@dataclass(slots=True)
class Image:
    name: str
    size: int
    in_use: bool = False
    first_detected_ms: int = 0
    last_used_ms: int = 0


@dataclass(slots=True)
class NodeResources:
    """What the kubelet's stats provider would report about the node itself."""

    capacity: dict[str, int]  # cpu in millicores, memory/ephemeral-storage bytes, pods count
    allocatable: dict[str, int]
    system_usage: dict[str, int] = field(default_factory=dict)  # memory, ephemeral-storage, pids
    pid_max: int = 4_194_304
    inodes: int = 0  # 0 = derived from disk size
    inodes_used: int = 0
    imagefs_capacity: int | None = None
    images: list[Image] = field(default_factory=list)
    dead_containers: int = 0  # bytes container GC can free


@dataclass(slots=True)
class Node:
    name: str
    uid: str
    creation_ms: int
    labels: dict[str, str]
    zone_key: str
    resources: NodeResources
    unschedulable: bool = False
    taints: list[Taint] = field(default_factory=list)
    conditions: list[NodeCondition] = field(default_factory=list)
    excluded_from_disruption: bool = False  # derived at creation from name/labels + gates

    def condition(self, ctype: str) -> NodeCondition | None:
        """Port of nodeutil.GetNodeCondition."""
        for c in self.conditions:
            if c.type == ctype:
                return c
        return None

    def ready_status(self) -> str | None:
        c = self.condition(READY)
        return c.status if c is not None else None

    def has_taint(self, key: str, effect: str) -> bool:
        """Port of taintutils.TaintExists (matching key and effect)."""
        for t in self.taints:
            if t.key == key and t.effect == effect:
                return True
        return False


@dataclass(slots=True)
class Container:
    name: str
    requests: dict[str, int] = field(default_factory=dict)  # cpu milli, memory bytes, ...
    limits: dict[str, int] = field(default_factory=dict)
    # Each quantity's Format as written (quantity.quantity_format), for messages that print it.
    request_formats: dict[str, str] = field(default_factory=dict)
    limit_formats: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class OwnerRef:
    kind: str
    name: str
    uid: str = ""
    controller: bool = True

    def ref(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(slots=True)
class Pod:
    """A pod. Its ``labels``, ``annotations``, ``node_selector``, ``tolerations`` and
    ``usage`` are replaced whole, never written in place (a pod update, SetUsage, the
    admission plugins), and its containers are tuples: the pods of one workload template
    share the template's (WorkloadControllers._new_pod)."""

    namespace: str
    name: str
    uid: str
    creation_ms: int
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner: OwnerRef | None = None
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Toleration] = field(default_factory=list)
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    priority: int = 0
    priority_class_name: str = ""
    termination_grace_period_s: int = 30
    host_network: bool = False
    phase: str = "Pending"
    reason: str = ""
    message: str = ""
    ready: bool | None = None  # the Ready pod condition; None = not set yet
    started: bool = False  # containers running on the node
    deletion_ms: int | None = None
    deletion_grace_s: int | None = None
    usage: dict[str, int] = field(default_factory=dict)  # memory, ephemeral-storage, pids
    unschedulable_reason: str = ""
    # The DisruptionTarget condition (PodDisruptionConditions): (reason, message) once set.
    disruption_target: tuple[str, str] | None = None
    # ``namespace/name``, made once: a pod's name and namespace never change.
    key: str = field(init=False, repr=False, compare=False)
    # ``Kind/namespace/name`` of the owner ("" without one), made once: it never changes.
    owner_key: str = field(init=False, repr=False, compare=False)
    # What the pod adds to its node's NodeInfo (scheduler.node_info_contribution), made on
    # first use: a pod's containers and their requests never change.
    nodeinfo_vec: tuple[int, int, int, int, int, int] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # request() of cpu, memory and ephemeral-storage, made on first use (requests never change)
    request_vec: tuple[int, int, int] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    qos: str = field(default="", init=False, repr=False, compare=False)  # qos_class(), once
    # scheduler.nonzero_pod_request of cpu and memory, made on first use
    nonzero_vec: tuple[int, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.key = f"{self.namespace}/{self.name}"
        owner = self.owner
        self.owner_key = f"{owner.kind}/{self.namespace}/{owner.name}" if owner is not None else ""

    @property
    def terminating(self) -> bool:
        return self.deletion_ms is not None

    def is_daemonset_pod(self) -> bool:
        return self.owner is not None and self.owner.controller and self.owner.kind == "DaemonSet"

    def is_mirror(self) -> bool:
        return MIRROR_POD_ANNOTATION in self.annotations

    def is_critical(self) -> bool:
        """Port of kubelettypes.IsCriticalPod: static, mirror, or priority >= 2e9."""
        if self.annotations.get("kubernetes.io/config.source", "api") != "api":
            return True
        if self.is_mirror():
            return True
        return self.priority >= SYSTEM_CRITICAL_PRIORITY

    def request(self, resource: str) -> int:
        """Effective pod request: max(sum of containers, max of init containers)."""
        total = sum(c.requests.get(resource, 0) for c in self.containers)
        init = max((c.requests.get(resource, 0) for c in self.init_containers), default=0)
        return max(total, init)

    def requests3(self) -> tuple[int, int, int]:
        """``request`` of cpu, memory and ephemeral-storage (computed once: a pod's
        containers never change)."""
        vec = self.request_vec
        if vec is None:
            cpu = mem = eph = 0
            for c in self.containers:
                r = c.requests
                cpu += r.get("cpu", 0)
                mem += r.get("memory", 0)
                eph += r.get("ephemeral-storage", 0)
            for c in self.init_containers:
                r = c.requests
                cpu = max(cpu, r.get("cpu", 0))
                mem = max(mem, r.get("memory", 0))
                eph = max(eph, r.get("ephemeral-storage", 0))
            vec = self.request_vec = (cpu, mem, eph)
        return vec

    def qos_class(self) -> str:
        """Port of v1qos.GetPodQOS (cpu and memory decide; requests default from limits);
        computed once (a pod's containers never change)."""
        if not self.qos:
            self.qos = self._qos_class()
        return self.qos

    def _qos_class(self) -> str:
        requests: dict[str, int] = {}
        limits: dict[str, int] = {}
        guaranteed = True
        for c in [*self.containers, *self.init_containers]:
            req = {k: v for k, v in c.requests.items() if k in ("cpu", "memory") and v != 0}
            lim = {k: v for k, v in c.limits.items() if k in ("cpu", "memory") and v != 0}
            for k, v in lim.items():
                req.setdefault(k, v)  # requests default to limits (API defaulting)
            for k, v in req.items():
                requests[k] = requests.get(k, 0) + v
            for k, v in lim.items():
                limits[k] = limits.get(k, 0) + v
            if set(lim) != {"cpu", "memory"}:
                guaranteed = False
        if not requests and not limits:
            return "BestEffort"
        if guaranteed:
            for k, v in requests.items():
                if limits.get(k) != v:
                    guaranteed = False
                    break
        if guaranteed and len(requests) == len(limits):
            return "Guaranteed"
        return "Burstable"


@dataclass(slots=True)
class Lease:
    """coordination.k8s.io Lease in kube-node-lease; renew_ms is when it was last renewed."""

    name: str
    renew_ms: int
    holder: str = ""
    duration_s: int = 40
