"""The abuse suite (issue #35): the attacks of bench/attacks.py, one after another, against a
real stack (Daphne, Celery workers, beat, Redis; the database of DATABASE_URL) while ``rooms``
rooms of ``nodes`` nodes run at 10x, each attack judged on its own window.

What is measured, all the time, by ``Monitor`` (threads of this process):

- ticks on time of the running rooms: ``rooms.ClockWatch``, the rooms row's measure (every
  beat ticks every room to the beat's wall instant; a (beat, room) pair is on time when the
  room was seen at that instant before the next beat moved it on); its reads every 0.1 s;
- another room's ``snapshot.json``, fetched over HTTP every 0.5 s from an address of its own
  (``PROBER``): latency (timeout 30 s) and status; a failed connection counts as a 5xx;
- Daphne's resident memory (VmRSS, /proc) every 0.1 s, and ``/healthz`` every 2 s.

An attack (``attacks.Attack``) comes from one address (``ATTACKER``), runs for its window and
returns what the server answered. Its verdict: contained when, over its window, the rooms keep
>= 99 % of their ticks on time, the snapshot answers in under 1 s at p95 and never 5xx, Daphne
grows less than 100 MiB, the attacker got no 5xx, and the attack's own check holds (a refusal
carries a message; see each attack). Between attacks the attacker's rooms are deleted; when the
rooms have not caught up (lag within two beats) 8 s after the window (a worker still busy with
the attack), the workers are killed first and started again, as supervisord would, and the
queues purged, so that the next attack is judged on its own; Daphne is restarted when it has
grown past 300 MiB or stopped answering. Both are printed (column "after")."""

from __future__ import annotations

import contextlib
import json
import signal
import time
from pathlib import Path
from typing import Any

from . import attacks, attacks_live
from .arena import ATTACKER, PROBER, Arena, Monitor, within_thresholds
from .procs import cpu_seconds
from .stack import Stack, check_stack, forget_workers, stack_env, wait_workers
from .stats import load_average
from .visitor import Visitor

# The shortest window an attack is judged on, in seconds (x the run's scale).
MIN_WINDOW_S = 10.0

# The attacks in the order (numbers as the list; "b": a second form of one).
ATTACKS = attacks.ATTACKS + attacks_live.ATTACKS


# -- the run --------------------------------------------------------------------------------
def attacker_rooms_delete(timeout: float = 20.0) -> None:
    from django.db.utils import OperationalError

    from ..models import Room

    deadline = time.monotonic() + timeout
    while True:
        try:
            Room.objects.filter(creator=f"addr:{ATTACKER}").delete()
            return
        except OperationalError:  # the database is locked (SQLite) by a long tick
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def purge_queues() -> None:
    """Drop every queued task (the attacks' builds, previews, what-ifs, and ticks queued for
    workers that are gone): the next attack starts on empty queues."""
    from ..locks import redis_client

    client = redis_client()
    for key in client.scan_iter(match="*"):
        name = key.decode(errors="replace")
        with contextlib.suppress(Exception):
            if client.type(key) == b"list" and not name.startswith(("asgi", "playground:")):
                client.delete(key)


def restart_workers(stack: Stack) -> float:
    """Every worker (tick and heavy) killed, the queues purged, started again."""
    t0 = time.monotonic()
    every = [*stack.workers, *stack.heavy]
    for w in every:
        w.send(signal.SIGKILL)
    for w in every:
        w.reap()
    forget_workers(stack.workers)
    purge_queues()
    for w in every:
        w.start(timeout=120)
    wait_workers(len(stack.workers), timeout=120)
    return time.monotonic() - t0


def recover(arena: Arena, baseline_rss: float) -> str:
    """After an attack: the workers restarted when the rooms have not caught up within 8 s
    (a worker still busy with the attack), the attacker's rooms deleted, up to 30 s for the
    rooms to catch up; Daphne restarted when it grew past 300 MiB or stopped answering. Says
    what it took."""
    from django.db.utils import OperationalError

    from .procs import BenchError

    done = []
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and not arena.monitor.caught_up(arena.period):
        time.sleep(0.5)
    restarted = not arena.monitor.caught_up(arena.period)
    t0 = time.monotonic()
    if restarted:  # killed first: a long tick's database lock goes with it
        try:
            restart_workers(arena.stack)
        except (BenchError, RuntimeError) as exc:
            done.append(f"workers did not restart: {exc}"[:120])
    try:
        attacker_rooms_delete()
    except OperationalError:
        done.append("database locked")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not arena.monitor.caught_up(arena.period):
        time.sleep(0.5)
    if restarted:
        late = "" if arena.monitor.caught_up(arena.period) else ", still late"
        done.append(f"workers restarted ({time.monotonic() - t0:.0f} s{late})")
    web = arena.stack.webs[0]
    answers = _answers(arena.port)
    if arena.monitor.daphne_rss() - baseline_rss > 300 or not answers:
        web.kill()
        try:
            web.start(timeout=120)
            done.append("Daphne restarted")
        except BenchError as exc:
            done.append(f"Daphne did not restart: {exc}"[:120])
    return ", ".join(done) or "-"


