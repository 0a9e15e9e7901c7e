"""Stories of the kubelet eviction manager with a fake clock: each test drives
``EvictionManager.synchronize`` at fixed simulated times (ms) the way the kubelet's loop would
and checks exactly what it decides. Ported from pkg/kubelet/eviction/eviction_manager_test.go
(v1.18) where the case applies."""

from __future__ import annotations

import json

import pytest

from controller.engine.kubelet.eviction.api import (
    ContainerStats,
    FsStats,
    NodeStats,
    PodStats,
    VolumeStats,
)
from controller.engine.kubelet.eviction.helpers import parse_threshold_config
from controller.engine.kubelet.eviction.manager import (
    EvictionDecision,
    EvictionManager,
    ManagerConfig,
    NodeEvent,
    ReclaimResult,
    SyncResult,
)

MI, GI = 2**20, 2**30
S, MIN = 1000, 60_000  # ms


def manager(
    hard=None, soft=None, grace=None, reclaim=None, enforce=("pods",), **config
) -> EvictionManager:
    thresholds = parse_threshold_config(list(enforce), hard or {}, soft, grace, reclaim)
    return EvictionManager(ManagerConfig(thresholds, **config))


def container(
    name: str,
    *,
    mem: int | None = None,
    req: dict | None = None,
    lim: dict | None = None,
    rootfs: int | None = None,
    logs: int | None = None,
) -> ContainerStats:
    return ContainerStats(
        name,
        dict(req or {}),
        dict(lim or {}),
        memory_working_set=mem,
        rootfs_used=rootfs,
        logs_used=logs,
    )


def pod(
    key: str,
    *containers: ContainerStats,
    prio: int = 0,
    critical: bool = False,
    volumes: tuple[VolumeStats, ...] = (),
    ephemeral: int | None = None,
) -> PodStats:
    mem = sum(c.memory_working_set or 0 for c in containers)
    return PodStats(
        key,
        prio,
        list(containers),
        volumes=list(volumes),
        memory_working_set=mem,
        ephemeral_storage_used=ephemeral,
        is_critical=critical,
    )


class FakeNode:
    """A node as the kubelet's stats provider sees it: memory used by the system plus its pods,
    a root filesystem holding system files, unused images and dead containers (shared with the
    images unless ``imagefs`` is set), and PIDs. Killed pods release their usage at once."""

    def __init__(
        self,
        pods: list[PodStats],
        *,
        memory_capacity: int = 8 * GI,
        system_memory: int = 0,
        nodefs_capacity: int = 100 * GI,
        system_disk: int = 0,
        images: int = 0,
        dead_containers: int = 0,
        imagefs_capacity: int | None = None,
        pid_max: int = 32768,
        system_pids: int = 0,
    ) -> None:
        self.pods = {p.key: p for p in pods}
        self.memory_capacity, self.system_memory = memory_capacity, system_memory
        self.nodefs_capacity, self.system_disk = nodefs_capacity, system_disk
        self.images, self.dead_containers = images, dead_containers
        self.imagefs_capacity = imagefs_capacity
        self.pid_max, self.system_pids = pid_max, system_pids
        self.gc_calls: list[str] = []

    def stats(self, now_ms: int) -> NodeStats:
        pods = self.pods.values()
        pods_memory = sum(p.memory_working_set or 0 for p in pods)
        pods_disk = sum(
            sum((c.rootfs_used or 0) + (c.logs_used or 0) for c in p.containers)
            + sum(v.used or 0 for v in p.volumes)
            for p in pods
        )
        on_images = self.images + self.dead_containers
        imagefs = None
        nodefs_used = self.system_disk + pods_disk
        if self.imagefs_capacity is None:
            nodefs_used += on_images
        else:
            imagefs = FsStats(self.imagefs_capacity, on_images, 10**6, 10**4)
        return NodeStats(
            time_ms=now_ms,
            memory_capacity=self.memory_capacity,
            memory_working_set=self.system_memory + pods_memory,
            allocatable_memory_capacity=self.memory_capacity,
            pods_memory_working_set=pods_memory,
            nodefs_capacity=self.nodefs_capacity,
            nodefs_used=nodefs_used,
            nodefs_inodes=10**7,
            nodefs_inodes_used=10**5,
            imagefs=imagefs,
            pid_max=self.pid_max,
            pids_used=self.system_pids + sum(p.process_count or 0 for p in pods),
        )

    def reclaim(self, what: str, resource: str) -> list[ReclaimResult]:
        self.gc_calls.append(what)
        if what == "ContainerGC":
            freed, self.dead_containers = self.dead_containers, 0
        else:
            freed, self.images = self.images, 0
        return [ReclaimResult(what, resource, freed)] if freed else []

    def sync(self, m: EvictionManager, now_ms: int) -> SyncResult:
        result = m.synchronize(
            now_ms,
            self.stats(now_ms),
            list(self.pods.values()),
            self.reclaim,
            lambda: self.stats(now_ms),
        )
        for decision in result.evicted:
            del self.pods[decision.pod]
        return result


