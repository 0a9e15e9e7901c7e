"""Fault injection and user actions (design.md, "Fault types"), applied in the FAULT
phase of their instant, in file order."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .objects import (
    NO_EXECUTE,
    OUT_OF_SERVICE_VALUE,
    TAINT_OUT_OF_SERVICE,
    NodeCondition,
    Taint,
)
from .quantity import parse_duration_ms, quantity_to_int
from .scenario import PER_OBJECT_CAPS, Fault, ScenarioError

if TYPE_CHECKING:
    from .simulation import Simulation


def fault_event(fault: Fault) -> dict[str, Any]:
    """The ``Fault`` timeline event: the fault as written (its type under ``fault``)."""
    out: dict[str, Any] = {"fault": fault.type}
    for k, v in fault.args.items():
        if k == "spec":
            continue
        out[k] = v
    return out


class FaultRefusal(ScenarioError):
    """A valid fault that the cluster's state at its instant refuses (a node at its cap of
    taints): a scenario's own is refused in the timeline and the run goes on."""


def apply_fault(sim: Simulation, fault: Fault, now: int) -> None:
    try:
        check_fault(sim, fault)
        event = fault_event(fault)
        if fault.type == "SetParameters":
            event["changes"] = parameter_changes(sim, fault.args)
        sim.timeline.emit(now, "Fault", **event)
        HANDLERS[fault.type](sim, fault.args, now)
    except ScenarioError as exc:  # name the fault: "spec.faults[3].node: unknown node"
        if not fault.path or exc.path.startswith(fault.path):
            raise
        raise type(exc)(f"{fault.path}.{exc.path}" if exc.path else fault.path, exc.why) from None


KUBELET_FAULTS = frozenset(
    {
        "StopKubelet",
        "StartKubelet",
        "PartitionNode",
        "HealNode",
        "PowerOffNode",
        "PowerOnNode",
        "SetNodeNotReady",
        "SetNodeReady",
        "RunEvictionSync",
        "ShutdownNode",
    }
)


def check_fault(sim: Simulation, fault: Fault) -> None:
    """The lookups a fault's handler makes, done before it emits or changes anything: a fault
    whose node, pod, zone or workload is gone at its instant fails whole and leaves no trace
    (a live room refuses the action; two operators may have deleted and stopped one node)."""
    a, ftype = fault.args, fault.type
    if ftype == "AddNode":
        if a["spec"].name in sim.cluster.nodes:  # (a file adding it twice is refused at load)
            raise FaultRefusal("node.name", f'node "{a["spec"].name}" already exists')
    elif ftype in ("ZoneOutage", "ZoneRestore"):
        _zone_kubelets(sim, a["zone"])
    elif ftype == "ScaleWorkload":
        sim.workloads.check_scale(a["workload"], int(a["replicas"]))
    elif ftype == "StopLeak":
        return
    elif ftype == "SetParameters":
        _updated_parameters(sim, a)
    elif ftype == "Apply":
        sim.check_apply(a["object"], "object")
    elif ftype == "Taint":
        _taint_room(_node(sim, a), a["taints"])
    elif ftype == "Label":
        _label_room(_node(sim, a), a["labels"])
    elif "pod" in a:
        _pod(sim, a["pod"])
    elif "node" in a:
        if ftype in KUBELET_FAULTS:
            _kubelet(sim, a)
        else:
            _node(sim, a)


def _taint_room(node: Any, taints: list[dict[str, Any]]) -> None:
    """A Taint fault may not bring its node past PER_OBJECT_CAPS' taints per node (each fault's
    list is capped at validation; this caps what many of them add up to on one node)."""
    most, what = PER_OBJECT_CAPS["taints"]
    have = {(t.key, t.effect) for t in node.taints}
    after = len(have | {(t["key"], t.get("effect", "")) for t in taints})
    if after > most and after > len(have):
        raise FaultRefusal(
            "taints", f"node {node.name} would carry {after} taints, at most {most} {what}"
        )


def _label_room(node: Any, labels: dict[str, str | None]) -> None:
    """A Label fault may not bring its node past PER_OBJECT_CAPS' labels per object."""
    most, what = PER_OBJECT_CAPS["labels"]
    after = len(
        {k for k in node.labels if labels.get(k, "") is not None}
        | {k for k, v in labels.items() if v is not None}
    )
    if after > most and after > len(node.labels):
        raise FaultRefusal(
            "labels", f"node {node.name} would carry {after} labels, at most {most} {what}"
        )


def _kubelet(sim: Simulation, args: dict[str, Any]) -> Any:
    name = args["node"]
    kubelet = sim.kubelets.get(name)
    if kubelet is None:
        raise ScenarioError("node", f'unknown node "{name}"')
    return kubelet


