"""Pure helpers of the kubelet eviction manager (pkg/kubelet/eviction/helpers.go, v1.18):
threshold parsing, signal observations, thresholds met, grace periods, node conditions,
the rank functions and the eviction message. ``now`` is always passed in."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from ...quantity import DurationError, QuantityError, format_bytes, parse_duration_ms, parse_quantity

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
# signalToNodeCondition
SIGNAL_TO_NODE_CONDITION = {
    MEMORY_AVAILABLE: "MemoryPressure",
    ALLOCATABLE_MEMORY_AVAILABLE: "MemoryPressure",
    NODEFS_AVAILABLE: "DiskPressure",
    NODEFS_INODES_FREE: "DiskPressure",
    IMAGEFS_AVAILABLE: "DiskPressure",
    IMAGEFS_INODES_FREE: "DiskPressure",
    PID_AVAILABLE: "PIDPressure",
}
# signalToResource
SIGNAL_TO_RESOURCE = {
    MEMORY_AVAILABLE: "memory",
    ALLOCATABLE_MEMORY_AVAILABLE: "memory",
    NODEFS_AVAILABLE: "ephemeral-storage",
    NODEFS_INODES_FREE: "inodes",
    IMAGEFS_AVAILABLE: "ephemeral-storage",
    IMAGEFS_INODES_FREE: "inodes",
    PID_AVAILABLE: "pids",
}
CONDITION_ORDER = ("MemoryPressure", "DiskPressure", "PIDPressure")
DEFAULT_EVICTION_HARD = {
    MEMORY_AVAILABLE: "100Mi",
    NODEFS_AVAILABLE: "10%",
    NODEFS_INODES_FREE: "5%",
    IMAGEFS_AVAILABLE: "15%",
}


class ThresholdConfigError(ValueError):
    """A kubelet eviction setting refused; the message starts with the field's path."""


def float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


@dataclass(frozen=True, slots=True)
class ThresholdValue:
    """evictionapi.ThresholdValue: a quantity or a (float32) percentage of capacity."""

    quantity: int | None = None
    percentage: float | None = None

    def resolve(self, capacity: int) -> int:
        """Port of GetThresholdQuantity: percentages as int64(capacity x float32 pct)."""
        if self.quantity is not None:
            return self.quantity
        assert self.percentage is not None
        return int(float(capacity) * self.percentage)

    def __str__(self) -> str:
        if self.quantity is not None:
            return format_bytes(self.quantity)
        return f"{self.percentage * 100:g}%" if self.percentage is not None else "?"


@dataclass(frozen=True, slots=True)
class Threshold:
    """evictionapi.Threshold (operator is always LessThan)."""

    signal: str
    value: ThresholdValue
    grace_period_ms: int = 0
    min_reclaim: ThresholdValue | None = None

    @property
    def hard(self) -> bool:
        """isHardEvictionThreshold: a zero grace period."""
        return self.grace_period_ms == 0

    def key(self) -> tuple[str, ThresholdValue, int]:
        """What mergeThresholds compares (signal, operator, value, grace period)."""
        return (self.signal, self.value, self.grace_period_ms)


