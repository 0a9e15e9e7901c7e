"""Fidelity audit of the NodeLifecycleController, NoExecuteTaintManager and kubelet heartbeat
against the Kubernetes source (target v1.18, k8s-behavior.md).

Every expected time below is derived from the Go code, not from the simulator's output:
pkg/controller/nodelifecycle/node_lifecycle_controller.go (monitorNodeHealth,
tryUpdateNodeHealth, processTaintBaseEviction, processNoTaintBaseEviction, handleDisruption,
doNoScheduleTaintingPass, doEvictionPass), scheduler/taint_manager.go (handleNodeUpdate,
handlePodUpdate, processPodOnNode, getMinTolerationTime), scheduler/timed_workers.go,
pkg/controller/util/node/controller_utils.go (DeletePods) and the kubelet's ReadyCondition
setter (pkg/kubelet/nodestatus/setters.go).

The first group pins behaviour the audit found the engine getting wrong (now fixed); the others
pin verified behaviour that no other test covered.

Timing conventions (defaults): monitor passes at 5 s multiples, leases renewed on the 10 s grid
(plus ``kubeletOffset``), tainting passes on the 100 ms grid, same-instant order faults ->
kubelets -> monitor pass -> tainting pass -> taint-manager timers.
"""

from __future__ import annotations

from typing import Any

import yaml

from .conftest import events, simulate, times

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


# -- scenario builders ---------------------------------------------------------------------------
def pod(name: str, node: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "c"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def tol(key: str = UNREACHABLE, seconds: int | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"key": key, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


def at(t: float, type_: str, **args: Any) -> dict[str, Any]:
    return {"at": f"{t}s", "type": type_, **args}


def scenario(
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]] | None = None,
    faults: list[dict[str, Any]] | None = None,
    duration: int = 600,
    cm: dict[str, Any] | None = None,
) -> str:
    spec: dict[str, Any] = {
        "duration": f"{duration}s",
        "nodes": nodes,
        "objects": objects or [],
        "faults": faults or [],
    }
    if cm:
        spec["controllerManager"] = cm
    doc = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "audit"},
        "spec": spec,
    }
    return yaml.safe_dump(doc, sort_keys=False)


def zone_nodes(prefix: str, zone: str, count: int) -> list[dict[str, Any]]:
    return [{"name": f"{prefix}-{i}", "zone": zone} for i in range(1, count + 1)]


def taint_times(sim: Any, kind: str, node: str, key: str, effect: str) -> list[float]:
    return times(sim, kind, node=node, key=key, effect=effect)


def tm_messages(sim: Any, pod_key: str) -> list[tuple[float, str]]:
    return [
        (e["t"] / 1000, e["message"])
        for e in events(sim, "K8sEvent", object=f"Pod/{pod_key}", reason="TaintManagerEviction")
    ]


# ================================================================================================
# Discrepancies the audit found, now following Kubernetes
# ================================================================================================


def test_deleting_the_last_node_of_a_zone_keeps_the_controller_running() -> None:
    # zone-a sorts before zone-b: the allWasFullyDisrupted loop breaks on zone-a (Normal) before
    # it reaches zone-b, so zone-b stays in zoneStates with no nodes. In Go the "normal" branch
    # then compares zoneStates[zone-b] (Normal) with newZoneStates[zone-b] (the zero value ""),
    # calls setLimiterInZone(zone-b, 0, "") (no case matches) and stores "". Nothing breaks.
    sim = simulate(
        scenario(
            zone_nodes("a", "zone-a", 2) + [{"name": "b-1", "zone": "zone-b"}],
            faults=[at(100, "DeleteNode", node="b-1"), at(150, "StopKubelet", node="a-1")],
            duration=300,
        )
    )
    assert times(sim, "K8sEvent", object="Node/b-1", reason="RemovingNode") == [100.0]
    # The controller keeps working after the deletion: a-1 (last renewal 140) goes Unknown at
    # the first pass past 140 + 40, and is NoExecute-tainted one pass later.
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [185.0]
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [190.0]


