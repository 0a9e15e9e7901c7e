"""pagebench's figures: the table row of each sample, the summary, the samples as CSV."""

from __future__ import annotations

import csv
import math
import os
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..stats import percentile
from .probe import Message, Run, Sample, ServerClock, Span

# Stack log lines worth reporting (Celery's level tags, Python and Daphne failures).
HTTP_ERROR = re.compile(r'"(\w+ \S+)" ([45]\d\d) ')
LOG_PROBLEMS = ("ERROR/", "CRITICAL/", "WARNING/", "Traceback", "Exception inside")


def slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope of ys over xs, and its standard error."""
    n = len(xs)
    if n < 3:
        return 0.0, math.inf
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    resid = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return b, math.sqrt(resid / (n - 2) / sxx)


def stats(values: list[float]) -> tuple[float, float, float]:
    return statistics.fmean(values), percentile(values, 0.95), max(values)


def mib(n: float | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


def report(
    run: Run, log_copy: Path, screenshot: Path, csv_path: Path, w: Callable[[str], Any]
) -> None:
    """The summary of a run, a line at a time to ``w``; the samples to ``csv_path``."""
    speed = run.speed
    first, last = run.samples[0], run.samples[-1]
    kept = [s for s in run.samples if s.t >= run.warmup] or run.samples
    span = kept[-1].t - kept[0].t
    wall = last.t - first.t
    clock = last.server  # anchors unchanged since the resume
    p0, p1 = first.page, last.page
    messages = [m for s in run.samples for m in s.messages]
    from_ms = run.start_epoch_ms + kept[0].t * 1000
    to_ms = run.start_epoch_ms + kept[-1].t * 1000
    deltas = [m for m in messages if m.type == "delta" and from_ms <= m.done <= to_ms]

    def line(label: str, vals: list[float]) -> None:
        mean, p95, mx = stats(vals)
        w(f"  {label:<40} mean {mean:6.2f}  p95 {p95:6.2f}  max {mx:6.2f} sim s"
          f" = {mean / speed:5.2f} / {p95 / speed:5.2f} / {mx / speed:5.2f} wall s")  # fmt: skip

    def trend(label: str, xs: list[float], ys: list[float]) -> None:
        b, se = slope(xs, ys)
        # Growing: clearly positive (3 standard errors) and worth more than a tick over the run.
        growing = b > 3 * se and b * span > speed * run.tick
        w(f"  {label:<40} {b:+.4f} sim s per wall s (± {se:.4f}), {b * span:+.2f} sim s over"
          f" {span:.0f} s -> {'GROWING' if growing else 'not growing'}")  # fmt: skip

    w("")
    w(f"pagebench: {run.nodes} nodes ({p1['nodes']} on the page, {p1['pods']} pods) at"
      f" {speed:g}x, tick {run.tick:g} s, {wall:.0f} wall s sampled; figures below leave out"
      f" the first {run.warmup:g} s")  # fmt: skip
    w(f"  machine: {os.cpu_count()} CPUs, load average at the end"
      f" {' / '.join(f'{x:.2f}' for x in os.getloadavg())} (1 / 5 / 15 min; other work skews the figures)")  # fmt: skip
    w(f"  setup: stack {run.setup.get('stack', 0):.1f} s, room creation"
      f" {run.setup.get('create', 0):.1f} s, page load + snapshot {run.setup.get('snapshot', 0):.1f} s")  # fmt: skip
    w(f"  simulated time: server clock {first.server.target_s:.1f} -> {last.server.target_s:.1f} s,"
      f" page simT {first.page_sim:.1f} -> {last.page_sim:.1f} s")  # fmt: skip
    w(" sampled once a second (one phase of the tick's sawtooth):")
    line("lag = server clock - page simT", [s.lag for s in kept])
    line("  worker share (clock - Room.sim_ms)", [s.worker_lag for s in kept])
    line("  delivery + page share (sim_ms - simT)", [s.delivery_lag for s in kept])
    trend("lag trend (samples)", [s.t for s in kept], [s.lag for s in kept])
    half = len(kept) // 2
    w(f"  lag mean, first half {statistics.fmean(s.lag for s in kept[:half]):.2f} sim s,"
      f" second half {statistics.fmean(s.lag for s in kept[half:]):.2f} sim s")  # fmt: skip
    shown = [s.shown_clock - s.server.target_s for s in kept if s.shown_clock is not None]
    if shown:
        w(f"  clock shown on the page - server clock: mean {statistics.fmean(shown):+.2f},"
          f" min {min(shown):+.2f}, max {max(shown):+.2f} sim s")  # fmt: skip
    if len(deltas) >= 3:
        w(" from every delta the page handled (continuous, no sampling phase):")
        grid = continuous_lag(messages, clock, from_ms, to_ms)
        line("lag over time (50 ms grid)", grid)
        line("lag right after each delta applied", [clock.at(m.done) - (m.sim_t or 0) for m in deltas])  # fmt: skip
        ages = [clock.at(m.arrived) - m.t for m in deltas if m.t is not None]
        line("delta's age on arrival (tick -> ws)", ages)
        handle = [m.handle_ms for m in deltas]
        w(f"  {'page handler time per delta':<40} mean {statistics.fmean(handle):6.1f}"
          f"  p95 {percentile(handle, 0.95):6.1f}  max {max(handle):6.1f} ms")  # fmt: skip
        gaps = [(b.done - a.done) / 1000 for a, b in zip(deltas, deltas[1:])]
        w(f"  {'wall time between deltas applied':<40} mean {statistics.fmean(gaps):6.2f}"
          f"  p95 {percentile(gaps, 0.95):6.2f}  max {max(gaps):6.2f} s")  # fmt: skip
        xs = [(m.done - run.start_epoch_ms) / 1000 for m in deltas]
        trend("lag trend (after each delta)", xs, [clock.at(m.done) - (m.sim_t or 0) for m in deltas])  # fmt: skip
    srv_deltas = last.server.seq - first.server.seq
    got = last.deltas - first.deltas
    w(f"  deltas: server {srv_deltas / wall:.2f}/s, page received {got / wall:.2f}/s"
      f" ({(p1['chars'] - p0['chars']) / wall / 1000:.1f} KB/s, largest"
      f" {max((m.chars for m in messages if m.type == 'delta'), default=0) / 1000:.0f} KB);"
      f" messages {p1['types']}; websocket opens {p1['opens']}, closes {p1['closes']}")  # fmt: skip
    w(f"  events: server {last.server.events}, page applied up to {p1['events']}"
      f" (+{p1['events'] - p0['events']} during the run)")  # fmt: skip
    w(f"  page JS heap: start {mib(p0['heap'])} MiB, end {mib(p1['heap'])} MiB")
    if p1["longTasks"] is not None:
        w(f"  long tasks during the run: {p1['longTasks'] - p0['longTasks']}"
          f" ({p1['longTaskMs'] - p0['longTaskMs']:.0f} ms in all, longest since load"
          f" {p1['maxLongTaskMs']:.0f} ms); animation frames {(p1['frames'] - p0['frames']) / wall:.0f}/s")  # fmt: skip
    steady_state(run, w)
    evals = [s.eval_ms for s in kept]
    w(f"  page.evaluate round trip: mean {statistics.fmean(evals):.1f} ms, max {max(evals):.1f} ms")  # fmt: skip
    noise = run.console + run.page_errors
    w(f"  browser: {len(run.console)} console errors/warnings, {len(run.page_errors)} page errors,"
      f" failed requests: {', '.join(run.failed_requests) or 'none'}")  # fmt: skip
    for text in noise[:10]:
        w(f"    {text[:300]}")
    with open(log_copy, "rb") as f:
        text = f.read(run.log_end).decode(errors="replace")
    http_errors = sorted({f"{m.group(1)} {m.group(2)}" for m in HTTP_ERROR.finditer(text)})
    w(f"  HTTP errors in Daphne's access log: {', '.join(http_errors) or 'none'}")
    problems = [ln for ln in text.splitlines() if any(k in ln for k in LOG_PROBLEMS)]
    w(f"  stack log: {len(problems)} warning/error lines while measuring ({log_copy})")
    for text in problems[:10]:
        w(f"    {text[:300]}")
    write_csv(run, csv_path)
    w(f"  samples: {csv_path}")
    w(f"  screenshot: {screenshot if screenshot.exists() else '(none: the run was cut short)'}")


def overlap(a: Span, b: Span) -> float:
    return max(0.0, min(a.end, b.end) - max(a.start, b.start))


def steady_state(run: Run, w: Callable[[str], Any]) -> None:
    """Long tasks and the page's phases in the steady state: from the first frame drawn after
    the first snapshot's handler (the page's load, the snapshot's parse and first render are
    before it) to the last sample, the resyncs included (a resync is part of running)."""
    if run.first_drawn_ms is None:
        w("  steady state: the first snapshot was never drawn")
        return
    begin, end = run.first_drawn_ms, run.start_epoch_ms + run.samples[-1].t * 1000
    rel = (begin - run.start_epoch_ms) / 1000
    w(f" steady state: from the first snapshot drawn ({rel:+.1f} s from the resume) to the end:")
    tasks = [x for x in run.tasks if begin <= x.start <= end]
    measures = [x for x in run.measures if begin <= x.start <= end]
    label = "long tasks (over 50 ms, 'longtask')"
    if not tasks:
        w(f"  {label:<40} none")
    else:
        durs = [x.dur for x in tasks]
        w(f"  {label:<40} {len(tasks)}, {sum(durs):.0f} ms in all; median"
          f" {statistics.median(durs):.0f}  p95 {percentile(durs, 0.95):.0f}  max {max(durs):.0f} ms")  # fmt: skip
        buckets: dict[int, int] = {}
        for x in tasks:
            k = int((x.start - run.start_epoch_ms) // 10000)
            buckets[k] = buckets.get(k, 0) + 1
        first, last = min(buckets), int((end - run.start_epoch_ms) // 10000)
        w(f"  {'  per 10 wall s from the resume':<40} "
          + " ".join(f"{k * 10:+d}s:{buckets.get(k, 0)}" for k in range(first, last + 1)))  # fmt: skip
        inside: dict[str, float] = {}
        for x in tasks:
            for m in measures:
                if ms := overlap(x, m):
                    inside[m.name] = inside.get(m.name, 0.0) + ms
        outer = {k: v for k, v in inside.items() if k.count(":") == 1}  # top-level phases
        rest = sum(durs) - sum(outer.values())
        parts = sorted(inside.items(), key=lambda kv: -kv[1])
        w(f"  {'  spent in (page measures, nested too)':<40} "
          + ", ".join(f"{k} {v:.0f}" for k, v in parts) + f", outside any measure {rest:.0f} ms")  # fmt: skip
        for x in sorted(tasks, key=lambda x: -x.dur)[:5]:
            names = sorted(((m.name, overlap(x, m)) for m in measures if overlap(x, m)), key=lambda kv: -kv[1])  # fmt: skip
            w(f"    {x.dur:5.0f} ms at {(x.start - run.start_epoch_ms) / 1000:+6.1f} s: "
              + (", ".join(f"{n} {ms:.0f}" for n, ms in names[:4]) or "no page measure"))  # fmt: skip
    if measures:
        w("  page phases (performance.measure in room.js), ms:")
        by: dict[str, list[float]] = {}
        for m in measures:
            by.setdefault(m.name, []).append(m.dur)
        for name, d in sorted(by.items(), key=lambda kv: -sum(kv[1])):
            w(f"    {name:<38} {len(d):5d} x  mean {statistics.fmean(d):6.1f}  p95"
              f" {percentile(d, 0.95):6.1f}  max {max(d):6.1f}  total {sum(d):7.0f}")  # fmt: skip
    if run.profile:
        w(f"  CPU profile after the warmup ({run.profile}), top self time:")
        for fn, ms, pct in run.profile_top:
            w(f"    {ms:8.0f} ms {pct:5.1f} %  {fn}")
        w(f"  the renderer's main thread in the trace ({run.trace_span / 1000:.1f} s), self time:")
        for name, ms, pct in run.trace_top:
            w(f"    {ms:8.0f} ms {pct:5.1f} %  {name}")


def continuous_lag(
    messages: list[Message], clock: ServerClock, from_ms: float, to_ms: float
) -> list[float]:
    """clock(w) - simT(w) on a 50 ms grid, simT(w) being the simT after the last message
    handled before w."""
    applied = [(m.done, m.sim_t) for m in messages if m.sim_t is not None]
    out, k, current = [], 0, None
    w = from_ms
    while w <= to_ms:
        while k < len(applied) and applied[k][0] <= w:
            current = applied[k][1]
            k += 1
        if current is not None:
            out.append(clock.at(w) - current)
        w += 50
    return out


HEAD = (
    f"{'wall':>5} {'clock':>7} {'server':>7} {'page':>7} {'shown':>7} {'lag':>6} {'wkr':>5} "
    f"{'dlv':>5} {'events':>7} {'events':>7} {'Δ/s':>4} {'KB/s':>6} {'hdl':>6} {'heap':>6} "
    f"{'long':>4} {'fps':>4} {'eval':>6}\n"
    f"{'s':>5} {'sim s':>7} {'sim_ms':>7} {'simT':>7} {'clock':>7} {'sim s':>6} {'':>5} "
    f"{'':>5} {'server':>7} {'page':>7} {'':>4} {'':>6} {'max ms':>6} {'MiB':>6} "
    f"{'task':>4} {'':>4} {'ms':>6}"
)


def row(s: Sample, prev: Sample | None) -> str:
    p, q = s.page, (prev.page if prev else s.page)
    dt = (s.t - prev.t) if prev else 1.0
    shown = s.shown_clock
    handled = max((m.handle_ms for m in s.messages), default=0.0)
    long_tasks = "-" if p["longTasks"] is None else p["longTasks"] - q["longTasks"]
    return (
        f"{s.t:5.1f} {s.server.target_s:7.1f} {s.server.sim_s:7.1f} {s.page_sim:7.1f} "
        f"{'-' if shown is None else f'{shown:.1f}':>7} {s.lag:6.1f} {s.worker_lag:5.1f} "
        f"{s.delivery_lag:5.1f} {s.server.events:7d} {p['events']:7d} "
        f"{(s.deltas - (prev.deltas if prev else s.deltas)) / dt:4.1f} "
        f"{(p['chars'] - q['chars']) / dt / 1000:6.1f} {handled:6.1f} {mib(p['heap']):>6} "
        f"{long_tasks:>4} {(p['frames'] - q['frames']) / dt:4.0f} {s.eval_ms:6.1f}"
    )


def write_csv(run: Run, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(
            ["wall_s", "clock_sim_s", "server_sim_s", "page_sim_s", "shown_clock_s", "lag_sim_s",
             "server_events", "page_events", "server_seq", "page_seq", "deltas_received",
             "ws_chars", "max_handler_ms", "heap_bytes", "long_tasks", "long_task_ms", "frames",
             "eval_ms"]
        )  # fmt: skip
        for s in run.samples:
            p = s.page
            out.writerow(
                [f"{s.t:.3f}", s.server.target_s, s.server.sim_s, s.page_sim, s.shown_clock,
                 f"{s.lag:.3f}", s.server.events, p["events"], s.server.seq, p["seq"], s.deltas,
                 p["chars"], f"{max((m.handle_ms for m in s.messages), default=0):.1f}",
                 p["heap"], p["longTasks"], f"{p['longTaskMs'] or 0:.1f}", p["frames"],
                 f"{s.eval_ms:.1f}"]
            )  # fmt: skip
