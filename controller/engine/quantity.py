"""Kubernetes quantities and Go durations, parsed exactly.

Quantities port ``ParseQuantity`` / ``parseQuantityString`` / ``suffixHandler.interpret`` of
``k8s.io/apimachinery/pkg/api/resource`` (value semantics: a ``Fraction``, rounded up to
1n and capped for binary suffixes as Kubernetes does), ``Quantity.Value``/``MilliValue`` and
``Quantity.String`` for byte counts. Durations port Go's ``time.ParseDuration``, restricted to
the engine's resolution (whole milliseconds) and extended with bare numbers of seconds, the
way scenario files write times (``at: 100``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Literal

MAX_INT64 = 2**63 - 1
_NANO = 10**9

# suffixHandler tables: suffix -> exponent of 10 (decimal) or of 2 (binary)
_DECIMAL_EXPONENTS = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")  # parseQuantityString's suffix alphabet
_DIGITS = frozenset("0123456789")
_MAX_EXPONENT = 1000  # "1e999999" is a typo; Kubernetes would build the huge number

_QUANTITY_HINT = "e.g. 100m, 512Mi, 1.5Gi, 129e6"
_DURATION_HINT = "use e.g. 300s, 5m, 1m30s"

_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_NS_PER_MS = 1_000_000
_BARE_SECONDS = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DURATION_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?")
_PERCENT_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class QuantityError(ValueError):
    """Not a Kubernetes quantity (or percentage)."""


class DurationError(ValueError):
    """Not a duration the engine can use."""


def _quantity_error(s: str, reason: str) -> QuantityError:
    return QuantityError(f'"{s}" is not a Kubernetes quantity ({reason})')


def _suffix_reason(suffix: str) -> str:
    return f'unknown suffix "{suffix}"; use n u m k M G T P E, Ki Mi Gi Ti Pi Ei or e<exponent>'


def _scan_quantity(s: str) -> tuple[bool, str, str, str]:
    """Port of parseQuantityString: (positive, num, denom, suffix).

    One deliberate difference: Go accepts a missing number as 0 ("Gi", "-", ".", "e3" all
    parse as zero); a scenario file with such a value has a typo, so it is refused here."""
    positive, pos, end = True, 0, len(s)
    if pos < end and s[pos] in "+-":
        positive = s[pos] == "+"
        pos += 1
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos].lstrip("0") or "0"
    seen_digit = pos > start
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[start:pos]
        seen_digit = seen_digit or pos > start
    if not seen_digit:
        raise _quantity_error(s, f"no number; {_QUANTITY_HINT}")
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise _quantity_error(s, _suffix_reason(s[suffix_start:]))
    return positive, num, denom, s[suffix_start:]


def _interpret_suffix(s: str, suffix: str) -> tuple[int, int, bool]:
    """Port of suffixHandler.interpret: (base, exponent, is BinarySI)."""
    if suffix in _DECIMAL_EXPONENTS:
        return 10, _DECIMAL_EXPONENTS[suffix], False
    if suffix in _BINARY_EXPONENTS:
        return 2, _BINARY_EXPONENTS[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise _quantity_error(s, f"exponent beyond +-{_MAX_EXPONENT}")
        return 10, exponent, False
    raise _quantity_error(s, _suffix_reason(suffix))


def parse_quantity(s: str | int | float) -> Fraction:
    """Port of resource.ParseQuantity: the exact value of ``s``.

    ``"100m"`` -> 1/10, ``"16Gi"`` -> 17179869184, ``"129e6"``, ``"-1.5"``. As in Kubernetes a
    non-zero value is rounded up (away from zero) to a multiple of 1n ("0.1n" -> 1n), and a
    binary-suffixed one is capped at 2^63-1 in magnitude ("9Ei"). YAML numbers are taken as
    the text they would be sent as (``0.5`` -> "0.5"). Surrounding spaces are refused."""
    if isinstance(s, bool) or not isinstance(s, str | int | float):
        raise QuantityError(f"{s!r} is not a Kubernetes quantity")
    if isinstance(s, int):
        return Fraction(s)
    if isinstance(s, float):
        if not math.isfinite(s):
            raise QuantityError(f"{s!r} is not a Kubernetes quantity")
        s = repr(s)  # shortest round-trip text, as Go's JSON encoder writes floats
    return _parse_text(s)


@lru_cache(maxsize=4096)
def _parse_text(s: str) -> Fraction:
    """parse_quantity of a text. Cached: a big cluster repeats a few dozen texts thousands of
    times ("50m", "16Gi"), and a Fraction is immutable. (Only texts: True == 1 as a key.)"""
    if s == "":
        raise _quantity_error(s, "empty")
    if any(c.isspace() for c in s):
        raise _quantity_error(s, "no spaces allowed")
    positive, num, denom, suffix = _scan_quantity(s)
    base, exponent, binary = _interpret_suffix(s, suffix)
    value = Fraction(int(num + denom), 10 ** len(denom)) * Fraction(base) ** exponent
    if value.denominator > 1 and _NANO % value.denominator != 0:
        value = Fraction(math.ceil(value * _NANO), _NANO)  # amount.Round(Nano, RoundUp)
    if binary and value > MAX_INT64:
        value = Fraction(MAX_INT64)
    return value if positive else -value


def _ceil_away_from_zero(value: Fraction) -> int:
    magnitude = math.ceil(abs(value))
    return magnitude if value >= 0 else -magnitude


def quantity_to_int(s: str | int | float) -> int:
    """Port of Quantity.Value: the integer value, rounded up ("100m" -> 1).

    Negative fractions round away from zero, as the int64Amount form that ParseQuantity gives
    ordinary strings does ("-1500m" -> -2)."""
    if type(s) is str:
        return _int_text(s)
    return _ceil_away_from_zero(parse_quantity(s))


def milli_value(s: str | int | float) -> int:
    """Port of Quantity.MilliValue: thousandths, rounded up like ``Value`` ("0.5" -> 500)."""
    if type(s) is str:
        return _milli_text(s)
    return _ceil_away_from_zero(parse_quantity(s) * 1000)


@lru_cache(maxsize=4096)
def _int_text(s: str) -> int:
    return _ceil_away_from_zero(_parse_text(s))


@lru_cache(maxsize=4096)
def _milli_text(s: str) -> int:
    return _ceil_away_from_zero(_parse_text(s) * 1000)


BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
_DECIMAL_SUFFIXES = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}


def quantity_format(s: str | int | float) -> str:
    """The Format ParseQuantity gives a quantity, from its suffix: ``Ki``..``Ei`` BinarySI,
    an ``e``/``E`` exponent DecimalExponent, anything else (SI suffixes, plain numbers)
    DecimalSI. Quantity.String keeps it."""
    text = str(s)
    if text.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")):
        return BINARY_SI
    if re.fullmatch(r"[+-]?[0-9.]+[eE][+-]?[0-9]+", text):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def format_quantity(n: int, fmt: str) -> str:
    """Port of Quantity.String (CanonicalizeBytes) for an integer amount in ``fmt``: BinarySI
    as format_bytes; DecimalSI/DecimalExponent as the mantissa with trailing zeros moved into
    an exponent that is a multiple of 3 (``500000000`` -> ``500M`` / ``500e6``)."""
    if fmt == BINARY_SI:
        return format_bytes(n)
    if n == 0:
        return "0"
    amount, exponent = abs(n), 0
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    amount *= 10 ** (exponent % 3)
    exponent -= exponent % 3
    sign = "-" if n < 0 else ""
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
    if exponent > 18:  # beyond E: DecimalSI cannot say it, Go writes the exponent
        return f"{sign}{amount}e{exponent}"
    return f"{sign}{amount}{_DECIMAL_SUFFIXES[exponent]}"


def format_bytes(n: int) -> str:
    """Port of Quantity.String for ``resource.NewQuantity(n, resource.BinarySI)``, as the
    kubelet prints memory and storage usage ("Container x was using 1Gi").

    The largest binary suffix that divides ``n`` exactly ("1Gi", "1536Mi", "1500"); below
    1024 in magnitude CanonicalizeBytes switches to DecimalSI, which only matters for +-1000
    ("1k")."""
    if n == 0:
        return "0"
    if -1024 < n < 1024:
        return f"{n // 1000}k" if n % 1000 == 0 else str(n)
    amount, exponent = abs(n), 0
    while exponent < 60 and amount % 1024 == 0:
        amount //= 1024
        exponent += 10
    suffix = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}[exponent]
    return f"{'-' if n < 0 else ''}{amount}{suffix}"


def _duration_error(s: str | int | float, reason: str = _DURATION_HINT) -> DurationError:
    text = f'"{s}"' if isinstance(s, str) else repr(s)
    return DurationError(f"{text} is not a duration ({reason})")


def _parse_go_duration(s: str) -> Fraction:
    """Port of time.ParseDuration: nanoseconds (exact; Go truncates float fractions to 1 ns,
    which changes nothing for the whole-millisecond values the engine accepts)."""
    text = s
    negative = False
    if text[:1] in ("+", "-"):
        negative = text[0] == "-"
        text = text[1:]
    if text == "0":
        return Fraction(0)
    if text == "":
        raise _duration_error(s)
    total = Fraction(0)
    while text:
        m = _DURATION_NUMBER.match(text)
        assert m is not None  # the pattern matches the empty string
        whole, frac = m.group(1), m.group(2) or ""
        if not whole and not frac:
            raise _duration_error(s)
        text = text[m.end() :]
        i = 0
        while i < len(text) and text[i] != "." and text[i] not in _DIGITS:
            i += 1
        unit = text[:i]
        if unit not in _UNIT_NS:
            reason = "missing unit" if not unit else f'unknown unit "{unit}"'
            raise _duration_error(s, f"{reason}; {_DURATION_HINT}")
        text = text[i:]
        number = Fraction(int(whole or "0")) + Fraction(int(frac or "0"), 10 ** len(frac))
        total += number * _UNIT_NS[unit]
    return -total if negative else total


def parse_duration_ms(s: str | int | float) -> int:
    """A Go duration string ("5s", "1m30s", "300ms", "1.5s", "2h", "0") or a bare number of
    seconds (YAML ``at: 100`` or ``100.5``, also as a string), in whole milliseconds.

    Port of time.ParseDuration with two restrictions: durations are ``>= 0``, and they must
    be whole milliseconds (the engine's resolution: "100us" is refused, "1000us" is 1 ms)."""
    if isinstance(s, bool) or not isinstance(s, str | int | float):
        raise _duration_error(s)
    if isinstance(s, int | float):
        if isinstance(s, float) and not math.isfinite(s):  # (an int of any size is exact)
            raise _duration_error(s)
        ns = Fraction(repr(s)) * 1_000_000_000
    elif _BARE_SECONDS.fullmatch(s):
        ns = Fraction(s) * 1_000_000_000
    else:
        ns = _parse_go_duration(s)
    if ns < 0:
        raise _duration_error(s, "negative; durations here are >= 0")
    if ns > MAX_INT64:
        raise _duration_error(s, "longer than Go's largest duration (2562047h47m16.854s)")
    ms = ns / _NS_PER_MS
    if ms.denominator != 1:
        raise _duration_error(s, "not a whole number of milliseconds, the simulation's resolution")
    return int(ms)


def parse_percent_or_quantity(
    s: str | int | float,
) -> tuple[Literal["percent", "quantity"], Fraction]:
    """An eviction threshold value: ``"10%"`` -> ("percent", 1/10), ``"100Mi"`` ->
    ("quantity", 104857600).

    Follows ParseThresholdConfig's parseThresholdStatement/parsePercentage: a value ending in
    ``%`` is a percentage (all trailing ``%`` are stripped, as strings.TrimRight does); the
    fraction is exact here, the kubelet keeps it as ``float32(value) / 100``. Range checks
    (0-100 %, positive quantities) are the caller's, as in Kubernetes."""
    if isinstance(s, str) and s.endswith("%"):
        number = s.rstrip("%")
        if not _PERCENT_NUMBER.fullmatch(number):
            raise QuantityError(f'"{s}" is not a percentage (use e.g. 10%)')
        return "percent", Fraction(number) / 100
    return "quantity", parse_quantity(s)
