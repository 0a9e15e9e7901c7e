"""``python manage.py pagebench [--nodes 1000] [--speed 10] [--seconds 60]``

Does the room page keep up with a big room? Starts a private stack as ``make run`` would
(redis-server, Daphne, a Celery worker with ``--pool=threads`` and beat, the default tick) on
a temporary SQLite database, creates a room of N nodes in three zones (a Deployment plus bare
pods on every node; a kubelet stops at 60 s, zone-b goes dark at 240 s), opens it as operator
in headless Chromium and, once a wall second, samples:

- the server's clock: where the room's next tick takes it (the room's anchors, as
  ``rooms.clock._now_target``), and ``Room.sim_ms``, the time the worker has reached;
- the page: ``window.playgroundRoom.state().simT`` (the simulated time of the last applied
  delta), the clock it shows, events applied, websocket traffic, JS heap, long tasks, frames.

lag = server clock - page simT, in simulated seconds (wall seconds = sim / speed); it splits
into the worker's share (clock - sim_ms) and the delivery + page share (sim_ms - simT). With a
1 s tick even a perfect pipeline shows a sawtooth from ~0 to speed x tick simulated seconds,
and 1 Hz samples see one phase of it. So the page also logs every websocket message (arrival,
the time its handler took, simT after it): that gives the lag as a continuous function of
time, each delta's age when it arrived, and a trend free of the sawtooth. What matters is that
the lag does not grow. Prints a table and a summary; writes a screenshot, the samples (CSV)
and the stack's log to test-artifacts/.

The stack's processes get REDIS_URL and DATABASE_URL before Django starts; the room is
created (and later resumed) by this command run again in a child process with the same
environment (``--internal create|resume``); this process reads the room's row with sqlite3.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import yaml
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from controller.bench import ZONES, bare_pods
from controller.engine import safe_yaml

REPO = Path(settings.BASE_DIR)
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As tests/browser/conftest.py (not imported: importing it starts a test redis-server),
# plus precise figures from performance.memory.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-precise-memory-info",
]  # fmt: skip
# Stack log lines worth reporting (Celery's level tags, Python and Daphne failures).
HTTP_ERROR = re.compile(r'"(\w+ \S+)" ([45]\d\d) ')
LOG_PROBLEMS = ("ERROR/", "CRITICAL/", "WARNING/", "Traceback", "Exception inside")

# Installed before room.js runs, without touching the page's code: wraps the handler room.js
# sets as ws.onmessage to log each message (type and "t" read from its first bytes, arrival,
# the handler's end, simT after it), and counts long tasks and animation frames.
INIT_SCRIPT = r"""
(() => {
  const m = window.__pagebench = { msgs: 0, chars: 0, types: {}, opens: 0, closes: 0,
    longTasks: 0, longTaskMs: 0, maxLongTaskMs: 0, frames: 0, log: [] };
  const epochMs = () => performance.timeOrigin + performance.now();
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      m.opens++;
      this.addEventListener("close", () => { m.closes++; });
    }
    get onmessage() { return super.onmessage; }
    set onmessage(fn) {
      super.onmessage = !fn ? fn : (e) => {
        const arrived = epochMs(), head = e.data.slice(0, 80);
        const type = (/^\{"type": ?"(\w+)"/.exec(head) || [])[1] || "?";
        const t = /"t": ?(-?[0-9.eE+-]+)/.exec(head);
        try { return fn.call(this, e); } finally {
          const r = window.playgroundRoom, s = r ? r.state() : null;
          m.msgs++; m.chars += e.data.length; m.types[type] = (m.types[type] || 0) + 1;
          m.log.push({ type, arrived, done: epochMs(), chars: e.data.length,
            t: t ? Number(t[1]) : null, simT: s ? s.simT : null });
        }
      };
    }
  };
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        m.longTasks++; m.longTaskMs += e.duration;
        m.maxLongTaskMs = Math.max(m.maxLongTaskMs, e.duration);
      }
    }).observe({ type: "longtask", buffered: true });
  } catch (err) { m.longTasks = null; }
  const frame = () => { m.frames++; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
})();
"""

# One sample; drains the message log.
SAMPLE_JS = """
() => {
  const r = window.playgroundRoom, s = r ? r.state() : null, m = window.__pagebench;
  const last = s && s.events.length ? s.events[s.events.length - 1] : null;
  return {
    simT: s ? s.simT : null, seq: s ? s.seq : null, paused: s ? s.paused : null,
    events: last ? last.idx + 1 : 0, nodes: s ? s.nodes.size : 0, pods: s ? s.pods.size : 0,
    clock: (document.getElementById("clock") || {}).textContent || "",
    heap: performance.memory ? performance.memory.usedJSHeapSize : null,
    msgs: m.msgs, chars: m.chars, types: { ...m.types }, opens: m.opens, closes: m.closes,
    longTasks: m.longTasks, longTaskMs: m.longTaskMs, maxLongTaskMs: m.maxLongTaskMs,
    frames: m.frames, log: m.log.splice(0),
  };
}
"""


# -- the scenario ----------------------------------------------------------------------------
def bench_scenario(nodes: int, pods_per_node: int, replicas: int) -> dict[str, Any]:
    """N nodes over three zones (as controller.bench.live_bench), ``pods_per_node`` bare pods
    bound to each, and a Deployment whose pods tolerate unreachable for 30 s (evicted and
    rescheduled within the run). a-1's kubelet stops at 60 s; zone-b goes dark at 240 s
    (a third of the nodes turn Unknown at once, then are tainted at the zone's rate)."""
    per_zone = max(1, nodes // len(ZONES))
    requests = {"cpu": "100m", "memory": "128Mi"}
    pods = bare_pods(per_zone, pods_per_node)
    toleration = {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 30,
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "tolerations": [toleration],
                    "containers": [{"name": "web", "resources": {"requests": requests}}],
                },
            },
        },
    }
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"pagebench-{nodes}"},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": ([deployment] if replicas else []) + pods,
            "faults": [
                {"at": "60s", "type": "StopKubelet", "node": "a-1"},
                {"at": "240s", "type": "ZoneOutage", "zone": "zone-b"},
            ],
        },
    }