def test_zone_with_only_an_excluded_master_node_keeps_the_controller_running() -> None:
    # isNodeExcludedFromDisruptionChecks: LegacyNodeRoleBehavior (on in 1.18) excludes names
    # ending in "master". zone-z is created by addPodEvictorForNewZone (Initial) but never gets
    # a zoneToNodeConditions entry; zone-a (sorted first, Initial) ends the allWasFullyDisrupted
    # loop, and the normal branch handles zone-z with newZoneStates[zone-z] == "" (a no-op).
    sim = simulate(
        scenario(
            [{"name": "a-1", "zone": "zone-a"}, {"name": "z-master", "zone": "zone-z"}],
            faults=[at(105, "StopKubelet", node="z-master")],
            duration=200,
        )
    )
    assert [(e["t"], e["state"]) for e in events(sim, "ZoneState", zone="zone-a")] == [
        (0, "Initial"),
        (0, "Normal"),
    ]
    # Excluded nodes are still tainted individually (zone-z's queue has its full bucket).
    assert times(sim, "NodeReady", node="z-master", status="Unknown") == [145.0]
    assert taint_times(sim, "TaintAdded", "z-master", UNREACHABLE, "NoExecute") == [150.0]


def test_node_without_conditions_loses_the_not_ready_noschedule_taint_when_added() -> None:
    # TaintNodesByCondition admission adds not-ready:NoSchedule on create. The node informer's
    # AddFunc queues the node for doNoScheduleTaintingPass: no conditions -> desired taints {} ->
    # TaintSetDiff removes not-ready:NoSchedule at once (k8s-behavior.md 3.10).
    sim = simulate(
        scenario(
            [{"name": "a-1", "zone": "z"}],
            faults=[
                at(7, "AddNode", node={"name": "a-2", "zone": "z"}, kubeletMode="Stopped"),
                at(7, "AddNode", node={"name": "a-3", "zone": "z"}, kubeletMode="LeaseOnly"),
            ],
            duration=200,
        )
    )
    for name in ("a-2", "a-3"):
        assert taint_times(sim, "TaintAdded", name, NOT_READY, "NoSchedule") == [7.0]
        assert taint_times(sim, "TaintRemoved", name, NOT_READY, "NoSchedule") == [7.0]
    # a-2 never posts: Unknown (NodeStatusNeverUpdated) at the first pass past creation + 60 s.
    assert taint_times(sim, "TaintAdded", "a-2", UNREACHABLE, "NoSchedule") == [70.0]
    # a-3 renews its Lease, so it never goes Unknown and is never tainted again.
    assert [e for e in events(sim, "TaintAdded", node="a-3") if e["t"] > 7000] == []


def test_deleting_a_node_does_not_cancel_pending_taint_manager_deletions() -> None:
    # web: default 300 s unreachable toleration; quick: 20 s. NoExecute at 150 (kubelet stopped
    # at 105, Unknown at 145). The node is deleted at 160: the taint manager drops the node from
    # taintedNodes but keeps the timers, so quick is deleted at 150 + 20 = 170. Cancellation
    # only comes when a pod object disappears (PodUpdated(pod, nil) -> cancelWorkWithEvent).
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1"), pod("quick", "a-1", [tol(seconds=20)])],
            [at(105, "StopKubelet", node="a-1"), at(160, "DeleteNode", node="a-1")],
            duration=200,
        )
    )
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [150.0]
    assert [m for m in tm_messages(sim, "default/quick") if m[0] == 160.0] == []
    assert [m for m in tm_messages(sim, "default/web") if m[0] == 160.0] == []
    assert times(sim, "PodDeleted", pod="default/quick", by="TaintManager") == [170.0]
    # web's timer (450 s) is cancelled only when its object is garbage-collected: PodGC's
    # pass at 160 (after the fault) quarantines a-1 for 40 s, the pass at 200 deletes.
    removed = times(sim, "PodRemoved", pod="default/web")
    assert removed == [200.0]
    assert tm_messages(sim, "default/web") == [
        (removed[0], "Cancelling deletion of Pod default/web")
    ]


