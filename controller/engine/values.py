"""One validation of every value that is stored or sent: text and numbers that the database
(PostgreSQL's text and jsonb), the JSON encoders (orjson refuses lone surrogates and integers
past 64 bits) and Kubernetes itself take. Checked where a value enters (scenario, action,
parameters, lesson answer, admin), each refusal naming the field's path.

The ranges are Kubernetes' own: int32 and int64 fields as their Go types, quantities as
``resource.Quantity`` holds them (at most 2^63-1 in magnitude, README of
k8s.io/apimachinery/pkg/api/resource), rates as kube-controller-manager reads its float32 flags
(``--node-eviction-rate``: pflag's Float32Var, strconv.ParseFloat(s, 32), which refuses a value
beyond float32's range), and a rate's interval (1/qps) a Go time.Duration can hold (the token
bucket's delay between two evictions).
"""

from __future__ import annotations

import math
import re
from typing import Any

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT32_MAX = 3.4028234663852886e38
# The longest time.Duration (int64 nanoseconds): about 292 years.
MAX_DURATION_S = INT64_MAX / 1e9
# Seconds that Kubernetes turns into a time.Duration (tolerationSeconds, grace periods):
# ``time.Duration(s) * time.Second`` wraps around past this.
MAX_SECONDS = INT64_MAX // 10**9
# A token bucket's interval between tokens is 1/qps seconds: below this rate it overflows.
MIN_RATE = 1 / MAX_DURATION_S

NUL_WHY = "contains a NUL character (\\u0000), which cannot be stored"


def text_problem(value: str) -> str:
    """Why a string cannot be stored or sent ("" when it can)."""
    if "\x00" in value:
        return NUL_WHY
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        return (
            f"contains a lone surrogate (\\u{ord(bad):04x}) at character {exc.start}, "
            "which is not text (UTF-8 cannot encode it)"
        )
    return ""


def number_problem(value: int | float) -> str:
    """Why a number cannot be stored or sent as JSON ("" when it can)."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{value!r} is not a finite number (JSON has no NaN or Infinity)"
        return ""
    if not INT64_MIN <= value <= INT64_MAX:
        return f"{short_int(value)} is outside the 64-bit integer range"
    return ""


def short_int(n: int) -> str:
    """An integer for a message: its first digits and how many there are, past 24."""
    digits = str(n)
    return digits if len(digits) <= 24 else f"{digits[:8]}... ({len(digits)} digits)"


def shown(key: str) -> str:
    """A key as a path may show it: a NUL or a lone surrogate escaped (the refusal itself must
    be text that can be sent)."""
    if not text_problem(key):
        return key
    return key.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\u0000")


# How a NUL or a lone surrogate can be written in YAML or JSON text (escapes), or be in a str
# already: only a text that matches needs its parsed values walked.
_HIDING = re.compile(
    r"\\(0|x00|u0000|U00000000|u[dD][89a-fA-F][0-9a-fA-F]{2}|U0000[dD][89a-fA-F][0-9a-fA-F]{2})"
    r"|[\x00\ud800-\udfff]"
)


def text_may_hide_problems(text: str) -> bool:
    """Whether ``text`` matches _HIDING. A text with no backslash, no NUL and only ASCII (a
    generated scenario, usually) cannot, and says so without the regex's scan of every
    character (a sixth of the form's check of a 1,000-node scenario)."""
    if "\\" not in text and "\x00" not in text and text.isascii():
        return False
    return _HIDING.search(text) is not None


def first_problem(value: Any, path: str, numbers: bool = True) -> tuple[str, str] | None:
    """(path, why) of the first string, mapping key or (``numbers``) number under ``value``
    that cannot be stored or sent; None when everything can."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            why = text_problem(item)
            if why:
                return where, why
        elif isinstance(item, int | float):
            why = number_problem(item) if numbers else ""
            if why:
                return where, why
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                part = shown(key) if isinstance(key, str) else str(key)
                child_path = f"{where}.{part}" if where else part
                stack.append((child, child_path))
                if isinstance(key, str):
                    stack.append((key, child_path))
        elif isinstance(item, list | tuple):
            stack.extend((c, f"{where}[{i}]") for i, c in reversed(list(enumerate(item))))
    return None


def rate_problem(value: float, flag: str) -> str:
    """A kube-controller-manager eviction rate (a float32 flag, nodes per second)."""
    if value > FLOAT32_MAX:
        return f"{value:g} is out of range for {flag} (a float32: at most {FLOAT32_MAX:.7g})"
    if 0 < value < MIN_RATE:
        return (
            f"{value:g} nodes/s would wait longer between two evictions than a Go "
            f"time.Duration holds ({MAX_DURATION_S:.4g} s); use 0 to stop evictions"
        )
    return ""
