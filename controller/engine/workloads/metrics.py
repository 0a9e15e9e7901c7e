"""The availability metrics the page charts (not a Kubernetes controller): pods by phase,
nodes by zone and state, each workload's desired and ready replicas, kept incrementally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..nodelifecycle.zones import zone_display
from ..objects import Node
from ..series import append_change
from .common import (
    NODE_STATES,
    POD_PHASES,
    node_metrics_class,
    pod_metrics_class,
)

if TYPE_CHECKING:
    from ..simulation import Simulation


class AvailabilityMetrics:
    """The availability metrics the page charts (not a Kubernetes controller): pods by phase,
    nodes by zone and state, each workload's desired and ready replicas, kept incrementally."""

    def _count_pod(self, key: str, prev: str | None, cls: str | None) -> None:
        """The pod ``key`` moves from class ``prev`` (its kept one) to ``cls``."""
        if prev == cls:
            return
        if prev is not None:
            self.pod_counts[prev] -= 1
        if cls is None:
            self._pod_class.pop(key, None)
        else:
            self._pod_class[key] = cls
            self.pod_counts[cls] = self.pod_counts.get(cls, 0) + 1

    def _count_node(self, name: str, node: Node | None) -> None:
        prev = self._node_class.get(name)
        now_cls = (
            (zone_display(node.zone_key), node_metrics_class(node)) if node is not None else None
        )
        if prev == now_cls:
            return
        if prev is not None:
            self.zone_counts[prev[0]][prev[1]] -= 1
        if now_cls is None:
            self._node_class.pop(name, None)
        else:
            self._node_class[name] = now_cls
            zone = self.zone_counts.setdefault(now_cls[0], dict.fromkeys(NODE_STATES, 0))
            zone[now_cls[1]] += 1

    def metrics(self) -> dict[str, tuple[int, int]]:
        """Per workload ``Kind/namespace/name``: (desired, ready) replicas. A Deployment's
        ReplicaSets are counted in the Deployment; a DaemonSet's desired count is the number
        of nodes that should run its pod."""
        return {
            key: w.desired_and_ready()
            for key, w in sorted(self.workloads.items())
            if not (w.kind == "ReplicaSet" and w.owner is not None)
        }

    def cluster_metrics(self) -> dict[str, Any]:
        """Pods by phase (Terminating apart) and, per zone, nodes by Ready status."""
        return {
            "pods": dict(self.pod_counts),
            "zones": {z: dict(c) for z, c in sorted(self.zone_counts.items()) if any(c.values())},
        }

    def on_node_status(self, node: Node, now: int) -> None:
        """A node's status changed (its Ready condition moves it between Ready, NotReady and
        Unknown): count it, and sample the cluster series at once."""
        before = self._node_class.get(node.name)
        self._count_node(node.name, node)
        if self._node_class.get(node.name) != before:
            self._sample_cluster(now)

    def _sample(self, now: int) -> None:
        """Append to the series only what changed; several samples in one instant keep the
        last (memory grows with changes, not with time)."""
        for key, value in self.metrics().items():
            append_change(self.workload_series.setdefault(key, []), now, value)
        self._sample_cluster(now)

    def _sample_cluster(self, now: int) -> None:
        pods = tuple(self.pod_counts[p] for p in POD_PHASES)
        zones = tuple(
            (z, *(c[s] for s in NODE_STATES))
            for z, c in sorted(self.zone_counts.items())
            if any(c.values())
        )
        append_change(self.cluster_series, now, (pods, zones))

    def series(self) -> dict[str, Any]:
        """The time series, JSON-friendly: ``t`` in ms."""
        return {
            "workloads": {
                key: [{"t": t, "desired": d, "ready": r} for t, d, r in points]
                for key, points in sorted(self.workload_series.items())
            },
            "cluster": [
                {
                    "t": t,
                    "pods": dict(zip(POD_PHASES, pods)),
                    "zones": {z[0]: dict(zip(NODE_STATES, z[1:])) for z in zones},
                }
                for t, pods, zones in self.cluster_series
            ],
        }


def count_cluster(sim: Simulation) -> dict[str, Any]:
    """``cluster_metrics`` computed from scratch (O(pods + nodes)): for checks and snapshots."""
    pods = dict.fromkeys(POD_PHASES, 0)
    for pod in sim.cluster.pods.values():
        cls = pod_metrics_class(pod)
        pods[cls] = pods.get(cls, 0) + 1
    zones: dict[str, dict[str, int]] = {}
    for node in sim.sorted_nodes():
        zone = zones.setdefault(zone_display(node.zone_key), dict.fromkeys(NODE_STATES, 0))
        zone[node_metrics_class(node)] += 1
    return {"pods": pods, "zones": dict(sorted(zones.items()))}
