"""NoExecuteTaintManager (pkg/controller/nodelifecycle/scheduler/taint_manager.go, v1.18) and
its successor tainteviction.Controller (pkg/controller/tainteviction/taint_eviction.go, the
taint-eviction-controller, 1.29+): the same rules, with the differences the profile names
(who deletes, the DisruptionTarget condition before the DELETE, forgetting fired work).

Reacts at the instant of a node's NoExecute-taint change or a pod's binding/toleration
change; deletions wait in timers (``TimedWorkerQueue``) on the simulation's heap.

The client. Until 1.28 the NoExecuteTaintManager is built by NewNodeLifecycleController with
the node-controller's clientset (``NewNoExecuteTaintManager(ctx, kubeClient, ...)``): its
requests take tokens from the node-controller's bucket, with the node status updates, taint
patches and MarkPodsNotReady. From 1.29 ``startTaintEvictionController`` gives the
taint-eviction-controller its own
(``ClientBuilder.ClientOrDie(names.TaintEvictionController)``), at the same
``--kube-api-qps``/``--kube-api-burst``. Either way its events go through its own broadcaster
(``StartRecordingToSink`` on that client: one sink goroutine), and each fired timer is a
goroutine of its own (``time.AfterFunc``) that waits for its requests' tokens
(``deletePodHandler``): the DELETE (1.18); with PodDisruptionConditions (1.26+,
``addConditionAndDeletePod``) a GET, the DisruptionTarget status PATCH when the condition is
new, then the DELETE. A failed attempt (the pod gone: NotFound) is tried again after 10 ms, 5
attempts in all (``retries``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..client import SLEEP, Client, EventSink, Requests, Step
from ..core import Handle, Phase
from ..objects import NO_EXECUTE, Pod, Taint, Toleration

# addConditionAndDeletePod (taint_eviction.go): the DisruptionTarget condition it patches.
DISRUPTION_REASON = "DeletionByTaintManager"
DISRUPTION_MESSAGE = "Taint manager: deleting due to NoExecute taint"
RETRIES = 5  # retries (taint_manager.go, taint_eviction.go)
RETRY_SLEEP_MS = 10  # time.Sleep(10 * time.Millisecond) between attempts

if TYPE_CHECKING:
    from ..simulation import Simulation


@dataclass(slots=True)
class TimedWork:
    """timedWorker: created_at and fire_at of one scheduled deletion (``handle`` None once
    fired: the key is kept, blocking re-adds, until a cancel)."""

    created_ms: int
    fire_ms: int
    handle: Handle | None


def get_matching_tolerations(
    taints: list[Taint], tolerations: list[Toleration]
) -> tuple[bool, list[Toleration]]:
    """Port of v1helper.GetMatchingTolerations: for each taint the first toleration that
    tolerates it; (False, []) if any taint is not tolerated."""
    if not taints:
        return True, []
    if not tolerations:
        return False, []
    used: list[Toleration] = []
    for taint in taints:
        for tol in tolerations:
            if tol.tolerates(taint):
                used.append(tol)
                break
        else:
            return False, []
    return True, used


def get_min_toleration_time_ms(tolerations: list[Toleration]) -> int:
    """Port of getMinTolerationTime: -1 = tolerated forever; 0 if the list is empty or any
    tolerationSeconds <= 0; else the minimum, in milliseconds."""
    min_s = -1
    if not tolerations:
        return 0
    for tol in tolerations:
        if tol.toleration_seconds is not None:
            s = tol.toleration_seconds
            if s <= 0:
                return 0
            if s < min_s or min_s == -1:
                min_s = s
    return min_s * 1000 if min_s >= 0 else -1


class NoExecuteTaintManager:
    """Port of scheduler.NoExecuteTaintManager (1.18) and tainteviction.Controller."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.cluster = sim.cluster
        profile = sim.config.profile
        self.deleter = profile.taint_eviction_deleter
        self.forgets_fired_work = profile.taint_eviction_forgets_fired_work
        self.tainted_nodes: dict[str, list[Taint]] = {}
        self.work: dict[str, TimedWork] = {}  # taintEvictionQueue, keyed by ns/name
        self.stopped = False
        self.separate = profile.separate_taint_eviction_controller
        self._own_client: Client | None = None
        self._client_params: tuple[float, int] | None = None
        self.events = EventSink(self.client(), sim.sched, self.cluster, self)

    # -- the client --------------------------------------------------------------------------
    def client(self) -> Client:
        """The taint-eviction-controller's own clientset (1.29+), else the node-controller's;
        a changed --kube-api-qps/-burst gives a new one with a full bucket (as a restarted
        kube-controller-manager's)."""
        if not self.separate:
            return self.sim.controller.client
        cm = self.sim.config.controller_manager
        params = (cm.kube_api_qps, cm.kube_api_burst)
        if self._own_client is None or params != self._client_params:
            self._client_params = params
            self._own_client = Client("taint-eviction-controller", *params)
        return self._own_client

    def _event(self, now: int, obj: str, reason: str, message: str) -> None:
        """recorder.Eventf: created through the client by the broadcaster's sink goroutine."""
        self.events.client = self.client()
        self.events.post(now, obj, reason, message, "Normal")

    def run(self, now: int) -> None:
        """Start: the informers deliver every node and pod as an Add."""
        for node in self.sim.sorted_nodes():
            self.handle_node_update(node.name, now)

    def stop(self) -> None:
        self.stopped = True
        self.events.queue.clear()  # a stopped process's queued events are never sent
        for w in self.work.values():
            if w.handle is not None:
                w.handle.cancel()
        self.work.clear()

    # -- handlers ------------------------------------------------------------------------
    def handle_node_update(self, node_name: str, now: int) -> None:
        """Port of NoExecuteTaintManager.handleNodeUpdate."""
        node = self.cluster.nodes.get(node_name)
        if node is None:
            # NotFound: Go only forgets the node; pending deletions stay until the pods go.
            self.tainted_nodes.pop(node_name, None)
            return
        taints = [t for t in node.taints if t.effect == NO_EXECUTE]
        if taints:
            self.tainted_nodes[node_name] = taints
        else:
            self.tainted_nodes.pop(node_name, None)
        pods = self.cluster.pods_on_node(node_name)
        if not pods:
            return
        if not taints:
            for pod in pods:
                self.cancel_work_with_event(pod, now)
            return
        for pod in pods:
            self.process_pod_on_node(pod, node_name, taints, now)

    def handle_pod_update(self, pod: Pod, now: int) -> None:
        """Port of NoExecuteTaintManager.handlePodUpdate (pod added, bound, or changed)."""
        if pod.key not in self.cluster.pods:
            self.cancel_work_with_event(pod, now)
            return
        if not pod.node_name:
            return
        taints = self.tainted_nodes.get(pod.node_name)
        if not taints:
            return
        self.process_pod_on_node(pod, pod.node_name, taints, now)

    def handle_pod_removed(self, pod: Pod, now: int) -> None:
        self.cancel_work_with_event(pod, now)

    def process_pod_on_node(self, pod: Pod, node_name: str, taints: list[Taint], now: int) -> None:
        """Port of processPodOnNode."""
        if not taints:
            self.cancel_work_with_event(pod, now)
        all_tolerated, used = get_matching_tolerations(taints, pod.tolerations)
        if not all_tolerated:
            # Not all taints are tolerated: delete at once.
            self.cancel_work_with_event(pod, now)
            self.add_work(pod, now, now)
            return
        min_ms = get_min_toleration_time_ms(used)
        if min_ms < 0:
            # Tolerated forever.
            self.cancel_work_with_event(pod, now)
            return
        trigger = now + min_ms
        existing = self.work.get(pod.key)
        if existing is not None:
            if existing.created_ms + min_ms < trigger:
                # An already scheduled deletion is never moved earlier or later.
                return
            self.cancel_work_with_event(pod, now)
        self.add_work(pod, now, trigger)

    # -- timed workers ------------------------------------------------------------------------
    def add_work(self, pod: Pod, created_ms: int, fire_ms: int) -> None:
        """Port of TimedWorkerQueue.AddWork: a key already present is ignored; a fire time at
        or before creation runs at once."""
        if pod.key in self.work:
            return
        if fire_ms <= created_ms:
            self.work[pod.key] = TimedWork(created_ms, fire_ms, None)
            self._run_work(pod.key)
            return
        handle = self.sim.sched.schedule(fire_ms, Phase.TAINT_MANAGER, self._fire, pod.key)
        self.work[pod.key] = TimedWork(created_ms, fire_ms, handle)

    def cancel_work_with_event(self, pod: Pod, now: int) -> None:
        """Port of NoExecuteTaintManager.cancelWorkWithEvent: the Cancelling event only when
        a timer was still pending."""
        work = self.work.pop(pod.key, None)
        if work is None:
            return
        if work.handle is not None and not work.handle.cancelled:
            work.handle.cancel()
            self._event(
                now,
                f"Pod/{pod.key}",
                "TaintManagerEviction",
                f"Cancelling deletion of Pod {pod.key}",
            )

    def _fire(self, key: str) -> None:
        work = self.work.get(key)
        if work is not None:
            work.handle = None
        self._run_work(key)

    def _run_work(self, key: str) -> None:
        """Port of TimedWorkerQueue.getWrappedWorkerFunc: run the deletion, then keep the key
        as a nil worker (1.18: it refuses re-adds until a cancel) or forget it (1.33+)."""
        self._delete_pod(key)
        if self.forgets_fired_work:
            work = self.work.get(key)
            if work is not None and work.handle is None:
                del self.work[key]

    def _delete_pod(self, key: str) -> None:
        """Port of deletePodHandler, a goroutine of its own: the TaintManagerEviction event,
        then the requests of the deletion, each at its token's instant."""
        now = self.sim.sched.now_ms
        if key not in self.cluster.pods:
            return
        self._event(now, f"Pod/{key}", "TaintManagerEviction", f"Marking for deletion Pod {key}")
        Requests(
            self.client(), self.sim.sched, Phase.TAINT_MANAGER, self, self._attempt(key, 1)
        ).run()

    def _attempt(self, key: str, attempt: int) -> list[Step]:
        """One attempt: addConditionAndDeletePod (PodDisruptionConditions: a GET first) or
        the DELETE alone (1.18)."""
        if self.sim.config.profile.pod_disruption_conditions:
            return [(self._get, (key, attempt))]
        return [(self._delete, (key, attempt))]

    def _retry(self, key: str, attempt: int) -> list[Step] | None:
        """The attempt failed (NotFound): sleep 10 ms and try again, ``retries`` in all."""
        if attempt >= RETRIES:
            return None
        return [(SLEEP, (RETRY_SLEEP_MS,)), *self._attempt(key, attempt + 1)]

    def _get(self, now: int, key: str, attempt: int) -> list[Step] | None:
        """``Pods(ns).Get(name)``; then the DisruptionTarget condition's status PATCH
        (utilpod.PatchPodStatus) when UpdatePodCondition changes the status, then DELETE."""
        pod = self.cluster.pods.get(key)
        if pod is None:
            return self._retry(key, attempt)
        if pod.disruption_target == (DISRUPTION_REASON, DISRUPTION_MESSAGE):
            return [(self._delete, (key, attempt))]
        return [(self._patch, (key, pod, attempt))]

    def _patch(self, now: int, key: str, pod: Pod, attempt: int) -> list[Step] | None:
        if self.cluster.pods.get(key) is not pod:  # the patch's UID precondition
            return self._retry(key, attempt)
        self.cluster.set_disruption_target(pod, now, DISRUPTION_REASON, DISRUPTION_MESSAGE)
        return [(self._delete, (key, attempt))]

    def _delete(self, now: int, key: str, attempt: int) -> list[Step] | None:
        """``Pods(ns).Delete(name)`` with the pod's own grace period (by name: whatever pod
        has the name then)."""
        pod = self.cluster.pods.get(key)
        if pod is None:
            return self._retry(key, attempt)
        self.cluster.delete_pod(pod, now, self.deleter, "TaintManagerEviction")
        return None

    def pending(self) -> dict[str, int]:
        """Pod key -> fire time of every pending deletion (for the page's countdowns)."""
        return {k: w.fire_ms for k, w in self.work.items() if w.handle is not None}
