"""The import report: what the simulation cannot represent, one ``{"kind", "name", "why"}``
per entry, merged per reason, carried by an imported scenario as its leading comment."""

from __future__ import annotations

from typing import Any

import yaml

Report = list[dict[str, str]]
IMPORTED_PREFIX = "Imported from kubectl output:"
IMPORT_REPORT_HEADER = "# Import report (what the simulation cannot represent):"


def note(report: Report, kind: str, name: str, why: str) -> None:
    report.append({"kind": kind, "name": name, "why": why})


def object_key(ns: str, name: str) -> str:
    return f"{ns}/{name}" if ns else name


def merge_report(report: Report) -> Report:
    """One entry per (kind, why): the names joined (six at most, then how many more)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in report:
        groups.setdefault((r["kind"], r["why"]), []).append(r["name"])
    out = []
    for (kind, why), names in groups.items():
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        out.append({"kind": kind, "name": shown, "why": why})
    return out


def dump_scenario(scenario: dict[str, Any], report: Report) -> str:
    """The scenario as YAML, the report as a leading comment."""
    lines = [f"# {scenario.get('description', '')}".rstrip()]
    if report:
        lines.append(IMPORT_REPORT_HEADER)
        lines.extend(f"#   {r['kind']} {r['name']}: {r['why']}" for r in report)
    header = "\n".join(lines) + "\n"
    # Collections of scalars in flow style ({cpu: 250m, memory: 256Mi}): a third smaller, and
    # a big cluster stays within the scenario size limit.
    # libyaml's emitter: the same text as yaml.safe_dump, three times faster (a 300-node,
    # 2,400-pod cluster: 0.6 s instead of 2 s).
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return header + yaml.dump(
        scenario, Dumper=dumper, sort_keys=False, width=120, default_flow_style=None
    )


def is_imported(scenario_yaml: str) -> bool:
    """Whether a scenario was written by the import (its first line says so)."""
    return scenario_yaml.startswith(f"# {IMPORTED_PREFIX}")


def import_report_of(scenario_yaml: str) -> Report:
    """The import report an imported scenario carries in its leading comment (dump_scenario),
    or [] for any other scenario."""
    out: Report = []
    inside = False
    for line in scenario_yaml.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(IMPORT_REPORT_HEADER):
            inside = True
            continue
        if inside and line.startswith("#   "):
            kind, _, rest = line[4:].partition(" ")
            name, _, why = rest.partition(": ")
            out.append({"kind": kind, "name": name, "why": why})
    return out


def format_report(report: Report) -> str:
    return "".join(f"{r['kind']} {r['name']}: {r['why']}\n" for r in report)
