"""metrics.k8s.io/v1beta1 (``kubectl top node``, ``kubectl top pod``): the simulated usage as
metrics-server would report it. A node's memory is its capacity less the kubelet's
``memory.available`` signal (what the eviction manager measures); a pod's is its simulated
usage. CPU is not simulated: it reads 0."""

from __future__ import annotations

from typing import Any

from .objects import Clock, bytes_quantity

WINDOW = "10s"


def _memory_used(view: dict[str, Any]) -> int:
    for s in (view.get("kubelet") or {}).get("signals") or []:
        if s.get("signal") == "memory.available":
            return max(0, int(s.get("capacity", 0)) - int(s.get("available", 0)))
    return 0


def node_metrics(view: dict[str, Any], clock: Clock, rv: int) -> dict[str, Any]:
    return {
        "kind": "NodeMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {
            "name": view["name"],
            "creationTimestamp": clock.time(clock.sim_now_s),
            "labels": dict(view.get("labels") or {}),
        },
        "timestamp": clock.time(clock.sim_now_s),
        "window": WINDOW,
        "usage": {"cpu": "0", "memory": bytes_quantity(_memory_used(view)) or "0"},
    }


def pod_metrics(view: dict[str, Any], clock: Clock, rv: int) -> dict[str, Any]:
    namespace, _, name = view["key"].partition("/")
    memory = int((view.get("usage") or {}).get("memory", 0))
    containers = view.get("containers") or [{"name": "main"}]
    usage = [
        {
            "name": c["name"],
            "usage": {"cpu": "0", "memory": bytes_quantity(memory if i == 0 else 0) or "0"},
        }
        for i, c in enumerate(containers)
    ]
    return {
        "kind": "PodMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": clock.time(clock.sim_now_s),
            "labels": dict(view.get("labels") or {}),
        },
        "timestamp": clock.time(clock.sim_now_s),
        "window": WINDOW,
        "containers": usage,
    }
