"""The kubelet eviction manager in the current profile (1.34, also 1.33) against 1.18, with exact
simulated times. Every expected value is derived from the Go source:

- pkg/kubelet/eviction/eviction_manager.go (1.34): ``immediateEvictionGracePeriodSeconds = 1``
  is the gracePeriodOverride of hard-threshold and local-storage evictions (#124063; 1.18
  passes 0); node-pressure evictions carry a ``DisruptionTarget`` condition, reason
  ``TerminationByKubelet``, message the eviction message (local-storage ones none).
- pkg/kubelet/pod_workers.go: killPodNow blocks until the kill completes or its timeout
  (max(10 s, 1.5 x the override)) passes, then records ``ExceededGracePeriod``;
  calculateEffectiveGracePeriod (1.22 to 1.30) reads an override of 0 as "none", so the pod's
  terminationGracePeriodSeconds applies; from 1.31 (#124063) it keeps a 0 as given; never
  below 1 s.
- pkg/kubelet/status/status_manager.go mergePodStatus (1.34): the Failed phase and the
  DisruptionTarget condition are written once the containers have stopped; 1.18's syncPod
  writes the status before killing.
- pkg/kubelet/eviction/helpers.go (1.34): evictionMessage adds ``Threshold quantity: <q>,
  available: <a>. `` (getThresholdMetInfo) and words the container sentence ``Container <c> was
  using <u>, request is <r>, has larger consumption of <resource>. `` (#111597, 1.26);
  rankPIDPressure is orderedBy(priority, process).

Node "m": 8 cpu, 8Gi memory, 100Gi disk; the eviction manager syncs at 0, 10, 20 s ...; after
an eviction the next sync runs 1 s after the last kill completed (waitForPodsCleanup's poll).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from controller.engine.kubelet.eviction.api import (
    MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_AVAILABLE,
    Observation,
    Threshold,
    ThresholdValue,
)
from controller.engine.kubelet.eviction.helpers import (
    get_threshold_met_info,
    parse_threshold_config,
)
from controller.engine.kubelet.eviction_loop import kill_pod_timeout_s
from controller.engine.versions import (
    CURRENT_VERSION,
    calculate_effective_grace_period,
    kill_grace_as_given,
)

from .conftest import events, simulate, times
from .test_audit_eviction import node, node_usage, pod

MI = 2**20


def run(
    version: str,
    kubelet: dict[str, Any],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]],
    nodes: list[dict[str, Any]] | None = None,
    duration: int = 90,
):
    spec = {
        "kubernetesVersion": version,
        "duration": f"{duration}s",
        "kubelet": kubelet,
        "nodes": nodes or [node()],
        "objects": objects,
        "faults": faults,
    }
    return simulate(
        yaml.safe_dump({"apiVersion": "playground/v1alpha1", "kind": "Scenario", "spec": spec})
    )


def evicted(sim) -> list[tuple[float, str, int]]:
    return [
        (e["t"] / 1000, e["pod"].split("/")[1], e["gracePeriodSeconds"])
        for e in events(sim, "PodEvicted")
    ]


def failed(sim) -> list[tuple[float, str]]:
    return [
        (e["t"] / 1000, e["pod"].split("/")[1])
        for e in events(sim, "PodPhase", phase="Failed", reason="Evicted")
    ]


def disruption(sim) -> list[tuple[float, str, str, str]]:
    return [
        (e["t"] / 1000, e["pod"].split("/")[1], e["reason"], e["message"])
        for e in events(sim, "PodDisruptionTarget")
    ]


# -- pure ports ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("override", "pod_grace", "terminating", "as_given", "effective"),
    [
        pytest.param(0, 30, 0, 0, 30, id="hard override 0 in 1.18: the pod's own grace later"),
        pytest.param(1, 30, 0, 1, 1, id="immediateEvictionGracePeriodSeconds"),
        pytest.param(5, 30, 0, 5, 5, id="soft: evictionMaxPodGracePeriod 5"),
        pytest.param(60, 30, 0, 60, 60, id="an override above the pod's grace is used as is"),
        pytest.param(0, 0, 0, 0, 1, id="never below 1 s"),
        pytest.param(5, 30, 3, 5, 3, id="a deletion's shorter grace is kept (only shrinks)"),
        pytest.param(1, 30, 10, 1, 1, id="a shorter override shrinks a deletion's grace"),
    ],
)
def test_kill_grace_period(
    override: int, pod_grace: int, terminating: int, as_given: int, effective: int
) -> None:
    assert kill_grace_as_given(override, pod_grace, terminating) == as_given
    assert calculate_effective_grace_period(override, pod_grace, terminating) == effective


@pytest.mark.parametrize(("grace", "timeout"), [(0, 10), (1, 10), (6, 10), (7, 10), (30, 45)])
def test_kill_pod_now_timeout(grace: int, timeout: int) -> None:
    assert kill_pod_timeout_s(grace) == timeout


def _threshold(signal: str, text: str) -> Threshold:
    (t,) = [t for t in parse_threshold_config([], {signal: text}, {}, {}, {}) if t.signal == signal]
    return t


@pytest.mark.parametrize(
    ("resource", "thresholds", "observations", "want"),
    [
        pytest.param(
            "memory",
            [_threshold(MEMORY_AVAILABLE, "100Mi")],
            {MEMORY_AVAILABLE: Observation(95 * MI, 8192 * MI, 0)},
            ("100Mi", "95Mi"),
            id="a quantity prints as written, the available amount BinarySI",
        ),
        pytest.param(
            "memory",
            [_threshold(MEMORY_AVAILABLE, "1G")],
            {MEMORY_AVAILABLE: Observation(999_999_488, 8192 * MI, 0)},
            ("1G", "976562Ki"),
            id="a DecimalSI quantity keeps its format",
        ),
        pytest.param(
            "ephemeral-storage",
            [_threshold(NODEFS_AVAILABLE, "10%")],
            {NODEFS_AVAILABLE: Observation(5 * 2**30, 100 * 2**30, 0)},
            ("10737418400", "5Gi"),
            id="a percentage of the observed capacity (float32 10%), BinarySI",
        ),
        pytest.param(
            "pids",
            [_threshold(PID_AVAILABLE, "10000")],
            {PID_AVAILABLE: Observation(7758, 32768, 0)},
            ("10k", "7758"),
            id="PID counts are DecimalSI",
        ),
        pytest.param(
            "memory",
            [_threshold(NODEFS_INODES_FREE, "5%"), _threshold(MEMORY_AVAILABLE, "2Gi")],
            {
                NODEFS_INODES_FREE: Observation(10, 1000, 0),
                MEMORY_AVAILABLE: Observation(2**30, 8 * 2**30, 0),
            },
            ("2Gi", "1Gi"),
            id="the first threshold of the starved resource",
        ),
        pytest.param(
            "memory",
            [Threshold(MEMORY_AVAILABLE, ThresholdValue(quantity=2**31))],
            {},
            None,
            id="no observation: nothing added",
        ),
    ],
)
def test_get_threshold_met_info(resource, thresholds, observations, want) -> None:
    assert get_threshold_met_info(resource, thresholds, observations) == want


# -- stories ------------------------------------------------------------------------------------
MIN_RECLAIM = {
    "evictionHard": {"memory.available": "4608Mi"},
    "evictionMinimumReclaim": {"memory.available": "1Gi"},
}
MIN_RECLAIM_PODS = [
    pod("burst", usage={"memory": "1Gi"}, requests={"memory": "512Mi"}),
    pod("besteffort", usage={"memory": "300Mi"}),
    pod(
        "guaranteed",
        usage={"memory": "1Gi"},
        requests={"cpu": "1", "memory": "2Gi"},
        limits={"cpu": "1", "memory": "2Gi"},
    ),
]


@pytest.mark.parametrize(
    ("version", "want_evicted", "want_failed", "want_disruption", "messages"),
    [
        pytest.param(
            "1.18",
            [(20.0, "burst", 0), (21.0, "besteffort", 0)],
            [(20.0, "burst"), (21.0, "besteffort")],
            [],
            [
                "The node was low on resource: memory. Container c was using 1Gi, which "
                "exceeds its request of 512Mi. ",
                "The node was low on resource: memory. Container c was using 300Mi, which "
                "exceeds its request of 0. ",
            ],
            id="1.18: SIGKILL at once, Failed first, next sync 1 s later",
        ),
        pytest.param(
            CURRENT_VERSION,
            [(20.0, "burst", 1), (22.0, "besteffort", 1)],
            [(21.0, "burst"), (23.0, "besteffort")],
            [(21.0, "burst"), (23.0, "besteffort")],
            [
                "The node was low on resource: memory. Threshold quantity: 4608Mi, available: "
                "4308Mi. Container c was using 1Gi, request is 512Mi, has larger consumption "
                "of memory. ",
                "The node was low on resource: memory. Threshold quantity: 4608Mi, available: "
                "5332Mi. Container c was using 300Mi, request is 0, has larger consumption of "
                "memory. ",
            ],
            id="current: 1 s kill, Failed and DisruptionTarget when it ends, next sync 1 s later",
        ),
    ],
)
def test_hard_evictions_by_release(
    version, want_evicted, want_failed, want_disruption, messages
) -> None:
    """1.5Gi of system memory from 15 s: 8192 - 3884 = 4308Mi available < 4608Mi at the 20 s
    sync; burst (1Gi above its 512Mi request) goes first. 5332Mi is still below 4608Mi + the
    1Gi minimum reclaim at the next sync, so the BestEffort pod goes too; then 5632Mi."""
    sim = run(
        version, MIN_RECLAIM, MIN_RECLAIM_PODS, [node_usage(15, memory="1536Mi")], duration=40
    )
    assert evicted(sim) == want_evicted
    assert failed(sim) == want_failed
    assert [e["message"] for e in events(sim, "PodEvicted")] == messages
    by_pod = dict(zip(("burst", "besteffort"), messages, strict=True))
    assert disruption(sim) == [
        (t, name, "TerminationByKubelet", by_pod[name]) for t, name in want_disruption
    ]
    assert [
        (e["t"] / 1000, e["message"])
        for e in events(sim, "K8sEvent", reason="Evicted", eventType="Warning")
    ] == [(t, m) for (t, _, _), m in zip(want_evicted, messages, strict=True)]
    burst = sim.cluster.pods["default/burst"]
    assert (burst.phase, burst.reason, burst.message) == ("Failed", "Evicted", messages[0])


@pytest.mark.parametrize(
    ("version", "want_failed", "want_exceeded"),
    [
        pytest.param("1.18", [(50.0, "burst")], [], id="1.18: the override 0 is a SIGKILL"),
        pytest.param(
            "1.30",
            [(70.0, "burst")],
            [60.0],
            id="1.22-1.30: 0 means the pod's 20 s; killPodNow gives up waiting after 10 s",
        ),
        pytest.param(
            CURRENT_VERSION,
            [(51.0, "burst")],
            [],
            id="current: min(0, 20) = 0 is kept as given (#124063's overridden): a 1 s kill",
        ),
    ],
)
def test_soft_eviction_with_the_default_max_pod_grace_period(
    version, want_failed, want_exceeded
) -> None:
    """evictionSoft memory.available 2Gi for 30 s, evictionMaxPodGracePeriod 0 (default): 4Gi
    of system memory from 15 s leaves 1748Mi; met from the 20 s sync, evicted at 50 s with the
    override 0. burst has terminationGracePeriodSeconds 20. (The current profile had the
    1.22-1.30 answer, 70 s, until the release rules of test_kubelet_versions.py.)"""
    kubelet = {
        "evictionHard": {},
        "evictionSoft": {"memory.available": "2Gi"},
        "evictionSoftGracePeriod": {"memory.available": "30s"},
    }
    pods = [
        pod("burst", usage={"memory": "1Gi"}, requests={"memory": "512Mi"}, grace=20),
        *MIN_RECLAIM_PODS[1:],
    ]
    sim = run(version, kubelet, pods, [node_usage(15, memory="4Gi")])
    assert evicted(sim) == [(50.0, "burst", 0)]
    assert failed(sim) == want_failed
    assert [
        (e["t"] / 1000, e["eventType"], e["message"])
        for e in events(sim, "K8sEvent", object="Pod/default/burst", reason="ExceededGracePeriod")
    ] == [
        (t, "Warning", "Container runtime did not kill the pod within specified grace period.")
        for t in want_exceeded
    ]


@pytest.mark.parametrize(
    ("version", "want_evicted", "want_failed"),
    [
        pytest.param(
            "1.18",
            [(20.0, "a", 0), (20.0, "b", 0)],
            [(20.0, "a"), (20.0, "b")],
            id="1.18: both at once",
        ),
        pytest.param(
            CURRENT_VERSION,
            [(20.0, "a", 1), (21.0, "b", 1)],
            [(21.0, "a"), (22.0, "b")],
            id="current: one after the other, each kill taking 1 s",
        ),
    ],
)
def test_local_storage_evictions_follow_one_another(version, want_evicted, want_failed) -> None:
    """Two pods above their ephemeral-storage limits at the 20 s sync (usage set at 15 s):
    localStorageEviction evicts every violator, evictPod after evictPod; no DisruptionTarget
    (evictPod gets no condition there)."""
    pods = [
        pod("a", limits={"ephemeral-storage": "1Gi"}),
        pod("b", limits={"ephemeral-storage": "1Gi"}),
    ]
    faults = [
        {"at": "15s", "type": "SetUsage", "pod": "default/a", "ephemeral-storage": "2Gi"},
        {"at": "15s", "type": "SetUsage", "pod": "default/b", "ephemeral-storage": "2Gi"},
    ]
    sim = run(version, {}, pods, faults, duration=40)
    assert evicted(sim) == want_evicted
    assert failed(sim) == want_failed
    assert disruption(sim) == []
    assert {e["message"] for e in events(sim, "PodEvicted")} == {
        "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "
    }


@pytest.mark.parametrize(
    ("version", "want", "messages"),
    [
        pytest.param(
            "1.18",
            [(20.0, "a-calm", 0), (21.0, "b-forker", 0)],
            ["The node was low on resource: pids. "] * 2,
            id="1.18: priority only (equal here; the engine breaks Go's unordered tie by name)",
        ),
        pytest.param(
            CURRENT_VERSION,
            [(20.0, "b-forker", 1)],
            ["The node was low on resource: pids. Threshold quantity: 10k, available: 7758. "],
            id="current: priority, then the pod with more processes",
        ),
    ],
)
def test_pid_ranking(version: str, want: list[tuple[float, str, int]], messages: list[str]) -> None:
    """pid.available < 10000 of pidMax 32768: 5000 system pids from 15 s + 20010 in two pods
    of equal priority leave 7758. Without the calm pod 7768 are available, still met, so the
    forker goes at the next sync; without the forker 27758: resolved."""
    sim = run(
        version,
        {"evictionHard": {"pid.available": "10000"}},
        [pod("a-calm", usage={"pids": "10"}), pod("b-forker", usage={"pids": "20000"})],
        [node_usage(15, pids="5000")],
        nodes=[node(pidMax=32768)],
        duration=40,
    )
    assert evicted(sim) == want
    assert [e["message"] for e in events(sim, "PodEvicted")] == messages


def test_a_1_18_scenario_has_no_disruption_target_and_keeps_its_times() -> None:
    """The ExceededGracePeriod path never happens in 1.18: killPodNow's timeout (at least
    10 s, 1.5 x the override) is never shorter than the kill (the override itself)."""
    sim = run(
        "1.18",
        {
            "evictionHard": {},
            "evictionSoft": {"memory.available": "2Gi"},
            "evictionSoftGracePeriod": {"memory.available": "30s"},
            "evictionMaxPodGracePeriod": 40,
        },
        MIN_RECLAIM_PODS,
        [node_usage(15, memory="4Gi")],
        duration=100,
    )
    assert evicted(sim) == [(50.0, "burst", 40)]
    assert failed(sim) == [(50.0, "burst")]
    assert times(sim, "K8sEvent", reason="ExceededGracePeriod") == []
    assert disruption(sim) == []


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param("1.18", [], id="1.18: 29Gi free after GC is above the 10Gi threshold"),
        pytest.param(
            CURRENT_VERSION,
            [(150.0, "writer", 1)],
            id="current: 29Gi is below 10Gi + the 25Gi minimum reclaim, so a pod goes",
        ),
    ],
)
def test_node_level_reclaim_must_also_free_the_minimum_reclaim(version, want) -> None:
    """nodefs.available < 10% (10Gi of 100Gi) with evictionMinimumReclaim 25Gi: 60Gi of system
    usage at 150 s + the writer's 6Gi + 25Gi of images + 2Gi of dead containers = 93Gi used.
    Container and image GC free 22Gi: 29Gi available. reclaimNodeLevelResources then asks
    thresholdsMet on fresh stats: with enforceMinReclaim false (1.18) nothing is met, no pod is
    evicted; with true (current) 29Gi < 35Gi, the sync goes on and evicts the writer."""
    node_entry = node(
        images=[
            {"name": "app:v1", "size": "20Gi", "inUse": False},
            {"name": "app:v2", "size": "5Gi", "inUse": True},
        ],
        deadContainers="2Gi",
    )
    writer = pod(
        "writer",
        usage={"ephemeral-storage": "6Gi"},
        requests={"ephemeral-storage": "2Gi"},
        priority=10,
    )
    sim = run(
        version,
        {
            "evictionHard": {"nodefs.available": "10%"},
            "evictionMinimumReclaim": {"nodefs.available": "25Gi"},
        },
        [writer],
        [node_usage(150, **{"ephemeral-storage": "60Gi"})],
        nodes=[node_entry],
        duration=160,
    )
    assert [(e["what"], e["amount"]) for e in events(sim, "NodeReclaim")] == [
        ("ContainerGC", 2 * 2**30),
        ("ImageGC", 20 * 2**30),
    ]
    assert evicted(sim) == want
