"""Nodes of kubectl output -> the scenario's nodes (capacity, labels, taints not set by the
control plane) and the simulated release, from the kubelets' versions."""

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
from ..engine.versions import PROFILES
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

# -- version ------------------------------------------------------------------------------------
_KUBELET_VERSION = re.compile(r"^v?1\.(\d+)(?:\.\d+)?")


def nearest_profile(minor: int) -> tuple[str, bool]:
    """The simulated release nearest to ``1.<minor>`` and whether it was mapped (not one of
    the releases that profile stands for); on a tie the newer profile."""
    candidates = [
        (abs(int(release.split(".")[1]) - minor), -int(release.split(".")[1]), release)
        for release in PROFILES
    ]
    best = min(candidates)
    return best[2], best[0] != 0


def kubernetes_version(nodes: list[tuple[str, dict[str, Any]]]) -> tuple[str | None, Report]:
    notes: Report = []
    minors: dict[int, list[str]] = {}
    raw: dict[int, str] = {}
    for path, item in nodes:
        info = (
            ((item.get("status") or {}).get("nodeInfo") or {})
            if isinstance(item.get("status"), dict)
            else {}
        )
        kv = info.get("kubeletVersion") if isinstance(info, dict) else None
        if not kv:
            continue
        m = _KUBELET_VERSION.match(str(kv))
        if not m:
            raise ScenarioError(
                f"{path}.status.nodeInfo.kubeletVersion",
                f"{_show(kv)} is not a Kubernetes release such as v1.34.1",
            )
        minor = int(m.group(1))
        minors.setdefault(minor, []).append(item["metadata"]["name"])
        raw.setdefault(minor, str(kv))
    if not minors:
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": "no status.nodeInfo.kubeletVersion: the scenario says no release "
                "(read as 1.18)",
            }
        )
        return None, notes
    # The release most nodes run (kubelets may lag the control plane by a few releases); on a
    # tie the newest.
    minor = max(minors, key=lambda m: (len(minors[m]), m))
    if len(minors) > 1:
        others = ", ".join(f"1.{m} on {len(v)}" for m, v in sorted(minors.items()))
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": f"nodes run several kubelet releases ({others}): simulated as 1.{minor}",
            }
        )
    version, mapped = nearest_profile(minor)
    profile = PROFILES[version]
    if mapped:
        why = (
            f"kubeletVersion {raw[minor]} (1.{minor}) is not simulated: mapped to the nearest "
            f"profile, Kubernetes {version}"
        )
    elif f"1.{minor}" != version:
        why = (
            f"kubeletVersion {raw[minor]}: simulated by the Kubernetes {version} profile "
            f"(1.{minor} behaves identically: {', '.join(profile.releases)})"
        )
    else:
        why = ""
    if why:
        notes.append({"kind": "Node", "name": "(all)", "why": why})
    return version, notes


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
