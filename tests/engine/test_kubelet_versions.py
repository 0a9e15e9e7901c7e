"""The kubelet's rules by release, 1.27 to 1.36 (and 1.18), at exact simulated times. Each
expected value follows from the Go source and release notes named in its row
(docs/behavior-current.md, "The kubelet by release"):

- ``immediateEvictionGracePeriodSeconds`` = 1 in managerImpl.synchronize and the local-storage
  checks, and ``overridden`` in calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go):
  both #124063, 1.31. Before, a hard eviction's override was 0 and the pod worker (since its
  1.22 rewrite) read 0 as "no override": the kill took the pod's terminationGracePeriodSeconds
  and killPodNow gave up waiting after 10 s (``ExceededGracePeriod``).
- a soft eviction's override is min(evictionMaxPodGracePeriod, the pod's
  terminationGracePeriodSeconds) from 1.32 (#122890; AllowOverwriteTerminationGracePeriodSeconds
  off by default, locked in 1.35 by #133792).
- DefaultEvictionHard gains ``imagefs.inodesFree: 5%`` in 1.30 (#121834).
- realImageGCManager.GarbageCollect's FreeDiskSpaceFailed message, reworded in 1.26 (#112631)
  and in 1.35 (#132578).

Node "m": 8 cpu, 8Gi memory, 100Gi disk; the eviction manager syncs at 0, 10, 20 s ...
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from controller.engine.kubelet.eviction.api import IMAGEFS_INODES_FREE
from controller.engine.kubelet.eviction.helpers import parse_threshold_config
from controller.engine.versions import (
    PROFILES,
    calculate_effective_grace_period,
    calculate_effective_grace_period_overridden,
    format_size,
    free_space_failed_attempted_to_free,
    free_space_failed_insufficient_disk,
    free_space_failed_wanted_to_free,
    profile_for,
)

from .conftest import events, simulate
from .test_audit_eviction import node, node_usage, pod

MI = 2**20
GI = 2**30
RELEASES = ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")


def run(
    version: str,
    kubelet: dict[str, Any],
    objects: list[dict[str, Any]],
    faults: list[dict[str, Any]],
    nodes: list[dict[str, Any]] | None = None,
    duration: int = 90,
    **spec_extra: Any,
):
    spec = {
        "kubernetesVersion": version,
        "duration": f"{duration}s",
        "kubelet": kubelet,
        "nodes": nodes or [node()],
        "objects": objects,
        "faults": faults,
        **spec_extra,
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


def exceeded(sim) -> list[float]:
    return [e["t"] / 1000 for e in events(sim, "K8sEvent", reason="ExceededGracePeriod")]


def releases(first: str, last: str = "1.36") -> list[str]:
    return [r for r in RELEASES if int(first[2:]) <= int(r[2:]) <= int(last[2:])]


# -- pure ports ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("override", "pod_grace", "terminating", "before", "after"),
    [
        pytest.param(0, 30, 0, 30, 1, id="an override of 0: the pod's own grace, then 1 s"),
        pytest.param(0, 0, 0, 1, 1, id="0 and a pod grace of 0: at least 1 s in both"),
        pytest.param(1, 30, 0, 1, 1, id="immediateEvictionGracePeriodSeconds"),
        pytest.param(20, 5, 0, 20, 20, id="an override above the pod's grace is used as is"),
        pytest.param(None, 30, 0, 30, 30, id="no override (preemption): the pod's grace"),
        pytest.param(None, 0, 0, 1, 1, id="no override, pod grace 0: 1 s"),
        pytest.param(5, 30, 3, 3, 3, id="a deletion's shorter grace is kept (only shrinks)"),
        pytest.param(
            0, 30, 10, 30, 1, id="0 on a deleting pod: its full grace again, 1 s after #124063"
        ),
    ],
)
def test_calculate_effective_grace_period_before_and_after_124063(
    override: int | None, pod_grace: int, terminating: int, before: int, after: int
) -> None:
    assert calculate_effective_grace_period(override, pod_grace, terminating) == before
    assert calculate_effective_grace_period_overridden(override, pod_grace, terminating) == after


@pytest.mark.parametrize(
    ("version", "rule", "immediate", "capped", "default_hard_has_imagefs_inodes"),
    [
        pytest.param("1.18", "as given", 0, False, False, id="1.18"),
        *[
            pytest.param(
                r,
                "overridden" if int(r[2:]) >= 31 else "effective",
                1 if int(r[2:]) >= 31 else 0,
                int(r[2:]) >= 32,
                int(r[2:]) >= 30,
                id=r,
            )
            for r in RELEASES
        ],
    ],
)
def test_each_release_has_its_kubelet_rules(
    version, rule, immediate, capped, default_hard_has_imagefs_inodes
) -> None:
    p = profile_for(version)
    name = {
        "as given": "kill_grace_as_given",
        "effective": "calculate_effective_grace_period",
        "overridden": "calculate_effective_grace_period_overridden",
    }[rule]
    assert p.kill_grace_period.__name__ == name
    assert p.eviction_immediate_grace_period_s == immediate
    assert p.eviction_soft_grace_capped_by_pod is capped
    assert (IMAGEFS_INODES_FREE in p.kubelet_default_eviction_hard) is (
        default_hard_has_imagefs_inodes
    )
    minor = int(version[2:])
    wording = (
        free_space_failed_wanted_to_free
        if minor < 26
        else free_space_failed_attempted_to_free
        if minor < 35
        else free_space_failed_insufficient_disk
    )
    assert p.free_space_failed_message is wording


@pytest.mark.parametrize(
    ("size", "text"),
    [
        pytest.param(100 * GI, "100.0 GiB", id="whole GiB"),
        pytest.param(
            int(26.4 * GI), "26.4 GiB", id="26.4 GiB (a message seen from a 1.35 kubelet)"
        ),
        pytest.param(int(114.7 * GI), "114.7 GiB", id="114.7 GiB (seen)"),
        pytest.param(512 * MI, "512.0 MiB", id="below 1 GiB: MiB"),
        pytest.param(3 * 1024 * GI, "3.0 TiB", id="from 1 TiB: TiB"),
        pytest.param(1000, "1000 B", id="below 1 KiB: bytes"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


def test_free_space_failed_messages() -> None:
    assert free_space_failed_wanted_to_free(20 * GI, 10 * GI, 100, 100 * GI) == (
        "failed to garbage collect required amount of images. Wanted to free 21474836480 "
        "bytes, but freed 10737418240 bytes"
    )
    assert free_space_failed_attempted_to_free(20 * GI, 10 * GI, 100, 100 * GI) == (
        "Failed to garbage collect required amount of images. Attempted to free 21474836480 "
        "bytes, but only found 10737418240 bytes eligible to free."
    )
    assert free_space_failed_insufficient_disk(20 * GI, 10 * GI, 100, 100 * GI) == (
        "Insufficient free disk space on the node's image filesystem (100% of 100.0 GiB used). "
        "Failed to free sufficient space by deleting unused images (freed 10737418240 bytes). "
        "Investigate disk usage, as it could be used by active images, logs, volumes, or other "
        "data."
    )


# -- hard evictions -----------------------------------------------------------------------------
HARD = {
    "evictionHard": {"memory.available": "4608Mi"},
    "evictionMinimumReclaim": {"memory.available": "1Gi"},
}
HARD_PODS = [
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
    ("version", "want_evicted", "want_failed", "want_exceeded"),
    [
        *[
            pytest.param(
                r,
                [(20.0, "burst", 0), (51.0, "besteffort", 0)],
                [(50.0, "burst"), (81.0, "besteffort")],
                [30.0, 61.0],
                id=f"{r}: override 0, the pod's 30 s; killPodNow gives up after 10 s",
            )
            for r in releases("1.27", "1.30")
        ],
        *[
            pytest.param(
                r,
                [(20.0, "burst", 1), (22.0, "besteffort", 1)],
                [(21.0, "burst"), (23.0, "besteffort")],
                [],
                id=f"{r}: immediateEvictionGracePeriodSeconds, a 1 s kill",
            )
            for r in releases("1.31")
        ],
    ],
)
def test_a_hard_evictions_kill_by_release(version, want_evicted, want_failed, want_exceeded):
    """1.5Gi of system memory from 15 s: 4308Mi available < 4608Mi at the 20 s sync; burst (1Gi
    above its 512Mi request, terminationGracePeriodSeconds 30 by default) goes first. Its
    memory is freed when its kill ends; waitForPodsCleanup then polls every 1 s (up to 30 s
    after evictPod returned): the next sync is 1 s after the kill ended. 5332Mi is still below
    4608Mi + the 1Gi minimum reclaim then, so the BestEffort pod goes too."""
    sim = run(version, HARD, HARD_PODS, [node_usage(15, memory="1536Mi")])
    assert evicted(sim) == want_evicted
    assert failed(sim) == want_failed
    assert exceeded(sim) == want_exceeded


@pytest.mark.parametrize(
    ("version", "want_evicted", "want_failed"),
    [
        *[
            pytest.param(
                r,
                [(20.0, "a", 0), (30.0, "b", 0)],
                [(50.0, "a"), (60.0, "b")],
                id=f"{r}: override 0, each kill the pod's 30 s, evictPod returns after 10 s",
            )
            for r in releases("1.27", "1.30")
        ],
        *[
            pytest.param(
                r,
                [(20.0, "a", 1), (21.0, "b", 1)],
                [(21.0, "a"), (22.0, "b")],
                id=f"{r}: one after the other, each kill 1 s",
            )
            for r in releases("1.31")
        ],
    ],
)
def test_local_storage_evictions_by_release(version, want_evicted, want_failed) -> None:
    """Two pods above their ephemeral-storage limits at the 20 s sync: localStorageEviction
    evicts every violator, evictPod after evictPod, each blocking in killPodNow."""
    pods = [
        pod("a", limits={"ephemeral-storage": "1Gi"}),
        pod("b", limits={"ephemeral-storage": "1Gi"}),
    ]
    faults = [
        {"at": "15s", "type": "SetUsage", "pod": "default/a", "ephemeral-storage": "2Gi"},
        {"at": "15s", "type": "SetUsage", "pod": "default/b", "ephemeral-storage": "2Gi"},
    ]
    sim = run(version, {}, pods, faults, duration=70)
    assert evicted(sim) == want_evicted
    assert failed(sim) == want_failed


# -- soft evictions -----------------------------------------------------------------------------
def _soft_cases() -> list[Any]:
    """(max pod grace, pod grace) -> per release: (override shown, Failed at, Exceeded at)."""
    rows = []
    table: list[tuple[str, int, int, dict[str, tuple[int, float, list[float]]]]] = [
        (
            "max 0 (the default), pod 20 s",
            0,
            20,
            {
                "1.18": (0, 50.0, []),
                **{r: (0, 70.0, [60.0]) for r in releases("1.27", "1.30")},
                **{r: (0, 51.0, []) for r in releases("1.31")},
            },
        ),
        (
            "max 20, pod 5 s",
            20,
            5,
            {
                "1.18": (20, 50.0, []),
                **{r: (20, 70.0, []) for r in releases("1.27", "1.31")},
                **{r: (5, 55.0, []) for r in releases("1.32")},
            },
        ),
        (
            "max 20, pod 30 s",
            20,
            30,
            {"1.18": (20, 50.0, []), **{r: (20, 70.0, []) for r in RELEASES}},
        ),
        (
            "max 20, pod 0 s",
            20,
            0,
            {
                "1.18": (20, 50.0, []),
                **{r: (20, 70.0, []) for r in releases("1.27", "1.31")},
                **{r: (0, 51.0, []) for r in releases("1.32")},
            },
        ),
    ]
    for label, max_grace, pod_grace, by_release in table:
        for version, (override, failed_at, exceeded_at) in by_release.items():
            rows.append(
                pytest.param(
                    version,
                    max_grace,
                    pod_grace,
                    override,
                    failed_at,
                    exceeded_at,
                    id=f"{version}: {label}",
                )
            )
    return rows


@pytest.mark.parametrize(
    ("version", "max_grace", "pod_grace", "override", "failed_at", "exceeded_at"), _soft_cases()
)
def test_a_soft_evictions_kill_by_release(
    version, max_grace, pod_grace, override, failed_at, exceeded_at
) -> None:
    """evictionSoft memory.available 2Gi for 30 s: 4Gi of system memory from 15 s leaves
    1748Mi; met from the 20 s sync, so burst is evicted at 50 s. The override is
    evictionMaxPodGracePeriod, from 1.32 no more than the pod's terminationGracePeriodSeconds;
    the pod worker turns an override of 0 into the pod's own grace (1.22 to 1.30) or 1 s (1.31
    on). 1.18 writes Failed before the kill; later releases when the kill ends."""
    kubelet = {
        "evictionHard": {},
        "evictionSoft": {"memory.available": "2Gi"},
        "evictionSoftGracePeriod": {"memory.available": "30s"},
        "evictionMaxPodGracePeriod": max_grace,
    }
    pods = [
        pod("burst", usage={"memory": "1Gi"}, requests={"memory": "512Mi"}, grace=pod_grace),
        *HARD_PODS[1:],
    ]
    sim = run(version, kubelet, pods, [node_usage(15, memory="4Gi")], duration=100)
    assert evicted(sim)[0] == (50.0, "burst", override)
    assert failed(sim)[0] == (failed_at, "burst")
    assert exceeded(sim) == exceeded_at


# -- defaults -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "signals"),
    [
        pytest.param(
            v,
            [
                "allocatableMemory.available",
                "imagefs.available",
                *(["imagefs.inodesFree"] if v not in ("1.18", "1.27", "1.28", "1.29") else []),
                "memory.available",
                "nodefs.available",
                "nodefs.inodesFree",
            ],
            id=v,
        )
        for v in ("1.18", *RELEASES)
    ],
)
def test_the_default_eviction_hard_by_release(version: str, signals: list[str]) -> None:
    """evictionHard unset: DefaultEvictionHard of the release. The node's charted signals (the
    ones with a threshold, as the page shows them) gain imagefs.inodesFree from 1.30."""
    sim = run(version, {}, [], [], duration=1)
    assert [s["signal"] for s in sim.kubelets["m"].eviction.signals()] == signals
    parsed = parse_threshold_config(
        ["pods"], None, {}, {}, {}, default_hard=profile_for(version).kubelet_default_eviction_hard
    )
    assert (IMAGEFS_INODES_FREE in {t.signal for t in parsed}) is ("imagefs.inodesFree" in signals)


# -- image garbage collection -------------------------------------------------------------------
_WORDING = {
    "1.18": free_space_failed_wanted_to_free,
    **{
        v: free_space_failed_attempted_to_free
        if int(v[2:]) < 35
        else free_space_failed_insufficient_disk
        for v in RELEASES
    },
}


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in _WORDING])
def test_free_disk_space_failed_by_release(version: str) -> None:
    """98Gi of the node's own disk use from 100 s + 15Gi of images on a 100Gi nodefs: available
    reads 0, usage 100%, amountToFree 20Gi; only the unused 10Gi image can go (at the 300 s
    run), nothing at 600 s. FreeDiskSpaceFailed each run, ImageGCFailed (the same error) from
    the second."""
    sim = run(
        version,
        {"evictionHard": {"memory.available": "100Mi"}},
        [],
        [node_usage(100, **{"ephemeral-storage": "98Gi"})],
        nodes=[
            node(
                images=[
                    {"name": "old:v1", "size": "10Gi", "inUse": False},
                    {"name": "cur:v1", "size": "5Gi", "inUse": True},
                ]
            )
        ],
        duration=600,
    )
    rule = _WORDING[version]
    want = [
        (300.0, rule(20 * GI, 10 * GI, 100, 100 * GI)),
        (600.0, rule(20 * GI, 0, 100, 100 * GI)),
    ]
    got = [
        (e["t"] / 1000, e["message"])
        for e in events(sim, "K8sEvent", object="Node/m", reason="FreeDiskSpaceFailed")
    ]
    assert got == want
    assert [
        (e["t"] / 1000, e["message"])
        for e in events(sim, "K8sEvent", object="Node/m", reason="ImageGCFailed")
    ] == want[1:]


def test_every_simulated_release_is_in_this_table() -> None:
    assert sorted(PROFILES, key=lambda v: int(v[2:])) == ["1.18", *RELEASES]


# -- the node shutdown manager's kills go through the pod worker ---------------------------------
@pytest.mark.parametrize("version", ["1.27", "1.30", "1.31", "1.36"])
@pytest.mark.parametrize(
    ("kubelet", "web_grace", "web_failed", "agent_failed", "powered_off"),
    [
        pytest.param(
            "{shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}",
            0,
            61.0,
            [71.0],
            71.0,
            id="web pods of grace 0: override 0, a 1 s kill (before 1.31 the pod's own 0 -> 1)",
        ),
        pytest.param(
            "{shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 0s}",
            30,
            90.0,
            [],
            90.0,
            id="a 0 s critical group: its wait ends at once, the kill (1 s or more) never ends",
        ),
    ],
)
def test_shutdown_kills_take_the_pod_workers_grace(
    version, kubelet, web_grace, web_failed, agent_failed, powered_off
) -> None:
    """podManager.killPods passes min(the group's period, the pod's grace) as
    gracePeriodOverride to killPodFunc; the pod worker's calculateEffectiveGracePeriod makes
    it at least 1 s (an override of 0 is the pod's own grace before 1.31, then 1 s). The
    group's wait ends when its kills end or its period runs out; the machine then powers off
    and a kill still running never reports. ShutdownNode at 60 s."""
    from .test_node_shutdown import scenario as shutdown_scenario

    sim = simulate(shutdown_scenario(kubelet=kubelet, web_grace=web_grace, version=version))
    failed_at = {
        e["pod"].split("/")[1]: e["t"] / 1000
        for e in events(sim, "PodPhase", phase="Failed", reason="Terminated")
    }
    assert sorted(t for name, t in failed_at.items() if name.startswith("web")) == [web_failed] * 2
    assert [t for name, t in failed_at.items() if name == "agent"] == agent_failed
    assert [e["t"] / 1000 for e in events(sim, "NodePoweredOff")] == [powered_off]


# -- version skew: each kubelet its own release ------------------------------------------------
def disk_node(name: str, **extra: Any) -> dict[str, Any]:
    return node(
        name,
        images=[
            {"name": "old:v1", "size": "10Gi", "inUse": False},
            {"name": "cur:v1", "size": "5Gi", "inUse": True},
        ],
        **extra,
    )


def disk_full(name: str) -> dict[str, Any]:
    return {"at": "100s", "type": "SetUsage", "node": name, "ephemeral-storage": "98Gi"}


def test_a_1_36_control_plane_with_1_33_kubelets_words_image_gc_as_1_33() -> None:
    """Two nodes fill their disks alike (as in test_free_disk_space_failed_by_release): the one
    whose kubelet is 1.33 reports FreeDiskSpaceFailed in 1.33's words, the 1.36 one in 1.35's
    (#132578); the controllers are the control plane's (1.36: nodeMonitorGracePeriod 50 s, so a
    kubelet stopped at 100 s, last renewal 90 s, turns Unknown at 145 s, not 135 s)."""
    sim = run(
        "1.36",
        {"evictionHard": {"memory.available": "100Mi"}},
        [],
        [
            disk_full("old"),
            disk_full("new"),
            {"at": "100s", "type": "StopKubelet", "node": "quiet"},
        ],
        nodes=[disk_node("old", kubeletVersion="1.33"), disk_node("new"), node("quiet")],
        duration=300,
    )
    by_node = {
        e["object"]: e["message"]
        for e in events(sim, "K8sEvent", reason="FreeDiskSpaceFailed")
        if e["t"] == 300_000
    }
    assert by_node == {
        "Node/old": free_space_failed_attempted_to_free(20 * GI, 10 * GI, 100, 100 * GI),
        "Node/new": free_space_failed_insufficient_disk(20 * GI, 10 * GI, 100, 100 * GI),
    }
    assert [e["t"] / 1000 for e in events(sim, "NodeReady", node="quiet", status="Unknown")] == [
        145.0
    ]
    assert (sim.config.profile.version, sim.kubelets["old"].profile.version) == ("1.36", "1.33")
    assert sim.kubelets["new"].profile.version == "1.36"


@pytest.mark.parametrize(
    ("control_plane", "kubelet", "override", "failed_at"),
    [
        pytest.param("1.34", "1.31", 20, 70.0, id="1.34 control plane, 1.31 kubelet: max 20 s"),
        pytest.param("1.34", "1.32", 5, 55.0, id="1.34 control plane, 1.32 kubelet: the pod's 5 s"),
        pytest.param("1.31", "1.28", 20, 70.0, id="1.31 control plane, 1.28 kubelet: max 20 s"),
    ],
)
def test_the_soft_eviction_cap_follows_the_kubelet(control_plane, kubelet, override, failed_at):
    """The soft-eviction story of test_a_soft_evictions_kill_by_release (max 20 s, pod 5 s) on
    a node whose kubelet is older than the control plane: #122890 (1.32) is the kubelet's."""
    sim = run(
        control_plane,
        {
            "evictionHard": {},
            "evictionSoft": {"memory.available": "2Gi"},
            "evictionSoftGracePeriod": {"memory.available": "30s"},
            "evictionMaxPodGracePeriod": 20,
        },
        [
            pod("burst", usage={"memory": "1Gi"}, requests={"memory": "512Mi"}, grace=5),
            *HARD_PODS[1:],
        ],
        [node_usage(15, memory="4Gi")],
        nodes=[node(kubeletVersion=kubelet)],
        duration=100,
    )
    assert evicted(sim)[0] == (50.0, "burst", override)
    assert failed(sim)[0] == (failed_at, "burst")
