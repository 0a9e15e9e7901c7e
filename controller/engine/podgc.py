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

The client. Every request goes through the ``pod-garbage-collector`` clientset
(``startPodGCController``: ``ClientBuilder.ClientOrDie("pod-garbage-collector")``, every
release) at ``--kube-api-qps``/``--kube-api-burst``, and waits for its token (client.py): the
status PATCH and the DELETE of each force delete, and discoverDeletedNodes' GET of each node
name (checkIfNodeExists). gcTerminated and gcTerminating delete from one goroutine per pod and
wait for all (``sync.WaitGroup``); gcOrphaned and gcUnscheduledTerminating one pod after
another. The pass ends with its last request, and the next starts ``gcCheckPeriod`` after that
(``wait.UntilWithContext`` is sliding), so a pass with 1,000 deletes to make delays the next.
What each step acts on is the lists of the pass's start (Go's listers); a request for a pod gone
by its instant still takes its token (the API answers NotFound).

Timeline: ``PodDeleted`` {by: PodGC, reason: OrphanedPod | TerminatingOutOfService |
TerminatedPodThreshold | UnscheduledTerminating} (also when the pod was already Terminating:
PodGC issues its own DELETE with grace 0), then ``PodRemoved``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

from .client import Client, Parallel, Requests, Step
from .clock import SECOND, next_on_grid
from .core import Phase
from .objects import READY, TAINT_OUT_OF_SERVICE, Pod

if TYPE_CHECKING:
    from collections.abc import Callable

    from .core import Handle
    from .simulation import Simulation

GC_CHECK_PERIOD_MS = 20 * SECOND  # gcCheckPeriod
QUARANTINE_TIME_MS = 40 * SECOND  # quarantineTime
TERMINATED_POD_THRESHOLD = 12500  # kube-controller-manager --terminated-pod-gc-threshold


