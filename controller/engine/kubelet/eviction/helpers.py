"""Pure helpers of the kubelet eviction manager: port of pkg/kubelet/eviction/helpers.go (v1.18).

Threshold parsing, signal observations, the threshold/condition bookkeeping of one sync, the
rank functions and the eviction message. Nothing here keeps state or reads a clock: ``now_ms``
is always an argument.

Determinism: where Go iterates a map (threshold statements, observedAt maps, node conditions)
we keep the configuration's insertion order, or ``CONDITION_ORDER`` for conditions; where Go
sorts pods with ``sort.Sort`` (not stable) we break remaining ties by pod key.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cmp_to_key

from ...quantity import (
    BINARY_SI,
    DECIMAL_SI,
    DurationError,
    QuantityError,
    format_bytes,
    format_quantity,
    parse_duration_ms,
    parse_quantity,
    quantity_format,
)
from .api import (
    ALLOCATABLE_MEMORY_AVAILABLE,
    CONDITION_ORDER,
    DEFAULT_EVICTION_HARD,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_AVAILABLE,
    MEMORY_SIGNALS,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_AVAILABLE,
    QOS_BEST_EFFORT,
    QOS_BURSTABLE,
    QOS_GUARANTEED,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_INODES,
    RESOURCE_MEMORY,
    SIGNAL_TO_NODE_CONDITION,
    SIGNAL_TO_RESOURCE,
    ContainerStats,
    NodeStats,
    Observation,
    PodStats,
    Threshold,
    ThresholdValue,
    VolumeStats,
    get_threshold_quantity,
)
from .qos import pod_qos

NODE_ALLOCATABLE_ENFORCEMENT_KEY = "pods"  # kubetypes.NodeAllocatableEnforcementKey
REASON = "Evicted"  # helpers.go Reason
NODE_LOW_MESSAGE_FMT = "The node was low on resource: {}. "
NODE_CONDITION_MESSAGE_FMT = "The node had condition: {}. "
CONTAINER_MESSAGE_FMT = "Container {0} was using {1}, which exceeds its request of {2}. "
THRESHOLD_MET_MESSAGE_FMT = "Threshold quantity: {}, available: {}. "  # after 1.18
# makeSignalObservations builds these signals' available amounts as DecimalSI quantities.
_DECIMAL_SIGNALS = (NODEFS_INODES_FREE, IMAGEFS_INODES_FREE, PID_AVAILABLE)
OFFENDING_CONTAINERS_KEY = "offending_containers"
OFFENDING_CONTAINERS_USAGE_KEY = "offending_containers_usage"
STARVED_RESOURCE_KEY = "starved_resource"

RANKING_PRIORITY = "priority"  # v1.18: exceeds requests, priority, usage above requests
RANKING_QOS = "qos"  # before the 2017 priority redesign: QoS class, then usage above requests
RANKING_POLICIES = (RANKING_PRIORITY, RANKING_QOS)


class ThresholdConfigError(ValueError):
    """A kubelet eviction setting was refused; the message starts with the field's path."""


