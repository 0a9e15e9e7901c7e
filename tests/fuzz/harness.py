"""What every fuzz target shares: the example count (FUZZ_EXAMPLES: a few hundred in CI,
10,000 for `make fuzz`), the Hypothesis settings, the strategies of JSON/YAML values, and the
tally: each input is accepted, or refused with the field's path, within a second of CPU; an
exception of any other kind, or a second past, is counted (never raised at once, so the run
reports every count) and fails the target at its end. The wall time is reported beside it.

Every unhandled or slow input is saved whole, one file per input (its repr, after a header
naming the target and what it did), in FUZZ_INPUTS (by default `.fuzz-inputs` next to
FUZZ_REPORT, else `test-artifacts/fuzz-inputs`); the report names each file. To replay:
`FUZZ_REPLAY=FILE_OR_DIR pytest -q -p no:randomly tests/fuzz`: each target then judges only
its saved inputs (the others run none), and `load_input(FILE)` gives one back as a value.

The CPU of full (generation 2) garbage collections during an input is not charged to it: a
full collection walks every object of the process, and Hypothesis keeps a record of each
example it ran (at 10,000 examples, millions of objects), so it costs what the run has
accumulated (0.4 s of CPU after 1,500 examples of the import target, up to 2.1 s at 10,000),
whichever cheap input it lands in: replayed alone, inputs that had taken 0.25-0.46 s took under
0.06 s. Younger collections stay counted, and so do
the input's own allocations. The report gives the longest full collection apart."""

from __future__ import annotations

import gc
import hashlib
import math
import os
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
SLOW_S = float(os.environ.get("FUZZ_SLOW_S", "1.0"))  # lower it to hunt what is slowest
REPO = Path(__file__).resolve().parents[2]


# CPU seconds of full (generation 2) collections so far: see the module's docstring.
_FULL_GC = {"start": 0.0, "total": 0.0}


def _time_full_collections(phase: str, info: dict[str, int]) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        _FULL_GC["start"] = time.process_time()
    else:
        _FULL_GC["total"] += time.process_time() - _FULL_GC["start"]


gc.callbacks.append(_time_full_collections)


def inputs_dir() -> Path:
    """Where unhandled and slow inputs are saved (see the module's docstring)."""
    if os.environ.get("FUZZ_INPUTS"):
        return Path(os.environ["FUZZ_INPUTS"])
    if os.environ.get("FUZZ_REPORT"):
        return Path(os.environ["FUZZ_REPORT"]).parent / ".fuzz-inputs"
    return REPO / "test-artifacts" / "fuzz-inputs"


