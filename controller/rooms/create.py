"""A room's creation: the scenario validated whole, the room's rows, its engine at t=0,
the first rows stored and sent (room_went_live). build.py builds big rooms in a worker.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml
from django.db import IntegrityError, transaction
from django.utils import timezone
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
from ..lessons import progress
from ..models import (
    ClusterParameters,
    Comparison,
    LessonState,
    PendingImport,
    Room,
)
from .actions import _scenario_kubelet
from .broadcast import _broadcast_after_commit, bounded
from .errors import ActionError, _check_speed, _refuse_nul_in_scenario, refuse_unstorable
from .runtime import _CACHE, Runtime, _new_sim, _snapshot
from .tick import FIRST_DELTA_MAX, _persist
from .whatif import remember_choices


# -- rooms ----------------------------------------------------------------------------------
def _unique_slug(name: str, taken: frozenset[str] = frozenset()) -> str:
    base = slugify(name)[:60] or "room"
    slug, n = base, 1
    while slug in taken or Room.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def _create_with_unique_slug(model: Any, pick: Any, base_name: str, **fields: Any) -> Any:
    """``model.objects.create(slug=pick(name, taken), **fields)``, retried with the next slug
    when another request took the chosen one between the check and the INSERT. Each attempt
    runs in its own savepoint: on PostgreSQL a failed INSERT aborts the whole transaction
    otherwise, and the retry (and everything after it) would fail."""
    taken: set[str] = set()
    for _attempt in range(20):
        slug = pick(base_name, frozenset(taken))
        try:
            with transaction.atomic():
                return model.objects.create(slug=slug, **fields)
        except IntegrityError:
            if not model.objects.filter(slug=slug).exists():
                raise  # another constraint: not a slug race
            taken.add(slug)
    raise ActionError(f"name: could not find a free address for {base_name!r}; try another name")


def room_create(
    name: str,
    scenario_yaml: str,
    owner: Any = None,
    speed: float = 10.0,
    kubernetes_version: str | None = None,
    creator: str = "",
    _counted: bool = False,
) -> Room:
    """Create a room from a scenario (validated whole first) and persist its t=0 state.
    ``kubernetes_version`` runs the scenario under that release instead of its own (written
    into the room's scenario, so the export says it). Synchronous: the form uses
    build.room_start, which builds big rooms in a worker."""
    with transaction.atomic():
        room, scenario = room_prepare(
            name, scenario_yaml, owner, speed, kubernetes_version, creator, _counted
        )
        sim = _new_sim(room, scenario)
        rt = Runtime(sim, 0)
        delta = _persist(room, rt, fresh=True)
    room_went_live(room, rt, delta)
    return room


def room_prepare(
    name: str,
    scenario_yaml: str,
    owner: Any = None,
    speed: float = 10.0,
    kubernetes_version: str | None = None,
    creator: str = "",
    _counted: bool = False,
    build_state: str = Room.LIVE,
) -> tuple[Room, Scenario]:
    """Validate the scenario (ScenarioError names the field; the limits) and store the room's
    row and parameters, without its engine: the room and the parsed scenario."""
    refuse_unstorable(name, "name")
    limits.check_scenario_size(scenario_yaml)
    creator = creator or limits.owner_key(owner)
    if not _counted:
        limits.check_running_rooms(creator)
    scenario_yaml, scenario, objects = _checked_scenario(scenario_yaml, kubernetes_version)
    speed = _check_speed(speed)
    limits.check_budget(creator, objects, speed)
    with transaction.atomic():
        room = _create_with_unique_slug(
            Room,
            _unique_slug,
            name or scenario.name,
            name=name or scenario.name,
            owner=owner if getattr(owner, "is_authenticated", False) else None,
            creator=creator[:160],
            scenario_name=scenario.name,
            scenario_yaml=scenario_yaml,
            speed=speed,
            wall_anchor=timezone.now(),
            build_state=build_state,
            cost_objects=objects,
        )
        _store_scenario_parts(room, scenario)
    return room, scenario


def _checked_scenario(
    scenario_yaml: str, kubernetes_version: str | None = None
) -> tuple[str, Scenario, int]:
    """The scenario text (with ``kubernetes_version`` written in), the scenario, validated
    whole (ScenarioError names the field; a limit refuses its counts), and its objects for
    its cost (limits.check_scenario_counts)."""
    if kubernetes_version:
        scenario_yaml = with_kubernetes_version(scenario_yaml, kubernetes_version)
    _refuse_nul_in_scenario(scenario_yaml)
    scenario = load_scenario(scenario_yaml)  # ScenarioError names the field
    objects = limits.check_scenario_counts(scenario)
    _scenario_kubelet(scenario_yaml, scenario)
    return scenario_yaml, scenario, objects


def _store_scenario_parts(room: Room, scenario: Scenario) -> None:
    """The rows a room's scenario gives it beside its own: parameters, lesson state; and its
    What-if choices kept (the web process never parses a big scenario again for them)."""
    remember_choices(room.scenario_yaml, scenario)
    raw_spec = scenario.raw.get("spec") or {}
    ClusterParameters.objects.create(
        room=room,
        controller_manager=dict(raw_spec.get("controllerManager") or {}),
        kubelet=dict(raw_spec.get("kubelet") or {}),
        api_server=dict(raw_spec.get("apiServer") or {}),
    )
    progress.on_create(room, scenario)


def room_went_live(room: Room, rt: Runtime, delta: dict[str, Any], anchor: bool = True) -> None:
    """After the first rows are committed: simulated time starts now, not when creation began
    (building and storing a big room takes seconds, which at 10x would skip a minute), unless
    a tick already ran; the engine is cached here, its first snapshot taken, the delta sent.
    ``anchor=False``: the clock was set by the caller (a comparison's two rooms, one clock)."""
    if anchor:
        room.wall_anchor = timezone.now()
        Room.objects.filter(pk=room.pk, seq=room.seq, sim_ms=0).update(wall_anchor=room.wall_anchor)
    _CACHE[room.pk] = rt
    events = delta["events"]
    if events is None or len(events) + len(delta["nodes"]) + len(delta["pods"]) > FIRST_DELTA_MAX:
        # A big room's first delta is megabytes (measuring it alone takes a second): the
        # resync notice straight away (a client that is already there fetches snapshot.json).
        count = room.event_count
        delta = {k: delta[k] for k in ("seq", "t", "speed", "paused")}
        delta.update(type="resync", events=count, first=True)
    _broadcast_after_commit(room.pk, bounded(delta))
    _snapshot(room, rt)


def with_kubernetes_version(text: str, version: str) -> str:
    """The scenario with ``spec.kubernetesVersion`` set; its leading comment (the page's "what
    to watch for") is kept. Refused with the path when the release is not simulated."""
    profile_for(version, "kubernetesVersion")
    try:
        docs = safe_yaml.load_all(text)
    except (yaml.YAMLError, safe_yaml.YamlLimitError):
        return text  # load_scenario reports it with its position
    root = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"), None)
    if root is None or not isinstance(root.get("spec", {}), dict):
        return text
    spec = root.setdefault("spec", {})
    own = profile_for(spec.get("kubernetesVersion")).version
    runs = profile_for(version).version
    spec["kubernetesVersion"] = version
    root["spec"] = {"kubernetesVersion": version, **spec}
    comments = _leading_comments(text)
    if comments and own != runs:
        # The scenario's notes quote its own release's times: say that they may not hold.
        comments.insert(
            0,
            f"# Written for Kubernetes {own}, run here as {runs}: the times these notes "
            "quote may differ.",
        )
    header = "".join(line + "\n" for line in comments)
    others = [d for d in docs if d is not root]
    return header + yaml.safe_dump_all([root, *others], sort_keys=False)


def _leading_comments(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        out.append(line)
    return out


# -- a comparison's side: the scenario with its changes --------------------------------------
COMPARABLE = (
    "kubernetesVersion",
    "controllerManager",
    "kubelet",
    "apiServer",
    "scheduler",
    "featureGates",
)


def check_changes(changes: Any, side: str) -> None:
    """A side's changes are a mapping of what a comparison may change (no scenario needed)."""
    if not isinstance(changes, dict):
        raise ActionError(f"{side}: the changes must be a mapping (e.g. apiServer: {{...}})")
    unknown = sorted(set(changes) - set(COMPARABLE))
    if unknown:
        raise ActionError(f"{side}.{unknown[0]}: only {', '.join(COMPARABLE)} can differ")


def with_changes(text: str, changes: dict[str, Any], side: str) -> str:
    """The scenario with ``changes`` (the release and component settings) merged into its
    spec, section by section; its leading comment is kept."""
    check_changes(changes, side)
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
            merged = {**spec[key], **value}
            # The scheduler's clientConnection is a section of its own: merged field by field.
            own_cc, new_cc = spec[key].get("clientConnection"), value.get("clientConnection")
            if key == "scheduler" and isinstance(own_cc, dict) and isinstance(new_cc, dict):
                merged["clientConnection"] = {**own_cc, **new_cc}
            spec[key] = merged
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


def side_finish(room: Room, say: Callable[[str], None]) -> Scenario:
    """The worker's part of a big comparison's side (compare.comparison_create stored the
    scenario's text and the side's changes, a PendingImport, without reading them): the
    scenario with the changes, validated whole (an error names the side and the field, as the
    form's would), the room's name and parameters from it; the pending text deleted."""
    pending = PendingImport.objects.get(room=room)
    side = pending.options["compare"]
    name = side["side"]
    say("applying this side's changes")
    try:
        try:
            text = with_changes(pending.text, side["changes"], name)
        except (yaml.YAMLError, safe_yaml.YamlLimitError):
            load_scenario(pending.text)  # the error, with its position
            raise
        say("checking the scenario")
        limits.check_scenario_size(text)
        text, scenario, objects = _checked_scenario(text)
    except ScenarioError as exc:
        raise ActionError(f"{name}: {exc}") from None
    # Its cost is known only now: checked with the rooms held meanwhile (its partner's too).
    limits.check_budget(room.creator, objects, room.speed, exclude=(room.pk,))
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        if locked.build_state != Room.BUILDING or locked.scenario_yaml:
            return scenario
        base = side["name"] or scenario.name
        locked.scenario_yaml, locked.scenario_name = text, scenario.name
        locked.name = f"{base} ({side['label']})"
        locked.cost_objects = objects
        locked.save(update_fields=["scenario_yaml", "scenario_name", "name", "cost_objects"])
        _store_scenario_parts(locked, scenario)
        # Two rooms on one clock cannot each pause at their own checkpoints (compare.py).
        LessonState.objects.filter(room=locked).delete()
        if not side["name"]:
            Comparison.objects.filter(left=locked).update(name=base)
        PendingImport.objects.filter(room=room).delete()
    room.scenario_yaml, room.scenario_name, room.name = text, scenario.name, locked.name
    return scenario
