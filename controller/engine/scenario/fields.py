"""Typed field readers of the scenario loader: each reads one value at a path and refuses a
wrong one with that path (``spec.nodes[3].capacity.memory: "16GB" is not a Kubernetes quantity``)."""

from __future__ import annotations

import math
import re
from typing import Any

from ..quantity import DurationError, QuantityError, milli_value, parse_duration_ms, quantity_to_int
from .model import (
    ScenarioError,
)


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


INT32_MAX = 2**31 - 1  # Kubernetes int32 fields (replicas)


def _int(v: Any, path: str, minimum: int | None = 0, maximum: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
            v = int(v)
        else:
            raise ScenarioError(path, f"must be an integer, got {_show(v)}")
    if minimum is not None and v < minimum:
        raise ScenarioError(path, f"must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ScenarioError(path, f"must be <= {maximum}, got {v}")
    return v


def _num(v: Any, path: str, minimum: float | None = 0.0, maximum: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ScenarioError(path, f"must be a number, got {_show(v)}")
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
    return n


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
