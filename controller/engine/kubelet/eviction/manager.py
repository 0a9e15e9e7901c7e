"""The kubelet eviction manager's decision logic (pkg/kubelet/eviction/eviction_manager.go,
v1.18): one ``synchronize`` per sync, holding its state between syncs. The kubelet
(kubelet/node_status.py) owns the loop timing, the stats and the pod kills."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .helpers import (
    RANK_FUNCS,
    NodeStats,
    Observation,
    PodStats,
    Threshold,
    by_eviction_priority,
    eviction_message,
    get_reclaimable_threshold,
    make_signal_observations,
    merge_thresholds,
    node_conditions,
    node_conditions_last_observed_at,
    node_conditions_observed_since,
    thresholds_first_observed_at,
    thresholds_met,
    thresholds_met_grace_period,
    thresholds_updated_stats,
)

# buildSignalToNodeReclaimFuncs: which node-level reclaim runs for which signal.
RECLAIM_SHARED_FS = {
    "nodefs.available": ("ContainerGC", "ImageGC"),
    "nodefs.inodesFree": ("ContainerGC", "ImageGC"),
    "imagefs.available": ("ContainerGC", "ImageGC"),
    "imagefs.inodesFree": ("ContainerGC", "ImageGC"),
}
RECLAIM_DEDICATED_IMAGEFS = {
    "imagefs.available": ("ContainerGC", "ImageGC"),
    "imagefs.inodesFree": ("ContainerGC", "ImageGC"),
}


@dataclass(slots=True)
class Eviction:
    pod: str
    signal: str | None
    resource: str
    soft: bool
    grace_period_s: int
    message: str


@dataclass(slots=True)
class SyncResult:
    node_conditions: list[str]
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (reason, type, message)
    reclaimed: list[tuple[str, str, int]] = field(default_factory=list)  # (what, resource, bytes)
    evicted: list[Eviction] = field(default_factory=list)
    refused_critical: list[str] = field(default_factory=list)


class EvictionManager:
    """Port of eviction.managerImpl (state across syncs, ``synchronize``, ``Admit``)."""

    def __init__(
        self,
        thresholds: list[Threshold],
        pressure_transition_period_ms: int,
        max_pod_grace_period_s: int,
        ranking_policy: str = "priority",
        dedicated_imagefs: bool = False,
        local_storage_capacity_isolation: bool = True,
    ) -> None:
        self.thresholds = thresholds
        self.pressure_transition_period_ms = pressure_transition_period_ms
        self.max_pod_grace_period_s = max_pod_grace_period_s
        self.ranking_policy = ranking_policy
        self.dedicated_imagefs = dedicated_imagefs
        self.local_storage_capacity_isolation = local_storage_capacity_isolation
        self.node_conditions: list[str] = []
        self.thresholds_first_observed_at: dict[tuple, int] = {}
        self.node_conditions_last_observed_at: dict[str, int] = {}
        self.thresholds_met: list[Threshold] = []
        self.last_observations: dict[str, Observation] = {}

    @property
    def quiet(self) -> bool:
        """Nothing met, no condition held: a sync on unchanged stats would change nothing."""
        return not self.thresholds_met and not self.node_conditions and not self.thresholds_first_observed_at

    def synchronize(
        self,
        now: int,
        stats: NodeStats,
        pods: list[PodStats],
        reclaim: Callable[[str, str], list[tuple[str, str, int]]],
        fresh_stats: Callable[[], NodeStats],
    ) -> SyncResult:
        """Port of managerImpl.synchronize: at most one pod evicted per sync (except local
        storage violations, all evicted at once)."""
        if not self.thresholds and not self.local_storage_capacity_isolation:
            return SyncResult([])
        observations = make_signal_observations(stats)
        met = thresholds_met(self.thresholds, observations, False)
        if self.thresholds_met:
            not_resolved = thresholds_met(self.thresholds_met, observations, True)
            met = merge_thresholds(met, not_resolved)
        first_observed = thresholds_first_observed_at(met, self.thresholds_first_observed_at, now)
        conditions = node_conditions(met)
        last_observed = node_conditions_last_observed_at(
            conditions, self.node_conditions_last_observed_at, now
        )
        conditions = node_conditions_observed_since(
            last_observed, self.pressure_transition_period_ms, now
        )
        eligible = thresholds_met_grace_period(met, first_observed, now)
        self.node_conditions = conditions
        self.thresholds_first_observed_at = first_observed
        self.node_conditions_last_observed_at = {
            c: t for c, t in last_observed.items() if now - t < self.pressure_transition_period_ms
        }
        self.thresholds_met = eligible
        eligible = thresholds_updated_stats(eligible, observations, self.last_observations)
        self.last_observations = observations
        result = SyncResult(list(conditions))

        if self.local_storage_capacity_isolation:
            local = self.local_storage_eviction(pods, result)
            if local:
                result.evicted = local
                return result
        if not eligible:
            return result
        eligible = by_eviction_priority(eligible)
        found = get_reclaimable_threshold(eligible)
        if found is None:
            return result
        threshold, resource = found
        result.events.append(("EvictionThresholdMet", "Warning", f"Attempting to reclaim {resource}"))
        if self.reclaim_node_level_resources(threshold.signal, resource, reclaim, fresh_stats, result):
            return result
        rank = RANK_FUNCS[self.ranking_policy].get(resource)
        if rank is None or not pods:
            return result
        for pod in rank(pods):
            grace = 0 if threshold.hard else self.max_pod_grace_period_s
            if pod.is_critical:
                result.refused_critical.append(pod.key)  # "cannot evict a critical pod"
                continue
            result.evicted.append(
                Eviction(
                    pod.key,
                    threshold.signal,
                    resource,
                    not threshold.hard,
                    grace,
                    eviction_message(resource, pod),
                )
            )
            return result
        return result

    def reclaim_node_level_resources(
        self,
        signal: str,
        resource: str,
        reclaim: Callable[[str, str], list[tuple[str, str, int]]],
        fresh_stats: Callable[[], NodeStats],
        result: SyncResult,
    ) -> bool:
        """Port of reclaimNodeLevelResources: container GC then image GC, then fresh stats;
        True when no configured threshold is met any more."""
        table = RECLAIM_DEDICATED_IMAGEFS if self.dedicated_imagefs else RECLAIM_SHARED_FS
        funcs = table.get(signal, ())
        if not funcs:
            return False
        for what in funcs:
            result.reclaimed.extend(reclaim(what, resource))
        observations = make_signal_observations(fresh_stats())
        return not thresholds_met(self.thresholds, observations, False)

    def local_storage_eviction(self, pods: list[PodStats], result: SyncResult) -> list[Eviction]:
        """Port of localStorageEviction (pod and container ephemeral-storage limits;
        emptyDir limits are not modelled)."""
        out = []
        for pod in pods:
            message = None
            if pod.ephemeral_limit is not None and pod.disk_usage > pod.ephemeral_limit:
                message = (
                    "Pod ephemeral local storage usage exceeds the total limit of containers "
                    f"{_fmt(pod.ephemeral_limit)}. "
                )
            else:
                for name, requests_limits, usage in pod.containers:
                    limit = requests_limits.get("ephemeral-storage-limit")
                    if limit is not None and usage.get("ephemeral-storage", 0) > limit:
                        message = (
                            f'Container {name} exceeded its local ephemeral storage limit "{_fmt(limit)}". '
                        )
                        break
            if message is None:
                continue
            if pod.is_critical:
                result.refused_critical.append(pod.key)
                continue
            out.append(Eviction(pod.key, None, "ephemeral-storage", False, 0, message))
        return out

    # -- conditions and admission ---------------------------------------------------------
    def is_under_memory_pressure(self) -> bool:
        return "MemoryPressure" in self.node_conditions

    def is_under_disk_pressure(self) -> bool:
        return "DiskPressure" in self.node_conditions

    def is_under_pid_pressure(self) -> bool:
        return "PIDPressure" in self.node_conditions

    def admit(
        self, is_critical: bool, qos_class: str, tolerates_memory_pressure: bool
    ) -> tuple[bool, str, str]:
        """Port of managerImpl.Admit."""
        if not self.node_conditions:
            return True, "", ""
        if is_critical:
            return True, "", ""
        if self.node_conditions == ["MemoryPressure"]:
            if qos_class != "BestEffort":
                return True, "", ""
            if tolerates_memory_pressure:
                return True, "", ""
        conds = " ".join(self.node_conditions)
        return False, "Evicted", f"The node had condition: [{conds}]. "


def _fmt(n: int) -> str:
    from ...quantity import format_bytes

    return format_bytes(n)
