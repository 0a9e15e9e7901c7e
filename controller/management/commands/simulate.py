"""``python manage.py simulate SCENARIO.yaml [--until S] [--format jsonl|table] [--final-state F]``

Runs a scenario headless (no Redis, Celery or browser) and prints its timeline.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from controller.engine import cli


class Command(BaseCommand):
    help = "Run a scenario headless and print its timeline (design.md, 'The headless CLI')."

    def add_arguments(self, parser: CommandParser) -> None:
        cli.build_parser(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            code = cli.run(
                opts["scenario"],
                opts["until"],
                opts["format"],
                opts["final_state"],
                opts["check"],
                self.stdout,
                self.stderr,
            )
        except BrokenPipeError:  # `simulate x.yaml | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        if code:
            self.stdout.flush()
            sys.exit(code)
