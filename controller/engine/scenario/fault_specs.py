"""Faults in a scenario (spec.faults[]): the fault types, their target and extra fields, and
the validation of each fault's fields."""

from __future__ import annotations

from typing import Any

from ..clock import SECOND
from ..config import (
    ApiServerConfig,
    ControllerManagerConfig,
    KubeletConfig,
    SchedulerConfig,
)
from ..objects import LABEL_REGION_BETA, LABEL_REGION_STABLE, LABEL_ZONE_BETA, LABEL_ZONE_STABLE
from ..validation import label_value, qualified_name
from ..versions import (
    Profile,
    check_fault_type,
    check_fields,
    default_config,
)
from .components import (
    API_FIELDS,
    CM_FIELDS,
    KUBELET_FIELDS,
    apply_fields,
    apply_scheduler,
)
from .fields import (
    INT32_MAX,
    _bool,
    _dur,
    _int,
    _list,
    _map,
    _no_unknown,
    _qty,
    _seconds,
    _show,
    _str,
    check_count,
)
from .model import (
    Fault,
    ScenarioError,
)
from .nodes import (
    _label_value,
    check_name,
    parse_node,
)

# -- faults -----------------------------------------------------------------------------------
# type -> (required target field(s), allowed extra fields)
FAULT_TYPES: dict[str, tuple[tuple[str, ...], set[str]]] = {
    "StopKubelet": (("node",), set()),
    "StartKubelet": (("node",), set()),
    "PartitionNode": (("node",), set()),
    "HealNode": (("node",), set()),
    "PowerOffNode": (("node",), set()),
    "PowerOnNode": (("node",), set()),
    "SetNodeNotReady": (("node",), {"message"}),
    "SetNodeReady": (("node",), set()),
    "SetNodeCondition": (("node",), {"condition", "status", "reason", "message"}),
    "ZoneOutage": (("zone",), set()),
    "ZoneRestore": (("zone",), set()),
    "Cordon": (("node",), set()),
    "Uncordon": (("node",), set()),
    "Taint": (("node",), {"key", "value", "effect", "taints"}),
    "Untaint": (("node",), {"key", "value", "effect", "taints"}),
    "Label": (("node",), {"labels"}),
    "AddNode": (("node",), {"kubeletMode"}),
    "DeleteNode": (("node",), set()),
    "Apply": (("object",), set()),
    "RestartControllerManager": ((), set()),
    "SetUsage": (("node|pod",), {"memory", "ephemeral-storage", "pids"}),
    "LeakMemory": (("pod",), {"rate", "until"}),
    "FillDisk": (("node|pod",), {"rate", "until"}),
    "StopLeak": (("node|pod",), set()),
    "DeletePod": (("pod",), {"gracePeriodSeconds", "force"}),
    "EvictPod": (("pod",), {"gracePeriodSeconds"}),
    "ScaleWorkload": (("workload",), {"replicas"}),
    "RunControllerPass": ((), {"pass"}),
    "RunEvictionSync": (("node",), set()),
    "ShutdownNode": (("node",), set()),
    "OutOfService": (("node",), set()),
    "RemoveOutOfService": (("node",), set()),
    "SetParameters": ((), {"controllerManager", "kubelet", "apiServer", "scheduler"}),
}
NODE_CONDITIONS_SETTABLE = {
    "Ready",
    "MemoryPressure",
    "DiskPressure",
    "PIDPressure",
    "NetworkUnavailable",
}


def parse_faults(
    data: Any,
    node_names: set[str],
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    path: str,
    profile: Profile,
    extra: Any = (),
) -> list[Fault]:
    """``extra``: (at_ms, fault without at, path) written elsewhere (a lesson step's faults),
    after the file's own at the same instant."""
    raws = _list(data, path)
    # In time order (same instant: file order), so that the nodes a fault may name are those
    # that exist by then: added by an earlier AddNode, not yet gone by a DeleteNode.
    times = [
        _dur(_map(raw, f"{path}[{i}]").get("at", 0), f"{path}[{i}].at")
        for i, raw in enumerate(raws)
    ]
    paths = [f"{path}[{i}]" for i in range(len(raws))]
    raws = list(raws)
    for at_ms, raw, where in extra:
        raws.append(raw)
        times.append(at_ms)
        paths.append(where)
    known = set(node_names)
    out: list[Fault] = []
    for i in sorted(range(len(raws)), key=lambda i: times[i]):
        fault = parse_fault(raws[i], known, kubelet, kubelet_raw, paths[i], profile)
        fault.at_ms = times[i]
        if fault.type == "AddNode":
            known.add(fault.args["node"]["name"])
        elif fault.type == "DeleteNode":
            known.discard(fault.args["node"])
        out.append(fault)
    return out