@dataclass(slots=True)
class GcLists:
    """What one gc pass acts on, listed at its start (the podLister's and nodeLister's
    List): the pods over the threshold for gcTerminated (empty below it), the terminating
    pods of out-of-service nodes, the orphans, the unscheduled terminating pods, and the node
    names that existed."""

    terminated: list[Pod] = field(default_factory=list)
    out_of_service: list[Pod] = field(default_factory=list)
    orphans: list[Pod] = field(default_factory=list)
    unscheduled: list[Pod] = field(default_factory=list)
    existing: frozenset[str] = frozenset()


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
        self.stopped = False
        self._done: Callable[[], None] | None = None  # the running pass's continuation
        self.client = self._new_client()
        self.passes = 0
        self.longest_pass = (0, 0)  # (start, end) of the longest gc pass so far
        self._pass_start = 0

    # -- the client ---------------------------------------------------------------------------
    def _new_client(self) -> Client:
        cm = self.sim.config.controller_manager
        self._client_params = (cm.kube_api_qps, cm.kube_api_burst)
        return Client("pod-garbage-collector", *self._client_params)

    def _check_client(self) -> None:
        """A changed --kube-api-qps/-burst takes effect as a restarted
        kube-controller-manager's would: a new clientset with a full bucket."""
        cm = self.sim.config.controller_manager
        if (cm.kube_api_qps, cm.kube_api_burst) != self._client_params:
            self.client = self._new_client()

    # -- loop ---------------------------------------------------------------------------------
    def run(self, now: int) -> None:
        """Port of PodGCController.Run (gc_controller.go): ``go wait.UntilWithContext(ctx,
        gcc.gc, gcc.gcCheckPeriod)``, the first pass at the start, then every 20 s."""
        self._schedule(next_on_grid(now, self.started_ms, GC_CHECK_PERIOD_MS))

    def stop(self) -> None:
        self.stopped = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self, at: int) -> None:
        self._handle = self.sim.sched.schedule(at, Phase.WORKLOADS, self._tick)

    def _tick(self) -> None:
        now = self.sim.now_ms
        self._handle = None
        self._pass_start = now
        self._check_client()
        self.gc(now, self._pass_done)

    def _pass_done(self) -> None:
        """``wait.UntilWithContext`` (sliding): the next pass a period after this one ended."""
        now = self.sim.now_ms
        self.passes += 1
        if now - self._pass_start > self.longest_pass[1] - self.longest_pass[0]:
            self.longest_pass = (self._pass_start, now)
        if not self.stopped:
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
    def gc(self, now: int, done: Callable[[], None] | None = None) -> None:
        """Port of PodGCController.gc (gc_controller.go): Go lists every pod once and hands
        the list to each step (``gc_listed``, the straightforward loop). ``gc_indexed`` gives
        each step, from the store's indexes, the same pods in the same (key) order, without a
        scan of every pod every 20 s. The steps run one after another, each once the
        requests of the one before were made; ``done`` runs after the last."""
        lists = self.gc_indexed() if self.sim.shortcuts else self.gc_listed()
        if lists.orphans or self.waiting or self.queue:
            lists.existing = frozenset(self.sim.cluster.nodes)
        self._done = done
        self.gc_terminated(lists)

    def gc_listed(self) -> GcLists:
        """The steps' pods from the list of every pod, sorted by key."""
        cluster = self.sim.cluster
        pods = [cluster.pods[k] for k in sorted(cluster.pods)]
        out = GcLists()
        terminating = [p for p in pods if p.deletion_ms is not None]
        if 0 < self.terminated_pod_threshold < len(pods):
            out.terminated = self._excess([p for p in pods if _is_terminated(p)])
        if self.sim.config.profile.pod_gc_out_of_service:
            out.out_of_service = self._out_of_service(terminating)
        out.orphans = [p for p in pods if p.node_name and p.node_name not in cluster.nodes]
        out.unscheduled = [p for p in terminating if not p.node_name]
        return out

    def gc_indexed(self) -> GcLists:
        """The steps' pods from the store's indexes: gcTerminated's only when the pods in a
        terminal phase (the store's ``terminated`` index) are more than its threshold;
        gcTerminating's from the pods of the not-Ready nodes with the out-of-service taint
        (pods by node name); gcOrphaned's from the pods bound to a name no node has;
        gcUnscheduledTerminating's from the terminating pods with no node."""
        cluster = self.sim.cluster
        by_key = attrgetter("key")
        out = GcLists()
        if self.sim.config.profile.pod_gc_out_of_service:
            out.out_of_service = self._out_of_service(
                sorted(
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
            )
        out.orphans = sorted(
            (
                pod
                for name, pods in cluster.pods_by_node.items()
                if name not in cluster.nodes
                for pod in pods.values()
            ),
            key=by_key,
        )
        out.unscheduled = sorted(
            (p for p in cluster.terminating.values() if not p.node_name), key=by_key
        )
        threshold = self.terminated_pod_threshold
        if 0 < threshold < len(cluster.pods) and len(cluster.terminated) > threshold:
            out.terminated = self._excess(
                [cluster.terminated[k] for k in sorted(cluster.terminated)]
            )
        return out

    def _excess(self, terminated: list[Pod]) -> list[Pod]:
        """gcTerminated's choice: keep at most terminatedPodThreshold pods in phase Failed or
        Succeeded; the rest, evicted ones first, then oldest (byEvictionAndCreationTimestamp)."""
        excess = len(terminated) - self.terminated_pod_threshold
        if excess <= 0:
            return []
        terminated.sort(key=_eviction_and_creation_order)
        return terminated[:excess]

    def _out_of_service(self, terminating: list[Pod]) -> list[Pod]:
        """gcTerminating's choice: a pod with a deletionTimestamp whose node exists, is not
        Ready (nodeutil.IsNodeReady: Ready=True) and has a taint with key
        node.kubernetes.io/out-of-service (taints.TaintKeyExists: any value, any effect)."""
        found: list[Pod] = []
        for pod in terminating:
            node = self.sim.cluster.nodes.get(pod.node_name)
            if node is None:  # nodeLister.Get failed: logged, skipped
                continue
            if not _node_ready(node) and any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints):
                found.append(pod)
        found.sort(key=_eviction_and_creation_order)
        return found

    def _parallel(self, pods: list[Pod], reason: str, then: Callable[[], None]) -> None:
        """One goroutine per pod, each ``markFailedAndDeletePod``, then ``wait.Wait()``."""
        if not pods:
            then()
            return
        Parallel(then).run(
            self.client,
            self.sim.sched,
            Phase.WORKLOADS,
            self,
            [self.force_delete_steps(p, reason) for p in pods],
        )

    def _one_by_one(self, steps: list[Step], then: Callable[[], None]) -> None:
        if not steps:
            then()
            return
        Requests(self.client, self.sim.sched, Phase.WORKLOADS, self, steps, then).run()

    def gc_terminated(self, lists: GcLists) -> None:
        """Port of PodGCController.gcTerminated: the pods over the threshold, deleted from one
        goroutine each (they are Failed or Succeeded already: the DELETE alone)."""
        self._parallel(
            lists.terminated, "TerminatedPodThreshold", partial(self.gc_terminating, lists)
        )

    def gc_terminating(self, lists: GcLists) -> None:
        """Port of PodGCController.gcTerminating (NodeOutOfServiceVolumeDetach): force-delete
        the terminating pods of out-of-service nodes, one goroutine each. No DisruptionTarget
        condition (markFailedAndDeletePod passes none)."""
        self._parallel(
            lists.out_of_service, "TerminatingOutOfService", partial(self.gc_orphaned, lists)
        )

    def gc_orphaned(self, lists: GcLists) -> None:
        """Port of PodGCController.gcOrphaned: quarantine the node names pods are bound to that
        the lister did not have (AddAfter 40 s), then delete the pods of the names
        discoverDeletedNodes confirms gone, one after another."""
        now = self.sim.now_ms
        for pod in lists.orphans:
            if pod.node_name and pod.node_name not in lists.existing:
                self._add_after(pod.node_name, QUARANTINE_TIME_MS, now)
        self._promote(now)
        deleted: set[str] = set()
        gets = self.discover_deleted_nodes(lists.existing, deleted)
        self._one_by_one(gets, partial(self._delete_orphans, lists, deleted))

    def discover_deleted_nodes(self, existing: frozenset[str], deleted: set[str]) -> list[Step]:
        """Port of PodGCController.discoverDeletedNodes: every name the queue hands out that
        the pass's node list did not have is looked up (checkIfNodeExists: a GET through the
        client); a NotFound counts it as deleted. Returns the GETs to make."""
        gets: list[Step] = []
        while self.queue:
            name = self.queue.pop(0)
            if name not in existing:
                gets.append((self._check_if_node_exists, (name, deleted)))
        return gets

    def _check_if_node_exists(self, now: int, name: str, deleted: set[str]) -> None:
        """checkIfNodeExists: ``Nodes().Get(name)`` at its token's instant."""
        if name not in self.sim.cluster.nodes:
            deleted.add(name)

    def _delete_orphans(self, lists: GcLists, deleted: set[str]) -> None:
        steps: list[Step] = []
        for pod in lists.orphans:
            if pod.node_name in deleted:
                steps += self.force_delete_steps(
                    pod, "OrphanedPod", ("DeletionByPodGC", "PodGC: node no longer exists")
                )
        self._one_by_one(steps, partial(self.gc_unscheduled_terminating, lists))

    def gc_unscheduled_terminating(self, lists: GcLists) -> None:
        """Port of PodGCController.gcUnscheduledTerminating: a pod with a deletionTimestamp and
        no nodeName is force-deleted. (The API server removes an unbound pod at once on its
        DELETE, check_graceful_delete gives it grace 0, so this finds none here.)"""
        steps: list[Step] = []
        for pod in lists.unscheduled:
            steps += self.force_delete_steps(pod, "UnscheduledTerminating")
        self._one_by_one(steps, self._gc_done)

    def _gc_done(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done()

    # -- markFailedAndDeletePodWithCondition ----------------------------------------------------
    def force_delete_steps(
        self, pod: Pod, reason: str, condition: tuple[str, str] | None = None
    ) -> list[Step]:
        """Port of markFailedAndDeletePodWithCondition: the status PATCH to phase Failed (with
        the condition, if any) unless the listed pod is Succeeded or Failed, then DELETE with
        grace 0: two requests, the second only if the first succeeded. 1.18's deletePod only
        deletes (Profile.pod_gc_marks_failed)."""
        if self.sim.config.profile.pod_gc_marks_failed and pod.phase not in (
            "Succeeded",
            "Failed",
        ):
            return [(self._patch_failed, (pod, reason, condition))]
        return [(self._force_delete, (pod, reason))]

    def _patch_failed(
        self, now: int, pod: Pod, reason: str, condition: tuple[str, str] | None
    ) -> list[Step] | None:
        """utilpod.PatchPodStatus at its token's instant: a pod gone (or another of that name:
        the patch's UID precondition) fails it, and no DELETE follows."""
        cluster = self.sim.cluster
        if cluster.pods.get(pod.key) is not pod:
            return None
        if condition is not None:
            cluster.set_disruption_target(pod, now, *condition)
        if pod.key in cluster.pods:
            cluster.set_pod_phase(pod, "Failed", now, pod.reason, pod.message)
        return [(self._force_delete, (pod, reason))]

    def _force_delete(self, now: int, pod: Pod, reason: str) -> None:
        """``Pods(ns).Delete(name, NewDeleteOptions(0))`` at its token's instant."""
        cluster = self.sim.cluster
        if cluster.pods.get(pod.key) is not pod:
            return
        if not cluster.delete_pod(pod, now, "PodGC", reason, grace_s=0):
            # Already Terminating: PodGC's DELETE with grace 0 shortens its grace to nothing.
            cluster.timeline.emit(
                now, "PodDeleted", pod=pod.key, node=pod.node_name, by="PodGC", reason=reason
            )
        cluster.remove_pod(pod, now)


def _is_terminated(pod: Pod) -> bool:
    """isPodTerminated: phase not Pending, Running or Unknown."""
    return pod.phase not in ("Pending", "Running", "Unknown")


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