def _parse_value(signal: str, val: str, path: str, what: str) -> ThresholdValue | None:
    if not isinstance(val, str):
        val = str(val)
    if val.endswith("%"):
        if what == "threshold" and val in ("0%", "100%"):
            return None  # ignored, as the kubelet does
        try:
            pct = float(val[:-1])
        except ValueError:
            raise ThresholdConfigError(f'{path}: "{val}" is not a percentage') from None
        if what == "threshold" and not 0 <= pct <= 100:
            raise ThresholdConfigError(f"{path}: eviction percentage threshold {signal} must be between 0% and 100%: {val}")
        if what == "minimum reclaim" and pct <= 0:
            raise ThresholdConfigError(f"{path}: eviction percentage minimum reclaim {signal} must be positive: {val}")
        return ThresholdValue(percentage=float32(float32(pct) / 100))
    try:
        q = parse_quantity(val)
    except QuantityError:
        raise ThresholdConfigError(f'{path}: "{val}" is not a Kubernetes quantity') from None
    if what == "threshold" and q <= 0:
        raise ThresholdConfigError(f"{path}: eviction threshold {signal} must be positive: {val}")
    if q < 0:
        raise ThresholdConfigError(f"{path}: negative eviction minimum reclaim specified for {signal}")
    return ThresholdValue(quantity=int(-(-q // 1)) if isinstance(q, Fraction) else int(q))


def _check_signal(signal: str, path: str) -> None:
    if signal not in SIGNALS:
        raise ThresholdConfigError(
            f"{path}: unsupported eviction signal {signal} (known: {', '.join(SIGNALS)})"
        )


def parse_threshold_config(
    enforce_node_allocatable: Iterable[str],
    eviction_hard: Mapping[str, str] | None,
    eviction_soft: Mapping[str, str],
    eviction_soft_grace_period: Mapping[str, str],
    eviction_minimum_reclaim: Mapping[str, str],
    path_prefix: str = "spec.kubelet",
) -> list[Threshold]:
    """Port of ParseThresholdConfig. ``eviction_hard=None`` takes the kubelet's defaults
    (defaulted only when the whole map is unset)."""
    hard_map = DEFAULT_EVICTION_HARD if eviction_hard is None else eviction_hard
    results: list[Threshold] = []
    for signal, val in hard_map.items():
        p = f"{path_prefix}.evictionHard.{signal}"
        _check_signal(signal, p)
        value = _parse_value(signal, val, p, "threshold")
        if value is not None:
            results.append(Threshold(signal, value))
    grace: dict[str, int] = {}
    for signal, val in eviction_soft_grace_period.items():
        p = f"{path_prefix}.evictionSoftGracePeriod.{signal}"
        _check_signal(signal, p)
        try:
            grace[signal] = parse_duration_ms(val)
        except DurationError as exc:
            raise ThresholdConfigError(f"{p}: {exc}") from None
    min_reclaims: dict[str, ThresholdValue] = {}
    for signal, val in eviction_minimum_reclaim.items():
        p = f"{path_prefix}.evictionMinimumReclaim.{signal}"
        _check_signal(signal, p)
        mr = _parse_value(signal, val, p, "minimum reclaim")
        if mr is not None:
            min_reclaims[signal] = mr
    for signal, val in eviction_soft.items():
        p = f"{path_prefix}.evictionSoft.{signal}"
        _check_signal(signal, p)
        value = _parse_value(signal, val, p, "threshold")
        if value is None:
            continue
        if signal not in grace:
            raise ThresholdConfigError(
                f"{path_prefix}.evictionSoftGracePeriod.{signal}: grace period must be specified "
                f"for the soft eviction threshold {signal}"
            )
        results.append(Threshold(signal, value, grace[signal]))
    results = [
        Threshold(t.signal, t.value, t.grace_period_ms, min_reclaims.get(t.signal)) for t in results
    ]
    if "pods" in enforce_node_allocatable:
        # addAllocatableThresholds: hard memory.available also guards the pods cgroup.
        results += [
            Threshold(ALLOCATABLE_MEMORY_AVAILABLE, t.value, 0, t.min_reclaim)
            for t in results
            if t.signal == MEMORY_AVAILABLE and t.hard
        ]
    return results


# -- observations ---------------------------------------------------------------------------------
@dataclass(slots=True)
class NodeStats:
    """The summary API's node part, as the engine computes it."""

    time_ms: int
    memory_capacity: int
    memory_working_set: int  # node total, pods included
    allocatable_memory: int  # the pods cgroup limit
    pods_memory_working_set: int
    nodefs_capacity: int
    nodefs_used: int
    nodefs_inodes: int
    nodefs_inodes_used: int
    imagefs_capacity: int | None = None  # None: images share nodefs
    imagefs_used: int = 0
    imagefs_inodes: int = 0
    imagefs_inodes_used: int = 0
    pid_max: int = 4_194_304
    pids_used: int = 0


@dataclass(slots=True)
class Observation:
    available: int
    capacity: int
    time_ms: int


def make_signal_observations(s: NodeStats) -> dict[str, Observation]:
    """Port of makeSignalObservations. Without a dedicated image filesystem the runtime's
    imagefs stats describe nodefs, so imagefs.* observe nodefs numbers."""
    t = s.time_ms
    obs = {
        MEMORY_AVAILABLE: Observation(s.memory_capacity - s.memory_working_set, s.memory_capacity, t),
        ALLOCATABLE_MEMORY_AVAILABLE: Observation(
            s.allocatable_memory - s.pods_memory_working_set, s.allocatable_memory, t
        ),
        NODEFS_AVAILABLE: Observation(s.nodefs_capacity - s.nodefs_used, s.nodefs_capacity, t),
        NODEFS_INODES_FREE: Observation(s.nodefs_inodes - s.nodefs_inodes_used, s.nodefs_inodes, t),
        PID_AVAILABLE: Observation(s.pid_max - s.pids_used, s.pid_max, t),
    }
    if s.imagefs_capacity is None:
        obs[IMAGEFS_AVAILABLE] = obs[NODEFS_AVAILABLE]
        obs[IMAGEFS_INODES_FREE] = obs[NODEFS_INODES_FREE]
    else:
        obs[IMAGEFS_AVAILABLE] = Observation(s.imagefs_capacity - s.imagefs_used, s.imagefs_capacity, t)
        obs[IMAGEFS_INODES_FREE] = Observation(
            s.imagefs_inodes - s.imagefs_inodes_used, s.imagefs_inodes, t
        )
    return obs


def thresholds_met(
    thresholds: Iterable[Threshold], observations: Mapping[str, Observation], enforce_min_reclaim: bool
) -> list[Threshold]:
    """Port of thresholdsMet: available < value (+ minReclaim when enforced)."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        quantity = t.value.resolve(obs.capacity)
        if enforce_min_reclaim and t.min_reclaim is not None:
            quantity += t.min_reclaim.resolve(obs.capacity)
        if quantity > obs.available:
            out.append(t)
    return out


def merge_thresholds(a: list[Threshold], b: list[Threshold]) -> list[Threshold]:
    """Port of mergeThresholds (de-duplicated on signal, operator, value, grace period)."""
    out = list(a)
    keys = {t.key() for t in a}
    for t in b:
        if t.key() not in keys:
            keys.add(t.key())
            out.append(t)
    return out


def thresholds_first_observed_at(
    thresholds: list[Threshold], last: Mapping[tuple, int], now: int
) -> dict[tuple, int]:
    """Port of thresholdsFirstObservedAt: keep the earlier time for thresholds still met."""
    return {t.key(): last.get(t.key(), now) for t in thresholds}


def node_conditions(thresholds: Iterable[Threshold]) -> list[str]:
    """Port of nodeConditions (de-duplicated, in threshold order)."""
    out: list[str] = []
    for t in thresholds:
        c = SIGNAL_TO_NODE_CONDITION[t.signal]
        if c not in out:
            out.append(c)
    return out


def node_conditions_last_observed_at(
    conditions: Iterable[str], last: Mapping[str, int], now: int
) -> dict[str, int]:
    """Port of nodeConditionsLastObservedAt: stamp current conditions with now."""
    out = dict(last)
    for c in conditions:
        out[c] = now
    return out


def node_conditions_observed_since(
    observed_at: Mapping[str, int], period_ms: int, now: int
) -> list[str]:
    """Port of nodeConditionsObservedSince: conditions seen within the transition period
    (in a fixed order where Go iterates a map)."""
    return [c for c in CONDITION_ORDER if c in observed_at and now - observed_at[c] < period_ms]


def thresholds_met_grace_period(
    thresholds: list[Threshold], first_observed: Mapping[tuple, int], now: int
) -> list[Threshold]:
    """Port of thresholdsMetGracePeriod."""
    return [t for t in thresholds if now - first_observed[t.key()] >= t.grace_period_ms]


def thresholds_updated_stats(
    thresholds: list[Threshold],
    observations: Mapping[str, Observation],
    last: Mapping[str, Observation],
) -> list[Threshold]:
    """Port of thresholdsUpdatedStats: keep thresholds whose signal has newer stats."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        prev = last.get(t.signal)
        if obs is None or prev is None or obs.time_ms == 0 or obs.time_ms > prev.time_ms:
            out.append(t)
    return out


def by_eviction_priority(thresholds: list[Threshold]) -> list[Threshold]:
    """Port of byEvictionPriority: memory signals first (stable otherwise)."""
    return sorted(thresholds, key=lambda t: 0 if SIGNAL_TO_RESOURCE[t.signal] == "memory" else 1)


def get_reclaimable_threshold(thresholds: list[Threshold]) -> tuple[Threshold, str] | None:
    """Port of getReclaimableThreshold."""
    for t in thresholds:
        resource = SIGNAL_TO_RESOURCE.get(t.signal)
        if resource is not None:
            return t, resource
    return None


# -- pods and ranking -----------------------------------------------------------------------------
@dataclass(slots=True)
class PodStats:
    """What ranking needs to know of one active pod."""

    key: str
    priority: int
    qos_class: str
    memory_request: int
    memory_usage: int
    disk_request: int  # ephemeral-storage
    disk_usage: int  # rootfs + logs + local volumes
    pids: int = 0
    is_critical: bool = False
    containers: list[tuple[str, dict[str, int], dict[str, int]]] = field(default_factory=list)
    ephemeral_limit: int | None = None  # sum of container limits, when set


Cmp = Callable[[PodStats, PodStats], int]


def _cmp_bool(a: bool, b: bool) -> int:
    """cmpBool: true first."""
    if a == b:
        return 0
    return -1 if a else 1


def exceed_memory_requests(p1: PodStats, p2: PodStats) -> int:
    return _cmp_bool(p1.memory_usage > p1.memory_request, p2.memory_usage > p2.memory_request)


def priority(p1: PodStats, p2: PodStats) -> int:
    """Lower priority is evicted first."""
    return (p1.priority > p2.priority) - (p1.priority < p2.priority)


def memory(p1: PodStats, p2: PodStats) -> int:
    """Larger usage above request first."""
    d1 = p1.memory_usage - p1.memory_request
    d2 = p2.memory_usage - p2.memory_request
    return (d2 > d1) - (d2 < d1)


def exceed_disk_requests(p1: PodStats, p2: PodStats) -> int:
    return _cmp_bool(p1.disk_usage > p1.disk_request, p2.disk_usage > p2.disk_request)


def disk(p1: PodStats, p2: PodStats) -> int:
    d1 = p1.disk_usage - p1.disk_request
    d2 = p2.disk_usage - p2.disk_request
    return (d2 > d1) - (d2 < d1)


QOS_RANK = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}


def qos_comparator(p1: PodStats, p2: PodStats) -> int:
    """The pre-priority kubelet's qosComparator: BestEffort, Burstable, then Guaranteed."""
    a, b = QOS_RANK[p1.qos_class], QOS_RANK[p2.qos_class]
    return (a > b) - (a < b)


def ordered_by(*cmps: Cmp) -> Callable[[list[PodStats]], list[PodStats]]:
    """Port of orderedBy(...).Sort; remaining ties go by pod key (Go's order there comes
    from map iteration), so runs are reproducible."""
    from functools import cmp_to_key

    def compare(p1: PodStats, p2: PodStats) -> int:
        for c in cmps:
            r = c(p1, p2)
            if r:
                return r
        return (p1.key > p2.key) - (p1.key < p2.key)

    def sort(pods: list[PodStats]) -> list[PodStats]:
        return sorted(pods, key=cmp_to_key(compare))

    return sort


RANK_FUNCS: dict[str, dict[str, Callable[[list[PodStats]], list[PodStats]]]] = {
    "priority": {  # v1.18: rankMemoryPressure, rankDiskPressureFunc, rankPIDPressure
        "memory": ordered_by(exceed_memory_requests, priority, memory),
        "ephemeral-storage": ordered_by(exceed_disk_requests, priority, disk),
        "inodes": ordered_by(priority),
        "pids": ordered_by(priority),
    },
    "qos": {  # before priorities: orderedBy(qosComparator, memory|disk)
        "memory": ordered_by(qos_comparator, memory),
        "ephemeral-storage": ordered_by(qos_comparator, disk),
        "inodes": ordered_by(qos_comparator),
        "pids": ordered_by(qos_comparator),
    },
}


def eviction_message(resource: str, pod: PodStats) -> str:
    """Port of evictionMessage."""
    message = f"The node was low on resource: {resource}. "
    if resource not in ("memory", "ephemeral-storage"):
        return message
    for name, requests, usage in pod.containers:
        request = requests.get(resource, 0)
        used = usage.get(resource, 0)
        if used > request:
            req_text = format_bytes(request) if request else "0"
            message += (
                f"Container {name} was using {format_bytes(used)}, which exceeds its request of "
                f"{req_text}. "
            )
    return message