def evicted(result: SyncResult) -> list[str]:
    return [d.pod for d in result.evicted]


def memory_stats(now_ms: int, available: int, capacity: int = 8 * GI) -> NodeStats:
    """Node stats with a given memory.available (pods cgroup and disks far from thresholds)."""
    return NodeStats(now_ms, capacity, capacity - available, 0, 0, 100 * GI, 0)


def no_reclaim(what: str, resource: str) -> list[ReclaimResult]:
    raise AssertionError("memory pressure has no node-level reclaim")


# -- the worked example -----------------------------------------------------------------------
def worked_example_node() -> FakeNode:
    return FakeNode(
        [
            pod("default/batch-report", container("report", mem=GI, req={"memory": 256 * MI})),
            pod("default/redis-cache", container("redis", mem=600 * MI)),
            pod("default/log-shipper", container("shipper", mem=200 * MI), prio=100),
            pod(
                "default/payments-api",
                container(
                    "api",
                    mem=1536 * MI,
                    req={"cpu": 500, "memory": 2 * GI},
                    lim={"cpu": 500, "memory": 2 * GI},
                ),
                prio=1000,
            ),
        ],
        memory_capacity=8 * GI,
        system_memory=4400 * MI,
    )


def test_worked_example_one_eviction_per_sync_then_pressure_held_for_the_transition_period() -> (
    None
):
    node = worked_example_node()
    m = manager(hard={"memory.available": "2Gi"})
    # 50 s: 8Gi - (4400Mi + 3360Mi of pods) = 432Mi available < 2Gi.
    r = node.sync(m, 50 * S)
    assert r == SyncResult(
        node_conditions=["MemoryPressure"],
        events=[NodeEvent("EvictionThresholdMet", "Warning", "Attempting to reclaim memory")],
        evicted=[
            EvictionDecision(
                pod="default/batch-report",
                signal="memory.available",
                resource="memory",
                soft=False,
                grace_period_s=0,
                message="The node was low on resource: memory. "
                "Container report was using 1Gi, which exceeds its request of 256Mi. ",
                annotations={
                    "offending_containers": "report",
                    "offending_containers_usage": "1Gi",
                    "starved_resource": "memory",
                },
            )
        ],
    )
    # 51 s (the kill completed, the cleanup poll 1 s later): 1456Mi available, still < 2Gi.
    r = node.sync(m, 51 * S)
    assert evicted(r) == ["default/redis-cache"]
    assert r.evicted[0].message == (
        "The node was low on resource: memory. "
        "Container redis was using 600Mi, which exceeds its request of 0. "
    )
    # 52 s: 2056Mi available >= 2Gi: nothing to do, but the condition is still reported.
    r = node.sync(m, 52 * S)
    assert (r.node_conditions, r.events, r.evicted) == (["MemoryPressure"], [], [])
    # Every 10 s after that; the last sync that met the threshold was at 51 s.
    for t in range(62 * S, 351 * S, 10 * S):
        assert node.sync(m, t).node_conditions == ["MemoryPressure"]
    assert node.sync(m, 350 * S + 999).node_conditions == ["MemoryPressure"]  # 299.999 s after
    assert node.sync(m, 351 * S).node_conditions == []  # 300 s after 51 s
    assert sorted(node.pods) == ["default/log-shipper", "default/payments-api"]
    assert m.quiet


