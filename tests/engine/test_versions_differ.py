"""The same node failure under 1.18 and 1.34 (controller/scenarios/14-same-failure-*.yaml,
identical but for their header, kubernetesVersion and expectations): the two timelines differ
exactly where the current profile's differences say, and nowhere else.

From the 1.18 timeline the 1.34 one is predicted by applying, and only applying:

1. nodeMonitorGracePeriod 50 s instead of 40 s (RecommendedDefaultNodeLifecycleController-
   Configuration, #126287): everything the failure causes happens 10 s later;
2. nodeutil.MarkPodsNotReady records a Warning NodeNotReady "Node is not ready" on each pod right
   after it sets the pod's Ready condition to False;
3. the taint-eviction-controller (tainteviction.Controller) deletes instead of the
   NoExecuteTaintManager (PodDeleted ``by``), and addConditionAndDeletePod writes the
   DisruptionTarget condition (DeletionByTaintManager) right before each DELETE.

Everything up to the fault (registration, first statuses, scheduling) is the same.
"""

from __future__ import annotations

import io
import json
from typing import Any

from controller.engine.cli import run

from .conftest import REPO

SCENARIOS = REPO / "controller" / "scenarios"
FAULT_S = 62.0
GRACE_SHIFT_S = 10.0  # 50 s - 40 s


def timeline(name: str) -> list[dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    code = run(str(SCENARIOS / name), None, "jsonl", None, False, out, err)
    assert code == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def predict_current(events_118: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The 1.34 timeline as the three differences above make it from the 1.18 one."""
    out: list[dict[str, Any]] = []
    for e in events_118:
        if e["t"] <= FAULT_S:
            out.append(e)
            continue
        e = {**e, "t": e["t"] + GRACE_SHIFT_S}
        if e["type"] == "PodDeleted" and e["by"] == "TaintManager":
            out.append(
                {
                    "type": "PodDisruptionTarget",
                    "t": e["t"],
                    "pod": e["pod"],
                    "node": e["node"],
                    "reason": "DeletionByTaintManager",
                    "message": "Taint manager: deleting due to NoExecute taint",
                }
            )
            e["by"] = "TaintEvictionController"
        out.append(e)
        if e["type"] == "PodReady" and e["status"] == "False":
            out.append(
                {
                    "type": "K8sEvent",
                    "t": e["t"],
                    "object": f"Pod/{e['pod']}",
                    "reason": "NodeNotReady",
                    "message": "Node is not ready",
                    "eventType": "Warning",
                }
            )
    return out


def test_the_timelines_differ_exactly_where_the_releases_do() -> None:
    old = timeline("14-same-failure-1.18.yaml")
    new = timeline("14-same-failure-1.34.yaml")
    assert new == predict_current(old)


def test_the_differences_are_really_there() -> None:
    """The prediction is not the identity: each of the three differences shows up."""
    old = timeline("14-same-failure-1.18.yaml")
    new = timeline("14-same-failure-1.34.yaml")

    def at(events: list[dict[str, Any]], **fields: Any) -> list[float]:
        return [e["t"] for e in events if all(e.get(k) == v for k, v in fields.items())]

    assert at(old, type="NodeReady", node="a-2", status="Unknown") == [105.0]
    assert at(new, type="NodeReady", node="a-2", status="Unknown") == [115.0]
    assert at(old, type="K8sEvent", reason="NodeNotReady", eventType="Warning") == []
    assert at(new, type="K8sEvent", reason="NodeNotReady", eventType="Warning") == [115.0] * 4
    assert at(old, type="PodDisruptionTarget") == []
    assert at(new, type="PodDisruptionTarget") == [180.0, 420.0, 420.0]
    assert at(old, type="PodDeleted", by="TaintManager") == [170.0, 410.0, 410.0]
    assert at(new, type="PodDeleted", by="TaintEvictionController") == [180.0, 420.0, 420.0]
    assert old[: len(at(old, t=0.0))] == new[: len(at(new, t=0.0))]
