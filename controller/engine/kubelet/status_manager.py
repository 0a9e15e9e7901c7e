"""The kubelet's pod status manager (pkg/kubelet/status/status_manager.go): the kubelet's own
copy of each pod's status, and the loop that writes it to the API.

Two behaviours of the Go manager are visible here:

- SetPodStatus caches the status and sends it at once (syncPod); a send that fails because
  the API cannot be reached is retried by syncBatch every ``syncPeriod`` (10 s, a ticker
  started with the kubelet), because apiStatusVersions still lags the cached version
  (needsUpdate). So what a partitioned kubelet does to its pods (an eviction's Failed phase)
  reaches the API, and the controllers, only at the first syncBatch after the heal.
- syncBatch also compares the API's pod status with the cached one (needsReconcile,
  isPodStatusByKubeletEqual over the conditions the kubelet owns): the Ready=False that the
  node lifecycle controller's MarkPodsNotReady wrote to a pod the kubelet still has Ready is
  PATCHed back to Ready=True at the next syncBatch the kubelet reaches the API at.

From 1.27 (#115331) the status of a deleted pod whose containers have stopped is terminal
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

if TYPE_CHECKING:
    from ..objects import Pod
    from .node_status import Kubelet

SYNC_PERIOD_MS = 10 * SECOND  # status_manager.go syncPeriod


@dataclass
class PendingStatus:
    """A status the kubelet set but could not send (the API was unreachable)."""

    phase: str
    reason: str
    message: str
    ready: bool
    disruption: tuple[str, str] | None = None  # DisruptionTarget (reason, message)
    finished: bool = False  # podIsFinished: a deleted pod the status manager then deletes


class StatusManager:
    """One kubelet's status manager."""

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet
        self.pending: dict[str, PendingStatus] = {}  # pod key -> status not yet sent
        self.synced: set[str] = set()  # pods this process has cached a status for
        self.handle: Handle | None = None
        self.at: int | None = None

    # -- the kubelet's view ----------------------------------------------------------------
    def phase_of(self, pod: Pod) -> str:
        """The pod's phase as the kubelet has it (GetPodStatus): a status not yet sent wins
        over the API's copy."""
        pending = self.pending.get(pod.key)
        return pending.phase if pending is not None else pod.phase

    def finishing(self, pod: Pod) -> bool:
        """A deleted pod's terminal status waits to be sent (podIsFinished): the status
        manager, not the pod worker, deletes it once the API can be reached."""
        pending = self.pending.get(pod.key)
        return pending is not None and getattr(pending, "finished", False)

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
        """Port of manager.SetPodStatus (updateStatusInternal then syncPod): cache, and PATCH
        at once if the API can be reached; otherwise syncBatch sends it after the heal.
        ``disruption``: a DisruptionTarget condition (reason, message) in the same status,
        written first (Cluster.set_disruption_target: nothing in 1.18). ``finished``: the
        terminal status of a deleted pod whose termination is done (TerminatePod,
        podIsFinished): after the PATCH the pod is deleted (canBeDeleted)."""
        self.synced.add(pod.key)
        if not self.kubelet.reaches_api:
            self.kubelet.sim.admission_changed(pod)  # the kubelet's phase of it may change
            prev = self.pending.get(pod.key)
            if ready is None:
                ready = prev.ready if prev is not None else bool(pod.ready)
            if disruption is None and prev is not None:
                disruption = prev.disruption
            self.pending[pod.key] = PendingStatus(
                phase, reason, message, ready, disruption, finished
            )
            return
        if self.pending.pop(pod.key, None) is not None:
            self.kubelet.sim.admission_changed(pod)  # the kubelet's phase is the API's again
        # (a change of the API's phase is the store's to tell: Cluster._phase_written)
        self._write(pod, now, phase, reason, message, ready, disruption, finished)

    def set_ready(self, pod: Pod, now: int) -> None:
        """A fresh status for a running pod (the first syncPod of this kubelet process):
        Running and Ready, sent at once."""
        self.synced.add(pod.key)
        self.kubelet.sim.cluster.set_pod_ready(pod, True, now, by_kubelet=True)

    def _write(
        self,
        pod: Pod,
        now: int,
        phase: str,
        reason: str,
        message: str,
        ready: bool | None,
        disruption: tuple[str, str] | None = None,
        finished: bool = False,
    ) -> None:
        """syncPod: the status PATCH, then, for a finished deleted pod whose API phase is now
        terminal, the DELETE with grace 0 and the pod's UID as precondition (canBeDeleted)."""
        cluster = self.kubelet.sim.cluster
        if disruption is not None:
            cluster.set_disruption_target(
                pod, now, disruption[0], disruption[1], self.kubelet.profile
            )
            if pod.key not in cluster.pods:
                return
        if ready is not None and pod.key not in cluster.pods:
            ready = None
        cluster.set_pod_status(pod, phase, now, reason, message, ready)
        if (
            finished
            and cluster.pods.get(pod.key) is pod  # the UID precondition
            and pod.deletion_ms is not None
            and pod.phase in ("Failed", "Succeeded")
        ):
            cluster.remove_pod(pod, now)

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
        self.pending.clear()
        self.synced.clear()
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
        """Port of manager.syncBatch: statuses not yet sent (needsUpdate) are sent; pods whose
        API status differs from the cached one (needsReconcile) get the cached one."""
        self.handle = None
        self.at = None
        kubelet = self.kubelet
        if not kubelet.reaches_api:
            return
        now = kubelet.sim.sched.now_ms
        cluster = kubelet.sim.cluster
        for key in [k for k in self.pending if k not in cluster.pods]:
            del self.pending[key]
        for pod in cluster.pods_on_node(kubelet.node_name):
            if pod.key not in cluster.pods:
                continue  # removed by a reaction to an earlier write of this batch
            pending = self.pending.pop(pod.key, None)
            if pending is not None:
                kubelet.sim.admission_changed(pod)
                self._write(
                    pod,
                    now,
                    pending.phase,
                    pending.reason,
                    pending.message,
                    pending.ready,
                    pending.disruption,
                    getattr(pending, "finished", False),  # (pickled before it existed)
                )
            elif self._needs_reconcile(pod):
                cluster.set_pod_ready(pod, True, now, by_kubelet=True)