def test_worked_example_with_the_pre_priority_qos_ranking() -> None:
    node = worked_example_node()
    m = manager(hard={"memory.available": "2Gi"}, ranking_policy="qos")
    # BestEffort pods go first, the most above request first, then Burstable.
    assert evicted(node.sync(m, 50 * S)) == ["default/redis-cache"]  # 1032Mi available after
    assert evicted(node.sync(m, 51 * S)) == ["default/log-shipper"]  # 1232Mi available after
    assert evicted(node.sync(m, 52 * S)) == ["default/batch-report"]  # 2256Mi available after
    assert evicted(node.sync(m, 53 * S)) == []


def test_state_round_trips_through_json_between_syncs() -> None:
    node_a, node_b = worked_example_node(), worked_example_node()
    kept = manager(
        hard={"memory.available": "2Gi"},
        soft={"memory.available": "3Gi"},
        grace={"memory.available": "90s"},
        reclaim={"memory.available": "100Mi"},
    )
    restored = EvictionManager.from_dict(json.loads(json.dumps(kept.to_dict())))
    for t in (0, 50 * S, 51 * S, 52 * S, 62 * S, 200 * S, 351 * S, 400 * S):
        expected = node_a.sync(kept, t)
        assert node_b.sync(restored, t) == expected
        restored = EvictionManager.from_dict(json.loads(json.dumps(restored.to_dict())))
        assert restored.to_dict() == kept.to_dict()


# -- memory pressure (TestMemoryPressure) -----------------------------------------------------
def memory_pressure_pods() -> list[PodStats]:
    cpu_mem = {"cpu": 100, "memory": 100 * MI}
    burst_lim = {"cpu": 200, "memory": GI}
    return [
        pod(
            "ns/guaranteed-low-priority-high-usage",
            container(
                "g", mem=900 * MI, req={"cpu": 100, "memory": GI}, lim={"cpu": 100, "memory": GI}
            ),
            prio=-1,
        ),
        pod(
            "ns/burstable-below-requests", container("b1", mem=50 * MI, req=cpu_mem, lim=burst_lim)
        ),
        pod(
            "ns/burstable-above-requests", container("b2", mem=400 * MI, req=cpu_mem, lim=burst_lim)
        ),
        pod("ns/best-effort-high-priority-high-usage", container("be1", mem=400 * MI), prio=1),
        pod("ns/best-effort-low-priority-low-usage", container("be2", mem=100 * MI), prio=-1),
    ]


BEST_EFFORT = PodStats("ns/best-admit", containers=[ContainerStats("c")])
BURSTABLE = PodStats(
    "ns/burst-admit",
    containers=[
        ContainerStats("c", {"cpu": 100, "memory": 100 * MI}, {"cpu": 200, "memory": 200 * MI})
    ],
)


def test_memory_pressure_soft_then_hard_threshold() -> None:
    m = manager(
        hard={"memory.available": "1Gi"},
        soft={"memory.available": "2Gi"},
        grace={"memory.available": "2m"},
        max_pod_grace_period_s=5,
        enforce=(),
    )
    pods = memory_pressure_pods()
    victim = "ns/best-effort-low-priority-low-usage"

    def sync(t: int, available: int) -> SyncResult:
        return m.synchronize(
            t, memory_stats(t, available), pods, no_reclaim, lambda: memory_stats(t, available)
        )

    # t=0: 2Gi available, no threshold met: no pressure, both pods admitted.
    assert sync(0, 2 * GI) == SyncResult([])
    assert [m.admit_pod(p)[0] for p in (BEST_EFFORT, BURSTABLE)] == [True, True]
    # 1 min: 1500Mi crosses the soft threshold: pressure at once, no eviction before its grace.
    r = sync(1 * MIN, 1500 * MI)
    assert (r.node_conditions, r.evicted) == (["MemoryPressure"], [])
    assert m.is_under_memory_pressure()
    # 4 min: met for 3 min >= 2 min: evict with evictionMaxPodGracePeriod.
    r = sync(4 * MIN, 1500 * MI)
    assert r.evicted == [
        EvictionDecision(
            victim,
            "memory.available",
            "memory",
            True,
            5,
            "The node was low on resource: memory. "
            "Container be2 was using 100Mi, which exceeds its request of 0. ",
            {
                "offending_containers": "be2",
                "offending_containers_usage": "100Mi",
                "starved_resource": "memory",
            },
        )
    ]
    # 24 min: 3Gi, 20 min after the last pressure: none.
    assert sync(24 * MIN, 3 * GI) == SyncResult([])
    assert not m.is_under_memory_pressure()
    # 25 min: 500Mi crosses the hard threshold: evict at once with grace 0.
    r = sync(25 * MIN, 500 * MI)
    assert (r.node_conditions, evicted(r), r.evicted[0].grace_period_s) == (
        ["MemoryPressure"],
        [victim],
        0,
    )
    assert [m.admit_pod(p)[0] for p in (BEST_EFFORT, BURSTABLE)] == [False, True]
    # 26 min: 2Gi, pressure still reported (transition period), nothing evicted.
    r = sync(26 * MIN, 2 * GI)
    assert (r.node_conditions, r.evicted) == (["MemoryPressure"], [])
    assert [m.admit_pod(p)[0] for p in (BEST_EFFORT, BURSTABLE)] == [False, True]
    # 31 min: 6 min after the last pressure: no pressure, everything admitted.
    assert sync(31 * MIN, 2 * GI) == SyncResult([])
    assert [m.admit_pod(p)[0] for p in (BEST_EFFORT, BURSTABLE)] == [True, True]


