"""The kubelet's pod status manager (pkg/kubelet/status/status_manager.go): the kubelet's own
copy of each pod's status, and the loop that writes it to the API.

Two behaviours of the Go manager are visible here:

- SetPodStatus caches the status (updateStatusInternal) and the status manager's goroutine
  sends it (syncPod: GET, PATCH, and the DELETE of a finished pod), each request waiting for
  its token of the kubelet's main client (kubeAPIQPS / kubeAPIBurst: status_loop.py has the
  goroutine, 1.18's one request per change and 1.27's coalesced syncBatch); with tokens in
  the bucket that is in the same instant. A send that fails because the API cannot be reached is retried by syncBatch every ``syncPeriod`` (10 s, a ticker
  started with the kubelet), because apiStatusVersions still lags the cached version
  (needsUpdate). So what a partitioned kubelet does to its pods (an eviction's Failed phase)
  reaches the API, and the controllers, only at the first syncBatch after the heal.
- syncBatch also compares the API's pod status with the cached one (needsReconcile,
  isPodStatusByKubeletEqual over the conditions the kubelet owns): the Ready=False that the
  node lifecycle controller's MarkPodsNotReady wrote to a pod the kubelet still has Ready is
  PATCHed back to Ready=True at the next syncBatch the kubelet reaches the API at.

1.18's kubelet deletes a deleted pod once its containers have stopped the same way: a sync of
its (container) statuses, phase unchanged, then the DELETE (canBeDeleted: deleted, resources
reclaimed). From 1.27 (#115331) the status of a deleted pod whose containers have stopped is terminal
(Failed or Succeeded, from their exit codes) and is sent with ``finished`` (TerminatePod's
podIsFinished once SyncTerminatedPod is done): syncPod PATCHes the phase, and only then, the
API's pod terminal and finished (canBeDeleted), DELETEs it with grace 0 and a UID
precondition. While the API cannot be reached both wait for the first syncBatch after the heal.

Lazy like the other kubelet loops: a syncBatch is scheduled only when it has something to
send (a status not yet sent, or an API Ready=False on a pod the kubelet has Ready).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..clock import SECOND, next_on_grid
from ..core import Handle, Phase
from .status_loop import StatusLoop, Step

if TYPE_CHECKING:
    from ..objects import Pod
    from .node_status import Kubelet

SYNC_PERIOD_MS = 10 * SECOND  # status_manager.go syncPeriod


@dataclass
class PendingStatus:
    """A status the kubelet cached and has not written to the API yet (its sync waits for
    tokens, or the API cannot be reached)."""

    phase: str  # "": the API's phase as it is (a Ready-only or container-status write)
    reason: str
    message: str
    ready: bool | None  # None: the Ready condition as the API has it
    disruption: tuple[str, str] | None = None  # DisruptionTarget (reason, message)
    finished: bool = False  # podIsFinished: a deleted pod the status manager then deletes
    version: int = 0  # the cached status's version (apiStatusVersions compares them)


class StatusManager:
    """One kubelet's status manager."""

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet
        self.pending: dict[str, PendingStatus] = {}  # pod key -> status not yet written
        self.synced: set[str] = set()  # pods this process has cached a status for
        self.handle: Handle | None = None
        self.at: int | None = None
        self._init_loop()

    def _init_loop(self) -> None:
        self.loop = StatusLoop(self)
        self.version = 0
        self.api_versions: dict[str, int] = {}  # apiStatusVersions
        self.deleting: set[str] = set()  # pods whose DELETE waits for its token

    def _state(self) -> StatusManager:
        """(Engines pickled before the goroutine existed get one, idle.)"""
        if "loop" not in self.__dict__:
            self._init_loop()
        return self

    # -- the kubelet's view ----------------------------------------------------------------
    def phase_of(self, pod: Pod) -> str:
        """The pod's phase as the kubelet has it (GetPodStatus): a status not yet sent wins
        over the API's copy."""
        pending = self.pending.get(pod.key)
        return pending.phase or pod.phase if pending is not None else pod.phase

    def finishing(self, pod: Pod) -> bool:
        """A deleted pod's terminal status waits to be sent (podIsFinished), or its DELETE
        waits: the status manager, not the pod worker, deletes it."""
        pending = self.pending.get(pod.key)
        if pending is not None and getattr(pending, "finished", False):
            return True
        return pod.key in self._state().deleting

    # -- SetPodStatus ----------------------------------------------------------------------
    def set_pod_status(
        self,
        pod: Pod,
        now: int,
        phase: str,
        reason: str = "",
        message: str = "",
        ready: bool | None = None,
        disruption: tuple[str, str] | None = None,
        finished: bool = False,
    ) -> None:
        """Port of manager.SetPodStatus (updateStatusInternal): cache the status, and hand it
        to the goroutine (status_loop.py), which writes it when its tokens come; while the
        API cannot be reached it waits for the first syncBatch after the heal.
        ``phase`` "": the API's phase is kept (a Ready-only status, or 1.18's container
        statuses of a deleted pod). ``disruption``: a DisruptionTarget condition (reason,
        message) in the same status, written first (Cluster.set_disruption_target: nothing in
        1.18). ``finished``: the status of a deleted pod whose termination is done
        (TerminatePod, podIsFinished): after the PATCH the pod is deleted (canBeDeleted)."""
        self._state()
        self.synced.add(pod.key)
        prev = self.pending.get(pod.key)
        reaches = self.kubelet.reaches_api
        if ready is None and (prev is not None or not reaches):
            ready = prev.ready if prev is not None else bool(pod.ready)
        if disruption is None and prev is not None:
            disruption = prev.disruption
        if not phase and prev is not None:
            phase, reason, message = prev.phase, prev.reason, prev.message
        self.version += 1
        status = PendingStatus(phase, reason, message, ready, disruption, finished, self.version)
        self.pending[pod.key] = status
        self.kubelet.sim.admission_changed(pod)  # the kubelet's phase of it may change
        if reaches:
            self.loop.status_set(pod, status, now)

    def set_ready(self, pod: Pod, now: int) -> None:
        """A fresh status for a running pod (the first syncPod of this kubelet process):
        Running and Ready."""
        self.set_pod_status(pod, now, "", ready=True)

    # -- syncPod (the goroutine's requests) ------------------------------------------------
    def needs_update(self, key: str, status: PendingStatus) -> bool:
        """manager.needsUpdate: the API has an older version of the pod's status."""
        return self.api_versions.get(key, 0) < status.version

    def sync_steps(self, pod: Pod, status: PendingStatus) -> list[Step]:
        """syncPod: GET, then PATCH, then (canBeDeleted) DELETE."""
        return [(self._get, (pod, status))]

    def _reachable(self, pod: Pod) -> bool:
        """The request reaches the API and finds this very pod (the GET's NotFound or UID
        mismatch ends the sync; its status goes with it)."""
        if not self.kubelet.reaches_api:
            return False
        current = self.kubelet.sim.cluster.pods.get(pod.key)
        if current is not pod:
            if current is None:
                self.pending.pop(pod.key, None)
                self.api_versions.pop(pod.key, None)
                self.deleting.discard(pod.key)
            return False
        return True

    def _get(self, now: int, pod: Pod, status: PendingStatus) -> list[Step] | None:
        return [(self._patch, (pod, status))] if self._reachable(pod) else None

    def _patch(self, now: int, pod: Pod, status: PendingStatus) -> list[Step] | None:
        if not self._reachable(pod):
            return None
        key = pod.key
        if self.api_versions.get(key, 0) < status.version:
            self.api_versions[key] = status.version
        if self.pending.get(key) is status:
            del self.pending[key]
            self.kubelet.sim.admission_changed(pod)  # the kubelet's phase is the API's again
        if self._write(pod, now, status):
            self.deleting.add(key)
            return [(self._delete, (pod,))]
        return None

    def _delete(self, now: int, pod: Pod) -> None:
        if self._reachable(pod):
            self.deleting.discard(pod.key)
            self.api_versions.pop(pod.key, None)
            self.kubelet.sim.cluster.remove_pod(pod, now)

    def _write(self, pod: Pod, now: int, status: PendingStatus) -> bool:
        """The status PATCH; True when the DELETE follows: a finished deleted pod (the UID
        precondition), whose API phase is terminal from 1.27 (canBeDeleted, #115331)."""
        cluster = self.kubelet.sim.cluster
        profile = self.kubelet.profile
        if status.disruption is not None:
            reason, message = status.disruption
            cluster.set_disruption_target(pod, now, reason, message, profile)
            if pod.key not in cluster.pods:
                return False
        ready = status.ready if pod.key in cluster.pods else None
        if status.phase:
            cluster.set_pod_status(pod, status.phase, now, status.reason, status.message, ready)
        elif ready is not None:
            cluster.set_pod_ready(pod, ready, now, by_kubelet=True)
        return (
            getattr(status, "finished", False)
            and cluster.pods.get(pod.key) is pod
            and pod.deletion_ms is not None
            and (not profile.terminal_phase_from_exit_codes or pod.phase in ("Failed", "Succeeded"))
        )

    # -- API writes by others ----------------------------------------------------------------
    def api_ready_written(self, pod: Pod, now: int) -> None:
        """Someone else (MarkPodsNotReady) wrote the pod's Ready condition: the kubelet's
        informer delivers it while it reaches the API, and its next syncBatch reconciles."""
        if self.kubelet.reaches_api and self._needs_reconcile(pod):
            self._schedule_after(now)

    def wake(self, now: int) -> None:
        """The kubelet reaches the API again (heal): the next syncBatch sends what it has."""
        if not self.kubelet.reaches_api:
            return
        pods = self.kubelet.sim.cluster.pods_on_node(self.kubelet.node_name)
        if self.pending or any(self._needs_reconcile(p) for p in pods):
            self._schedule_after(now)

    def reset(self) -> None:
        """The kubelet process stops: its cache and unsent statuses are gone."""
        self._state()
        self.pending.clear()
        self.synced.clear()
        self.api_versions.clear()
        self.deleting.clear()
        self.loop.reset()
        self.kubelet.drop_admitted_index()
        self._cancel()

    # -- syncBatch -------------------------------------------------------------------------
    def _needs_reconcile(self, pod: Pod) -> bool:
        """Port of manager.needsReconcile, for the Ready condition: the kubelet has the pod
        running and Ready (a started pod it synced, not terminal, not being deleted: a pod
        being killed is the pod worker's business) and the API says Ready=False."""
        return (
            pod.key in self.synced
            and pod.key not in self.pending
            and pod.started
            and pod.phase == "Running"
            and pod.deletion_ms is None
            and pod.ready is False
        )

    def _schedule_after(self, now: int) -> None:
        """The first syncBatch tick (kubelet start + k * syncPeriod, k >= 1) not yet run at
        this instant: one at ``now`` itself runs only if its phase is still to come."""
        kubelet = self.kubelet
        anchor = kubelet.anchor_ms
        at = next_on_grid(max(now, anchor + SYNC_PERIOD_MS), anchor, SYNC_PERIOD_MS)
        if at == now and kubelet.sim.sched.phase >= Phase.KUBELET_POD_STATUS:
            at += SYNC_PERIOD_MS
        if self.at is not None and self.at <= at:
            return
        self._cancel()
        self.at = at
        self.handle = kubelet.sim.sched.schedule(at, Phase.KUBELET_POD_STATUS, self._sync_batch)

    def _cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
        self.handle = None
        self.at = None

    def _sync_batch(self) -> None:
        """The syncBatch ticker fires: the goroutine runs syncBatch(true) when it is free."""
        self.handle = None
        self.at = None
        if self.kubelet.reaches_api:
            self._state().loop.sync_batch_tick()

    def batch_steps(self, reconcile: bool) -> list[Step]:
        """Port of manager.syncBatch: the pods whose cached status is ahead of the API's
        (needsUpdate), synced; with ``reconcile`` (the ticker's syncBatch(true)) also the pods
        whose API status differs from the cached one (needsReconcile) get the cached one.
        The statuses are those cached when the batch starts."""
        kubelet = self.kubelet
        if not kubelet.reaches_api:
            return []
        cluster = kubelet.sim.cluster
        for key in [k for k in self.pending if k not in cluster.pods]:
            del self.pending[key]
        steps: list[Step] = []
        if not reconcile:
            for key, status in self.pending.items():
                if self.needs_update(key, status):
                    steps.extend(self.sync_steps(cluster.pods[key], status))
            return steps
        for pod in cluster.pods_on_node(kubelet.node_name):
            status = self.pending.get(pod.key)
            if status is not None:
                steps.extend(self.sync_steps(pod, status))
            elif self._needs_reconcile(pod):
                steps.append((self._get_reconcile, (pod,)))
        return steps

    def _get_reconcile(self, now: int, pod: Pod) -> list[Step] | None:
        if self._reachable(pod) and self._needs_reconcile(pod):
            return [(self._patch_ready, (pod,))]
        return None

    def _patch_ready(self, now: int, pod: Pod) -> None:
        if self._reachable(pod):
            self.kubelet.sim.cluster.set_pod_ready(pod, True, now, by_kubelet=True)
