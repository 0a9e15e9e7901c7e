"""The headless ``simulate`` command, usable without Django (``python -m controller.engine.cli``)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import TextIO

from .expect import check_all, describe
from .scenario import ScenarioError, load_scenario_file
from .simulation import Simulation
from .state import cluster_state
from .timeline import format_table, to_json

MAX_UNTIL_S = 9_223_372_036  # Go's largest duration, in whole seconds


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="simulate")
    parser.add_argument("scenario", help="scenario YAML file")
    parser.add_argument("--until", type=float, default=None, help="simulated seconds to run")
    parser.add_argument("--format", choices=("jsonl", "table"), default="jsonl")
    parser.add_argument("--final-state", dest="final_state", default=None, help="write JSON here")
    parser.add_argument(
        "--check", action="store_true", help="check spec.expect; exit 1 with a report if one fails"
    )
    return parser


def run(
    scenario_path: str,
    until: float | None,
    fmt: str,
    final_state: str | None,
    check: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """Exit codes: 0 fine, 1 an expectation failed, 2 bad input."""
    try:
        scenario = load_scenario_file(scenario_path)
    except ScenarioError as exc:
        err.write(f"error: {exc}\n")
        return 2
    if until is not None and not (math.isfinite(until) and 0 <= until <= MAX_UNTIL_S):
        err.write(f"error: --until: must be between 0 and {MAX_UNTIL_S} seconds, got {until}\n")
        return 2
    until_ms = round(until * 1000) if until is not None else scenario.duration_ms
    state_file = None
    if final_state:
        try:  # before the run, so that a bad path costs nothing
            state_file = open(final_state, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            err.write(f"error: --final-state: cannot write {final_state}: {exc.strerror}\n")
            return 2
    sim = Simulation(scenario)
    try:
        sim.run(until_ms)
    except ScenarioError as exc:
        err.write(f"error: {exc}\n")
        if state_file is not None:
            state_file.close()
        return 2
    events = sim.timeline.events
    if not check:
        if fmt == "jsonl":
            out.writelines(to_json(e) + "\n" for e in events)
        else:
            out.writelines(line + "\n" for line in format_table(events))
    if state_file is not None:
        with state_file:
            json.dump(cluster_state(sim), state_file, sort_keys=True, indent=1)
    if check:
        failures = check_all(scenario.expect, events)
        ok = len(scenario.expect) - len(failures)
        paths = scenario.expect_paths or [f"spec.expect[{i}]" for i in range(len(scenario.expect))]
        for i, e, why in failures:
            out.write(f"FAIL {paths[i]}: {describe(e)}\n     {why}\n")
        problems = []
        if scenario.lesson is not None:
            from .lesson import check_lesson

            problems = check_lesson(scenario.lesson, events, until_ms)
            for path, why in problems:
                out.write(f"FAIL {path}: {why}\n")
        out.write(f"{scenario.name}: {ok} of {len(scenario.expect)} expectations hold\n")
        if scenario.lesson is not None:
            n = len(scenario.lesson.checkpoints)
            out.write(
                f"{scenario.name}: lesson of {len(scenario.lesson.steps)} steps, "
                f"{n} checkpoints, " + ("all reached\n" if not problems else "problems above\n")
            )
        return 1 if failures or problems else 0
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(
            args.scenario,
            args.until,
            args.format,
            args.final_state,
            args.check,
            sys.stdout,
            sys.stderr,
        )
    except BrokenPipeError:  # `... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
