"""Writes through a room's API (the operator's token only), each turned into the room's own
action (``rooms.actions.action_submit``: the same validation and limits as the page's
buttons, logged in the timeline with kubectl as the actor), answered once the room applied
it with the object as it is then:

- PATCH a node (strategic merge, merge or JSON patch: patches.py): ``spec.unschedulable`` -> Cordon/Uncordon,
  ``spec.taints`` (the whole list, ``null`` for none) -> Taint/Untaint of the difference,
  ``metadata.labels`` (kubectl label: a value sets, ``null`` removes) -> Label;
- DELETE a pod (``gracePeriodSeconds``; 0 is ``--force --grace-period=0``) -> DeletePod;
  DELETE a node -> DeleteNode;
- POST a pod's ``eviction`` (policy/v1 Eviction, kubectl drain) -> EvictPod (DisruptionTarget
  EvictionByEvictionAPI, then a graceful delete);
- PATCH/PUT a workload's ``scale`` (autoscaling/v1 Scale) -> ScaleWorkload;
- POST a SelfSubjectAccessReview (JSON, or protobuf as kubectl 1.32+ sends it): what the
  token may do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from ..engine.scenario import PER_OBJECT_CAPS
from ..models import Action, Room
from ..rooms.actions import action_submit
from ..rooms.errors import REFUSALS
from . import auth, patches, protobuf, workloads
from .answers import respond
from .errors import (
    bad_request,
    invalid,
    method_not_allowed,
    too_large,
    unsupported_media_type,
)
from .request import Target

MAX_BODY = 1 << 20
PATCH_TYPES = ("application/strategic-merge-patch+json", "application/merge-patch+json")
JSON_PATCH = "application/json-patch+json"
ACTOR = "kubectl"


@dataclass
class Pending:
    """An action recorded; ``answer(read)`` is the reply once the room applied it."""

    action_id: int
    room_id: int
    target: Target
    code: int
    answer_kind: str  # "object", "scale", "status"


def _body(request: HttpRequest) -> bytes:
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if length > MAX_BODY:
        raise too_large(f"the request body is {length} bytes, over the limit of {MAX_BODY}")
    body = request.body
    if len(body) > MAX_BODY:
        raise too_large(f"the request body is over the limit of {MAX_BODY} bytes")
    return body


def _json(body: bytes, what: str) -> Any:
    if not body.strip():
        return {}
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"{what}: the body is not JSON: {exc}") from None


def write(request: HttpRequest, room: Room, role: str, target: Target) -> HttpResponse | Pending:
    method = request.method or ""
    if target.resource == "selfsubjectaccessreviews" and method == "POST":
        return respond(access_review(request, room, role), 201)
    verb = {"PATCH": "patch", "PUT": "update", "DELETE": "delete", "POST": "create"}[method]
    resource = f"{target.resource}/{target.sub}" if target.sub else target.resource
    if target.name is None or (verb not in target.info.verbs and target.sub is None):
        raise method_not_allowed(method, resource)
    auth.check(
        room,
        role,
        verb,
        target.group,
        resource,
        target.name,
    )
    body = _body(request)
    ctype = (request.content_type or "").split(";")[0].strip()
    if target.sub == "eviction" and method == "POST":
        eviction = _json(body, "Eviction")
        action = {"type": "EvictPod", "pod": f"{target.namespace}/{target.name}"}
        grace = (eviction.get("deleteOptions") or {}).get("gracePeriodSeconds")
        if grace is not None:
            action["gracePeriodSeconds"] = _grace(grace)
        return _submit(room, target, action, 201, "status")
    if target.sub == "scale" and method in ("PATCH", "PUT"):
        if method == "PATCH" and ctype not in (*PATCH_TYPES, JSON_PATCH):
            raise unsupported_media_type(ctype)
        replicas = (_json(body, "Scale").get("spec") or {}).get("replicas")
        if (
            isinstance(replicas, bool)
            or not isinstance(replicas, int)
            or not 0 <= replicas <= 100_000
        ):
            raise invalid(
                "Scale",
                target.name,
                f"must be an integer from 0 to 100000, got {str(replicas)[:40]}",
                "spec.replicas",
            )
        kind = target.info.kind
        return _submit(
            room,
            target,
            {
                "type": "ScaleWorkload",
                "workload": f"{kind}/{target.namespace}/{target.name}",
                "replicas": replicas,
            },
            200,
            "scale",
        )
    if target.sub is not None:
        raise method_not_allowed(method, resource)
    if method == "DELETE" and target.resource == "pods":
        options = _json(body, "DeleteOptions")
        grace = options.get("gracePeriodSeconds", request.GET.get("gracePeriodSeconds"))
        action: dict[str, Any] = {"type": "DeletePod", "pod": f"{target.namespace}/{target.name}"}
        if grace not in (None, ""):
            grace = action["gracePeriodSeconds"] = _grace(grace)
            if grace == 0:
                action["force"] = True
        return _submit(room, target, action, 200, "object")
    if method == "DELETE" and target.resource == "nodes":
        return _submit(room, target, {"type": "DeleteNode", "node": target.name}, 200, "object")
    if method == "PATCH" and target.resource == "nodes":
        if ctype == JSON_PATCH:
            return _node_json_patch(request, room, target, _json(body, "json patch"))
        if ctype not in PATCH_TYPES:
            raise unsupported_media_type(ctype)
        return _node_patch(request, room, target, _json(body, "patch"))
    raise method_not_allowed(method, resource)


def _grace(value: Any) -> int:
    if isinstance(value, bool):
        raise bad_request(f"gracePeriodSeconds: must be an integer, got {value!r}")
    try:
        grace = int(value)
    except (TypeError, ValueError):
        raise bad_request(
            f"gracePeriodSeconds: must be an integer, got {str(value)[:40]!r}"
        ) from None
    if not 0 <= grace <= 86_400:
        raise bad_request(f"gracePeriodSeconds: must be from 0 to 86400, got {grace}")
    return grace


def _node_patch(
    request: HttpRequest, room: Room, target: Target, patch: Any
) -> Pending | HttpResponse:
    from .store import Read

    if not isinstance(patch, dict):
        raise bad_request("patch: must be a JSON object")
    name = target.name or ""
    spec = patch.get("spec")
    extra = sorted(set(patch) - {"spec", "metadata", "kind", "apiVersion"})
    meta = patch.get("metadata")
    meta_extra = (
        sorted(set(meta) - {"name", "resourceVersion", "labels"}) if isinstance(meta, dict) else []
    )
    spec_extra = (
        sorted(set(spec or {}) - {"unschedulable", "taints"}) if isinstance(spec, dict) else []
    )
    if extra or meta_extra or spec_extra or (spec is not None and not isinstance(spec, dict)):
        what = (
            extra
            or [f"metadata.{m}" for m in meta_extra]
            or [f"spec.{s}" for s in spec_extra]
            or ["spec"]
        )[0]
        raise invalid(
            "Node",
            name,
            "the simulated cluster changes a node's metadata.labels, spec.unschedulable and "
            "spec.taints only",
            what,
        )
    current = Read.of(room).one("nodes", "", None, name)
    actions: list[dict[str, Any]] = []
    spec = spec or {}
    if "unschedulable" in spec:
        want = spec["unschedulable"]
        if want is not None and not isinstance(want, bool):
            raise invalid(
                "Node", name, f"must be a boolean, got {str(want)[:40]}", "spec.unschedulable"
            )
        if bool(want) != bool(current["spec"].get("unschedulable")):
            actions.append({"type": "Cordon" if want else "Uncordon", "node": name})
    if "taints" in spec:
        actions.extend(_taint_actions(name, current["spec"].get("taints") or [], spec["taints"]))
    if isinstance(meta, dict) and "labels" in meta:
        actions.extend(_label_actions(name, current["metadata"].get("labels") or {}, meta))
    if not actions:
        return respond(current)
    for extra_action in actions[:-1]:
        _record(room, extra_action)
    return _submit(room, target, actions[-1], 200, "object")


def _node_json_patch(
    request: HttpRequest, room: Room, target: Target, operations: Any
) -> Pending | HttpResponse:
    """A JSON patch (RFC 6902) of a node: applied to the node as it is, what it changes of
    metadata.labels, spec.unschedulable and spec.taints becomes the merge patch of those
    (patches.py), then the same actions and checks as a strategic merge patch."""
    from .store import Read

    current = Read.of(room).one("nodes", "", None, target.name or "")
    merge = patches.node_merge_patch(current, operations)
    if not merge:
        return respond(current)
    return _node_patch(request, room, target, merge)


def _label_actions(node: str, old: dict[str, str], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """``kubectl label``'s merge patch of metadata.labels (a strategic merge patch of a map
    reads the same): each key set to its value, a null removes it, ``labels: null`` removes
    them all. A Label action of the keys that change, checked as kube-apiserver checks labels
    (ValidateLabels: qualified-name keys, 63-character values) before it is recorded."""
    from ..engine.scenario import ScenarioError
    from ..engine.scenario.fault_specs import parse_label_changes

    patch = meta["labels"]
    if patch is None:
        patch = dict.fromkeys(old)
    if not isinstance(patch, dict):
        raise invalid("Node", node, "must be a map of label keys to values", "metadata.labels")
    directive = next((k for k in patch if isinstance(k, str) and k.startswith("$")), None)
    if directive is not None:
        raise invalid(
            "Node",
            node,
            f"the patch directive {directive[:40]!r} is not supported",
            "metadata.labels",
        )
    changes = {k: v for k, v in patch.items() if (k in old if v is None else old.get(k) != v)}
    if not changes:
        return []
    try:
        checked = parse_label_changes(changes, "metadata.labels")
    except ScenarioError as exc:
        raise invalid("Node", node, exc.why, exc.path) from None
    after = {k for k in old if checked.get(k, "") is not None}
    after |= {k for k, v in checked.items() if v is not None}
    most, what = PER_OBJECT_CAPS["labels"]
    if len(after) > most:  # (the room refuses it too when it applies it)
        raise invalid(
            "Node", node, f"{len(after)} labels, at most {most} {what}", "metadata.labels"
        )
    return [{"type": "Label", "node": node, "labels": checked}]


def _taint_key(t: dict[str, Any]) -> tuple[str, str, str]:
    return (str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "")))


def _taint_actions(node: str, old: list[dict[str, Any]], new: Any) -> list[dict[str, Any]]:
    if new is None:
        new = []
    if not isinstance(new, list) or not all(isinstance(t, dict) for t in new):
        raise invalid("Node", node, "must be a list of taints or null", "spec.taints")
    most, what = PER_OBJECT_CAPS["taints"]
    if len(new) > most:  # before any is read (the room's Taint action is capped too)
        raise invalid("Node", node, f"{len(new)} items, at most {most} {what}", "spec.taints")
    for i, t in enumerate(new):
        if set(t) - {"key", "value", "effect", "timeAdded"}:
            raise invalid(
                "Node",
                node,
                f"unknown field {sorted(set(t) - {'key', 'value', 'effect', 'timeAdded'})[0]!r}",
                f"spec.taints[{i}]",
            )
    before = {_taint_key(t) for t in old}
    after = {_taint_key(t) for t in new}
    out = []
    removed = sorted(before - after)
    added = sorted(after - before)
    if removed:
        out.append({"type": "Untaint", "node": node, "taints": [_taint(k) for k in removed]})
    if added:
        out.append({"type": "Taint", "node": node, "taints": [_taint(k) for k in added]})
    return out


def _taint(key: tuple[str, str, str]) -> dict[str, str]:
    out = {"key": key[0], "effect": key[2]}
    if key[1]:
        out["value"] = key[1]
    return out


def _record(room: Room, action: dict[str, Any]) -> Action:
    try:
        return action_submit(room, action, ACTOR)
    except REFUSALS as exc:
        raise invalid(
            action["type"],
            str(action.get("node") or action.get("pod") or action.get("workload")),
            str(exc),
        ) from None


def _submit(room: Room, target: Target, action: dict[str, Any], code: int, answer: str) -> Pending:
    from ..tasks import send_tick

    recorded = _record(room, action)
    send_tick(room.pk)
    return Pending(recorded.pk, room.pk, target, code, answer)


def action_state(action_id: int) -> tuple[str, str]:
    row = Action.objects.filter(pk=action_id).values_list("status", "error").first()
    return (row[0], row[1]) if row else (Action.REFUSED, "the action is gone")


def answer(p: Pending, state: tuple[str, str]) -> HttpResponse:
    """The reply once the room applied the action (or refused it: 422 with its reason)."""
    from .store import Read

    status, error = state
    if status == Action.REFUSED:
        raise invalid(
            p.target.info.kind, p.target.name or "", error or "the room refused the action"
        )
    room = Room.objects.get(pk=p.room_id)
    read = Read.of(room)
    if p.answer_kind == "status":
        return respond(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": p.code,
            },
            p.code,
        )
    if p.answer_kind == "scale":
        return respond(scale_of(read, p.target), p.code)
    for _key, _fp, make in read.items(
        p.target.resource, p.target.group, p.target.namespace, p.target.name
    ):
        return respond(make(), p.code)
    # Gone already (a pod deleted at once, a node deleted): kube-apiserver answers with the
    # object as it was; the room keeps no last state, so a Status says it was deleted.
    details = {"name": p.target.name, "kind": p.target.resource}
    return respond(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        },
        p.code,
    )


def scale_of(read: Any, target: Target) -> dict[str, Any]:
    obj = read.one(target.resource, target.group, target.namespace, target.name or "")
    return workloads.scale(obj)


# -- auth can-i -----------------------------------------------------------------------------
def access_review(request: HttpRequest, room: Room, role: str) -> dict[str, Any]:
    """SelfSubjectAccessReview: JSON, or the protobuf kubectl 1.32+ posts."""
    body = _body(request)
    ctype = (request.content_type or "").split(";")[0].strip()
    if ctype == "application/vnd.kubernetes.protobuf":
        spec = protobuf.access_review_spec(body)
    elif ctype in ("application/json", ""):
        spec = _json(body, "SelfSubjectAccessReview").get("spec") or {}
    else:
        raise unsupported_media_type(ctype)
    attrs = spec.get("resourceAttributes") or {}
    verb = str(attrs.get("verb") or (spec.get("nonResourceAttributes") or {}).get("verb") or "")
    allowed = auth.allowed(role, verb) and (verb in auth.READ_VERBS or bool(attrs))
    status: dict[str, Any] = {"allowed": allowed}
    status["reason"] = (
        f"the {role}'s token of room {room.slug} may {verb}"
        if allowed
        else f"the {role}'s token of room {room.slug} may not {verb}"
    )
    return {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": status,
    }
