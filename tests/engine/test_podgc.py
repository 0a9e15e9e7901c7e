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

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
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


@pytest.mark.parametrize(
    ("version", "marked"),
    [
        pytest.param("1.18", [], id="1.18-deletePod-only"),
        pytest.param(
            CURRENT_VERSION,
            [
                ("PodDisruptionTarget", "DeletionByPodGC", "PodGC: node no longer exists"),
                ("PodPhase", "Failed", ""),
            ],
            id="current-markFailedAndDeletePodWithCondition",
        ),
    ],
)
def test_an_orphan_is_marked_failed_with_disruption_target_before_its_delete(
    version: str, marked: list[tuple[str, str, str]]
) -> None:
    # gcOrphaned (1.34) builds DisruptionTarget{DeletionByPodGC, "PodGC: node no longer exists"}
    # and markFailedAndDeletePodWithCondition patches it with phase Failed, then deletes with
    # grace 0; 1.18's gcOrphaned calls deletePod (grace 0) and nothing else.
    sim = run(version, ["{at: 30s, type: DeleteNode, node: a-1}"])
    at80 = [e for e in events(sim, "PodDisruptionTarget") + events(sim, "PodPhase") if e["t"] >= 80]
    got = [
        (e["type"], e["reason"], e["message"])
        if e["type"] == "PodDisruptionTarget"
        else (e["type"], e["phase"], "")
        for e in sorted(at80, key=lambda e: sim.timeline.events.index(e))
    ]
    assert got == marked
    assert [e["t"] for e in at80] == [80_000] * len(marked)
    assert podgc_deletes(sim) == [(80.0, "OrphanedPod")]


