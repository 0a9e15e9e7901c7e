"""The ReplicaSet controller (pkg/controller/replicaset): syncReplicaSet, manageReplicas,
getPodsToDelete. A part of WorkloadControllers, which holds the shared pod index."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..admission import default_toleration_seconds
from ..client import Parallel, Requests, Step
from ..core import Phase
from ..objects import Pod
from .clients import slow_start_batch
from .common import (
    RS_BURST_REPLICAS,
    active_pods_deletion_key,
    is_pod_active,
    is_pod_ready,
)
from .workload import Workload


class ReplicaSetController:
    """The ReplicaSet controller (pkg/controller/replicaset): syncReplicaSet, manageReplicas,
    getPodsToDelete. A part of WorkloadControllers, which holds the shared pod index."""

    def sync_replica_set(self, rs: Workload, now: int) -> None:
        """Port of ReplicaSetController.syncReplicaSet (pkg/controller/replicaset/
        replica_set.go): manageReplicas, then updateReplicaSetStatus with calculateStatus from
        the pods as they were listed before this sync. Every write goes through the
        replicaset-controller client (workloads/clients.py): the sync ends with its last
        request, the status PUT (only when the status changed), and the key is not synced
        again before that."""
        proc = self.procs["ReplicaSet"]
        proc.check_client(self.sim)
        active = [p for p in self.owned.get(rs.key, {}).values() if is_pod_active(p)]
        ready = sum(1 for p in active if is_pod_ready(p))
        finish = partial(self._rs_status, proc, rs, (len(active), ready, ready))
        self.manage_replicas(rs, active, now, finish)

    def manage_replicas(
        self, rs: Workload, active: list[Pod], now: int, done: Callable[[], None]
    ) -> None:
        """Port of ReplicaSetController.manageReplicas: at most burstReplicas (500) per sync;
        creates in slowStartBatch batches (_create_replicas), deletes all at once, one
        goroutine each (``wg.Wait()``); ``done`` when the last request is made."""
        diff = len(active) - rs.replicas
        if diff < 0:
            self._create_replicas(rs, min(-diff, RS_BURST_REPLICAS), now, done)
        elif diff > 0:
            proc = self.procs["ReplicaSet"]
            pods = self.get_pods_to_delete(rs, active, min(diff, RS_BURST_REPLICAS))
            each: list[list[Step]] = [[(self._rs_delete, (rs, pod))] for pod in pods]
            Parallel(done).run(proc.client, self.sim.sched, Phase.WORKLOADS, proc, each)
        else:
            done()

    def _rs_delete(self, now: int, rs: Workload, pod: Pod) -> None:
        """podControl.DeletePod: one DELETE (a pod already gone still took its token)."""
        self._delete_pod(rs, pod, now, "ScaleDown", f"Deleted pod: {pod.name}")

    def _rs_status(self, proc: Any, rs: Workload, status: tuple[int, int, int]) -> None:
        """updateReplicaSetStatus: a PUT only when the status changed; then the sync ends."""
        end = partial(self._sync_end, proc, rs.key)
        if status == (rs.status_replicas, rs.ready_replicas, rs.available_replicas):
            end()
            return
        steps: list[Step] = [(self._rs_put_status, (rs, status))]
        Requests(proc.client, self.sim.sched, Phase.WORKLOADS, proc, steps, end).run()

    def _rs_put_status(self, now: int, rs: Workload, status: tuple[int, int, int]) -> None:
        rs.status_replicas, rs.ready_replicas, rs.available_replicas = status
        if rs.owner is not None:
            self._mark(f"Deployment/{rs.namespace}/{rs.owner.name}", now)

    def _sync_end(self, proc: Any, key: str) -> None:
        """processNextWorkItem returns: the key is free; it (if dirty meanwhile) and the
        next waiting key are synced again."""
        for again in proc.done(key):
            self._mark(again, self.sim.now_ms)

    def _create_replicas(
        self, rs: Workload, count: int, now: int, done: Callable[[], None]
    ) -> None:
        """Port of slowStartBatch(diff, SlowStartInitialBatchSize, ...) in manageReplicas
        (pkg/controller/replicaset/replica_set.go, SlowStartInitialBatchSize = 1 in
        pkg/controller/controller_utils.go): batches of 1, 2, 4, ... creates; a batch's
        creates are goroutines of their own (one POST each through the replicaset-controller
        client, then the SuccessfulCreate event through its sink), the next batch starts when
        all of the previous are made (``wg.Wait()``); ``done`` after the last batch. Every
        create succeeds, so no batch ends the loop early.

        With ``Simulation.shortcuts`` (issue #27), for pods the scheduler is to place (the
        template names no node), the creates made in this instant (their tokens there at
        once) are the same writes, events and informer reactions with what the pods share
        made once: the DefaultTolerationSeconds admission (the same template tolerations
        give the same result) and the scheduler's wake (KubeScheduler.enqueue_all: queued in
        the same order, its version bumped once per pod; Cluster.add_pod told not to notify,
        its informer reactions made here). For an unbound pod the reactions (on_pod_added:
        enqueue, then on_pod_changed) write no object and take no token, so nothing comes
        between the burst's pods that the straightforward path would put there. A create
        whose token comes later takes the straightforward path at its instant."""
        sim = self.sim
        outer = self._burst is None and sim.shortcuts and not self._pod_template(rs).node_name
        if outer:
            self._burst = [[], None]
        try:
            proc = self.procs["ReplicaSet"]
            each: list[list[Step]] = [[(self._rs_create, (rs,))] for _ in range(count)]
            slow_start_batch(proc, sim.sched, each, done)
        finally:
            if outer:
                created = self._burst[0] if self._burst else []
                self._burst = None
                if created:
                    sim.kube_scheduler.enqueue_all(created, now)

    def _rs_create(self, now: int, rs: Workload) -> None:
        """One create of the burst at its token's instant: the API server completes the
        name (generateName), admission, the store; then SuccessfulCreate."""
        name = self._generate_name(rs)
        pod = self._new_pod(rs, name, now)
        burst = self._burst
        if burst is None:
            self._create_pod(rs, pod, now, f"Created pod: {name}")
            return
        if burst[1] is None:
            default_toleration_seconds(pod, self.sim.config.api_server)
            burst[1] = pod.tolerations
        else:
            pod.tolerations = burst[1]  # (shared: replaced whole, never written in place)
        self.sim.cluster.add_pod(pod, now, notify=False)
        burst[0].append(pod)
        self.on_pod_changed(pod, now)  # on_pod_added's reactions, less the wake
        self._event(now, rs, "SuccessfulCreate", f"Created pod: {name}")

    def get_pods_to_delete(self, rs: Workload, active: list[Pod], diff: int) -> list[Pod]:
        """Port of getPodsToDelete with getPodsRankedByRelatedPodsOnSameNode: pods are ranked
        by how many active pods of the same Deployment share their node."""
        if diff >= len(active):
            return list(active)
        # getIndirectlyRelatedPods: the pods of every ReplicaSet with the same controller; a
        # ReplicaSet without one has none (getReplicaSetsWithSameController returns nil), so
        # all its pods rank 0.
        related: list[Pod] = []
        if rs.owner is not None:
            related = [
                p
                for sibling in self._replica_sets_of(rs.owner.name, rs.namespace)
                for p in self.owned.get(sibling.key, {}).values()
            ]
        on_node: dict[str, int] = {}
        for p in related:
            if is_pod_active(p):
                on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
        ranked = sorted(
            active,
            key=lambda p: active_pods_deletion_key(
                p, on_node.get(p.node_name, 0), self.ready_since.get(p.key)
            ),
        )
        return ranked[:diff]
