"""Label and field selectors as kube-apiserver reads them: ports of
k8s.io/apimachinery/pkg/labels.Parse (equality ``=``/``==``/``!=``, set-based
``in``/``notin``, ``key`` and ``!key``) and fields.ParseSelector (``a=b,c!=d`` terms, all of
which must hold, in any order), with the field labels each resource supports (its
``GetAttrs``/``AddFieldLabelConversionFunc``: pods' ``spec.nodeName`` and ``status.phase``,
events' ``involvedObject.*``, ...)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import ApiError, bad_request

MAX_SELECTOR = 4096
_KEY = re.compile(
    r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

Match = Callable[[dict[str, str]], bool]


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses (``a in (x,y),b``)."""
    terms, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    terms.append("".join(cur))
    return terms


def _check_key(key: str, text: str) -> str:
    if not _KEY.match(key) or len(key.rpartition("/")[2]) > 63:
        raise bad_request(f'unable to parse requirement: invalid label key "{key}" in "{text}"')
    return key


def _check_value(value: str, text: str) -> str:
    if len(value) > 63 or not _VALUE.match(value):
        raise bad_request(
            f'unable to parse requirement: invalid label value: "{value}" in "{text}"'
        )
    return value


def parse_labels(text: str) -> Match:
    """labels.Parse: every requirement must hold."""
    if len(text) > MAX_SELECTOR:
        raise bad_request(f"labelSelector: longer than {MAX_SELECTOR} characters")
    reqs: list[Match] = []
    if text.strip():
        for raw in _split_terms(text):
            reqs.append(_requirement(raw.strip(), text))
    return lambda labels: all(r(labels) for r in reqs)


def _requirement(term: str, text: str) -> Match:
    m = re.match(r"^(\S+)\s+(in|notin)\s*\((.*)\)$", term)
    if m:
        key = _check_key(m.group(1), text)
        values = {_check_value(v.strip(), text) for v in m.group(3).split(",")}
        if m.group(2) == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: labels.get(key) not in values or key not in labels
    for op in ("==", "!=", "="):
        if op in term:
            key, _, value = term.partition(op)
            key = _check_key(key.strip(), text)
            value = _check_value(value.strip(), text)
            if op == "!=":
                return lambda labels: labels.get(key) != value
            return lambda labels: key in labels and labels[key] == value
    if term.startswith("!"):
        key = _check_key(term[1:].strip(), text)
        return lambda labels: key not in labels
    if not term:
        raise bad_request(
            f'unable to parse requirement: found "", expected: identifier in "{text}"'
        )
    key = _check_key(term, text)
    return lambda labels: key in labels


# -- fields ----------------------------------------------------------------------------------
def _meta(obj: dict[str, Any], name: str) -> str:
    return str(obj["metadata"].get(name) or "")


def _pod_field(obj: dict[str, Any], field: str) -> str | None:
    spec, status = obj["spec"], obj["status"]
    return {
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.restartPolicy": spec.get("restartPolicy", ""),
        "spec.schedulerName": spec.get("schedulerName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "spec.hostNetwork": "false",
        "status.phase": status.get("phase", ""),
        "status.podIP": status.get("podIP", ""),
        "status.nominatedNodeName": status.get("nominatedNodeName", ""),
    }.get(field)


def _event_field(obj: dict[str, Any], field: str) -> str | None:
    ref = obj.get("involvedObject") or obj.get("regarding") or {}
    if field.startswith(("involvedObject.", "regarding.")):
        return str(ref.get(field.partition(".")[2]) or "")
    source = obj.get("source") or obj.get("deprecatedSource") or {}
    return {
        "reason": obj.get("reason", ""),
        "reportingComponent": obj.get("reportingComponent") or obj.get("reportingController", ""),
        "source": source.get("component", ""),
        "type": obj.get("type", ""),
    }.get(field)


def _node_field(obj: dict[str, Any], field: str) -> str | None:
    if field == "spec.unschedulable":
        return "true" if obj["spec"].get("unschedulable") else "false"
    return None


FIELDS: dict[str, Callable[[dict[str, Any], str], str | None]] = {
    "Pod": _pod_field,
    "Event": _event_field,
    "Node": _node_field,
}


def field_value(kind: str, obj: dict[str, Any], field: str) -> str:
    if field in ("metadata.name", "metadata.namespace"):
        return _meta(obj, field.partition(".")[2])
    value = FIELDS[kind](obj, field) if kind in FIELDS else None
    if value is None:
        raise bad_request(f"field label not supported: {field}")
    return value


def equal_term(text: str, field: str) -> str | None:
    """The value of a ``field=value`` (or ``==``) term of a field selector, if it has one:
    the rows can be narrowed by it before the objects are made."""
    for raw in text.split(","):
        name, op, value = raw.partition("=")
        if op and not name.endswith("!") and name.strip() == field:
            return value.lstrip("=").strip() or None  # (unbound pods: no narrowing)
    return None


def parse_fields(text: str, kind: str) -> Callable[[dict[str, Any]], bool]:
    """fields.ParseSelector: ``a=b``, ``a==b``, ``a!=b`` terms, each a field label of
    ``kind`` (unknown: 400 ``field label not supported``)."""
    if len(text) > MAX_SELECTOR:
        raise bad_request(f"fieldSelector: longer than {MAX_SELECTOR} characters")
    terms: list[tuple[str, bool, str]] = []
    for raw in text.split(",") if text.strip() else []:
        for op in ("!=", "==", "="):
            if op in raw:
                field, _, value = raw.partition(op)
                terms.append((field.strip(), op == "!=", value.strip()))
                break
        else:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{raw}'")
    probe = {"metadata": {}, "spec": {}, "status": {}}
    for field, _neg, _value in terms:  # unknown fields refused before any object is read
        try:
            field_value(kind, probe, field)
        except (KeyError, AttributeError):
            pass
        except ApiError:
            raise
    return lambda obj: all(
        (field_value(kind, obj, f) != v) if neg else (field_value(kind, obj, f) == v)
        for f, neg, v in terms
    )
