"""The command line of the import (``manage.py import_cluster``): files in, the scenario to
stdout and the report to stderr, exit 2 on bad input."""

from __future__ import annotations

import sys
from typing import Any

from ..engine.scenario import ScenarioError
from .importer import import_cluster
from .report import dump_scenario, format_report


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        raise ScenarioError(what, f"cannot read {path}: {exc.strerror}") from None


def run_cli(
    path: str,
    kubelet_config: str | None,
    controller_manager_config: str | None,
    flags: str | None,
    name: str | None,
    out: Any,
    err: Any,
) -> int:
    """The scenario to ``out``, the report to ``err``; exit 2 on bad input (with its path)."""
    try:
        scenario, report = import_cluster(
            _read(path, "FILE") if path != "-" else sys.stdin.read(),
            name=name or "imported-cluster",
            kubelet_config=_read(kubelet_config, "--kubelet-config") if kubelet_config else None,
            controller_manager_config=_read(
                controller_manager_config, "--controller-manager-config"
            )
            if controller_manager_config
            else None,
            flags=flags,
        )
    except ScenarioError as exc:
        err.write(f"error: {exc}\n")
        return 2
    out.write(dump_scenario(scenario, report))
    if report:
        err.write(f"import report: {len(report)} notes (also at the top of the scenario)\n")
        err.write(format_report(report))
    return 0