def test_soft_threshold_crossed_briefly_does_not_evict_and_restarts_its_grace_period() -> None:
    m = manager(
        soft={"memory.available": "2Gi"},
        grace={"memory.available": "2m"},
        max_pod_grace_period_s=30,
        enforce=(),
    )
    pods = memory_pressure_pods()

    def sync(t: int, available: int) -> SyncResult:
        return m.synchronize(
            t, memory_stats(t, available), pods, no_reclaim, lambda: memory_stats(t, available)
        )

    assert sync(0, 1500 * MI).node_conditions == ["MemoryPressure"]  # first observed at 0
    assert sync(10 * S, 3 * GI).evicted == []  # recovered: the threshold is forgotten
    assert sync(20 * S, 1500 * MI).evicted == []  # first observed again at 20 s
    assert sync(139 * S + 999, 1500 * MI).evicted == []  # 119.999 s: grace not over
    r = sync(140 * S, 1500 * MI)  # 120 s after 20 s
    assert (evicted(r), r.evicted[0].soft, r.evicted[0].grace_period_s) == (
        ["ns/best-effort-low-priority-low-usage"],
        True,
        30,
    )


def test_min_reclaim_keeps_evicting_until_value_plus_min_reclaim_is_available() -> None:
    node = FakeNode(
        [pod(f"ns/hog-{i}", container("c", mem=500 * MI), prio=i) for i in range(4)],
        memory_capacity=8 * GI,
        system_memory=8 * GI - 2000 * MI - 148 * MI,
    )  # 148Mi available
    m = manager(hard={"memory.available": "1Gi"}, reclaim={"memory.available": "500Mi"}, enforce=())
    assert evicted(node.sync(m, 0)) == ["ns/hog-0"]  # 148Mi < 1Gi
    assert evicted(node.sync(m, 1 * S)) == ["ns/hog-1"]  # 648Mi < 1Gi
    assert evicted(node.sync(m, 2 * S)) == ["ns/hog-2"]  # 1148Mi >= 1Gi but < 1Gi + 500Mi
    r = node.sync(m, 3 * S)  # 1648Mi >= 1.5Gi: reclaimed enough
    assert (r.node_conditions, r.evicted) == (["MemoryPressure"], [])
    assert node.sync(m, 302 * S).node_conditions == []


def test_allocatable_memory_threshold_guards_the_pods_cgroup() -> None:
    m = manager(hard={"memory.available": "500Mi"})  # + allocatableMemory.available < 500Mi
    stats = NodeStats(0, 16 * GI, 8 * GI, 6 * GI, 6 * GI - 100 * MI, 100 * GI, 0)
    p = pod("ns/p", container("c", mem=6 * GI - 100 * MI))
    r = m.synchronize(0, stats, [p], no_reclaim, lambda: stats)
    assert (r.node_conditions, evicted(r), r.evicted[0].signal) == (
        ["MemoryPressure"],
        ["ns/p"],
        "allocatableMemory.available",
    )


def test_stale_stats_do_not_drive_a_second_eviction() -> None:
    m = manager(hard={"memory.available": "1Gi"})
    pods = memory_pressure_pods()
    stats = memory_stats(10 * S, 500 * MI)
    assert evicted(m.synchronize(10 * S, stats, pods, no_reclaim, lambda: stats)) == [
        "ns/best-effort-low-priority-low-usage"
    ]
    r = m.synchronize(11 * S, stats, pods, no_reclaim, lambda: stats)  # stats still from 10 s
    assert (r.node_conditions, r.events, r.evicted) == (["MemoryPressure"], [], [])


