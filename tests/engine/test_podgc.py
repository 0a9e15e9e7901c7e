"""PodGC (pkg/controller/podgc/gc_controller.go), ported in controller/engine/podgc.py, with
exact simulated times under both profiles.

Timing, from the source: ``Run`` starts ``wait.UntilWithContext(ctx, gcc.gc, gcCheckPeriod)``,
so passes run at the controller manager's start and every 20 s after (0, 20, 40, ... here; a
RestartControllerManager at t starts a new grid t, t + 20, ...). Same-instant order: faults
before the pass (PodGC runs in the WORKLOADS phase).

``gcOrphaned`` does not delete at the pass that first sees a pod bound to a missing node: it
calls ``nodeQueue.AddAfter(nodeName, quarantineTime)`` (40 s). ``discoverDeletedNodes`` only
takes what ``nodeQueue.Len()`` counts, i.e. names whose delay has passed (an item already
waiting keeps its earlier readyAt, so the passes in between do not push it back). The loop is
sliding (the next period starts after ``gc`` returns), so the name added at pass P with readyAt
P + 40 s is in the queue when the pass two periods later runs: that pass GETs the node, finds
it gone and force-deletes its pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.versions import CURRENT_VERSION

from .conftest import events, simulate, times

CLUSTER = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: podgc}
spec:
  kubernetesVersion: "%(version)s"
  duration: %(duration)s
  nodes:
    - {name: a-1, zone: z}
    - {name: a-2, zone: z}
    - {name: a-3, zone: z}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec:
        nodeName: a-1
        containers: [{name: web}]
  faults:
%(faults)s
"""

VERSIONS = ["1.18", CURRENT_VERSION]


def run(version: str, faults: list[str], duration: str = "300s") -> Any:
    body = "\n".join(f"    - {f}" for f in faults)
    return simulate(CLUSTER % {"version": version, "faults": body, "duration": duration})


def podgc_deletes(sim: Any, pod: str = "default/web") -> list[tuple[float, str]]:
    return [(e["t"] / 1000, e["reason"]) for e in events(sim, "PodDeleted", pod=pod, by="PodGC")]


# -- gcOrphaned: the quarantine (both releases) -------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("faults", "deleted_at", "why"),
    [
        pytest.param(
            ["{at: 30s, type: DeleteNode, node: a-1}"],
            80.0,
            "pass 40 quarantines a-1 (readyAt 80), pass 60 finds nothing ready, pass 80 deletes",
            id="delete-at-30",
        ),
        pytest.param(
            ["{at: 40s, type: DeleteNode, node: a-1}"],
            80.0,
            "the fault runs before the pass of its instant: pass 40 quarantines, pass 80 deletes",
            id="delete-on-a-pass",
        ),
        pytest.param(
            ["{at: 41s, type: DeleteNode, node: a-1}"],
            100.0,
            "first pass after 41 is 60 (readyAt 100), deleted at pass 100",
            id="delete-at-41",
        ),
        pytest.param(
            [
                "{at: 30s, type: DeleteNode, node: a-1}",
                "{at: 70s, type: RestartControllerManager}",
            ],
            110.0,
            "the restart loses the queue (a-1 waited until 80); the new loop passes at 70, 90, "
            "110: quarantined again at 70, deleted at 110",
            id="restart-loses-quarantine",
        ),
    ],
)
def test_orphaned_pods_wait_out_the_quarantine(
    version: str, faults: list[str], deleted_at: float, why: str
) -> None:
    sim = run(version, faults)
    assert podgc_deletes(sim) == [(deleted_at, "OrphanedPod")], why
    assert times(sim, "PodRemoved", pod="default/web") == [deleted_at]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_node_back_before_the_quarantine_ends_keeps_its_pods(version: str) -> None:
    # a-1 deleted at 30 (quarantined at pass 40, readyAt 80) and created again at 50: at pass 80
    # discoverDeletedNodes gets "a-1", the lister has it, so nothing is deleted, ever.
    sim = run(
        version,
        [
            "{at: 30s, type: DeleteNode, node: a-1}",
            "{at: 50s, type: AddNode, node: {name: a-1, zone: z}}",
        ],
    )
    assert podgc_deletes(sim) == []
    assert "default/web" in sim.cluster.pods
