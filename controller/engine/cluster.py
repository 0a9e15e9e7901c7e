"""The object store (the simulated API server): nodes, pods, leases, with a
pods-by-node index. Every write records its timeline event and then runs the
informer reactions at the same instant, right after the write (design.md, "Time").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .events import SCHEDULER, Correlated, EventCorrelator, correlated_row, event_source
from .objects import (
    NO_EXECUTE,
    NODE_CONDITION_TYPES,
    READY,
    Node,
    NodeCondition,
    Pod,
    Taint,
)
from .timeline import Timeline

if TYPE_CHECKING:
    from .simulation import Simulation
    from .versions import Profile


# A correlated call not skipped: (object, reason, message, type, EventCorrelate's result; None
# for kube-scheduler's, which have no correlator), written by Cluster.store_event.
PendingEvent = tuple[str, str, str, str, Correlated | None]

LIVE_PHASES = ("Pending", "Running", "Unknown")  # the others are terminal (isPodTerminated)


class Cluster:
    """API objects and the writes the components make to them."""

    def __init__(self, sim: Simulation, timeline: Timeline) -> None:
        self.sim = sim
        self.timeline = timeline
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.pods_by_node: dict[str, dict[str, Pod]] = {}
        self.terminating: dict[str, Pod] = {}  # pods with a deletionTimestamp (PodGC's index)
        # The pods in a terminal phase (Failed, Succeeded), by key: PodGC's gcTerminated
        # index, kept on every phase write.
        self.terminated: dict[str, Pod] = {}
        # What existed and is gone: node names and their zones, pod keys. A scenario's fault
        # that names one of them is refused at its instant and the run goes on
        # (Simulation.apply_fault); one that names what never existed is the file's error.
        self.gone: set[str] = set()
        self._uid = 0
        # One EventCorrelator per recorder (component, host), as each builds its own.
        self.correlators: dict[tuple[str, str], EventCorrelator] = {}

    # -- identity -------------------------------------------------------------------
    def new_uid(self, kind: str) -> str:
        self._uid += 1
        return kind.lower() + "-" + str(self._uid).zfill(8)  # f"{kind}-{uid:08d}", uid > 0

    # -- events ---------------------------------------------------------------------
    def record_event(
        self,
        now_ms: int,
        obj: str,
        reason: str,
        message: str,
        event_type: str = "Normal",
        host: str | None = None,
        component: str | None = None,
    ) -> None:
        """A call to a recorder (record.EventRecorder.Event; ``host``: the kubelet's node)
        correlated and written in the same instant (a component whose client is not
        simulated): one timeline row per call, the Event the API stores (``K8sEvent``, with
        ``count`` when it patches a repeat) or a ``K8sEventDropped``. kube-scheduler's
        (tools/events) are stored one per call."""
        pending = self.correlate_event(now_ms, obj, reason, message, event_type, host, component)
        if pending is not None:
            self.store_event(now_ms, pending)

    def correlate_event(
        self,
        now_ms: int,
        obj: str,
        reason: str,
        message: str,
        event_type: str = "Normal",
        host: str | None = None,
        component: str | None = None,
        recorded_ms: int | None = None,
    ) -> PendingEvent | None:
        """recordToSink's first step, at the instant its goroutine takes the call from the
        queue: the recorder's EventCorrelator.EventCorrelate (events.py) for a call recorded
        at ``recorded_ms`` (default now). A call the spam filter skips (``result.Skip``) is its
        ``K8sEventDropped`` row now and None: no request is made. Else what ``store_event``
        writes when its request is made."""
        source = event_source(reason, obj, host, component)
        result = None
        if source[0] != SCHEDULER:
            correlator = self.correlators.get(source)
            if correlator is None:
                correlator = self.correlators[source] = EventCorrelator()
            result = correlator.correlate(now_ms, obj, reason, message, event_type, recorded_ms)
            if result.skip:
                self.timeline.add(correlated_row(now_ms, obj, reason, message, event_type, result))
                return None
        return obj, reason, message, event_type, result

    def store_event(self, now_ms: int, pending: PendingEvent) -> None:
        """recordEvent: the correlated Event created (or patched: a repeat) at ``now_ms``,
        the instant its request is made."""
        self.timeline.add(correlated_row(now_ms, *pending))

    # -- nodes ----------------------------------------------------------------------
    def add_node(self, node: Node, now_ms: int) -> None:
        self.nodes[node.name] = node
        self.pods_by_node.setdefault(node.name, {})
        self.sim.on_node_added(node, now_ms)

    def delete_node(self, name: str, now_ms: int) -> None:
        node = self.nodes.pop(name, None)
        if node is None:
            return
        from .nodelifecycle.zones import zone_display

        self.gone.add(f"node:{name}")
        for zone in (zone_display(node.zone_key), node.labels.get("topology.kubernetes.io/zone")):
            if zone:
                self.gone.add(f"zone:{zone}")
        self.sim.on_node_deleted(node, now_ms)

    def pods_on_node(self, name: str) -> list[Pod]:
        """Pods bound to the node, in a stable (creation) order."""
        return list(self.pods_by_node.get(name, {}).values())

    def set_node_conditions(
        self,
        node: Node,
        conditions: list[NodeCondition],
        now_ms: int,
        notify: bool = True,
        by_kubelet: bool = False,
    ) -> None:
        """UpdateStatus on a node: replace its conditions, record status changes. A write by
        anyone but the node's own kubelet is what that kubelet's next status check compares
        its status with (Kubelet.api_status_written)."""
        old = {c.type: c for c in node.conditions}
        node.conditions = conditions
        self.sim.on_node_written(node)
        changed = False
        for c in conditions:
            prev = old.get(c.type)
            if prev is None or prev.status != c.status:
                changed = True
                if c.type == READY:
                    self.timeline.emit(
                        now_ms, "NodeReady", node=node.name, status=c.status, reason=c.reason
                    )
                elif c.type in NODE_CONDITION_TYPES:
                    self.timeline.emit(
                        now_ms, "NodeCondition", node=node.name, condition=c.type, status=c.status
                    )
        if notify:
            self.sim.on_node_status_updated(node, now_ms, changed)
        if not by_kubelet:
            kubelet = self.sim.kubelets.get(node.name)
            if kubelet is not None:
                kubelet.api_status_written(now_ms)

    def set_unschedulable(self, node: Node, value: bool, now_ms: int) -> None:
        if node.unschedulable == value:
            return
        node.unschedulable = value
        self.sim.on_node_spec_updated(node, now_ms)

    def set_node_labels(self, node: Node, changes: dict[str, str | None], now_ms: int) -> None:
        """An update of the node's metadata.labels: each key set to its value, or removed
        (None). The informers' UpdateFunc then reacts to the new labels."""
        labels = dict(node.labels)
        for key, value in changes.items():
            if value is None:
                labels.pop(key, None)
            else:
                labels[key] = value
        if labels == node.labels:
            return
        self.sim.on_node_written(node)
        node.labels = labels
        self.sim.on_node_labels_updated(node, now_ms)

    def swap_node_taints(
        self, node: Node, add: Iterable[Taint], remove: Iterable[Taint], now_ms: int
    ) -> bool:
        """Port of controllerutil.SwapNodeControllerTaint (AddOrUpdateTaintOnNode then
        RemoveTaintOffNode): taints to add get ``timeAdded = now``. Returns True on success.

        Linear in the node's taints plus those given: a node's taints are unique by key and
        effect (MatchTaint; the API server refuses duplicates), so they are looked up in a dict
        by (key, effect), kept in insertion order, and written back once. An updated value
        moves the taint to the end, as before. (Before, each taint given searched the list and
        list.remove shifted it: 10,000 taints in one Taint fault kept a worker busy 70 s.)"""
        noexec_before = [(t.key, t.value) for t in node.taints if t.effect == NO_EXECUTE]
        self.sim.on_node_written(node)
        taints = {(t.key, t.effect): t for t in node.taints}
        changed = False
        for t in add:
            k = (t.key, t.effect)
            existing = taints.get(k)
            if existing is not None:
                if existing.value == t.value:
                    continue
                del taints[k]
            taints[k] = Taint(t.key, t.effect, t.value, now_ms)
            changed = True
            self.timeline.emit(now_ms, "TaintAdded", node=node.name, key=t.key, effect=t.effect)
        for t in remove:
            if taints.pop((t.key, t.effect), None) is None:
                continue
            changed = True
            self.timeline.emit(now_ms, "TaintRemoved", node=node.name, key=t.key, effect=t.effect)
        if changed:
            node.taints[:] = taints.values()
        noexec_after = [(t.key, t.value) for t in node.taints if t.effect == NO_EXECUTE]
        if noexec_before != noexec_after:
            self.sim.on_node_noexecute_taints_changed(node, now_ms)
        self.sim.on_node_taints_changed(node, now_ms)
        return True

    # -- pods -----------------------------------------------------------------------
    def _phase_written(self, pod: Pod) -> None:
        self.sim.admission_changed(pod)
        if pod.phase not in LIVE_PHASES:
            if self.pods.get(pod.key) is pod:
                self.terminated[pod.key] = pod
        elif self.terminated.get(pod.key) is pod:
            del self.terminated[pod.key]

    def add_pod(self, pod: Pod, now_ms: int, notify: bool = True) -> None:
        """Create a pod (after admission). A pod with nodeName set is bound already. Without
        ``notify`` the informers' add handlers (Simulation.on_pod_added) are the caller's
        (WorkloadControllers._create_replicas: one scheduler wake for a burst)."""
        self.pods[pod.key] = pod
        if pod.phase not in LIVE_PHASES:
            self.terminated[pod.key] = pod
        owner = pod.owner.ref() if pod.owner is not None else None
        self.timeline.add({"t": now_ms, "type": "PodCreated", "pod": pod.key, "owner": owner})
        if pod.node_name:
            self.pods_by_node.setdefault(pod.node_name, {})[pod.key] = pod
            self.sim.admission_changed(pod)
        if notify:
            self.sim.on_pod_added(pod, now_ms)

    def bind_pod(self, pod: Pod, node_name: str, now_ms: int) -> None:
        """The scheduler's Bind: sets spec.nodeName."""
        pod.node_name = node_name
        pod.unschedulable_reason = ""
        on_node = self.pods_by_node.get(node_name)
        if on_node is None:
            on_node = self.pods_by_node[node_name] = {}
        on_node[pod.key] = pod
        self.sim.admission_changed(pod)
        self.timeline.add({"t": now_ms, "type": "PodScheduled", "pod": pod.key, "node": node_name})
        self.record_event(
            now_ms,
            f"Pod/{pod.key}",
            "Scheduled",
            f"Successfully assigned {pod.key} to {node_name}",
        )
        self.sim.on_pod_bound(pod, now_ms)

    def set_pod_ready(self, pod: Pod, ready: bool, now_ms: int, by_kubelet: bool = False) -> None:
        """The pod's Ready condition. Written by anyone but the kubelet (MarkPodsNotReady), it
        is what the kubelet's status manager reconciles with its own (StatusManager)."""
        if pod.ready is ready:
            return
        pod.ready = ready
        self.timeline.emit(now_ms, "PodReady", pod=pod.key, status="True" if ready else "False")
        self.sim.on_pod_status_updated(pod, now_ms)
        if not by_kubelet and pod.node_name and pod.key in self.pods:
            kubelet = self.sim.kubelets.get(pod.node_name)
            if kubelet is not None:
                kubelet.status.api_ready_written(pod, now_ms)

    def set_pod_phase(
        self, pod: Pod, phase: str, now_ms: int, reason: str = "", message: str = ""
    ) -> None:
        if pod.phase == phase and pod.reason == reason and pod.message == message:
            return
        emit = pod.phase != phase or pod.reason != reason
        pod.phase, pod.reason, pod.message = phase, reason, message
        self._phase_written(pod)
        if emit:
            self.timeline.emit(now_ms, "PodPhase", pod=pod.key, phase=phase, reason=reason)
        self.sim.on_pod_status_updated(pod, now_ms)

    def set_pod_status(
        self, pod: Pod, phase: str, now_ms: int, reason: str, message: str, ready: bool | None
    ) -> None:
        """A kubelet's status write (the status manager's syncPod: one PATCH of the phase and,
        when ``ready`` is given, the Ready condition): set_pod_phase's then set_pod_ready's
        changes and events, the informers told once, after both (nothing they do comes
        between the two writes)."""
        changed = False
        if pod.phase != phase or pod.reason != reason or pod.message != message:
            emit = pod.phase != phase or pod.reason != reason
            pod.phase, pod.reason, pod.message = phase, reason, message
            self._phase_written(pod)
            if emit:
                self.timeline.add(
                    {
                        "t": now_ms,
                        "type": "PodPhase",
                        "pod": pod.key,
                        "phase": phase,
                        "reason": reason,
                    }
                )
            changed = True
        if ready is not None and pod.ready is not ready:
            pod.ready = ready
            self.timeline.add(
                {
                    "t": now_ms,
                    "type": "PodReady",
                    "pod": pod.key,
                    "status": "True" if ready else "False",
                }
            )
            changed = True
        if changed:
            self.sim.on_pod_status_updated(pod, now_ms)

    def set_disruption_target(
        self, pod: Pod, now_ms: int, reason: str, message: str, profile: Profile | None = None
    ) -> None:
        """The DisruptionTarget=True pod condition a component writes (a status patch) before
        it deletes or fails a pod for a disruption, in releases with PodDisruptionConditions
        (profile.pod_disruption_conditions; nothing in 1.18): ``profile`` is the writing
        component's release (a kubelet's own), else the control plane's. Reasons are the API's
        constants: DeletionByTaintManager, DeletionByPodGC, TerminationByKubelet,
        PreemptionByScheduler. Timeline: ``PodDisruptionTarget`` {pod, node, reason, message}."""
        if not (profile or self.sim.config.profile).pod_disruption_conditions:
            return
        if pod.key not in self.pods or pod.disruption_target == (reason, message):
            return
        pod.disruption_target = (reason, message)
        self.timeline.emit(
            now_ms,
            "PodDisruptionTarget",
            pod=pod.key,
            node=pod.node_name,
            reason=reason,
            message=message,
        )
        self.sim.on_pod_status_updated(pod, now_ms)

    def delete_pod(
        self,
        pod: Pod,
        now_ms: int,
        by: str,
        reason: str,
        grace_s: int | None = None,
    ) -> bool:
        """DELETE a pod: sets deletionTimestamp (PodDeleted); the pod then terminates on its
        node, or goes at once if it is not bound or its grace is 0 and it is not running.
        Returns False if the pod was already being deleted."""
        if pod.key not in self.pods or pod.deletion_ms is not None:
            return False
        grace = check_graceful_delete(pod, grace_s)
        pod.deletion_ms = now_ms
        self.terminating[pod.key] = pod
        self.sim.admission_changed(pod)
        pod.deletion_grace_s = grace
        self.timeline.emit(
            now_ms, "PodDeleted", pod=pod.key, node=pod.node_name, by=by, reason=reason
        )
        self.sim.on_pod_deleting(pod, now_ms)
        return True

    def remove_pod(self, pod: Pod, now_ms: int) -> None:
        """The pod object is gone (kubelet confirmed, force delete, or garbage collection)."""
        if self.pods.pop(pod.key, None) is None:
            return
        self.gone.add(f"pod:{pod.key}")
        self.terminating.pop(pod.key, None)
        if self.terminated.get(pod.key) is pod:
            del self.terminated[pod.key]
        if pod.node_name:
            self.pods_by_node.get(pod.node_name, {}).pop(pod.key, None)
            self.sim.admission_changed(pod)
        self.timeline.emit(now_ms, "PodRemoved", pod=pod.key, node=pod.node_name)
        self.sim.on_pod_removed(pod, now_ms)


def check_graceful_delete(pod: Pod, grace_s: int | None) -> int:
    """Port of podStrategy.CheckGracefulDelete (pkg/registry/core/pod/strategy.go): the grace
    period a DELETE gets: the one asked for, else the pod's terminationGracePeriodSeconds; 0
    for a pod not scheduled or already terminated (Failed or Succeeded: nothing runs to be
    stopped, so the API server removes it at once); a negative one becomes 1."""
    period = pod.termination_grace_period_s if grace_s is None else grace_s
    if not pod.node_name:
        period = 0
    if pod.phase in ("Failed", "Succeeded"):
        period = 0
    if period < 0:
        period = 1
    return period
