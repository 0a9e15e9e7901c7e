"""Workload controllers (placeholder until the workloads issue): apply keeps manifests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .objects import Pod

if TYPE_CHECKING:
    from .simulation import Simulation


class WorkloadControllers:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.objects: dict[str, dict[str, Any]] = {}

    def apply(self, manifest: dict[str, Any], now: int) -> None:
        self.objects[f"{manifest['kind']}/{manifest['metadata']['name']}"] = manifest

    def on_node_changed(self, name: str, now: int) -> None:
        pass

    def on_pod_changed(self, pod: Pod, now: int) -> None:
        pass

    def daemonset_selects(self, pod: Pod) -> bool:
        return False

    def scale(self, ref: str, replicas: int, now: int) -> None:
        pass
