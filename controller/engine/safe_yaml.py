"""The one way the server reads YAML: PyYAML's safe loader behind limits on size, nesting depth,
node count and aliases, checked on the parser's events before anything is built, so that a
"billion laughs" document (anchors whose aliases nest: each level multiplies the tree) is
refused in milliseconds naming the limit, instead of being expanded by whatever walks it later.

The alias rule is go-yaml v3's (``decode.go``: ``allowedAliasRatio``, the fix of
CVE-2019-11253 that sigs.k8s.io/yaml, and so the API server, reads manifests with): a document
may reach up to 99% of its nodes through aliases while it is small (up to 400,000 decoded
nodes), only 10% once it is large (4,000,000), linearly in between. ``decoded`` counts every
node as the reader sees it, an alias counting as the whole tree it stands for; and the
decoded total itself is capped (MAX_NODES).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

# libyaml's parser, five times faster than the pure-Python one, with the same safe schema.
FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# libyaml's emitter, about three times faster than the pure-Python one: the same text for what
# the server writes (every built-in and shared scenario's events.yaml and manifests compared
# byte for byte; a 9,807-event timeline 5.3 s -> 1.8 s of CPU on a loaded machine).
FAST_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

MAX_BYTES = 64 * 1024 * 1024  # callers pass their own (the scenario limit, the import limit)
MAX_DEPTH = 64  # a scenario needs about 10 levels; the composers recurse per level (C stack)
MAX_NODES = 20_000_000  # decoded nodes, aliases expanded: a 5,000-node room is ~2.5 million
MAX_ALIASES = 100_000  # alias occurrences in one text
MIN_ALIASED = 10_000  # nodes reached through aliases that never matter, whatever the ratio


class YamlLimitError(ValueError):
    """A document over one of the limits: ``path`` is where the reader was, ``why`` names the
    limit."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}" if path else why)
        self.path = path
        self.why = why


def allowed_alias_ratio(decoded: int) -> float:
    """Port of go-yaml v3's allowedAliasRatio (decode.go)."""
    if decoded <= 400_000:
        return 0.99
    if decoded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decoded - 400_000) / 3_600_000


class _Frame:
    __slots__ = ("anchor", "is_map", "key_next", "keys", "last", "path", "start")

    def __init__(self, is_map: bool, path: str, anchor: str | None, start: int) -> None:
        self.is_map = is_map
        self.path = path
        self.anchor = anchor
        self.start = start  # decoded nodes before this collection
        self.key_next = True
        self.keys: set[str] = set()
        self.last: Any = 0


def _child_path(stack: list[_Frame]) -> str:
    if not stack:
        return ""
    top = stack[-1]
    if top.is_map:
        return f"{top.path}.{top.last}" if top.path else str(top.last)
    return f"{top.path}[{top.last}]"


def check_events(
    text: str | bytes,
    loader: Any = FAST_LOADER,
    *,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_aliases: int = MAX_ALIASES,
    unique_keys: bool = False,
) -> None:
    """Walk the parser's events (the parser does not recurse) and raise YamlLimitError at the
    first limit passed; with ``unique_keys`` a mapping key given twice is refused too (the
    last would silently win; the API server's strict decoding refuses it). A syntax error
    raises yaml.YAMLError, as loading would."""
    stack: list[_Frame] = []
    anchors: dict[str, int] = {}  # anchor -> decoded nodes of its tree
    decoded = aliased = aliases = 0
    for event in yaml.parse(text, Loader=loader):
        kind = type(event)
        if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(stack) >= max_depth:
                line = event.start_mark.line + 1
                why = f"nested deeper than {max_depth} levels at line {line}"
                raise YamlLimitError("", why)  # the path would be as long as the nesting
            decoded += 1
            frame = _Frame(kind is yaml.MappingStartEvent, _child_path(stack), event.anchor, 0)
            frame.start = decoded - 1
            stack.append(frame)
            continue
        if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            done = stack.pop()
            if done.anchor is not None:
                anchors[done.anchor] = decoded - done.start
        elif kind is yaml.ScalarEvent:
            decoded += 1
            if event.anchor is not None:
                anchors[event.anchor] = 1
            top = stack[-1] if stack else None
            if top is not None and top.is_map and top.key_next:
                if unique_keys and event.value in top.keys:
                    where = f"{top.path}.{event.value}" if top.path else event.value
                    line = event.start_mark.line + 1
                    raise YamlLimitError(where, f"duplicate key (again at line {line})")
                top.keys.add(event.value)
                top.last = event.value
        elif kind is yaml.AliasEvent:
            size = anchors.get(event.anchor, 1)  # an unknown anchor: the loader says so
            aliases += 1
            aliased += size
            decoded += size
            if (
                aliases > max_aliases
                or decoded > max_nodes
                or (aliased > MIN_ALIASED and aliased / decoded > allowed_alias_ratio(decoded))
            ):
                line = event.start_mark.line + 1
                if aliases > max_aliases:
                    why = f"more than {max_aliases} aliases"
                elif decoded > max_nodes:
                    why = f"more than {max_nodes} nodes, aliases expanded"
                else:
                    why = f"aliases expand to {aliased} of its {decoded} nodes (an alias bomb?)"
                raise YamlLimitError(_child_path(stack), f"{why} at line {line}")
        else:
            if kind is yaml.DocumentStartEvent:
                stack, anchors = [], {}
            continue
        if decoded > max_nodes:
            line = event.start_mark.line + 1
            raise YamlLimitError(_child_path(stack), f"more than {max_nodes} nodes at line {line}")
        if stack:  # the node just ended was a key, a value or an item of the collection on top
            top = stack[-1]
            if top.is_map:
                top.key_next = not top.key_next
            else:
                top.last += 1


def load_all(
    text: str | bytes,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_aliases: int = MAX_ALIASES,
    unique_keys: bool = False,
    loader: Any = FAST_LOADER,
    error: Callable[[str, str], Exception] = YamlLimitError,
) -> list[Any]:
    """Every non-empty document of ``text``, read by the safe loader once the text has passed
    the limits (``error(path, why)`` is raised otherwise; a syntax error raises
    yaml.YAMLError)."""
    try:
        size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # libyaml reads UTF-8: a lone surrogate is not text
        assert isinstance(text, str)
        line = text.count("\n", 0, exc.start) + 1
        char = f"\\u{ord(text[exc.start]):04x}"
        raise error("", f"a lone surrogate ({char}) at line {line} is not text") from None
    if max_bytes > 0 and size > max_bytes:
        raise error("", f"the YAML text is {size} bytes, more than {max_bytes}")
    try:
        check_events(
            text,
            loader,
            max_depth=max_depth,
            max_nodes=max_nodes,
            max_aliases=max_aliases,
            unique_keys=unique_keys,
        )
    except YamlLimitError as exc:
        if error is YamlLimitError:
            raise
        raise error(exc.path, exc.why) from None
    return [d for d in yaml.load_all(text, Loader=loader) if d is not None]


def load(text: str | bytes, **limits: Any) -> Any:
    """The single document of ``text`` (None for an empty one), as ``yaml.safe_load``, within
    the limits."""
    docs = load_all(text, **limits)
    if len(docs) > 1:
        raise yaml.YAMLError("expected a single document in the stream")
    return docs[0] if docs else None
