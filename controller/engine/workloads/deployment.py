"""The Deployment controller (pkg/controller/deployment): syncDeployment, getNewReplicaSet,
scale (proportional scaling), rolling and recreate rollouts. A part of WorkloadControllers."""

from __future__ import annotations

import json

from ..objects import OwnerRef
from .common import (
    POD_TEMPLATE_HASH,
    RECREATE,
    ROLLING_UPDATE,
    compute_hash,
    resolve_fenceposts,
    round_half_away,
)
from .workload import Workload


class DeploymentController:
    """The Deployment controller (pkg/controller/deployment): syncDeployment, getNewReplicaSet,
    scale (proportional scaling), rolling and recreate rollouts. A part of WorkloadControllers."""

    def _replica_sets_of(self, deployment: str, namespace: str) -> list[Workload]:
        """The Deployment's ReplicaSets, oldest first (ReplicaSetsByCreationTimestamp)."""
        out = [
            w
            for w in self.workloads.values()
            if w.kind == "ReplicaSet"
            and w.namespace == namespace
            and w.owner is not None
            and w.owner.name == deployment
        ]
        out.sort(key=lambda w: (w.creation_ms, w.name))
        return out

    def sync_deployment(self, d: Workload, now: int) -> None:
        """Port of DeploymentController.syncDeployment (never paused)."""
        rs_list = self._replica_sets_of(d.name, d.namespace)
        if self._is_scaling_event(d, rs_list):
            new_rs, old_rss = self._get_new_rs(d, rs_list, False, now)
            self._scale(d, new_rs, old_rss, now)
        elif d.strategy == RECREATE:
            self._rollout_recreate(d, rs_list, now)
        else:
            self._rollout_rolling(d, rs_list, now)
        self._sync_deployment_status(d)

    def _sync_deployment_status(self, d: Workload) -> None:
        """Port of calculateStatus: sums over the Deployment's ReplicaSets."""
        rs_list = self._replica_sets_of(d.name, d.namespace)
        d.status_replicas = sum(rs.status_replicas for rs in rs_list)
        d.ready_replicas = sum(rs.ready_replicas for rs in rs_list)
        d.available_replicas = sum(rs.available_replicas for rs in rs_list)
        new_rs = next((rs for rs in rs_list if rs.template_hash == d.template_hash), None)
        d.updated_replicas = new_rs.status_replicas if new_rs is not None else 0

    def _max_surge(self, d: Workload) -> int:
        return (
            resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)[0]
            if d.strategy == ROLLING_UPDATE
            else 0
        )

    def _max_unavailable(self, d: Workload) -> int:
        """Port of deploymentutil.MaxUnavailable."""
        if d.strategy != ROLLING_UPDATE or d.replicas == 0:
            return 0
        unavailable = resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)[1]
        return min(unavailable, d.replicas)

    def _get_new_rs(
        self, d: Workload, rs_list: list[Workload], create: bool, now: int
    ) -> tuple[Workload | None, list[Workload]]:
        """Port of getAllReplicaSetsAndSyncRevision / getNewReplicaSet: the ReplicaSet whose
        template is the Deployment's, created (``<deploy>-<pod-template-hash>``) if asked."""
        new_rs = next((rs for rs in rs_list if rs.template_hash == d.template_hash), None)
        old_rss = [rs for rs in rs_list if rs is not new_rs]
        max_old_revision = max((rs.revision for rs in old_rss), default=0)
        if new_rs is not None:
            if new_rs.revision <= max_old_revision:
                new_rs.revision = max_old_revision + 1
            return new_rs, old_rss
        if not create:
            return None, old_rss
        while f"ReplicaSet/{d.namespace}/{d.name}-{d.template_hash}" in self.workloads:
            d.collision_count += 1  # a name taken by another template: rehash
            d.template_hash = compute_hash(d.template, d.collision_count)
        template = json.loads(json.dumps(d.template))
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        labels[POD_TEMPLATE_HASH] = d.template_hash
        rs = Workload(
            kind="ReplicaSet",
            namespace=d.namespace,
            name=f"{d.name}-{d.template_hash}",
            uid=self.sim.cluster.new_uid("ReplicaSet"),
            creation_ms=now,
            replicas=0,
            template=template,
            selector={**d.selector, POD_TEMPLATE_HASH: d.template_hash},
            owner=OwnerRef("Deployment", d.name, d.uid, True),
            template_hash=d.template_hash,
            revision=max_old_revision + 1,
        )
        rs.replicas = self._new_rs_new_replicas(d, old_rss, rs)
        rs.desired_annotation, rs.max_annotation = d.replicas, d.replicas + self._max_surge(d)
        self.workloads[rs.key] = rs
        self._mark(rs.key, now)
        if rs.replicas > 0:
            self._event(
                now, d, "ScalingReplicaSet", f"Scaled up replica set {rs.name} to {rs.replicas}"
            )
        return rs, old_rss

    def _new_rs_new_replicas(self, d: Workload, all_rss: list[Workload], new_rs: Workload) -> int:
        """Port of deploymentutil.NewRSNewReplicas."""
        if d.strategy == RECREATE:
            return d.replicas
        max_total = d.replicas + self._max_surge(d)
        current = sum(rs.replicas for rs in all_rss if rs is not new_rs) + new_rs.replicas
        if current >= max_total:
            return new_rs.replicas
        scale_up = min(max_total - current, d.replicas - new_rs.replicas)
        return new_rs.replicas + scale_up

    def _scale_rs(
        self, rs: Workload, new_scale: int, d: Workload, now: int, operation: str = ""
    ) -> bool:
        """Port of scaleReplicaSetAndRecordEvent (no ``operation``: nothing to do at the same
        size) and scaleReplicaSet (the size and the desired/max-replicas annotations; the
        ScalingReplicaSet event when the size changes). True if the size changed."""
        if not operation:
            if rs.replicas == new_scale:
                return False
            operation = "up" if new_scale > rs.replicas else "down"
        annotations = (d.replicas, d.replicas + self._max_surge(d))
        rs.desired_annotation, rs.max_annotation = annotations
        if rs.replicas == new_scale:
            return False
        rs.replicas = new_scale
        self._mark(rs.key, now)
        self._event(
            now, d, "ScalingReplicaSet", f"Scaled {operation} replica set {rs.name} to {new_scale}"
        )
        return True

    def _is_scaling_event(self, d: Workload, rs_list: list[Workload]) -> bool:
        """Port of isScalingEvent: an active ReplicaSet annotated with another desired size."""
        return any(
            rs.replicas > 0
            and rs.desired_annotation is not None
            and rs.desired_annotation != d.replicas
            for rs in rs_list
        )

    def _scale(
        self, d: Workload, new_rs: Workload | None, old_rss: list[Workload], now: int
    ) -> None:
        """Port of DeploymentController.scale, proportional scaling included."""
        active = [rs for rs in [*old_rss, new_rs] if rs is not None and rs.replicas > 0]
        if len(active) <= 1:  # FindActiveOrLatest
            target = (
                active[0]
                if active
                else new_rs
                or (max(old_rss, key=lambda r: (r.creation_ms, r.name)) if old_rss else None)
            )
            if target is not None:
                self._scale_rs(target, d.replicas, d, now)
            return
        if (
            new_rs is not None
            and new_rs.replicas == d.replicas
            and new_rs.desired_annotation == d.replicas
            and new_rs.available_replicas == d.replicas
        ):
            for rs in old_rss:  # IsSaturated: the old ones go
                if rs.replicas > 0:
                    self._scale_rs(rs, 0, d, now)
            return
        if d.strategy != ROLLING_UPDATE:
            return
        allowed = d.replicas + self._max_surge(d) if d.replicas > 0 else 0
        to_add = allowed - sum(rs.replicas for rs in active)
        if to_add > 0:  # ReplicaSetsBySizeNewer
            active.sort(key=lambda r: (-r.replicas, -r.creation_ms, r.name))
        elif to_add < 0:  # ReplicaSetsBySizeOlder
            active.sort(key=lambda r: (-r.replicas, r.creation_ms, r.name))
        operation = "up" if to_add > 0 else "down" if to_add < 0 else ""
        added = 0
        sizes: list[int] = []
        for rs in active:
            if to_add != 0:
                proportion = self._proportion(rs, d, to_add, added)
                sizes.append(rs.replicas + proportion)
                added += proportion
            else:
                sizes.append(rs.replicas)
        if to_add != 0:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftovers to the largest
        for rs, size in zip(active, sizes):
            self._scale_rs(rs, size, d, now, operation or "up")

    def _proportion(self, rs: Workload, d: Workload, to_add: int, added: int) -> int:
        """Port of deploymentutil.GetProportion and getReplicaSetFraction."""
        if rs.replicas == 0 or to_add == 0 or to_add == added:
            return 0
        if d.replicas == 0:
            fraction = -rs.replicas
        else:
            deployment_replicas = d.replicas + self._max_surge(d)
            annotated = rs.max_annotation if rs.max_annotation else d.status_replicas
            if not annotated:
                return 0
            fraction = (
                int(round_half_away(rs.replicas * deployment_replicas / annotated)) - rs.replicas
            )
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def _rollout_rolling(self, d: Workload, rs_list: list[Workload], now: int) -> None:
        """Port of rolloutRolling: scale the new ReplicaSet up within maxSurge, else the old
        ones down within maxUnavailable."""
        new_rs, old_rss = self._get_new_rs(d, rs_list, True, now)
        assert new_rs is not None
        all_rss = [*old_rss, new_rs]
        # reconcileNewReplicaSet
        if new_rs.replicas != d.replicas:
            if new_rs.replicas > d.replicas:
                target = d.replicas
            else:
                target = self._new_rs_new_replicas(d, all_rss, new_rs)
            if self._scale_rs(new_rs, target, d, now):
                return
        # reconcileOldReplicaSets
        old_count = sum(rs.replicas for rs in old_rss)
        if old_count == 0:
            return
        all_count = sum(rs.replicas for rs in all_rss)
        min_available = d.replicas - self._max_unavailable(d)
        new_unavailable = new_rs.replicas - new_rs.available_replicas
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        cleaned = 0  # cleanupUnhealthyReplicas
        for rs in old_rss:
            if cleaned >= max_scaled_down:
                break
            if rs.replicas == 0 or rs.replicas == rs.available_replicas:
                continue
            down = min(max_scaled_down - cleaned, rs.replicas - rs.available_replicas)
            self._scale_rs(rs, rs.replicas - down, d, now)
            cleaned += down
        # scaleDownOldReplicaSetsForRollingUpdate
        available = sum(rs.available_replicas for rs in all_rss)
        if available <= min_available:
            return
        total_down = available - min_available
        scaled = 0
        for rs in old_rss:
            if scaled >= total_down:
                break
            if rs.replicas == 0:
                continue
            down = min(rs.replicas, total_down - scaled)
            self._scale_rs(rs, rs.replicas - down, d, now)
            scaled += down

    def _rollout_recreate(self, d: Workload, rs_list: list[Workload], now: int) -> None:
        """Port of rolloutRecreate: old ReplicaSets to 0, wait until none of their pods runs
        (Terminating ones included), then the new ReplicaSet to full size."""
        new_rs, old_rss = self._get_new_rs(d, rs_list, False, now)
        scaled_down = False
        for rs in old_rss:
            if rs.replicas > 0:
                scaled_down |= self._scale_rs(rs, 0, d, now)
        if scaled_down:
            return
        if sum(rs.status_replicas for rs in old_rss) > 0:
            return  # oldPodsRunning
        for rs in old_rss:
            for p in self.owned.get(rs.key, {}).values():
                if p.phase not in ("Failed", "Succeeded"):
                    return
        if new_rs is None:
            new_rs, old_rss = self._get_new_rs(d, rs_list, True, now)
        assert new_rs is not None
        if new_rs.replicas != d.replicas:
            self._scale_rs(new_rs, d.replicas, d, now)
