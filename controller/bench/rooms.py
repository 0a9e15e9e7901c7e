"""The rooms row: many running rooms ticked by real Celery workers and beat."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .scenarios import live_scenario
from .stack import Stack, check_stack, stack_env
from .stats import load_average, percentile


def rooms_bench(
    rooms: int = 50,
    nodes: int = 100,
    workers: int = 2,
    seconds: float = 60.0,
    speed: float = 10.0,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
    neighbour: Callable[[Stack, threading.Event], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``rooms`` running rooms of ``nodes`` nodes (10 pods each) ticked by ``workers`` real
    Celery worker processes and one beat, for ``seconds``.

    Ticks on time: every beat ticks every room to the beat's wall instant W, so a room's
    clock tells which W it was advanced to (wall_anchor + (sim_ms - sim_anchor_ms) / speed).
    Every 0.1 s the bench reads every room's clock; the beats are the instants seen; a
    (beat, room) pair is on time when that room was seen at that beat's instant (advanced to
    it before the next beat moved it on), out of (beats seen, or the beats expected in the
    window when more) x rooms. Also the lag behind "now" (p50, p95, max): a sawtooth from
    the tick's delay to one period plus it, as a room's clock stands still between beats (so
    its p95 is at least 0.95 period); and the landing delay: for every instant W a room was
    advanced to, how long after W the bench first saw it there (p50, p95, max; an upper bound,
    by up to the 0.1 s between reads): how late a beat's state lands.
    ``env``: the started processes' environment (default: this process's). CPU: user + system seconds of the worker
    processes over the run (/proc), per room per minute; beat's separately.

    ``neighbour`` (the noisy-neighbour row, bench/noisy.py): the stack gets a Daphne and a
    heavy worker too, and
    ``neighbour(stack, stop)`` runs in a thread from the end of the warm-up until ``stop`` is
    set at the end of the window; what it returns is the result's ``neighbour``."""
    import tempfile
    import time

    from django.conf import settings
    from django.utils import timezone

    from ..models import Room
    from ..rooms import controls, create
    from .procs import cpu_seconds

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-rooms-"))
    period = float(settings.PLAYGROUND_TICK_SECONDS)
    Room.objects.filter(slug__startswith="bench-rooms").delete()
    text = live_scenario(nodes, 10, "bench-rooms", outage_at="30s")
    t0 = time.perf_counter()
    ids = []
    for _ in range(rooms):
        room = create.room_create("bench-rooms", text, None, speed)
        controls.room_control(room.pk, "pause", None, "bench")
        ids.append(room.pk)
    create_s = time.perf_counter() - t0
    # Nobody watches these rooms: idle pausing (PLAYGROUND_IDLE_PAUSE_SECONDS) is off here.
    env = {**(env or stack_env()), "PLAYGROUND_IDLE_PAUSE_SECONDS": "0"}
    # The neighbour's stack as make run's: a Daphne and a heavy worker (previews, what-ifs).
    extra = 1 if neighbour is not None else 0
    with Stack(env, logs, webs=extra, workers=workers, heavy=extra, beat=True) as stack:
        procs, beat = stack.workers, stack.beat
        assert beat is not None
        for pk in ids:
            controls.room_control(pk, "resume", None, "bench")
        # Warm-up: every room's engine built on its owner and the room within two beats of
        # "now" (at most 60 s), then measure.
        warm0 = time.perf_counter()
        while time.perf_counter() - warm0 < 60:
            reads = _clock_reads(ids)
            if all(w is not None and lag <= 2 * period for _pk, lag, w in reads):
                break
            time.sleep(0.2)
        warmup_s = time.perf_counter() - warm0
        cpu0 = [cpu_seconds(p.pid) for p in procs if p.pid]
        beat_cpu0 = cpu_seconds(beat.pid) if beat.pid else 0.0
        watch = ClockWatch(ids, period)
        stop, done = threading.Event(), {}
        if neighbour is not None:
            thread = threading.Thread(
                target=lambda: done.update(neighbour(stack, stop)), name="neighbour", daemon=True
            )
            thread.start()
        wall0 = time.perf_counter()
        start = timezone.now().timestamp()
        while time.perf_counter() - wall0 < seconds:
            watch.sample(since=start)
            time.sleep(0.1)
        run_s = time.perf_counter() - wall0
        end = timezone.now().timestamp()
        stop.set()
        if neighbour is not None:
            thread.join(timeout=60)
        cpu1 = [cpu_seconds(p.pid) for p in procs if p.pid]
        beat_cpu = (cpu_seconds(beat.pid) if beat.pid else 0.0) - beat_cpu0
    stats = {pk: Room.objects.get(pk=pk).sim_ms for pk in ids}
    Room.objects.filter(pk__in=ids).delete()
    worker_cpu = sum(cpu1) - sum(cpu0)
    ticks = watch.on_time(start, end)
    lags, landings = watch.lags(), watch.landings
    return {
        "rooms": rooms,
        "nodes": nodes,
        "workers": workers,
        "seconds": round(run_s, 1),
        "speed": speed,
        "create_s": round(create_s, 1),
        "beats": ticks["beats"],
        "beats_expected": ticks["expected"],
        "on_time": ticks["on_time"],
        "warmup_s": round(warmup_s, 1),
        "lag_p50_s": round(percentile(lags, 0.5), 2),
        "lag_p95_s": round(percentile(lags, 0.95), 2),
        "lag_max_s": round(max(lags), 2),
        "landing_p50_s": round(percentile(landings, 0.5), 2) if landings else None,
        "landing_p95_s": round(percentile(landings, 0.95), 2) if landings else None,
        "landing_max_s": round(max(landings), 2) if landings else None,
        "cpu_s_per_room_min": round(worker_cpu / rooms / (run_s / 60), 2),
        "worker_cpu_s": round(worker_cpu, 1),
        "beat_cpu_s": round(beat_cpu, 1),
        "min_sim_s": round(min(stats.values()) / 1000, 1),
        "logs": str(logs),
        "load": load_average(),
        "neighbour": done,
    }


