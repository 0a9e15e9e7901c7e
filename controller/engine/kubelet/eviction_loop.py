"""The kubelet side of the eviction manager: its loop timing (eviction_manager.go Start and
waitForPodsCleanup), the stats it feeds ``synchronize``, node-level reclaim (container and
image GC), and carrying out evictions. A node whose manager is quiet and whose usage does
not change skips its syncs: they would change nothing (design.md, "Idle loops")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..clock import SECOND, next_on_grid
from ..core import Handle, Phase
from ..objects import (
    NO_SCHEDULE,
    TAINT_MEMORY_PRESSURE,
    Node,
    Pod,
    Taint,
    tolerations_tolerate_taint,
)
from .eviction.api import (
    ContainerStats,
    FsStats,
    NodeStats,
    Observation,
    PodStats,
    Threshold,
    get_threshold_quantity,
)
from .eviction.helpers import make_signal_observations, parse_threshold_config, thresholds_met
from .eviction.manager import (
    LOCAL_STORAGE_SIGNALS,
    EvictionDecision,
    EvictionManager,
    ManagerConfig,
    SyncResult,
)
from .image_gc import UNLIMITED, free_space
from .resources import (
    declared_pods_usage,
    images_bytes,
    leaked_pods_usage,
    node_own_usage,
    pod_usage,
    pods_usage,
)
from .termination import DEFAULT_EXIT_CODE, container_stop, terminal_phase

if TYPE_CHECKING:
    from .node_status import Kubelet

EVICTION_MONITORING_PERIOD_MS = 10 * SECOND  # evictionMonitoringPeriod
POD_CLEANUP_POLL_MS = 1 * SECOND  # podCleanupPollFreq
POD_CLEANUP_TIMEOUT_MS = 30 * SECOND  # podCleanupTimeout
# v1.PodReasonTerminationByKubelet, the DisruptionTarget reason of the kubelet's kills.
POD_REASON_TERMINATION_BY_KUBELET = "TerminationByKubelet"


def kill_pod_timeout_s(grace_s: int) -> int:
    """killPodNow's wait: the grace it was given plus half, at least 10 s."""
    return max(grace_s + grace_s // 2, 10)


def _any_storage_limit(pods: list[Pod]) -> bool:
    """Whether a container of ``pods`` has an ephemeral-storage limit (a plain loop: the
    generator it stands for, ``any(... for p in pods for c in p.containers)``, resumes a
    frame per container, at each node's every sync)."""
    for p in pods:
        for c in p.containers:
            if "ephemeral-storage" in c.limits:
                return True
    return False


INODE_BYTES = 16 * 1024  # bytes per inode when a node does not declare its inode count


class EvictionLoop:
    """One kubelet's eviction manager loop."""

    # signals() as last built, with the observations and thresholds it was built from
    # (kept under Simulation.shortcuts; not pickled)
    signals_view: tuple[dict[str, Observation], list[Threshold], list[dict[str, object]]] | None
    signals_view = None

    def __init__(self, kubelet: Kubelet, node: Node) -> None:
        self.kubelet = kubelet
        self.sim = kubelet.sim
        cfg = kubelet.cfg
        profile = kubelet.profile
        self.manager = EvictionManager(
            ManagerConfig(
                parse_threshold_config(
                    cfg.enforce_node_allocatable,
                    cfg.eviction_hard,
                    cfg.eviction_soft,
                    cfg.eviction_soft_grace_period,
                    cfg.eviction_minimum_reclaim,
                    default_hard=profile.kubelet_default_eviction_hard,
                ),
                cfg.eviction_pressure_transition_period_ms,
                cfg.eviction_max_pod_grace_period,
                cfg.eviction_ranking_policy,
                dedicated_imagefs=node.resources.imagefs_capacity is not None,
                immediate_grace_period_s=profile.eviction_immediate_grace_period_s,
                threshold_met_message=profile.eviction_message_threshold_met,
                container_message_fmt=profile.eviction_container_message_fmt,
                pid_rank_by_process_count=profile.pid_rank_by_process_count,
                reclaim_enforces_min_reclaim=profile.reclaim_enforces_min_reclaim,
                soft_grace_capped_by_pod=profile.eviction_soft_grace_capped_by_pod,
            )
        )
        self.base_ms = kubelet.offset_ms  # syncs run at base + k * 10 s
        self.observed: dict[str, Observation] = {}  # the last sync's signal observations
        self.handle: Handle | None = None
        self.at: int | None = None
        self.synced_ms: int | None = None  # when the last sync ran (None: none since start)
        self.killing: dict[str, Handle] = {}
        # Kills whose Failed status the status manager holds back until the containers stop
        # (profile.terminal_status_after_containers_stop): pod key -> (message, condition?).
        self.kill_status: dict[str, tuple[str, bool]] = {}
        # Evictions of one sync after the first: killPodNow blocks, so they follow one another.
        self.pending: list[Handle] = []
        self.in_sync = False
        # The sum of the pods' declared usage (pods_usage's shortcut), None when it may
        # have changed.
        self.usage_base: tuple[int, int, int] | None = None

    # -- timing ---------------------------------------------------------------------------
    def start(self, now: int, fresh: bool = False) -> None:
        """Kubelet (re)start: the loop begins at the kubelet's phase. A new kubelet process
        (``fresh``) has a new manager, as eviction.NewManager builds it: no node conditions,
        no observation or first-observed times carried over."""
        if fresh:
            self.manager = EvictionManager(self.manager.config)
            for handle in self._pending():
                handle.cancel()  # the old process's eviction loop is gone
            self._pending().clear()
            # a new process admits its pods anew (no HandlePodAdditions left blocked)
            self.kubelet.__dict__.pop("admission_done_ms", None)
            self.kubelet.drop_admitted_index()
        self.base_ms = self.kubelet.anchor_ms
        self.synced_ms = None  # the new loop syncs at once (Start)
        self.wake(now)

    def wake(self, now: int) -> None:
        """Stats changed: make sure the next sync on the loop's grid runs."""
        self.usage_base = None  # the pods' declared usage may have changed
        if not self.kubelet.alive or self.in_sync:
            return  # a sync in progress schedules its successor itself
        if self.handle is not None and self.at is not None and self.at <= now:
            return  # a sync is due at this instant already (what _schedule would find)
        at = next_on_grid(now, self.base_ms, EVICTION_MONITORING_PERIOD_MS)
        if at == self.synced_ms:
            # This instant's sync has run: managerImpl.Start's loop sleeps monitoringInterval
            # after a sync that evicted nothing before it synchronizes again.
            at += EVICTION_MONITORING_PERIOD_MS
        self._schedule(at)

    def _schedule(self, at: int) -> None:
        if self.at is not None and self.at <= at and self.handle is not None:
            return
        if self.handle is not None:
            self.handle.cancel()
        self.at = at
        self.handle = self.sim.sched.schedule(at, Phase.KUBELET_EVICTION, self._tick)

    def _tick(self) -> None:
        self.handle = None
        self.at = None
        self.sync(self.sim.sched.now_ms)

    # -- one sync -----------------------------------------------------------------------
    def sync(self, now: int) -> None:
        kubelet = self.kubelet
        node = kubelet.node
        if node is None or not kubelet.alive:
            return
        self.synced_ms = now
        pods = self.active_pods()
        stats = self.node_stats(now)
        # Pod stats matter only for ranking (a threshold met now or not yet resolved) and for
        # local-storage limits; otherwise synchronize never reads them, so skip building them.
        observations = make_signal_observations(stats)
        self._observe(node.name, observations)
        met = thresholds_met(self.manager.config.thresholds, observations, False)
        needs_pods = bool(met or self.manager.thresholds_met) or _any_storage_limit(pods)
        self.in_sync = True
        try:
            result = self.manager.synchronize(
                now,
                stats,
                [self.pod_stats(p, now) for p in pods] if needs_pods else [],
                self._reclaim,
                self._fresh_stats,
                observations,
            )
            self._apply(result, now)
        finally:
            self.in_sync = False
        if result.evicted:
            # managerImpl.evictPod blocks in killPodNow until the kill completes (after the
            # grace period) or killPodNow's timeout; only then does Start's waitForPodsCleanup
            # begin, polling every 1 s: the first poll after the last kill completed confirms
            # it (design: "the next sync runs 1 s after that"), or it gives up after 30 s.
            returned, finished = self._evictions_end
            at = min(
                max(returned, finished) + POD_CLEANUP_POLL_MS, returned + POD_CLEANUP_TIMEOUT_MS
            )
            self.base_ms = at
            self._schedule(at)
            return
        self.base_ms = now
        if not self.manager.quiet or self.sim.leaks.node_has_active_leak(node.name, now):
            self._schedule(now + EVICTION_MONITORING_PERIOD_MS)

    def _observe(self, name: str, observations: dict[str, Observation]) -> None:
        """Keep what this sync observed; tell the live view when an available amount moved."""
        before = getattr(self, "observed", {})
        if {k: (o.available, o.capacity) for k, o in before.items()} != {
            k: (o.available, o.capacity) for k, o in observations.items()
        }:
            # setdefault: engines pickled before this field existed still load and run
            self.sim.__dict__.setdefault("observed_nodes", set()).add(name)
        self.observed = observations

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the kept signals view (signals() builds it again when asked)."""
        state = dict(self.__dict__)
        state.pop("signals_view", None)
        return state

    def signals(self) -> list[dict[str, object]]:
        """The eviction signals of the last sync (makeSignalObservations) that have a
        threshold, each with its thresholds resolved to amounts (GetThresholdQuantity against
        the observed capacity): what the page charts for a selected node.

        Kept until the next sync's observations or a new threshold list (issue #27; one of
        ``Simulation.shortcuts``): the live view asks for it at every change of the node, and
        the list is shared by the views made meanwhile, which nothing changes in place."""
        observed = getattr(self, "observed", {})
        thresholds = self.manager.config.thresholds
        kept = self.signals_view
        if (
            kept is not None
            and kept[0] is observed
            and kept[1] is thresholds
            and self.sim.shortcuts
        ):
            return kept[2]
        out = self.build_signals(observed, thresholds)
        self.signals_view = (observed, thresholds, out)
        return out

    @staticmethod
    def build_signals(
        observed: dict[str, Observation], all_thresholds: list[Threshold]
    ) -> list[dict[str, object]]:
        """signals() without the keeping."""
        by_signal: dict[str, list[Threshold]] = {}
        for t in all_thresholds:
            by_signal.setdefault(t.signal, []).append(t)
        out: list[dict[str, object]] = []
        for signal in sorted(observed.keys() & by_signal.keys()):
            o = observed[signal]
            capacity = o.capacity
            out.append(
                {
                    "signal": signal,
                    "available": o.available,
                    "capacity": capacity,
                    "at": o.time_ms / 1000,
                    "thresholds": [
                        {
                            "value": get_threshold_quantity(t.value, capacity),
                            "gracePeriod": t.grace_period_ms / 1000,
                        }
                        for t in by_signal[signal]
                    ],
                }
            )
        return out

    def _apply(self, result: SyncResult, now: int) -> None:
        kubelet = self.kubelet
        name = kubelet.node_name
        cluster = self.sim.cluster
        kubelet.set_pressure(set(result.node_conditions), now)
        for reason, etype, message in result.events:
            kubelet.record_event(now, f"Node/{name}", reason, message, etype)
        for what, resource, amount in result.reclaims:
            self.sim.timeline.emit(
                now, "NodeReclaim", node=name, resource=resource, what=what, amount=amount
            )
        # evictPod after evictPod, each blocking in killPodNow until its kill completes or
        # killPodNow's timeout (max(10 s, 1.5 x the grace it was given)) passes.
        at = finished = now
        for ev in result.evicted:
            pod = cluster.pods.get(ev.pod)
            if pod is None:
                continue
            # How long the kill takes: the containers' answer to SIGTERM within the grace.
            grace_ms, code = container_stop(
                pod.annotations, self.kill_grace_s(pod, ev.grace_period_s) * SECOND
            )
            killing = self.killing.get(pod.key)
            if killing is not None:  # a kill in progress goes on; killPodNow waits for it
                grace_ms = max(killing.time_ms - at, 0)
            timeout_ms = kill_pod_timeout_s(ev.grace_period_s) * SECOND
            if at == now:
                self._evict(ev, grace_ms, timeout_ms, code)
            else:
                self._pending().append(
                    self.sim.sched.schedule(
                        at, Phase.KUBELET_EVICTION, self._evict, ev, grace_ms, timeout_ms, code
                    )
                )
            finished = max(finished, at + grace_ms)
            at += min(grace_ms, timeout_ms)
        self._evictions_end = (at, finished)

    def _pending(self) -> list[Handle]:
        # setdefault: engines pickled before this field existed still load and run
        return self.__dict__.setdefault("pending", [])

    def _kill_status(self) -> dict[str, tuple[str, str, str | None]]:
        return self.__dict__.setdefault("kill_status", {})

    def kill_grace_s(self, pod: Pod, override_s: int | None) -> int:
        """The grace period the kill of an evicted pod gets: the profile's rule (killPodNow
        in 1.18, calculateEffectiveGracePeriod later) from the eviction manager's override,
        the pod's terminationGracePeriodSeconds and the grace of a deletion in progress."""
        terminating = (pod.deletion_grace_s or 0) if pod.deletion_ms is not None else 0
        return self.kubelet.profile.kill_grace_period(
            override_s, pod.termination_grace_period_s, terminating
        )

    def _evict(
        self,
        ev: EvictionDecision,
        grace_ms: int,
        timeout_ms: int,
        exit_code: int = DEFAULT_EXIT_CODE,
    ) -> None:
        """managerImpl.evictPod for one pod: the PodEvicted timeline event and the Warning
        Evicted event, the status (phase Failed, reason Evicted, the message; with
        PodDisruptionConditions a DisruptionTarget condition, reason TerminationByKubelet,
        for node-pressure evictions), and the kill. 1.18 writes the status before the kill;
        later releases hold it until the containers have stopped (mergePodStatus)."""
        now = self.sim.sched.now_ms
        kubelet, cluster = self.kubelet, self.sim.cluster
        pod = cluster.pods.get(ev.pod)
        if pod is None or not kubelet.alive:
            return
        self.sim.timeline.emit(
            now,
            "PodEvicted",
            pod=pod.key,
            node=kubelet.node_name,
            signal=ev.signal,
            resource=ev.resource,
            soft=ev.soft,
            gracePeriodSeconds=ev.grace_period_s,
            message=ev.message,
        )
        self.kubelet.record_event(now, f"Pod/{pod.key}", "Evicted", ev.message, "Warning")
        condition = ev.message if ev.signal not in LOCAL_STORAGE_SIGNALS else None
        self.kill_with_status(
            pod, "Evicted", ev.message, condition, grace_ms, timeout_ms, now, exit_code
        )

    def kill_with_status(
        self,
        pod: Pod,
        reason: str,
        message: str,
        disruption_message: str | None,
        grace_ms: int,
        timeout_ms: int,
        now: int,
        exit_code: int = DEFAULT_EXIT_CODE,
    ) -> None:
        """killPodNow with a status function: phase Failed with ``reason`` and ``message``,
        and (PodDisruptionConditions) DisruptionTarget TerminationByKubelet with
        ``disruption_message`` when given. 1.18's syncPod writes the status, then kills;
        later releases write it when the containers have stopped (mergePodStatus), the
        phase from their ``exit_code`` (Succeeded for 0, its reason dropped: #115331).
        ``grace_ms`` is how long the kill takes (termination.container_stop). The status
        manager sends it (killPodNow -> SetPodStatus), at once or after a heal."""
        if self.kubelet.profile.terminal_status_after_containers_stop:
            self._kill_status()[pod.key] = (reason, message, disruption_message)
        else:
            self._set_failed(pod, now, reason, message, disruption_message)
        if grace_ms > timeout_ms:
            self.sim.sched.schedule(
                now + timeout_ms, Phase.KUBELET_POD, self._kill_timed_out, pod.key
            )
        if pod.key in self.killing:
            return  # already being killed: the pod worker keeps the kill in progress
        self.kill(pod, grace_ms, now, exit_code)

    def _kill_timed_out(self, key: str) -> None:
        """killPodNow gave up waiting for the kill: a Warning ExceededGracePeriod event."""
        if key not in self.killing:
            return
        self.kubelet.record_event(
            self.sim.sched.now_ms,
            f"Pod/{key}",
            "ExceededGracePeriod",
            "Container runtime did not kill the pod within specified grace period.",
            "Warning",
        )

    def kill(self, pod: Pod, grace_ms: int, now: int, exit_code: int = DEFAULT_EXIT_CODE) -> None:
        """killPodFunc: the containers stop after ``grace_ms`` (how long they take to exit,
        at most the grace period), with ``exit_code``; usage is released then."""
        if grace_ms <= 0:
            self._killed(pod.key, exit_code)
            return
        self.killing[pod.key] = self.sim.sched.schedule(
            now + grace_ms, Phase.KUBELET_POD, self._killed, pod.key, exit_code
        )

    def _killed(self, key: str, exit_code: int = DEFAULT_EXIT_CODE) -> None:
        self.killing.pop(key, None)
        now = self.sim.sched.now_ms
        cluster = self.sim.cluster
        pod = cluster.pods.get(key)
        self.sim.leaks.forget_pod(key, now)
        if pod is not None and pod.started:
            pod.started = False
            self.sim.admission_changed(pod)
            self.sim.on_usage_changed(pod.node_name, now)
        held = self._kill_status().pop(key, None)
        if held is not None and pod is not None and self.kubelet.alive:
            self._set_failed(pod, now, *held, exit_code=exit_code)

    def _set_failed(
        self,
        pod: Pod,
        now: int,
        reason: str,
        message: str,
        disruption_message: str | None,
        exit_code: int | None = None,
    ) -> None:
        """The kill's status: Failed with ``reason`` and ``message``; from 1.27, written
        once the containers stopped (``exit_code``), the phase getPhase gives with
        podIsTerminal: Succeeded when they exited 0, and then no reason or message
        (generateAPIPodStatus keeps them only while the phase stays the same)."""
        disruption = (
            (POD_REASON_TERMINATION_BY_KUBELET, disruption_message)
            if disruption_message is not None
            else None
        )
        phase = "Failed"
        if (
            exit_code is not None
            and self.kubelet.profile.terminal_phase_from_exit_codes
            and not pod.is_mirror()  # static pods keep Failed (TODO(#116484) in getPhase)
        ):
            phase = terminal_phase([exit_code] * len(pod.containers))
            if phase == "Succeeded":
                reason = message = ""
        self.kubelet.status.set_pod_status(pod, now, phase, reason, message, False, disruption)

    # -- inputs ---------------------------------------------------------------------------
    def active_pods(self) -> list[Pod]:
        """GetActivePods: started, not terminal (the phase as the kubelet has it)."""
        status = self.kubelet.status
        pods = self.sim.cluster.pods_by_node.get(self.kubelet.node_name, {}).values()
        if not status.pending:  # phase_of is the API's phase for every pod
            return [p for p in pods if p.started and p.phase not in ("Failed", "Succeeded")]
        phase_of = status.phase_of
        return [p for p in pods if p.started and phase_of(p) not in ("Failed", "Succeeded")]

    def node_stats(self, now: int) -> NodeStats:
        node = self.kubelet.node
        assert node is not None
        res = node.resources
        pods_mem, pods_disk, pods_pids = self.pods_usage(now)
        images = images_bytes(node) + res.dead_containers
        nodefs_cap = res.capacity.get("ephemeral-storage", 0)
        nodefs_used = node_own_usage(self.sim, node, "ephemeral-storage", now) + pods_disk
        if res.imagefs_capacity is None:
            nodefs_used += images
        inodes = res.inodes or nodefs_cap // INODE_BYTES
        stats = NodeStats(
            time_ms=now,
            memory_capacity=res.capacity.get("memory", 0),
            memory_working_set=node_own_usage(self.sim, node, "memory", now) + pods_mem,
            # The pods cgroup's limit: capacity minus kube/system-reserved (none here), not
            # minus the hard eviction reservation (getNodeAllocatableInternalAbsolute).
            allocatable_memory_capacity=res.capacity.get("memory", 0),
            pods_memory_working_set=pods_mem,
            nodefs_capacity=nodefs_cap,
            nodefs_used=nodefs_used,
            nodefs_inodes=inodes,
            nodefs_inodes_used=res.inodes_used,
            pid_max=res.pid_max,
            pids_used=node_own_usage(self.sim, node, "pids", now) + pods_pids,
        )
        if res.imagefs_capacity is not None:
            stats.imagefs = FsStats(
                res.imagefs_capacity, images, res.imagefs_capacity // INODE_BYTES, 0
            )
        return stats

    def pods_usage(self, now: int) -> tuple[int, int, int]:
        """resources.pods_usage over the node's pods (the pods cgroup's stats). The shortcut
        (issue #27) keeps the sum of their declared usage from one change of the node's
        usage to the next (every change calls ``wake``, as the loop's own skipping of quiet
        syncs requires) and adds the leaks, which grow with time, at each read."""
        sim = self.sim
        if not sim.shortcuts:
            return pods_usage(sim, sim.cluster.pods_on_node(self.kubelet.node_name), now)
        pods = sim.cluster.pods_by_node.get(self.kubelet.node_name, {}).values()
        base = self.__dict__.get("usage_base")
        if base is None:
            base = self.usage_base = declared_pods_usage(pods)
        if not sim.leaks.by_target:
            return base
        mem, eph, pids = base
        extra = leaked_pods_usage(sim, pods, now)
        return mem + extra[0], eph + extra[1], pids + extra[2]

    def pod_stats(self, pod: Pod, now: int) -> PodStats:
        """The pod's spec resources and usage; the engine tracks usage per pod, so the first
        container carries all of it. Its disk use is on nodefs (node_stats): the container
        rootfs when images share nodefs, its logs when the node has a dedicated imagefs (so
        buildSignalToRankFunc's nodefs ranking, logs + local volumes, sees it)."""
        mem = pod_usage(self.sim, pod, "memory", now)
        eph = pod_usage(self.sim, pod, "ephemeral-storage", now)
        node = self.kubelet.node
        as_logs = node is not None and node.resources.imagefs_capacity is not None
        containers = [
            ContainerStats(
                c.name,
                dict(c.requests),
                dict(c.limits),
                memory_working_set=mem if i == 0 else 0,
                rootfs_used=eph if i == 0 and not as_logs else 0,
                logs_used=eph if i == 0 and as_logs else 0,
                request_formats=c.request_formats,
                limit_formats=c.limit_formats,
            )
            for i, c in enumerate(pod.containers)
        ]
        return PodStats(
            key=pod.key,
            priority=pod.priority,
            containers=containers,
            init_containers=[
                ContainerStats(c.name, dict(c.requests), dict(c.limits))
                for c in pod.init_containers
            ],
            memory_working_set=mem,
            ephemeral_storage_used=eph,
            process_count=pod_usage(self.sim, pod, "pids", now),
            is_critical=pod.is_critical(),
            qos_class=pod.qos_class(),
            termination_grace_period_s=pod.termination_grace_period_s,
        )

    def _fresh_stats(self) -> NodeStats:
        return self.node_stats(self.sim.sched.now_ms)

    # -- node-level reclaim ----------------------------------------------------------------
    def _reclaim(self, what: str, resource: str) -> list[tuple[str, str, int]]:
        node = self.kubelet.node
        assert node is not None
        now = self.sim.sched.now_ms
        if what == "ContainerGC":
            freed = node.resources.dead_containers
            node.resources.dead_containers = 0
        else:
            freed = self.delete_unused_images(now)
        return [(what, resource, freed)] if freed else []

    def delete_unused_images(self, now: int) -> int:
        """realImageGCManager.DeleteUnusedImages: freeSpace(math.MaxInt64, now)."""
        return free_space(self.kubelet, UNLIMITED, now)

    def image_fs_stats(self, now: int) -> FsStats:
        """ImageFsStats: the dedicated imagefs, or nodefs when images share it."""
        stats = self.node_stats(now)
        if stats.imagefs is not None:
            return stats.imagefs
        return FsStats(stats.nodefs_capacity, stats.nodefs_used, 0, 0)

    # -- admission ------------------------------------------------------------------------
    def admit(self, pod: Pod, now: int) -> tuple[bool, str, str]:
        if not self.manager.node_conditions:  # managerImpl.Admit's first test: no pressure
            return True, "", ""
        tolerates = tolerations_tolerate_taint(
            pod.tolerations, Taint(TAINT_MEMORY_PRESSURE, NO_SCHEDULE)
        )
        return self.manager.admit(pod.is_critical(), pod.qos_class(), tolerates)
