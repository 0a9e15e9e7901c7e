"""The kubelet eviction manager: port of pkg/kubelet/eviction/eviction_manager.go (v1.18).

``EvictionManager`` keeps the state managerImpl keeps between syncs. ``synchronize`` is one
pass of the kubelet's eviction loop at ``now_ms``; it returns what the kubelet must do (node
conditions to report, events, node-level reclaim done, pods to kill) instead of doing it. The
caller owns the loop timing (every 10 s, or 1 s after an eviction's kill completed), the stats,
the garbage collectors and the pod kills. The state round-trips through ``to_dict`` /
``from_dict`` (plain JSON types).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ...quantity import BINARY_SI, format_bytes, format_quantity
from .api import (
    DEFAULT_PRESSURE_TRANSITION_PERIOD_MS,
    DISK_PRESSURE,
    MEMORY_PRESSURE,
    PID_PRESSURE,
    QOS_BEST_EFFORT,
    RESOURCE_EPHEMERAL_STORAGE,
    NodeStats,
    Observation,
    PodStats,
    Threshold,
)
from .helpers import (
    CONTAINER_MESSAGE_FMT,
    RANKING_PRIORITY,
    REASON,
    build_signal_to_node_reclaim_funcs,
    build_signal_to_rank_func,
    by_eviction_priority,
    eviction_annotations,
    eviction_message,
    get_reclaimable_threshold,
    get_threshold_met_info,
    make_signal_observations,
    merge_thresholds,
    node_condition_message,
    node_conditions,
    node_conditions_last_observed_at,
    node_conditions_observed_since,
    pod_limit_format,
    pod_limits,
    thresholds_first_observed_at,
    thresholds_met,
    thresholds_met_grace_period,
    thresholds_updated_stats,
)
from .qos import pod_qos

# Labels Go's metrics use for local storage evictions; here the ``signal`` of such evictions.
SIGNAL_EMPTY_DIR_FS_LIMIT = "emptydirfs.limit"
SIGNAL_EPHEMERAL_POD_FS_LIMIT = "ephemeralpodfs.limit"
SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT = "ephemeralcontainerfs.limit"
LOCAL_STORAGE_SIGNALS = (
    SIGNAL_EMPTY_DIR_FS_LIMIT,
    SIGNAL_EPHEMERAL_POD_FS_LIMIT,
    SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT,
)
EMPTY_DIR_MESSAGE_FMT = 'Usage of EmptyDir volume "{}" exceeds the limit "{}". '
POD_EPHEMERAL_STORAGE_MESSAGE_FMT = (
    "Pod ephemeral local storage usage exceeds the total limit of containers {}. "
)
CONTAINER_EPHEMERAL_STORAGE_MESSAGE_FMT = (
    'Container {} exceeded its local ephemeral storage limit "{}". '
)
EVENT_THRESHOLD_MET = "EvictionThresholdMet"


class ReclaimResult(NamedTuple):
    """What one node-level reclaim function freed: ``what`` is ``ContainerGC`` or ``ImageGC``."""

    what: str
    resource: str
    amount: int


class NodeEvent(NamedTuple):
    """An event the manager records on the node: (reason, type, message)."""

    reason: str
    type: str
    message: str


@dataclass(frozen=True, slots=True)
class EvictionDecision:
    """A pod the manager evicts: the kubelet sets it Failed/Evicted with ``message``, records
    a Warning ``Evicted`` event with ``annotations`` and kills it with ``grace_period_s`` as
    gracePeriodOverride (hard thresholds and local storage immediate_grace_period_s, soft
    ``soft_grace_period_override``).
    ``signal`` is the threshold's signal, or ``emptydirfs.limit`` / ``ephemeralpodfs.limit`` /
    ``ephemeralcontainerfs.limit`` for local storage evictions."""

    pod: str
    signal: str
    resource: str
    soft: bool
    grace_period_s: int
    message: str
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SyncResult:
    """The outcome of one ``synchronize``. ``node_conditions`` are the pressure conditions to
    report (in MemoryPressure, DiskPressure, PIDPressure order); ``evicted`` holds at most one
    pod for node pressure, possibly several for local storage violations;
    ``rejected_critical`` lists critical pods the manager refused to evict."""

    node_conditions: list[str]
    events: list[NodeEvent] = field(default_factory=list)
    reclaims: list[ReclaimResult] = field(default_factory=list)
    evicted: list[EvictionDecision] = field(default_factory=list)
    rejected_critical: list[str] = field(default_factory=list)


NodeReclaimFunc = Callable[[str, str], Iterable[ReclaimResult | tuple[str, str, int]]]
"""``reclaim(what, resource)``: run the named garbage collection (``ContainerGC`` or
``ImageGC``) now and return what it freed."""
FreshStatsFunc = Callable[[], NodeStats]
"""``fresh_stats()``: node stats after reclaim (summaryProvider.Get with updated stats)."""


@dataclass(slots=True)
class ManagerConfig:
    """Port of eviction.Config plus what NewManager and the first sync decide: the image
    filesystem layout (HasDedicatedImageFs) and the LocalStorageCapacityIsolation gate.
    ``ranking_policy`` is ``priority`` (1.18) or ``qos`` (the pre-priority kubelet).

    The release's rules (versions.Profile, the 1.18 values by default):
    ``immediate_grace_period_s`` the gracePeriodOverride of hard and local-storage evictions
    (1.18 0, immediateEvictionGracePeriodSeconds 1 later); ``threshold_met_message`` and
    ``container_message_fmt`` the wording of evictionMessage; ``pid_rank_by_process_count``
    rankPIDPressure's second key; ``reclaim_enforces_min_reclaim`` whether node-level reclaim
    must also free the minimum reclaim; ``soft_grace_capped_by_pod`` whether a soft eviction's
    override is min(MaxPodGracePeriodSeconds, the pod's terminationGracePeriodSeconds)
    (#122890, 1.32) rather than MaxPodGracePeriodSeconds itself."""

    thresholds: list[Threshold]
    pressure_transition_period_ms: int = DEFAULT_PRESSURE_TRANSITION_PERIOD_MS
    max_pod_grace_period_s: int = 0
    ranking_policy: str = RANKING_PRIORITY
    dedicated_imagefs: bool = False
    local_storage_capacity_isolation: bool = True
    immediate_grace_period_s: int = 0
    threshold_met_message: bool = False
    container_message_fmt: str = CONTAINER_MESSAGE_FMT
    pid_rank_by_process_count: bool = False
    reclaim_enforces_min_reclaim: bool = False
    soft_grace_capped_by_pod: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the configuration."""
        return {
            "thresholds": [t.to_dict() for t in self.thresholds],
            "pressureTransitionPeriodMs": self.pressure_transition_period_ms,
            "maxPodGracePeriodSeconds": self.max_pod_grace_period_s,
            "rankingPolicy": self.ranking_policy,
            "dedicatedImageFs": self.dedicated_imagefs,
            "localStorageCapacityIsolation": self.local_storage_capacity_isolation,
            "immediateGracePeriodSeconds": self.immediate_grace_period_s,
            "thresholdMetMessage": self.threshold_met_message,
            "containerMessageFmt": self.container_message_fmt,
            "pidRankByProcessCount": self.pid_rank_by_process_count,
            "reclaimEnforcesMinReclaim": self.reclaim_enforces_min_reclaim,
            "softGraceCappedByPod": self.soft_grace_capped_by_pod,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ManagerConfig:
        """Inverse of ``to_dict``."""
        return cls(
            thresholds=[Threshold.from_dict(t) for t in d["thresholds"]],
            pressure_transition_period_ms=int(d["pressureTransitionPeriodMs"]),
            max_pod_grace_period_s=int(d["maxPodGracePeriodSeconds"]),
            ranking_policy=d["rankingPolicy"],
            dedicated_imagefs=bool(d["dedicatedImageFs"]),
            local_storage_capacity_isolation=bool(d["localStorageCapacityIsolation"]),
            immediate_grace_period_s=int(d.get("immediateGracePeriodSeconds", 0)),
            threshold_met_message=bool(d.get("thresholdMetMessage", False)),
            container_message_fmt=str(d.get("containerMessageFmt", CONTAINER_MESSAGE_FMT)),
            pid_rank_by_process_count=bool(d.get("pidRankByProcessCount", False)),
            reclaim_enforces_min_reclaim=bool(d.get("reclaimEnforcesMinReclaim", False)),
            soft_grace_capped_by_pod=bool(d.get("softGraceCappedByPod", False)),
        )


class EvictionManager:
    """Port of eviction.managerImpl: ``synchronize``, ``Admit`` and the pressure queries."""

    __slots__ = (
        "config",
        "node_conditions",
        "node_conditions_last_observed_at",
        "thresholds_first_observed_at",
        "thresholds_met",
        "last_observations",
    )

    def __init__(self, config: ManagerConfig) -> None:
        self.config = config
        # node conditions are the set of conditions present
        self.node_conditions: list[str] = []
        # when a node condition was last observed based on a threshold being met
        self.node_conditions_last_observed_at: dict[str, int] = {}
        # when a threshold was first observed
        self.thresholds_first_observed_at: dict[Threshold, int] = {}
        # thresholds met (including grace period) but not yet resolved
        self.thresholds_met: list[Threshold] = []
        # observations of the last sync
        self.last_observations: dict[str, Observation] = {}

    # -- the sync ---------------------------------------------------------------------------
    def synchronize(
        self,
        now_ms: int,
        node_stats: NodeStats,
        pods: Sequence[PodStats],
        reclaim: NodeReclaimFunc,
        fresh_stats: FreshStatsFunc,
        observations: dict[str, Observation] | None = None,
    ) -> SyncResult:
        """Port of managerImpl.synchronize (1.18): update thresholds and conditions, evict
        local storage violators, else reclaim node-level resources or evict at most one pod
        for the most urgent threshold. ``pods`` are the active pods (GetActivePods).
        ``observations``: makeSignalObservations of ``node_stats``, when the caller has made
        them already (nothing changes them)."""
        config = self.config
        if not config.thresholds and not config.local_storage_capacity_isolation:
            return SyncResult(list(self.node_conditions))
        if observations is None:
            observations = make_signal_observations(node_stats)
        # the thresholds met independent of grace period
        thresholds = thresholds_met(config.thresholds, observations, False)
        # the thresholds previously met that have not yet satisfied their min-reclaim
        if self.thresholds_met:
            not_yet_resolved = thresholds_met(self.thresholds_met, observations, True)
            thresholds = merge_thresholds(thresholds, not_yet_resolved)
        first_observed_at = thresholds_first_observed_at(
            thresholds, self.thresholds_first_observed_at, now_ms
        )
        conditions = node_conditions(thresholds)
        last_observed_at = node_conditions_last_observed_at(
            conditions, self.node_conditions_last_observed_at, now_ms
        )
        # node conditions report true while observed within the transition period
        conditions = node_conditions_observed_since(
            last_observed_at, config.pressure_transition_period_ms, now_ms
        )
        # the thresholds whose grace periods are all met drive eviction
        thresholds = thresholds_met_grace_period(first_observed_at, now_ms)
        self.node_conditions = conditions
        self.thresholds_first_observed_at = first_observed_at
        self.node_conditions_last_observed_at = last_observed_at
        self.thresholds_met = thresholds
        # only thresholds whose stats were updated since the last sync
        thresholds = thresholds_updated_stats(thresholds, observations, self.last_observations)
        self.last_observations = observations

        result = SyncResult(list(conditions))
        if config.local_storage_capacity_isolation:
            evicted = self.local_storage_eviction(pods, result)
            if evicted:
                result.evicted = evicted
                return result
        if not thresholds:
            return result  # no resources are starved
        thresholds = by_eviction_priority(thresholds)
        found = get_reclaimable_threshold(thresholds)
        if found is None:
            return result
        threshold, resource = found
        result.events.append(
            NodeEvent(EVENT_THRESHOLD_MET, "Warning", f"Attempting to reclaim {resource}")
        )
        if self.reclaim_node_level_resources(
            threshold.signal, resource, reclaim, fresh_stats, result
        ):
            return result  # pressure reduced without evicting pods
        rank = build_signal_to_rank_func(
            config.dedicated_imagefs,
            config.ranking_policy,
            config.local_storage_capacity_isolation,
            config.pid_rank_by_process_count,
        ).get(threshold.signal)
        if rank is None or not pods:
            return result
        threshold_met = (
            get_threshold_met_info(resource, thresholds, observations)
            if config.threshold_met_message
            else None
        )
        for pod in rank(pods):  # we kill at most a single pod during each eviction interval
            if threshold.hard:
                grace_period_s = config.immediate_grace_period_s
            else:
                grace_period_s = self.soft_grace_period_override(pod)
            decision = EvictionDecision(
                pod=pod.key,
                signal=threshold.signal,
                resource=resource,
                soft=not threshold.hard,
                grace_period_s=grace_period_s,
                message=eviction_message(
                    resource, pod, config.container_message_fmt, threshold_met
                ),
                annotations=eviction_annotations(resource, pod),
            )
            if self.evict_pod(pod, decision, result):
                result.evicted.append(decision)
                return result
        return result  # unable to evict any pods from the node

    def soft_grace_period_override(self, pod: PodStats) -> int:
        """The gracePeriodOverride of a soft-threshold eviction (managerImpl.synchronize):
        MaxPodGracePeriodSeconds; from 1.32 (#122890, AllowOverwriteTerminationGracePeriodSeconds
        off by default, locked off in 1.35) no more than the pod's own
        terminationGracePeriodSeconds."""
        grace = self.config.max_pod_grace_period_s
        if self.config.soft_grace_capped_by_pod:
            grace = min(grace, pod.termination_grace_period_s)
        return grace

    def evict_pod(self, pod: PodStats, decision: EvictionDecision, result: SyncResult) -> bool:
        """Port of managerImpl.evictPod: refuse critical pods (static, mirror, system
        priority); otherwise the eviction goes ahead (the caller kills the pod)."""
        if pod.is_critical:
            if pod.key not in result.rejected_critical:
                result.rejected_critical.append(pod.key)  # "cannot evict a critical pod"
            return False
        return True

    def reclaim_node_level_resources(
        self,
        signal: str,
        resource: str,
        reclaim: NodeReclaimFunc,
        fresh_stats: FreshStatsFunc,
        result: SyncResult,
    ) -> bool:
        """Port of managerImpl.reclaimNodeLevelResources: run the signal's reclaim functions,
        then True when, on fresh stats, no configured threshold is met: plain ``available <
        value`` in 1.18, ``available < value + minReclaim`` in later releases
        (``config.reclaim_enforces_min_reclaim``)."""
        funcs = build_signal_to_node_reclaim_funcs(self.config.dedicated_imagefs).get(signal, ())
        for what in funcs:
            for freed in reclaim(what, resource):
                result.reclaims.append(ReclaimResult(*freed))
        if not funcs:
            return False
        observations = make_signal_observations(fresh_stats())
        enforce = self.config.reclaim_enforces_min_reclaim
        return not thresholds_met(self.config.thresholds, observations, enforce)

    # -- local ephemeral storage --------------------------------------------------------------
    def local_storage_eviction(
        self, pods: Sequence[PodStats], result: SyncResult
    ) -> list[EvictionDecision]:
        """Port of managerImpl.localStorageEviction (1.18): for each pod with stats, the first
        of emptyDir sizeLimit, pod ephemeral limit, container ephemeral limit it violates
        evicts it with the immediate grace (0 in 1.18, 1 s later). Every violating pod of the
        sync is evicted."""
        evicted = []
        for pod in pods:
            if not pod.stats_found:
                continue
            for check in (
                self.empty_dir_limit_eviction,
                self.pod_ephemeral_storage_limit_eviction,
                self.container_ephemeral_storage_limit_eviction,
            ):
                decision = check(pod)
                if decision is None:
                    continue
                if self.evict_pod(pod, decision, result):
                    evicted.append(decision)
                    break
        return evicted

    def _local_storage_decision(self, pod: PodStats, signal: str, message: str) -> EvictionDecision:
        grace = self.config.immediate_grace_period_s
        return EvictionDecision(pod.key, signal, RESOURCE_EPHEMERAL_STORAGE, False, grace, message)

    def empty_dir_limit_eviction(self, pod: PodStats) -> EvictionDecision | None:
        """Port of managerImpl.emptyDirLimitEviction: an emptyDir used beyond its sizeLimit."""
        for volume in pod.volumes:
            if volume.kind != "emptyDir":
                continue
            size, used = volume.size_limit, volume.used
            if used is not None and size is not None and size > 0 and used > size:
                message = EMPTY_DIR_MESSAGE_FMT.format(volume.name, format_bytes(size))
                return self._local_storage_decision(pod, SIGNAL_EMPTY_DIR_FS_LIMIT, message)
        return None

    def pod_ephemeral_storage_limit_eviction(self, pod: PodStats) -> EvictionDecision | None:
        """Port of managerImpl.podEphemeralStorageLimitEviction: the pod's ephemeral usage
        above the sum of its containers' ephemeral-storage limits (only containers that set
        one count, as in PodRequestsAndLimits)."""
        limits = pod_limits(pod)
        if RESOURCE_EPHEMERAL_STORAGE not in limits:
            return None
        limit = limits[RESOURCE_EPHEMERAL_STORAGE]
        if (pod.ephemeral_storage_used or 0) > limit:
            shown = format_quantity(limit, pod_limit_format(pod, RESOURCE_EPHEMERAL_STORAGE))
            message = POD_EPHEMERAL_STORAGE_MESSAGE_FMT.format(shown)
            return self._local_storage_decision(pod, SIGNAL_EPHEMERAL_POD_FS_LIMIT, message)
        return None

    def container_ephemeral_storage_limit_eviction(self, pod: PodStats) -> EvictionDecision | None:
        """Port of managerImpl.containerEphemeralStorageLimitEviction: a container's logs (plus
        its rootfs unless images live on a dedicated imagefs) above its nonzero limit."""
        for c in pod.containers:
            limit = c.limits.get(RESOURCE_EPHEMERAL_STORAGE, 0)
            if limit == 0:
                continue
            used = c.logs_used or 0
            if not self.config.dedicated_imagefs:
                used += c.rootfs_used or 0
            if limit < used:
                fmt = c.limit_formats.get(RESOURCE_EPHEMERAL_STORAGE, BINARY_SI)
                message = CONTAINER_EPHEMERAL_STORAGE_MESSAGE_FMT.format(
                    c.name, format_quantity(limit, fmt)
                )
                return self._local_storage_decision(
                    pod, SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT, message
                )
        return None

    # -- conditions and admission -----------------------------------------------------------
    def is_under_memory_pressure(self) -> bool:
        """Port of managerImpl.IsUnderMemoryPressure."""
        return MEMORY_PRESSURE in self.node_conditions

    def is_under_disk_pressure(self) -> bool:
        """Port of managerImpl.IsUnderDiskPressure."""
        return DISK_PRESSURE in self.node_conditions

    def is_under_pid_pressure(self) -> bool:
        """Port of managerImpl.IsUnderPIDPressure."""
        return PID_PRESSURE in self.node_conditions

    def admit(
        self, pod_is_critical: bool, pod_qos: str, tolerates_memory_pressure: bool
    ) -> tuple[bool, str, str]:
        """Port of managerImpl.Admit: (admit, reason, message). Under pressure only critical
        pods are admitted, except that with MemoryPressure alone non-BestEffort pods and
        BestEffort pods tolerating ``node.kubernetes.io/memory-pressure:NoSchedule`` are."""
        if not self.node_conditions:
            return True, "", ""
        if pod_is_critical:
            return True, "", ""
        if self.node_conditions == [MEMORY_PRESSURE]:
            if pod_qos != QOS_BEST_EFFORT:
                return True, "", ""
            if tolerates_memory_pressure:
                return True, "", ""
        return False, REASON, node_condition_message(self.node_conditions)

    def admit_pod(self, pod: PodStats) -> tuple[bool, str, str]:
        """``admit`` for a pod described by its PodStats."""
        return self.admit(pod.is_critical, pod_qos(pod), pod.tolerates_memory_pressure)

    @property
    def quiet(self) -> bool:
        """Nothing met, nothing within a grace period, no condition held: a sync on stats
        below every threshold would change nothing but timestamps."""
        return not (
            self.thresholds_met or self.thresholds_first_observed_at or self.node_conditions
        )

    # -- persistence ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The configuration and the state between syncs, as plain JSON types."""
        return {
            "config": self.config.to_dict(),
            "nodeConditions": list(self.node_conditions),
            "nodeConditionsLastObservedAt": dict(self.node_conditions_last_observed_at),
            "thresholdsFirstObservedAt": [
                [t.to_dict(), at] for t, at in self.thresholds_first_observed_at.items()
            ],
            "thresholdsMet": [t.to_dict() for t in self.thresholds_met],
            "lastObservations": {
                signal: [o.available, o.capacity, o.time_ms]
                for signal, o in self.last_observations.items()
            },
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvictionManager:
        """Inverse of ``to_dict``."""
        manager = cls(ManagerConfig.from_dict(d["config"]))
        manager.node_conditions = list(d["nodeConditions"])
        manager.node_conditions_last_observed_at = {
            c: int(at) for c, at in d["nodeConditionsLastObservedAt"].items()
        }
        manager.thresholds_first_observed_at = {
            Threshold.from_dict(t): int(at) for t, at in d["thresholdsFirstObservedAt"]
        }
        manager.thresholds_met = [Threshold.from_dict(t) for t in d["thresholdsMet"]]
        manager.last_observations = {
            signal: Observation(int(a), int(c), int(t))
            for signal, (a, c, t) in d["lastObservations"].items()
        }
        return manager
