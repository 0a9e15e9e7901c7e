"""Comparisons: two rooms of one scenario with different settings, on one clock."""

from __future__ import annotations

import json
from typing import Any

import yaml
from django.db import transaction
from django.utils.text import slugify

from .. import limits
from ..engine import safe_yaml
from ..engine.scenario import (
    Scenario,
    ScenarioError,
    _json_documents,
    load_scenario,
)
from ..engine.versions import profile_for
from ..models import (
    Comparison,
    LessonState,
    Room,
)
from . import build
from .create import _create_with_unique_slug, _leading_comments, room_prepare
from .errors import ActionError, _check_speed, refuse_unstorable

# -- comparisons: two rooms of one scenario, one clock --------------------------------------
COMPARABLE = ("kubernetesVersion", "controllerManager", "kubelet", "apiServer", "featureGates")


def with_changes(text: str, changes: dict[str, Any], side: str) -> str:
    """The scenario with ``changes`` (the release and component settings) merged into its
    spec, section by section; its leading comment is kept."""
    if not isinstance(changes, dict):
        raise ActionError(f"{side}: the changes must be a mapping (e.g. apiServer: {{...}})")
    unknown = sorted(set(changes) - set(COMPARABLE))
    if unknown:
        raise ActionError(f"{side}.{unknown[0]}: only {', '.join(COMPARABLE)} can differ")
    # A JSON scenario (a generated big one often is) is read and written as JSON: ten times
    # faster than YAML both ways (a 300-node, 9,000-pod comparison: 0.1 s instead of 1.6 s).
    as_json = _json_documents(text)
    docs = as_json or safe_yaml.load_all(text)
    root = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"), None)
    if root is None:
        raise ActionError("the scenario has no Scenario document")
    spec = root.setdefault("spec", {})
    own = profile_for(spec.get("kubernetesVersion")).version
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(spec.get(key), dict):
            spec[key] = {**spec[key], **value}
        else:
            spec[key] = value
    comments = _leading_comments(text)
    runs = spec.get("kubernetesVersion")
    if (
        comments
        and runs is not None
        and profile_for(runs, f"{side}.kubernetesVersion").version != own
    ):
        comments.insert(
            0, f"# Written for Kubernetes {own}: the times these notes quote may differ."
        )
    if as_json is not None:
        try:
            return json.dumps(root, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            pass  # a value of the changes JSON cannot hold (a date, NaN): written as YAML
    others = [d for d in docs if d is not root]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the same text, faster
    return "".join(x + "\n" for x in comments) + yaml.dump_all(
        [root, *others], Dumper=dumper, sort_keys=False
    )


def comparison_create(
    name: str,
    scenario_yaml: str,
    sides: list[tuple[str, dict[str, Any]]],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
    inline_max: int | None = None,
) -> Comparison:
    """Two rooms of one scenario, each with its changes, started together on one clock (and
    one operator token). ``sides`` is [(label, changes), (label, changes)]; an error names the
    side and the field and creates nothing. Built as the room form's rooms are
    (build.room_start): small ones now, big ones by workers (both live together, when the
    second is built); returns at once."""
    texts = []
    for side, (label, changes) in zip(("left", "right"), sides, strict=True):
        if not label.strip():
            raise ActionError(f"{side}: give this side a label")
        refuse_unstorable(label, f"{side}.label")
        texts.append(with_changes(scenario_yaml, changes, side))
    speed = _check_speed(speed)
    creator = creator or limits.owner_key(owner)
    limits.check_running_rooms(creator, new=2)
    try:
        base = name or load_scenario(scenario_yaml).name
    except ScenarioError as exc:
        raise ActionError(f"left: {exc}") from None
    with transaction.atomic():
        comparison, scenarios = comparison_rooms(
            base, list(zip(sides, texts, strict=True)), owner, speed, creator
        )
        build.comparison_start(comparison, scenarios, inline_max)
    return Comparison.objects.select_related("left", "right").get(pk=comparison.pk)


def comparison_rooms(
    base: str, sides: list[tuple[tuple[str, Any], str]], owner: Any, speed: float, creator: str
) -> tuple[Comparison, list[Scenario]]:
    """The comparison's two rooms stored "building" (validated; not built), one operator
    token, no lesson state (two rooms on one clock cannot each pause at their own
    checkpoints: a lesson scenario compared side by side runs as a plain scenario), and the
    comparison. build.comparison_start builds them; they go live together (build._build)."""
    with transaction.atomic():
        rooms, scenarios = [], []
        for side, ((label, _), text) in zip(("left", "right"), sides, strict=True):
            try:
                room, scenario = room_prepare(
                    f"{base} ({label})",
                    text,
                    owner,
                    speed,
                    creator=creator,
                    _counted=True,
                    build_state=Room.BUILDING,
                )
            except ScenarioError as exc:
                raise ActionError(f"{side}: {exc}") from None
            rooms.append(room)
            scenarios.append(scenario)
        Room.objects.filter(pk__in=[r.pk for r in rooms]).update(
            operator_token=rooms[0].operator_token
        )
        LessonState.objects.filter(room__in=rooms).delete()
        comparison = _create_with_unique_slug(
            Comparison,
            _unique_comparison_slug,
            base,
            name=base,
            left=rooms[0],
            right=rooms[1],
            left_label=sides[0][0][0][:80],
            right_label=sides[1][0][0][:80],
        )
    return comparison, scenarios


def _unique_comparison_slug(name: str, taken: frozenset[str] = frozenset()) -> str:
    base = slugify(f"compare-{name}")[:60] or "compare"
    slug, n = base, 2
    while slug in taken or Comparison.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug
