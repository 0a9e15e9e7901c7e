"""Fast big rooms: the room-creation benchmark scenario and the phases of a build."""

from __future__ import annotations

import json
from typing import Any

from .bench import ZONES, bare_pods


def big_room_scenario(nodes: int, pods: int, bare_per_node: int = 2) -> dict[str, Any]:
    """``nodes`` nodes over three zones (generated) and about ``pods`` pods: ``bare_per_node``
    bare pods bound by nodeName to each node, the rest from Deployments of 1,000 replicas
    each (scheduled), as a teacher's big room would have."""
    per_zone = nodes // len(ZONES)
    bare = bare_pods(per_zone, bare_per_node)
    rest = max(0, pods - len(bare))
    deployments = []
    i = 0
    while rest > 0:
        n = min(1000, rest)
        i += 1
        deployments.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"web-{i}", "namespace": "default"},
                "spec": {
                    "replicas": n,
                    "selector": {"matchLabels": {"app": f"web-{i}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"web-{i}"}},
                        "spec": {
                            "containers": [
                                {"name": "app", "resources": {"requests": {"cpu": "50m"}}}
                            ]
                        },
                    },
                },
            }
        )
        rest -= n
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"big-room-{nodes}"},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": deployments + bare,
            "faults": [{"at": "60s", "type": "ZoneOutage", "zone": "zone-a"}],
        },
    }


def big_room_text(nodes: int, pods: int) -> str:
    return json.dumps(big_room_scenario(nodes, pods), separators=(",", ":"))