def _answers(port: int) -> bool:
    try:
        Visitor(port, PROBER, timeout=30).get("/healthz")
        return True
    except OSError:
        return False


def abuse_run(
    env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    rooms: int = 20,
    nodes: int = 100,
    workers: int = 2,
    speed: float = 10.0,
    only: list[str] | None = None,
    scale: float = 1.0,
) -> dict[str, Any]:
    """Every attack of bench/attacks.py (``only``: those numbers) while ``rooms`` rooms of
    ``nodes`` nodes run at ``speed``; the figures of each attack's window, of the whole run,
    and the verdicts (module docstring)."""
    import tempfile

    from django.conf import settings
    from django.db import connection

    from ..models import Room
    from ..rooms import controls, create
    from .scenarios import live_scenario

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-abuse-"))
    period = float(settings.PLAYGROUND_TICK_SECONDS)
    chosen = [a for a in ATTACKS if not only or a.number in only]
    prepared = {name: make() for name, make in attacks.PAYLOADS.items()}  # before the clock
    Room.objects.filter(slug__startswith="abuse-").delete()
    text = live_scenario(nodes, 10, "abuse-rooms", outage_at="30s")
    ids = []
    for _ in range(rooms):
        room = create.room_create("abuse-rooms", text, None, speed)
        controls.room_control(room.pk, "pause", None, "abuse")
        ids.append(room.pk)
    observed = create.room_create("abuse-observed", text, None, speed)
    big = live_scenario(attacks.VICTIM_NODES, attacks.VICTIM_PODS_PER_NODE, "abuse-victim", None)
    victim = create.room_create("abuse-victim", big, None, speed)
    for pk in (observed.pk, victim.pk):
        controls.room_control(pk, "pause", None, "abuse")
    env = {**(env or stack_env()), "PLAYGROUND_IDLE_PAUSE_SECONDS": "0"}
    results: list[dict[str, Any]] = []
    t_run0 = time.monotonic()
    with Stack(env, logs, webs=1, workers=workers, heavy=1, beat=True) as stack:
        for pk in [*ids, observed.pk, victim.pk]:
            controls.room_control(pk, "resume", None, "abuse")
        monitor = Monitor(stack, ids, observed.slug, period)
        monitor.start()
        warm0 = time.monotonic()
        while time.monotonic() - warm0 < 90 and not monitor.caught_up(period):
            time.sleep(0.2)
        warmup_s = time.monotonic() - warm0
        Visitor(stack.webs[0].port, PROBER).get(f"/rooms/{victim.slug}/snapshot.json")
        time.sleep(2 * period)
        baseline = monitor.daphne_rss()
        arena = Arena(stack, monitor, logs, period, observed.slug, victim.slug, scale)
        arena.cache.update(prepared)
        run_start = time.time()
        quiet0 = time.time()
        arena.hold(time.monotonic() + 10)
        results.append(
            {
                "number": "0",
                "title": "no attack (the rooms alone)",
                "outcome": "-",
                "said": "",
                "figures": {},
                "check": [],
                "window": monitor.window(quiet0, time.time()),
            }
        )
        results[-1]["after"] = "-"
        for attack in chosen:
            start, start_mono = time.time(), time.monotonic()
            cpu0 = _cpu(stack)
            try:
                out = attack.run(arena)
            except Exception as exc:  # the harness reports it, goes on
                out = attacks.Outcome("error", f"harness: {type(exc).__name__}: {exc}", {}, [])
                out.check.append("the attack itself failed (see said)")
            # A refusal in 0.1 s leaves no beat to judge: the window lasts at least
            # MIN_WINDOW_S, the attack's aftermath included (a job it queued, a socket left).
            arena.hold(start_mono + arena.seconds(MIN_WINDOW_S))
            end = time.time()
            cpu1 = _cpu(stack)
            window = monitor.window(start, end)
            window.update({k: round(cpu1[k] - cpu0[k], 1) for k in cpu0})
            results.append(
                {
                    "number": attack.number,
                    "title": attack.title,
                    "outcome": out.outcome,
                    "said": out.said,
                    "figures": out.figures,
                    "check": out.check,
                    "window": window,
                }
            )
            results[-1]["after"] = recover(arena, baseline)
            with (logs / "abuse-results.jsonl").open("a") as f:  # as it goes: a cut run keeps them
                f.write(json.dumps(results[-1], default=str) + "\n")
        run_end = time.time()
        monitor.stop()
        whole = monitor.window(run_start, run_end)
        whole["daphne_growth_mib"] = round(
            max((r for t, r in monitor.rss if t >= run_start), default=baseline) - baseline, 1
        )
    connection.close()
    Room.objects.filter(slug__startswith="abuse-").delete()
    attacker_rooms_delete()
    for r in results:
        r["broke"] = within_thresholds(r["window"])
        r["contained"] = not r["broke"] and not r["check"]
    return {
        "rooms": rooms,
        "nodes": nodes,
        "speed": speed,
        "workers": workers,
        "warmup_s": round(warmup_s, 1),
        "daphne_baseline_mib": round(baseline, 1),
        "seconds": round(time.monotonic() - t_run0, 1),
        "attacks": results,
        "whole": whole,
        "whole_broke": within_thresholds(whole),
        "logs": str(logs),
        "load": load_average(),
        "database": connection.vendor,
    }