def parse_fault(
    raw: Any,
    known_nodes: set[str] | None,
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    p: str,
    profile: Profile,
) -> Fault:
    """Validate one fault (also used for live actions, with ``at`` = now) against the
    scenario's Kubernetes release."""
    d = _map(raw, p)
    ftype = d.get("type")
    if not isinstance(ftype, str) or ftype not in FAULT_TYPES:
        raise ScenarioError(
            f"{p}.type",
            f"unknown fault type {_show(ftype)} (known: {', '.join(sorted(FAULT_TYPES))})",
        )
    check_fault_type(profile, ftype, p)
    targets, extras = FAULT_TYPES[ftype]
    allowed = {"at", "type", "note"} | extras
    for t in targets:
        allowed |= set(t.split("|"))
    _no_unknown(d, allowed, p)
    at_ms = _dur(d.get("at", 0), f"{p}.at")
    args = {k: v for k, v in d.items() if k not in ("at", "type", "note")}
    for t in targets:
        options = t.split("|")
        present = [o for o in options if o in d]
        if not present:
            raise ScenarioError(f"{p}.{options[0]}", f"{ftype} needs {' or '.join(options)}")
        if len(present) > 1:
            raise ScenarioError(f"{p}", f"{ftype} takes {' or '.join(options)}, not both")
    if ftype == "AddNode":
        spec = parse_node(
            _map(d.get("node"), f"{p}.node"), kubelet, kubelet_raw, f"{p}.node", profile
        )
        mode = d.get("kubeletMode", "Running")
        if mode not in ("Running", "Stopped", "LeaseOnly"):
            raise ScenarioError(
                f"{p}.kubeletMode", f"must be Running, Stopped or LeaseOnly, got {_show(mode)}"
            )
        if known_nodes is not None and spec.name in known_nodes:
            raise ScenarioError(f"{p}.node.name", f'node "{spec.name}" already exists')
        spec.kubelet_mode = mode
        args = {"node": d["node"], "kubeletMode": mode, "spec": spec}
    elif "node" in d:
        name = _str(d["node"], f"{p}.node")
        if known_nodes is not None and name not in known_nodes:
            raise ScenarioError(f"{p}.node", f'unknown node "{name}"')
    if "pod" in d:
        pod = _str(d["pod"], f"{p}.pod")
        if pod.count("/") != 1:
            raise ScenarioError(f"{p}.pod", f'must be "namespace/name", got {_show(pod)}')
    if "zone" in d:
        _str(d["zone"], f"{p}.zone")
    for key in ("message", "reason"):
        if key in d:
            _str(d[key], f"{p}.{key}")
    if ftype == "SetNodeCondition":
        cond = d.get("condition")
        if (
            not isinstance(cond, str) or cond not in NODE_CONDITIONS_SETTABLE
        ):  # (a list: unhashable)
            raise ScenarioError(
                f"{p}.condition", f"must be one of {sorted(NODE_CONDITIONS_SETTABLE)}"
            )
        if not isinstance(d.get("status"), str) or d["status"] not in ("True", "False", "Unknown"):
            raise ScenarioError(f"{p}.status", 'must be "True", "False" or "Unknown"')
    if ftype in ("Taint", "Untaint"):
        taints = d.get("taints")
        if taints is None:
            taints = [{k: d[k] for k in ("key", "value", "effect") if k in d}]
        elif any(k in d for k in ("key", "value", "effect")):
            raise ScenarioError(p, "give key/value/effect or taints, not both")
        check_count(taints, f"{p}.taints", "taints")
        for j, t in enumerate(_list(taints, f"{p}.taints")):
            tp = f"{p}.taints[{j}]" if "taints" in d else p
            t = _map(t, tp)
            if "taints" in d:
                _no_unknown(t, {"key", "value", "effect"}, tp)
            check_name(qualified_name, _str(t.get("key"), f"{tp}.key"), f"{tp}.key")
            if t.get("value") is not None:
                check_name(label_value, _label_value(t["value"], f"{tp}.value"), f"{tp}.value")
            if ftype == "Taint" or "effect" in t:
                if t.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                    raise ScenarioError(
                        f"{tp}.effect", "must be NoSchedule, PreferNoSchedule or NoExecute"
                    )
        args["taints"] = taints
    if ftype == "Label":
        args["labels"] = parse_label_changes(d.get("labels"), f"{p}.labels")
    if ftype == "SetUsage":
        for k in ("memory", "ephemeral-storage", "pids"):
            if k in d:
                _qty(d[k], f"{p}.{k}")
    if ftype in ("LeakMemory", "FillDisk"):
        rate = _qty(d.get("rate"), f"{p}.rate")
        if rate <= 0:
            raise ScenarioError(f"{p}.rate", "must be positive")
        if "until" in d:
            _dur(d["until"], f"{p}.until")
    if ftype in ("DeletePod", "EvictPod"):
        # The handlers get the checked values, not the text ("5" is 5).
        if "gracePeriodSeconds" in d:
            args["gracePeriodSeconds"] = _seconds(
                d["gracePeriodSeconds"], f"{p}.gracePeriodSeconds"
            )
        if "force" in d:
            args["force"] = _bool(d["force"], f"{p}.force")
    if ftype == "ScaleWorkload":
        wl = _str(d.get("workload"), f"{p}.workload")
        if wl.count("/") not in (1, 2) or wl.split("/")[0] not in (
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
        ):
            raise ScenarioError(
                f"{p}.workload",
                f'must be "Kind/name" (Deployment, ReplicaSet, StatefulSet), got {_show(wl)}',
            )
        args["replicas"] = _int(d.get("replicas"), f"{p}.replicas", maximum=INT32_MAX)
    if ftype == "Apply":
        from ..manifests import validate_manifest

        validate_manifest(d.get("object"), f"{p}.object")
    if ftype == "SetParameters":
        check_fields(profile, d, p)
        apply_fields(
            default_config(ControllerManagerConfig, profile),
            d.get("controllerManager"),
            CM_FIELDS,
            f"{p}.controllerManager",
        )
        # Against the scenario's kubelet settings, which it changes (a node's own settings are
        # checked when it applies).
        apply_fields(kubelet, d.get("kubelet"), KUBELET_FIELDS, f"{p}.kubelet")
        apply_fields(ApiServerConfig(), d.get("apiServer"), API_FIELDS, f"{p}.apiServer")
        apply_scheduler(SchedulerConfig(), d.get("scheduler"), f"{p}.scheduler")
    if ftype == "RunControllerPass" and d.get("pass", "monitor") not in ("monitor", "tainting"):
        raise ScenarioError(f"{p}.pass", 'must be "monitor" or "tainting"')
    return Fault(at_ms=at_ms, type=ftype, args=args, path=p)


