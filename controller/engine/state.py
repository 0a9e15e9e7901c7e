"""A JSON view of the whole cluster at one instant: ``--final-state`` and the live
runtime's snapshots use it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .nodelifecycle.rate_limited_queue import TokenBucket
from .nodelifecycle.zones import zone_display
from .objects import Container, Node, Pod, Toleration

if TYPE_CHECKING:
    from .simulation import Simulation


def node_state(sim: Simulation, node: Node) -> dict[str, Any]:
    now = sim.now_ms
    kubelet = sim.kubelets.get(node.name)
    health = sim.controller.health_of(node.name)
    lease = kubelet.lease_renew_ms(now) if kubelet is not None else None
    kstate = kubelet_state(kubelet) if kubelet is not None else None
    out = {
        "name": node.name,
        "uid": node.uid,
        "created": node.creation_ms / 1000,
        "zone": zone_display(node.zone_key),
        "labels": dict(sorted(node.labels.items())),
        "ready": node.ready_status(),
        "conditions": [c.to_dict() for c in node.conditions],
        "taints": [t.to_dict() for t in node.taints],
        "unschedulable": node.unschedulable,
        "excludedFromDisruption": node.excluded_from_disruption,
        "capacity": dict(node.resources.capacity),
        "allocatable": dict(node.resources.allocatable),
        "kubelet": kstate,
        "leaseRenewTime": lease / 1000 if lease is not None else None,
        "probeTimestamp": health.probe_ms / 1000 if health is not None else None,
        "readyTransitionTimestamp": health.ready_transition_ms / 1000
        if health is not None
        else None,
        # What happens next: a kubelet that does not reach the API leaves its node to the
        # monitor pass, which marks it Unknown at this time unless it is heard from again.
        "unknownAt": _unknown_at(sim, node, kstate, now),
    }
    # Version skew: a kubelet of another release than the control plane's (the page shows it;
    # left out otherwise, so a room of one release sends what it always sent).
    if kubelet is not None and kubelet.profile.version != sim.config.profile.version:
        out["kubeletVersion"] = kubelet.profile.version
    # A leak filling the node's disk (FillDisk): shown on its tile at once (left out otherwise).
    leaking = sim.leaks.running(("node", node.name), now) if sim.leaks.by_target else None
    if leaking:
        out["leaking"] = leaking
    return out


def _unknown_at(
    sim: Simulation, node: Node, kstate: dict[str, Any] | None, now: int
) -> float | None:
    if kstate is not None and kstate["state"] == "Running":
        return None
    at = sim.controller.predicted_unknown_ms(node, now)
    return at / 1000 if at is not None else None


def kubelet_state(kubelet: Any) -> dict[str, Any]:
    if not kubelet.powered:
        state = "PoweredOff"
    elif not kubelet.process_running:
        state = "Stopped"
    elif not kubelet.connected:
        state = "Partitioned"
    else:
        state = "Running"
    return {
        "state": state,
        "mode": kubelet.mode,
        "runtimeReady": kubelet.runtime_ready,
        "shuttingDown": kubelet.shutdown.shutting_down,
        "pressure": sorted(kubelet.pressure),
        "signals": kubelet.eviction.signals(),
    }


# pod_state's ``shared``: the tolerations' views of one pass over many pods (in which nothing
# changes the engine), by the identity of a pod's list (int keys) and of the Toleration objects
# in it (tuple keys). Each entry holds what its key names, so no id in a key is reused while it
# is kept.
SharedTolerations = dict[
    int | tuple[Any, ...], tuple[Sequence[Toleration] | tuple[Container, ...], list[dict[str, Any]]]
]


def tolerations_view(
    tolerations: list[Toleration], shared: SharedTolerations | None = None
) -> list[dict[str, Any]]:
    """Each toleration's ``to_dict``. With ``shared`` (kept over one pass, such as a new room's
    views), pods that hold the same list, or the same Toleration objects in another list,
    share one list of their dicts: Toleration is frozen, the DefaultTolerationSeconds plugin
    gives every pod it admits the same two, and a ReplicaSet's burst gives its pods one list
    (150,000 pods of a 5,000-node room: their dicts were a third of pod_state). Nothing
    changes a view in place."""
    if shared is None:
        return [t.to_dict() for t in tolerations]
    kept = shared.get(id(tolerations))
    if kept is None:
        objects = tuple(map(id, tolerations))
        kept = shared.get(objects)
        if kept is None:
            kept = shared[objects] = (tuple(tolerations), [t.to_dict() for t in tolerations])
        shared[id(tolerations)] = (tolerations, kept[1])
    return kept[1]


def containers_view(
    containers: tuple[Container, ...], shared: SharedTolerations | None = None
) -> list[dict[str, Any]]:
    """Each container's name and requests (what the Kubernetes API's pod shows; kubectl's
    READY column counts them). Pods of one template hold the same tuple and, with ``shared``,
    share one list of its dicts."""
    key = ("containers", id(containers))
    kept = shared.get(key) if shared is not None else None
    if kept is None or kept[0] is not containers:
        view = [{"name": c.name, "requests": dict(c.requests)} for c in containers]
        if shared is None:
            return view
        kept = shared[key] = (containers, view)
    return kept[1]


def pod_state(sim: Simulation, pod: Pod, shared: SharedTolerations | None = None) -> dict[str, Any]:
    """A pod's view (``shared``: see tolerations_view)."""
    work = sim.taint_manager.work.get(pod.key) if sim.taint_manager is not None else None
    pending = work.fire_ms if work is not None and work.handle is not None else None
    out = {
        "key": pod.key,
        "uid": pod.uid,
        "created": pod.creation_ms / 1000,
        "labels": pod.labels,
        "containers": containers_view(pod.containers, shared),
        "node": pod.node_name or None,
        "owner": pod.owner.ref() if pod.owner is not None else None,
        "phase": pod.phase,
        "reason": pod.reason,
        "message": pod.message,
        "ready": pod.ready,
        "started": pod.started,
        "terminating": pod.deletion_ms is not None,
        "deletionTimestamp": pod.deletion_ms / 1000 if pod.deletion_ms is not None else None,
        "qosClass": pod.qos_class(),
        "priority": pod.priority,
        "tolerations": tolerations_view(pod.tolerations, shared),
        "usage": dict(pod.usage),
        "taintEvictionAt": pending / 1000 if pending is not None else None,
        # When the taint manager's timer for it was set (the taint, or the pod's arrival).
        "taintEvictionSince": work.created_ms / 1000 if pending is not None else None,
        "unschedulableReason": pod.unschedulable_reason or None,
        # The DisruptionTarget condition's [reason, message] once a component wrote it.
        "disruptionTarget": list(pod.disruption_target) if pod.disruption_target else None,
    }
    # A leak into the pod (LeakMemory): shown on its node's tile at once (left out otherwise).
    leaking = sim.leaks.running(("pod", pod.key), sim.now_ms) if sim.leaks.by_target else None
    if leaking:
        out["leaking"] = leaking
    return out


