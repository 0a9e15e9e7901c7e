"""The kubelet's node shutdown manager (pkg/kubelet/nodeshutdown, GracefulNodeShutdown, beta
and on by default since 1.21; read from the 1.34 source: nodeshutdown_manager.go and
nodeshutdown_manager_linux.go).

With a shutdown grace period the kubelet holds a systemd-logind "delay" inhibitor lock. When
logind announces PrepareForShutdown(true) (the ``ShutdownNode`` fault) the kubelet records a
``Shutdown`` node event, reports Ready=False ("node is shutting down") at once, rejects new
pods, and kills its pods group by group, lowest priority first: each group's pods get
min(their terminationGracePeriodSeconds, the group's period), and the next group starts when
all of the group's kills are done or the group's period ends, whichever is first. Then it
releases the lock and the machine powers off. Without a grace period (the default) the
manager is a stub: nothing delays the shutdown and the machine powers off at once.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from ..clock import SECOND
from ..core import Handle, Phase
from ..objects import SYSTEM_CRITICAL_PRIORITY, Pod
from .termination import DEFAULT_EXIT_CODE, container_stop, terminal_phase

if TYPE_CHECKING:
    from ..config import KubeletConfig
    from .node_status import Kubelet

# nodeshutdown_manager.go constants.
NODE_SHUTDOWN_REASON = "Terminated"
NODE_SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."
NODE_SHUTDOWN_NOT_ADMITTED_REASON = "NodeShutdown"
NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = "Pod was rejected as the node is shutting down."
SHUTTING_DOWN_ERROR = "node is shutting down"  # managerImpl.ShutdownStatus
# v1.PodReasonTerminationByKubelet, the DisruptionTarget reason of the kubelet's kills.
POD_REASON_TERMINATION_BY_KUBELET = "TerminationByKubelet"
# kubeletevents.NodeShutdown and the message managerImpl.start records.
EVENT_REASON = "Shutdown"
EVENT_MESSAGE = "Shutdown manager detected shutdown event"
# scheduling.DefaultPriorityWhenNoDefaultClassExists
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0

# NodePoweredOff reasons (playground timeline): the manager finished, or there was none.
POWERED_OFF_AFTER_GRACE = "GracefulShutdownDone"
POWERED_OFF_AT_ONCE = "ShutdownNotDelayed"

Group = tuple[int, int]  # (priority, shutdownGracePeriodSeconds)


def migrate_config(grace_ms: int, critical_ms: int) -> list[Group]:
    """Port of migrateConfig: shutdownGracePeriod and shutdownGracePeriodCriticalPods as two
    priority groups, ordinary pods (priority 0 and up) with grace - critical seconds, then
    system-critical pods (priority >= 2000000000) with critical seconds; none when the grace
    period is 0 (the manager is then a stub)."""
    if grace_ms == 0:
        return []
    default_ms = grace_ms - critical_ms
    if default_ms < 0:
        return []
    critical_ms = grace_ms - default_ms
    return [
        (DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, default_ms // SECOND),
        (SYSTEM_CRITICAL_PRIORITY, critical_ms // SECOND),
    ]


def shutdown_groups(cfg: KubeletConfig) -> list[Group]:
    """Port of newPodManager: shutdownGracePeriodByPodPriority when given
    (GracefulNodeShutdownBasedOnPodPriority is on by default since 1.24), otherwise the two
    migrated groups; sorted by priority, low to high. Empty: the manager is a stub."""
    groups = list(cfg.shutdown_grace_period_by_pod_priority) or migrate_config(
        cfg.shutdown_grace_period_ms, cfg.shutdown_grace_period_critical_pods_ms
    )
    return sorted(groups, key=lambda g: g[0])


def group_by_priority(groups: list[Group], pods: list[Pod]) -> list[list[Pod]]:
    """Port of groupByPriority: a pod goes to the group with the highest priority not above
    its own; pods below the lowest group go to the lowest, above the highest to the highest."""
    priorities = [g[0] for g in groups]
    out: list[list[Pod]] = [[] for _ in groups]
    for pod in pods:
        index = bisect_left(priorities, pod.priority)
        if index == len(groups):
            index = len(groups) - 1
        elif index > 0 and priorities[index] > pod.priority:
            index -= 1
        out[index].append(pod)
    return out


def kill_grace_override_s(pod: Pod, group_seconds: int) -> int:
    """killPods' gracePeriodOverride: the group's period, or the pod's
    terminationGracePeriodSeconds if shorter."""
    return min(pod.termination_grace_period_s, group_seconds)


class ShutdownManager:
    """One kubelet's managerImpl (or its managerStub when ``active`` is False)."""

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet
        self.sim = kubelet.sim
        self.shutting_down = False  # nodeShuttingDownNow
        self.queue: list[tuple[int, list[str]]] = []  # groups still to kill: (seconds, pods)
        self.outstanding: dict[str, Handle] = {}  # kills of the current group
        self.timer: Handle | None = None  # the current group's period

    @property
    def active(self) -> bool:
        """NewManager returns the real manager: the release has the feature and the
        configuration asks for a grace period."""
        return self.kubelet.profile.graceful_node_shutdown and bool(
            shutdown_groups(self.kubelet.cfg)
        )

    def shutdown_status(self) -> str | None:
        """Port of managerImpl.ShutdownStatus: the error the Ready condition reports."""
        return SHUTTING_DOWN_ERROR if self.shutting_down else None

    def admit(self) -> tuple[bool, str, str]:
        """Port of managerImpl.Admit: every pod is rejected while the node shuts down."""
        if self.shutting_down:
            return False, NODE_SHUTDOWN_NOT_ADMITTED_REASON, NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE
        return True, "", ""

    # -- the shutdown -------------------------------------------------------------------------
    def prepare_for_shutdown(self, now: int) -> None:
        """logind sends PrepareForShutdown(true). Port of the event loop in managerImpl.start:
        record the event, set nodeShuttingDownNow, syncNodeStatus at once, then
        processShutdownEvent. A stub (or a node whose kubelet is not running) holds no
        inhibitor lock: the machine powers off at once."""
        kubelet = self.kubelet
        if self.shutting_down:
            return
        if not self.active or not kubelet.alive:
            self._power_off(now, POWERED_OFF_AT_ONCE)
            return
        if kubelet.reaches_api:
            kubelet.record_event(now, f"Node/{kubelet.node_name}", EVENT_REASON, EVENT_MESSAGE)
        self.shutting_down = True
        kubelet.sync_node_status(now)
        active = self._active_pods()
        groups = shutdown_groups(kubelet.cfg)
        self.queue = [
            (seconds, [p.key for p in pods])
            for (_prio, seconds), pods in zip(
                groups, group_by_priority(groups, active), strict=True
            )
            if pods  # "If there are no pods in a particular range, do not wait"
        ]
        self._next_group(now)

    def _active_pods(self) -> list[Pod]:
        """GetActivePods: admitted, not terminal (terminating ones included)."""
        return [
            p
            for p in self.sim.cluster.pods_on_node(self.kubelet.node_name)
            if p.started and p.phase not in ("Failed", "Succeeded")
        ]

    def _next_group(self, now: int) -> None:
        """Port of podManager.killPods, one group at a time; after the last group the inhibitor
        lock is released and the machine powers off."""
        while self.queue:
            seconds, keys = self.queue.pop(0)
            for key in keys:
                pod = self.sim.cluster.pods.get(key)
                if pod is None:
                    continue
                # killPodFunc -> killPodNow: the pod worker turns the override into the kill's
                # grace (calculateEffectiveGracePeriod: at least 1 s; an override of 0 is the
                # pod's own grace before 1.31, 1 s from #124063).
                # The kill ends when the containers answer SIGTERM (termination.py).
                override = kill_grace_override_s(pod, seconds)
                kill_ms, code = container_stop(
                    pod.annotations, self.kubelet.eviction.kill_grace_s(pod, override) * SECOND
                )
                self.outstanding[key] = self.sim.sched.schedule(
                    now + kill_ms, Phase.KUBELET_POD, self._killed, key, code
                )
            if not self.outstanding:
                continue
            self.timer = self.sim.sched.schedule(
                now + seconds * SECOND, Phase.KUBELET_POD, self._group_timeout
            )
            return
        self._power_off(now, POWERED_OFF_AFTER_GRACE)

    def _killed(self, key: str, exit_code: int = DEFAULT_EXIT_CODE) -> None:
        """killPodFunc returns: the containers stopped. The status manager then writes the
        status the kill set (phase Failed, reason Terminated, DisruptionTarget): it holds a
        terminal phase back until the containers are stopped (mergePodStatus with
        ShouldDelayTransitioningPodToTerminal), so the API sees the pod Running and Ready
        during its grace period and Failed only now."""
        now = self.sim.sched.now_ms
        kubelet = self.kubelet
        if not kubelet.runtime_ready:
            return  # the kill cannot finish; the group's period runs out instead
        self.outstanding.pop(key, None)
        pod = self.sim.cluster.pods.get(key)
        if pod is not None:
            self._stopped(pod, now, exit_code)
        if not self.outstanding and self.timer is not None:
            self.timer.cancel()  # wg.Wait() done before the timer: the next group starts now
            self.timer = None
            self._next_group(now)

    def _stopped(self, pod: Pod, now: int, exit_code: int) -> None:
        """The status the kill set, once the containers stopped: Failed, reason Terminated,
        DisruptionTarget; from 1.27 the phase getPhase gives with podIsTerminal, Succeeded
        (no reason or message) when they exited 0 (#115331: "pods ... may end up in the
        Succeeded phase in two scenarios: pod deletion and graceful node shutdown"). A pod
        being deleted is then deleted by the status manager (finished)."""
        kubelet, cluster = self.kubelet, self.sim.cluster
        self.sim.leaks.forget_pod(pod.key, now)
        if pod.started:
            pod.started = False
            self.sim.admission_changed(pod)
            self.sim.on_usage_changed(pod.node_name, now)
        # The status goes through the status manager: sent at once, or, while the API cannot
        # be reached, at the first syncBatch after a heal (lost if the machine powers off first).
        phase = "Succeeded" if pod.phase == "Succeeded" else "Failed"
        reason, message = NODE_SHUTDOWN_REASON, NODE_SHUTDOWN_MESSAGE
        if kubelet.profile.terminal_phase_from_exit_codes and not pod.is_mirror():
            phase = terminal_phase([exit_code] * len(pod.containers))
            if phase == "Succeeded":
                reason = message = ""
        kubelet.status.set_pod_status(
            pod,
            now,
            phase,
            reason,
            message,
            False,
            (POD_REASON_TERMINATION_BY_KUBELET, NODE_SHUTDOWN_MESSAGE),
            finished=pod.deletion_ms is not None,
        )
        if pod.deletion_ms is not None and kubelet.reaches_api:
            cluster.remove_pod(pod, now)  # (1.18 has no shutdown manager; already removed)

    def _group_timeout(self) -> None:
        """The group's period ran out before all its kills finished: go on regardless."""
        now = self.sim.sched.now_ms
        self.timer = None
        for handle in self.outstanding.values():
            handle.cancel()  # they still finish in reality, but the machine is going down
        self.outstanding.clear()
        self._next_group(now)

    def _power_off(self, now: int, reason: str) -> None:
        kubelet = self.kubelet
        if not kubelet.powered:
            return
        self.sim.timeline.emit(now, "NodePoweredOff", node=kubelet.node_name, reason=reason)
        kubelet.power_off(now)

    def kubelet_stopped(self, now: int) -> None:
        """The kubelet process ends mid-shutdown: its delay inhibitor lock goes with it, so
        logind goes on with the shutdown at once."""
        self.reset()
        self._power_off(now, POWERED_OFF_AT_ONCE)

    def reset(self) -> None:
        """The machine is off (or a new kubelet process starts): nothing is in progress."""
        for handle in self.outstanding.values():
            handle.cancel()
        self.outstanding.clear()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.queue = []
        self.shutting_down = False