def test_legacy_eviction_deletes_pods_of_a_node_deleted_while_waiting_for_a_token() -> None:
    # 5 nodes, a-1 and a-2 stop at 44 (last lease 40, probe 40): Unknown at 85, zone Normal
    # (2 not ready is not > 2). podEvictionTimeout 2m: first pass past 160 is 165; a-1 takes the
    # zone's token at 165, a-2 waits for the next one (0.1/s) at 175. a-2 is deleted at 166;
    # at 175 doEvictionPass lists the pods still assigned to "a-2" and deletes them.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 5),
            [pod("w1", "a-1"), pod("w2", "a-2")],
            [
                at(44, "StopKubelet", node="a-1"),
                at(44, "StopKubelet", node="a-2"),
                at(166, "DeleteNode", node="a-2"),
            ],
            duration=200,
            cm={"enableTaintManager": False, "podEvictionTimeout": "2m"},
        )
    )
    assert times(sim, "PodDeleted", pod="default/w1", by="NodeLifecycleController") == [165.0]
    assert times(sim, "K8sEvent", object="Node/a-2", reason="DeletingAllPods") == [175.0]
    assert times(sim, "PodDeleted", pod="default/w2", by="NodeLifecycleController") == [175.0]


def test_first_status_of_a_new_node_records_pressure_events_but_no_node_ready() -> None:
    # The pressure setters start from a fresh Unknown condition and record
    # NodeHasSufficientMemory / NodeHasNoDiskPressure / NodeHasSufficientPID; the Ready setter
    # appends Ready=True without an event (readyConditionUpdated == false).
    sim = simulate(
        scenario(
            [{"name": "a-1", "zone": "z"}],
            faults=[at(7, "AddNode", node={"name": "a-2", "zone": "z"})],
            duration=20,
        )
    )
    for name, t in (("a-1", 0.0), ("a-2", 7.0)):
        reasons = [
            e["reason"]
            for e in events(sim, "K8sEvent", object=f"Node/{name}")
            if e["t"] == t * 1000
        ]
        assert "NodeHasSufficientMemory" in reasons
        assert "NodeReady" not in reasons


# ================================================================================================
# Verified behaviour without earlier coverage
# ================================================================================================


def test_controller_rewrites_ready_and_pressure_conditions_but_not_network_unavailable() -> None:
    # kubeletOffset 3 s: renewals at 3, 13, ..., 103; stopped at 104. The renewal at 103 is first
    # seen by the pass at 105, so probeTimestamp = 105 (controller clock, not renewTime) and the
    # node goes Unknown at the first pass strictly after 145: 150.
    sim = simulate(
        scenario(
            [{"name": "a-1", "zone": "z", "kubeletOffset": "3s"}] + zone_nodes("b", "z", 2),
            faults=[
                at(
                    50,
                    "SetNodeCondition",
                    node="a-1",
                    condition="NetworkUnavailable",
                    status="False",
                    reason="RouteCreated",
                    message="ok",
                ),
                at(104, "StopKubelet", node="a-1"),
            ],
            duration=160,
        )
    )
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [150.0]
    conds = {c.type: c for c in sim.cluster.nodes["a-1"].conditions}
    for ctype in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        c = conds[ctype]
        assert (c.status, c.reason, c.message) == (
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        )
        assert c.last_transition_ms == 150_000
        assert c.last_heartbeat_ms == 0  # untouched: the kubelet last posted status at 0
    net = conds["NetworkUnavailable"]
    assert (net.status, net.reason, net.last_transition_ms) == ("False", "RouteCreated", 50_000)


