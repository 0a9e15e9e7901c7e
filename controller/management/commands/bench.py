"""``python manage.py bench``: engine speed and memory for 100, 1,000 and 5,000 nodes, and\nroom creation (by phase) at 1,000 and 5,000 nodes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from controller.bench import format_rows, run_all


class Command(BaseCommand):
    help = "Benchmark the engine: one simulated hour per cluster size; prints a table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sizes", default="100,1000,5000", help="comma-separated node counts")
        parser.add_argument("--leak-sizes", default="1000", help="sizes for the memory-leak row")
        parser.add_argument(
            "--live", type=int, default=1000, help="nodes of the live-room row (0: skip)"
        )
        parser.add_argument("--live-ticks", type=int, default=60)
        parser.add_argument(
            "--build-sizes",
            default="1000,5000",
            help="node counts of the room-creation rows (30 pods per node; empty: skip)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        sizes = [int(s) for s in opts["sizes"].split(",") if s]
        leak_sizes = [int(s) for s in opts["leak_sizes"].split(",") if s]
        for line in format_rows(run_all(sizes, leak_sizes)):
            self.stdout.write(line)
        build_sizes = [int(s) for s in opts["build_sizes"].split(",") if s]
        if build_sizes:
            from controller.bench_build import format_build_rows, run_build_rows

            for line in format_build_rows(run_build_rows(build_sizes)):
                self.stdout.write(line)
        if opts["live"]:
            from django.conf import settings
            from django.core.management import call_command
            from redis import Redis
            from redis.exceptions import RedisError

            from controller.bench import live_bench

            try:
                Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
            except RedisError as exc:
                raise CommandError(
                    f"live row: Redis at REDIS_URL={settings.REDIS_URL} does not answer ({exc}); "
                    "start one (make run does) or skip the row with --live 0"
                ) from None
            call_command(
                "migrate", verbosity=0, interactive=False
            )  # the room lives in the database

            r = live_bench(opts["live"], opts["live_ticks"])
            self.stdout.write(
                f"live room: {r['nodes']} nodes at {r['speed']}x, {r['ticks']} ticks: created in {r['create_s']} s; "
                f"tick (advance + persist + broadcast) mean {r['mean_tick_ms']} ms, p95 {r['p95_tick_ms']} ms, max {r['max_tick_ms']} ms; "
                f"bytes broadcast per tick mean {r['mean_bytes']}, max {r['max_bytes']}"
            )
