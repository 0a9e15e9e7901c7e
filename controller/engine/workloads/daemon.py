"""The DaemonSet controller (pkg/controller/daemon): syncDaemonSet's manage, the failed-pod
backoff, nodeShouldRunDaemonPod. A part of WorkloadControllers."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..client import Parallel, Requests, Step
from ..core import Phase
from ..objects import NO_EXECUTE, NO_SCHEDULE, Node, Pod
from .clients import slow_start_batch
from .common import (
    CONTROLLER_REVISION_HASH,
    DS_BACKOFF_INITIAL_MS,
    DS_BACKOFF_MAX_MS,
    DS_BURST_REPLICAS,
    compute_hash,
    is_pod_ready,
)
from .workload import Workload


class DaemonSetsController:
    """The DaemonSet controller (pkg/controller/daemon): syncDaemonSet's manage, the failed-pod
    backoff, nodeShouldRunDaemonPod. A part of WorkloadControllers."""

    def _index_daemon_pod(self, ds_key: str, pod: Pod, alive: bool) -> None:
        node = self.ds_target.get(pod.key) or pod.node_name
        if alive:
            self.ds_target.setdefault(pod.key, node)
            self.ds_pods.setdefault(ds_key, {}).setdefault(node, {})[pod.key] = pod
        else:
            on_node = self.ds_pods.get(ds_key, {}).get(node, {})
            if on_node.get(pod.key) is pod:
                del on_node[pod.key]

    def sync_daemon_set(self, ds: Workload, now: int) -> None:
        """Port of DaemonSetsController.manage (podsShouldBeOnNode for each node that changed)
        and syncNodes (pkg/controller/daemon/daemon_controller.go): creates in slow-start
        batches, then the deletes, then storeDaemonSetStatus, every request through the
        daemon-set-controller client (workloads/clients.py); the sync ends with its last."""
        self.procs["DaemonSet"].check_client(self.sim)
        proto = self._pod_template(ds)
        nodes = sorted(self.sim.cluster.nodes) if ds.dirty_nodes is None else sorted(ds.dirty_nodes)
        if ds.dirty_nodes is None:
            nodes = sorted(set(nodes) | set(self.ds_pods.get(ds.key, {})))
        ds.dirty_nodes = set()
        by_node = self.ds_pods.get(ds.key, {})
        to_create: list[str] = []
        to_delete: list[tuple[Pod, str]] = []
        for name in nodes:
            node = self.sim.cluster.nodes.get(name)
            pods = sorted(
                by_node.get(name, {}).values(),
                key=lambda p: (0 if p.node_name else 1, p.creation_ms, p.name),
            )
            if node is None:
                ds.should_run.discard(name)
                ds.ready_nodes.discard(name)
                # getUnscheduledPodsWithoutNode: pinned to a node that is gone
                to_delete.extend(
                    (p, "NodeGone") for p in pods if not p.node_name and p.deletion_ms is None
                )
                continue
            should_run, should_continue = node_should_run_daemon_pod(proto, node)
            if should_run and not pods:
                to_create.append(name)
            elif should_continue:
                running = []
                for p in pods:
                    if p.deletion_ms is not None:
                        continue
                    if p.phase == "Failed":
                        if self._in_backoff(ds, name, now):
                            continue
                        self._event(
                            now,
                            ds,
                            "FailedDaemonPod",
                            f"Found failed daemon pod {p.key} on node {name}, will try to kill it",
                            "Warning",
                        )
                        to_delete.append((p, "FailedDaemonPod"))
                    else:
                        running.append(p)
                to_delete.extend((p, "ExcessDaemonPod") for p in running[1:])
            elif pods:
                to_delete.extend((p, "NodeNotEligible") for p in pods if p.deletion_ms is None)
            if should_run:
                ds.should_run.add(name)
                if pods and is_pod_ready(pods[0]):
                    ds.ready_nodes.add(name)
                else:
                    ds.ready_nodes.discard(name)
            else:
                ds.should_run.discard(name)
                ds.ready_nodes.discard(name)
        # syncNodes: createDiff and deleteDiff each capped at burstReplicas (250); the nodes
        # past it are synced again after this sync.
        for name in to_create[DS_BURST_REPLICAS:]:
            self._mark_ds_node(ds, name)
        for pod, _ in to_delete[DS_BURST_REPLICAS:]:
            self._mark_ds_node(ds, self.ds_target.get(pod.key) or pod.node_name)
        if len(to_create) > DS_BURST_REPLICAS or len(to_delete) > DS_BURST_REPLICAS:
            self._mark(ds.key, now)
        proc = self.procs["DaemonSet"]
        status = (len(ds.should_run), len(ds.ready_nodes))
        deletes = partial(self._ds_deletes, proc, ds, to_delete[:DS_BURST_REPLICAS], status)
        each: list[list[Step]] = [
            [(self._ds_create, (ds, name))] for name in to_create[:DS_BURST_REPLICAS]
        ]
        if each:
            slow_start_batch(proc, self.sim.sched, each, deletes)
        else:
            deletes()

    def _ds_create(self, now: int, ds: Workload, node: str) -> None:
        """One create of syncNodes' slow start at its token's instant: a pod pinned to
        ``node`` (its node affinity), named by the API server."""
        pod_name = self._generate_name(ds)
        labels = {
            CONTROLLER_REVISION_HASH: compute_hash(ds.template),
            "pod-template-generation": "1",
        }
        pod = self._new_pod(ds, pod_name, now, labels)
        self.ds_target[pod.key] = node
        self.sim.kube_scheduler.set_node_affinity(pod.key, node)
        self._create_pod(ds, pod, now, f"Created pod: {pod_name}")

    def _ds_deletes(
        self, proc: Any, ds: Workload, to_delete: list[tuple[Pod, str]], status: tuple[int, int]
    ) -> None:
        """syncNodes' deletes, after the creates: one goroutine each, all at once; then the
        status."""
        each: list[list[Step]] = [[(self._ds_delete, (ds, pod, why))] for pod, why in to_delete]
        after = partial(self._ds_status, proc, ds, status)
        Parallel(after).run(proc.client, self.sim.sched, Phase.WORKLOADS, proc, each)

    def _ds_delete(self, now: int, ds: Workload, pod: Pod, reason: str) -> None:
        self._delete_pod(ds, pod, now, reason, f"Deleted pod: {pod.name}")

    def _ds_status(self, proc: Any, ds: Workload, status: tuple[int, int]) -> None:
        """storeDaemonSetStatus: a PUT only when a counter changed (here desired and ready,
        kept in status_replicas / ready_replicas); then the sync ends."""
        end = partial(self._sync_end, proc, ds.key)
        if status == (ds.status_replicas, ds.ready_replicas):
            end()
            return
        steps: list[Step] = [(self._ds_put_status, (ds, status))]
        Requests(proc.client, self.sim.sched, Phase.WORKLOADS, proc, steps, end).run()

    @staticmethod
    def _ds_put_status(now: int, ds: Workload, status: tuple[int, int]) -> None:
        ds.status_replicas, ds.ready_replicas = status

    def _in_backoff(self, ds: Workload, node: str, now: int) -> bool:
        """failedPodsBackoff (flowcontrol.Backoff, 1 s doubling to 15 min): True while the
        node's last failed-pod deletion is recent; else record this one."""
        entry = ds.backoff.get(node)
        expired = entry is None or now - entry[1] > 2 * DS_BACKOFF_MAX_MS
        if not expired and entry is not None and now - entry[1] < entry[0]:
            self.sim.sched.schedule(
                now + entry[0], Phase.WORKLOADS, self._mark_ds_node_later, ds.key, node
            )
            return True
        delay = (
            DS_BACKOFF_INITIAL_MS
            if expired or entry is None
            else min(entry[0] * 2, DS_BACKOFF_MAX_MS)
        )
        ds.backoff[node] = (delay, now)
        return False


def node_should_run_daemon_pod(pod: Pod, node: Node) -> tuple[bool, bool]:
    """Port of nodeShouldRunDaemonPod (Predicates: nodeName, nodeSelector, NoSchedule and
    NoExecute taints): (should run, should continue running if already there)."""
    if pod.node_name and pod.node_name != node.name:
        return False, False
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False, False
    untolerated = [
        t
        for t in node.taints
        if (t.effect == NO_SCHEDULE or t.effect == NO_EXECUTE)
        and not any(tol.tolerates(t) for tol in pod.tolerations)
    ]
    if untolerated:
        return False, not any(t.effect == NO_EXECUTE for t in untolerated)
    return True, True
