"""What the kubelet's stats provider (cAdvisor / CRI stats) would report: node and pod
usage computed from the scenario's declared usage plus the growing usage of faults
(``LeakMemory``, ``FillDisk``). Growth is linear and evaluated lazily at read time."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..objects import Node, Pod
from ..values import INT64_MAX

if TYPE_CHECKING:
    from ..simulation import Simulation


@dataclass(slots=True)
class Leak:
    """Usage of ``resource`` on a pod or node grows by ``rate`` bytes per second from
    ``start_ms`` until ``until_ms`` (absolute) or until stopped."""

    resource: str
    rate: int
    start_ms: int
    until_ms: int | None = None
    stopped_ms: int | None = None

    def grown(self, now_ms: int) -> int:
        end = now_ms
        if self.until_ms is not None:
            end = min(end, self.until_ms)
        if self.stopped_ms is not None:
            end = min(end, self.stopped_ms)
        return max(0, end - self.start_ms) * self.rate // 1000

    def active(self, now_ms: int) -> bool:
        return self.stopped_ms is None and (self.until_ms is None or now_ms < self.until_ms)


class Leaks:
    """Every running leak, keyed by ("pod", ns/name) or ("node", name)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.by_target: dict[tuple[str, str], list[Leak]] = {}
        self.by_node: dict[str, set[tuple[str, str]]] = {}  # node -> targets leaking on it

    def start(
        self, target: tuple[str, str], resource: str, rate: int, now: int, until_ms: int | None
    ) -> None:
        until = now + until_ms if until_ms is not None else None
        self.by_target.setdefault(target, []).append(Leak(resource, rate, now, until))
        node = target[1] if target[0] == "node" else self._pod_node(target[1])
        if node:
            self.by_node.setdefault(node, set()).add(target)
        self._wake(target, now)

    def _pod_node(self, key: str) -> str:
        pod = self.sim.cluster.pods.get(key)
        return pod.node_name if pod is not None else ""

    def stop(self, target: tuple[str, str], now: int) -> None:
        for leak in self.by_target.get(target, []):
            if leak.stopped_ms is None:
                leak.stopped_ms = now
        self._wake(target, now)

    def extra(self, target: tuple[str, str], resource: str, now: int) -> int:
        leaks = self.by_target.get(target)
        if not leaks:
            return 0
        # A usage stays within what a Quantity (and the stats' JSON) holds, however long a
        # leak of up to 2^63-1 bytes per second ("99999Ei", capped by ParseQuantity) runs.
        return min(INT64_MAX, sum(leak.grown(now) for leak in leaks if leak.resource == resource))

    def node_has_active_leak(self, node_name: str, now: int) -> bool:
        for target in self.by_node.get(node_name, ()):
            if not any(leak.active(now) for leak in self.by_target.get(target, ())):
                continue
            if target[0] == "node":
                return True
            pod = self.sim.cluster.pods.get(target[1])
            if pod is not None and pod.started:
                return True
        return False

    def running(self, target: tuple[str, str], now: int) -> list[dict[str, object]]:
        """The leaks running on ``target`` now, as its view shows them (issue #38: a fault
        shows on its node at once): resource, rate in bytes per second, and ``until`` (the
        simulated second it stops by itself, or None)."""
        return [
            {
                "resource": leak.resource,
                "rate": leak.rate,
                "until": leak.until_ms / 1000 if leak.until_ms is not None else None,
            }
            for leak in self.by_target.get(target, ())
            if leak.active(now)
        ]

    def forget_pod(self, key: str, now: int) -> None:
        """The pod's containers died: its leak ends with it."""
        if self.by_target.pop(("pod", key), None) is not None:
            for targets in self.by_node.values():
                targets.discard(("pod", key))

    def _wake(self, target: tuple[str, str], now: int) -> None:
        if target[0] == "node":
            self.sim.on_usage_changed(target[1], now)
        else:
            pod = self.sim.cluster.pods.get(target[1])
            if pod is not None:
                self.sim.on_usage_changed(pod.node_name, now)


def pod_usage(sim: Simulation, pod: Pod, resource: str, now: int) -> int:
    """A running pod's usage of memory (working set), ephemeral-storage or pids."""
    if not pod.started:
        return 0
    base = pod.usage.get(resource, 0)
    if not sim.leaks.by_target:
        return base
    return min(INT64_MAX, base + sim.leaks.extra(("pod", pod.key), resource, now))


def pods_usage(sim: Simulation, pods: list[Pod], now: int) -> tuple[int, int, int]:
    """Sum of memory, ephemeral-storage and pids over the running pods, leaks included."""
    mem, eph, pids = declared_pods_usage(pods)
    if sim.leaks.by_target:
        lmem, leph, lpids = leaked_pods_usage(sim, pods, now)
        return min(INT64_MAX, mem + lmem), min(INT64_MAX, eph + leph), min(INT64_MAX, pids + lpids)
    return mem, eph, pids


def declared_pods_usage(pods: Iterable[Pod]) -> tuple[int, int, int]:
    """pods_usage without the leaks: the running pods' declared memory, ephemeral-storage
    and pids."""
    mem = eph = pids = 0
    for pod in pods:
        if not pod.started:
            continue
        u = pod.usage
        if u:
            mem += u.get("memory", 0)
            eph += u.get("ephemeral-storage", 0)
            pids += u.get("pids", 0)
    return mem, eph, pids


def leaked_pods_usage(sim: Simulation, pods: Iterable[Pod], now: int) -> tuple[int, int, int]:
    """What the running pods' leaks add to pods_usage at ``now``."""
    mem = eph = pids = 0
    leaks = sim.leaks
    for pod in pods:
        if pod.started and ("pod", pod.key) in leaks.by_target:
            target = ("pod", pod.key)
            mem += leaks.extra(target, "memory", now)
            eph += leaks.extra(target, "ephemeral-storage", now)
            pids += leaks.extra(target, "pids", now)
    return mem, eph, pids


def node_own_usage(sim: Simulation, node: Node, resource: str, now: int) -> int:
    """The node's own, non-pod usage (system daemons, other files)."""
    own = node.resources.system_usage.get(resource, 0)
    return min(INT64_MAX, own + sim.leaks.extra(("node", node.name), resource, now))


def images_bytes(node: Node) -> int:
    return sum(i.size for i in node.resources.images)
