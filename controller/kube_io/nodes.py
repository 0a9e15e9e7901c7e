"""Nodes of kubectl output -> the scenario's nodes (capacity, labels, taints not set by the
control plane), the control plane's release (kube-apiserver's version, else the newest
kubelet's) and each node's kubelet release where it differs (``kubeletVersion``)."""

from __future__ import annotations

import re
from typing import Any

from ..engine.quantity import QuantityError, milli_value, quantity_to_int
from ..engine.scenario import (
    RESOURCE_NAMES,
    ScenarioError,
    _map,
    _show,
    _str,
    check_labels,
    check_name,
)
from ..engine.validation import dns1123_subdomain, label_value, qualified_name
from ..engine.versions import kubelet_profile_for, profile_for
from .report import Report, note

# Taints the control plane sets from a node's conditions or spec: the simulation sets its own.
CONTROLLER_TAINTS = {
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.kubernetes.io/out-of-service",
}

# -- releases: the control plane's and each kubelet's, exactly --------------------------------
_VERSION = re.compile(r"^v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?$")
_APISERVER_IMAGE = re.compile(r"(?:^|/)kube-apiserver(?:-[a-z0-9]+)?:(v?1\.\d+[^@\s]*)")


def _release(raw: Any, path: str) -> str:
    m = _VERSION.match(str(raw).strip())
    if not m:
        raise ScenarioError(path, f"{_show(raw)} is not a Kubernetes release such as v1.34.1")
    return f"1.{int(m.group(1))}"


def _kubelet_versions(nodes: list[tuple[str, dict[str, Any]]]) -> dict[str, tuple[str, str, str]]:
    """node name -> (release, as written, path) of each node that says its kubeletVersion."""
    out = {}
    for path, item in nodes:
        status = item.get("status")
        info = (status.get("nodeInfo") or {}) if isinstance(status, dict) else {}
        kv = info.get("kubeletVersion") if isinstance(info, dict) else None
        if kv:
            where = f"{path}.status.nodeInfo.kubeletVersion"
            out[item["metadata"]["name"]] = (_release(kv, where), str(kv), where)
    return out


def apiserver_version(
    pods: list[tuple[str, dict[str, Any]]], server_version: tuple[str, str] | None
) -> tuple[str, str] | None:
    """(version as written, path) of kube-apiserver: ``kubectl version``'s serverVersion when
    the text has it, else the image tag of a kube-apiserver static pod (kube-system,
    ``component: kube-apiserver``) when it names a release; None when neither does (a managed
    control plane shows no kube-apiserver pod)."""
    if server_version is not None:
        return server_version
    for path, item in pods:
        meta = item.get("metadata") or {}
        labels = meta.get("labels") or {}
        if meta.get("namespace") != "kube-system" or not (
            labels.get("component") == "kube-apiserver"
            or str(meta.get("name", "")).startswith("kube-apiserver")
        ):
            continue
        for i, c in enumerate((item.get("spec") or {}).get("containers") or []):
            m = _APISERVER_IMAGE.search(str((c or {}).get("image") or ""))
            if m and _VERSION.match(m.group(1)):
                return m.group(1), f"{path}.spec.containers[{i}].image"
    return None


def releases(
    nodes: list[tuple[str, dict[str, Any]]],
    pods: list[tuple[str, dict[str, Any]]],
    server_version: tuple[str, str] | None = None,
) -> tuple[str | None, dict[str, str], Report]:
    """The control plane's release (kube-apiserver's version when the text has it, else the
    newest kubelet's) and each node's kubelet release where it differs, each exactly (never
    a neighbour's): refused with the path when a release is not simulated or a kubelet is
    outside the version skew policy."""
    notes: Report = []
    kubelets = _kubelet_versions(nodes)
    api = apiserver_version(pods, server_version)
    if api is not None:
        control_plane = profile_for(api[0], api[1]).version
    elif kubelets:
        newest = max(kubelets.values(), key=lambda k: int(k[0].split(".")[1]))
        control_plane = profile_for(newest[1], newest[2]).version
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": "no kube-apiserver version in the List: the control plane is taken to "
                f"run {control_plane}, the newest kubelet's release (add `kubectl version -o "
                "yaml` to the text to give it)",
            }
        )
    else:
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": "no status.nodeInfo.kubeletVersion and no kube-apiserver version: the "
                "scenario says no release (read as 1.18)",
            }
        )
        return None, {}, notes
    cp = profile_for(control_plane)
    own: dict[str, str] = {}
    for name, (release, written, where) in kubelets.items():
        kubelet_profile_for(written, cp, where)  # the skew policy, with the item's path
        if release != control_plane:
            own[name] = release
    return control_plane, own, notes


