"""The kubelet eviction manager inside the simulation: configuration errors as a scenario
author meets them, and stories with exact simulated times (evictionMonitoringPeriod 10 s,
the 1 s cleanup poll after a kill). The ported helpers have their own table tests in
test_eviction_helpers.py and test_eviction_manager.py."""

from __future__ import annotations

import pytest

from controller.engine.kubelet.eviction.helpers import ThresholdConfigError, parse_threshold_config

from .conftest import events, simulate, times

GI, MI = 2**30, 2**20


@pytest.mark.parametrize(
    "hard, soft, grace, reclaim, expected",
    [
        pytest.param(None, {}, {}, {}, 5, id="defaults: 4 hard thresholds plus allocatable memory"),
        pytest.param({}, {}, {}, {}, 0, id="an empty evictionHard map drops every default"),
        pytest.param({"memory.available": "0%"}, {}, {}, {}, 0, id="0% is ignored"),
        pytest.param({"nodefs.available": "100%"}, {}, {}, {}, 0, id="100% is ignored"),
        pytest.param(
            {"memory.available": "1Gi"},
            {"memory.available": "2Gi"},
            {"memory.available": "30s"},
            {"memory.available": "500Mi"},
            3,
            id="hard + soft + the allocatable copy of the hard one",
        ),
    ],
)
def test_parse_threshold_config_counts(hard, soft, grace, reclaim, expected) -> None:
    assert len(parse_threshold_config(["pods"], hard, soft, grace, reclaim)) == expected


@pytest.mark.parametrize(
    "hard, soft, grace, message",
    [
        pytest.param(
            {"memory.available": "-1"}, {}, {}, "must be positive", id="negative quantity"
        ),
        pytest.param(
            {"memory.free": "1Gi"},
            {},
            {},
            "unsupported eviction signal memory.free",
            id="unknown signal",
        ),
        pytest.param(
            {},
            {"memory.available": "1Gi"},
            {},
            "grace period must be specified",
            id="soft without grace period",
        ),
        pytest.param(
            {"memory.available": "1GB"}, {}, {}, "is not a Kubernetes quantity", id="bad quantity"
        ),
    ],
)
def test_parse_threshold_config_errors_name_the_field(hard, soft, grace, message) -> None:
    with pytest.raises(ThresholdConfigError) as info:
        parse_threshold_config(["pods"], hard, soft, grace, {})
    assert message in str(info.value)
    assert str(info.value).startswith("spec.kubelet.eviction")


NODE = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: e}
spec:
  duration: %(duration)s
  kubelet: %(kubelet)s
  nodes:
    - name: m
      zone: z
      capacity: {cpu: "8", memory: 8Gi, ephemeral-storage: 100Gi, pods: "110"}
      usage: {memory: 1Gi}
