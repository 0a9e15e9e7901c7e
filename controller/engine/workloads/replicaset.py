"""The ReplicaSet controller (pkg/controller/replicaset): syncReplicaSet, manageReplicas,
getPodsToDelete. A part of WorkloadControllers, which holds the shared pod index."""

from __future__ import annotations

from ..objects import Pod
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
        """Port of ReplicaSetController.syncReplicaSet: manageReplicas, then calculateStatus
        (from the pods as they were before this sync, like the informer cache)."""
        active = [p for p in self.owned.get(rs.key, {}).values() if is_pod_active(p)]
        ready = sum(1 for p in active if is_pod_ready(p))
        self.manage_replicas(rs, active, now)
        status = (len(active), ready, ready)
        if status != (rs.status_replicas, rs.ready_replicas, rs.available_replicas):
            rs.status_replicas, rs.ready_replicas, rs.available_replicas = status
            if rs.owner is not None:
                self._mark(f"Deployment/{rs.namespace}/{rs.owner.name}", now)

    def manage_replicas(self, rs: Workload, active: list[Pod], now: int) -> None:
        """Port of ReplicaSetController.manageReplicas (at most burstReplicas per sync)."""
        diff = len(active) - rs.replicas
        if diff < 0:
            n = min(-diff, RS_BURST_REPLICAS)
            self._create_replicas(rs, n, now)
            if n < -diff:
                self._mark(rs.key, now)
        elif diff > 0:
            n = min(diff, RS_BURST_REPLICAS)
            for pod in self.get_pods_to_delete(rs, active, n):
                self._delete_pod(rs, pod, now, "ScaleDown", f"Deleted pod: {pod.name}")

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
