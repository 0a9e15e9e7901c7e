"""The taint-based eviction differences of the current profile, each against 1.18, with exact
simulated times (tainteviction.Controller, pkg/controller/tainteviction/taint_eviction.go and
timed_workers.go; nodelifecycle.Controller and nodeutil.MarkPodsNotReady, 1.34 source).

Every story runs the same cluster under each release with nodeMonitorGracePeriod pinned to
40 s, so the 50 s default of the current profile does not move the times. a-1's kubelet stops
at 100 s (before its renewal at 100 s: last renewal 90 s); the pass at 135 s is the first
strictly past 90 + 40, so a-1 goes Unknown at 135 s; the next pass (140 s) observes Unknown and
queues it, and it gets unreachable:NoExecute at 140 s. ``quick`` tolerates unreachable 20 s
(and a ``maintenance`` taint forever), ``web`` has the default 300 s.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.nodelifecycle.taint_manager import get_min_toleration_time_ms
from controller.engine.objects import Toleration
from controller.engine.versions import CURRENT_VERSION

from .conftest import events, simulate, times

CLUSTER = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  kubernetesVersion: "%(version)s"
  duration: %(duration)s
  controllerManager: {nodeMonitorGracePeriod: 40s}
  nodes:
    - {name: a-1, zone: zone-a}
    - {name: a-2, zone: zone-a}
    - {name: a-3, zone: zone-a}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec:
        nodeName: a-1
        containers: [{name: web}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: quick, namespace: default}
      spec:
        nodeName: a-1
        tolerations:
          - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}
          - {key: maintenance, operator: Exists, effect: NoExecute}
        containers: [{name: quick}]
  faults:
    - {at: 100s, type: StopKubelet, node: a-1}
%(faults)s
"""

MARKING = "Marking for deletion Pod default/quick"


def run(version: str, faults: str = "", duration: str = "400s") -> Any:
    return simulate(CLUSTER % {"version": version, "faults": faults, "duration": duration})


def marking_times(sim: Any, pod: str = "default/quick") -> list[float]:
    return times(
        sim,
        "K8sEvent",
        object=f"Pod/{pod}",
        reason="TaintManagerEviction",
        message=f"Marking for deletion Pod {pod}",
    )


@pytest.mark.parametrize(
    ("version", "by", "disruption"),
    [
        pytest.param(
            "1.18",
            "TaintManager",
            [],
            id="1.18: the NoExecuteTaintManager inside the node lifecycle controller deletes, no condition",
        ),
        pytest.param(
            CURRENT_VERSION,
            "TaintEvictionController",
            [(160.0, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")],
            id="1.34: the taint-eviction-controller deletes, DisruptionTarget DeletionByTaintManager first",
        ),
        pytest.param(
            "1.33",
            "TaintEvictionController",
            [(160.0, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")],
            id="1.33 simulates as 1.34",
        ),
    ],
)
def test_who_deletes_and_the_condition_it_writes_first(
    version: str, by: str, disruption: list[tuple[float, str, str]]
) -> None:
    """deletePodHandler: the event, then (addConditionAndDeletePod) the status patch with
    DisruptionTarget, then the DELETE; the taint at 140 s plus 20 s."""
    sim = run(version)
    assert times(sim, "PodDeleted", pod="default/quick", by=by, reason="TaintManagerEviction") == [
        160.0
    ]
    got = [
        (e["t"] / 1000, e["reason"], e["message"])
        for e in events(sim, "PodDisruptionTarget", pod="default/quick", node="a-1")
    ]
    assert got == disruption
    assert marking_times(sim) == [160.0]
    # Same instant, Go's order: event, condition, DELETE.
    at_160 = [
        e["type"]
        for e in sim.timeline.events
        if e["t"] == 160_000 and e.get("pod", e.get("object", "")).endswith("default/quick")
    ]
    want = (
        ["K8sEvent", "PodDeleted"]
        if not disruption
        else ["K8sEvent", "PodDisruptionTarget", "PodDeleted"]
    )
    assert at_160 == want


@pytest.mark.parametrize(
    ("version", "pod_warnings"),
    [
        pytest.param("1.18", [], id="1.18: MarkPodsNotReady records no event"),
        pytest.param(
            CURRENT_VERSION,
            [(135.0, "Pod/default/web"), (135.0, "Pod/default/quick")],
            id="1.34: a Warning NodeNotReady 'Node is not ready' on each pod it marks not ready",
        ),
    ],
)
def test_mark_pods_not_ready_warns_each_pod(
    version: str, pod_warnings: list[tuple[float, str]]
) -> None:
    sim = run(version)
    got = [
        (e["t"] / 1000, e["object"])
        for e in events(sim, "K8sEvent", reason="NodeNotReady", eventType="Warning")
    ]
    assert got == pod_warnings
    assert all(
        e["message"] == "Node is not ready"
        for e in events(sim, "K8sEvent", reason="NodeNotReady", eventType="Warning")
    )
    # The node's own event has the same wording in both releases (RecordNodeStatusChange).
    assert times(
        sim,
        "K8sEvent",
        object="Node/a-1",
        reason="NodeNotReady",
        message="Node a-1 status is now: NodeNotReady",
        eventType="Normal",
    ) == [135.0]
    assert times(sim, "PodReady", pod="default/web", status="False") == [135.0]


@pytest.mark.parametrize(
    ("version", "quick_marked"),
    [
        pytest.param(
            "1.18",
            [160.0],
            id="1.18: the fired key stays (a nil worker), the new taint schedules nothing",
        ),
        pytest.param(
            CURRENT_VERSION,
            [160.0, 220.0],
            id="1.34: the fired key is forgotten, the new taint at 200 s schedules it again (+20 s)",
        ),
    ],
)
def test_a_fired_deletion_is_forgotten_in_the_current_release(
    version: str, quick_marked: list[float]
) -> None:
    """quick, deleted at 160 s, stays Terminating (its kubelet is down). At 200 s a maintenance
    NoExecute taint it tolerates forever is added: handleNodeUpdate runs processPodOnNode for
    it again (min toleration 20 s). The web pod does not tolerate it: deleted at once in both."""
    faults = "    - {at: 200s, type: Taint, node: a-1, key: maintenance, effect: NoExecute}"
    sim = run(version, faults)
    assert marking_times(sim) == quick_marked
    assert times(sim, "PodDeleted", pod="default/quick") == [160.0]  # the DELETE is idempotent
    assert times(sim, "PodDeleted", pod="default/web") == [200.0]
    assert marking_times(sim, "default/web") == [200.0]


@pytest.mark.parametrize(
    ("version", "unreachable_tainted", "quick_deleted"),
    [
        pytest.param(
            "1.18",
            [140.0],
            [],
            id="1.18: Add only, the node stays in the queue's set and is never tainted again",
        ),
        pytest.param(
            CURRENT_VERSION,
            [140.0, 150.0],
            [170.0],
            id="1.34: the 145 s pass Removes and re-Adds it, tainted again at the next token (150 s)",
        ),
    ],
)
def test_a_taint_taken_off_a_node_still_unknown(
    version: str, unreachable_tainted: list[float], quick_deleted: list[float]
) -> None:
    """markNodeForTainting(node, Unknown) on a node without the unreachable taint. The token
    bucket (0.1/s, burst 1) gave its token at 140 s; the next one is due at 150 s."""
    faults = (
        "    - {at: 142s, type: Untaint, node: a-1, key: node.kubernetes.io/unreachable,"
        " effect: NoExecute}"
    )
    sim = run(version, faults)
    assert (
        times(
            sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
        )
        == unreachable_tainted
    )
    assert times(sim, "PodDeleted", pod="default/quick") == quick_deleted
    cancelled = times(
        sim,
        "K8sEvent",
        object="Pod/default/quick",
        message="Cancelling deletion of Pod default/quick",
    )
    assert cancelled == [142.0]


@pytest.mark.parametrize("version", ["1.18", CURRENT_VERSION])
def test_a_controller_manager_restart_loses_pending_timers_in_both(version: str) -> None:
    """Both controllers live in kube-controller-manager's process: a restart at 300 s loses
    web's pending deletion (due at 440 s). The new node lifecycle controller registers a-1,
    markNodeAsReachable takes its taint off (cancelling the timers the new taint manager
    had just armed from the informers' Adds) and the same pass taints it again: web's 300 s
    count restarts at 300 s, and quick (already Terminating) is marked again at 320 s."""
    sim = run(version, "    - {at: 300s, type: RestartControllerManager}", duration="700s")
    assert times(sim, "PodDeleted", pod="default/web") == [600.0]
    assert marking_times(sim) == [160.0, 320.0]
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == [140.0, 300.0]
    assert times(
        sim, "TaintRemoved", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == [300.0]


@pytest.mark.parametrize(
    ("tolerations", "want_ms"),
    [
        pytest.param([], 0, id="no toleration used: delete at once"),
        pytest.param([None], -1, id="no tolerationSeconds: forever"),
        pytest.param([300, 20], 20_000, id="the smallest tolerationSeconds wins"),
        pytest.param([None, 20], 20_000, id="forever and 20 s: 20 s"),
        pytest.param([0, 300], 0, id="tolerationSeconds 0: at once"),
        pytest.param([-5], 0, id="a negative tolerationSeconds: at once"),
    ],
)
def test_min_toleration_time_is_the_same_in_1_34(
    tolerations: list[int | None], want_ms: int
) -> None:
    """getMinTolerationTime (taint_eviction.go, 1.34) starts from MaxInt64 where 1.18 started
    from -1; the results are the same."""
    tols = [
        Toleration(key="k", operator="Exists", effect="NoExecute", toleration_seconds=s)
        for s in tolerations
    ]
    assert get_min_toleration_time_ms(tols) == want_ms


ZONE9 = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  kubernetesVersion: "%s"
  duration: 200s
  controllerManager: {nodeMonitorGracePeriod: 40s}
  nodes:
    - {generate: {count: 9, namePrefix: a-, zone: a}}
  faults:
    - {at: 100s, type: StopKubelet, node: a-7}
    - {at: 100s, type: StopKubelet, node: a-8}
    - {at: 105s, type: StopKubelet, node: a-2}
"""


@pytest.mark.parametrize(
    ("version", "order"),
    [
        pytest.param(
            "1.18",
            [(140.0, "a-7"), (150.0, "a-8"), (160.0, "a-2")],
            id="1.18: a-8, queued at 140 s, keeps its place ahead of a-2 (queued at 150 s)",
        ),
        pytest.param(
            CURRENT_VERSION,
            [(140.0, "a-7"), (150.0, "a-2"), (160.0, "a-8")],
            id="1.34: every pass re-queues a waiting untainted node, so a-2 goes first",
        ),
    ],
)
def test_a_waiting_node_is_queued_anew_every_pass(
    version: str, order: list[tuple[float, str]]
) -> None:
    """Zone a (9 nodes, 3 not ready: Normal, 0.1 node/s, one token every 10 s). a-7 and a-8 go
    Unknown at 135 s and are queued by the 140 s pass: a-7 takes the token at 140 s, a-8 waits
    for 150 s. a-2 goes Unknown at 145 s and is queued by the 150 s pass, which runs before
    the 150 s tainting pass. markNodeForTainting of 1.34 Removes and re-Adds a-8 (still
    without its taint) in that pass too, after a-2 in the pass's node order, so a-2 gets the
    150 s token. (Go walks the nodes with 8 workers; the engine in lister order.)"""
    sim = simulate(ZONE9 % version)
    got = [
        (e["t"] / 1000, e["node"])
        for e in events(sim, "TaintAdded", key="node.kubernetes.io/unreachable", effect="NoExecute")
    ]
    assert got == order
    assert [e["state"] for e in events(sim, "ZoneState", zone="a")] == ["Initial", "Normal"]
