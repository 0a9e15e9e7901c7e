"""A JSON patch (RFC 6902, ``application/json-patch+json``) of a Node, as kube-apiserver
applies one (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go, ``applyJSPatch``):
the operations are applied to the object as it is (the ``jsonpatch`` library: add, remove,
replace, move, copy, test); a patch that is not a list of operations is a 400, one that does
not apply (a ``test`` that fails, a path that is not there) a 422. What it changes must be
what the room can act on (metadata.labels, spec.unschedulable, spec.taints): it becomes the
merge patch of those fields, which ``writes`` turns into the room's actions with the same
validation as kubectl's strategic merge patch; a change of any other field is a 422 naming
it."""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from .errors import ApiError, bad_request, invalid

# kube-apiserver's limit of operations in one JSON patch (maxJSONPatchOperations).
MAX_OPERATIONS = 10_000
EDITABLE = (("metadata", "labels"), ("spec", "unschedulable"), ("spec", "taints"))


def _without_editable(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    for top, field in EDITABLE:
        part = out.get(top)
        if isinstance(part, dict):
            out[top] = {k: v for k, v in part.items() if k != field}
    return out


def _first_difference(before: Any, after: Any, path: str) -> str | None:
    """The dotted path of the first field where ``after`` differs from ``before``."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if before.get(key, _MISSING) != after.get(key, _MISSING):
                inner = _first_difference(
                    before.get(key, _MISSING), after.get(key, _MISSING), f"{path}.{key}"
                )
                return inner or f"{path}.{key}"
        return None
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            if b != a:
                return _first_difference(b, a, f"{path}[{i}]") or f"{path}[{i}]"
        return None
    return None if before == after else path


_MISSING = object()


def node_merge_patch(node: dict[str, Any], operations: Any) -> dict[str, Any]:
    """The merge patch (metadata.labels, spec.unschedulable, spec.taints) that makes of
    ``node`` what the JSON patch ``operations`` makes of it."""
    name = node["metadata"]["name"]
    if not isinstance(operations, list):
        raise bad_request("json patch: the body must be a list of operations")
    if len(operations) > MAX_OPERATIONS:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, "
            f"got {len(operations)}",
        )
    try:
        after = jsonpatch.JsonPatch(operations).apply(node)
    except (jsonpatch.JsonPatchTestFailed, jsonpatch.JsonPatchConflict) as exc:
        raise ApiError(422, "Invalid", f"the JSON patch does not apply: {str(exc)[:200]}") from None
    except (jsonpatch.InvalidJsonPatch, jsonpointer.JsonPointerException) as exc:
        raise bad_request(f"json patch: {str(exc)[:200]}") from None
    if not isinstance(after, dict):
        raise invalid("Node", name, "the patch must leave a Node object", "")
    other = _first_difference(_without_editable(node), _without_editable(after), "")
    if other is not None:
        raise invalid(
            "Node",
            name,
            "the simulated cluster changes a node's metadata.labels, spec.unschedulable and "
            "spec.taints only",
            other.lstrip("."),
        )
    merge: dict[str, Any] = {}
    old_labels = node["metadata"].get("labels") or {}
    new_labels = after["metadata"].get("labels")
    if new_labels != old_labels:
        if isinstance(new_labels, dict):
            gone = {k: None for k in old_labels if k not in new_labels}
            changed = {k: v for k, v in new_labels.items() if old_labels.get(k, _MISSING) != v}
            merge["metadata"] = {"labels": {**gone, **changed}}
        else:
            merge["metadata"] = {"labels": new_labels}  # null: all removed; else refused
    spec: dict[str, Any] = {}
    old_spec, new_spec = node.get("spec") or {}, after.get("spec") or {}
    if not isinstance(new_spec, dict):
        raise invalid("Node", name, "must be an object", "spec")
    if new_spec.get("unschedulable", False) != old_spec.get("unschedulable", False):
        spec["unschedulable"] = new_spec.get("unschedulable")
    if new_spec.get("taints") != old_spec.get("taints"):
        spec["taints"] = new_spec.get("taints")
    if spec:
        merge["spec"] = spec
    return merge
