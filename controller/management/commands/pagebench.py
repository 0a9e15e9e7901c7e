"""``python manage.py pagebench [--nodes 1000] [--speed 10] [--seconds 60]``: does the room
page keep up with a big room? The options; the run is controller.bench.page (its docstring
says what is measured and how)."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from controller.bench.page.driver import PageBench
from controller.bench.procs import BenchError


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
        add(
            "--profile", action="store_true",
            help="record a CPU profile of the page after the warmup (Chromium's Profiler over"
            " CDP): test-artifacts/pagebench-NODES.cpuprofile and the top functions by self"
            " time (the profiler's overhead skews the other figures a little)",
        )  # fmt: skip
        add("--internal", choices=["create", "resume"], help=argparse.SUPPRESS)
        add("--scenario-file", help=argparse.SUPPRESS)
        add("--room", type=int, help=argparse.SUPPRESS)

    def handle(self, *args: Any, **opts: Any) -> None:
        bench = PageBench(self.stdout.write, self.stderr.write)
        try:
            if opts["internal"]:
                bench.internal(opts)  # in the child that creates or resumes the room
            else:
                bench.run(opts)
        except BenchError as exc:
            raise CommandError(str(exc)) from None
