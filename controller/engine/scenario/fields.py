"""Typed field readers of the scenario loader: each reads one value at a path and refuses a
wrong one with that path (``spec.nodes[3].capacity.memory: "16GB" is not a Kubernetes quantity``)."""

from __future__ import annotations

import math
import re
from typing import Any

from ..quantity import DurationError, QuantityError, milli_value, parse_duration_ms, quantity_to_int
from ..values import INT32_MAX as INT32_MAX  # read from here by the other modules
from ..values import INT64_MAX, INT64_MIN, MAX_SECONDS, number_problem
from .model import (
    ScenarioError,
)

# -- per-object counts ------------------------------------------------------------------------
# How many items one object's list or map may hold, checked where it enters (the scenario's
# validation, which imports, live actions and Apply go through too; the kubectl import before
# it reads a list). Kubernetes caps none of them by count (only an object's size: 1.5 MiB in
# etcd, 256 KiB of annotations), but here the components walk them per pod and per node (a
# pod's tolerations against its node's taints, for every pod of the node, at each taint change),
# so one object with 12,500 taints kept a worker busy for minutes (issue #35). Each cap is
# several times what real clusters carry: a node has a handful of taints and a few dozen labels
# (a cloud node ~30), a pod a few tolerations, containers and owner references.
PER_OBJECT_CAPS: dict[str, tuple[int, str]] = {
    "taints": (64, "taints per node"),
    "tolerations": (64, "tolerations per pod"),
    "labels": (128, "labels per object"),
    "annotations": (128, "annotations per object"),
    "containers": (64, "containers per pod"),
    "initContainers": (64, "init containers per pod"),
    "nodeSelector": (64, "nodeSelector entries per pod"),
    "matchLabels": (64, "matchLabels entries per selector"),
    "ownerReferences": (16, "owner references per object"),
    "conditions": (64, "conditions per node"),
    "images": (256, "images per node"),
    "volumes": (256, "volumes per pod"),
}


def check_count(v: Any, path: str, field: str) -> None:
    """Refuses a list or map at ``path`` with more items than ``PER_OBJECT_CAPS[field]``
    allows (``spec.nodes[0].taints: 12500 items, at most 64 taints per node``). Anything
    else is left to the field's own reader."""
    most, what = PER_OBJECT_CAPS[field]
    if isinstance(v, list | dict) and len(v) > most:
        raise ScenarioError(path, f"{len(v)} items, at most {most} {what}")


# -- typed field readers ---------------------------------------------------------------------
def _map(v: Any, path: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ScenarioError(path, f"must be a mapping, got {_show(v)}")
    for k in v:
        if not isinstance(k, str):
            raise ScenarioError(path, f"keys must be strings, got {_show(k)}")
    return v


def _list(v: Any, path: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ScenarioError(path, f"must be a list, got {_show(v)}")
    return v


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str) or not v:
        raise ScenarioError(path, f"must be a non-empty string, got {_show(v)}")
    return v


def _int(v: Any, path: str, minimum: int | None = 0, maximum: int | None = None) -> int:
    """An integer field: an int64 in Kubernetes unless ``maximum`` says less (INT32_MAX for
    an int32 field; MAX_SECONDS for seconds Kubernetes turns into a time.Duration)."""
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and re.fullmatch(r"-?\d{1,30}", v.strip()):
            v = int(v)
        else:
            raise ScenarioError(path, f"must be an integer, got {_show(v)}")
    if not INT64_MIN <= v <= INT64_MAX:
        raise ScenarioError(path, number_problem(v))
    if minimum is not None and v < minimum:
        raise ScenarioError(path, f"must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ScenarioError(path, f"must be <= {maximum}, got {v}")
    return v


def _num(v: Any, path: str, minimum: float | None = 0.0, maximum: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ScenarioError(path, f"must be a number, got {_show(v)}")
    if isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX:
        raise ScenarioError(path, number_problem(v))
    if not math.isfinite(v):
        raise ScenarioError(path, f"must be a finite number, got {v}")
    if minimum is not None and v < minimum:
        raise ScenarioError(path, f"must be >= {minimum:g}, got {v:g}")
    if maximum is not None and v > maximum:
        raise ScenarioError(path, f"must be <= {maximum:g}, got {v:g}")
    return float(v)


def _bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        raise ScenarioError(path, f"must be true or false, got {_show(v)}")
    return v


def _dur(v: Any, path: str, minimum_ms: int = 0) -> int:
    try:
        ms = parse_duration_ms(v)
    except (DurationError, ValueError, TypeError) as exc:
        raise ScenarioError(path, str(exc)) from None
    if ms < minimum_ms:
        raise ScenarioError(path, f"must be at least {minimum_ms / 1000:g}s")
    return ms


def _qty(v: Any, path: str, milli: bool = False) -> int:
    try:
        n = milli_value(v) if milli else quantity_to_int(v)
    except (QuantityError, ValueError, TypeError):
        raise ScenarioError(path, f"{_show(v)} is not a Kubernetes quantity") from None
    if n < 0:
        raise ScenarioError(path, f"must not be negative, got {_show(v)}")
    if n > INT64_MAX:  # resource.Quantity: at most 2^63-1 (in milli-units where read so)
        raise ScenarioError(
            path, f"{_show(v)} is larger than a Kubernetes quantity holds (2^63-1{_MILLI[milli]})"
        )
    return n


_MILLI = {False: "", True: " milli-units"}


def _seconds(v: Any, path: str, minimum: int | None = 0) -> int:
    """Seconds that Kubernetes multiplies by time.Second (tolerationSeconds, grace periods)."""
    return _int(v, path, minimum=minimum, maximum=MAX_SECONDS)


def _show(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if v is None:
        return "nothing"
    return repr(v)


def _no_unknown(d: dict[str, Any], allowed: set[str], path: str) -> None:
    for k in d:
        if k not in allowed:
            raise ScenarioError(f"{path}.{k}" if path else k, "unknown field")


def resources(d: Any, path: str) -> dict[str, int]:
    """A resource list (cpu in millicores, the rest as integers)."""
    out: dict[str, int] = {}
    for k, v in _map(d, path).items():
        out[k] = _qty(v, f"{path}.{k}", milli=(k == "cpu"))
    return out
