"""Types of the kubelet eviction manager: signals, thresholds and the stats the engine reports.

Port of pkg/kubelet/eviction/api/types.go (v1.18) plus the parts of the summary API
(k8s.io/kubelet/pkg/apis/stats/v1alpha1) that eviction reads. Everything here is plain data:
the engine fills ``NodeStats`` and ``PodStats``; the helpers and the manager only read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

# -- signals (evictionapi.Signal) -------------------------------------------------------------
MEMORY_AVAILABLE = "memory.available"
ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
NODEFS_AVAILABLE = "nodefs.available"
NODEFS_INODES_FREE = "nodefs.inodesFree"
IMAGEFS_AVAILABLE = "imagefs.available"
IMAGEFS_INODES_FREE = "imagefs.inodesFree"
PID_AVAILABLE = "pid.available"
SIGNALS = (
    MEMORY_AVAILABLE,
    ALLOCATABLE_MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    PID_AVAILABLE,
)
MEMORY_SIGNALS = frozenset({MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE})

OP_LESS_THAN = "LessThan"  # evictionapi.OpLessThan, the only operator (OpForSignal)

# -- node conditions and resources ------------------------------------------------------------
MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"
# Where Go iterates a map of conditions we use this order (see nodeConditionsObservedSince).
CONDITION_ORDER = (MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE)

RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_INODES = "inodes"  # resourceInodes: internal to the eviction package
RESOURCE_PIDS = "pids"  # resourcePids: internal to the eviction package

# signalToNodeCondition (helpers.go init)
SIGNAL_TO_NODE_CONDITION: dict[str, str] = {
    MEMORY_AVAILABLE: MEMORY_PRESSURE,
    ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    IMAGEFS_AVAILABLE: DISK_PRESSURE,
    NODEFS_AVAILABLE: DISK_PRESSURE,
    IMAGEFS_INODES_FREE: DISK_PRESSURE,
    NODEFS_INODES_FREE: DISK_PRESSURE,
    PID_AVAILABLE: PID_PRESSURE,
}
# signalToResource (helpers.go init)
SIGNAL_TO_RESOURCE: dict[str, str] = {
    MEMORY_AVAILABLE: RESOURCE_MEMORY,
    ALLOCATABLE_MEMORY_AVAILABLE: RESOURCE_MEMORY,
    IMAGEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE,
    IMAGEFS_INODES_FREE: RESOURCE_INODES,
    NODEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE,
    NODEFS_INODES_FREE: RESOURCE_INODES,
    PID_AVAILABLE: RESOURCE_PIDS,
}

# Kubelet defaults (pkg/kubelet/apis/config/v1beta1/defaults_linux.go): used only when the
# whole evictionHard map is unset.
DEFAULT_EVICTION_HARD: dict[str, str] = {
    MEMORY_AVAILABLE: "100Mi",
    NODEFS_AVAILABLE: "10%",
    NODEFS_INODES_FREE: "5%",
    IMAGEFS_AVAILABLE: "15%",
}
# DefaultEvictionHard since 1.30: imagefs.inodesFree 5% added (#121834). Listed last, so the
# thresholds parsed from the 1.18 four keep their order (ParseThresholdConfig walks a Go map:
# any order is one Go could take).
DEFAULT_EVICTION_HARD_1_30: dict[str, str] = {**DEFAULT_EVICTION_HARD, IMAGEFS_INODES_FREE: "5%"}
DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60 * 1000  # evictionPressureTransitionPeriod
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority

QOS_BEST_EFFORT = "BestEffort"
QOS_BURSTABLE = "Burstable"
QOS_GUARANTEED = "Guaranteed"


# -- thresholds -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ThresholdValue:
    """Port of evictionapi.ThresholdValue: a quantity or a percentage of capacity.

    ``quantity`` is an integer (a fractional quantity is rounded up, which compares the same
    against integer observations). ``percentage`` is the exact value of Go's ``float32``
    fraction (``10%`` is ``Fraction(float32(0.1))``, not 1/10) so percent thresholds resolve to
    exactly the bytes the kubelet computes."""

    quantity: int | None = None
    percentage: Fraction | None = None
    # The quantity's Format as written ("100Mi" BinarySI, "1G" DecimalSI), which
    # Quantity.String keeps; "" when not known (printed BinarySI). Not part of equality:
    # Go compares threshold values with Quantity.Cmp.
    fmt: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {"quantity": n} (with "format" unless BinarySI or unknown) or
        {"percentage": [numerator, denominator]}."""
        if self.quantity is not None:
            if self.fmt and self.fmt != "BinarySI":
                return {"quantity": self.quantity, "format": self.fmt}
            return {"quantity": self.quantity}
        assert self.percentage is not None
        return {"percentage": [self.percentage.numerator, self.percentage.denominator]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ThresholdValue:
        """Inverse of ``to_dict``."""
        if "quantity" in d:
            return cls(quantity=int(d["quantity"]), fmt=str(d.get("format", "")))
        num, den = d["percentage"]
        return cls(percentage=Fraction(int(num), int(den)))


def get_threshold_quantity(value: ThresholdValue, capacity: int) -> int:
    """Port of api/types.go GetThresholdQuantity: the quantity, or
    ``int64(float64(capacity) * float64(percentage))`` (truncated, as Go converts)."""
    if value.quantity is not None:
        return value.quantity
    assert value.percentage is not None
    return math.trunc(float(capacity) * float(value.percentage))


@dataclass(frozen=True, slots=True)
class Threshold:
    """Port of evictionapi.Threshold. The operator is always LessThan; a threshold is hard
    when its grace period is zero (isHardEvictionThreshold)."""

    signal: str
    value: ThresholdValue
    grace_period_ms: int = 0
    min_reclaim: ThresholdValue | None = None

    @property
    def operator(self) -> str:
        """evictionapi.OpForSignal[signal]: always LessThan."""
        return OP_LESS_THAN

    @property
    def hard(self) -> bool:
        """Port of helpers.go isHardEvictionThreshold."""
        return self.grace_period_ms == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the threshold."""
        return {
            "signal": self.signal,
            "value": self.value.to_dict(),
            "gracePeriodMs": self.grace_period_ms,
            "minReclaim": None if self.min_reclaim is None else self.min_reclaim.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Threshold:
        """Inverse of ``to_dict``."""
        mr = d.get("minReclaim")
        return cls(
            signal=d["signal"],
            value=ThresholdValue.from_dict(d["value"]),
            grace_period_ms=int(d.get("gracePeriodMs", 0)),
            min_reclaim=None if mr is None else ThresholdValue.from_dict(mr),
        )


@dataclass(frozen=True, slots=True)
class Observation:
    """Port of helpers.go signalObservation: available and capacity of one signal, and the
    time (ms) of the stats it came from."""

    available: int
    capacity: int
    time_ms: int


# -- stats the engine fills (summary API) -----------------------------------------------------
@dataclass(slots=True)
class FsStats:
    """statsapi.FsStats of a filesystem: bytes and inodes."""

    capacity: int
    used: int
    inodes: int = 0
    inodes_used: int = 0


@dataclass(slots=True)
class NodeStats:
    """statsapi.NodeStats as eviction reads it, at ``time_ms``.

    ``memory_working_set`` is the node total (system daemons plus every pod);
    ``allocatable_memory_capacity`` is the memory limit of the pods cgroup (capacity minus
    kube/system reserved) and ``pods_memory_working_set`` its usage. ``imagefs`` is None when
    images live on nodefs (no dedicated image filesystem): the imagefs signals then observe the
    nodefs numbers. A capacity of 0 means "not reported" (no observation for those signals)."""

    time_ms: int
    memory_capacity: int
    memory_working_set: int
    allocatable_memory_capacity: int
    pods_memory_working_set: int
    nodefs_capacity: int
    nodefs_used: int
    nodefs_inodes: int = 0
    nodefs_inodes_used: int = 0
    imagefs: FsStats | None = None
    pid_max: int = 0
    pids_used: int = 0


@dataclass(slots=True)
class ContainerStats:
    """One container of a pod: its spec resources and (for running containers) its usage.

    ``requests``/``limits`` map a resource name (``cpu`` in millicores, ``memory`` and
    ``ephemeral-storage`` in bytes) to an amount, as in the pod spec. Usage fields are None when
    the stats provider has no number for them (Go's nil pointers)."""

    name: str
    requests: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    memory_working_set: int | None = None
    rootfs_used: int | None = None
    rootfs_inodes_used: int | None = None
    logs_used: int | None = None
    logs_inodes_used: int | None = None
    # How the spec wrote each quantity (BinarySI, DecimalSI...): messages print it that way.
    request_formats: dict[str, str] = field(default_factory=dict)
    limit_formats: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class VolumeStats:
    """One pod volume: its source kind (``emptyDir``, ``hostPath``, ``configMap``, ``secret``,
    ``downwardAPI``, ``gitRepo``, ``persistentVolumeClaim``, ...), the emptyDir medium and
    sizeLimit, and its usage (None: no stats)."""

    name: str
    kind: str = "emptyDir"
    medium: str = ""
    size_limit: int | None = None
    used: int | None = None
    inodes_used: int | None = None


@dataclass(slots=True)
class PodStats:
    """An active pod as eviction sees it: spec facts plus statsapi.PodStats.

    ``key`` is ``namespace/name``. ``memory_working_set`` is the pod cgroup's working set (used
    for ranking); ``ephemeral_storage_used`` is the summary's pod ephemeral storage (container
    rootfs + logs + local volumes + the etc-hosts file; used for the pod limit check).
    ``is_critical``: static pod, mirror pod or priority >= 2,000,000,000 (IsCriticalPod).
    ``qos_class`` None means "compute it from the containers" (GetPodQOS).
    ``stats_found`` False models a pod the summary has no entry for (ranked first, skipped by
    the local storage checks)."""

    key: str
    priority: int = 0
    containers: list[ContainerStats] = field(default_factory=list)
    init_containers: list[ContainerStats] = field(default_factory=list)
    volumes: list[VolumeStats] = field(default_factory=list)
    memory_working_set: int | None = None
    ephemeral_storage_used: int | None = None
    process_count: int | None = None
    is_critical: bool = False
    qos_class: str | None = None
    tolerates_memory_pressure: bool = False
    stats_found: bool = True
    # spec.terminationGracePeriodSeconds (defaulted to 30 by the API server): a soft eviction's
    # override is capped by it from 1.32 (ManagerConfig.soft_grace_capped_by_pod, #122890).
    termination_grace_period_s: int = 30


def is_critical_pod(priority: int, is_static: bool = False, is_mirror: bool = False) -> bool:
    """Port of kubelettypes.IsCriticalPod (1.18): static, mirror, or system-critical priority."""
    return is_static or is_mirror or priority >= SYSTEM_CRITICAL_PRIORITY
