"""The clusters the benchmark rows run: nodes over three zones with bare pods bound by
nodeName (pure, no Django)."""

from __future__ import annotations

import json
from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")


def bare_pods(per_zone: int, per_node: int) -> list[dict[str, Any]]:
    """``per_node`` bare pods (100m cpu) bound by nodeName to each of the ``per_zone`` nodes
    of every zone in ZONES (nodes named ``a-1``, ``b-1``...)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{z[-1]}-{i}-pod-{j}", "namespace": "default"},
            "spec": {
                "nodeName": f"{z[-1]}-{i}",
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}],
            },
        }
        for z in ZONES
        for i in range(1, per_zone + 1)
        for j in range(per_node)
    ]


def live_scenario(nodes: int, pods_per_node: int, name: str, outage_at: str | None = "60s") -> str:
    """``nodes`` nodes in three zones with bare pods bound by nodeName (the live path, not the
    scheduler); zone-a goes dark at ``outage_at`` (None: never). Compact JSON (JSON is
    YAML)."""
    per_zone = max(1, nodes // len(ZONES))
    scenario = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": name},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": bare_pods(per_zone, pods_per_node),
            "faults": [{"at": outage_at, "type": "ZoneOutage", "zone": "zone-a"}]
            if outage_at
            else [],
        },
    }
    return json.dumps(scenario, separators=(",", ":"))


def page_scenario(nodes: int, pods_per_node: int, replicas: int) -> dict[str, Any]:
    """N nodes over three zones (as live_scenario), ``pods_per_node`` bare pods
    bound to each, and a Deployment whose pods tolerate unreachable for 30 s (evicted and
    rescheduled within the run). a-1's kubelet stops at 60 s; zone-b goes dark at 240 s
    (a third of the nodes turn Unknown at once, then are tainted at the zone's rate)."""
    per_zone = max(1, nodes // len(ZONES))
    requests = {"cpu": "100m", "memory": "128Mi"}
    pods = bare_pods(per_zone, pods_per_node)
    toleration = {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 30,
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "tolerations": [toleration],
                    "containers": [{"name": "web", "resources": {"requests": requests}}],
                },
            },
        },
    }
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"pagebench-{nodes}"},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": ([deployment] if replicas else []) + pods,
            "faults": [
                {"at": "60s", "type": "StopKubelet", "node": "a-1"},
                {"at": "240s", "type": "ZoneOutage", "zone": "zone-b"},
            ],
        },
    }