# -- the stack -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CommandError(f"{proc.args} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return
        except OSError:
            time.sleep(0.1)
    raise CommandError(f"nothing listens on port {port} after {timeout:g} s")


class Stack:
    """redis-server, Daphne, a Celery worker and beat on a temporary SQLite file. Each process
    runs in its own session (a Ctrl-C reaches this command only); ``close`` stops them."""

    def __init__(self, workdir: Path, tick: float | None) -> None:
        self.workdir = workdir
        self.redis_port = free_port()
        self.web_port = free_port()
        self.db_path = workdir / "pagebench.sqlite3"
        self.log_path = workdir / "stack.log"
        self.log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 (closed by close())
        self.redis: subprocess.Popen[bytes] | None = None
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "DATABASE_URL": f"sqlite:///{self.db_path}",
            "DEBUG": "1",
        }
        self.env.pop("PLAYGROUND_TEST_DB", None)
        if tick is not None:
            self.env["PLAYGROUND_TICK_SECONDS"] = str(tick)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def _spawn(self, args: list[str], log: bool = True) -> subprocess.Popen[bytes]:
        out = self.log if log else subprocess.DEVNULL
        return subprocess.Popen(
            args, cwd=REPO, env=self.env, stdout=out, stderr=out, start_new_session=True
        )

    def manage(self, *args: str, timeout: float = 900) -> str:
        """``manage.py ARGS`` with the stack's environment; returns its stdout."""
        done = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode:
            raise CommandError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def start(self) -> None:
        redis_bin = shutil.which("redis-server")
        if not redis_bin:
            raise CommandError("redis-server is not installed (make test installs it)")
        self.redis = self._spawn(
            [redis_bin, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir)],
            log=False,
        )  # fmt: skip
        wait_for_port(self.redis_port, 10, self.redis)
        self.manage("migrate", "--noinput", "-v", "0")
        celery = [sys.executable, "-m", "celery", "-A", "playground"]
        self.procs["daphne"] = self._spawn(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.web_port),
             "playground.asgi:application"]
        )  # fmt: skip
        self.procs["worker"] = self._spawn(
            [*celery, "worker", "--pool=threads", "--concurrency=4", "--loglevel=WARNING",
             "-n", f"pagebench{self.web_port}@%h"]
        )  # fmt: skip
        self.procs["beat"] = self._spawn(
            [*celery, "beat", "--loglevel=WARNING", f"--schedule={self.workdir / 'beat'}"]
        )
        wait_for_port(self.web_port, 60, self.procs["daphne"])

    def exited(self) -> list[str]:
        return [name for name, proc in self.procs.items() if proc.poll() is not None]

    def close(self) -> None:
        """Daphne, the worker and beat first (the worker's shutdown still talks to Redis),
        then redis-server."""
        for group in (list(self.procs.values()), [self.redis] if self.redis else []):
            for proc in group:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGTERM)
            for proc in group:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
        self.procs.clear()
        self.redis = None
        self.log.close()


