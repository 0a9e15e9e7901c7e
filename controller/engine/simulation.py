"""One simulated cluster: the scheduler heap, the object store, and every component,
wired so that each informer reaction runs at the instant of the write that triggers it.

This is the engine's entry point: ``Simulation(scenario).run(until_ms)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import admission
from .cluster import Cluster
from .core import Phase, Scheduler
from .kubelet.allocatable import node_allocatable
from .kubelet.node_status import RUNNING, STOPPED, Kubelet
from .kubelet.preemption import admission_done
from .kubelet.termination import (
    DEFAULT_EXIT_CODE,
    SIGKILL_EXIT_CODE,
    container_stop,
    terminal_phase,
)
from .manifests import pod_from_manifest
from .nodelifecycle.controller import NodeLifecycleController
from .nodelifecycle.taint_manager import NoExecuteTaintManager
from .nodelifecycle.zones import get_zone_key
from .objects import (
    NO_EXECUTE,
    Image,
    Node,
    NodeResources,
    Pod,
)
from .scenario import Fault, NodeSpec, Scenario, ScenarioError
from .timeline import Event, Timeline

DETECTED_AT_START_MS = -(2**62)  # Go's zero time.Time, as an image's firstDetected


class ActionFailed(Exception):
    """A live action raised something other than a refusal while it was applied."""

    def __init__(self, action_id: int) -> None:
        super().__init__(f"action {action_id} failed")
        self.action_id = action_id


class Simulation:
    """A whole cluster, deterministic: the same scenario and actions give the same timeline."""

    # The engine's shortcuts for idle loops (issue #27: the monitor pass's parked nodes, ...).
    # False runs the straightforward loops they stand for: only the tests that compare both
    # paths set it, before start().
    shortcuts = True

    def __init__(self, scenario: Scenario, record: bool = True) -> None:
        self.scenario = scenario
        self.config = scenario.config
        self.sched = Scheduler()
        self.timeline = Timeline(record)
        self.cluster = Cluster(self, self.timeline)
        self.kubelets: dict[str, Kubelet] = {}
        self._sorted_nodes: list[Node] | None = None
        self.controller = NodeLifecycleController(self, 0)
        self.taint_manager: NoExecuteTaintManager | None = (
            NoExecuteTaintManager(self)
            if self.config.controller_manager.enable_taint_manager
            else None
        )
        from .scheduler import KubeScheduler
        from .workloads import WorkloadControllers

        self.workloads = WorkloadControllers(self)
        self.kube_scheduler = KubeScheduler(self)
        self._terminations: dict[str, Any] = {}
        from .kubelet.resources import Leaks

        self.leaks = Leaks(self)
        from .podgc import PodGCController

        self.pod_gc = PodGCController(self, 0)
        self.observed_nodes: set[str] = set()  # kubelets whose eviction signals moved (live view)
        self.refused_actions: dict[int, str] = {}  # live actions refused at their instant
        # zone -> [(t, nodes waiting in its queue)], changes only (the page's chart)
        self.queue_series: dict[str, list[tuple[int, int]]] = {}
        self.started = False

    # -- set-up ---------------------------------------------------------------------------
    def start(self) -> None:
        """t=0: nodes, then their kubelets' first status and lease, then the objects through
        admission, scheduler and controllers; then the loops and the scenario's faults."""
        if self.started:
            return
        self.started = True
        now = 0
        for spec in self.scenario.nodes:
            self.create_node(spec, now, start_kubelet=False)
        for spec in self.scenario.nodes:
            self.kubelets[spec.name].start(now, initial=True)
        for manifest in self.scenario.objects:
            self.apply_manifest(manifest, now)
        self.controller.run()
        if self.taint_manager is not None:
            self.taint_manager.run(now)
        self.pod_gc.run(now)
        for fault in self.scenario.faults:
            self.sched.schedule(fault.at_ms, Phase.FAULT, self.apply_fault, fault)

    def run(self, until_ms: int) -> None:
        self.start()
        self.sched.run(until_ms)

    def run_until(self, target_ms: int, stop: Callable[[Event], bool] | None = None) -> int:
        """``run(target_ms)``, except that once ``stop(event)`` is true for an event emitted
        at instant ``t``, every other event of ``t`` still runs and the run ends there: returns
        ``t`` (the clock is at ``t``), else ``target_ms``. ``stop`` sees every event of the
        run. Ending a run at an instant's end changes nothing the rest of the run does, so the
        timeline is that of one ``run`` (a lesson's pauses, lesson.py)."""
        if stop is None:
            self.run(target_ms)
            return self.sched.now_ms
        hit: list[int] = []

        def listener(event: Event) -> None:
            if stop(event) and not hit:
                hit.append(event["t"])

        self.timeline.listeners.append(listener)
        try:
            self.start()
            if hit:  # at t=0, while starting
                return self.sched.run_until(min(target_ms, hit[0]), lambda: hit[0])
            return self.sched.run_until(target_ms, lambda: hit[0] if hit else None)
        finally:
            self.timeline.listeners.remove(listener)

    @property
    def now_ms(self) -> int:
        return self.sched.now_ms

    # -- objects ------------------------------------------------------------------------
    def create_node(self, spec: NodeSpec, now: int, start_kubelet: bool = True) -> Node:
        res = NodeResources(
            capacity=dict(spec.capacity),
            allocatable={},  # the kubelet's MachineInfo, below
            system_usage=dict(spec.usage),
            pid_max=spec.pid_max,
            inodes=spec.inodes,
            imagefs_capacity=spec.imagefs,
            # realImageGCManager.Start: the first detectImages uses the zero time ("unknown,
            # in the past"), so images present when the kubelet starts pass imageMinimumGCAge.
            images=[
                Image(
                    i["name"],
                    i["size"],
                    i["inUse"],
                    DETECTED_AT_START_MS,
                    now if i["inUse"] else DETECTED_AT_START_MS,  # lastUsed: set when in use
                )
                for i in spec.images
            ],
            dead_containers=spec.dead_containers,
        )
        node = Node(
            name=spec.name,
            uid=self.cluster.new_uid("node"),
            creation_ms=now,
            labels=dict(spec.labels),
            zone_key=get_zone_key(spec.labels),
            resources=res,
            unschedulable=spec.unschedulable,
            excluded_from_disruption=self.excluded_from_disruption(spec.name, spec.labels),
        )
        admission.taint_node_on_create(node, self.config.api_server, now)
        res.allocatable = node_allocatable(spec.kubelet, res.capacity)
        kubelet = Kubelet(
            self,
            node,
            spec.kubelet,
            spec.kubelet_offset_ms,
            spec.kubelet_mode,
            # (getattr: a NodeSpec pickled in a snapshot before kubeletVersion existed)
            getattr(spec, "kubelet_profile", None),
        )
        self.kubelets[node.name] = kubelet
        self.cluster.add_node(node, now)
        for t in node.taints:
            self.timeline.emit(now, "TaintAdded", node=node.name, key=t.key, effect=t.effect)
        # The node informer's AddFunc queues doNoScheduleTaintingPass: a node with no
        # conditions yet loses the admission-added not-ready:NoSchedule at once.
        self.controller.do_no_schedule_tainting_pass(node, now)
        if start_kubelet and spec.kubelet_mode != STOPPED:
            kubelet.start(now)
        return node

    def apply_manifest(self, manifest: dict[str, Any], now: int) -> None:
        """``kubectl apply``: create (or update the workload of) one manifest."""
        if manifest["kind"] == "Pod":
            pod = pod_from_manifest(manifest, "object", now, self.cluster.new_uid("pod"))
            existing = self.cluster.pods.get(pod.key)
            if existing is not None:
                self.update_pod_from(existing, pod, now)
                return
            self.create_pod(pod, now)
        else:
            self.workloads.apply(manifest, now)

    def check_apply(self, manifest: dict[str, Any], path: str) -> None:
        """What the API server refuses in an update (ValidatePodUpdate: a pod's node and
        resources cannot change; workloads' selectors are immutable)."""
        if manifest["kind"] != "Pod":
            self.workloads.check_apply(manifest, path)
            return
        new = pod_from_manifest(manifest, path, 0, "check")
        pod = self.cluster.pods.get(new.key)
        if pod is None:
            return
        if new.node_name and new.node_name != pod.node_name:
            raise ScenarioError(
                f"{path}.spec.nodeName", "pod updates may not change the node (field is immutable)"
            )
        if [(c.name, c.requests, c.limits) for c in new.containers] != [
            (c.name, c.requests, c.limits) for c in pod.containers
        ]:
            raise ScenarioError(
                f"{path}.spec.containers", "pod updates may not change containers or resources"
            )

    def update_pod_from(self, pod: Pod, new: Pod, now: int) -> None:
        """An update to an existing pod: labels, annotations (usage) and tolerations."""
        pod.labels = new.labels
        pod.annotations = new.annotations
        if new.usage != pod.usage:
            pod.usage = new.usage
            self.on_usage_changed(pod.node_name, now)
        if [t.to_dict() for t in new.tolerations] != [t.to_dict() for t in pod.tolerations]:
            pod.tolerations = new.tolerations
            admission.default_toleration_seconds(pod, self.config.api_server)
            if self.taint_manager is not None:
                self.taint_manager.handle_pod_update(pod, now)

    def create_pod(self, pod: Pod, now: int) -> None:
        """POST a pod: admission plugins, then the store (whose hooks bind/start it)."""
        # (a DaemonSet pod has the DaemonSet controller's tolerations from its template)
        admission.default_toleration_seconds(pod, self.config.api_server)
        self.cluster.add_pod(pod, now)

    def sorted_nodes(self) -> list[Node]:
        """Nodes in lister order (sorted by name, so runs are reproducible)."""
        if self._sorted_nodes is None:
            self._sorted_nodes = [self.cluster.nodes[n] for n in sorted(self.cluster.nodes)]
        return self._sorted_nodes

    def lease_renew_ms(self, node_name: str, now: int) -> int | None:
        kubelet = self.kubelets.get(node_name)
        return kubelet.lease_renew_ms(now) if kubelet is not None else None

    def is_daemonset_pod(self, pod: Pod) -> bool:
        """DeletePods keeps pods owned by a DaemonSet (design: by controller ownerReference,
        whether or not the DaemonSet object exists) or matched by a DaemonSet's selector."""
        return pod.is_daemonset_pod() or self.workloads.daemonset_selects(pod)

    # -- informer reactions ---------------------------------------------------------------
    def on_node_added(self, node: Node, now: int) -> None:
        self._sorted_nodes = None
        self.controller.node_eviction_map.setdefault(node.name, "unmarked")
        self.workloads.on_node_changed(node.name, now)
        self.kube_scheduler.wake(now)

    def on_node_deleted(self, node: Node, now: int) -> None:
        self.controller.node_deleted(node.name)
        self._sorted_nodes = None
        self.controller.node_eviction_map.pop(node.name, None)
        if self.taint_manager is not None:
            self.taint_manager.handle_node_update(node.name, now)
        kubelet = self.kubelets.pop(node.name, None)
        if kubelet is not None:
            kubelet.stop(now)
        self.workloads.on_node_changed(node.name, now)

    def on_node_written(self, node: Node) -> None:
        """The node's status or taints were written (before any informer reaction)."""
        self.controller.node_written(node.name)

    def on_lease_changing(self, node_name: str) -> None:
        """The node's kubelet is about to change when it renews its Lease (stop, start,
        partition, heal, power)."""
        self.controller.lease_changing(node_name)

    def on_node_status_updated(self, node: Node, now: int, changed: bool) -> None:
        self.workloads.on_node_status(node, now)
        self.controller.do_no_schedule_tainting_pass(node, now)
        if changed:
            self.kube_scheduler.wake(now)

    def on_node_spec_updated(self, node: Node, now: int) -> None:
        self.controller.do_no_schedule_tainting_pass(node, now)
        self.kube_scheduler.wake(now)

    def excluded_from_disruption(self, name: str, labels: dict[str, str]) -> bool:
        """isNodeExcludedFromDisruptionChecks of the profile, with the scenario's gates."""
        gates = self.config.feature_gates
        return self.config.profile.node_excluded_from_disruption(
            name, labels, gates.legacy_node_role_behavior, gates.node_disruption_exclusion
        )

    def on_node_labels_updated(self, node: Node, now: int) -> None:
        """A node's labels changed. The NodeLifecycleController reads them at each monitor
        pass (isNodeExcludedFromDisruptionChecks in monitorNodeHealth, 1.18 and current):
        what the engine derived from them at creation is derived again. (Its zone, GetZoneKey,
        cannot change: the Label fault refuses the zone labels.) The scheduler's and the
        DaemonSet controller's node informers see the update (nodeSelector, affinity)."""
        node.excluded_from_disruption = self.excluded_from_disruption(node.name, node.labels)
        self.kube_scheduler.wake(now)
        self.workloads.on_node_changed(node.name, now)

    def on_node_noexecute_taints_changed(self, node: Node, now: int) -> None:
        if self.taint_manager is not None:
            self.taint_manager.handle_node_update(node.name, now)

    def on_node_taints_changed(self, node: Node, now: int) -> None:
        self.kube_scheduler.wake(now)
        self.workloads.on_node_changed(node.name, now)

    def on_pod_added(self, pod: Pod, now: int) -> None:
        if pod.node_name:
            self.on_pod_bound(pod, now)
        else:
            self.kube_scheduler.enqueue(pod, now)
        self.workloads.on_pod_changed(pod, now)

    def on_pod_bound(self, pod: Pod, now: int) -> None:
        self.controller.process_pod(pod, now)
        if self.taint_manager is not None:
            self.taint_manager.handle_pod_update(pod, now)
        kubelet = self.kubelets.get(pod.node_name)
        if kubelet is not None and kubelet.reaches_api:
            self.kubelet_sync_pod(kubelet, pod, now)

    def on_pod_status_updated(self, pod: Pod, now: int) -> None:
        self.workloads.on_pod_changed(pod, now)

    def on_pod_deleting(self, pod: Pod, now: int) -> None:
        kubelet = self.kubelets.get(pod.node_name) if pod.node_name else None
        if not pod.node_name or (pod.deletion_grace_s == 0 and not pod.started):
            self.cluster.remove_pod(pod, now)
        elif kubelet is not None and kubelet.reaches_api:
            self.kubelet_sync_pod(kubelet, pod, now)
        self.workloads.on_pod_changed(pod, now)

    def on_pod_removed(self, pod: Pod, now: int) -> None:
        handle = self._terminations.pop(pod.key, None)
        if handle is not None:
            handle.cancel()
        if self.taint_manager is not None:
            self.taint_manager.handle_pod_removed(pod, now)
        if pod.started:
            pod.started = False
            self.admission_changed(pod)
            self.on_usage_changed(pod.node_name, now)
        self.workloads.on_pod_changed(pod, now)
        self.kube_scheduler.wake(now)

    # -- kubelet-side pod work -------------------------------------------------------------
    def kubelet_sync_pod(self, kubelet: Kubelet, pod: Pod, now: int) -> None:
        """What the kubelet does for one of its pods when it sees it (syncPod).

        While the container runtime is down nothing happens: Kubelet.syncLoop skips
        syncLoopIteration ("skipping pod synchronization") as long as runtimeState reports an
        error, so pods are neither started nor killed; set_runtime_ready(True) resyncs them."""
        if not kubelet.runtime_ready:
            return
        if pod.deletion_ms is not None:
            if pod.key in self._terminations or kubelet.status.finishing(pod):
                return  # being killed; or done, its terminal status waits for the API
            grace_ms = (pod.deletion_grace_s or 0) * 1000
            if grace_ms == 0:
                self.cluster.remove_pod(pod, now)  # a force delete: nothing to wait for
            elif not pod.started:
                # Nothing runs (never started, or its containers are gone: stopped during a
                # partition under 1.18, or with the machine): the kubelet ends it at once,
                # from 1.27 with phase Failed first (TerminatePod: a missing container is
                # ContainerStatusUnknown, exit code 137).
                self._terminated(kubelet, pod, now, SIGKILL_EXIT_CODE)
            else:
                # SIGTERM, then the containers' answer (kubelet/termination.py): they stop
                # when they exit, or at the grace period's end (SIGKILL, 137).
                stop_ms, code = container_stop(pod.annotations, grace_ms)
                if stop_ms == 0:
                    self._confirm_termination(pod.key, code)
                    return
                self._terminations[pod.key] = self.sched.schedule(
                    now + stop_ms, Phase.KUBELET_POD, self._confirm_termination, pod.key, code
                )
            return
        if pod.phase == "Pending" and not pod.started:
            waiting = admission_done(kubelet)  # admitted, HandlePodAdditions blocked in kills
            if pod.key in waiting:
                if waiting[pod.key] > now:
                    return
                del waiting[pod.key]
                self.admission_changed(pod)
            else:
                if not self._kubelet_admits(kubelet, pod, now):
                    return
                if waiting.get(pod.key, now) > now:
                    self.sched.schedule(
                        waiting[pod.key],
                        Phase.KUBELET_POD,
                        self._start_after_admission,
                        kubelet.node_name,
                        pod.key,
                    )
                    return
                waiting.pop(pod.key, None)
            pod.started = True  # (set_pod_status tells the kubelet's AdmittedIndex)
            kubelet.status.set_pod_status(pod, now, "Running", ready=True)
            kubelet.usage_changed(now)  # on_usage_changed: this pod's kubelet
        elif kubelet.status.phase_of(pod) == "Running":
            if not pod.started:
                pod.started = True  # containers restarted after a reboot
                self.admission_changed(pod)
                self.on_usage_changed(pod.node_name, now)
            # A status this kubelet process has cached already is not sent again
            # (updateStatusInternal ignores the same status); an API Ready=False written by
            # someone else is put right by the status manager's next syncBatch (needsReconcile).
            if pod.key not in kubelet.status.synced:
                kubelet.status.set_ready(pod, now)

    def _start_after_admission(self, node_name: str, key: str) -> None:
        """The preemption kills returned: HandlePodAdditions goes on and starts the pod."""
        kubelet = self.kubelets.get(node_name)
        pod = self.cluster.pods.get(key)
        if kubelet is None or pod is None or pod.node_name != node_name:
            return
        if kubelet.reaches_api and kubelet.runtime_ready:
            self.kubelet_sync_pod(kubelet, pod, self.now_ms)

    def _kubelet_admits(self, kubelet: Kubelet, pod: Pod, now: int) -> bool:
        """canAdmitPod (Kubelet.admit: the admit handlers), and Kubelet.rejectPod when a handler says no: a Warning event with
        the message, and the status message with the kubelet's release's prefix ("Pod " in
        1.18, "Pod was rejected: " from 1.26)."""
        ok, reason, message = kubelet.admit(pod, now)
        if ok:
            return True
        self.timeline.emit(now, "PodRejected", pod=pod.key, node=pod.node_name, reason=reason)
        kubelet.record_event(now, f"Pod/{pod.key}", reason, message, "Warning")
        prefix = kubelet.profile.reject_pod_message_prefix
        kubelet.status.set_pod_status(pod, now, "Failed", reason, prefix + message)
        return False

    def _confirm_termination(self, key: str, exit_code: int = DEFAULT_EXIT_CODE) -> None:
        """The deleted pod's containers have stopped (SyncTerminatingPod's killPod returns),
        with ``exit_code``."""
        self._terminations.pop(key, None)
        pod = self.cluster.pods.get(key)
        if pod is None:
            return
        kubelet = self.kubelets.get(pod.node_name)
        if kubelet is not None and kubelet.alive and not kubelet.runtime_ready:
            return  # the kill cannot complete; the resync when the runtime is back redoes it
        if kubelet is None or not kubelet.reaches_api:
            # The containers stop, but the API cannot be told: the pod stays Terminating
            # (from 1.27 its terminal status waits in the status manager for the heal).
            if pod.started and kubelet is not None and kubelet.alive:
                pod.started = False
                self.admission_changed(pod)
                self.on_usage_changed(pod.node_name, self.now_ms)
                if kubelet.profile.terminal_phase_from_exit_codes:
                    self._terminated(kubelet, pod, self.now_ms, exit_code)
            return
        self._terminated(kubelet, pod, self.now_ms, exit_code)

    def _terminated(self, kubelet: Kubelet, pod: Pod, now: int, exit_code: int) -> None:
        """A deleted pod's containers are stopped: the kubelet ends it. From 1.27 (#115331)
        SyncTerminatingPod sets the status computed with podIsTerminal (getPhase: Succeeded
        if every container exited 0, else Failed; the phase changed, so no reason; not
        Ready), SyncTerminatedPod's TerminatePod marks it finished, and the status manager
        PATCHes the phase, then DELETEs the pod (grace 0, UID precondition): at once, or at
        the first syncBatch after a heal. 1.18 deletes it without a phase write."""
        if pod.is_mirror():
            self.cluster.remove_pod(pod, now)  # (static pods: "TODO(#116484)" in Go)
            return
        if not kubelet.profile.terminal_phase_from_exit_codes:
            # 1.18: the status manager syncs the stopped containers' statuses (the phase as
            # it is) and DELETEs the pod (canBeDeleted), through the kubelet's client.
            kubelet.status.set_pod_status(pod, now, "", finished=True)
            return
        phase, reason, message = terminal_phase([exit_code] * len(pod.containers)), "", ""
        if pod.phase in ("Failed", "Succeeded"):  # no transition out of a terminal phase
            phase, reason, message = pod.phase, pod.reason, pod.message
        kubelet.status.set_pod_status(pod, now, phase, reason, message, False, finished=True)

    def on_kubelet_started(self, kubelet: Kubelet, now: int) -> None:
        pass

    def on_kubelet_stopped(self, kubelet: Kubelet, now: int) -> None:
        pass

    def on_node_powered_off(self, kubelet: Kubelet, now: int) -> None:
        changed = False
        for pod in self.cluster.pods_on_node(kubelet.node_name):
            if pod.started:
                pod.started = False
                self.admission_changed(pod)
                changed = True
            handle = self._terminations.pop(pod.key, None)
            if handle is not None:
                handle.cancel()
        if changed:
            self.on_usage_changed(kubelet.node_name, now)

    def admission_changed(self, pod: Pod) -> None:
        """Whether ``pod`` counts among its kubelet's admitted pods may have changed: its
        kubelet's AdmittedIndex (kubelet/predicate.py) looks at it again."""
        if pod.node_name:
            kubelet = self.kubelets.get(pod.node_name)
            if kubelet is not None and kubelet.admitted_index is not None:
                kubelet.admitted_index.dirty.add(pod.key)

    def on_usage_changed(self, node_name: str, now: int) -> None:
        kubelet = self.kubelets.get(node_name)
        if kubelet is not None:
            kubelet.usage_changed(now)

    # -- faults and actions ---------------------------------------------------------------------
    def apply_fault(self, fault: Fault) -> None:
        """One of the scenario's own faults at its instant. The scenario was valid whole when
        loaded, but a live action may since have removed what the fault names (an operator's
        ``DeleteNode a-2`` before a ``StopKubelet a-2`` the file schedules later), or, live,
        filled its node with taints: such a fault is refused whole, as a live action whose
        target is gone, and the room goes on. The timeline says so with a ``FaultRefused``
        event: the fault as written and ``error`` (``spec.faults[0].node: unknown node
        "a-2"``). A fault naming what never existed (a zone no node was ever in, a workload
        the scenario lacks) is the file's error, as before: ScenarioError."""
        from .faults import FaultRefusal, apply_fault, fault_event

        try:
            apply_fault(self, fault, self.now_ms)
        except ScenarioError as exc:
            if not isinstance(exc, FaultRefusal) and not self._names_gone(fault):
                raise
            self.timeline.emit(self.now_ms, "FaultRefused", **fault_event(fault), error=str(exc))

    def _names_gone(self, fault: Fault) -> bool:
        """Whether ``fault`` names a node, zone or pod that existed in this run and is gone."""
        gone = self.cluster.gone
        return any(
            isinstance(fault.args.get(k), str) and f"{k}:{fault.args[k]}" in gone
            for k in ("node", "zone", "pod")
        )

    def apply_action(self, fault: Fault, action_id: int) -> None:
        """A live room's user action: one whose target is gone by its instant (another
        operator deleted the node in the same tick) is refused whole, not applied, and the
        room goes on; ``refused_actions`` says which and why."""
        from .faults import apply_fault

        try:
            apply_fault(self, fault, self.now_ms)
        except ScenarioError as exc:
            self.refused_actions[action_id] = str(exc)
        except Exception as exc:  # a bug: the engine may be half changed, the caller rebuilds it
            raise ActionFailed(action_id) from exc

    def restart_controller_manager(self, now: int) -> None:
        """All in-memory state of kube-controller-manager is lost and rebuilt."""
        self.controller.stop()
        if self.taint_manager is not None:
            self.taint_manager.stop()
        self.controller = NodeLifecycleController(self, now)
        self.taint_manager = (
            NoExecuteTaintManager(self)
            if self.config.controller_manager.enable_taint_manager
            else None
        )
        self.controller.run()
        if self.taint_manager is not None:
            self.taint_manager.run(now)
        from .podgc import PodGCController

        self.pod_gc.stop()
        self.pod_gc = PodGCController(self, now)
        self.pod_gc.run(now)
        self.workloads.restart(now)

    def noexecute_taints(self, node: Node) -> list[Any]:
        return [t for t in node.taints if t.effect == NO_EXECUTE]


__all__ = ["RUNNING", "Simulation"]