def test_never_posting_node_goes_unknown_after_startup_grace_and_is_tainted_at_once() -> None:
    # Created at 7 with no conditions: probe = creationTimestamp, grace = nodeStartupGracePeriod
    # (60 s) -> first pass past 67 is 70. Every condition is appended as NodeStatusNeverUpdated
    # with lastHeartbeatTime = creation. The observed Ready is the synthetic Unknown, so the
    # NoExecute taint comes in the same pass (no extra pass as for a node that was Ready), and
    # no NodeNotReady event is recorded (observed was not True).
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 2),
            faults=[at(7, "AddNode", node={"name": "new", "zone": "z"}, kubeletMode="Stopped")],
            duration=100,
        )
    )
    assert times(sim, "K8sEvent", object="Node/new", reason="RegisteredNode") == [10.0]
    assert [(e["t"], e["reason"]) for e in events(sim, "NodeReady", node="new")] == [
        (70_000, "NodeStatusNeverUpdated")
    ]
    conds = sim.cluster.nodes["new"].conditions
    assert [c.type for c in conds] == ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"]
    for c in conds:
        assert (c.status, c.message) == ("Unknown", "Kubelet never posted node status.")
        assert (c.last_heartbeat_ms, c.last_transition_ms) == (7_000, 70_000)
    assert taint_times(sim, "TaintAdded", "new", UNREACHABLE, "NoExecute") == [70.0]
    assert events(sim, "K8sEvent", object="Node/new", reason="NodeNotReady") == []


def test_lease_only_kubelet_keeps_the_node_from_going_unknown() -> None:
    # "If kubelet never posted the node status, but continues renewing the heartbeat leases,
    # the node controller will assume the node is healthy and take no action."
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 2),
            faults=[at(7, "AddNode", node={"name": "lo", "zone": "z"}, kubeletMode="LeaseOnly")],
            duration=300,
        )
    )
    assert events(sim, "NodeReady", node="lo") == []
    assert sim.cluster.nodes["lo"].conditions == []
    assert events(sim, "TaintAdded", node="lo", effect="NoExecute") == []
    # It still counts as not ready in its zone (nil Ready condition): 1 of 3 -> Normal.
    assert [e["state"] for e in events(sim, "ZoneState", zone="z")] == ["Initial", "Normal"]


def test_not_ready_then_unreachable_swaps_the_taint_without_moving_the_countdown() -> None:
    # Runtime down at 103: Ready=False posted at 110, not-ready:NoExecute at 110 (observed False
    # in the pass that first sees it). Kubelet stopped at 115 (last lease and status at 110):
    # Unknown at 155; that pass still observes False, so the swap comes at 160, immediately
    # (SwapNodeControllerTaint, not rate limited). The taint manager keeps the timer created at
    # 110 (createdAt + 300 < now + 300): deletion at 410.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1")],
            [at(103, "SetNodeNotReady", node="a-1"), at(115, "StopKubelet", node="a-1")],
            duration=500,
        )
    )
    assert taint_times(sim, "TaintAdded", "a-1", NOT_READY, "NoExecute") == [110.0]
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [155.0]
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [160.0]
    assert taint_times(sim, "TaintRemoved", "a-1", NOT_READY, "NoExecute") == [160.0]
    assert times(sim, "PodDeleted", pod="default/web") == [410.0]
    assert tm_messages(sim, "default/web") == [(410.0, "Marking for deletion Pod default/web")]


def test_unreachable_then_not_ready_swaps_at_the_first_pass_seeing_false() -> None:
    # Partitioned at 105: Unknown 145, unreachable:NoExecute 150. The runtime fails at 160 while
    # partitioned; the partition heals at 203 and the kubelet posts Ready=False at its 210 tick.
    # The 210 pass observes False on a node carrying unreachable:NoExecute -> swap at once.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1")],
            [
                at(105, "PartitionNode", node="a-1"),
                at(160, "SetNodeNotReady", node="a-1"),
                at(203, "HealNode", node="a-1"),
            ],
            duration=500,
        )
    )
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [150.0]
    assert taint_times(sim, "TaintAdded", "a-1", NOT_READY, "NoExecute") == [210.0]
    assert taint_times(sim, "TaintRemoved", "a-1", UNREACHABLE, "NoExecute") == [210.0]
    assert times(sim, "PodDeleted", pod="default/web") == [450.0]  # timer from 150 kept