# -- measurements ----------------------------------------------------------------------------
@dataclass
class ServerClock:
    """The room's row at one instant."""

    target_s: float  # where the next tick takes the room (rooms.clock._now_target)
    sim_s: float  # Room.sim_ms: reached and persisted by the worker
    seq: int
    events: int
    paused: bool
    anchor_sim_ms: int
    anchor_epoch_s: float
    speed: float

    def at(self, epoch_ms: float) -> float:
        """The server's clock (simulated seconds) at a wall instant, from the anchors."""
        if self.paused:
            return max(self.sim_s, self.anchor_sim_ms / 1000)
        elapsed = epoch_ms / 1000 - self.anchor_epoch_s
        return (self.anchor_sim_ms + elapsed * self.speed * 1000) / 1000


def read_server(db: sqlite3.Connection, room_id: int) -> ServerClock:
    row = db.execute(
        "SELECT sim_ms, sim_anchor_ms, wall_anchor, speed, paused, seq, event_count"
        " FROM controller_room WHERE id = ?",
        (room_id,),
    ).fetchone()
    sim_ms, anchor_ms, wall_anchor, speed, paused, seq, events = row
    anchor = datetime.fromisoformat(str(wall_anchor))
    if anchor.tzinfo is None:
        anchor = anchor.replace(tzinfo=UTC)
    clock = ServerClock(
        0.0, sim_ms / 1000, int(seq), int(events), bool(paused), int(anchor_ms),
        anchor.timestamp(), float(speed),
    )  # fmt: skip
    # As rooms.clock._now_target: never behind what the worker reached.
    clock.target_s = max(clock.sim_s, clock.at(time.time() * 1000))
    return clock


@dataclass
class Message:
    """One websocket message as the page handled it (epoch milliseconds)."""

    type: str
    arrived: float
    done: float
    chars: int
    t: float | None  # the simulated time it carries
    sim_t: float | None  # the page's simT after handling it

    @property
    def handle_ms(self) -> float:
        return self.done - self.arrived


def parse_clock(text: str) -> float | None:
    """The page's "mm:ss.mmm" clock in seconds."""
    try:
        minutes, rest = text.strip().split(":")
        return int(minutes) * 60 + float(rest)
    except ValueError:
        return None


@dataclass
class Sample:
    t: float  # wall seconds since the room was resumed
    server: ServerClock
    page: dict[str, Any]
    eval_ms: float  # page.evaluate's round trip (the page's main thread answering)
    messages: list[Message]  # handled since the previous sample

    @property
    def page_sim(self) -> float:
        return float(self.page["simT"] or 0.0)

    @property
    def lag(self) -> float:
        return self.server.target_s - self.page_sim

    @property
    def worker_lag(self) -> float:
        return self.server.target_s - self.server.sim_s

    @property
    def delivery_lag(self) -> float:
        return self.server.sim_s - self.page_sim

    @property
    def shown_clock(self) -> float | None:
        return parse_clock(self.page["clock"])

    @property
    def deltas(self) -> int:
        return int(self.page["types"].get("delta", 0))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))]


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


