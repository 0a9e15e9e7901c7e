"""pagebench's run: the private stack, the room (created in a child process with the
stack's environment), headless Chromium on the room page, one sample a wall second."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from ...engine import safe_yaml
from ..procs import BenchError
from ..scenarios import page_scenario
from ..stack import Stack
from .probe import INIT_SCRIPT, SAMPLE_JS, Message, Run, Sample, Span, read_server
from .profile import Profiler
from .report import HEAD, report, row

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


# -- the stack -------------------------------------------------------------------------------
class PageStack(Stack):
    """redis-server, Daphne, a Celery worker and beat on a temporary SQLite file, all logging
    to ``stack.log``. Each process runs in its own session (a Ctrl-C reaches this command
    only); ``close`` stops them."""

    def __init__(self, workdir: Path, tick: float | None, redis_bin: str) -> None:
        self.db_path = workdir / "pagebench.sqlite3"
        self.log_path = workdir / "stack.log"
        self.log_path.touch()
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{self.db_path}", "DEBUG": "1"}
        env.pop("PLAYGROUND_TEST_DB", None)
        if tick is not None:
            env["PLAYGROUND_TICK_SECONDS"] = str(tick)
        super().__init__(
            env, workdir, redis=redis_bin, webs=1, workers=1, beat=True, log=self.log_path,
            detached=True,
        )  # fmt: skip

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.webs[0].port}"

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
            raise BenchError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def start(self) -> None:
        self.start_redis()
        self.manage("migrate", "--noinput", "-v", "0")
        self.start_app()


# -- the run ---------------------------------------------------------------------------------
class PageBench:
    """One run of ``manage.py pagebench``: ``opts`` are the command's options; the table and
    the summary go to ``out``, progress to ``err`` (a line each)."""

    def __init__(self, out: Callable[[str], Any], err: Callable[[str], Any]) -> None:
        self.out = out
        self.err = err

    def run(self, opts: dict[str, Any]) -> None:
        """Start the stack, create the room, measure the page, stop the stack, report."""
        if not Path(CHROMIUM).exists():
            raise BenchError("Debian's chromium is not installed (/usr/bin/chromium)")
        tick = opts["tick"] or settings.PLAYGROUND_TICK_SECONDS
        run = Run(opts["nodes"], opts["speed"], opts["seconds"], opts["warmup"], tick)
        screenshot = Path(opts["screenshot"] or ARTIFACTS / f"pagebench-{run.nodes}.png")
        replicas = run.nodes if opts["replicas"] is None else opts["replicas"]
        scenario = page_scenario(run.nodes, opts["pods_per_node"], replicas)

        def on_sigterm(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt

        redis_bin = shutil.which("redis-server")
        if not redis_bin:
            raise BenchError("redis-server is not installed (make test installs it)")
        previous = signal.signal(signal.SIGTERM, on_sigterm)
        workdir = Path(tempfile.mkdtemp(prefix="pagebench-"))
        stack = PageStack(workdir, opts["tick"], redis_bin)
        log_copy = ARTIFACTS / f"pagebench-{run.nodes}.log"
        try:
            t0 = time.monotonic()
            stack.start()
            run.setup["stack"] = time.monotonic() - t0
            self.err(f"stack up at {stack.url} in {run.setup['stack']:.1f} s")
            scenario_file = workdir / "scenario.yaml"
            scenario_file.write_text(yaml.safe_dump(scenario, sort_keys=False))
            t0 = time.monotonic()
            out = stack.manage(
                "pagebench", "--internal", "create", "--scenario-file", str(scenario_file),
                "--speed", str(run.speed),
            )  # fmt: skip
            room = json.loads(out.strip().splitlines()[-1])
            run.setup["create"] = time.monotonic() - t0
            self.err(f"room {room['slug']} created, paused, in {run.setup['create']:.1f} s")
            self._measure(run, stack, room, screenshot, opts)
        except KeyboardInterrupt:
            self.err("interrupted: stopping the stack")
        finally:
            run.log_end = run.log_end or stack.log_path.stat().st_size
            stack.close()
            signal.signal(signal.SIGTERM, previous)
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copyfile(stack.log_path, log_copy)
            shutil.rmtree(workdir, ignore_errors=True)
        if len(run.samples) >= 2:
            report(run, log_copy, screenshot, ARTIFACTS / f"pagebench-{run.nodes}.csv", self.out)

    def internal(self, opts: dict[str, Any]) -> None:
        """In the child process, with the stack's environment."""
        from django.db import transaction
        from django.utils import timezone

        from ...models import Room
        from ...rooms import controls, create

        if opts["internal"] == "create":
            text = Path(opts["scenario_file"]).read_text()
            name = safe_yaml.load(text)["metadata"]["name"]
            # One transaction, so that the worker never sees the room running: room_create
            # anchors the clock before it builds the engine, and a big room's first tick would
            # jump the build time x speed (past the first faults). Re-anchored at 0 s, as
            # controller.bench.live.live_bench does, and paused until the page is up.
            with transaction.atomic():
                room = create.room_create(name, text, None, opts["speed"])
                Room.objects.filter(pk=room.pk).update(wall_anchor=timezone.now(), sim_anchor_ms=0)
                controls.room_control(room.pk, "pause", None, "pagebench")
            out = {"id": room.pk, "slug": room.slug, "token": room.operator_token}
            self.out(json.dumps(out))
        else:
            controls.room_control(opts["room"], "resume", None, "pagebench")

    # -- the browser ------------------------------------------------------------------------
    def _measure(
        self, run: Run, stack: PageStack, room: dict[str, Any], screenshot: Path,
        opts: dict[str, Any],
    ) -> None:  # fmt: skip
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
                    self.err(
                        f"page loaded with the snapshot applied in {run.setup['snapshot']:.1f} s;"
                        f" room resumed; sampling for {run.seconds} s"
                    )
                    profiler = Profiler(browser, context, page) if opts["profile"] else None
                    self._sample(run, stack, page, db, room["id"], profiler)
                    if profiler:
                        profiler.stop(run, ARTIFACTS / f"pagebench-{run.nodes}.cpuprofile")
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
        self, run: Run, stack: PageStack, page: Any, db: sqlite3.Connection, room_id: int,
        profiler: Profiler | None,
    ) -> None:  # fmt: skip
        start = time.monotonic()
        run.start_epoch_ms = time.time() * 1000
        self.out(HEAD)
        for i in range(run.seconds + 1):
            delay = start + i - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = time.monotonic() - start
            if profiler and not profiler.started and t >= run.warmup:
                profiler.start()
            server = read_server(db, room_id)
            e0 = time.perf_counter()
            probe = page.evaluate(SAMPLE_JS)
            eval_ms = (time.perf_counter() - e0) * 1000
            messages = [
                Message(m["type"], m["arrived"], m["done"], m["chars"], m["t"], m["simT"])
                for m in probe.pop("log")
            ]
            run.tasks += [Span("longtask", x["start"], x["dur"]) for x in probe.pop("tasks")]
            run.measures += [Span(x["name"], x["start"], x["dur"]) for x in probe.pop("measures")]
            run.first_drawn_ms = run.first_drawn_ms or probe["firstDrawn"]
            sample = Sample(t, server, probe, eval_ms, messages)
            self.out(row(sample, run.samples[-1] if run.samples else None))
            run.samples.append(sample)
            if dead := stack.exited():
                raise BenchError(f"stack process(es) exited: {', '.join(dead)}")

    # -- the summary ------------------------------------------------------------------------
