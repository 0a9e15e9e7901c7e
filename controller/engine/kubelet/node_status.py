"""The kubelet's control-plane side: Lease renewal (pkg/kubelet/nodelease), node status
(kubelet_node_status.go tryUpdateNodeStatus, nodestatus/setters.go), and the pod
lifecycle work a kubelet does for the pods bound to it.

Lease renewals of a healthy kubelet are computed lazily (``lease_renew_ms``), so an
idle cluster costs nothing between changes; status posts are scheduled only when the
status would change or the periodic report is due (design.md, "Idle loops cost nothing").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..clock import last_on_grid, next_on_grid
from ..config import KubeletConfig
from ..core import Handle, Phase
from ..objects import (
    DISK_PRESSURE,
    FALSE,
    MEMORY_PRESSURE,
    PID_PRESSURE,
    READY,
    TRUE,
    Node,
    NodeCondition,
    Pod,
)
from .predicate import AdmittedIndex, kubelet_predicate_admit

if TYPE_CHECKING:
    from ..simulation import Simulation
    from ..versions import Profile
    from .clients import KubeletProcess

# (condition, True reason, True message, False reason, False message, event if True, if False)
PRESSURE_SETTERS = (
    (
        MEMORY_PRESSURE,
        "KubeletHasInsufficientMemory",
        "kubelet has insufficient memory available",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
        "NodeHasInsufficientMemory",
        "NodeHasSufficientMemory",
    ),
    (
        DISK_PRESSURE,
        "KubeletHasDiskPressure",
        "kubelet has disk pressure",
        "KubeletHasNoDiskPressure",
        "kubelet has no disk pressure",
        "NodeHasDiskPressure",
        "NodeHasNoDiskPressure",
    ),
    (
        PID_PRESSURE,
        "KubeletHasInsufficientPID",
        "kubelet has insufficient PID available",
        "KubeletHasSufficientPID",
        "kubelet has sufficient PID available",
        "NodeHasInsufficientPID",
        "NodeHasSufficientPID",
    ),
)

# Kubelet modes of AddNode.
RUNNING, STOPPED, LEASE_ONLY = "Running", "Stopped", "LeaseOnly"


class Kubelet:
    """One node's kubelet."""

    # The pods its admission counts, kept between admissions (predicate.AdmittedIndex,
    # under Simulation.shortcuts); None until the next admission makes it.
    admitted_index: AdmittedIndex | None = None

    def __init__(
        self,
        sim: Simulation,
        node: Node,
        config: KubeletConfig,
        offset_ms: int,
        mode: str,
        profile: Profile | None = None,
    ) -> None:
        self.sim = sim
        # This kubelet's release: its node's kubeletVersion (version skew), else the control
        # plane's. Set before the eviction loop below, which reads it.
        self._profile = profile
        self.node_name = node.name
        self.cfg = config
        self.offset_ms = offset_ms
        self.mode = mode
        self.process_running = mode != STOPPED
        self.connected = True
        self.powered = True
        self.runtime_ready = True
        self.runtime_message = "container runtime is down"
        self.anchor_ms = 0  # loops run at anchor + k * period
        self.lease_period_ms = config.lease_renew_interval_ms
        self.status_period_ms = config.node_status_update_frequency_ms
        self.active_since_ms = 0
        self.frozen_lease_ms: int | None = None
        self.last_report_ms: int | None = None
        self.status_handle: Handle | None = None
        self.status_at: int | None = None
        self.needs_pod_resync = False
        self.pressure: set[str] = set()  # node conditions the eviction manager reports
        from .eviction_loop import EvictionLoop
        from .image_gc import ImageGCLoop
        from .nodeshutdown import ShutdownManager
        from .status_manager import StatusManager

        self.eviction = EvictionLoop(self, node)
        self.image_gc = ImageGCLoop(self)
        self.status = StatusManager(self)  # the pod status manager
        self.shutdown = ShutdownManager(self)  # the node shutdown manager

    # -- state --------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """The release whose kubelet rules this kubelet follows (every kubelet module reads
        its rules here, never ``sim.config.profile``): its node's ``kubeletVersion``, else
        the control plane's ``spec.kubernetesVersion``. Engines pickled before it existed
        still load (the control plane's)."""
        own = self.__dict__.get("_profile")
        return own if own is not None else self.sim.config.profile

    @property
    def process(self) -> KubeletProcess:
        """The kubelet process running now (or the last one): its API clients
        (kubelet/clients.py). Engines pickled before it existed get one, full."""
        process = self.__dict__.get("_process")
        if process is None:
            from .clients import KubeletProcess

            process = self._process = KubeletProcess(self)
        return process

    def _new_process(self) -> None:
        """The kubelet binary starts again: new clients with full buckets."""
        from .clients import KubeletProcess

        old = self.__dict__.get("_process")
        if old is not None:
            old.stop()
        self._process = KubeletProcess(self)

    def record_event(
        self, now_ms: int, obj: str, reason: str, message: str, event_type: str = "Normal"
    ) -> None:
        """The kubelet's recorder (makeEventRecorder): the event is written through its event
        client's sink (correlated first, then the token of eventRecordQPS / eventBurst)."""
        self.process.record(now_ms, obj, reason, message, event_type, self.node_name)

    @property
    def node(self) -> Node | None:
        return self.sim.cluster.nodes.get(self.node_name)

    @property
    def alive(self) -> bool:
        """The kubelet process runs (the machine is on)."""
        return self.process_running and self.powered

    @property
    def reaches_api(self) -> bool:
        """Renews its lease and posts status: alive and connected."""
        return self.process_running and self.powered and self.connected

    @property
    def posts_status(self) -> bool:
        return self.reaches_api and self.mode != LEASE_ONLY

    # -- lease --------------------------------------------------------------------------
    def lease_renew_ms(self, now_ms: int) -> int | None:
        """renewTime of the node's Lease as the API has it at ``now_ms`` (phase >= KUBELET)."""
        if not self.reaches_api:
            return self.frozen_lease_ms
        grid = last_on_grid(now_ms, self.anchor_ms, self.lease_period_ms)
        if grid < self.active_since_ms:
            return self.frozen_lease_ms
        return grid

    def _freeze(self, now_ms: int) -> None:
        """The kubelet stops reaching the API at ``now_ms`` (fault phase): the renewal due
        at ``now_ms`` itself does not happen."""
        if not self.reaches_api:
            return
        self.sim.on_lease_changing(self.node_name)
        if now_ms > self.active_since_ms:
            last = last_on_grid(now_ms - 1, self.anchor_ms, self.lease_period_ms)
            if last >= self.active_since_ms:
                self.frozen_lease_ms = last
        elif self.active_since_ms == now_ms:
            self.frozen_lease_ms = now_ms
        self._cancel_status()

    # -- lifecycle ------------------------------------------------------------------------
    def start(self, now_ms: int, initial: bool = False) -> None:
        """The kubelet process starts: renews its lease and posts a fresh status at once;
        its loops run from now on (offset by kubeletOffset at t=0)."""
        self.sim.on_lease_changing(self.node_name)
        self.process_running = True
        self.anchor_ms = self.offset_ms if initial else now_ms
        self.active_since_ms = now_ms
        if not initial:
            self._new_process()
            self.pressure = set()  # the new process's eviction manager has seen nothing yet
        self.image_gc.start(now_ms)
        if not self.reaches_api:
            return
        self.frozen_lease_ms = now_ms
        self.sim.on_kubelet_started(self, now_ms)
        self.eviction.start(now_ms, fresh=not initial)
        if self.mode != LEASE_ONLY:
            self.post_status(now_ms)
        self.sync_pods(now_ms)

    def stop(self, now_ms: int) -> None:
        shutting_down = self.shutdown.shutting_down
        self._freeze(now_ms)
        self.process_running = False
        self.process.stop()
        self.status.reset()
        self.sim.on_kubelet_stopped(self, now_ms)
        if shutting_down:
            # Its delay inhibitor lock goes with the process: logind shuts the machine down now.
            self.shutdown.kubelet_stopped(now_ms)

    def partition(self, now_ms: int) -> None:
        self._freeze(now_ms)
        self.connected = False

    def heal(self, now_ms: int) -> None:
        """Reconnected: the loops go on at their own phase; the next status tick posts the
        status the API lacks (Ready=Unknown written by the controller is replaced)."""
        if self.connected:
            return
        self.sim.on_lease_changing(self.node_name)
        self.connected = True
        if not self.reaches_api:
            return
        self.active_since_ms = now_ms
        self.needs_pod_resync = True
        self.mark_dirty(now_ms)
        self.status.wake(now_ms)

    def power_off(self, now_ms: int) -> None:
        self._freeze(now_ms)
        self.powered = False
        self.process.stop()
        self.status.reset()
        self.shutdown.reset()
        self.sim.on_node_powered_off(self, now_ms)

    def power_on(self, now_ms: int) -> None:
        self.sim.on_lease_changing(self.node_name)
        self.powered = True
        if self.process_running:
            self.start(now_ms)

    def set_runtime_ready(self, ready: bool, now_ms: int, message: str = "") -> None:
        """The container runtime went down or came back. Back: the skipped pod work (starts,
        kills of pods deleted meanwhile) is done at once, where the kubelet's syncLoop
        retries within its 100 ms-5 s backoff."""
        was = self.runtime_ready
        self.runtime_ready = ready
        if message:
            self.runtime_message = message
        self.mark_dirty(now_ms)
        if ready and not was and self.alive:
            self.sync_pods(now_ms)

    def set_pressure(self, conditions: set[str], now_ms: int) -> None:
        if conditions != self.pressure:
            self.pressure = set(conditions)
            self.mark_dirty(now_ms)

    # -- status ---------------------------------------------------------------------------
    def mark_dirty(self, now_ms: int) -> None:
        """Something the status depends on changed: post at the next status tick."""
        if not self.posts_status:
            return
        self._schedule_status(next_on_grid(now_ms, self.anchor_ms, self.status_period_ms))

    def api_status_written(self, now_ms: int) -> None:
        """Someone else (the node lifecycle controller's Ready=Unknown, a fault) wrote the
        node's status. Port of Kubelet.tryUpdateNodeStatus (kubelet_node_status.go): every
        nodeStatusUpdateFrequency the kubelet GETs the node from the API and compares the
        status its setters compute with that copy (nodeStatusHasChanged), so a condition it
        owns that differs is PATCHed back at its next check, whether or not its report is
        due. The check of this very instant ran before a write of a later phase (the
        controller's); a fault's write comes first, so that check already sees it."""
        if not self.posts_status:
            return
        at = next_on_grid(now_ms, self.anchor_ms, self.status_period_ms)
        if at == now_ms and self.sim.sched.phase >= Phase.KUBELET_STATUS:
            at += self.status_period_ms
        self._schedule_status(at)

    def _schedule_status(self, at_ms: int) -> None:
        if self.status_at is not None and self.status_at <= at_ms:
            return
        if self.status_handle is not None:
            self.status_handle.cancel()
        self.status_at = at_ms
        self.status_handle = self.sim.sched.schedule(at_ms, Phase.KUBELET_STATUS, self._status_tick)

    def _cancel_status(self) -> None:
        if self.status_handle is not None:
            self.status_handle.cancel()
        self.status_handle = None
        self.status_at = None

    def _status_tick(self) -> None:
        now = self.sim.sched.now_ms
        self.status_handle = None
        self.status_at = None
        if not self.posts_status:
            return
        node = self.node
        if node is None:
            return
        desired = self.desired_conditions(node, now)
        report_due = self.last_report_ms is None or now >= (
            self.last_report_ms + self.cfg.node_status_report_frequency_ms
        )
        if report_due or _conditions_changed(node.conditions, desired):
            self.post_status(now, desired)
        else:
            self._schedule_next_report()

    def _schedule_next_report(self) -> None:
        assert self.last_report_ms is not None
        due = self.last_report_ms + self.cfg.node_status_report_frequency_ms
        self._schedule_status(next_on_grid(due, self.anchor_ms, self.status_period_ms))

    def desired_conditions(self, node: Node, now_ms: int) -> list[NodeCondition]:
        """Port of the nodestatus setters (MemoryPressure, DiskPressure, PIDPressure, Ready):
        every heartbeat = now; a transition time moves only when the status changes."""
        current = {c.type: c for c in node.conditions}
        out: list[NodeCondition] = []
        for ctype, t_reason, t_msg, f_reason, f_msg, _e1, _e2 in PRESSURE_SETTERS:
            if ctype in self.pressure:
                out.append(_condition(current, ctype, TRUE, t_reason, t_msg, now_ms))
            else:
                out.append(_condition(current, ctype, FALSE, f_reason, f_msg, now_ms))
        # ReadyCondition: runtime, network, storage and node shutdown errors, aggregated.
        errors = [] if self.runtime_ready else [self.runtime_message]
        shutting_down = self.shutdown.shutdown_status()
        if shutting_down is not None:
            errors.append(shutting_down)
        if not errors:
            ready = _condition(
                current, READY, TRUE, "KubeletReady", "kubelet is posting ready status", now_ms
            )
        else:
            message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
            ready = _condition(current, READY, FALSE, "KubeletNotReady", message, now_ms)
        out.append(ready)
        # Conditions the kubelet does not own (NetworkUnavailable) are kept as they are.
        owned = {c.type for c in out}
        out.extend(c.copy() for c in node.conditions if c.type not in owned)
        return out

    def sync_node_status(self, now_ms: int) -> None:
        """Port of Kubelet.syncNodeStatus (tryUpdateNodeStatus) called outside the status
        loop (the shutdown manager calls it at once): PATCH if anything changed or the report
        is due."""
        node = self.node
        if not self.posts_status or node is None:
            return
        desired = self.desired_conditions(node, now_ms)
        report_due = self.last_report_ms is None or now_ms >= (
            self.last_report_ms + self.cfg.node_status_report_frequency_ms
        )
        if report_due or _conditions_changed(node.conditions, desired):
            self.post_status(now_ms, desired)

    def post_status(self, now_ms: int, desired: list[NodeCondition] | None = None) -> None:
        """PATCH the node status; record the kubelet's node events on transitions."""
        node = self.node
        if node is None:
            return
        if desired is None:
            desired = self.desired_conditions(node, now_ms)
        before = {c.type: c.status for c in node.conditions}
        self.last_report_ms = now_ms
        self.sim.cluster.set_node_conditions(node, desired, now_ms, by_kubelet=True)
        for ctype, _a, _b, _c, _d, ev_true, ev_false in PRESSURE_SETTERS:
            status = next(c.status for c in desired if c.type == ctype)
            if before.get(ctype) != status:
                self._node_event(now_ms, ev_true if status == TRUE else ev_false)
        ready = next(c for c in desired if c.type == READY)
        # setters.ReadyCondition records an event only when an existing Ready condition changes
        # status (needToRecordEvent), never when it appends the first one.
        if READY in before and before[READY] != ready.status:
            self._node_event(now_ms, "NodeReady" if ready.status == TRUE else "NodeNotReady")
        if self.needs_pod_resync:
            self.needs_pod_resync = False
            self.sync_pods(now_ms)
        self._schedule_next_report()

    def _node_event(self, now_ms: int, reason: str) -> None:
        name = self.node_name
        if reason in ("NodeReady", "NodeNotReady"):
            message = f"Node {name} status is now: {reason}"
        else:
            message = f"Node {name} status is now: {reason}"
        self.record_event(now_ms, f"Node/{name}", reason, message)

    # -- pods ------------------------------------------------------------------------------
    def sync_pods(self, now_ms: int) -> None:
        """The kubelet (re)syncs every pod bound to it: admits and starts new ones, reports
        running ones Ready, and carries out deletions it had not seen."""
        if not self.reaches_api:
            return
        for pod in self.sim.cluster.pods_on_node(self.node_name):
            self.sim.kubelet_sync_pod(self, pod, now_ms)

    def handles_pod(self, pod: Pod) -> bool:
        return self.reaches_api

    def reconfigure(self, config: KubeletConfig, now_ms: int) -> None:
        """New KubeletConfiguration (a kubelet restart with new flags, minus the restart)."""
        from .eviction.helpers import parse_threshold_config

        self.cfg = config
        self.process.reconfigure(self)
        self.eviction.manager.config.thresholds = parse_threshold_config(
            config.enforce_node_allocatable,
            config.eviction_hard,
            config.eviction_soft,
            config.eviction_soft_grace_period,
            config.eviction_minimum_reclaim,
            default_hard=self.profile.kubelet_default_eviction_hard,
        )
        self.eviction.manager.config.pressure_transition_period_ms = (
            config.eviction_pressure_transition_period_ms
        )
        self.eviction.manager.config.max_pod_grace_period_s = config.eviction_max_pod_grace_period
        self.eviction.manager.config.ranking_policy = config.eviction_ranking_policy
        self.eviction.wake(now_ms)

    # -- eviction manager (kubelet/eviction) ------------------------------------------------
    def admit(self, pod: Pod, now_ms: int) -> tuple[bool, str, str]:
        """The pod admit handlers in order (kubelet.go NewMainKubelet): the eviction
        manager's, the resource fit (lifecycle.NewPredicateAdmitHandler), then the node
        shutdown manager's; the first that rejects decides."""
        result = self.eviction.admit(pod, now_ms)
        if not result[0]:
            return result
        result = kubelet_predicate_admit(self, pod, now_ms)
        if not result[0]:
            return result
        return self.shutdown.admit()

    def drop_admitted_index(self) -> None:
        """Its unsent statuses or waiting admissions are gone at once: the admission index
        is made again at the next admission."""
        self.admitted_index = None

    def usage_changed(self, now_ms: int) -> None:
        self.eviction.wake(now_ms)

    def eviction_sync_now(self, now_ms: int) -> None:
        self.eviction.sync(now_ms)


def _condition(
    current: dict[str, NodeCondition],
    ctype: str,
    status: str,
    reason: str,
    message: str,
    now_ms: int,
) -> NodeCondition:
    prev = current.get(ctype)
    transition = prev.last_transition_ms if prev is not None and prev.status == status else now_ms
    return NodeCondition(ctype, status, reason, message, now_ms, transition)


def _conditions_changed(old: list[NodeCondition], new: list[NodeCondition]) -> bool:
    """Port of nodeStatusHasChanged: compare conditions ignoring heartbeat times."""
    if len(old) != len(new):
        return True
    by_type = {c.type: c for c in old}
    for c in new:
        o = by_type.get(c.type)
        if o is None:
            return True
        if (o.status, o.reason, o.message, o.last_transition_ms) != (
            c.status,
            c.reason,
            c.message,
            c.last_transition_ms,
        ):
            return True
    return False