def test_toleration_seconds_zero_or_negative_delete_at_taint_time() -> None:
    # getMinTolerationTime: any tolerationSeconds <= 0 -> 0 -> AddWork(now, now) fires at once.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("zero", "a-1", [tol(seconds=0)]), pod("neg", "a-1", [tol(seconds=-5)])],
            [at(105, "StopKubelet", node="a-1")],
            duration=200,
        )
    )
    assert times(sim, "PodDeleted", pod="default/zero", by="TaintManager") == [150.0]
    assert times(sim, "PodDeleted", pod="default/neg", by="TaintManager") == [150.0]


def test_toleration_changes_on_pod_update_never_move_a_scheduled_deletion() -> None:
    # processPodOnNode: with a timer created at 150, an update at 200 computes
    # trigger = 200 + min; createdAt + min < trigger holds for any min, so the timer (450) is
    # kept whether the new tolerationSeconds is shorter (60) or longer (600). Tolerating forever
    # (no tolerationSeconds) cancels it.
    def update(name: str, seconds: int | None) -> dict[str, Any]:
        return at(200, "Apply", object=pod(name, "a-1", [tol(seconds=seconds)]))

    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [
                pod("shorter", "a-1", [tol(seconds=300)]),
                pod("longer", "a-1", [tol(seconds=300)]),
                pod("forever", "a-1", [tol(seconds=300)]),
            ],
            [
                at(105, "StopKubelet", node="a-1"),
                update("shorter", 60),
                update("longer", 600),
                update("forever", None),
            ],
            duration=800,
        )
    )
    assert times(sim, "PodDeleted", pod="default/shorter") == [450.0]
    assert times(sim, "PodDeleted", pod="default/longer") == [450.0]
    assert events(sim, "PodDeleted", pod="default/forever") == []
    assert tm_messages(sim, "default/forever") == [
        (200.0, "Cancelling deletion of Pod default/forever")
    ]


def test_pod_recreated_on_a_tainted_node_gets_a_fresh_countdown() -> None:
    # Force-deleting the pod cancels its timer (PodUpdated(pod, nil)); the new pod with the same
    # name is processed on Add against the node's NoExecute taints: deletion at 200 + 300.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1")],
            [
                at(105, "StopKubelet", node="a-1"),
                at(200, "DeletePod", pod="default/web", force=True),
                at(200, "Apply", object=pod("web", "a-1")),
            ],
            duration=600,
        )
    )
    assert times(sim, "PodDeleted", pod="default/web", by="TaintManager") == [500.0]
    assert tm_messages(sim, "default/web") == [
        (200.0, "Cancelling deletion of Pod default/web"),
        (500.0, "Marking for deletion Pod default/web"),
    ]


def test_noexecute_taint_removed_by_hand_is_not_reapplied_in_1_18() -> None:
    # 1.18 markNodeForTainting is a plain Add: the node stays in the zone queue's set after it
    # was tainted, so while it stays Unknown the removed taint is never re-added (the 1.19
    # SetRemove fix, PR #89059, is not in 1.18). The pending deletion is cancelled.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1")],
            [
                at(105, "StopKubelet", node="a-1"),
                at(
                    200, "Untaint", node="a-1", taints=[{"key": UNREACHABLE, "effect": "NoExecute"}]
                ),
            ],
            duration=600,
        )
    )
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [150.0]
    assert taint_times(sim, "TaintRemoved", "a-1", UNREACHABLE, "NoExecute") == [200.0]
    assert events(sim, "PodDeleted", pod="default/web") == []
    assert tm_messages(sim, "default/web") == [(200.0, "Cancelling deletion of Pod default/web")]


