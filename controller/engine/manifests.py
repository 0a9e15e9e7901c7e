"""Kubernetes manifests -> engine objects: Pod and the workload kinds a scenario may hold.

Validation is path-precise and happens at load, so a scenario is refused whole.
"""

from __future__ import annotations

from typing import Any

from .objects import (
    EFFECTS,
    PRIORITY_CLASSES,
    Container,
    OwnerRef,
    Pod,
    Toleration,
)
from .quantity import QuantityError, milli_value, quantity_format, quantity_to_int
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
    check_labels,
    check_name,
)
from .validation import dns1123_label, dns1123_subdomain, qualified_name
from .values import INT32_MAX, INT32_MIN, INT64_MAX, MAX_SECONDS

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
    """Build a Pod (API defaulting included: requests default from limits). A field's path
    is joined only when it is refused (the ``_at`` readers: once per pod made, issue #27)."""
    meta = _map_at(d.get("metadata"), path, "metadata")
    spec = _map_at(d.get("spec"), path, "spec")
    pname, ns = name or "", namespace or ""
    if not name:
        pname = _name_at(dns1123_subdomain, meta.get("name"), path, "metadata.name")
    if not namespace:
        ns = _name_at(dns1123_label, meta.get("namespace", "default"), path, "metadata.namespace")
    raw_labels = meta.get("labels")
    labels = {} if raw_labels is None else check_labels(raw_labels, f"{path}.metadata.labels")
    annotations = {
        str(k): str(v)
        for k, v in _map_at(meta.get("annotations"), path, "metadata.annotations").items()
    }
    usage: dict[str, int] = {}
    if annotations:
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
    refs = _list_at(meta.get("ownerReferences"), path, "metadata.ownerReferences")
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
    containers = [
        _container(c, f"{path}.spec.containers[{i}]")
        for i, c in enumerate(_list_at(spec.get("containers"), path, "spec.containers"))
    ]
    if not containers:
        raise ScenarioError(f"{path}.spec.containers", "a pod needs at least one container")
    if len(containers) > 1:
        seen_names: set[str] = set()
        for i, c in enumerate(containers):
            if c.name in seen_names:
                raise ScenarioError(
                    f"{path}.spec.containers[{i}].name", f"duplicate name {_show(c.name)}"
                )
            seen_names.add(c.name)
    init = [
        _container(c, f"{path}.spec.initContainers[{i}]")
        for i, c in enumerate(_list_at(spec.get("initContainers"), path, "spec.initContainers"))
    ]
    tolerations = [
        _toleration(t, f"{path}.spec.tolerations[{i}]")
        for i, t in enumerate(_list_at(spec.get("tolerations"), path, "spec.tolerations"))
    ]
    priority_class = spec.get("priorityClassName", "")
    if priority_class not in ("", None):  # an empty {} or [] is no name either (found by make fuzz)
        _str_at(priority_class, path, "spec.priorityClassName")
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
        for k, v in _map_at(spec.get("nodeSelector"), path, "spec.nodeSelector").items()
    }
    node_name = spec.get("nodeName", "")
    if node_name not in ("", None):
        _str_at(node_name, path, "spec.nodeName")
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if type(grace) is not int or not 0 <= grace <= MAX_SECONDS:
        grace = _seconds(grace, f"{path}.spec.terminationGracePeriodSeconds")
    host_network = spec.get("hostNetwork", False)
    if type(host_network) is not bool:
        _bool(host_network, f"{path}.spec.hostNetwork")
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
        containers=containers,
        init_containers=init,
        priority=priority,
        priority_class_name=priority_class,
        termination_grace_period_s=grace,
        host_network=host_network,
        usage=usage,
    )


def _container(c: Any, path: str) -> Container:
    c = _map(c, path)
    name = _str_at(c.get("name"), path, "name")
    res = _map_at(c.get("resources"), path, "resources")
    for k in res:
        if k != "requests" and k != "limits":
            _no_unknown(res, {"requests", "limits"}, f"{path}.resources")
    raw_requests, raw_limits = res.get("requests"), res.get("limits")
    requests = _resources_at(raw_requests, path, "resources.requests")
    limits = _resources_at(raw_limits, path, "resources.limits")
    request_formats = {k: quantity_format(v) for k, v in (raw_requests or {}).items()}
    if not limits:
        return Container(name, requests, limits, request_formats, {})
    limit_formats = {k: quantity_format(v) for k, v in (raw_limits or {}).items()}
    for k, v in limits.items():
        if k not in requests:  # API defaulting: requests default to limits (a DeepCopy)
            requests[k], request_formats[k] = v, limit_formats[k]
        if requests[k] > v:
            raise ScenarioError(
                f"{path}.resources.requests.{k}", "must be less than or equal to the limit"
            )
    return Container(name, requests, limits, request_formats, limit_formats)


# -- the field readers of scenario/fields.py at ``path``.``field``, the path joined only for a
# refusal (the reader then says why, in the same words) -----------------------------------------
def _map_at(v: Any, path: str, field: str) -> dict[str, Any]:
    if v is None:
        return {}
    if type(v) is dict:
        for k in v:
            if type(k) is not str:
                break
        else:
            return v
    return _map(v, f"{path}.{field}")


def _list_at(v: Any, path: str, field: str) -> list[Any]:
    if v is None:
        return []
    if type(v) is list:
        return v
    return _list(v, f"{path}.{field}")


def _str_at(v: Any, path: str, field: str) -> str:
    if type(v) is str and v:
        return v
    return _str(v, f"{path}.{field}")


def _name_at(check: Any, v: Any, path: str, field: str) -> str:
    """check_name(check, _str(v, ...), ...)."""
    if type(v) is not str or not v or check(v):
        return check_name(check, _str(v, f"{path}.{field}"), f"{path}.{field}")
    return v


def _resources_at(d: Any, path: str, field: str) -> dict[str, int]:
    """resources(d, path.field): each quantity read, its path made only for a refusal."""
    out: dict[str, int] = {}
    for k, v in _map_at(d, path, field).items():
        milli = k == "cpu"
        try:
            n = milli_value(v) if milli else quantity_to_int(v)
        except (QuantityError, ValueError, TypeError):
            n = -1
        if not 0 <= n <= INT64_MAX:
            n = _qty(v, f"{path}.{field}.{k}", milli=milli)
        out[k] = n
    return out


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