# -- parsing ----------------------------------------------------------------------------------
_DECIMAL_FLOAT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def _float32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _float32_from_bits(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


@functools.lru_cache(maxsize=4096)  # pure; identical nodes ask for the same values
def _round_float32(q: Fraction) -> Fraction:
    """The float32 nearest to ``q`` (ties to even), exactly; OverflowError past float32."""
    if q < 0:
        return -_round_float32(-q)
    guess = _float32_bits(float(q))  # raises OverflowError past the float32 range
    best = guess
    for bits in (guess - 1, guess + 1):
        if bits < 0 or bits >= 0x7F800000:
            continue
        d_new = abs(Fraction(_float32_from_bits(bits)) - q)
        d_best = abs(Fraction(_float32_from_bits(best)) - q)
        if d_new < d_best or (d_new == d_best and bits % 2 == 0):
            best = bits
    if best >= 0x7F800000:
        raise OverflowError("float32 overflow")
    return Fraction(_float32_from_bits(best))


def parse_percentage(text: str) -> Fraction:
    """Port of helpers.go parsePercentage: ``float32(ParseFloat(TrimRight(s, "%"), 32)) / 100``
    in float32 arithmetic, returned as the exact value of that float32."""
    number = text.rstrip("%")
    if not re.fullmatch(_DECIMAL_FLOAT, number):
        raise ValueError(f'strconv.ParseFloat: parsing "{number}": invalid syntax')
    try:
        value = _round_float32(Fraction(number))
        return _round_float32(value / 100)
    except OverflowError:
        raise ValueError(f'strconv.ParseFloat: parsing "{number}": value out of range') from None


def _text(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{value!r} is not a quantity or a percentage")
    return value if isinstance(value, str) else str(value)


def _check_signal(signal: str, path: str) -> None:
    """Port of helpers.go validSignal, raising unsupportedEvictionSignal."""
    if signal not in SIGNAL_TO_RESOURCE:
        raise ThresholdConfigError(f"{path}: unsupported eviction signal {signal}")


def parse_threshold_statement(signal: str, value: object, path: str) -> Threshold | None:
    """Port of helpers.go parseThresholdStatement: a threshold, or None for "0%"/"100%"."""
    _check_signal(signal, path)
    try:
        text = _text(value)
        if text.endswith("%"):
            if text in ("0%", "100%"):
                return None
            percentage = parse_percentage(text)
            if percentage < 0:
                raise ValueError(f"eviction percentage threshold {signal} must be >= 0%: {text}")
            if percentage > 1:
                raise ValueError(f"eviction percentage threshold {signal} must be <= 100%: {text}")
            return Threshold(signal, ThresholdValue(percentage=percentage))
        quantity = parse_quantity(text)
        if quantity <= 0:
            raise ValueError(f"eviction threshold {signal} must be positive: {text}")
    except (ValueError, QuantityError) as exc:
        raise ThresholdConfigError(f"{path}: {exc}") from None
    return Threshold(
        signal,
        ThresholdValue(
            quantity=-(-quantity.numerator // quantity.denominator), fmt=quantity_format(text)
        ),
    )


def parse_grace_period(signal: str, value: object, path: str) -> int:
    """Port of the body of helpers.go parseGracePeriods for one statement (milliseconds)."""
    _check_signal(signal, path)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ThresholdConfigError(f"{path}: {value!r} is not a duration")
    try:
        if isinstance(value, str) and value.startswith("-"):
            if parse_duration_ms(value[1:]) > 0:
                raise ThresholdConfigError(
                    f"{path}: invalid eviction grace period specified: {value}, "
                    "must be a positive value"
                )
            return 0
        return parse_duration_ms(value)
    except DurationError as exc:
        raise ThresholdConfigError(f"{path}: {exc}") from None


def parse_minimum_reclaim(signal: str, value: object, path: str) -> ThresholdValue:
    """Port of the body of helpers.go parseMinimumReclaims for one statement."""
    _check_signal(signal, path)
    try:
        text = _text(value)
        if text.endswith("%"):
            percentage = parse_percentage(text)
            if percentage <= 0:
                raise ValueError(
                    f"eviction percentage minimum reclaim {signal} must be positive: {text}"
                )
            return ThresholdValue(percentage=percentage)
        quantity = parse_quantity(text)
        if quantity < 0:
            raise ValueError(f"negative eviction minimum reclaim specified for {signal}")
    except (ValueError, QuantityError) as exc:
        raise ThresholdConfigError(f"{path}: {exc}") from None
    return ThresholdValue(quantity=-(-quantity.numerator // quantity.denominator))


def add_allocatable_thresholds(thresholds: list[Threshold]) -> list[Threshold]:
    """Port of helpers.go addAllocatableThresholds: every hard memory.available threshold is
    copied as an allocatableMemory.available threshold (same value and minReclaim)."""
    extra = [
        Threshold(ALLOCATABLE_MEMORY_AVAILABLE, t.value, 0, t.min_reclaim)
        for t in thresholds
        if t.signal == MEMORY_AVAILABLE and t.hard
    ]
    return [*thresholds, *extra]


_PARSED: dict[tuple[object, ...], list[Threshold]] = {}  # parse_threshold_config's results


def parse_threshold_config(
    enforce_node_allocatable: Iterable[str],
    eviction_hard: Mapping[str, object] | None,
    eviction_soft: Mapping[str, object] | None,
    eviction_soft_grace_period: Mapping[str, object] | None,
    eviction_minimum_reclaim: Mapping[str, object] | None,
    path_prefix: str = "spec.kubelet",
    default_hard: Mapping[str, str] | None = None,
) -> list[Threshold]:
    """Port of helpers.go ParseThresholdConfig (``_parse_threshold_config``), each distinct
    configuration parsed once: every node of a generated cluster has the same, and the
    thresholds are immutable (a fresh list of them is returned each time). ``default_hard``
    is the release's DefaultEvictionHard (the kubelet's Profile), used when ``eviction_hard``
    is unset; None means 1.18's."""
    enforce = tuple(enforce_node_allocatable)
    maps = (eviction_hard, eviction_soft, eviction_soft_grace_period, eviction_minimum_reclaim)
    default = DEFAULT_EVICTION_HARD if default_hard is None else default_hard
    try:
        key = (enforce, path_prefix, tuple(default.items())) + tuple(
            None if m is None else tuple(m.items()) for m in maps
        )
        hash(key)
    except TypeError:  # a value that cannot be a key (bad input): parse it as it is
        return _parse_threshold_config(enforce, *maps, path_prefix, default)
    parsed = _PARSED.get(key)
    if parsed is None:
        if len(_PARSED) >= 256:
            _PARSED.clear()
        parsed = _PARSED[key] = _parse_threshold_config(enforce, *maps, path_prefix, default)
    return list(parsed)


def _parse_threshold_config(
    enforce_node_allocatable: Iterable[str],
    eviction_hard: Mapping[str, object] | None,
    eviction_soft: Mapping[str, object] | None,
    eviction_soft_grace_period: Mapping[str, object] | None,
    eviction_minimum_reclaim: Mapping[str, object] | None,
    path_prefix: str = "spec.kubelet",
    default_hard: Mapping[str, str] = DEFAULT_EVICTION_HARD,
) -> list[Threshold]:
    """Port of helpers.go ParseThresholdConfig.

    ``eviction_hard=None`` means the field is unset and takes ``default_hard`` (the release's
    DefaultEvictionHard: ``DEFAULT_EVICTION_HARD`` in 1.18); an empty map means no hard
    thresholds. Thresholds come out hard first, then soft, then the
    allocatable copies, each group in the map's order (Go: map iteration order). Errors raise
    ``ThresholdConfigError`` whose message starts with the offending field's path."""
    hard_map = default_hard if eviction_hard is None else eviction_hard
    results: list[Threshold] = []
    for signal, value in hard_map.items():
        t = parse_threshold_statement(signal, value, f"{path_prefix}.evictionHard.{signal}")
        if t is not None:
            results.append(t)
    soft: list[Threshold] = []
    for signal, value in (eviction_soft or {}).items():
        t = parse_threshold_statement(signal, value, f"{path_prefix}.evictionSoft.{signal}")
        if t is not None:
            soft.append(t)
    grace_periods = {
        signal: parse_grace_period(signal, value, f"{path_prefix}.evictionSoftGracePeriod.{signal}")
        for signal, value in (eviction_soft_grace_period or {}).items()
    }
    min_reclaims = {
        signal: parse_minimum_reclaim(
            signal, value, f"{path_prefix}.evictionMinimumReclaim.{signal}"
        )
        for signal, value in (eviction_minimum_reclaim or {}).items()
    }
    for t in soft:
        if t.signal not in grace_periods:
            raise ThresholdConfigError(
                f"{path_prefix}.evictionSoftGracePeriod.{t.signal}: grace period must be "
                f"specified for the soft eviction threshold {t.signal}"
            )
        results.append(Threshold(t.signal, t.value, grace_periods[t.signal]))
    results = [
        Threshold(t.signal, t.value, t.grace_period_ms, min_reclaims.get(t.signal)) for t in results
    ]
    if NODE_ALLOCATABLE_ENFORCEMENT_KEY in enforce_node_allocatable:
        results = add_allocatable_thresholds(results)
    return results


# -- observations -----------------------------------------------------------------------------
def make_signal_observations(stats: NodeStats) -> dict[str, Observation]:
    """Port of helpers.go makeSignalObservations (the summary numbers are derived here:
    available = capacity - used, never below zero for memory, as cAdvisor reports it).

    Without a dedicated image filesystem the runtime's imagefs stats describe nodefs, so the
    imagefs signals observe the nodefs numbers. A zero capacity means "not reported"."""
    t = stats.time_ms
    result: dict[str, Observation] = {}
    if stats.memory_capacity > 0:
        available = max(0, stats.memory_capacity - stats.memory_working_set)
        result[MEMORY_AVAILABLE] = Observation(available, available + stats.memory_working_set, t)
    if stats.allocatable_memory_capacity > 0:
        available = max(0, stats.allocatable_memory_capacity - stats.pods_memory_working_set)
        result[ALLOCATABLE_MEMORY_AVAILABLE] = Observation(
            available, available + stats.pods_memory_working_set, t
        )
    if stats.nodefs_capacity > 0:
        result[NODEFS_AVAILABLE] = Observation(
            stats.nodefs_capacity - stats.nodefs_used, stats.nodefs_capacity, t
        )
    if stats.nodefs_inodes > 0:
        result[NODEFS_INODES_FREE] = Observation(
            stats.nodefs_inodes - stats.nodefs_inodes_used, stats.nodefs_inodes, t
        )
    imagefs = stats.imagefs
    if imagefs is None:
        if NODEFS_AVAILABLE in result:
            result[IMAGEFS_AVAILABLE] = result[NODEFS_AVAILABLE]
        if NODEFS_INODES_FREE in result:
            result[IMAGEFS_INODES_FREE] = result[NODEFS_INODES_FREE]
    else:
        if imagefs.capacity > 0:
            result[IMAGEFS_AVAILABLE] = Observation(
                imagefs.capacity - imagefs.used, imagefs.capacity, t
            )
        if imagefs.inodes > 0:
            result[IMAGEFS_INODES_FREE] = Observation(
                imagefs.inodes - imagefs.inodes_used, imagefs.inodes, t
            )
    if stats.pid_max > 0:
        result[PID_AVAILABLE] = Observation(stats.pid_max - stats.pids_used, stats.pid_max, t)
    return result


# -- thresholds and conditions ----------------------------------------------------------------
def thresholds_met(
    thresholds: Iterable[Threshold],
    observations: Mapping[str, Observation],
    enforce_min_reclaim: bool,
) -> list[Threshold]:
    """Port of helpers.go thresholdsMet: available < value (+ minReclaim when enforced)."""
    results = []
    for threshold in thresholds:
        observed = observations.get(threshold.signal)
        if observed is None:
            continue  # "no observation found for eviction signal"
        quantity = get_threshold_quantity(threshold.value, observed.capacity)
        if enforce_min_reclaim and threshold.min_reclaim is not None:
            quantity += get_threshold_quantity(threshold.min_reclaim, observed.capacity)
        if quantity > observed.available:  # OpLessThan
            results.append(threshold)
    return results


def compare_threshold_value(a: ThresholdValue, b: ThresholdValue) -> bool:
    """Port of helpers.go compareThresholdValue."""
    if a.quantity is not None:
        return b.quantity is not None and a.quantity == b.quantity
    if b.quantity is not None:
        return False
    return a.percentage == b.percentage


def has_threshold(inputs: Iterable[Threshold], item: Threshold) -> bool:
    """Port of helpers.go hasThreshold: same grace period, operator, signal and value
    (minReclaim is not compared)."""
    return any(
        t.grace_period_ms == item.grace_period_ms
        and t.operator == item.operator
        and t.signal == item.signal
        and compare_threshold_value(t.value, item.value)
        for t in inputs
    )


def merge_thresholds(inputs_a: list[Threshold], inputs_b: list[Threshold]) -> list[Threshold]:
    """Port of helpers.go mergeThresholds: ``inputs_a`` plus what of ``inputs_b`` it lacks."""
    results = list(inputs_a)
    for threshold in inputs_b:
        if not has_threshold(results, threshold):
            results.append(threshold)
    return results


def thresholds_first_observed_at(
    thresholds: Iterable[Threshold], last_observed_at: Mapping[Threshold, int], now_ms: int
) -> dict[Threshold, int]:
    """Port of helpers.go thresholdsFirstObservedAt: thresholds still met keep their first
    time, new ones get ``now_ms``, the others are forgotten."""
    return {t: last_observed_at.get(t, now_ms) for t in thresholds}


def thresholds_met_grace_period(
    observed_at: Mapping[Threshold, int], now_ms: int
) -> list[Threshold]:
    """Port of helpers.go thresholdsMetGracePeriod: thresholds met for at least their grace
    period (in ``observed_at`` order; Go: map order)."""
    return [t for t, at in observed_at.items() if now_ms - at >= t.grace_period_ms]


def node_conditions(thresholds: Iterable[Threshold]) -> list[str]:
    """Port of helpers.go nodeConditions: the conditions of the thresholds, de-duplicated."""
    results: list[str] = []
    for threshold in thresholds:
        condition = SIGNAL_TO_NODE_CONDITION.get(threshold.signal)
        if condition is not None and condition not in results:
            results.append(condition)
    return results


def node_conditions_last_observed_at(
    conditions: Iterable[str], last_observed_at: Mapping[str, int], now_ms: int
) -> dict[str, int]:
    """Port of helpers.go nodeConditionsLastObservedAt: current conditions are stamped with
    ``now_ms``, the others keep their old stamp."""
    results = dict.fromkeys(conditions, now_ms)
    for condition, at in last_observed_at.items():
        results.setdefault(condition, at)
    return {c: results[c] for c in sorted(results, key=_condition_rank)}


def node_conditions_observed_since(
    observed_at: Mapping[str, int], period_ms: int, now_ms: int
) -> list[str]:
    """Port of helpers.go nodeConditionsObservedSince: conditions seen less than ``period_ms``
    ago, in ``CONDITION_ORDER`` (Go: map order)."""
    return sorted(
        (c for c, at in observed_at.items() if now_ms - at < period_ms), key=_condition_rank
    )


def _condition_rank(condition: str) -> tuple[int, str]:
    order = (
        CONDITION_ORDER.index(condition) if condition in CONDITION_ORDER else len(CONDITION_ORDER)
    )
    return (order, condition)


def thresholds_updated_stats(
    thresholds: Iterable[Threshold],
    observations: Mapping[str, Observation],
    last_observations: Mapping[str, Observation],
) -> list[Threshold]:
    """Port of helpers.go thresholdsUpdatedStats: keep thresholds whose signal's stats are
    newer than at the last sync (or have no previous observation, or a zero time)."""
    results = []
    for threshold in thresholds:
        observed = observations.get(threshold.signal)
        if observed is None:
            continue
        last = last_observations.get(threshold.signal)
        if last is None or observed.time_ms == 0 or observed.time_ms > last.time_ms:
            results.append(threshold)
    return results


def by_eviction_priority(thresholds: Iterable[Threshold]) -> list[Threshold]:
    """Port of helpers.go byEvictionPriority: memory signals first, thresholds without a
    resource last. Go's comparator is not a strict order and sort.Sort is not stable; we sort
    stably, so equal thresholds keep their order (hard before soft, as configured)."""

    def rank(t: Threshold) -> int:
        if t.signal in MEMORY_SIGNALS:
            return 0
        return 1 if t.signal in SIGNAL_TO_RESOURCE else 2

    return sorted(thresholds, key=rank)


def get_reclaimable_threshold(thresholds: Iterable[Threshold]) -> tuple[Threshold, str] | None:
    """Port of helpers.go getReclaimableThreshold: the first threshold with a resource."""
    for threshold in thresholds:
        resource = SIGNAL_TO_RESOURCE.get(threshold.signal)
        if resource is not None:
            return threshold, resource
    return None


# -- pod usage --------------------------------------------------------------------------------
FS_STATS_ROOT = "root"  # fsStatsRoot: the containers' writable layers
FS_STATS_LOGS = "logs"  # fsStatsLogs: the containers' logs
FS_STATS_LOCAL_VOLUME_SOURCE = "localVolumeSource"  # fsStatsLocalVolumeSource: local volumes
ALL_FS_STATS = (FS_STATS_ROOT, FS_STATS_LOGS, FS_STATS_LOCAL_VOLUME_SOURCE)

LOCAL_EPHEMERAL_KINDS = frozenset({"gitRepo", "configMap", "downwardAPI"})


def is_local_volume(volume: VolumeStats) -> bool:
    """Port of helpers.go localVolumeNames' filter: hostPath, or volumeutils
    IsLocalEphemeralVolume (gitRepo, disk-backed emptyDir, configMap, downwardAPI)."""
    if volume.kind == "hostPath" or volume.kind in LOCAL_EPHEMERAL_KINDS:
        return True
    return volume.kind == "emptyDir" and volume.medium != "Memory"


def get_resource_request(
    pod: PodStats, resource: str, local_storage_capacity_isolation: bool = True
) -> int:
    """Port of v1resource.GetResourceRequestQuantity (1.18): the sum over containers, at
    least the largest init container request; ephemeral-storage is 0 when the
    LocalStorageCapacityIsolation feature is off."""
    if resource == RESOURCE_EPHEMERAL_STORAGE and not local_storage_capacity_isolation:
        return 0
    total = sum(c.requests[resource] for c in pod.containers if resource in c.requests)
    for c in pod.init_containers:
        if resource in c.requests and total < c.requests[resource]:
            total = c.requests[resource]
    return total


def pod_limits(pod: PodStats) -> dict[str, int]:
    """Port of v1resource.PodRequestsAndLimits' limits: summed over containers that set the
    resource, raised to the largest init container limit."""
    limits: dict[str, int] = {}
    for c in pod.containers:
        for name, value in c.limits.items():
            limits[name] = limits.get(name, 0) + value
    for c in pod.init_containers:
        for name, value in c.limits.items():
            if name not in limits or limits[name] < value:
                limits[name] = value
    return limits


def pod_limit_format(pod: PodStats, resource: str) -> str:
    """The Format of pod_limits' sum, as PodRequestsAndLimits builds it: Add keeps the first
    container's; an init container's larger limit replaces it (DeepCopy) with its own."""
    fmt, total = None, 0
    for c in pod.containers:
        if resource in c.limits:
            fmt = fmt or c.limit_formats.get(resource, BINARY_SI)
            total += c.limits[resource]
    for c in pod.init_containers:
        if resource in c.limits and (fmt is None or total < c.limits[resource]):
            fmt, total = c.limit_formats.get(resource, BINARY_SI), c.limits[resource]
    return fmt or BINARY_SI


def memory_usage(pod: PodStats) -> int:
    """Port of helpers.go memoryUsage: the pod's working set (0 without stats)."""
    return pod.memory_working_set or 0


def pod_disk_usage(pod: PodStats, fs_stats_to_measure: Sequence[str]) -> dict[str, int]:
    """Port of helpers.go podDiskUsage: bytes (ephemeral-storage) and inodes used on the
    measured filesystems (containers' rootfs and logs, the pod's local volumes)."""
    disk = inodes = 0
    for c in pod.containers:
        if FS_STATS_ROOT in fs_stats_to_measure:
            disk += c.rootfs_used or 0
            inodes += c.rootfs_inodes_used or 0
        if FS_STATS_LOGS in fs_stats_to_measure:
            disk += c.logs_used or 0
            inodes += c.logs_inodes_used or 0
    if FS_STATS_LOCAL_VOLUME_SOURCE in fs_stats_to_measure:
        for v in pod.volumes:
            if is_local_volume(v):
                disk += v.used or 0
                inodes += v.inodes_used or 0
    return {RESOURCE_EPHEMERAL_STORAGE: disk, RESOURCE_INODES: inodes}


# -- comparators (cmpFunc: negative = p1 is evicted first) ------------------------------------
Cmp = Callable[[PodStats, PodStats], int]
RankFunc = Callable[[Sequence[PodStats]], list[PodStats]]


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def cmp_bool(a: bool, b: bool) -> int:
    """Port of helpers.go cmpBool: true before false."""
    if a == b:
        return 0
    return -1 if not b else 1


def priority(p1: PodStats, p2: PodStats) -> int:
    """Port of helpers.go priority: lower priority first."""
    return _cmp(p1.priority, p2.priority)


def exceed_memory_requests(p1: PodStats, p2: PodStats) -> int:
    """Port of helpers.go exceedMemoryRequests: pods without stats, then pods whose working
    set exceeds their memory request, first."""
    if not p1.stats_found or not p2.stats_found:
        return cmp_bool(not p1.stats_found, not p2.stats_found)
    p1_exceeds = memory_usage(p1) > get_resource_request(p1, RESOURCE_MEMORY)
    p2_exceeds = memory_usage(p2) > get_resource_request(p2, RESOURCE_MEMORY)
    return cmp_bool(p1_exceeds, p2_exceeds)


def memory(p1: PodStats, p2: PodStats) -> int:
    """Port of helpers.go memory: larger working set above request first."""
    if not p1.stats_found or not p2.stats_found:
        return cmp_bool(not p1.stats_found, not p2.stats_found)
    p1_memory = memory_usage(p1) - get_resource_request(p1, RESOURCE_MEMORY)
    p2_memory = memory_usage(p2) - get_resource_request(p2, RESOURCE_MEMORY)
    return _cmp(p2_memory, p1_memory)


def exceed_disk_requests(
    fs_stats_to_measure: Sequence[str],
    disk_resource: str,
    local_storage_capacity_isolation: bool = True,
) -> Cmp:
    """Port of helpers.go exceedDiskRequests: pods without stats, then pods whose usage of
    ``disk_resource`` exceeds their request of it (inodes are never requested), first."""

    def compare(p1: PodStats, p2: PodStats) -> int:
        if not p1.stats_found or not p2.stats_found:
            return cmp_bool(not p1.stats_found, not p2.stats_found)
        p1_disk = pod_disk_usage(p1, fs_stats_to_measure)[disk_resource]
        p2_disk = pod_disk_usage(p2, fs_stats_to_measure)[disk_resource]
        lsci = local_storage_capacity_isolation
        p1_exceeds = p1_disk > get_resource_request(p1, disk_resource, lsci)
        p2_exceeds = p2_disk > get_resource_request(p2, disk_resource, lsci)
        return cmp_bool(p1_exceeds, p2_exceeds)

    return compare


def disk(
    fs_stats_to_measure: Sequence[str],
    disk_resource: str,
    local_storage_capacity_isolation: bool = True,
) -> Cmp:
    """Port of helpers.go disk: larger usage above request first. As in Go, the request
    subtracted is the ephemeral-storage request even when ranking by inodes."""

    def compare(p1: PodStats, p2: PodStats) -> int:
        if not p1.stats_found or not p2.stats_found:
            return cmp_bool(not p1.stats_found, not p2.stats_found)
        lsci = local_storage_capacity_isolation
        p1_disk = pod_disk_usage(p1, fs_stats_to_measure)[disk_resource]
        p2_disk = pod_disk_usage(p2, fs_stats_to_measure)[disk_resource]
        p1_disk -= get_resource_request(p1, RESOURCE_EPHEMERAL_STORAGE, lsci)
        p2_disk -= get_resource_request(p2, RESOURCE_EPHEMERAL_STORAGE, lsci)
        return _cmp(p2_disk, p1_disk)

    return compare


_QOS_ORDER = {QOS_BEST_EFFORT: 0, QOS_BURSTABLE: 1, QOS_GUARANTEED: 2}


def qos_comparator(p1: PodStats, p2: PodStats) -> int:
    """Port of the pre-1.9 helpers.go qosComparator: BestEffort < Burstable < Guaranteed."""
    return _cmp(_QOS_ORDER[pod_qos(p1)], _QOS_ORDER[pod_qos(p2)])


def ordered_by(*cmps: Cmp) -> RankFunc:
    """Port of helpers.go orderedBy(...).Sort: the first comparator that separates two pods
    decides. Go's sort.Sort is not stable, so pods every comparator ties are in no defined
    order there; here they go by pod key, which makes runs reproducible."""

    def compare(p1: PodStats, p2: PodStats) -> int:
        for c in cmps:
            result = c(p1, p2)
            if result:
                return result
        return (p1.key > p2.key) - (p1.key < p2.key)

    def sort(pods: Sequence[PodStats]) -> list[PodStats]:
        return sorted(pods, key=cmp_to_key(compare))

    return sort


def rank_memory_pressure(pods: Sequence[PodStats]) -> list[PodStats]:
    """Port of helpers.go rankMemoryPressure: exceeds requests, then priority, then working
    set above requests."""
    return ordered_by(exceed_memory_requests, priority, memory)(pods)


def rank_pid_pressure(pods: Sequence[PodStats]) -> list[PodStats]:
    """Port of helpers.go rankPIDPressure (1.18): priority only."""
    return ordered_by(priority)(pods)


def process(p1: PodStats, p2: PodStats) -> int:
    """Port of helpers.go process (after 1.18): the pod with more processes first
    (processUsage: 0 without process stats); pods without stats first of all."""
    if not p1.stats_found or not p2.stats_found:
        return cmp_bool(not p1.stats_found, not p2.stats_found)
    return _cmp(p2.process_count or 0, p1.process_count or 0)


def rank_pid_pressure_by_process(pods: Sequence[PodStats]) -> list[PodStats]:
    """Port of helpers.go rankPIDPressure (current): priority, then process count."""
    return ordered_by(priority, process)(pods)


def rank_disk_pressure_func(
    fs_stats_to_measure: Sequence[str],
    disk_resource: str,
    local_storage_capacity_isolation: bool = True,
) -> RankFunc:
    """Port of helpers.go rankDiskPressureFunc: exceeds requests, then priority, then usage
    above requests, measured on ``fs_stats_to_measure``."""
    lsci = local_storage_capacity_isolation
    return ordered_by(
        exceed_disk_requests(fs_stats_to_measure, disk_resource, lsci),
        priority,
        disk(fs_stats_to_measure, disk_resource, lsci),
    )


def disk_fs_stats(signal: str, with_imagefs: bool) -> tuple[str, ...]:
    """The fs stats buildSignalToRankFunc (1.18) measures for a disk signal: with a dedicated
    imagefs, nodefs signals measure logs + local volumes and imagefs signals the rootfs only;
    on a single filesystem every disk signal measures all three."""
    if not with_imagefs:
        return ALL_FS_STATS
    if signal in (NODEFS_AVAILABLE, NODEFS_INODES_FREE):
        return (FS_STATS_LOGS, FS_STATS_LOCAL_VOLUME_SOURCE)
    return (FS_STATS_ROOT,)


def build_signal_to_rank_func(
    with_imagefs: bool,
    ranking_policy: str = RANKING_PRIORITY,
    local_storage_capacity_isolation: bool = True,
    pid_rank_by_process_count: bool = False,
) -> dict[str, RankFunc]:
    """Port of helpers.go buildSignalToRankFunc (1.18). ``ranking_policy="qos"`` selects the
    pre-priority kubelet's orderedBy(qosComparator, memory|disk) (PID: QoS only)."""
    lsci = local_storage_capacity_isolation
    disk_signals = (NODEFS_AVAILABLE, NODEFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE)
    if ranking_policy == RANKING_QOS:
        result: dict[str, RankFunc] = {
            MEMORY_AVAILABLE: ordered_by(qos_comparator, memory),
            ALLOCATABLE_MEMORY_AVAILABLE: ordered_by(qos_comparator, memory),
            PID_AVAILABLE: ordered_by(qos_comparator),
        }
        for signal in disk_signals:
            fs_stats = disk_fs_stats(signal, with_imagefs)
            resource = SIGNAL_TO_RESOURCE[signal]
            result[signal] = ordered_by(qos_comparator, disk(fs_stats, resource, lsci))
        return result
    if ranking_policy != RANKING_PRIORITY:
        raise ValueError(f"unknown eviction ranking policy {ranking_policy!r}")
    result = {
        MEMORY_AVAILABLE: rank_memory_pressure,
        ALLOCATABLE_MEMORY_AVAILABLE: rank_memory_pressure,
        PID_AVAILABLE: (
            rank_pid_pressure_by_process if pid_rank_by_process_count else rank_pid_pressure
        ),
    }
    for signal in disk_signals:
        fs_stats = disk_fs_stats(signal, with_imagefs)
        result[signal] = rank_disk_pressure_func(fs_stats, SIGNAL_TO_RESOURCE[signal], lsci)
    return result


# -- node-level reclaim -----------------------------------------------------------------------
CONTAINER_GC = "ContainerGC"  # containerGC.DeleteAllUnusedContainers
IMAGE_GC = "ImageGC"  # imageGC.DeleteUnusedImages


def build_signal_to_node_reclaim_funcs(with_imagefs: bool) -> dict[str, tuple[str, ...]]:
    """Port of helpers.go buildSignalToNodeReclaimFuncs (1.18): which node-level reclaim runs,
    in order, for a signal. With a dedicated imagefs nodefs pressure has none."""
    gc = (CONTAINER_GC, IMAGE_GC)
    if with_imagefs:
        return {
            NODEFS_AVAILABLE: (),
            NODEFS_INODES_FREE: (),
            IMAGEFS_AVAILABLE: gc,
            IMAGEFS_INODES_FREE: gc,
        }
    return {
        NODEFS_AVAILABLE: gc,
        NODEFS_INODES_FREE: gc,
        IMAGEFS_AVAILABLE: gc,
        IMAGEFS_INODES_FREE: gc,
    }


# -- messages ---------------------------------------------------------------------------------
def _container_usage(resource: str, c: ContainerStats) -> int | None:
    """A container's usage as evictionMessage reads it: working set for memory, rootfs +
    logs for ephemeral-storage, nothing for other resources."""
    if resource == RESOURCE_EPHEMERAL_STORAGE:
        if c.rootfs_used is not None and c.logs_used is not None:
            return c.rootfs_used + c.logs_used
        return None
    if resource == RESOURCE_MEMORY:
        return c.memory_working_set
    return None


def _offending_containers(resource: str, pod: PodStats) -> list[tuple[str, int, str]]:
    """(name, usage, request as Quantity.String prints it) of each container whose usage
    exceeds its request."""
    out = []
    for c in pod.containers:
        request = c.requests.get(resource, 0)
        usage = _container_usage(resource, c)
        if usage is not None and usage > request:
            fmt = c.request_formats.get(resource, BINARY_SI)
            out.append((c.name, usage, format_quantity(request, fmt)))
    return out


def eviction_message(
    resource: str,
    pod: PodStats,
    container_fmt: str = CONTAINER_MESSAGE_FMT,
    threshold_met: tuple[str, str] | None = None,
) -> str:
    """Port of helpers.go evictionMessage, the message part: ``The node was low on
    resource: <r>. ``, then (current releases, ``threshold_met`` from getThresholdMetInfo)
    ``Threshold quantity: <q>, available: <a>. ``, then one sentence per container whose
    usage exceeds its request in the release's ``container_fmt`` (name, usage, request,
    resource). Quantities print as Kubernetes prints them (``1Gi``, ``256Mi``, ``0``)."""
    message = NODE_LOW_MESSAGE_FMT.format(resource)
    if threshold_met is not None:
        message += THRESHOLD_MET_MESSAGE_FMT.format(*threshold_met)
    if not pod.stats_found:
        return message
    for name, usage, request in _offending_containers(resource, pod):
        message += container_fmt.format(name, format_bytes(usage), request, resource)
    return message


def get_threshold_met_info(
    resource: str, thresholds: Sequence[Threshold], observations: dict[str, Observation]
) -> tuple[str, str] | None:
    """Port of helpers.go getThresholdMetInfo: the first of ``thresholds`` (the met ones, in
    eviction priority order) whose signal maps to ``resource`` and has an observation: its
    quantity (GetThresholdQuantity: as configured, or a percentage of the observed capacity
    as a BinarySI quantity) and the observed available amount, as Quantity.String prints
    them (inode and PID counts are DecimalSI)."""
    for t in thresholds:
        if SIGNAL_TO_RESOURCE.get(t.signal) != resource:
            continue
        observed = observations.get(t.signal)
        if observed is None:
            continue
        if t.value.quantity is not None:
            quantity = format_quantity(t.value.quantity, t.value.fmt or BINARY_SI)
        else:
            quantity = format_bytes(get_threshold_quantity(t.value, observed.capacity))
        fmt = DECIMAL_SI if t.signal in _DECIMAL_SIGNALS else BINARY_SI
        return quantity, format_quantity(observed.available, fmt)
    return None


def eviction_annotations(resource: str, pod: PodStats) -> dict[str, str]:
    """Port of helpers.go evictionMessage (1.18), the annotations of the Evicted event."""
    if not pod.stats_found:
        return {}
    offending = _offending_containers(resource, pod)
    return {
        OFFENDING_CONTAINERS_KEY: ",".join(name for name, _, _ in offending),
        OFFENDING_CONTAINERS_USAGE_KEY: ",".join(format_bytes(u) for _, u, _ in offending),
        STARVED_RESOURCE_KEY: resource,
    }


def node_condition_message(conditions: Sequence[str]) -> str:
    """nodeConditionMessageFmt with Go's %v of a []NodeConditionType: ``[A B]``."""
    return NODE_CONDITION_MESSAGE_FMT.format("[" + " ".join(conditions) + "]")