@dataclass
class Run:
    nodes: int
    speed: float
    seconds: int
    warmup: float
    tick: float
    samples: list[Sample] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    setup: dict[str, float] = field(default_factory=dict)
    start_epoch_ms: float = 0.0
    log_end: int = 0  # the stack log's size when sampling ended (shutdown noise after it)


# -- the command -----------------------------------------------------------------------------
class Command(BaseCommand):
    help = "Measure whether the room page keeps up with a big room at speed (prints a table)."

    def add_arguments(self, parser: CommandParser) -> None:
        add = parser.add_argument
        add("--nodes", type=int, default=1000)
        add("--speed", type=float, default=10.0)
        add("--seconds", type=int, default=60, help="wall seconds sampled")
        add("--pods-per-node", type=int, default=5, help="bare pods per node")
        add("--replicas", type=int, help="Deployment replicas (default: one per node)")
        add("--warmup", type=float, default=5.0, help="wall seconds left out of the summary")
        add("--tick", type=float, help="PLAYGROUND_TICK_SECONDS (default: as make run)")
        add("--screenshot", help="default: test-artifacts/pagebench-NODES.png")
        add("--internal", choices=["create", "resume"], help=argparse.SUPPRESS)
        add("--scenario-file", help=argparse.SUPPRESS)
        add("--room", type=int, help=argparse.SUPPRESS)

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["internal"]:
            self._internal(opts)
            return
        if not Path(CHROMIUM).exists():
            raise CommandError("Debian's chromium is not installed (/usr/bin/chromium)")
        tick = opts["tick"] or float(os.environ.get("PLAYGROUND_TICK_SECONDS", "1.0"))
        run = Run(opts["nodes"], opts["speed"], opts["seconds"], opts["warmup"], tick)
        screenshot = Path(opts["screenshot"] or ARTIFACTS / f"pagebench-{run.nodes}.png")
        replicas = run.nodes if opts["replicas"] is None else opts["replicas"]
        scenario = bench_scenario(run.nodes, opts["pods_per_node"], replicas)

        def on_sigterm(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, on_sigterm)
        workdir = Path(tempfile.mkdtemp(prefix="pagebench-"))
        stack = Stack(workdir, opts["tick"])
        log_copy = ARTIFACTS / f"pagebench-{run.nodes}.log"
        try:
            t0 = time.monotonic()
            stack.start()
            run.setup["stack"] = time.monotonic() - t0
            self.stderr.write(f"stack up at {stack.url} in {run.setup['stack']:.1f} s")
            scenario_file = workdir / "scenario.yaml"
            scenario_file.write_text(yaml.safe_dump(scenario, sort_keys=False))
            t0 = time.monotonic()
            out = stack.manage(
                "pagebench", "--internal", "create", "--scenario-file", str(scenario_file),
                "--speed", str(run.speed),
            )  # fmt: skip
            room = json.loads(out.strip().splitlines()[-1])
            run.setup["create"] = time.monotonic() - t0
            self.stderr.write(
                f"room {room['slug']} created, paused, in {run.setup['create']:.1f} s"
            )
            self._measure(run, stack, room, screenshot)
        except KeyboardInterrupt:
            self.stderr.write("interrupted: stopping the stack")
        finally:
            run.log_end = run.log_end or stack.log_path.stat().st_size
            stack.close()
            signal.signal(signal.SIGTERM, previous)
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copyfile(stack.log_path, log_copy)
            shutil.rmtree(workdir, ignore_errors=True)
        if len(run.samples) >= 2:
            self._report(run, log_copy, screenshot)

    def _internal(self, opts: dict[str, Any]) -> None:
        """In the child process, with the stack's environment."""
        from django.db import transaction
        from django.utils import timezone

        from controller.models import Room
        from controller.rooms import controls, create

        if opts["internal"] == "create":
            text = Path(opts["scenario_file"]).read_text()
            name = safe_yaml.load(text)["metadata"]["name"]
            # One transaction, so that the worker never sees the room running: room_create
            # anchors the clock before it builds the engine, and a big room's first tick would
            # jump the build time x speed (past the first faults). Re-anchored at 0 s, as
            # controller.bench.live_bench does, and paused until the page is up.
            with transaction.atomic():
                room = create.room_create(name, text, None, opts["speed"])
                Room.objects.filter(pk=room.pk).update(wall_anchor=timezone.now(), sim_anchor_ms=0)
                controls.room_control(room.pk, "pause", None, "pagebench")
            out = {"id": room.pk, "slug": room.slug, "token": room.operator_token}
            self.stdout.write(json.dumps(out))
        else:
            controls.room_control(opts["room"], "resume", None, "pagebench")

    # -- the browser ------------------------------------------------------------------------
    def _measure(self, run: Run, stack: Stack, room: dict[str, Any], screenshot: Path) -> None:
        from playwright.sync_api import sync_playwright

        db = sqlite3.connect(f"file:{stack.db_path}?mode=ro", uri=True, timeout=10)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    context = browser.new_context(viewport={"width": 1400, "height": 1000})
                    page = context.new_page()
                    page.on("console", lambda m: self._on_console(run, m))
                    page.on("pageerror", lambda e: run.page_errors.append(str(e)))
                    page.on("response", lambda r: r.status >= 400 and run.failed_requests.append(f"{r.status} {r.url}"))  # fmt: skip
                    page.add_init_script(INIT_SCRIPT)
                    t0 = time.monotonic()
                    page.goto(f"{stack.url}/rooms/{room['slug']}/?token={room['token']}")
                    page.wait_for_function(
                        "window.playgroundRoom && window.playgroundRoom.state().seq >= 0",
                        timeout=300_000,
                    )
                    run.setup["snapshot"] = time.monotonic() - t0
                    stack.manage("pagebench", "--internal", "resume", "--room", str(room["id"]))
                    self.stderr.write(
                        f"page loaded with the snapshot applied in {run.setup['snapshot']:.1f} s;"
                        f" room resumed; sampling for {run.seconds} s"
                    )
                    self._sample(run, stack, page, db, room["id"])
                    run.log_end = stack.log_path.stat().st_size
                    screenshot.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(screenshot), full_page=True)
                finally:
                    with contextlib.suppress(Exception):
                        browser.close()
        finally:
            db.close()

    @staticmethod
    def _on_console(run: Run, msg: Any) -> None:
        if msg.type in ("error", "warning"):
            run.console.append(f"{msg.type}: {msg.text}")

    def _sample(
        self, run: Run, stack: Stack, page: Any, db: sqlite3.Connection, room_id: int
    ) -> None:
        start = time.monotonic()
        run.start_epoch_ms = time.time() * 1000
        self.stdout.write(HEAD)
        for i in range(run.seconds + 1):
            delay = start + i - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = time.monotonic() - start
            server = read_server(db, room_id)
            e0 = time.perf_counter()
            probe = page.evaluate(SAMPLE_JS)
            eval_ms = (time.perf_counter() - e0) * 1000
            messages = [
                Message(m["type"], m["arrived"], m["done"], m["chars"], m["t"], m["simT"])
                for m in probe.pop("log")
            ]
            sample = Sample(t, server, probe, eval_ms, messages)
            self.stdout.write(row(sample, run.samples[-1] if run.samples else None))
            run.samples.append(sample)
            if dead := stack.exited():
                raise CommandError(f"stack process(es) exited: {', '.join(dead)}")

    # -- the summary ------------------------------------------------------------------------
    def _report(self, run: Run, log_copy: Path, screenshot: Path) -> None:
        w = self.stdout.write
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
        csv_path = ARTIFACTS / f"pagebench-{run.nodes}.csv"
        write_csv(run, csv_path)
        w(f"  samples: {csv_path}")
        w(f"  screenshot: {screenshot if screenshot.exists() else '(none: the run was cut short)'}")


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
