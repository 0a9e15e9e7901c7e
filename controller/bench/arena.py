"""What the abuse suite (bench/abuse.py) measures and what its attacks (bench/attacks.py,
attacks_live.py) get: ``Monitor`` samples, in threads of this process, the running rooms'
clocks (``rooms.ClockWatch``: ticks on time, as the rooms row counts them), another room's
``snapshot.json`` over HTTP every 0.25 s from an address of its own (latency, status; no
answer counts as a 5xx), Daphne's resident memory every 0.1 s and ``/healthz`` every 2 s;
``window(start, end)`` gives the figures of one attack's window and ``within_thresholds``
what broke issue #35's acceptance thresholds. ``Arena`` is what an attack works with."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .rooms import ClockWatch
from .stack import Stack
from .stats import percentile
from .visitor import Visitor

ATTACKER = "127.0.0.66"
PROBER = "127.0.0.2"
MiB = 1024 * 1024

# The acceptance thresholds of issue #35 (not the product's speed: what "contained" means).
ON_TIME_MIN = 0.99
SNAPSHOT_P95_MAX_S = 1.0
DAPHNE_GROWTH_MAX_MIB = 100.0


def rss_mib(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class Probe:
    at: float  # epoch s of the request's start
    seconds: float
    status: int  # 0: no answer (connection refused, reset, timed out): counted as a 5xx


class Monitor:
    """The figures every attack is judged on (module docstring), sampled by daemon threads
    until ``stop()``; ``window(start, end)`` gives them over one window."""

    def __init__(self, stack: Stack, ids: list[int], observed: str, period: float) -> None:
        self.stack = stack
        self.watch = ClockWatch(ids, period)
        self.observed = observed
        self.rss: list[tuple[float, float]] = []
        self.probes: list[Probe] = []
        self.health: list[tuple[float, str]] = []
        self.stopping = threading.Event()
        self.last_reads: list[tuple[int, float, float | None]] = []
        self.threads = [
            threading.Thread(target=self._clocks, name="clocks", daemon=True),
            threading.Thread(target=self._snapshots, name="snapshots", daemon=True),
            threading.Thread(target=self._healthz, name="healthz", daemon=True),
        ]

    @property
    def port(self) -> int:
        return self.stack.webs[0].port

    def daphne_rss(self) -> float:
        return rss_mib(self.stack.webs[0].pid)

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=40)

    def _clocks(self) -> None:
        from django.db import connection
        from django.db.utils import DatabaseError

        from .rooms import _clock_reads

        try:
            while not self.stopping.is_set():
                try:
                    self.watch.sample()
                    self.last_reads = _clock_reads(self.watch.ids)
                except DatabaseError:
                    pass  # a locked database: this read is lost, the next one counts
                self.rss.append((time.time(), self.daphne_rss()))
                time.sleep(0.1)
        finally:
            connection.close()

    def _snapshots(self) -> None:
        prober = Visitor(self.port, PROBER, timeout=30)
        while not self.stopping.is_set():
            t0, at = time.monotonic(), time.time()
            try:
                status = prober.get(f"/rooms/{self.observed}/snapshot.json").status
            except OSError:
                status = 0
            took = time.monotonic() - t0
            self.probes.append(Probe(at, took, status))
            self.stopping.wait(max(0.0, 0.5 - took))

    def _healthz(self) -> None:
        import json

        prober = Visitor(self.port, PROBER, timeout=10)
        while not self.stopping.is_set():
            try:
                answer = prober.get("/healthz")
                body = json.loads(answer.body or b"{}")
                state = str(body.get("status", answer.status))
                failing = body.get("failing") or []
                if failing:
                    state += f" ({', '.join(map(str, failing))})"
            except (OSError, ValueError):
                state = "no answer"
            self.health.append((time.time(), state))
            self.stopping.wait(2.0)

    def caught_up(self, period: float) -> bool:
        """Every room ticked and within two beats of "now" (the rooms row's warm-up)."""
        reads = self.last_reads
        return bool(reads) and all(w is not None and lag <= 2 * period for _pk, lag, w in reads)

    def window(self, start: float, end: float) -> dict[str, Any]:
        ticks = self.watch.on_time(start, end)
        probes = [p for p in self.probes if start <= p.at <= end]
        lat = [p.seconds for p in probes]
        rss = [r for t, r in self.rss if start <= t <= end]
        before = [r for t, r in self.rss if t <= start]
        base = before[-1] if before else (rss[0] if rss else 0.0)
        lags = self.watch.lags(start, end)
        return {
            "on_time": ticks["on_time"],
            "ticks_late": ticks["late"],
            "beats": ticks["beats"],
            "lag_max_s": round(max(lags), 1) if lags else None,
            "snap_n": len(probes),
            "snap_p50_s": round(percentile(lat, 0.5), 2) if lat else None,
            "snap_p95_s": round(percentile(lat, 0.95), 2) if lat else None,
            "snap_max_s": round(max(lat), 2) if lat else None,
            "snap_5xx": sum(1 for p in probes if p.status >= 500 or p.status == 0),
            "daphne_growth_mib": round(max(rss) - base, 1) if rss else 0.0,
            "daphne_peak_mib": round(max(rss), 1) if rss else 0.0,
            "healthz": sorted({s for t, s in self.health if start <= t <= end}),
        }


def within_thresholds(w: dict[str, Any]) -> list[str]:
    """What broke the acceptance thresholds in a window (empty: they held)."""
    broke = []
    if not w["beats"]:
        broke.append("no beat in the window: nothing to judge the rooms' ticks on")
    elif w["on_time"] < ON_TIME_MIN:
        broke.append(f"ticks on time {w['on_time'] * 100:.1f}% < {ON_TIME_MIN * 100:.0f}%")
    if w["snap_p95_s"] is None or w["snap_p95_s"] >= SNAPSHOT_P95_MAX_S:
        broke.append(f"snapshot p95 {w['snap_p95_s']} s >= {SNAPSHOT_P95_MAX_S} s")
    if w["snap_5xx"]:
        broke.append(f"snapshot 5xx x{w['snap_5xx']}")
    if w["daphne_growth_mib"] >= DAPHNE_GROWTH_MAX_MIB:
        broke.append(f"Daphne +{w['daphne_growth_mib']:.0f} MiB >= {DAPHNE_GROWTH_MAX_MIB:.0f}")
    return broke


@dataclass
class Arena:
    """What an attack needs: the stack, the monitor, the attacker's address, the window length
    (``seconds``), the rooms it may look at, and a place for files."""

    stack: Stack
    monitor: Monitor
    logs: Path
    period: float
    observed: str  # the probed room's slug (another visitor's room)
    victim: str  # a room with a ~558 KB snapshot (attack 5)
    scale: float = 1.0  # the windows' lengths, x
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return self.stack.webs[0].port

    def visitor(self, timeout: float = 120.0) -> Visitor:
        return Visitor(self.port, ATTACKER, timeout=timeout)

    def seconds(self, base: float) -> float:
        return base * self.scale

    def daphne_growth(self, since_rss: float) -> float:
        return self.monitor.daphne_rss() - since_rss

    def hold(self, until: float) -> None:
        """Wait (the attack under way) until the monotonic instant ``until``."""
        while time.monotonic() < until:
            time.sleep(min(0.2, max(0.0, until - time.monotonic())))

    def daphne_log_size(self) -> int:
        log = self.stack.webs[0].log
        return log.stat().st_size if log and log.exists() else 0

    def daphne_log_since(self, offset: int) -> str:
        log = self.stack.webs[0].log
        if not log or not log.exists():
            return ""
        with log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
