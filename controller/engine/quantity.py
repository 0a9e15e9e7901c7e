"""Kubernetes quantities (resource.Quantity) and Go durations, parsed exactly.

Port of k8s.io/apimachinery/pkg/api/resource ParseQuantity (value semantics) and of Go's
time.ParseDuration (restricted to whole milliseconds, the engine's resolution).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))(?P<suf>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$"
)
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_MS = {
    "ns": Fraction(1, 10**6),
    "us": Fraction(1, 1000),
    "µs": Fraction(1, 1000),
    "ms": Fraction(1),
    "s": Fraction(1000),
    "m": Fraction(60_000),
    "h": Fraction(3_600_000),
}


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


class DurationError(ValueError):
    """Not a duration."""


def parse_quantity(s: str | int | float) -> Fraction:
    """Port of resource.ParseQuantity: the exact value of ``s`` ("100m" -> 1/10, "1Gi")."""
    if isinstance(s, bool):
        raise QuantityError(f"{s!r} is not a Kubernetes quantity")
    if isinstance(s, int):
        return Fraction(s)
    if isinstance(s, float):
        if not math.isfinite(s):
            raise QuantityError(f"{s!r} is not a Kubernetes quantity")
        return Fraction(str(s))
    if not isinstance(s, str):
        raise QuantityError(f"{s!r} is not a Kubernetes quantity")
    m = _QUANTITY.match(s)
    if m is None:
        raise QuantityError(f'"{s}" is not a Kubernetes quantity')
    num = Fraction(m.group("num"))
    suf = m.group("suf") or ""
    if suf in _BINARY:
        return num * _BINARY[suf]
    if suf in _DECIMAL:
        return num * _DECIMAL[suf]
    return num * Fraction(10) ** int(suf[1:])  # exponent form, e.g. 129e6


def quantity_to_int(s: str | int | float) -> int:
    """Quantity.Value(): the integer value, rounded up."""
    return math.ceil(parse_quantity(s))


def milli_value(s: str | int | float) -> int:
    """Quantity.MilliValue(): thousandths, rounded up (cpu "100m" -> 100)."""
    return math.ceil(parse_quantity(s) * 1000)


def format_bytes(n: int) -> str:
    """A byte count as Kubernetes prints a binary quantity: the largest binary suffix that
    divides it exactly ("1Gi", "1536Mi"), else the plain number."""
    if n == 0:
        return "0"
    for suffix, size in reversed(_BINARY.items()):
        if n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)


def parse_duration_ms(s: str | int | float) -> int:
    """Go time.ParseDuration ("5m", "1m30s", "300ms") or bare seconds (YAML ``at: 100.5``),
    in whole milliseconds."""
    if isinstance(s, bool):
        raise DurationError(f"{s!r} is not a duration (use e.g. 300s, 5m, 1m30s)")
    if isinstance(s, int | float):
        if not math.isfinite(s) or s < 0:
            raise DurationError(f"{s!r} is not a duration (must be a number of seconds >= 0)")
        ms = Fraction(str(s)) * 1000
    elif isinstance(s, str):
        text = s.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            ms = Fraction(text) * 1000
        elif text == "0":
            ms = Fraction(0)
        else:
            pos = 0
            ms = Fraction(0)
            for m in _DURATION_PART.finditer(text):
                if m.start() != pos:
                    break
                ms += Fraction(m.group(1)) * _UNIT_MS[m.group(2)]
                pos = m.end()
            if pos != len(text) or not text:
                raise DurationError(f'"{s}" is not a duration (use e.g. 300s, 5m, 1m30s)')
    else:
        raise DurationError(f"{s!r} is not a duration (use e.g. 300s, 5m, 1m30s)")
    if ms.denominator != 1:
        raise DurationError(f'"{s}" is finer than a millisecond, the simulation\'s resolution')
    return int(ms)
