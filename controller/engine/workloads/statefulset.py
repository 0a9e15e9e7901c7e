"""The StatefulSet controller (pkg/controller/statefulset): the OrderedReady and Parallel
pod management of updateStatefulSet. A part of WorkloadControllers."""

from __future__ import annotations

from ..objects import Pod
from .common import (
    CONTROLLER_REVISION_HASH,
    PARALLEL,
    STATEFULSET_POD_NAME,
    compute_hash,
    is_running_and_ready,
    stateful_ordinal,
)
from .workload import Workload


class StatefulSetController:
    """The StatefulSet controller (pkg/controller/statefulset): the OrderedReady and Parallel
    pod management of updateStatefulSet. A part of WorkloadControllers."""

    def sync_stateful_set(self, ss: Workload, now: int) -> None:
        """Port of defaultStatefulSetControl.updateStatefulSet: ordinals 0..replicas-1 created
        in order (OrderedReady: each waits for its predecessors to be Running and Ready); a
        pod whose object still exists, Terminating or not, holds its ordinal; condemned pods
        go highest ordinal first."""
        pods = list(self.owned.get(ss.key, {}).values())
        ss.status_replicas = len(pods)
        ss.ready_replicas = sum(1 for p in pods if is_running_and_ready(p))
        replicas: list[Pod | None] = [None] * ss.replicas
        condemned: list[Pod] = []
        for p in pods:
            ordinal = stateful_ordinal(ss.name, p.name)
            if 0 <= ordinal < ss.replicas:
                replicas[ordinal] = p
            elif ordinal >= ss.replicas:
                condemned.append(p)
        condemned.sort(key=lambda p: stateful_ordinal(ss.name, p.name))
        first_unhealthy: Pod | None = None  # a missing replica is unhealthy but is no pod
        for p in [*replicas, *condemned]:
            if p is None or not self._healthy(p):
                first_unhealthy = p
                break
        monotonic = ss.policy != PARALLEL
        for ordinal, pod in enumerate(replicas):
            if pod is not None and pod.phase == "Failed" and pod.deletion_ms is None:
                self._event(
                    now,
                    ss,
                    "RecreatingFailedPod",
                    f"StatefulSet {ss.namespace}/{ss.name} is recreating failed Pod {pod.name}",
                    "Warning",
                )
                self._delete_pod(
                    ss,
                    pod,
                    now,
                    "RecreatingFailedPod",
                    f"delete Pod {pod.name} in StatefulSet {ss.name} successful",
                )
                pod = None if self.sim.cluster.pods.get(pod.key) is not pod else pod
                if pod is not None:
                    self._event(
                        now,
                        ss,
                        "FailedCreate",
                        f"create Pod {pod.name} in StatefulSet {ss.name} failed error: "
                        f'pods "{pod.name}" already exists',
                        "Warning",
                    )
                    return
            if pod is None:
                name = f"{ss.name}-{ordinal}"
                labels = {
                    STATEFULSET_POD_NAME: name,
                    CONTROLLER_REVISION_HASH: f"{ss.name}-{compute_hash(ss.template)}",
                }
                self._create_pod(
                    ss,
                    self._new_pod(ss, name, now, labels),
                    now,
                    f"create Pod {name} in StatefulSet {ss.name} successful",
                )
                if monotonic:
                    return
                continue
            if pod.deletion_ms is not None and monotonic:
                return  # wait for the graceful deletion to complete
            if not is_running_and_ready(pod) and monotonic:
                return
        for pod in reversed(condemned):
            if pod.deletion_ms is not None:
                if monotonic:
                    return
                continue
            if not is_running_and_ready(pod) and monotonic and pod is not first_unhealthy:
                return
            self._delete_pod(
                ss,
                pod,
                now,
                "ScaleDown",
                f"delete Pod {pod.name} in StatefulSet {ss.name} successful",
            )
            if monotonic:
                return

    @staticmethod
    def _healthy(pod: Pod) -> bool:
        """Port of statefulset isHealthy."""
        return is_running_and_ready(pod) and pod.deletion_ms is None
