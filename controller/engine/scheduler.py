"""kube-scheduler (placeholder until the workloads issue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .objects import Pod

if TYPE_CHECKING:
    from .simulation import Simulation


class KubeScheduler:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def enqueue(self, pod: Pod, now: int) -> None:
        pass

    def wake(self, now: int) -> None:
        pass