# -- critical pods ------------------------------------------------------------------------------
def test_critical_pods_are_skipped_and_the_next_ranked_pod_is_evicted() -> None:
    node = FakeNode(
        [
            pod("kube-system/kube-proxy", container("proxy", mem=GI), critical=True),
            pod("ns/app", container("app", mem=500 * MI, req={"memory": 100 * MI})),
        ],
        system_memory=7 * GI,
    )
    m = manager(hard={"memory.available": "1Gi"})
    r = node.sync(m, 0)
    assert (r.rejected_critical, evicted(r)) == (["kube-system/kube-proxy"], ["ns/app"])
    r = node.sync(m, 1 * S)  # only the critical pod is left: nothing can be evicted
    assert (r.node_conditions, r.rejected_critical, r.evicted) == (
        ["MemoryPressure"],
        ["kube-system/kube-proxy"],
        [],
    )


# -- disk pressure and node-level reclaim -----------------------------------------------------
def disk_node(**kwargs) -> FakeNode:
    return FakeNode(
        [
            pod("ns/writer", container("w", rootfs=3 * GI, logs=0), prio=0),
            pod("ns/logger", container("l", rootfs=0, logs=GI), prio=0),
            pod(
                "ns/db",
                container("d", rootfs=2 * GI, logs=0, req={"ephemeral-storage": 4 * GI}),
                prio=0,
            ),
        ],
        **kwargs,
    )


def test_disk_pressure_resolved_by_node_level_reclaim_alone() -> None:
    # 100Gi nodefs: 80Gi system + 6Gi pods + 8Gi unused images + 1Gi dead containers = 5Gi free.
    node = disk_node(system_disk=80 * GI, images=8 * GI, dead_containers=GI)
    m = manager(hard={"nodefs.available": "10Gi"})
    r = node.sync(m, 0)
    assert r == SyncResult(
        node_conditions=["DiskPressure"],
        events=[
            NodeEvent("EvictionThresholdMet", "Warning", "Attempting to reclaim ephemeral-storage")
        ],
        reclaims=[
            ReclaimResult("ContainerGC", "ephemeral-storage", GI),
            ReclaimResult("ImageGC", "ephemeral-storage", 8 * GI),
        ],
    )
    assert node.gc_calls == ["ContainerGC", "ImageGC"]
    assert m.admit_pod(BURSTABLE) == (False, "Evicted", "The node had condition: [DiskPressure]. ")
    # 14Gi free now: no threshold, the condition is held for the transition period.
    r = node.sync(m, 10 * S)
    assert (r.node_conditions, r.events, r.reclaims) == (["DiskPressure"], [], [])
    assert node.sync(m, 300 * S).node_conditions == []


def test_after_reclaim_1_18_checks_thresholds_without_min_reclaim() -> None:
    node = disk_node(system_disk=80 * GI, images=8 * GI, dead_containers=GI)
    m = manager(hard={"nodefs.available": "10Gi"}, reclaim={"nodefs.available": "5Gi"})
    assert node.sync(m, 0).evicted == []  # 14Gi free >= 10Gi: "reduced without evicting"
    r = node.sync(m, 10 * S)  # 14Gi < 10Gi + 5Gi: still met, reclaim again (frees nothing)
    assert (r.events[0].message, r.reclaims, r.evicted) == (
        "Attempting to reclaim ephemeral-storage",
        [],
        [],
    )
    assert node.gc_calls == ["ContainerGC", "ImageGC", "ContainerGC", "ImageGC"]


def test_disk_pressure_that_reclaim_cannot_resolve_evicts_the_top_disk_consumer() -> None:
    # 100Gi nodefs: 88Gi system + 6Gi pods + 1Gi images = 5Gi free; reclaim frees 1Gi.
    node = disk_node(system_disk=88 * GI, images=GI)
    m = manager(hard={"nodefs.available": "10Gi"})
    r = node.sync(m, 0)
    assert r.reclaims == [ReclaimResult("ImageGC", "ephemeral-storage", GI)]
    assert r.evicted == [
        EvictionDecision(
            "ns/writer",
            "nodefs.available",
            "ephemeral-storage",
            False,
            0,
            "The node was low on resource: ephemeral-storage. "
            "Container w was using 3Gi, which exceeds its request of 0. ",
            {
                "offending_containers": "w",
                "offending_containers_usage": "3Gi",
                "starved_resource": "ephemeral-storage",
            },
        )
    ]
    assert evicted(node.sync(m, 1 * S)) == ["ns/logger"]  # 9Gi free: db is below its request
    r = node.sync(m, 2 * S)  # 10Gi free: not below 10Gi
    assert (r.node_conditions, r.evicted) == (["DiskPressure"], [])


