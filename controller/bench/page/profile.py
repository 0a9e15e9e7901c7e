"""pagebench --profile: during the steady state, Chromium's sampling profiler over a CDP
session (Profiler domain), written as a .cpuprofile (DevTools' Performance panel and
speedscope open it) and summed up as the functions with the most self time; and a trace
(devtools.timeline, as DevTools' Performance panel records), summed up as the renderer main
thread's self time per kind of work (script, style, layout, paint, ...): the profiler shows the
browser's own rendering work only as "(program)"."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from .probe import Run

TOP = 15


def self_times(profile: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(function at file:line, self ms, % of the profile) for the functions with the most self
    time, heaviest first; "(program)" is the browser's own work outside JS (style, layout,
    paint, parsing), "(idle)" the main thread waiting."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    per_node: dict[int, float] = defaultdict(float)
    for node_id, delta in zip(profile.get("samples", []), profile.get("timeDeltas", [])):
        per_node[node_id] += delta / 1000
    per_fn: dict[str, float] = defaultdict(float)
    for node_id, ms in per_node.items():
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] or "(anonymous)"
        url = frame.get("url", "")
        where = f" {url.rsplit('/', 1)[-1]}:{frame['lineNumber'] + 1}" if url else ""
        per_fn[name + where] += ms
    total = sum(per_fn.values()) or 1.0
    top = sorted(per_fn.items(), key=lambda kv: -kv[1])[:TOP]
    return [(fn, ms, 100 * ms / total) for fn, ms in top]


def main_thread_work(trace: dict[str, Any]) -> tuple[float, list[tuple[str, float, float]]]:
    """The trace's span (ms) and, for the renderer's main thread, the self time of each kind
    of event (its time minus that of the events nested in it), heaviest first: (name, ms, % of
    the span). "RunTask" left over is the task's own bookkeeping."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
        and e.get("args", {}).get("name") == "CrRendererMain"
    }  # fmt: skip
    spans = sorted(
        ((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
         if e.get("ph") == "X" and "dur" in e and (e.get("pid"), e.get("tid")) in mains),
        key=lambda x: (x[0], -x[1]),
    )  # fmt: skip
    per: dict[str, float] = defaultdict(float)
    stack: list[list[Any]] = []  # open events: [start, end, name, time of the nested ones]
    for start, end, name in spans:
        while stack and stack[-1][1] <= start:
            s, e, n, nested = stack.pop()
            per[n] += (e - s - nested) / 1000
        if stack:
            stack[-1][3] += min(end, stack[-1][1]) - start
        stack.append([start, end, name, 0.0])
    for s, e, n, nested in stack:
        per[n] += (e - s - nested) / 1000
    ts = [e["ts"] for e in events if "ts" in e and e.get("ph") != "M"]
    span = (max(ts) - min(ts)) / 1000 if ts else 0.0
    top = sorted(per.items(), key=lambda kv: -kv[1])[:TOP]
    return span, [(name, ms, 100 * ms / (span or 1.0)) for name, ms in top]


CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "cc", "gpu"]


class Profiler:
    """The CPU profile and the trace, started together after the warmup."""

    def __init__(self, browser: Any, context: Any, page: Any) -> None:
        self.browser = browser
        self.page = page
        self.cdp = context.new_cdp_session(page)
        self.started = False

    def start(self) -> None:
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 500})  # microseconds
        self.cdp.send("Profiler.start")
        self.browser.start_tracing(page=self.page, categories=CATEGORIES)
        self.started = True

    def stop(self, run: Run, path: Path) -> None:
        if not self.started:
            return
        profile = self.cdp.send("Profiler.stop")["profile"]
        trace = json.loads(self.browser.stop_tracing())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(profile))
        trace_path = path.with_suffix(".trace.json")
        trace_path.write_text(json.dumps(trace))
        run.profile = f"{path}, {trace_path}"
        run.profile_top = self_times(profile)
        run.trace_span, run.trace_top = main_thread_work(trace)
