"""The pod garbage collector of kube-controller-manager (pkg/controller/podgc/gc_controller.go).

``PodGCController.Run`` starts ``gc`` with ``wait.UntilWithContext`` every ``gcCheckPeriod``
(20 s) from the controller manager's start: here the passes sit on the grid 0, 20 s, 40 s, ...
of the simulation (or of the last RestartControllerManager). Each pass lists pods and nodes
from the informers and runs, in this order:

- ``gcTerminated``: above ``terminatedPodThreshold`` (12500) Failed/Succeeded pods, force-delete
  the oldest (evicted first) down to the threshold;
- ``gcTerminating`` (NodeOutOfServiceVolumeDetach, GA 1.28; Profile.pod_gc_out_of_service):
  force-delete terminating pods whose node is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint (any effect);
- ``gcOrphaned``: a node name a pod is bound to that the node lister does not have goes into a
  delaying queue for ``quarantineTime`` (40 s); at a later pass, once the queue hands it out and
  the node is still gone (``discoverDeletedNodes``), that node's pods are force-deleted (1.18
  and later alike);
- ``gcUnscheduledTerminating``: force-delete terminating pods that were never bound.

A force delete is ``markFailedAndDeletePodWithCondition``: in releases that have it
(Profile.pod_gc_marks_failed, 1.26+) the pod's phase is patched to Failed first (orphans also get
the DisruptionTarget condition DeletionByPodGC), then DELETE with grace 0 removes the object.

Timeline: ``PodDeleted`` {by: PodGC, reason: OrphanedPod | TerminatingOutOfService |
TerminatedPodThreshold | UnscheduledTerminating} (also when the pod was already Terminating:
PodGC issues its own DELETE with grace 0), then ``PodRemoved``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from .clock import SECOND, next_on_grid
from .core import Phase
from .objects import READY, TAINT_OUT_OF_SERVICE, Pod

if TYPE_CHECKING:
    from .core import Handle
    from .simulation import Simulation

GC_CHECK_PERIOD_MS = 20 * SECOND  # gcCheckPeriod
QUARANTINE_TIME_MS = 40 * SECOND  # quarantineTime
TERMINATED_POD_THRESHOLD = 12500  # kube-controller-manager --terminated-pod-gc-threshold


class PodGCController:
    """One PodGCController: its 20 s loop and its ``orphaned_pods_nodes`` delaying queue."""

    def __init__(self, sim: Simulation, started_ms: int) -> None:
        self.sim = sim
        self.started_ms = started_ms
        self.terminated_pod_threshold = TERMINATED_POD_THRESHOLD
        # workqueue.TypedDelayingInterface[string]: waiting (name -> readyAt) and the queue
        # proper (names handed out by Get, in the order they became ready).
        self.waiting: dict[str, int] = {}
        self.queue: list[str] = []
        self._handle: Handle | None = None
        self._stopped = False

    # -- loop ---------------------------------------------------------------------------------
    def run(self, now: int) -> None:
        """Port of PodGCController.Run (gc_controller.go): ``go wait.UntilWithContext(ctx,
        gcc.gc, gcc.gcCheckPeriod)``, the first pass at the start, then every 20 s."""
        self._schedule(next_on_grid(now, self.started_ms, GC_CHECK_PERIOD_MS))

    def stop(self) -> None:
        self._stopped = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self, at: int) -> None:
        self._handle = self.sim.sched.schedule(at, Phase.WORKLOADS, self._tick)

    def _tick(self) -> None:
        now = self.sim.now_ms
        self._handle = None
        self.gc(now)
        if not self._stopped:
            self._schedule(now + GC_CHECK_PERIOD_MS)

    # -- the delaying queue -------------------------------------------------------------------
    def _add_after(self, name: str, delay_ms: int, now: int) -> None:
        """Port of delayingType.AddAfter (client-go util/workqueue/delaying_queue.go): an item
        already waiting keeps the earlier readyAt."""
        ready_at = now + delay_ms
        prev = self.waiting.get(name)
        if prev is None or ready_at < prev:
            self.waiting[name] = ready_at

    def _promote(self, now: int) -> None:
        """Port of delayingType.waitingLoop (delaying_queue.go): every item whose readyAt has come is Added to the queue
        (which dedups). Passes drift a little later each round (UntilWithContext is sliding:
        the period starts after gc returns), so an item added one pass ago with a 40 s delay
        is ready when the pass two periods later lists it: readyAt <= now counts as ready."""
        for name, ready_at in sorted(self.waiting.items(), key=lambda kv: (kv[1], kv[0])):
            if ready_at <= now:
                del self.waiting[name]
                if name not in self.queue:
                    self.queue.append(name)

    # -- gc -------------------------------------------------------------------------------------
    def gc(self, now: int) -> None:
        """Port of PodGCController.gc (gc_controller.go): Go lists every pod once and hands
        the list to each step (``gc_listed``, the straightforward loop). ``gc_indexed`` gives
        each step, from the store's indexes, the same pods in the same (key) order, without a
        scan of every pod every 20 s."""
        self._promote(now)
        if self.sim.shortcuts:
            self.gc_indexed(now)
        else:
            self.gc_listed(now)

    def gc_listed(self, now: int) -> None:
        """The steps over the list of every pod, sorted by key."""
        cluster = self.sim.cluster
        pods = [cluster.pods[k] for k in sorted(cluster.pods)]
        terminating = [p for p in pods if p.deletion_ms is not None]
        orphans = [p for p in pods if p.node_name and p.node_name not in cluster.nodes]
        if 0 < self.terminated_pod_threshold < len(pods):
            self.gc_terminated(pods, now)
        if self.sim.config.profile.pod_gc_out_of_service:
            self.gc_terminating(terminating, now)
        self.gc_orphaned(orphans, now)
        self.gc_unscheduled_terminating(terminating, now)

    def gc_indexed(self, now: int) -> None:
        """The steps over the pods they can act on: gcTerminated runs only when the pods in a
        terminal phase (the store's ``terminated`` index) are more than its threshold;
        gcTerminating gets the terminating pods of the not-Ready nodes with the
        out-of-service taint (pods by node name); gcOrphaned the pods bound to a name no
        node has; gcUnscheduledTerminating the terminating pods with no node. Each list is
        made before the first step runs, as Go's one list is."""
        cluster = self.sim.cluster
        by_key = attrgetter("key")
        out_of_service: list[Pod] = []
        if self.sim.config.profile.pod_gc_out_of_service:
            out_of_service = sorted(
                (
                    pod
                    for name, node in cluster.nodes.items()
                    if any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints)
                    and not _node_ready(node)
                    for pod in cluster.pods_by_node.get(name, {}).values()
                    if pod.deletion_ms is not None
                ),
                key=by_key,
            )
        orphans = sorted(
            (
                pod
                for name, pods in cluster.pods_by_node.items()
                if name not in cluster.nodes
                for pod in pods.values()
            ),
            key=by_key,
        )
        unscheduled = sorted(
            (p for p in cluster.terminating.values() if not p.node_name), key=by_key
        )
        threshold = self.terminated_pod_threshold
        if 0 < threshold < len(cluster.pods) and len(cluster.terminated) > threshold:
            self.gc_terminated([cluster.terminated[k] for k in sorted(cluster.terminated)], now)
        if self.sim.config.profile.pod_gc_out_of_service:
            self.gc_terminating(out_of_service, now)
        self.gc_orphaned(orphans, now)
        self.gc_unscheduled_terminating(unscheduled, now)

    def gc_terminated(self, pods: list[Pod], now: int) -> None:
        """Port of PodGCController.gcTerminated: keep at most terminatedPodThreshold pods in
        phase Failed or Succeeded; delete the rest, evicted ones first, then oldest."""
        terminated = [p for p in pods if p.phase not in ("Pending", "Running", "Unknown")]
        excess = len(terminated) - self.terminated_pod_threshold
        if excess <= 0:
            return
        terminated.sort(key=_eviction_and_creation_order)
        for pod in terminated[:excess]:
            self.mark_failed_and_delete(pod, now, "TerminatedPodThreshold")

    def gc_terminating(self, pods: list[Pod], now: int) -> None:
        """Port of PodGCController.gcTerminating (NodeOutOfServiceVolumeDetach): a pod with a
        deletionTimestamp whose node exists, is not Ready (nodeutil.IsNodeReady: Ready=True) and
        has a taint with key node.kubernetes.io/out-of-service (taints.TaintKeyExists: any
        value, any effect) is force-deleted. No DisruptionTarget condition
        (markFailedAndDeletePod passes none)."""
        found: list[Pod] = []
        for pod in pods:
            if pod.deletion_ms is None:
                continue
            node = self.sim.cluster.nodes.get(pod.node_name)
            if node is None:  # nodeLister.Get failed: logged, skipped
                continue
            if not _node_ready(node) and any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints):
                found.append(pod)
        found.sort(key=_eviction_and_creation_order)
        for pod in found:
            self.mark_failed_and_delete(pod, now, "TerminatingOutOfService")

    def gc_orphaned(self, pods: list[Pod], now: int) -> None:
        """Port of PodGCController.gcOrphaned: quarantine the node names pods are bound to that
        the lister does not have (AddAfter 40 s), then delete the pods of the names
        discoverDeletedNodes confirms gone."""
        existing = self.sim.cluster.nodes
        for pod in pods:
            if pod.node_name and pod.node_name not in existing:
                self._add_after(pod.node_name, QUARANTINE_TIME_MS, now)
        deleted = self.discover_deleted_nodes(now)
        for pod in pods:
            if pod.node_name not in deleted or pod.key not in self.sim.cluster.pods:
                continue
            self.mark_failed_and_delete(
                pod, now, "OrphanedPod", ("DeletionByPodGC", "PodGC: node no longer exists")
            )

    def discover_deleted_nodes(self, now: int) -> set[str]:
        """Port of PodGCController.discoverDeletedNodes: every name the queue hands out that
        is still not a node (checkIfNodeExists: a GET, here the store) counts as deleted."""
        deleted: set[str] = set()
        while self.queue:
            name = self.queue.pop(0)
            if name not in self.sim.cluster.nodes:
                deleted.add(name)
        return deleted

    def gc_unscheduled_terminating(self, pods: list[Pod], now: int) -> None:
        """Port of PodGCController.gcUnscheduledTerminating: a pod with a deletionTimestamp and
        no nodeName is force-deleted. (The API server removes an unbound pod at once on its
        DELETE, check_graceful_delete gives it grace 0, so this finds none here.)"""
        for pod in pods:
            if pod.deletion_ms is None or pod.node_name:
                continue
            if pod.key in self.sim.cluster.pods:
                self.mark_failed_and_delete(pod, now, "UnscheduledTerminating")

    def mark_failed_and_delete(
        self, pod: Pod, now: int, reason: str, condition: tuple[str, str] | None = None
    ) -> None:
        """Port of markFailedAndDeletePodWithCondition: patch phase Failed (with the condition,
        if any) unless Succeeded or Failed, then DELETE with grace 0. 1.18's deletePod only
        deletes (Profile.pod_gc_marks_failed)."""
        cluster = self.sim.cluster
        profile = self.sim.config.profile
        if profile.pod_gc_marks_failed and pod.phase not in ("Succeeded", "Failed"):
            if condition is not None:
                cluster.set_disruption_target(pod, now, *condition)
            if pod.key in cluster.pods:
                cluster.set_pod_phase(pod, "Failed", now, pod.reason, pod.message)
        if pod.key not in cluster.pods:
            return
        if not cluster.delete_pod(pod, now, "PodGC", reason, grace_s=0):
            # Already Terminating: PodGC's DELETE with grace 0 shortens its grace to nothing.
            cluster.timeline.emit(
                now, "PodDeleted", pod=pod.key, node=pod.node_name, by="PodGC", reason=reason
            )
        cluster.remove_pod(pod, now)


def _node_ready(node: object) -> bool:
    """nodeutil.IsNodeReady: the Ready condition is True."""
    for c in getattr(node, "conditions", []):
        if c.type == READY:
            return c.status == "True"
    return False


def _eviction_and_creation_order(pod: Pod) -> tuple[bool, int, str]:
    """byEvictionAndCreationTimestamp: evicted pods (reason Evicted) first, then oldest,
    then by name."""
    return (pod.reason != "Evicted", pod.creation_ms, pod.name)
