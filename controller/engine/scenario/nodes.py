"""The nodes of a scenario (spec.nodes[]): fields, defaults, unique names, labels and names
checked as the API server checks them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..config import (
    KubeletConfig,
)
from ..validation import dns1123_subdomain, label_value, qualified_name
from ..versions import (
    Profile,
    check_section,
    default_config,
    kubelet_profile_for,
)
from .components import (
    KUBELET_FIELDS,
    apply_fields,
)
from .fields import (
    _bool,
    _dur,
    _int,
    _list,
    _map,
    _no_unknown,
    _qty,
    _show,
    _str,
    check_count,
    resources,
)
from .model import (
    DEFAULT_CAPACITY,
    RESOURCE_NAMES,
    USAGE_NAMES,
    NodeSpec,
    ScenarioError,
)

NODE_FIELDS = {
    "name",
    "zone",
    "region",
    "labels",
    "capacity",
    "usage",
    "pidMax",
    "inodes",
    "imagefs",
    "images",
    "deadContainers",
    "kubeletOffset",
    "kubelet",
    "kubeletVersion",
    "unschedulable",
}


def parse_nodes(
    data: Any, kubelet: KubeletConfig, kubelet_raw: dict[str, Any], path: str, profile: Profile
) -> list[NodeSpec]:
    out: list[NodeSpec] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(_list(data, path)):
        p = f"{path}[{i}]"
        entry = _map(entry, p)
        if "generate" in entry:
            _no_unknown(entry, {"generate"}, p)
            gen = _map(entry["generate"], f"{p}.generate")
            count = gen.get("count")
            if not (isinstance(count, int) and count > 20000):  # (past int64: the same)
                count = _int(count, f"{p}.generate.count", minimum=1)
            if count > 20000:
                raise ScenarioError(f"{p}.generate.count", f"at most 20000 nodes, got {count}")
            prefix = gen.get("namePrefix", "node-")
            _str(prefix, f"{p}.generate.namePrefix")
            check_name(dns1123_subdomain, f"{prefix}1", f"{p}.generate.namePrefix")
            template = {k: v for k, v in gen.items() if k not in ("count", "namePrefix")}
            _no_unknown(template, NODE_FIELDS - {"name"}, f"{p}.generate")
            first = parse_node(
                {**template, "name": f"{prefix}1"}, kubelet, kubelet_raw, f"{p}.generate", profile
            )
            _add_unique(out, seen, first, p)
            per_node = "kubelet" in template or "kubeletVersion" in template  # (_generated)
            for n in range(2, count + 1):
                name = f"{prefix}{n}"
                if per_node:
                    spec = parse_node(
                        {**template, "name": name}, kubelet, kubelet_raw, f"{p}.generate", profile
                    )
                else:
                    spec = _generated(first, name, template, f"{p}.generate")
                _add_unique(out, seen, spec, p)
        else:
            spec = parse_node(entry, kubelet, kubelet_raw, p, profile)
            _add_unique(out, seen, spec, p)
    return out


def _add_unique(out: list[NodeSpec], seen: dict[str, str], spec: NodeSpec, path: str) -> None:
    if spec.name in seen:
        raise ScenarioError(
            f"{path}.name",
            f'duplicate node name "{spec.name}" (first defined at {seen[spec.name]})',
        )
    seen[spec.name] = path
    out.append(spec)


def _generated(first: NodeSpec, name: str, template: dict[str, Any], p: str) -> NodeSpec:
    """The node ``name`` of a generate entry: what parse_node makes of the template with that
    name, made from the first node's (the template is checked once; 5,000 generated nodes
    took a third of the form's check of a 5,000-node scenario). Its own dicts and lists, as
    parse_node gives each node. Not for a template with its own kubelet (made per node)."""
    _check_node_name(name, p)
    labels = dict(first.labels)
    if "kubernetes.io/hostname" not in _map(template.get("labels"), f"{p}.labels"):
        labels["kubernetes.io/hostname"] = name
    return replace(
        first,
        name=name,
        labels=labels,
        capacity=dict(first.capacity),
        usage=dict(first.usage),
        images=[dict(image) for image in first.images],
    )


def _check_node_name(name: str, p: str) -> None:
    if dns1123_subdomain(name):
        raise ScenarioError(
            f"{p}.name",
            f"{_show(name)} is not a valid node name (DNS-1123 subdomain): "
            + dns1123_subdomain(name),
        )


def parse_node(
    entry: dict[str, Any],
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    p: str,
    profile: Profile,
) -> NodeSpec:
    _no_unknown(entry, NODE_FIELDS, p)
    name = _str(entry.get("name"), f"{p}.name")
    _check_node_name(name, p)
    labels = check_labels(entry.get("labels"), f"{p}.labels")
    labels.setdefault("kubernetes.io/hostname", name)
    labels.setdefault("kubernetes.io/os", "linux")
    labels.setdefault("kubernetes.io/arch", "amd64")
    if "zone" in entry:
        labels["topology.kubernetes.io/zone"] = _str(entry["zone"], f"{p}.zone")
    if "region" in entry:
        labels["topology.kubernetes.io/region"] = _str(entry["region"], f"{p}.region")
    cap_raw = {**DEFAULT_CAPACITY, **_map(entry.get("capacity"), f"{p}.capacity")}
    _no_unknown(cap_raw, set(RESOURCE_NAMES), f"{p}.capacity")
    capacity = resources(cap_raw, f"{p}.capacity")
    usage_raw = _map(entry.get("usage"), f"{p}.usage")
    _no_unknown(usage_raw, set(USAGE_NAMES), f"{p}.usage")
    usage = resources(usage_raw, f"{p}.usage")
    images = []
    check_count(entry.get("images"), f"{p}.images", "images")
    for j, img in enumerate(_list(entry.get("images"), f"{p}.images")):
        ip = f"{p}.images[{j}]"
        img = _map(img, ip)
        _no_unknown(img, {"name", "size", "inUse"}, ip)
        images.append(
            {
                "name": _str(img.get("name"), f"{ip}.name"),
                "size": _qty(img.get("size"), f"{ip}.size"),
                "inUse": _bool(img.get("inUse", False), f"{ip}.inUse"),
            }
        )
    # Version skew: the node's kubelet may be an older release than the control plane; its
    # configuration then takes that release's defaults and fields.
    kubelet_profile = None
    if "kubeletVersion" in entry:
        kubelet_profile = kubelet_profile_for(
            entry["kubeletVersion"], profile, f"{p}.kubeletVersion"
        )
    node_kubelet = kubelet
    own = _map(entry.get("kubelet"), f"{p}.kubelet")
    if "kubelet" in entry or (kubelet_profile is not None and kubelet_profile is not profile):
        release = kubelet_profile or profile
        if kubelet_profile is not None and kubelet_profile is not profile:
            check_section(release, "kubelet", kubelet_raw, "spec.kubelet")
        check_section(release, "kubelet", own, f"{p}.kubelet")
        node_kubelet = apply_fields(
            default_config(KubeletConfig, release),
            {**kubelet_raw, **own},
            KUBELET_FIELDS,
            f"{p}.kubelet",
        )
    return NodeSpec(
        name=name,
        labels=labels,
        capacity=capacity,
        usage=usage,
        pid_max=_int(entry.get("pidMax", 4_194_304), f"{p}.pidMax", minimum=1),
        inodes=_int(entry.get("inodes", 0), f"{p}.inodes"),
        imagefs=_qty(entry["imagefs"], f"{p}.imagefs") if "imagefs" in entry else None,
        images=images,
        dead_containers=_qty(entry.get("deadContainers", 0), f"{p}.deadContainers"),
        kubelet_offset_ms=_dur(entry.get("kubeletOffset", 0), f"{p}.kubeletOffset"),
        kubelet=node_kubelet,
        unschedulable=_bool(entry.get("unschedulable", False), f"{p}.unschedulable"),
        kubelet_profile=kubelet_profile,
    )


def check_name(check: Any, value: str, path: str) -> str:
    """Run one of validation.py's checks: the value, or the API server's refusal."""
    why = check(value)
    if why:
        raise ScenarioError(path, f"{_show(value)}: {why}")
    return value


def check_labels(raw: Any, path: str) -> dict[str, str]:
    """metadata.labels / a node's labels: qualified-name keys, valid label values."""
    out = {}
    check_count(raw, path, "labels")
    for k, v in _map(raw, path).items():
        check_name(qualified_name, k, path)
        out[k] = check_name(label_value, _label_value(v, f"{path}.{k}"), f"{path}.{k}")
    return out


def _label_value(v: Any, path: str) -> str:
    if isinstance(v, bool):
        raise ScenarioError(path, "label values must be strings (quote true/false)")
    if isinstance(v, int | float):
        return str(v)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ScenarioError(path, f"label values must be strings, got {_show(v)}")
    return v
