"""Reading kubectl output: the documents of a YAML or JSON text, the items of a ``v1`` List,
and the shapes of the items the import reads (the engine's validation checks the values)."""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..engine import safe_yaml
from ..engine.scenario import ScenarioError, _list, _map, _show, _str, check_count, check_labels

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
IMPORTED_KINDS = ("Node", "Pod", *WORKLOAD_KINDS)
SILENT_KINDS = ("Event",)  # the past: nothing a simulation starts from


# -- reading the List -----------------------------------------------------------------------------
def read_documents(text: str) -> list[Any]:
    """The documents of a YAML or JSON text (a JSON text is read by the faster json module)."""
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            return [json.loads(text)]
        except (ValueError, RecursionError):
            pass  # YAML in flow style, or broken JSON: YAML says where
    try:
        return safe_yaml.load_all(text, max_bytes=0, error=ScenarioError)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError("", f"malformed YAML{where}: {problem}") from None


def list_items(docs: list[Any]) -> list[tuple[str, Any]]:
    """(path, item) of every object: the items of a List (``items[3]``), or a document."""
    out: list[tuple[str, Any]] = []
    many = len(docs) > 1
    for d, doc in enumerate(docs):
        prefix = f"documents[{d}]." if many else ""
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List"):
            items = doc.get("items")
            if items is None:
                continue
            if not isinstance(items, list):
                raise ScenarioError(f"{prefix}items", f"must be a list, got {_show(items)}")
            out.extend((f"{prefix}items[{i}]", item) for i, item in enumerate(items))
        else:
            out.append((f"documents[{d}]" if many else "document", doc))
    return out


def _check_meta(meta: dict[str, Any], path: str) -> None:
    if "namespace" in meta and meta["namespace"] is not None:
        _str(meta["namespace"], f"{path}.namespace")
    check_labels(meta.get("labels"), f"{path}.labels")  # (at most PER_OBJECT_CAPS' labels)
    check_count(meta.get("annotations"), f"{path}.annotations", "annotations")
    _map(meta.get("annotations"), f"{path}.annotations")
    check_count(meta.get("ownerReferences"), f"{path}.ownerReferences", "ownerReferences")
    for i, ref in enumerate(_list(meta.get("ownerReferences"), f"{path}.ownerReferences")):
        rp = f"{path}.ownerReferences[{i}]"
        ref = _map(ref, rp)
        _str(ref.get("kind"), f"{rp}.kind")
        _str(ref.get("name"), f"{rp}.name")


def _check_pod_spec(spec: dict[str, Any], path: str) -> None:
    for key in ("nodeName", "priorityClassName"):
        if spec.get(key) not in (None, ""):
            _str(spec[key], f"{path}.{key}")
    check_count(spec.get("nodeSelector"), f"{path}.nodeSelector", "nodeSelector")
    for key in ("volumes", "containers", "initContainers", "tolerations"):
        check_count(spec.get(key), f"{path}.{key}", key)
        for i, v in enumerate(_list(spec.get(key), f"{path}.{key}")):
            _map(v, f"{path}.{key}[{i}]")


def check_item(item: dict[str, Any], kind: str, path: str) -> None:
    """The shapes the import reads (the engine's validation checks the values after)."""
    _check_meta(item["metadata"], f"{path}.metadata")
    spec = _map(item.get("spec"), f"{path}.spec")
    status = _map(item.get("status"), f"{path}.status")
    if kind == "Node":
        check_count(spec.get("taints"), f"{path}.spec.taints", "taints")
        check_count(status.get("conditions"), f"{path}.status.conditions", "conditions")
        for i, t in enumerate(_list(spec.get("taints"), f"{path}.spec.taints")):
            _map(t, f"{path}.spec.taints[{i}]")
        for i, c in enumerate(_list(status.get("conditions"), f"{path}.status.conditions")):
            _map(c, f"{path}.status.conditions[{i}]")
        _map(status.get("nodeInfo"), f"{path}.status.nodeInfo")
    elif kind == "Pod":
        _check_pod_spec(spec, f"{path}.spec")
    else:
        template = _map(spec.get("template"), f"{path}.spec.template")
        tmeta = _map(template.get("metadata"), f"{path}.spec.template.metadata")
        check_labels(tmeta.get("labels"), f"{path}.spec.template.metadata.labels")
        _map(tmeta.get("annotations"), f"{path}.spec.template.metadata.annotations")
        tspec = _map(template.get("spec"), f"{path}.spec.template.spec")
        _check_pod_spec(tspec, f"{path}.spec.template.spec")