def zone_states(sim: Simulation) -> list[dict[str, Any]]:
    ctrl = sim.controller
    out = []
    populated = {n.zone_key for n in sim.cluster.nodes.values()}
    for zone in sorted(ctrl.zone_queues):
        queue = ctrl.zone_queues[zone]
        limiter = queue.limiter
        bucket = isinstance(limiter, TokenBucket)
        waiting = [v.value for v in queue.values_in_order()]
        if zone not in populated and not waiting:
            # Its last node is gone. The controller keeps the zone's queue (and, depending on
            # Go's map order, its state) but there is nothing left to show.
            continue
        next_ms = limiter.next_accept_ms(sim.now_ms) if bucket and waiting else None
        out.append(
            {
                "zone": zone_display(zone),
                "state": str(ctrl.zone_states.get(zone, "Initial")),
                "qps": ctrl.effective_qps(zone),
                "queue": waiting,
                # The token bucket as of ``tokensAt`` (it refills at ``qps`` up to ``burst``).
                "tokens": limiter.available_tokens(sim.now_ms) if bucket else 0,
                "burst": limiter.burst if bucket else 0,
                "tokensAt": sim.now_ms / 1000,
                "nextTokenAt": next_ms / 1000 if next_ms is not None else None,
                # The node-controller's backlog of writes waiting for its client's tokens
                # (--kube-api-qps): how long its running monitor pass has waited so far, and
                # the events queued for its event sink (0 and 0 when there is none).
                "clientBacklog": ctrl.pass_waiting_ms(sim.now_ms) / 1000,
                "eventsQueued": len(ctrl.events.queue),
            }
        )
    return out