def _node(sim: Simulation, args: dict[str, Any]) -> Any:
    name = args["node"]
    node = sim.cluster.nodes.get(name)
    if node is None:
        raise ScenarioError("node", f'unknown node "{name}"')
    return node


def _zone_kubelets(sim: Simulation, zone: str) -> list[Any]:
    from .nodelifecycle.zones import zone_display

    out = [
        sim.kubelets[n.name]
        for n in sim.sorted_nodes()
        if (zone_display(n.zone_key) == zone or n.labels.get("topology.kubernetes.io/zone") == zone)
        and n.name in sim.kubelets
    ]
    if not out:
        raise ScenarioError("zone", f'no node is in zone "{zone}"')
    return out


def stop_kubelet(sim: Simulation, a: dict[str, Any], now: int) -> None:
    k = _kubelet(sim, a)
    if k.process_running:
        k.stop(now)


def start_kubelet(sim: Simulation, a: dict[str, Any], now: int) -> None:
    k = _kubelet(sim, a)
    if not k.process_running:
        k.start(now)


def partition(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _kubelet(sim, a).partition(now)


def heal(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _kubelet(sim, a).heal(now)


def power_off(sim: Simulation, a: dict[str, Any], now: int) -> None:
    k = _kubelet(sim, a)
    if k.powered:
        k.power_off(now)


def power_on(sim: Simulation, a: dict[str, Any], now: int) -> None:
    k = _kubelet(sim, a)
    if not k.powered:
        k.power_on(now)


def shutdown_node(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """The node's systemd-logind announces a shutdown (``systemctl poweroff``): the kubelet's
    node shutdown manager delays it by its grace periods, or the machine powers off at once."""
    k = _kubelet(sim, a)
    if k.powered:
        k.shutdown.prepare_for_shutdown(now)


def set_not_ready(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _kubelet(sim, a).set_runtime_ready(False, now, a.get("message", ""))


def set_ready(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _kubelet(sim, a).set_runtime_ready(True, now)


def set_condition(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """Another component (e.g. the route controller) writes a node condition."""
    node = _node(sim, a)
    ctype, status = a["condition"], a["status"]
    conditions = [c.copy() for c in node.conditions]
    existing = next((c for c in conditions if c.type == ctype), None)
    reason = a.get("reason", "SetByScenario")
    message = a.get("message", f"{ctype} set to {status} by a fault")
    if existing is None:
        conditions.append(NodeCondition(ctype, status, reason, message, now, now))
    else:
        if existing.status != status:
            existing.last_transition_ms = now
        existing.status, existing.reason, existing.message = status, reason, message
        existing.last_heartbeat_ms = now
    sim.cluster.set_node_conditions(node, conditions, now)


def zone_outage(sim: Simulation, a: dict[str, Any], now: int) -> None:
    for k in _zone_kubelets(sim, a["zone"]):
        k.partition(now)


def zone_restore(sim: Simulation, a: dict[str, Any], now: int) -> None:
    for k in _zone_kubelets(sim, a["zone"]):
        k.heal(now)


def cordon(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.cluster.set_unschedulable(_node(sim, a), True, now)


def uncordon(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.cluster.set_unschedulable(_node(sim, a), False, now)


def _taints(a: dict[str, Any]) -> list[Taint]:
    return [
        Taint(t["key"], t.get("effect", ""), str(t.get("value", "") or "")) for t in a["taints"]
    ]


def taint(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.cluster.swap_node_taints(_node(sim, a), _taints(a), [], now)


def untaint(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """``kubectl taint node key[:effect]-``: without an effect every taint with the key goes."""
    node = _node(sim, a)
    remove: list[Taint] = []
    for t in _taints(a):
        remove.extend(
            x for x in node.taints if x.key == t.key and (not t.effect or x.effect == t.effect)
        )
    sim.cluster.swap_node_taints(node, [], remove, now)


def label(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """``kubectl label node X key=value key2-``: an update of the node's metadata.labels."""
    sim.cluster.set_node_labels(_node(sim, a), a["labels"], now)


def out_of_service(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """``kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute``:
    the operator's mark for a node that is shut down and will not come back by itself
    (non-graceful node shutdown). From 1.28 (Profile.pod_gc_out_of_service) PodGC's
    gcTerminating force-deletes the node's Terminating pods at its next pass while the node is
    not Ready; being NoExecute, the taint also makes the taint manager delete every pod that
    does not tolerate it, at once. In 1.18 it is only a NoExecute taint: the taint manager
    deletes the pods, PodGC does nothing, so they stay Terminating."""
    taint = Taint(TAINT_OUT_OF_SERVICE, NO_EXECUTE, OUT_OF_SERVICE_VALUE)
    sim.cluster.swap_node_taints(_node(sim, a), [taint], [], now)


def remove_out_of_service(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """``kubectl taint nodes <node> node.kubernetes.io/out-of-service-``: every taint with the
    key goes (what the operator does once the node is recovered)."""
    node = _node(sim, a)
    remove = [t for t in node.taints if t.key == TAINT_OUT_OF_SERVICE]
    sim.cluster.swap_node_taints(node, [], remove, now)


def add_node(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.create_node(a["spec"], now, start_kubelet=True)  # check_fault refused a taken name


def delete_node(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _node(sim, a)
    sim.cluster.delete_node(a["node"], now)


def apply_object(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.apply_manifest(a["object"], now)


def restart_cm(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.restart_controller_manager(now)


def _pod(sim: Simulation, key: str) -> Any:
    pod = sim.cluster.pods.get(key)
    if pod is None:
        raise ScenarioError("pod", f'unknown pod "{key}"')
    return pod


def set_usage(sim: Simulation, a: dict[str, Any], now: int) -> None:
    values = {k: quantity_to_int(a[k]) for k in ("memory", "ephemeral-storage", "pids") if k in a}
    if "pod" in a:
        pod = _pod(sim, a["pod"])
        pod.usage = {**pod.usage, **values}  # replaced whole: shared with its template's pods
        sim.on_usage_changed(pod.node_name, now)
    else:
        node = _node(sim, a)
        node.resources.system_usage.update(values)
        sim.on_usage_changed(node.name, now)


def leak(resource: str) -> Any:
    def handler(sim: Simulation, a: dict[str, Any], now: int) -> None:
        rate = quantity_to_int(a["rate"])
        until = parse_duration_ms(a["until"]) if "until" in a else None
        if "pod" in a:
            pod = _pod(sim, a["pod"])
            sim.leaks.start(("pod", pod.key), resource, rate, now, until)
        else:
            node = _node(sim, a)
            sim.leaks.start(("node", node.name), resource, rate, now, until)

    return handler


def stop_leak(sim: Simulation, a: dict[str, Any], now: int) -> None:
    target = ("pod", a["pod"]) if "pod" in a else ("node", a["node"])
    sim.leaks.stop(target, now)


def delete_pod(sim: Simulation, a: dict[str, Any], now: int) -> None:
    pod = _pod(sim, a["pod"])
    force = bool(a.get("force", False))
    grace = 0 if force else a.get("gracePeriodSeconds")
    sim.cluster.delete_pod(pod, now, "User", "Deleted", grace_s=grace)
    if force and pod.key in sim.cluster.pods:
        sim.cluster.remove_pod(pod, now)


def evict_pod(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """A policy/v1 Eviction of the pod (``kubectl drain``): port of EvictionREST.Create
    (pkg/registry/core/pod/storage/eviction.go) without PodDisruptionBudgets, which the
    simulation has none of. A pod already terminating is left as it is; otherwise, with
    PodDisruptionConditions (1.26+), addConditionAndDeletePod writes DisruptionTarget
    (EvictionByEvictionAPI, "Eviction API: evicting") and then DELETEs the pod with the
    eviction's grace period (the pod's own by default)."""
    pod = _pod(sim, a["pod"])
    if pod.deletion_ms is not None:
        return
    sim.cluster.set_disruption_target(pod, now, "EvictionByEvictionAPI", "Eviction API: evicting")
    sim.cluster.delete_pod(pod, now, "User", "EvictionByEvictionAPI", a.get("gracePeriodSeconds"))


def scale(sim: Simulation, a: dict[str, Any], now: int) -> None:
    sim.workloads.scale(a["workload"], int(a["replicas"]), now)


def run_pass(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """Step one controller pass by hand (the live runtime's "run monitor pass now")."""
    if a.get("pass", "monitor") == "monitor":
        sim.controller.monitor_node_health(now)
    else:
        sim.controller._pass()


def run_eviction_sync(sim: Simulation, a: dict[str, Any], now: int) -> None:
    _kubelet(sim, a).eviction_sync_now(now)


def _updated_parameters(sim: Simulation, a: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Every config a SetParameters changes, computed before any is applied (a refusal
    changes nothing): (target, updated) pairs, and (kubelet, updated config) pairs."""
    from .scenario import API_FIELDS, CM_FIELDS, KUBELET_FIELDS, apply_fields, apply_scheduler

    configs = [
        (target, apply_fields(target, a[key], table, key))
        for key, table, target in (
            ("controllerManager", CM_FIELDS, sim.config.controller_manager),
            ("apiServer", API_FIELDS, sim.config.api_server),
        )
        if key in a
    ]
    if "scheduler" in a:
        configs.append(
            (
                sim.config.scheduler,
                apply_scheduler(sim.config.scheduler, a["scheduler"], "scheduler"),
            )
        )
    kubelets = []
    if "kubelet" in a:
        for kubelet in sim.kubelets.values():
            # Each node's kubelet, with its own settings, must take the change.
            updated = apply_fields(kubelet.cfg, a["kubelet"], KUBELET_FIELDS, "kubelet")
            kubelets.append((kubelet, updated))
    return configs, kubelets


def parameter_changes(sim: Simulation, a: dict[str, Any]) -> list[str]:
    """What a SetParameters changes, as ``section.field: old -> new`` (the scenario format's
    spelling: durations as Go prints them), by field name within each section (not in the order
    given: PostgreSQL's jsonb does not keep the order of a stored action's keys, and a replay must
    write the same row); a field set to the value it already has is left out. Kubelet fields as
    the scenario's kubelet settings have them."""
    from .scenario import (
        API_FIELDS,
        CM_FIELDS,
        KUBELET_FIELDS,
        SCHEDULER_CLIENT_FIELDS,
        apply_fields,
        apply_scheduler,
    )

    out = []
    for key, table, target in (
        ("controllerManager", CM_FIELDS, sim.config.controller_manager),
        ("kubelet", KUBELET_FIELDS, sim.config.kubelet),
        ("apiServer", API_FIELDS, sim.config.api_server),
    ):
        if not isinstance(a.get(key), dict):
            continue
        updated = apply_fields(target, a[key], table, key)
        for field_name in sorted(a[key]):
            attr, kind = table[field_name]
            old, new = getattr(target, attr), getattr(updated, attr)
            if old != new:
                out.append(f"{key}.{field_name}: {_shown(old, kind)} -> {_shown(new, kind)}")
    sched = a.get("scheduler")
    client = sched.get("clientConnection") if isinstance(sched, dict) else None
    if isinstance(client, dict):
        target = sim.config.scheduler
        updated = apply_scheduler(target, a["scheduler"], "scheduler")
        for field_name in sorted(client):
            attr, kind = SCHEDULER_CLIENT_FIELDS[field_name]
            old, new = getattr(target, attr), getattr(updated, attr)
            if old != new:
                out.append(
                    f"scheduler.clientConnection.{field_name}: "
                    f"{_shown(old, kind)} -> {_shown(new, kind)}"
                )
    return out


def _shown(value: Any, kind: str) -> str:
    # Every duration as Go prints it: the status period (nodeStatusUpdateFrequency, a duration
    # with the playground's floor) too, which read "10000 -> 5000" (issue #38).
    if (kind.startswith("duration") or kind == "status period") and isinstance(value, int):
        return f"{value / 1000:g}s"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"{value:g}" if isinstance(value, float) else str(value)


def set_parameters(sim: Simulation, a: dict[str, Any], now: int) -> None:
    """An operator changes component settings while the cluster runs (validated like the
    scenario's, all or nothing). Controller-manager and API-server settings take effect at
    once (a changed --kube-api-qps/-burst or scheduler clientConnection: each component's next
    request goes through a new client with a full bucket, as after a restart); kubelet settings
    rebuild every kubelet's eviction thresholds."""
    from dataclasses import fields

    configs, kubelets = _updated_parameters(sim, a)
    for target, updated in configs:
        for f in fields(target):
            setattr(target, f.name, getattr(updated, f.name))
    for kubelet, updated in kubelets:
        kubelet.reconfigure(updated, now)


HANDLERS = {
    "SetParameters": set_parameters,
    "StopKubelet": stop_kubelet,
    "StartKubelet": start_kubelet,
    "PartitionNode": partition,
    "HealNode": heal,
    "PowerOffNode": power_off,
    "PowerOnNode": power_on,
    "ShutdownNode": shutdown_node,
    "SetNodeNotReady": set_not_ready,
    "SetNodeReady": set_ready,
    "SetNodeCondition": set_condition,
    "ZoneOutage": zone_outage,
    "ZoneRestore": zone_restore,
    "Cordon": cordon,
    "Uncordon": uncordon,
    "Taint": taint,
    "Untaint": untaint,
    "Label": label,
    "OutOfService": out_of_service,
    "RemoveOutOfService": remove_out_of_service,
    "AddNode": add_node,
    "DeleteNode": delete_node,
    "Apply": apply_object,
    "RestartControllerManager": restart_cm,
    "SetUsage": set_usage,
    "LeakMemory": leak("memory"),
    "FillDisk": leak("ephemeral-storage"),
    "StopLeak": stop_leak,
    "DeletePod": delete_pod,
    "EvictPod": evict_pod,
    "ScaleWorkload": scale,
    "RunControllerPass": run_pass,
    "RunEvictionSync": run_eviction_sync,
}
