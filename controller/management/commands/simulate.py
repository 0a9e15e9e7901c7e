"""``python manage.py simulate SCENARIO.yaml [--until S] [--format jsonl|table] [--final-state F]``

Runs a scenario headless (no Redis, Celery or browser) and prints its timeline.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from controller.engine import cli


class Command(BaseCommand):
    help = "Run a scenario headless and print its timeline (design.md, 'The headless CLI')."

    def add_arguments(self, parser: CommandParser) -> None:
        cli.build_parser(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        code = cli.run(
            opts["scenario"],
            opts["until"],
            opts["format"],
            opts["final_state"],
            opts["check"],
            self.stdout,
            self.stderr,
        )
        if code:
            self.stdout.flush()
            sys.exit(code)