%(node_extra)s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: burst, namespace: default, annotations: {usage.playground/memory: 1Gi}}
      spec: {nodeName: m, containers: [{name: leaky, resources: {requests: {memory: 512Mi}, limits: {memory: 6Gi}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: besteffort, namespace: default, annotations: {usage.playground/memory: 300Mi}}
      spec: {nodeName: m, containers: [{name: be}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: guaranteed, namespace: default, annotations: {usage.playground/memory: 1Gi}}
      spec: {nodeName: m, containers: [{name: g, resources: {requests: {cpu: "1", memory: 2Gi}, limits: {cpu: "1", memory: 2Gi}}}]}
%(objects)s
  faults: %(faults)s
"""


def node_run(
    kubelet: str, faults: str, duration: str = "200s", node_extra: str = "", objects: str = ""
):
    return simulate(
        NODE
        % {
            "kubelet": kubelet,
            "faults": faults,
            "duration": duration,
            "node_extra": node_extra,
            "objects": objects,
        }
    )


def test_memory_leak_in_burstable_pod_evicts_it_first_at_the_sync_that_sees_it() -> None:
    # 8Gi node, 1Gi system + 1Gi + 300Mi + 1Gi pods = 3.3Gi used. The leak adds 50Mi/s from
    # 20 s: available < 2Gi once 2.7Gi more is used, i.e. after 55.3 s, at 75.3 s; the
    # 80 s sync sees it and evicts the leaking pod (above its request, priority 0).
    sim = node_run(
        "{evictionHard: {memory.available: 2Gi}}",
        "[{at: 20s, type: LeakMemory, pod: default/burst, rate: 50Mi}]",
    )
    evicted = events(sim, "PodEvicted")
    assert [(e["t"] / 1000, e["pod"]) for e in evicted] == [(80.0, "default/burst")]
    assert "Container leaky was using" in evicted[0]["message"]
    assert times(sim, "NodeCondition", node="m", condition="MemoryPressure", status="True") == [
        80.0
    ]


def test_soft_threshold_crossed_briefly_does_not_evict_then_evicts_after_its_grace_period() -> None:
    kubelet = "{evictionHard: {}, evictionSoft: {memory.available: 2Gi}, evictionSoftGracePeriod: {memory.available: 30s}, evictionMaxPodGracePeriod: 5}"
    # 4Gi system + 2.3Gi pods leaves 1.7Gi < 2Gi; 1Gi system leaves 4.7Gi.
    faults = """[{at: 15s, type: SetUsage, node: m, memory: 4Gi},
                 {at: 35s, type: SetUsage, node: m, memory: 1Gi},
                 {at: 65s, type: SetUsage, node: m, memory: 4Gi}]"""
    sim = node_run(kubelet, faults)
    # Met at the 20 s and 30 s syncs (10 s < 30 s grace), gone at 40 s: no eviction. Met again
    # from 70 s; the 100 s sync is 30 s later: evicted with evictionMaxPodGracePeriod 5 s.
    evicted = events(sim, "PodEvicted")
    assert [(e["t"] / 1000, e["pod"], e["soft"], e["gracePeriodSeconds"]) for e in evicted] == [
        (100.0, "default/burst", True, 5)
    ]
    # The condition goes True at the first sync that sees the threshold (no grace needed).
    assert times(sim, "NodeCondition", node="m", condition="MemoryPressure", status="True") == [
        20.0
    ]


def test_min_reclaim_keeps_evicting_over_successive_syncs() -> None:
    # 1.5Gi system usage at 15 s: available = 8192 - 3884 = 4308Mi < 4608Mi (4.5Gi): met.
    # Evicting burst (1Gi) gives 5332Mi >= 4608Mi, but min-reclaim wants 4608 + 1024 = 5632Mi:
    # the next sync (1 s after the kill) evicts the BestEffort pod too, which makes exactly
    # 5632Mi available: resolved (the threshold is "less than").
    kubelet = "{evictionHard: {memory.available: 4608Mi}, evictionMinimumReclaim: {memory.available: 1Gi}}"
    sim = node_run(kubelet, "[{at: 15s, type: SetUsage, node: m, memory: 1536Mi}]")
    evicted = [(e["t"] / 1000, e["pod"]) for e in events(sim, "PodEvicted")]
    assert evicted == [(20.0, "default/burst"), (21.0, "default/besteffort")]


DISK = """      images: [{name: "app:v1", size: 20Gi, inUse: false}, {name: "app:v2", size: 5Gi, inUse: true}]
      deadContainers: 2Gi"""


@pytest.mark.parametrize(
    "usage, evicted",
    [
        # nodefs: system usage + 6Gi written by the pod + 25Gi of images + 2Gi of dead containers.
        pytest.param("60Gi", [], id="93Gi used, GC frees 22Gi: no pod evicted"),
        pytest.param(
            "84Gi",
            ["default/writer"],
            id="117Gi used, GC is not enough: the pod above its disk request goes",
        ),
    ],
)
def test_disk_pressure_reclaims_node_level_resources_first(usage: str, evicted: list[str]) -> None:
    objects = """    - apiVersion: v1
      kind: Pod
      metadata: {name: writer, namespace: default, annotations: {usage.playground/ephemeral-storage: 6Gi}}
      spec: {nodeName: m, priority: 10, containers: [{name: w, resources: {requests: {ephemeral-storage: 2Gi}}}]}"""
    sim = node_run(
        "{evictionHard: {nodefs.available: 10%}}",
        f"[{{at: 150s, type: SetUsage, node: m, ephemeral-storage: {usage}}}]",
        duration="200s",
        node_extra=DISK,
        objects=objects,
    )
    reclaims = [(e["what"], e["amount"]) for e in events(sim, "NodeReclaim")]
    assert reclaims == [("ContainerGC", 2 * GI), ("ImageGC", 20 * GI)]
    assert times(sim, "NodeReclaim")[0] == 150.0
    assert [e["pod"] for e in events(sim, "PodEvicted")] == evicted
    assert times(sim, "NodeCondition", node="m", condition="DiskPressure", status="True") == [150.0]


def test_besteffort_pod_rejected_at_admission_under_memory_pressure() -> None:
    late = """  - at: 60s
      type: Apply
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: late-be, namespace: default}
        spec: {nodeName: m, containers: [{name: x}]}
    - at: 60s
      type: Apply
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: late-burstable, namespace: default}
        spec: {nodeName: m, containers: [{name: x, resources: {requests: {memory: 10Mi}}}]}"""
    text = NODE % {
        "kubelet": "{evictionHard: {memory.available: 2Gi}}",
        "duration": "80s",
        "node_extra": "",
        "objects": "",
        "faults": "\n    - {at: 15s, type: SetUsage, node: m, memory: 4Gi}\n  " + late,
    }
    sim = simulate(text)
    rejected = events(sim, "PodRejected")
    assert [(e["t"] / 1000, e["pod"], e["reason"]) for e in rejected] == [
        (60.0, "default/late-be", "Evicted")
    ]
    be = sim.cluster.pods["default/late-be"]
    assert (be.phase, be.message) == (
        "Failed",
        "Pod The node had condition: [MemoryPressure]. ",
    )  # Kubelet.rejectPod
    assert sim.cluster.pods["default/late-burstable"].phase == "Running"


def _hog(bound: bool) -> str:
    """A pod requesting 1Gi that uses 4Gi (7.3Gi used of 8Gi: under the 2Gi threshold),
    bound by nodeName (admitted before the kubelet's first sync) or by the scheduler (after
    it, at the same instant)."""
    node = "nodeName: m, " if bound else ""
    return f"""    - apiVersion: v1
      kind: Pod
      metadata: {{name: hog, namespace: default, annotations: {{usage.playground/memory: 4Gi}}}}
      spec: {{{node}containers: [{{name: h, resources: {{requests: {{memory: 1Gi}}}}}}]}}"""


@pytest.mark.parametrize(
    ("objects", "faults", "pressure_at", "evicted"),
    [
        # Admitted before the first sync (0 s): that sync sees it.
        (_hog(True), "[]", 0.0, [(0.0, "default/hog")]),
        # Bound after the first sync of 0 s: the loop slept monitoringInterval after it, so
        # the sync of 10 s is the first to see it (not a second sync at 0 s).
        (_hog(False), "[]", 10.0, [(10.0, "default/hog")]),
        # Usage raised at a sync's own instant (faults come first) and between two syncs.
        ("", "[{at: 30s, type: SetUsage, node: m, memory: 5Gi}]", 30.0,
         [(30.0, "default/burst"), (31.0, "default/besteffort")]),
        ("", "[{at: 35s, type: SetUsage, node: m, memory: 5Gi}]", 40.0,
         [(40.0, "default/burst"), (41.0, "default/besteffort")]),
    ],
    ids=["admitted-before-the-first-sync", "bound-after-it", "usage-at-a-sync", "usage-between"],
)  # fmt: skip
def test_the_eviction_manager_sleeps_monitoring_interval_after_a_sync_that_evicts_nothing(
    objects: str, faults: str, pressure_at: float, evicted: list[tuple[float, str]]
) -> None:
    """managerImpl.Start: ``synchronize``; nothing evicted: sleep monitoringInterval (10 s).
    What changes after a sync at its own instant waits for the next one."""
    sim = node_run("{evictionHard: {memory.available: 2Gi}}", faults, "60s", objects=objects)
    assert times(sim, "NodeCondition", node="m", condition="MemoryPressure", status="True") == [
        pressure_at
    ]
    assert [(e["t"] / 1000, e["pod"]) for e in events(sim, "PodEvicted")] == evicted
