"""What every fuzz target shares: the example count (FUZZ_EXAMPLES: a few hundred in CI,
10,000 for `make fuzz`), the Hypothesis settings, the strategies of JSON/YAML values, and the
tally: each input is accepted, or refused with the field's path, within a second of CPU; an
exception of any other kind, or a second past, is counted (never raised at once, so the run
reports every count) and fails the target at its end. The wall time is reported beside it."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
SLOW_S = 1.0

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # timed by the tally: a slow example is counted, not raised
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)

# JSON values as a websocket message or a parsed document can hold them: the edge cases
# included (huge and negative integers, NaN, infinities, lone surrogates, NUL, empty text).
EDGE_NUMBERS = st.sampled_from(
    [0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**30, 10**400, 1e308, -1e308, 1e-320, 0.5]
)
EDGE_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800",
        "a\udfffb",
        "1e308",
        "99999999999999999999999Ei",
        "NaN",
        "-5s",
        "1h",
        "9999999999999999999h",
        "16Gi",
        "zone-a",
        "n-1",
        "default/web",
        "Deployment/web",
        "x" * 300,
        "{",
        "[",
        "*a",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    EDGE_NUMBERS,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    EDGE_TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), EDGE_TEXT), inner, max_size=4),
    ),
    max_leaves=12,
)


@dataclass
class Tally:
    target: str
    examples: int = 0
    accepted: int = 0
    refused: int = 0
    slowest: float = 0.0  # CPU seconds of this process (every thread: the consumer's too)
    slowest_wall: float = 0.0
    unhandled: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)

    def judge(
        self,
        what: Any,
        run: Callable[[], Any],
        refusal: type[BaseException] | tuple[type[BaseException], ...],
        refused_ok: Callable[[BaseException], bool] = lambda exc: True,
    ) -> Any:
        """Run ``run``: accepted (its value is returned), refused (``refusal`` whose message
        passes ``refused_ok``: it names the field), or counted as unhandled; timed."""
        self.examples += 1
        start, start_cpu = time.perf_counter(), time.process_time()
        result = None
        try:
            result = run()
            self.accepted += 1
        except refusal as exc:
            if refused_ok(exc):
                self.refused += 1
            else:
                self.unhandled.append(f"refusal without a field path: {exc!r} for {what!r:.300}")
        except Exception:
            self.unhandled.append(f"{traceback.format_exc(limit=-4)}\nfor {what!r:.300}")
        # The time an input costs is the CPU it takes: on a shared machine the wall time of a
        # cheap input can pass a second while the process waits for a core.
        took, wall = time.process_time() - start_cpu, time.perf_counter() - start
        self.slowest, self.slowest_wall = max(self.slowest, took), max(self.slowest_wall, wall)
        if took > SLOW_S:
            self.slow.append(f"{took:.2f} s CPU ({wall:.2f} s wall) for {what!r:.200}")
        return result

    def report(self) -> None:
        line = (
            f"fuzz {self.target}: {self.examples} examples, {self.accepted} accepted, "
            f"{self.refused} refused, {len(self.unhandled)} unhandled, {len(self.slow)} over "
            f"{SLOW_S:g} s (slowest {self.slowest:.3f} s CPU, {self.slowest_wall:.3f} s wall)"
        )
        print("\n" + line)
        with open(os.environ.get("FUZZ_REPORT", os.devnull), "a") as out:
            out.write(line + "\n")
        assert not self.unhandled, "\n\n".join(self.unhandled[:5])
        assert not self.slow, "\n".join(self.slow[:5])


def mutate(doc: Any, data: st.DataObject) -> Any:
    """One random change somewhere in ``doc`` (a copy): a value replaced by a random one, a key
    removed, or a key added."""
    import copy

    doc = copy.deepcopy(doc)
    paths: list[list[Any]] = []
    stack: list[tuple[Any, list[Any]]] = [(doc, [])]
    while stack:
        node, path = stack.pop()
        paths.append(path)
        if isinstance(node, dict):
            stack.extend((v, [*path, k]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
    path = data.draw(st.sampled_from(paths), label="path")
    if not path:
        return data.draw(JSON, label="document")
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    how = data.draw(st.sampled_from(["replace", "delete", "add"]), label="how")
    if how == "replace" or not isinstance(parent, dict | list):
        parent[path[-1]] = data.draw(JSON, label="value")
    elif how == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.one_of(st.text(max_size=8), EDGE_TEXT), label="key")] = data.draw(
            JSON, label="value"
        )
    else:
        parent.append(data.draw(JSON, label="value"))
    return doc


def as_text(doc: Any, data: st.DataObject) -> str:
    """A document as YAML or JSON text (as a client would send it)."""
    import json

    import yaml

    form = data.draw(st.sampled_from(["yaml", "json"]), label="format")
    if form == "yaml":
        try:
            return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False)
        except Exception:
            form = "json"
    return json.dumps(doc)