# -- nodes --------------------------------------------------------------------------------------
def _qty_at(v: Any, path: str, milli: bool) -> int:
    try:
        return milli_value(v) if milli else quantity_to_int(v)
    except (QuantityError, ValueError, TypeError):
        raise ScenarioError(path, f"{_show(v)} is not a Kubernetes quantity") from None


def convert_node(
    item: dict[str, Any], path: str, report: Report
) -> tuple[dict[str, Any], list[Any]]:
    meta = item["metadata"]
    name = meta["name"]
    if dns1123_subdomain(name):
        raise ScenarioError(f"{path}.metadata.name", f"{_show(name)}: {dns1123_subdomain(name)}")
    labels = check_labels(meta.get("labels"), f"{path}.metadata.labels")
    spec = _map(item.get("spec"), f"{path}.spec")
    status = _map(item.get("status"), f"{path}.status")
    capacity_raw = _map(status.get("capacity"), f"{path}.status.capacity")
    capacity: dict[str, str] = {}
    ignored = []
    for k, v in capacity_raw.items():
        n = _qty_at(v, f"{path}.status.capacity.{k}", milli=(k == "cpu"))
        if k in RESOURCE_NAMES:
            capacity[k] = str(v)
        elif n:
            ignored.append(f"{k}: {v}")
    if ignored:
        note(report, "Node", name, f"capacity not simulated: {', '.join(sorted(ignored))}")
    alloc_raw = _map(status.get("allocatable"), f"{path}.status.allocatable")
    for k, v in alloc_raw.items():
        _qty_at(v, f"{path}.status.allocatable.{k}", milli=(k == "cpu"))
    differs = [
        f"{k} {alloc_raw[k]} of {capacity[k]}"
        for k in ("cpu", "memory", "pods")
        if k in alloc_raw
        and k in capacity
        and _qty_at(alloc_raw[k], "", k == "cpu") != _qty_at(capacity[k], "", k == "cpu")
    ]
    if differs:
        note(
            report,
            "Node",
            name,
            f"allocatable {', '.join(differs)}: kubeReserved and systemReserved are not "
            "simulated; the simulated kubelet keeps only evictionHard back from capacity",
        )
    entry: dict[str, Any] = {"name": name, "labels": labels}
    if capacity:
        entry["capacity"] = capacity
    if spec.get("unschedulable") is True:
        entry["unschedulable"] = True
    taints = []
    dropped = []
    for j, t in enumerate(spec.get("taints") or []):
        tp = f"{path}.spec.taints[{j}]"
        t = _map(t, tp)
        key = check_name(qualified_name, _str(t.get("key"), f"{tp}.key"), f"{tp}.key")
        effect = t.get("effect")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ScenarioError(f"{tp}.effect", "must be NoSchedule, PreferNoSchedule or NoExecute")
        if key in CONTROLLER_TAINTS:
            dropped.append(f"{key}:{effect}")
            continue
        out = {"key": key, "effect": effect}
        if t.get("value") not in (None, ""):
            out["value"] = check_name(label_value, str(t["value"]), f"{tp}.value")
        taints.append(out)
    if dropped:
        note(
            report,
            "Node",
            name,
            f"taints {', '.join(dropped)} dropped: the control plane sets them from the node's "
            "conditions, and the simulation sets its own",
        )
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True":
            note(
                report,
                "Node",
                name,
                f"was Ready={c.get('status')} when exported; imported as a healthy node "
                "(add a fault to fail it)",
            )
    return entry, taints