# The labels GetZoneKey reads: a node's zone. A change would move the node to another zone in
# the NodeLifecycleController's bookkeeping (its zone queues and states), the scheduler's node
# tree and the page's bands; the simulation does not port that move, so a Label fault refuses
# them (the node keeps the zone it was created in).
ZONE_LABELS = (LABEL_ZONE_STABLE, LABEL_ZONE_BETA, LABEL_REGION_STABLE, LABEL_REGION_BETA)


def parse_label_changes(raw: Any, path: str) -> dict[str, str | None]:
    """A Label fault's ``labels``: each key (IsQualifiedName) set to its value
    (IsValidLabelValue, at most 63 characters) or removed (null), as ``kubectl label node X
    key=value key2-`` asks; at most PER_OBJECT_CAPS' labels in one fault; not the zone's."""
    labels = _map(raw, path)
    if not labels:
        raise ScenarioError(path, "must name at least one label")
    check_count(labels, path, "labels")
    out: dict[str, str | None] = {}
    for key, value in labels.items():
        check_name(qualified_name, key, f"{path}.{key}")
        if key in ZONE_LABELS:
            raise ScenarioError(
                f"{path}.{key}",
                "the simulated cluster keeps a node in the zone it was created in: a zone or "
                "region label cannot change (add a node in the other zone instead)",
            )
        if value is None:
            out[key] = None
        else:
            out[key] = check_name(
                label_value, _label_value(value, f"{path}.{key}"), f"{path}.{key}"
            )
    return out


SECONDS = SECOND