class ClockWatch:
    """Ticks on time, as the rooms row counts them (and the abuse suite, bench/abuse.py).

    Every beat ticks every room to the beat's wall instant W, so a room's clock tells which W
    it was advanced to (wall_anchor + (sim_ms - sim_anchor_ms) / speed). ``sample()`` (every
    0.1 s) reads every room's clock: the instants each room was seen at, its lag behind "now",
    and for every new instant how long after W it was first seen (the landing delay, an upper
    bound by up to the 0.1 s between reads). ``on_time(start, end)``: the beats are the
    instants seen within [start, end - 2 periods] (the last two: ticks under way); a (beat,
    room) pair is on time when that room was seen at that beat's instant (advanced to it
    before the next beat moved it on), out of (beats seen, or the beats expected in the window
    when more: a beat that no room reached is not seen at all) x rooms."""

    def __init__(self, ids: list[int], period: float) -> None:
        self.ids = list(ids)
        self.period = period
        self.reached: dict[int, set[float]] = {pk: set() for pk in self.ids}
        self.samples: list[tuple[float, float]] = []  # (epoch s of the read, lag s)
        self.landings: list[float] = []
        self.landed: list[tuple[float, float]] = []  # (W, landing delay s)
        # sample() runs in the monitor's thread while on_time() reads (the abuse suite).
        self.lock = threading.Lock()

    def sample(self, since: float = 0.0) -> None:
        """One read of every room's clock; landings are kept for instants W >= ``since``
        (before it: the warm-up's)."""
        import time

        reads = _clock_reads(self.ids)
        seen_at = time.time()
        with self.lock:
            for pk, lag, w in reads:
                self.samples.append((seen_at, lag))
                if w is not None and w not in self.reached[pk]:
                    self.reached[pk].add(w)
                    if w >= since:
                        self.landings.append(max(0.0, seen_at - w))
                        self.landed.append((w, max(0.0, seen_at - w)))

    def lags(self, start: float = 0.0, end: float = float("inf")) -> list[float]:
        with self.lock:
            return [lag for t, lag in self.samples if start <= t <= end]

    def on_time(self, start: float, end: float) -> dict[str, Any]:
        last = end - 2 * self.period
        with self.lock:
            reached = {pk: set(ws) for pk, ws in self.reached.items()}
        beats = _cluster(sorted(w for ws in reached.values() for w in ws if start <= w <= last))
        pairs = sum(any(abs(w - b) < 0.05 for w in reached[pk]) for b in beats for pk in self.ids)
        expected = max(0, int((end - start - 2 * self.period) / self.period))
        total = max(len(beats), expected) * len(self.ids)
        return {
            "beats": len(beats),
            "expected": expected,
            "pairs": pairs,
            "late": max(0, total - pairs),
            "on_time": round(pairs / max(1, total), 3),
        }


def _clock_reads(ids: list[int]) -> list[tuple[int, float, float | None]]:
    """For every room: its lag behind "now" (wall seconds) and the wall instant (epoch s,
    rounded to 10 ms) that its clock was last advanced to (None before its first tick)."""
    from django.utils import timezone

    from ..models import Room

    now = timezone.now()
    out = []
    for r in Room.objects.filter(pk__in=ids).values(
        "pk", "sim_ms", "sim_anchor_ms", "wall_anchor", "speed"
    ):
        per_s = r["speed"] * 1000
        elapsed = (now - r["wall_anchor"]).total_seconds()
        lag = max(0.0, (r["sim_anchor_ms"] + elapsed * per_s - r["sim_ms"]) / per_s)
        w = None
        if r["sim_ms"] > r["sim_anchor_ms"]:
            w = round(r["wall_anchor"].timestamp() + (r["sim_ms"] - r["sim_anchor_ms"]) / per_s, 2)
        out.append((r["pk"], lag, w))
    return out


def _cluster(instants: list[float], within: float = 0.05) -> list[float]:
    """Sorted instants merged when closer than ``within`` (one beat seen by many rooms)."""
    out: list[float] = []
    for w in instants:
        if not out or w - out[-1] >= within:
            out.append(w)
    return out


def format_rooms(r: dict[str, Any]) -> str:
    return (
        f"{r['rooms']} rooms of {r['nodes']} nodes at {r['speed']}x on {r['workers']} workers "
        f"+ beat, {r['seconds']} s (created in {r['create_s']} s, warm in {r['warmup_s']} s): "
        f"ticks on time {r['on_time'] * 100:.1f}% of {r['beats']} beats x {r['rooms']} rooms "
        f"({r['beats_expected']} beats expected) (lag behind now p50 {r['lag_p50_s']} s, p95 "
        f"{r['lag_p95_s']} s, max {r['lag_max_s']} s; a beat's state lands p50 "
        f"{r['landing_p50_s']} s, p95 {r['landing_p95_s']} s, max {r['landing_max_s']} s "
        f"after its beat); CPU {r['cpu_s_per_room_min']} s per "
        f"room per minute (workers {r['worker_cpu_s']} s, beat {r['beat_cpu_s']} s) "
        f"[{r['load']}]"
    )
