"""The StatefulSet controller (pkg/controller/statefulset): the OrderedReady and Parallel
pod management of updateStatefulSet. A part of WorkloadControllers.

Every write goes through the ``statefulset-controller`` client (workloads/clients.py): the
sync decides from the pods as listed at its start, then makes its requests. OrderedReady, and
Parallel up to 1.27, make them one after another in the sync's goroutine (a failed create ends
the sync); Parallel from 1.28 (#117865, Profile.statefulset_parallel_slow_start) runs one
goroutine per replica in slowStartBatch batches (at most 500 a batch), then one per condemned
pod the same way. The status PUT after, when replicas or ready changed."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..client import Requests, Step
from ..core import Phase
from ..objects import Pod
from .clients import STS_MAX_BATCH_SIZE, slow_start_batch
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
        go highest ordinal first. The work decided here (``_ss_plan``) is then made through
        the client."""
        proc = self.procs["StatefulSet"]
        proc.check_client(self.sim)
        pods = list(self.owned.get(ss.key, {}).values())
        status = (len(pods), sum(1 for p in pods if is_running_and_ready(p)))
        replicas, condemned = self._ss_plan(ss, pods)
        finish = partial(self._ss_status, proc, ss, status)
        sched = self.sim.sched
        if ss.policy == PARALLEL and self.sim.config.profile.statefulset_parallel_slow_start:
            # runForAll(replicas, processReplica), then runForAll(condemned, processCondemned):
            # a goroutine per replica, its requests in order
            replicas = [[_chain(steps)] for steps in replicas]
            condemned = [[_chain(steps)] for steps in condemned]
            after = partial(self._ss_condemned, proc, condemned, finish)
            if replicas:
                slow_start_batch(proc, sched, replicas, after, max_size=STS_MAX_BATCH_SIZE)
            else:
                after()
            return
        chain = [step for steps in replicas + condemned for step in steps]
        if not chain:
            finish()
            return
        Requests(proc.client, sched, Phase.WORKLOADS, proc, [_chain(chain)], finish).run()

    def _ss_condemned(self, proc: Any, condemned: list[list[Step]], finish: Any) -> None:
        if condemned:
            sched = self.sim.sched
            slow_start_batch(proc, sched, condemned, finish, max_size=STS_MAX_BATCH_SIZE)
        else:
            finish()

    def _ss_plan(self, ss: Workload, pods: list[Pod]) -> tuple[list[list[Step]], list[list[Step]]]:
        """The requests of this sync, per replica goroutine and per condemned pod, decided
        from the pods listed at its start (the monotonic early returns included)."""
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
        work: list[list[Step]] = []
        for ordinal, pod in enumerate(replicas):
            steps: list[Step] = []
            if pod is not None and pod.phase == "Failed" and pod.deletion_ms is None:
                steps.append((self._ss_delete_failed, (ss, pod)))
                steps.append((self._ss_create, (ss, ordinal, pod)))
                work.append(steps)
                if monotonic:
                    return work, []
                continue
            if pod is None:
                work.append([(self._ss_create, (ss, ordinal, None))])
                if monotonic:
                    return work, []
                continue
            if pod.deletion_ms is not None and monotonic:
                return work, []  # wait for the graceful deletion to complete
            if not is_running_and_ready(pod) and monotonic:
                return work, []
        deletes: list[list[Step]] = []
        for pod in reversed(condemned):
            if pod.deletion_ms is not None:
                if monotonic:
                    break
                continue
            if not is_running_and_ready(pod) and monotonic and pod is not first_unhealthy:
                break
            deletes.append([(self._ss_delete_condemned, (ss, pod))])
            if monotonic:
                break
        return work, deletes

    def _ss_delete_failed(self, now: int, ss: Workload, pod: Pod) -> bool:
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
        return True

    def _ss_create(self, now: int, ss: Workload, ordinal: int, old: Pod | None) -> bool:
        """CreateStatefulPod at its token's instant: AlreadyExists (FailedCreate, the sync
        ends) while a pod of that name is still there."""
        name = f"{ss.name}-{ordinal}"
        if f"{ss.namespace}/{name}" in self.sim.cluster.pods:
            self._event(
                now,
                ss,
                "FailedCreate",
                f"create Pod {name} in StatefulSet {ss.name} failed error: "
                f'pods "{name}" already exists',
                "Warning",
            )
            return False
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
        return True

    def _ss_delete_condemned(self, now: int, ss: Workload, pod: Pod) -> bool:
        self._delete_pod(
            ss, pod, now, "ScaleDown", f"delete Pod {pod.name} in StatefulSet {ss.name} successful"
        )
        return True

    def _ss_status(self, proc: Any, ss: Workload, status: tuple[int, int]) -> None:
        """updateStatefulSetStatus: a PUT only when the status changed; then the sync ends."""
        end = partial(self._sync_end, proc, ss.key)
        if status == (ss.status_replicas, ss.ready_replicas):
            end()
            return
        steps: list[Step] = [(self._ss_put_status, (ss, status))]
        Requests(proc.client, self.sim.sched, Phase.WORKLOADS, proc, steps, end).run()

    @staticmethod
    def _ss_put_status(now: int, ss: Workload, status: tuple[int, int]) -> None:
        ss.status_replicas, ss.ready_replicas = status

    @staticmethod
    def _healthy(pod: Pod) -> bool:
        """Port of statefulset isHealthy."""
        return is_running_and_ready(pod) and pod.deletion_ms is None


def _chain(chain: list[Step]) -> Step:
    """One goroutine's requests in order, as one step that returns the next; a request that
    returns False (a failed create) ends it (the sync returns its error)."""
    fn, args = chain[0]
    return (_chain_step, (fn, args, chain[1:]))


def _chain_step(now: int, fn: Any, args: tuple[Any, ...], rest: list[Step]) -> list[Step]:
    """A step of a sequential goroutine: the request, then (unless it failed) the next."""
    if fn(now, *args) is False or not rest:
        return []
    return [_chain(rest)]