def test_imagefs_signals_observe_nodefs_on_a_single_filesystem() -> None:
    node = disk_node(system_disk=80 * GI)  # 14Gi free of 100Gi
    m = manager(hard={"imagefs.available": "15%"})  # the kubelet default: 16106128000 bytes
    r = node.sync(m, 0)
    assert (r.node_conditions, r.events[0].message, evicted(r)) == (
        ["DiskPressure"],
        "Attempting to reclaim ephemeral-storage",
        ["ns/writer"],
    )


def test_dedicated_imagefs_nodefs_pressure_has_no_reclaim_and_ranks_by_logs() -> None:
    node = disk_node(system_disk=88 * GI, images=GI, imagefs_capacity=50 * GI)
    m = manager(hard={"nodefs.available": "10Gi"}, dedicated_imagefs=True)
    r = node.sync(m, 0)  # nodefs: 88Gi + 6Gi pods = 6Gi free
    assert (node.gc_calls, r.reclaims, evicted(r)) == ([], [], ["ns/logger"])


def test_pid_pressure_ranks_by_priority_only() -> None:
    busy = pod("ns/busy", container("b"), prio=100)
    busy.process_count = 20_000
    idle = pod("ns/idle", container("i"), prio=0)
    idle.process_count = 10
    node = FakeNode([busy, idle], pid_max=32768, system_pids=12_000)
    m = manager(hard={"pid.available": "1000"})
    r = node.sync(m, 0)  # 32768 - 32010 = 758 < 1000
    assert (r.node_conditions, r.events[0].message, evicted(r), r.evicted[0].message) == (
        ["PIDPressure"],
        "Attempting to reclaim pids",
        ["ns/idle"],
        "The node was low on resource: pids. ",
    )


# -- local ephemeral storage --------------------------------------------------------------------
def test_local_storage_violations_evict_every_violating_pod_and_skip_node_pressure() -> None:
    pods = [
        pod(
            "ns/cache",
            container("c", rootfs=0, logs=0),
            volumes=(VolumeStats("scratch", "emptyDir", size_limit=GI, used=GI + 1),),
        ),
        pod(
            "ns/total",
            container("a", rootfs=GI, logs=0, lim={"ephemeral-storage": GI}),
            container("b", rootfs=0, logs=0, lim={"ephemeral-storage": 512 * MI}),
            ephemeral=2 * GI,
        ),
        pod(
            "ns/one",
            container("app", rootfs=600 * MI, logs=500 * MI, lim={"ephemeral-storage": GI}),
            ephemeral=600 * MI,
        ),
        pod(
            "kube-system/static",
            container("s", rootfs=0, logs=0),
            critical=True,
            volumes=(VolumeStats("tmp", "emptyDir", size_limit=MI, used=2 * MI),),
        ),
        pod(
            "ns/fine",
            container("f", rootfs=GI, logs=0, lim={"ephemeral-storage": 2 * GI}),
            volumes=(VolumeStats("mem", "emptyDir", medium="Memory", size_limit=MI),),
        ),
    ]
    m = manager(hard={"memory.available": "1Gi"})
    stats = memory_stats(0, 500 * MI)  # memory pressure too, but local storage goes first
    r = m.synchronize(0, stats, pods, no_reclaim, lambda: stats)
    assert r.node_conditions == ["MemoryPressure"]
    assert r.events == []
    assert r.rejected_critical == ["kube-system/static"]
    assert [(d.pod, d.signal, d.grace_period_s, d.message) for d in r.evicted] == [
        (
            "ns/cache",
            "emptydirfs.limit",
            0,
            'Usage of EmptyDir volume "scratch" exceeds the limit "1Gi". ',
        ),
        (
            "ns/total",
            "ephemeralpodfs.limit",
            0,
            "Pod ephemeral local storage usage exceeds the total limit of containers 1536Mi. ",
        ),
        (
            "ns/one",
            "ephemeralcontainerfs.limit",
            0,
            'Container app exceeded its local ephemeral storage limit "1Gi". ',
        ),
    ]


