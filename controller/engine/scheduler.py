"""kube-scheduler, reduced to the 1.18 predicates and priority that matter here:
PodToleratesNodeTaints, CheckNodeUnschedulable, PodMatchNodeSelector, PodFitsResources
(cpu, memory, ephemeral-storage, pods) and LeastRequestedPriority, with a deterministic
tie-break (node name) where Kubernetes picks at random among the best."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core import Phase
from .objects import NO_EXECUTE, NO_SCHEDULE, TAINT_UNSCHEDULABLE, Node, Pod, Taint, tolerations_tolerate_taint

if TYPE_CHECKING:
    from .simulation import Simulation

MAX_NODE_SCORE = 100
RESOURCES = (("cpu", "Insufficient cpu"), ("memory", "Insufficient memory"), ("ephemeral-storage", "Insufficient ephemeral-storage"))


class KubeScheduler:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.pending: dict[str, Pod] = {}
        self._at: int | None = None

    def enqueue(self, pod: Pod, now: int) -> None:
        self.pending[pod.key] = pod
        self.wake(now)

    def wake(self, now: int) -> None:
        if not self.pending or self._at == now:
            return
        self._at = now
        self.sim.sched.schedule(now, Phase.SCHEDULER, self._run)

    def _run(self) -> None:
        now = self.sim.sched.now_ms
        self._at = None
        requested = self._requested()
        order = sorted(self.pending.values(), key=lambda p: (-p.priority, p.creation_ms, p.key))
        for pod in order:
            if pod.key not in self.sim.cluster.pods or pod.node_name or pod.deletion_ms is not None:
                self.pending.pop(pod.key, None)
                continue
            node, message = self.schedule_one(pod, requested)
            if node is None:
                if message != pod.unschedulable_reason:
                    pod.unschedulable_reason = message
                    self.sim.cluster.record_event(now, f"Pod/{pod.key}", "FailedScheduling", message, "Warning")
                continue
            self.pending.pop(pod.key, None)
            self._add(requested, node.name, pod)
            self.sim.cluster.bind_pod(pod, node.name, now)

    def _requested(self) -> dict[str, dict[str, int]]:
        """Requests of the pods bound to each node (terminating ones still hold theirs)."""
        out: dict[str, dict[str, int]] = {}
        for name, pods in self.sim.cluster.pods_by_node.items():
            totals = {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": 0}
            for pod in pods.values():
                if pod.phase in ("Succeeded", "Failed"):
                    continue
                for r in ("cpu", "memory", "ephemeral-storage"):
                    totals[r] += pod.request(r)
                totals["pods"] += 1
            out[name] = totals
        return out

    @staticmethod
    def _add(requested: dict[str, dict[str, int]], node: str, pod: Pod) -> None:
        totals = requested.setdefault(node, {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": 0})
        for r in ("cpu", "memory", "ephemeral-storage"):
            totals[r] += pod.request(r)
        totals["pods"] += 1

    def schedule_one(self, pod: Pod, requested: dict[str, dict[str, int]]) -> tuple[Node | None, str]:
        """genericScheduler.Schedule: filter, then score; else the FitError message."""
        nodes = self.sim.sorted_nodes()
        reasons: dict[str, int] = {}
        best: tuple[int, str] | None = None
        best_node: Node | None = None
        for node in nodes:
            reason = self.filter(pod, node, requested.get(node.name))
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
                continue
            score = self.least_requested(pod, node, requested.get(node.name))
            key = (-score, node.name)
            if best is None or key < best:
                best, best_node = key, node
        if best_node is not None:
            return best_node, ""
        parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
        return None, f"0/{len(nodes)} nodes are available: {', '.join(parts)}."

    def filter(self, pod: Pod, node: Node, used: dict[str, int] | None) -> str | None:
        if node.unschedulable and not tolerations_tolerate_taint(pod.tolerations, Taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE)):
            return "node(s) were unschedulable"
        for k, v in pod.node_selector.items():
            if node.labels.get(k) != v:
                return "node(s) didn't match node selector"
        for taint in node.taints:
            if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerations_tolerate_taint(pod.tolerations, taint):
                return f"node(s) had taint {{{taint.key}: {taint.value}}}, that the pod didn't tolerate"
        used = used or {}
        alloc = node.resources.allocatable
        if used.get("pods", 0) + 1 > alloc.get("pods", 110):
            return "Too many pods"
        for resource, reason in RESOURCES:
            req = pod.request(resource)
            if req and used.get(resource, 0) + req > alloc.get(resource, 0):
                return reason
        return None

    @staticmethod
    def least_requested(pod: Pod, node: Node, used: dict[str, int] | None) -> int:
        """LeastRequestedPriority: mean over cpu and memory of (capacity - requested) * 100 / capacity."""
        used = used or {}
        total = 0
        for r in ("cpu", "memory"):
            cap = node.resources.allocatable.get(r, 0)
            req = used.get(r, 0) + pod.request(r)
            total += 0 if cap == 0 or req > cap else (cap - req) * MAX_NODE_SCORE // cap
        return total // 2