def parameters_view(sim: Simulation) -> dict[str, Any]:
    """The settings in force, in the scenario format's names (durations in seconds; the
    scheduler's section nested as the scenario's is): the page's heartbeat bars, toleration
    explanations and parameter panel read them."""
    cm = sim.config.controller_manager
    kubelet = sim.config.kubelet
    api = sim.config.api_server
    sched = sim.config.scheduler
    profile = sim.config.profile
    view = {
        "kubernetesVersion": profile.version,
        "kubernetesReleases": list(profile.releases),
        # Fault types this release cannot show: the page hides their buttons.
        "faultsRefused": sorted(profile.faults_refused),
        "controllerManager": {
            "nodeMonitorPeriod": cm.node_monitor_period_ms / 1000,
            "nodeMonitorGracePeriod": cm.node_monitor_grace_period_ms / 1000,
            "nodeStartupGracePeriod": cm.node_startup_grace_period_ms / 1000,
            "podEvictionTimeout": cm.pod_eviction_timeout_ms / 1000,
            "nodeEvictionRate": cm.node_eviction_rate,
            "secondaryNodeEvictionRate": cm.secondary_node_eviction_rate,
            "largeClusterSizeThreshold": cm.large_cluster_size_threshold,
            "unhealthyZoneThreshold": cm.unhealthy_zone_threshold,
            "enableTaintManager": cm.enable_taint_manager,
            "kubeAPIQPS": cm.kube_api_qps,
            "kubeAPIBurst": cm.kube_api_burst,
        },
        "kubelet": {
            "nodeLeaseDurationSeconds": kubelet.node_lease_duration_seconds,
            "nodeStatusUpdateFrequency": kubelet.node_status_update_frequency_ms / 1000,
            "evictionHard": kubelet.eviction_hard,
            "evictionSoft": kubelet.eviction_soft,
            "evictionPressureTransitionPeriod": kubelet.eviction_pressure_transition_period_ms
            / 1000,
            "shutdownGracePeriod": kubelet.shutdown_grace_period_ms / 1000,
            "shutdownGracePeriodCriticalPods": kubelet.shutdown_grace_period_critical_pods_ms
            / 1000,
        },
        "apiServer": {
            "defaultNotReadyTolerationSeconds": api.default_not_ready_toleration_seconds,
            "defaultUnreachableTolerationSeconds": api.default_unreachable_toleration_seconds,
        },
        # kube-scheduler's KubeSchedulerConfiguration, nested as spec.scheduler is: its
        # client's rate limit (clientConnection.qps / burst, defaulted 50 / 100).
        "scheduler": {
            "clientConnection": {"qps": sched.client_qps, "burst": sched.client_burst},
        },
    }
    # A setting the release does not have is not shown (podEvictionTimeout after 1.27).
    for dotted in profile.fields_refused:
        section, key = dotted.split(".", 1)
        group = view.get(section)
        if isinstance(group, dict):
            group.pop(key, None)
    return view


def cluster_state(sim: Simulation) -> dict[str, Any]:
    shared: SharedTolerations = {}
    return {
        "t": sim.now_ms / 1000,
        "nodes": [node_state(sim, n) for n in sim.sorted_nodes()],
        "pods": [pod_state(sim, sim.cluster.pods[k], shared) for k in sorted(sim.cluster.pods)],
        "zones": zone_states(sim),
        "metrics": cluster_metrics(sim),
    }


def cluster_metrics(sim: Simulation) -> dict[str, Any]:
    """Availability figures the page charts: pods by state, nodes by Ready per zone, and
    desired/ready replicas per workload."""
    pods = {"Running": 0, "Pending": 0, "Terminating": 0}
    for pod in sim.cluster.pods.values():
        if pod.deletion_ms is not None:
            pods["Terminating"] += 1
        elif pod.phase in pods:
            pods[pod.phase] += 1
    zones: dict[str, dict[str, int]] = {}
    for node in sim.sorted_nodes():
        z = zones.setdefault(zone_display(node.zone_key), {"Ready": 0, "NotReady": 0, "Unknown": 0})
        status = node.ready_status()
        z["Ready" if status == "True" else "NotReady" if status == "False" else "Unknown"] += 1
    return {
        "t": sim.now_ms / 1000,
        "pods": pods,
        "zones": zones,
        "workloads": sim.workloads.metrics(),
    }