@pytest.mark.parametrize(
    "dedicated_imagefs, lsci, expected",
    [
        pytest.param(
            False, True, ["ns/one"], id="single filesystem: rootfs + logs above the limit"
        ),
        pytest.param(True, True, [], id="dedicated imagefs: only logs count against the limit"),
        pytest.param(
            False, False, [], id="LocalStorageCapacityIsolation off: no limit is enforced"
        ),
    ],
)
def test_container_ephemeral_limit_depends_on_the_layout(dedicated_imagefs, lsci, expected) -> None:
    p = pod(
        "ns/one", container("app", rootfs=600 * MI, logs=500 * MI, lim={"ephemeral-storage": GI})
    )
    m = manager(dedicated_imagefs=dedicated_imagefs, local_storage_capacity_isolation=lsci)
    stats = memory_stats(0, 4 * GI)
    assert evicted(m.synchronize(0, stats, [p], no_reclaim, lambda: stats)) == expected


def test_nothing_to_do_without_thresholds_and_local_storage_isolation() -> None:
    m = manager(enforce=(), local_storage_capacity_isolation=False)
    stats = memory_stats(0, 0)
    assert m.synchronize(0, stats, memory_pressure_pods(), no_reclaim, lambda: stats) == SyncResult(
        []
    )
    assert m.last_observations == {}


# -- admission ----------------------------------------------------------------------------------
TOLERATING = PodStats(
    "ns/tolerating", containers=[ContainerStats("c")], tolerates_memory_pressure=True
)
CRITICAL = PodStats("kube-system/critical", containers=[ContainerStats("c")], is_critical=True)


@pytest.mark.parametrize(
    "conditions, candidate, expected",
    [
        pytest.param([], BEST_EFFORT, (True, "", ""), id="no pressure admits everything"),
        pytest.param(
            ["MemoryPressure"],
            BEST_EFFORT,
            (False, "Evicted", "The node had condition: [MemoryPressure]. "),
            id="memory pressure rejects a BestEffort pod",
        ),
        pytest.param(
            ["MemoryPressure"],
            BURSTABLE,
            (True, "", ""),
            id="memory pressure admits a Burstable pod",
        ),
        pytest.param(
            ["MemoryPressure"],
            TOLERATING,
            (True, "", ""),
            id="memory pressure admits a BestEffort pod tolerating memory-pressure",
        ),
        pytest.param(
            ["DiskPressure"],
            BURSTABLE,
            (False, "Evicted", "The node had condition: [DiskPressure]. "),
            id="disk pressure rejects every non-critical pod",
        ),
        pytest.param(
            ["MemoryPressure", "DiskPressure"],
            TOLERATING,
            (False, "Evicted", "The node had condition: [MemoryPressure DiskPressure]. "),
            id="memory and disk pressure reject even a tolerating pod",
        ),
        pytest.param(
            ["PIDPressure"],
            BURSTABLE,
            (False, "Evicted", "The node had condition: [PIDPressure]. "),
            id="PID pressure rejects every non-critical pod",
        ),
        pytest.param(
            ["MemoryPressure", "DiskPressure", "PIDPressure"],
            CRITICAL,
            (True, "", ""),
            id="a critical pod is admitted under any pressure",
        ),
    ],
)
def test_admit(conditions, candidate, expected) -> None:
    m = manager()
    m.node_conditions = list(conditions)
    assert m.admit_pod(candidate) == expected


def test_admission_reports_conditions_in_a_fixed_order() -> None:
    m = manager(hard={"memory.available": "1Gi", "nodefs.available": "10Gi"})
    stats = NodeStats(0, 8 * GI, 7 * GI + 1, 0, 0, 100 * GI, 95 * GI)
    m.synchronize(0, stats, [], lambda what, resource: [], lambda: stats)
    assert (
        m.is_under_memory_pressure(),
        m.is_under_disk_pressure(),
        m.is_under_pid_pressure(),
    ) == (True, True, False)
    assert m.admit(False, "Burstable", False)[2] == (
        "The node had condition: [MemoryPressure DiskPressure]. "
    )
