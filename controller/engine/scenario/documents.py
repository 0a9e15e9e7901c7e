"""Reading a scenario document: size limits, nesting limits (before the YAML loader recurses),
JSON fast path, libyaml with the pure-Python loader's messages for a refused document, then
``parse_scenario``."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from .. import safe_yaml, values
from .build import (
    parse_scenario,
)
from .model import (
    MAX_SCENARIO_BYTES,
    Scenario,
    ScenarioError,
)


# -- loading ------------------------------------------------------------------------------------
def load_scenario_file(filename: str) -> Scenario:
    import os

    try:
        size = os.path.getsize(filename)
    except OSError as exc:
        raise ScenarioError("", f"cannot read {filename}: {exc.strerror}") from None
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            "",
            f"{filename} is {size / 1e6:.1f} MB; a scenario may be at most "
            f"{MAX_SCENARIO_BYTES // (1024 * 1024)} MiB",
        )
    try:
        with open(filename, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise ScenarioError("", f"cannot read {filename}: {exc.strerror}") from None
    return load_scenario(text)


def load_scenario(text: str) -> Scenario:
    """Parse and validate a scenario document (or several: extra documents are objects)."""
    if len(text.encode("utf-8", errors="replace")) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            "", f"scenario is larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB"
        )
    docs = _json_documents(text)
    if docs is None:
        try:
            docs = safe_yaml.load_all(text, **_YAML_LIMITS)
        except yaml.YAMLError as exc:
            if len(text) > SLOW_PARSE_MAX:
                raise _malformed(exc, text) from None
            docs = _slow_parse_for_the_error(text)
    if not docs:
        raise ScenarioError("", "the file holds no YAML document")
    if values.text_may_hide_problems(text):  # a NUL or a lone surrogate, written as an escape
        for i, doc in enumerate(docs):
            bad = values.first_problem(doc, "" if i == 0 else f"(document {i + 1})", False)
            if bad:
                raise ScenarioError(*bad)
    scen_docs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"]
    if not scen_docs:
        raise ScenarioError("kind", 'no document has kind "Scenario"')
    root = scen_docs[0]
    extra_objects = [d for d in docs if d is not root]
    return parse_scenario(root, extra_objects)


# libyaml's loader parses a 1,000-node scenario four times faster than the pure-Python one (the
# same YAML 1.1 safe schema); the pure-Python loader's error messages name the offending
# character, so a document libyaml refuses is parsed again by it (for the message, or for the
# documents should it accept what libyaml did not).
FAST_LOADER = safe_yaml.FAST_LOADER
# Before anything is built: size (checked above with the scenario's own message), nesting (the
# composers recurse per level: a few hundred KB of ``[`` would crash the process), aliases
# (safe_yaml: an alias bomb), and duplicate mapping keys (the last would silently win; the API
# server's strict decoding refuses them).
_YAML_LIMITS: dict[str, Any] = {"max_bytes": 0, "unique_keys": True, "error": ScenarioError}


# The pure-Python loader takes ~6 s of CPU per MB: past this many characters a document libyaml
# refused is not parsed again; the error is libyaml's, with its line and column (the fuzzer's
# 230 KB refused scenario took 1.35 s of CPU in the second parse).
SLOW_PARSE_MAX = 128 * 1024


def _malformed(exc: yaml.YAMLError, text: str) -> ScenarioError:
    """The ScenarioError for a loader's error: where (line, column) and what."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow (binary, NUL)
        line = text.count("\n", 0, exc.position) + 1
        return ScenarioError(
            "", f"malformed YAML at line {line}: {exc.reason} character {exc.character!r}"
        )
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ScenarioError("", f"malformed YAML{where}: {problem}")


def _slow_parse_for_the_error(text: str) -> list[Any]:
    try:
        return safe_yaml.load_all(text, loader=yaml.SafeLoader, **_YAML_LIMITS)
    except yaml.YAMLError as exc:
        raise _malformed(exc, text) from None
    except RecursionError:
        raise ScenarioError("", "malformed YAML, nested too deeply") from None


# PyYAML's implicit float (YAML 1.1): a JSON number is a float only if YAML reads it so
# (``1e3`` and ``1.5e3`` are strings there), so a JSON file means the same either way.
_YAML_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _NotPlainJson(Exception):
    pass


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotPlainJson  # a duplicate key: the YAML path names it, with its line
    return out


def _json_constant(name: str) -> Any:
    """NaN, Infinity, -Infinity: not JSON, and plain strings in YAML (its floats are .nan and
    .inf), so strings here too: the same value either way, without a second parse (a 224 KB
    generated scenario with NaNs went to the pure-Python YAML loader: 1.35 s of CPU)."""
    return name


def _json_documents(text: str) -> list[Any] | None:
    """A scenario written as one JSON object (JSON is YAML; a generated big scenario often
    is JSON) read by the json module, ten times faster than libyaml, into the same values;
    None when the text is not such a document, or holds anything the YAML path must judge
    (a duplicate key, nesting over MAX_NESTING, a number YAML reads differently)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_json_pairs,
            parse_float=lambda v: float(v) if _YAML_FLOAT.match(v) else v,
            parse_constant=_json_constant,
        )
        check_nesting(doc, "")
    except (ValueError, RecursionError, _NotPlainJson, ScenarioError):
        return None
    return [doc]


MAX_NESTING = safe_yaml.MAX_DEPTH


def check_nesting(value: Any, path: str) -> None:
    """The same limit for data that arrives already parsed (a live action's JSON). Walked a
    level at a time, its mappings and lists only (its scalars are most of a big scenario)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > MAX_NESTING:
            raise ScenarioError(path, f"nested deeper than {MAX_NESTING} levels")
        inner = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, dict | list):
                    inner.append(child)
        level = inner
        depth += 1