def _cpu(stack: Stack) -> dict[str, float]:
    def cpu(pids: list[int | None]) -> float:
        total = 0.0
        for pid in pids:
            if pid:
                with contextlib.suppress(OSError):
                    total += cpu_seconds(pid)
        return total

    return {
        "worker_cpu_s": cpu([w.pid for w in stack.workers]),
        "daphne_cpu_s": cpu([w.pid for w in stack.webs]),
    }


def format_abuse(r: dict[str, Any]) -> str:
    """The table: one line per attack (its window's figures, what the server said, the
    verdict), then the whole run."""
    head = (
        f"abuse suite: {len(r['attacks']) - 1} attacks from {ATTACKER} while {r['rooms']} rooms "
        f"of {r['nodes']} nodes run at {r['speed']}x on {r['workers']} workers + beat "
        f"({r['database']}; warm in {r['warmup_s']} s; Daphne {r['daphne_baseline_mib']} MiB at "
        f"the start; {r['seconds']} s in all) [{r['load']}]"
    )
    cols = (
        f"{'#':<4}{'attack':<46}{'on time':>8}{'late':>6}{'snap p95':>9}{'max':>7}{'5xx':>5}"
        f"{'Daphne+':>8}{'wCPU':>6}{'dCPU':>6}  {'verdict':<13}{'after':<24}"
    )
    lines = [head, cols, "-" * len(cols)]
    for a in r["attacks"]:
        w = a["window"]
        verdict = "CONTAINED" if a["contained"] else "NOT CONTAINED"
        if a["number"] == "0":
            verdict = "ok" if not a["broke"] else "BASELINE BAD"
        lines.append(
            f"{a['number']:<4}{a['title'][:45]:<46}{w['on_time'] * 100:>7.1f}%{w['ticks_late']:>6}"
            f"{_s(w['snap_p95_s']):>9}{_s(w['snap_max_s']):>7}{w['snap_5xx']:>5}"
            f"{w['daphne_growth_mib']:>8.0f}{w.get('worker_cpu_s', 0):>6.0f}"
            f"{w.get('daphne_cpu_s', 0):>6.0f}  {verdict:<13}{a.get('after', '-'):<24}"
        )
        detail = [f"outcome: {a['outcome']}"]
        if a["said"]:
            detail.append(f"said: {a['said'][:160]!r}")
        if a["figures"]:
            detail.append(", ".join(f"{k} {v}" for k, v in a["figures"].items()))
        if w["healthz"]:
            detail.append(f"healthz: {'; '.join(w['healthz'])}")
        if a["broke"] or a["check"]:
            detail.append("broke: " + "; ".join(a["broke"] + a["check"]))
        lines.extend(f"      {d}" for d in detail)
    w = r["whole"]
    lines.append("-" * len(cols))
    lines.append(
        f"whole run: ticks on time {w['on_time'] * 100:.1f}% ({w['ticks_late']} late of "
        f"{w['beats']} beats x {r['rooms']} rooms), snapshot.json p50 {w['snap_p50_s']} s p95 "
        f"{w['snap_p95_s']} s max {w['snap_max_s']} s over {w['snap_n']} requests, 5xx "
        f"{w['snap_5xx']}, Daphne grew {w['daphne_growth_mib']} MiB (peak {w['daphne_peak_mib']}"
        f" MiB); {'thresholds held' if not r['whole_broke'] else 'broke: ' + '; '.join(r['whole_broke'])}"
    )
    lines.append(f"logs: {r['logs']}")
    return "\n".join(lines)


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
