"""The built-in scenarios and lessons (controller/scenarios/) and a scenario's explanation."""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from ..engine import safe_yaml
from ..engine.scenario import (
    ScenarioError,
)
from ..engine.versions import profile_for
from ..kube_io.report import IMPORT_REPORT_HEADER
from ..lessons import definition

log = logging.getLogger(__name__)


BUILTIN_DIR = __import__("pathlib").Path(__file__).resolve().parent.parent / "scenarios"
# The tour a newcomer opens first: listed first among the lessons, and `manage.py load_demo`
# makes the room "demo-lesson" of it.
DEMO_LESSON = "25-lesson-node-failure-tour"


def scenario_about(text: str) -> str:
    """A scenario's explanation: its leading ``#`` comment lines, joined into one paragraph."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#") or line.startswith(IMPORT_REPORT_HEADER):
            break  # an imported cluster's report is shown apart (importer.import_report_of)
        lines.append(line[1:].strip())
    return " ".join(x for x in lines if x)


def builtin_lessons() -> list[dict[str, Any]]:
    """The built-in scenarios that are lessons, the demo lesson first, then by file name."""
    found = [s for s in builtin_scenarios() if s["lesson"]]
    return sorted(found, key=lambda s: (s["id"] != DEMO_LESSON, s["id"]))


def builtin_lesson_of(room: Any) -> str | None:
    """The id of the built-in lesson a class's room runs (its scenario is that lesson's text,
    or that text run under another release: the same scenario name), for a viewer's "learn
    this lesson alone" link; None for a room learning alone, an uploaded lesson, no lesson."""
    state = getattr(room, "lesson", None)
    if state is None or state.solo:
        return None
    lessons = builtin_lessons()
    same = next((s["id"] for s in lessons if s["yaml"] == room.scenario_yaml), None)
    if same is not None:
        return same
    return next((s["id"] for s in lessons if _scenario_name(s["yaml"]) == room.scenario_name), None)


@functools.lru_cache(maxsize=64)
def _scenario_name(text: str) -> str:
    """A built-in scenario's ``metadata.name`` (parsed once per text)."""
    for doc in safe_yaml.load_all(text):
        if isinstance(doc, dict) and doc.get("kind") == "Scenario":
            return str((doc.get("metadata") or {}).get("name") or "")
    return ""


def builtin_scenarios() -> list[dict[str, str]]:
    """The teaching scenarios shipped in controller/scenarios/."""
    out = []
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        text = path.read_text()
        title = re.sub(r"[-_]", " ", re.sub(r"^\d+-", "", path.stem)).capitalize()
        m = re.search(r"^\s*kubernetesVersion:\s*[\"']?([^\"'\s]+)", text, re.MULTILINE)
        version = profile_for(m.group(1) if m else None).version
        lesson = None
        try:  # only a file that says ``lesson:`` is parsed
            lesson = definition.lesson_of_text(text)
        except ScenarioError:
            log.exception("built-in scenario %s: its lesson does not load", path.name)
        out.append(
            {
                "id": path.stem,
                "title": f"{title} (Kubernetes {version})",
                "about": scenario_about(text),
                "yaml": text,
                "version": version,
                "lesson": {
                    "title": lesson.title,
                    "summary": lesson.summary,
                    "steps": len(lesson.steps),
                }
                if lesson
                else None,
            }
        )
    return out