def save_input(target: str, verdict: str, what: Any) -> Path:
    """Write ``what`` whole (its repr) under a header of comments; the name is the target and
    a hash of the input, so the same input found twice is one file."""
    text = repr(what)
    name = re.sub(r"[^a-z0-9]+", "-", target.lower()).strip("-")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = inputs_dir() / f"{name}-{digest}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "".join(f"# {line}\n" for line in [f"fuzz target: {target}", *verdict.splitlines()])
    path.write_text(header + text + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def load_input(path: str | Path) -> Any:
    """An input saved by ``save_input``, as the value it was (the header is comments; NaN and
    the infinities are the only names a repr of JSON-like values holds)."""
    text = Path(path).read_text(encoding="utf-8", errors="surrogatepass")
    return eval(text, {"__builtins__": {}, "nan": math.nan, "inf": math.inf})


def target_of(path: Path) -> str:
    first = path.read_text(encoding="utf-8", errors="surrogatepass").split("\n", 1)[0]
    return first.removeprefix("# fuzz target: ")


def replayed(target: str) -> list[Any] | None:
    """The saved inputs of ``target`` named by FUZZ_REPLAY (files or directories, separated by
    the path separator), or None when FUZZ_REPLAY is not set."""
    if not os.environ.get("FUZZ_REPLAY"):
        return None
    files: list[Path] = []
    for entry in os.environ["FUZZ_REPLAY"].split(os.pathsep):
        p = Path(entry)
        files.extend(sorted(p.glob("*.txt")) if p.is_dir() else [p])
    return [load_input(f) for f in files if target_of(f) == target]


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
    """One target's count. ``run`` takes an input (``what``: the whole of it, as saved and
    replayed); ``refusal`` is the exception that refuses it, whose message must pass
    ``refused_ok`` (it names the field)."""

    target: str
    run: Callable[[Any], Any]
    refusal: type[BaseException] | tuple[type[BaseException], ...]
    refused_ok: Callable[[BaseException], bool] = lambda exc: True
    examples: int = 0
    accepted: int = 0
    refused: int = 0
    slowest: float = 0.0  # CPU seconds of this process (every thread: the consumer's too)
    slowest_wall: float = 0.0
    full_gc: float = 0.0  # the most CPU that full collections took during one input
    unhandled: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)  # one line per saved input, naming its file

    def judge(self, what: Any) -> Any:
        """Run ``what``: accepted (its value is returned), refused, or counted as unhandled;
        timed. An unhandled or slow input is saved whole."""
        self.examples += 1
        start, start_cpu, start_gc = time.perf_counter(), time.process_time(), _FULL_GC["total"]
        result = None
        failure = None
        try:
            result = self.run(what)
            self.accepted += 1
        except self.refusal as exc:
            if self.refused_ok(exc):
                self.refused += 1
            else:
                failure = f"refusal without a field path: {exc!r}"
        except Exception:
            failure = traceback.format_exc(limit=-4)
        # The time an input costs is the CPU it takes: on a shared machine the wall time of a
        # cheap input can pass a second while the process waits for a core.
        full_gc = _FULL_GC["total"] - start_gc
        took = time.process_time() - start_cpu - full_gc
        wall = time.perf_counter() - start
        self.full_gc = max(self.full_gc, full_gc)
        self.slowest, self.slowest_wall = max(self.slowest, took), max(self.slowest_wall, wall)
        if failure is not None:
            summary = f"unhandled: {failure.strip().splitlines()[-1]:.200}"
            path = self._save(summary, f"{summary}\n{failure}", what)
            self.unhandled.append(f"{failure}\nfor {what!r:.300}\n(whole input: {path})")
        if took > SLOW_S:
            times = f"{took:.2f} s CPU ({wall:.2f} s wall, {full_gc:.2f} s full GC not counted)"
            path = self._save(f"over {SLOW_S:g} s: {times}", f"over {SLOW_S:g} s: {times}", what)
            self.slow.append(f"{times} for {what!r:.200} (whole input: {path})")
        return result

    def _save(self, summary: str, verdict: str, what: Any) -> Path:
        path = save_input(self.target, verdict, what)
        try:
            shown = path.relative_to(Path.cwd())
        except ValueError:
            shown = path
        self.saved.append(f"  {summary}: {shown}")
        return shown

    def fuzz(self, one: Callable[[], None]) -> None:
        """Run ``one`` (the Hypothesis test, which calls ``judge``), or only the saved inputs
        FUZZ_REPLAY names; then report."""
        saved = replayed(self.target)
        if saved is None:
            one()
        else:
            for what in saved:
                self.judge(what)
        self.report()

    def report(self) -> None:
        line = (
            f"fuzz {self.target}: {self.examples} examples, {self.accepted} accepted, "
            f"{self.refused} refused, {len(self.unhandled)} unhandled, {len(self.slow)} over "
            f"{SLOW_S:g} s (slowest {self.slowest:.3f} s CPU, {self.slowest_wall:.3f} s wall; "
            f"full garbage collections, not counted: up to {self.full_gc:.3f} s)"
        )
        lines = "\n".join([line, *self.saved])
        print("\n" + lines)
        with open(os.environ.get("FUZZ_REPORT", os.devnull), "a") as out:
            out.write(lines + "\n")
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
