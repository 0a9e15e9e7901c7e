"""``python manage.py bench``: the benchmark rows (figures printed, nothing asserted).

Rows (``--only ROW[,ROW]`` runs some alone; all by default):

- ``engine``: one simulated hour per cluster size (speed, memory), each in a fresh process;
  each row is compared with its previous run (``.bench/last.json``, bench/history.py);
- ``build``: room creation at ``--build-sizes`` nodes (30 pods each), seconds by phase
  (validate, parse, engine t=0, store -> live; the first snapshot), each in a fresh process;
- ``live``: a live room of ``--live`` nodes at 10x: tick mean/p95/max, bytes per tick;
- ``rooms``: ``--rooms`` running rooms on ``--workers`` real Celery workers and beat: ticks
  on time, CPU seconds per room per minute;
- ``viewers``: ``--viewers`` websocket clients through ``--webs`` Daphne processes: wall
  time from an operator's action to every viewer's screen;
- ``kubeapi``: a real kubectl against a room of ``--kubeapi-nodes`` nodes (30 pods each)
  served by Daphne's https port: ``get pods -A``, ``describe node``, and ``--kubeapi-watchers``
  ``get pods -A -w`` during a zone outage at 10x, with their lag and Daphne's memory.
- ``noisy``: the rooms row (``--rooms``, ``--room-nodes``, ``--workers``, ``--seconds``) while
  one address does the most the limits allow (bench/noisy.py): ticks on time and lag;
- ``abuse``: the abuse suite of issue #35 (bench/abuse.py; what tests/app/test_abuse.py
  runs): each attack while 20 rooms of 100 nodes run at 10x, a table of figures and verdicts.

The last six start their own redis-server on a free port (as ``pagebench`` does) and run
in a child process pointed at it, so that a running ``make run`` is neither used nor
disturbed; ``--use-redis-url`` uses REDIS_URL instead (then no other worker may be announced
on it). ``rooms`` and ``viewers`` start their own Celery workers, beat and Daphne processes.
Their rooms live in DATABASE_URL when it is set (migrated first; PostgreSQL for the
figures of a real deployment), else in a private SQLite file, and are deleted afterwards.
Every row prints the load average.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from controller.bench import abuse, engine, history, kubeapi, live, noisy, rooms, stats, viewers

ROWS = ("engine", "live", "rooms", "viewers", "build", "kubeapi", "noisy", "abuse")


class Command(BaseCommand):
    help = "Benchmark rows: engine, live room, many rooms on workers, viewers through Daphne."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--only", default=",".join(ROWS), help=f"comma-separated rows of {', '.join(ROWS)}"
        )
        parser.add_argument("--sizes", default="100,1000,5000", help="engine row: node counts")
        parser.add_argument("--leak-sizes", default="1000", help="engine row: memory-leak sizes")
        parser.add_argument(
            "--build-sizes", default="1000,5000", help="build row: node counts (30 pods each)"
        )
        parser.add_argument("--live", type=int, default=5000, help="live row: nodes")
        parser.add_argument("--live-ticks", type=int, default=60, help="live row: ticks")
        parser.add_argument(
            "--live-pods-per-node", type=int, default=10, help="live row: pods per node"
        )
        parser.add_argument("--rooms", type=int, default=50, help="rooms row: rooms")
        parser.add_argument("--room-nodes", type=int, default=100, help="rooms row: nodes each")
        parser.add_argument("--workers", type=int, default=2, help="rooms row: worker processes")
        parser.add_argument("--seconds", type=float, default=60.0, help="rooms row: duration")
        parser.add_argument("--viewers", type=int, default=100, help="viewers row: clients")
        parser.add_argument("--webs", type=int, default=2, help="viewers row: Daphne processes")
        parser.add_argument("--actions", type=int, default=20, help="viewers row: actions")
        parser.add_argument("--kubeapi-nodes", type=int, default=5000, help="kubeapi row: nodes")
        parser.add_argument(
            "--kubeapi-watchers", type=int, default=20, help="kubeapi row: get pods -A -w watchers"
        )
        parser.add_argument(
            "--kubeapi-seconds", type=float, default=60.0, help="kubeapi row: seconds watched"
        )
        parser.add_argument(
            "--noisy-parts",
            default=",".join(noisy.PARTS),
            help="noisy row: what the neighbour does (some of: " + ", ".join(noisy.PARTS) + ")",
        )
        parser.add_argument(
            "--use-redis-url",
            action="store_true",
            help="use the Redis on REDIS_URL instead of starting a private redis-server",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        rows = [r.strip() for r in opts["only"].split(",") if r.strip()]
        unknown = [r for r in rows if r not in ROWS]
        if unknown:
            raise CommandError(f"--only: unknown row {unknown[0]!r} (rows: {', '.join(ROWS)})")
        if "engine" in rows:
            sizes = [int(s) for s in opts["sizes"].split(",") if s]
            leak_sizes = [int(s) for s in opts["leak_sizes"].split(",") if s]
            engine_rows = engine.run_all(sizes, leak_sizes)
            load_avg = stats.load_average()
            for line in engine.format_rows(engine_rows):
                self.stdout.write(line)
            self.stdout.write(f"  [{load_avg}]")
            # Each row against its previous run (.bench/last.json), then this run is stored.
            last = history.load()
            for r in engine_rows:
                self.stdout.write(history.compare(r, last.get(history.row_key(r))))
            history.store(engine_rows, history.commit(), load_avg)
        if "build" in rows:
            from django.core.management import call_command

            from controller.bench.build import format_build_rows, run_build_rows

            call_command("migrate", verbosity=0, interactive=False)  # rooms live in the DB
            sizes = [int(s) for s in opts["build_sizes"].split(",") if s]
            for line in format_build_rows(run_build_rows(sizes)):
                self.stdout.write(line)
            self.stdout.write(f"  [{stats.load_average()}]")
        stack_rows = [r for r in rows if r not in ("engine", "build")]
        if stack_rows and not opts["use_redis_url"]:
            self._in_child_with_own_redis(stack_rows, opts)
            return
        if stack_rows:
            self._ready()
        if "live" in rows:
            r = live.live_bench(
                opts["live"], opts["live_ticks"], pods_per_node=opts["live_pods_per_node"]
            )
            self.stdout.write(live.format_live(r))
        try:
            if "rooms" in rows:
                r = rooms.rooms_bench(
                    opts["rooms"], opts["room_nodes"], opts["workers"], opts["seconds"]
                )
                self.stdout.write(rooms.format_rooms(r))
            if "viewers" in rows:
                r = viewers.viewers_bench(opts["viewers"], opts["webs"], opts["actions"])
                self.stdout.write(viewers.format_viewers(r))
            if "kubeapi" in rows:
                r = kubeapi.kubeapi_bench(
                    opts["kubeapi_nodes"], 30, opts["kubeapi_watchers"], opts["kubeapi_seconds"]
                )
                self.stdout.write(kubeapi.format_kubeapi(r))
            if "noisy" in rows:
                parts = tuple(p.strip() for p in opts["noisy_parts"].split(",") if p.strip())
                unknown = [p for p in parts if p not in noisy.PARTS]
                if unknown:
                    raise CommandError(
                        f"--noisy-parts: unknown part {unknown[0]!r} (parts: {', '.join(noisy.PARTS)})"
                    )
                r = noisy.noisy_bench(
                    opts["rooms"], opts["room_nodes"], opts["workers"], opts["seconds"], parts=parts
                )
                self.stdout.write(noisy.format_noisy(r))
            if "abuse" in rows:
                self.stdout.write(abuse.format_abuse(abuse.abuse_run()))
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None

    def _in_child_with_own_redis(self, rows: list[str], opts: dict[str, Any]) -> None:
        """Run ``rows`` in a child ``manage.py bench`` whose REDIS_URL is a private
        redis-server on a free port (stopped afterwards), and whose database is DATABASE_URL
        when set, else a private SQLite file."""
        from controller.bench.procs import REPO, BenchError
        from controller.bench.stack import Stack

        binary = shutil.which("redis-server")
        if binary is None:
            raise CommandError(
                "redis-server is not installed: install it (make test does), or give "
                "--use-redis-url to use the Redis on REDIS_URL"
            )
        workdir = tempfile.mkdtemp(prefix="bench-redis-")
        args = [sys.executable, str(REPO / "manage.py"), "bench", "--use-redis-url"]
        args += ["--only", ",".join(rows)]
        for name in (
            "live",
            "live_ticks",
            "live_pods_per_node",
            "rooms",
            "room_nodes",
            "workers",
            "seconds",
            "viewers",
            "webs",
            "actions",
            "kubeapi_nodes",
            "kubeapi_watchers",
            "kubeapi_seconds",
            "noisy_parts",
        ):
            args += [f"--{name.replace('_', '-')}", str(opts[name])]
        env = dict(os.environ)
        if not os.environ.get("DATABASE_URL"):
            # A private SQLite file (migrated by the child): the dev database's own running
            # rooms (make run's demo) would be ticked by the benchmark's workers too.
            env["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
        try:
            with Stack(env, Path(workdir), redis=binary) as stack:  # REDIS_URL: its own
                code = subprocess.call(args, env=stack.env, cwd=REPO)
        except BenchError as exc:
            raise CommandError(str(exc)) from None
        if code:
            raise CommandError(f"the benchmark rows {', '.join(rows)} failed (exit {code})")

    def _ready(self) -> None:
        from django.conf import settings
        from django.core.management import call_command
        from redis import Redis
        from redis.exceptions import RedisError

        try:
            Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
        except RedisError as exc:
            raise CommandError(
                f"Redis at REDIS_URL={settings.REDIS_URL} does not answer ({exc}); start one "
                "(make run does) or run only the engine row with --only engine"
            ) from None
        call_command("migrate", verbosity=0, interactive=False)  # the rooms live in the database
