"""Kubernetes manifests -> engine objects: Pod and the workload kinds a scenario may hold.

Validation is path-precise and happens at load, so a scenario is refused whole.
"""

from __future__ import annotations

from typing import Any

from .kubelet.termination import TerminationError, parse_termination
from .objects import (
    EFFECTS,
    PRIORITY_CLASSES,
    Container,
    OwnerRef,
    Pod,
    Toleration,
)
from .quantity import quantity_format
from .scenario import (
    ScenarioError,
    _bool,
    _int,
    _list,
    _map,
    _no_unknown,
    _qty,
    _seconds,
    _show,
    _str,
    check_count,
    check_labels,
    check_name,
    resources,
)
from .validation import dns1123_label, dns1123_subdomain, qualified_name
from .values import INT32_MAX, INT32_MIN

KINDS = ("Pod", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet")
USAGE_PREFIX = "usage.playground/"
USAGE_KEYS = ("memory", "ephemeral-storage", "pids")


def validate_manifest(obj: Any, path: str) -> None:
    d = _map(obj, path)
    kind = d.get("kind")
    if kind not in KINDS:
        raise ScenarioError(f"{path}.kind", f"must be one of {', '.join(KINDS)}, got {_show(kind)}")
    meta = _map(d.get("metadata"), f"{path}.metadata")
    check_name(
        dns1123_subdomain, _str(meta.get("name"), f"{path}.metadata.name"), f"{path}.metadata.name"
    )
    if "namespace" in meta:
        ns = _str(meta["namespace"], f"{path}.metadata.namespace")
        check_name(dns1123_label, ns, f"{path}.metadata.namespace")
    if kind == "Pod":
        pod_from_manifest(d, path, now_ms=0, uid="validate")
        return
    spec = _map(d.get("spec"), f"{path}.spec")
    from .workloads import parse_workload  # (workloads builds pods with this module)

    parse_workload(d, path)  # replicas, strategy, podManagementPolicy: refused at load
    template = _map(spec.get("template"), f"{path}.spec.template")
    if not template:
        raise ScenarioError(f"{path}.spec.template", f"a {kind} needs a pod template")
    tmeta = _map(template.get("metadata"), f"{path}.spec.template.metadata")
    fake = {"kind": "Pod", "metadata": {**tmeta, "name": "template"}, "spec": template.get("spec")}
    pod_from_manifest(fake, f"{path}.spec.template", now_ms=0, uid="validate", template=True)
    selector = _map(spec.get("selector"), f"{path}.spec.selector")
    labels = _map(tmeta.get("labels"), f"{path}.spec.template.metadata.labels")
    check_count(selector.get("matchLabels"), f"{path}.spec.selector.matchLabels", "matchLabels")
    match = _map(selector.get("matchLabels"), f"{path}.spec.selector.matchLabels")
    for k, v in match.items():
        if labels.get(k) != v:
            raise ScenarioError(
                f"{path}.spec.selector.matchLabels.{k}",
                "selector does not match the template's labels",
            )


def pod_from_manifest(
    d: dict[str, Any],
    path: str,
    now_ms: int,
    uid: str,
    template: bool = False,
    name: str | None = None,
    namespace: str | None = None,
    owner: OwnerRef | None = None,
) -> Pod:
    """Build a Pod (API defaulting included: requests default from limits)."""
    meta = _map(d.get("metadata"), f"{path}.metadata")
    spec = _map(d.get("spec"), f"{path}.spec")
    pname, ns = name or "", namespace or ""
    if not name:
        pname = check_name(
            dns1123_subdomain,
            _str(meta.get("name"), f"{path}.metadata.name"),
            f"{path}.metadata.name",
        )
    if not namespace:
        ns = check_name(
            dns1123_label,
            _str(meta.get("namespace", "default"), f"{path}.metadata.namespace"),
            f"{path}.metadata.namespace",
        )
    labels = check_labels(meta.get("labels"), f"{path}.metadata.labels")
    check_count(meta.get("annotations"), f"{path}.metadata.annotations", "annotations")
    annotations = {
        str(k): str(v)
        for k, v in _map(meta.get("annotations"), f"{path}.metadata.annotations").items()
    }
    usage: dict[str, int] = {}
    for ann in annotations:
        if ann.startswith(USAGE_PREFIX) and ann[len(USAGE_PREFIX) :] not in USAGE_KEYS:
            raise ScenarioError(
                f"{path}.metadata.annotations.{ann}",
                f"unknown usage annotation (known: {', '.join(USAGE_PREFIX + k for k in USAGE_KEYS)})",
            )
    for key in USAGE_KEYS:
        ann = USAGE_PREFIX + key
        if ann in annotations:
            usage[key] = _qty(annotations[ann], f"{path}.metadata.annotations.{ann}")
    try:
        parse_termination(annotations)
    except TerminationError as exc:
        raise ScenarioError(f"{path}.metadata.annotations.{exc.key}", exc.message) from None
    check_count(meta.get("ownerReferences"), f"{path}.metadata.ownerReferences", "ownerReferences")
    refs = _list(meta.get("ownerReferences"), f"{path}.metadata.ownerReferences")
    controllers = 0
    for i, ref in enumerate(refs):
        rp = f"{path}.metadata.ownerReferences[{i}]"
        ref = _map(ref, rp)
        if _bool(ref.get("controller", False), f"{rp}.controller"):
            controllers += 1
            if controllers > 1:
                raise ScenarioError(
                    f"{path}.metadata.ownerReferences", "only one reference can have controller set"
                )
            if owner is None:
                owner = OwnerRef(
                    _str(ref.get("kind"), f"{rp}.kind"),
                    _str(ref.get("name"), f"{rp}.name"),
                    str(ref.get("uid", "")),
                    True,
                )
    for key in ("containers", "initContainers", "tolerations", "nodeSelector", "volumes"):
        check_count(spec.get(key), f"{path}.spec.{key}", key)
    containers = [
        _container(c, f"{path}.spec.containers[{i}]")
        for i, c in enumerate(_list(spec.get("containers"), f"{path}.spec.containers"))
    ]
    if not containers:
        raise ScenarioError(f"{path}.spec.containers", "a pod needs at least one container")
    seen_names: set[str] = set()
    for i, c in enumerate(containers):
        if c.name in seen_names:
            raise ScenarioError(
                f"{path}.spec.containers[{i}].name", f"duplicate name {_show(c.name)}"
            )
        seen_names.add(c.name)
    init = [
        _container(c, f"{path}.spec.initContainers[{i}]")
        for i, c in enumerate(_list(spec.get("initContainers"), f"{path}.spec.initContainers"))
    ]
    tolerations = [
        _toleration(t, f"{path}.spec.tolerations[{i}]")
        for i, t in enumerate(_list(spec.get("tolerations"), f"{path}.spec.tolerations"))
    ]
    priority_class = spec.get("priorityClassName", "")
    if priority_class not in ("", None):  # an empty {} or [] is no name either (found by make fuzz)
        _str(priority_class, f"{path}.spec.priorityClassName")
    if priority_class and priority_class not in PRIORITY_CLASSES:
        raise ScenarioError(
            f"{path}.spec.priorityClassName",
            f"unknown priority class {_show(priority_class)} (built in: {', '.join(PRIORITY_CLASSES)};"
            " or set spec.priority)",
        )
    priority = PRIORITY_CLASSES.get(priority_class, 0)
    if "priority" in spec:
        priority = _int(
            spec["priority"], f"{path}.spec.priority", minimum=INT32_MIN, maximum=INT32_MAX
        )
    node_selector = {
        str(k): str(v)
        for k, v in _map(spec.get("nodeSelector"), f"{path}.spec.nodeSelector").items()
    }
    node_name = spec.get("nodeName", "")
    if node_name not in ("", None):
        _str(node_name, f"{path}.spec.nodeName")
    return Pod(
        namespace=ns,
        name=pname,
        uid=uid,
        creation_ms=now_ms,
        labels=labels,
        annotations=annotations,
        owner=owner,
        node_name=node_name,
        node_selector=node_selector,
        tolerations=tolerations,
        containers=tuple(containers),
        init_containers=tuple(init),
        priority=priority,
        priority_class_name=priority_class,
        termination_grace_period_s=_seconds(
            spec.get("terminationGracePeriodSeconds", 30),
            f"{path}.spec.terminationGracePeriodSeconds",
        ),
        host_network=_bool(spec.get("hostNetwork", False), f"{path}.spec.hostNetwork"),
        usage=usage,
    )


def _container(c: Any, path: str) -> Container:
    c = _map(c, path)
    name = _str(c.get("name"), f"{path}.name")
    res = _map(c.get("resources"), f"{path}.resources")
    _no_unknown(res, {"requests", "limits"}, f"{path}.resources")
    requests = resources(res.get("requests"), f"{path}.resources.requests")
    limits = resources(res.get("limits"), f"{path}.resources.limits")
    request_formats = {k: quantity_format(v) for k, v in (res.get("requests") or {}).items()}
    limit_formats = {k: quantity_format(v) for k, v in (res.get("limits") or {}).items()}
    for k, v in limits.items():
        if k not in requests:  # API defaulting: requests default to limits (a DeepCopy)
            requests[k], request_formats[k] = v, limit_formats[k]
        if requests[k] > v:
            raise ScenarioError(
                f"{path}.resources.requests.{k}", "must be less than or equal to the limit"
            )
    return Container(name, requests, limits, request_formats, limit_formats)


def _toleration(t: Any, path: str) -> Toleration:
    t = _map(t, path)
    _no_unknown(t, {"key", "operator", "value", "effect", "tolerationSeconds"}, path)
    op = t.get("operator", "Equal")
    if op not in ("Equal", "Exists"):
        raise ScenarioError(f"{path}.operator", f'must be "Equal" or "Exists", got {_show(op)}')
    effect = t.get("effect", "") or ""
    if effect and effect not in EFFECTS:
        raise ScenarioError(
            f"{path}.effect", f"must be one of {', '.join(EFFECTS)}, got {_show(effect)}"
        )
    secs = t.get("tolerationSeconds")
    if secs is not None:
        secs = _seconds(secs, f"{path}.tolerationSeconds", minimum=None)
        if effect != "NoExecute":
            raise ScenarioError(
                f"{path}.tolerationSeconds", "only NoExecute tolerations may set it"
            )
    key = _str(t["key"], f"{path}.key") if t.get("key") else ""
    if key:
        check_name(qualified_name, key, f"{path}.key")
    if op == "Exists" and t.get("value"):
        raise ScenarioError(f"{path}.value", "must be empty when operator is Exists")
    if not key and op != "Exists":
        raise ScenarioError(f"{path}.operator", "must be Exists when key is empty")
    return Toleration(str(key), op, str(t.get("value", "") or ""), effect, secs)