# -- gcTerminating: the out-of-service taint (1.28+) --------------------------------------------
# nodeMonitorGracePeriod pinned to 40 s in both profiles: a-1 powers off at 100 s (before its
# renewal at 100: last lease 90), Unknown at 135 (first monitor pass strictly past 90 + 40),
# unreachable:NoExecute at 140; web (no toleration) would be deleted by the taint manager at
# 140 + 300 = 440. ``calm`` tolerates every taint forever, so no taint manager deletes it.
OOS = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: oos}
spec:
  kubernetesVersion: "%(version)s"
  duration: 300s
  controllerManager: {nodeMonitorGracePeriod: 40s}
  nodes:
    - {name: a-1, zone: z}
    - {name: a-2, zone: z}
    - {name: a-3, zone: z}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {nodeName: a-1, containers: [{name: web}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: calm, namespace: default}
      spec:
        nodeName: a-1
        tolerations: [{operator: Exists}]
        containers: [{name: calm}]
  faults:
    - {at: 100s, type: PowerOffNode, node: a-1}
%(faults)s
"""


def run_oos(version: str, faults: list[str]) -> Any:
    body = "\n".join(f"    - {f}" for f in faults)
    return simulate(OOS % {"version": version, "faults": body})


TAINT_MANAGER = {"1.18": "TaintManager", CURRENT_VERSION: "TaintEvictionController"}


@pytest.mark.parametrize(
    ("faults", "taint_deleted", "gc_deleted", "why"),
    [
        pytest.param(
            ["{at: 165s, type: OutOfService, node: a-1}"],
            165.0,
            180.0,
            "the NoExecute out-of-service taint is not tolerated: the taint manager deletes web "
            "at 165 (Terminating, no kubelet); PodGC's next pass (180) sees a Terminating pod "
            "on a not-Ready (Unknown) node with the taint and force-deletes it",
            id="tainted-after-unknown",
        ),
        pytest.param(
            ["{at: 110s, type: OutOfService, node: a-1}"],
            110.0,
            140.0,
            "deleted at 110 by the taint manager, but a-1 is still Ready=True at the passes 120 "
            "(nodeutil.IsNodeReady) until the controller writes Unknown at 135: pass 140",
            id="tainted-while-still-ready",
        ),
        pytest.param(
            [
                "{at: 150s, type: DeletePod, pod: default/web}",
                "{at: 165s, type: Taint, node: a-1, key: node.kubernetes.io/out-of-service, "
                "effect: NoSchedule}",
            ],
            None,
            180.0,
            "taints.TaintKeyExists: any effect counts; a NoSchedule one makes the taint manager "
            "do nothing, web was deleted by a user at 150",
            id="noschedule-taint-also-counts",
        ),
        pytest.param(
            [
                "{at: 165s, type: OutOfService, node: a-1}",
                "{at: 175s, type: PowerOnNode, node: a-1}",
            ],
            165.0,
            None,
            "a-1 is Ready again at 175 (its kubelet posts at once): pass 180 skips it and the "
            "kubelet finishes web's termination itself",
            id="node-ready-again-before-the-pass",
        ),
    ],
)
@pytest.mark.parametrize("version", VERSIONS)
def test_out_of_service_force_deletes_terminating_pods_at_the_next_pass(
    version: str,
    faults: list[str],
    taint_deleted: float | None,
    gc_deleted: float | None,
    why: str,
) -> None:
    sim = run_oos(version, faults)
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [135.0]
    by = TAINT_MANAGER[version]
    assert times(sim, "PodDeleted", pod="default/web", by=by) == (
        [taint_deleted] if taint_deleted is not None else []
    ), why
    current = version == CURRENT_VERSION
    expected = [(gc_deleted, "TerminatingOutOfService")] if current and gc_deleted else []
    assert podgc_deletes(sim) == expected, why
    if expected:
        assert times(sim, "PodRemoved", pod="default/web") == [gc_deleted]
        # markFailedAndDeletePod: phase Failed first, no DisruptionTarget of PodGC's own.
        assert times(sim, "PodPhase", pod="default/web", phase="Failed") == [gc_deleted]
        assert [e["reason"] for e in events(sim, "PodDisruptionTarget", pod="default/web")] == (
            ["DeletionByTaintManager"] if taint_deleted is not None else []
        )
    elif gc_deleted is not None:  # 1.18: PodGC has no gcTerminating, web stays Terminating
        assert "default/web" in sim.cluster.pods
        assert sim.cluster.pods["default/web"].terminating
    # calm is not Terminating: gcTerminating never touches it.
    assert podgc_deletes(sim, "default/calm") == []


@pytest.mark.parametrize("version", VERSIONS)
def test_remove_out_of_service_takes_every_taint_with_the_key(version: str) -> None:
    sim = run_oos(
        version,
        [
            "{at: 150s, type: OutOfService, node: a-1}",
            "{at: 150s, type: OutOfService, node: a-1}",
            "{at: 155s, type: Taint, node: a-1, key: node.kubernetes.io/out-of-service, "
            "effect: NoSchedule}",
            "{at: 160s, type: RemoveOutOfService, node: a-1}",
        ],
    )
    key = "node.kubernetes.io/out-of-service"
    added = [(e["t"] / 1000, e["effect"]) for e in events(sim, "TaintAdded", key=key)]
    removed = [(e["t"] / 1000, e["effect"]) for e in events(sim, "TaintRemoved", key=key)]
    assert added == [(150.0, "NoExecute"), (155.0, "NoSchedule")]
    assert removed == [(160.0, "NoExecute"), (160.0, "NoSchedule")]
    node = sim.cluster.nodes["a-1"]
    assert [t.key for t in node.taints if t.key == key] == []
    assert [(t.value, t.effect) for t in node.taints if t.key == "node.kubernetes.io/unreachable"]


# -- gcTerminated ---------------------------------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
def test_terminated_pods_above_the_threshold_go_evicted_first_then_oldest(version: str) -> None:
    # terminatedPodThreshold is 12500 (--terminated-pod-gc-threshold); set to 1 here so three
    # Failed pods exceed it by 2. byEvictionAndCreationTimestamp (1.34): Evicted ones first,
    # then by creation, then name. (1.18 sorts by creation only; no difference for these.)
    sim = Simulation(load_scenario(CLUSTER % {"version": version, "faults": "", "duration": "60s"}))
    sim.pod_gc.terminated_pod_threshold = 1
    for name, at in (("old", 10_000), ("new", 11_000), ("evicted", 11_000)):
        sim.run(at)
        sim.apply_manifest(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": "a-2", "containers": [{"name": "c"}]},
            },
            at,
        )
    sim.run(15_000)
    for name, reason in (("old", ""), ("new", ""), ("evicted", "Evicted")):
        sim.cluster.set_pod_phase(sim.cluster.pods[f"default/{name}"], "Failed", 15_000, reason)
    sim.run(60_000)
    assert [(e["t"], e["pod"]) for e in events(sim, "PodDeleted", by="PodGC")] == [
        (20_000, "default/evicted"),
        (20_000, "default/old"),
    ]
    assert "default/new" in sim.cluster.pods


# -- the faults: bad input -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "path", "why"),
    [
        ("{at: 5s, type: OutOfService}", "spec.faults[0].node", "OutOfService needs node"),
        ("{at: 5s, type: OutOfService, node: nope}", "spec.faults[0].node", 'unknown node "nope"'),
        (
            "{at: 5s, type: RemoveOutOfService, node: a-1, effect: NoExecute}",
            "spec.faults[0]",
            "effect",
        ),
        ("{at: 5s, type: RemoveOutOfService, node: [a-1]}", "spec.faults[0].node", "string"),
    ],
)
@pytest.mark.parametrize("version", VERSIONS)
def test_out_of_service_faults_refuse_bad_input_with_the_path(
    version: str, fault: str, path: str, why: str
) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(CLUSTER % {"version": version, "faults": f"    - {fault}", "duration": "60s"})
    assert exc.value.path.startswith(path), str(exc.value)
    assert why in str(exc.value)


# -- gcUnscheduledTerminating ------------------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
def test_an_unscheduled_terminating_pod_is_force_deleted_at_the_next_pass(version: str) -> None:
    # Not reachable through the API here (CheckGracefulDelete gives an unbound pod grace 0, so
    # its DELETE removes it at once): the store is set up by hand, as a pod that lost the race
    # between its DELETE and its binding would be. Pass 20 deletes it; 1.18 has the rule too.
    sim = Simulation(load_scenario(CLUSTER % {"version": version, "faults": "", "duration": "60s"}))
    sim.run(12_000)
    sim.apply_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "lost", "namespace": "default"},
            "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "c"}]},
        },
        12_000,
    )
    pod = sim.cluster.pods["default/lost"]
    assert pod.node_name == ""
    pod.deletion_ms, pod.deletion_grace_s = 12_000, 30
    sim.cluster.terminating[pod.key] = pod
    sim.run(60_000)
    assert podgc_deletes(sim, "default/lost") == [(20.0, "UnscheduledTerminating")]
    assert times(sim, "PodRemoved", pod="default/lost") == [20.0]


# -- the built-in story under both releases ---------------------------------------------------
@pytest.mark.parametrize(
    ("version", "deleted", "gc", "removed"),
    [
        # 1.18: grace 40 s (Unknown 105, NoExecute 110, taint manager at 410); the taint is only
        # a NoExecute taint, so db-0 stays Terminating until the machine is back at 540 and its
        # kubelet finds the pod's containers gone.
        pytest.param("1.18", (410.0, "TaintManager"), [], 540.0, id="1.18"),
        # 1.34: grace 50 s (Unknown 115, NoExecute 120, taint-eviction-controller at 420);
        # out-of-service at 450, PodGC's pass at 460 force-deletes db-0.
        pytest.param(
            CURRENT_VERSION,
            (420.0, "TaintEvictionController"),
            [(460.0, "TerminatingOutOfService")],
            460.0,
            id="current",
        ),
    ],
)
def test_the_out_of_service_scenario_under_both_releases(
    version: str, deleted: tuple[float, str], gc: list[tuple[float, str]], removed: float
) -> None:
    from .conftest import REPO

    text = (REPO / "controller/scenarios/13-statefulset-out-of-service.yaml").read_text()
    text = text.replace(
        f'kubernetesVersion: "{CURRENT_VERSION}"', f'kubernetesVersion: "{version}"'
    )
    text = text[: text.index("  expect:")]
    sim = simulate(text)
    assert [(e["t"] / 1000, e["by"]) for e in events(sim, "PodDeleted", pod="default/db-0")][
        0
    ] == deleted
    assert podgc_deletes(sim, "default/db-0") == gc
    assert times(sim, "PodRemoved", pod="default/db-0") == [removed]
    created = [e for e in events(sim, "PodCreated", pod="default/db-0") if e["t"] > 0]
    assert [e["t"] / 1000 for e in created] == [removed]