def test_controller_manager_restart_reapplies_noexecute_taints_and_restarts_countdowns() -> None:
    # Restart at 203: the first monitor pass runs at once; every node is "added"
    # (RegisteredNode, markNodeAsReachable removes NoExecute taints -> timers cancelled), probe
    # = now for nodes with a Ready condition; a-1 is observed Unknown and re-tainted by the
    # tainting pass of the same instant (fresh bucket). Countdowns restart from 203.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1"), pod("quick", "a-1", [tol(seconds=100)])],
            [at(105, "StopKubelet", node="a-1"), at(203, "RestartControllerManager")],
            duration=600,
        )
    )
    assert times(sim, "K8sEvent", object="Node/a-1", reason="RegisteredNode") == [0.0, 203.0]
    assert taint_times(sim, "TaintRemoved", "a-1", UNREACHABLE, "NoExecute") == [203.0]
    assert taint_times(sim, "TaintAdded", "a-1", UNREACHABLE, "NoExecute") == [150.0, 203.0]
    assert times(sim, "PodDeleted", pod="default/quick") == [303.0]
    assert times(sim, "PodDeleted", pod="default/web") == [503.0]
    assert (203.0, "Cancelling deletion of Pod default/web") in tm_messages(sim, "default/web")


def test_controller_manager_restart_restarts_the_legacy_pod_eviction_timeout() -> None:
    # Legacy Unknown case compares with probeTimestamp, which a restarted controller sets to the
    # time it first sees the node (203): eviction at the first pass past 203 + 300 = 508.
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 3),
            [pod("web", "a-1")],
            [at(105, "StopKubelet", node="a-1"), at(203, "RestartControllerManager")],
            duration=600,
            cm={"enableTaintManager": False},
        )
    )
    assert times(sim, "PodDeleted", pod="default/web", by="NodeLifecycleController") == [508.0]


def test_legacy_exit_from_master_disruption_resets_probe_timestamps() -> None:
    # Single zone, both kubelets stop at 44: FullDisruption at 85 (all zones -> limiter 0,
    # cancelPodEviction everywhere). a-2 returns at 200: exit branch sets probe = 200 for every
    # node, so a-1's pods go at the first pass past 200 + 300 = 505 (not 40 + 300).
    sim = simulate(
        scenario(
            zone_nodes("a", "z", 2),
            [pod("w1", "a-1")],
            [
                at(44, "StopKubelet", node="a-1"),
                at(44, "StopKubelet", node="a-2"),
                at(200, "StartKubelet", node="a-2"),
            ],
            duration=560,
            cm={"enableTaintManager": False},
        )
    )
    assert [(e["t"], e["qps"]) for e in events(sim, "ZoneRate", zone="z")] == [
        (0, 0.1),
        (85_000, 0.0),
        (200_000, 0.1),
    ]
    assert times(sim, "PodDeleted", pod="default/w1") == [505.0]


def test_new_zone_during_master_disruption_leaves_the_old_zones_stopped() -> None:
    # All of zone a is down (FullDisruption, limiter 0, 'master disruption mode'). A node in a
    # new zone b joins at 200: zoneStates gains b=Initial, so allWasFullyDisrupted is false and
    # the exit branch is skipped; the normal branch only touches zones whose state changed
    # (b: Initial -> Normal). Zone a keeps its never-accepting limiter: nothing is ever tainted.
    sim = simulate(
        scenario(
            zone_nodes("a", "a", 2),
            [pod("w1", "a-1")],
            [
                at(44, "StopKubelet", node="a-1"),
                at(44, "StopKubelet", node="a-2"),
                at(200, "AddNode", node={"name": "b-1", "zone": "b"}),
            ],
            duration=700,
        )
    )
    assert [(e["t"], e["qps"]) for e in events(sim, "ZoneRate", zone="a")] == [
        (0, 0.1),
        (85_000, 0.0),
    ]
    assert [(e["t"], e["state"]) for e in events(sim, "ZoneState", zone="b")] == [
        (200_000, "Initial"),
        (200_000, "Normal"),
    ]
    assert events(sim, "TaintAdded", effect="NoExecute") == []
    assert events(sim, "PodDeleted") == []
