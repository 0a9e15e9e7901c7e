"""``python manage.py bench``: engine speed and memory for 100, 1,000 and 5,000 nodes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from controller.bench import format_rows, run_all


class Command(BaseCommand):
    help = "Benchmark the engine: one simulated hour per cluster size; prints a table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sizes", default="100,1000,5000", help="comma-separated node counts")
        parser.add_argument("--leak-sizes", default="1000", help="sizes for the memory-leak row")

    def handle(self, *args: Any, **opts: Any) -> None:
        sizes = [int(s) for s in opts["sizes"].split(",") if s]
        leak_sizes = [int(s) for s in opts["leak_sizes"].split(",") if s]
        for line in format_rows(run_all(sizes, leak_sizes)):
            self.stdout.write(line)
