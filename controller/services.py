"""Services: the only module that couples the engine and the ORM (style.md).

room_create, action_submit, room_advance (the tick), room_set_speed / pause / step,
room_rewind, room_export. Tasks, views and consumers call these and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import pickle
import re
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import yaml
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.text import slugify

from . import bulk, lessons, limits, snapshots, timeline_store
from .deltas import bounded
from .engine.config import KubeletConfig
from .engine.core import Phase
from .engine.expect import EVENT_FIELDS
from .engine.scenario import (
    FAST_LOADER,
    Fault,
    Scenario,
    ScenarioError,
    _json_documents,
    check_nesting,
    load_scenario,
    parse_fault,
    parse_scenario,
)
from .engine.series import points_since
from .engine.simulation import ActionFailed, Simulation
from .engine.state import node_state, parameters_view, pod_state, zone_states
from .engine.versions import Profile, profile_for
from .kube_io.report import IMPORT_REPORT_HEADER
from .limits import LimitError
from .models import (
    Action,
    ClusterParameters,
    Comparison,
    EngineSnapshot,
    LessonState,
    ObjectView,
    PendingImport,
    Room,
    SeriesPoint,
)

log = logging.getLogger(__name__)

MIN_SPEED, MAX_SPEED = 0.1, 100.0
SNAPSHOT_EVERY_S = 30.0
# A new room's first delta with more events, nodes and pods than this is not broadcast: a
# resync notice is (room_went_live).
FIRST_DELTA_MAX = 2000
# A snapshot costs CPU (about 0.7 s for 1,000 nodes / 30,000 pods; a big room's in a forked
# child, controller/snapshots.py, a small one's in its tick): big rooms take them less often,
# so that they cost at most ~2% of wall time.
SNAPSHOT_COST_FACTOR = 50
MAX_STEP_S = 3600
CONTROL_KINDS = ("speed", "pause", "resume", "step", "rewind")


class ActionError(ValueError):
    """An action refused: the message says which field and why."""


# A limit's refusal (limits.py) is an ActionError to every caller too.
REFUSALS = (ActionError, LimitError)


# -- the in-process engine cache ------------------------------------------------------------
@dataclass
class Runtime:
    sim: Simulation
    version: int
    snapshot_at: float = field(default_factory=time.monotonic)
    snapshot_cost: float = 0.0  # wall seconds the last snapshot took


_CACHE: dict[int, Runtime] = {}


def _engine_version() -> str:
    """A digest of the engine's source: a snapshot pickled by other engine code (before an
    upgrade) may not load, or load into objects the new code misreads."""
    root = Path(__file__).resolve().parent / "engine"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


ENGINE_VERSION = _engine_version()


def _new_sim(room: Room, scenario: Scenario | None = None) -> Simulation:
    sim = Simulation(scenario or load_scenario(room.scenario_yaml))
    sim.run(0)  # everything at t=0: nodes, kubelets, objects, controllers' first work
    return sim


def _schedule_action(sim: Simulation, fault: Fault, action_id: int) -> None:
    sim.sched.schedule(fault.at_ms, Phase.FAULT, sim.apply_action, fault, action_id)


def _fault_from_action(action: Action, known: set[str] | None, sim: Simulation) -> Fault:
    raw = dict(action.payload)
    raw["at"] = (action.at_ms or 0) / 1000
    # As a scenario's own faults are parsed: AddNode's node kubelet settings merge over the
    # scenario's (so an exported room simulates the same).
    return parse_fault(
        raw, known, sim.config.kubelet, sim.scenario.kubelet_raw, "action", sim.config.profile
    )


def _restore(room: Room) -> tuple[Simulation, bool]:
    """Rebuild a room's engine: its snapshot plus the applied actions after it, replayed.
    Returns the engine and whether a fresh snapshot is due at once: after a long replay, or
    when the stored one was unusable (pickled by other engine code, or damaged)."""
    snap = EngineSnapshot.objects.filter(room=room).first()
    sim: Simulation | None = None
    after_id = 0
    if snap is not None and snap.engine_version == ENGINE_VERSION:
        try:
            sim = pickle.loads(zlib.decompress(bytes(snap.blob)))
            after_id = snap.last_action_id
        except Exception:  # a damaged blob: the scenario and the action log still hold it all
            log.exception("room %s: snapshot unreadable, replaying from the start", room.pk)
    from_snapshot = sim is not None
    if sim is None:
        sim = _new_sim(room)
    replayed = room.sim_ms - sim.now_ms
    for action in room.actions.filter(status=Action.APPLIED, id__gt=after_id).exclude(
        kind__in=CONTROL_KINDS
    ):
        _schedule_action(sim, _fault_from_action(action, None, sim), action.pk)
    sim.timeline.events.clear()
    already = room.event_count
    sim.run(room.sim_ms)
    # Events regenerated by the replay were persisted before: keep only newer ones.
    first_idx = sim.timeline.count - len(sim.timeline.events)
    sim.timeline.events[:] = sim.timeline.events[max(0, already - first_idx) :]
    # A long replay is worth a fresh snapshot at once; a short one is not (it would stall a
    # big room's first tick for nothing).
    long_replay = replayed > SNAPSHOT_EVERY_S * 1000 * max(room.speed, 1.0)
    return sim, long_replay or (snap is not None and not from_snapshot)


# Engines rebuilt by this process (a tick whose room was not cached here): room affinity
# keeps this near the number of rooms, not the number of ticks.
RESTORES = 0


def _runtime(room: Room) -> Runtime:
    global RESTORES
    rt = _CACHE.get(room.pk)
    if rt is None or rt.version != room.version:
        RESTORES += 1
        sim, snapshot_due = _restore(room)
        rt = Runtime(sim, room.version, snapshot_at=0.0 if snapshot_due else time.monotonic())
        _CACHE[room.pk] = rt
    return rt


def forget_cache() -> None:
    """Drop every cached engine (tests simulate a worker restart with it)."""
    _CACHE.clear()


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


# -- unstorable values: PostgreSQL refuses NUL characters in text and JSON, and NaN/Infinity
# in JSON (jsonb); SQLite stores them. They are refused here, on every database alike, with
# the path of the field.
NUL = "\x00"
# How a NUL can reach a parsed YAML string (raw NUL characters are refused by the parser).
_YAML_NUL_ESCAPES = re.compile(r"\\(0|x00|u0000|U00000000)")


def refuse_unstorable(
    value: Any, path: str, error: type[ValueError] = ActionError, numbers: bool = True
) -> None:
    """Raise ``error`` naming the first string (or mapping key) under ``value`` that holds a
    NUL character, or (``numbers``) the first number that is NaN or infinite."""

    def refuse(where: str, why: str) -> None:
        if error is ScenarioError:
            raise ScenarioError(where, why)
        raise error(f"{where}: {why}")

    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                refuse(where, _NUL_WHY)
        elif isinstance(item, float) and numbers:
            if not math.isfinite(item):
                refuse(where, f"{item!r} is not a finite number (JSON has no NaN or Infinity)")
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                child_path = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and NUL in key:
                    stack.append((key, child_path))
                stack.append((child, child_path))
        elif isinstance(item, list | tuple):
            stack.extend((c, f"{where}[{i}]") for i, c in reversed(list(enumerate(item))))


_NUL_WHY = "contains a NUL character (\\u0000), which cannot be stored"


def _refuse_nul_in_scenario(text: str) -> None:
    """A scenario's strings, when its text has a way to write a NUL (cheap when it has none).
    Its numbers are the loader's business: the ones stored as JSON (its parameters) are
    checked there, a NaN in a field the simulation ignores is never stored."""
    if not _YAML_NUL_ESCAPES.search(text):
        return
    try:
        docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except yaml.YAMLError:
        return  # load_scenario reports it with its position
    root = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"), None)
    if root is not None:
        refuse_unstorable(root, "", ScenarioError, numbers=False)
    for i, doc in enumerate(d for d in docs if d is not root):
        refuse_unstorable(doc, f"objects (extra document {i + 1})", ScenarioError, numbers=False)


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
    scenario_yaml, scenario = _checked_scenario(scenario_yaml, kubernetes_version)
    speed = _check_speed(speed)
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
        )
        _store_scenario_parts(room, scenario)
    return room, scenario


def _checked_scenario(
    scenario_yaml: str, kubernetes_version: str | None = None
) -> tuple[str, Scenario]:
    """The scenario text (with ``kubernetes_version`` written in) and the scenario, validated
    whole: ScenarioError names the field; a limit refuses its counts."""
    if kubernetes_version:
        scenario_yaml = with_kubernetes_version(scenario_yaml, kubernetes_version)
    _refuse_nul_in_scenario(scenario_yaml)
    scenario = load_scenario(scenario_yaml)  # ScenarioError names the field
    limits.check_scenario_counts(len(scenario.nodes), scenario.objects)
    _scenario_kubelet(scenario_yaml, scenario)
    return scenario_yaml, scenario


def _store_scenario_parts(room: Room, scenario: Scenario) -> None:
    """The rows a room's scenario gives it beside its own: parameters, lesson state."""
    raw_spec = scenario.raw.get("spec") or {}
    ClusterParameters.objects.create(
        room=room,
        controller_manager=dict(raw_spec.get("controllerManager") or {}),
        kubelet=dict(raw_spec.get("kubelet") or {}),
        api_server=dict(raw_spec.get("apiServer") or {}),
    )
    lessons.on_create(room, scenario)


# -- a big cluster import: parsed by the worker that builds its room (build.py) -------------
IMPORTED_NAME = "imported-cluster"
IMPORT_OPTIONS = ("name", "kubelet_config", "controller_manager_config", "flags")


def import_pending(
    name: str,
    text: str,
    options: dict[str, str | None],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
) -> Room:
    """A room for kubectl output too big to parse in the request: stored "building" with the
    text and the import options (import_scenario's), checked only for what the database could
    not store and the running-room limit; the worker parses it (import_finish)."""
    refuse_unstorable(name, "name")
    refuse_unstorable(text, "kubectl output")
    kept = {k: options.get(k) or None for k in IMPORT_OPTIONS}
    refuse_unstorable(kept, "")
    creator = creator or limits.owner_key(owner)
    limits.check_running_rooms(creator)
    speed = _check_speed(speed)
    shown = name or IMPORTED_NAME
    with transaction.atomic():
        room = _create_with_unique_slug(
            Room,
            _unique_slug,
            shown,
            name=shown,
            owner=owner if getattr(owner, "is_authenticated", False) else None,
            creator=creator[:160],
            scenario_name=kept["name"] or IMPORTED_NAME,
            scenario_yaml="",
            speed=speed,
            wall_anchor=timezone.now(),
            build_state=Room.BUILDING,
            build_progress="queued",
        )
        PendingImport.objects.create(room=room, text=text, options=kept)
    return room


def import_finish(room: Room, progress: Any = None) -> Scenario:
    """The worker's part of a big import: the stored kubectl output -> the room's scenario
    (as the form would have made it, validated whole: ScenarioError names the item and the
    field), its parameters; the pending text deleted. An error changes nothing. ``progress``
    is told each phase."""
    say = progress or (lambda message: None)
    pending = PendingImport.objects.get(room=room)
    options = pending.options or {}
    say(f"importing the cluster ({len(pending.text) / 1e6:.1f} MB of kubectl output)")
    from .kube_io.importer import import_cluster
    from .kube_io.report import dump_scenario

    mapping, report = import_cluster(
        pending.text,
        name=options.get("name") or IMPORTED_NAME,
        kubelet_config=options.get("kubelet_config"),
        controller_manager_config=options.get("controller_manager_config"),
        flags=options.get("flags"),
    )
    scenario_yaml = dump_scenario(mapping, report)  # what import_scenario gives the form
    say("checking the imported scenario")
    limits.check_scenario_size(scenario_yaml)
    # The text is the safe dump of this mapping, which loads back into the same mapping: the
    # scenario is parsed from the mapping rather than read back from the text (4 s of YAML
    # for 6,600 pods). Restores read the text (the tests compare the two timelines).
    if _YAML_NUL_ESCAPES.search(scenario_yaml):
        refuse_unstorable(mapping, "", ScenarioError, numbers=False)
    check_nesting(mapping, "")
    scenario = parse_scenario(mapping)
    limits.check_scenario_counts(len(scenario.nodes), scenario.objects)
    _scenario_kubelet(scenario_yaml, scenario)
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        if locked.build_state != Room.BUILDING or locked.scenario_yaml:
            return scenario
        renamed = not options.get("name")
        locked.scenario_yaml = scenario_yaml
        locked.scenario_name = scenario.name
        if renamed:
            locked.name = scenario.name
        locked.save(update_fields=["scenario_yaml", "scenario_name", "name"])
        _store_scenario_parts(locked, scenario)
        PendingImport.objects.filter(room=room).delete()
    room.scenario_yaml, room.scenario_name, room.name = (
        locked.scenario_yaml,
        locked.scenario_name,
        locked.name,
    )
    return scenario


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
        docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except yaml.YAMLError:
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


def _check_speed(speed: Any) -> float:
    try:
        if isinstance(speed, bool):
            raise TypeError
        value = float(speed)
    except (TypeError, ValueError):
        raise ActionError(f"speed: {speed!r} is not a number") from None
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise ActionError(
            f"speed: must be between {MIN_SPEED:g}x and {MAX_SPEED:g}x, got {value:g}"
        )
    return value


# -- actions --------------------------------------------------------------------------------
def validate_action(room: Room, payload: dict[str, Any]) -> dict[str, Any]:
    """Check an operator's fault against the scenario format and the room's current nodes."""
    if not isinstance(payload, dict):
        raise ActionError("action: must be a mapping")
    try:
        check_nesting(payload, "action")
    except ScenarioError as exc:
        raise ActionError(str(exc)) from None
    # NUL first: PostgreSQL refuses it even in a query's parameters (the lookups below).
    refuse_unstorable(payload, "action", numbers=False)
    payload = {k: v for k, v in payload.items() if k != "at"}
    known = set(ObjectView.objects.filter(room=room, kind="node").values_list("key", flat=True))
    kubelet, kubelet_raw, profile = _scenario_kubelet(room.scenario_yaml)
    try:
        parse_fault({**payload, "at": 0}, known, kubelet, kubelet_raw, "action", profile)
    except ScenarioError as exc:
        raise ActionError(str(exc)) from None
    if (
        "pod" in payload
        and not ObjectView.objects.filter(room=room, kind="pod", key=payload["pod"]).exists()
    ):
        raise ActionError(f'action.pod: unknown pod "{payload["pod"]}"')
    refuse_unstorable(payload, "action")  # a NaN the fault's own checks let through
    return payload


# scenario text -> its kubelet settings (typed, raw) and Kubernetes release: AddNode's node spec
# and every action are parsed against them.
# Parsing a 1,000-node scenario takes seconds and a click should not, so room_create fills this
# and validation reads it; at most a few scenarios are kept.
_KUBELET_OF: dict[str, tuple[KubeletConfig, dict[str, Any], Profile]] = {}


def _scenario_kubelet(
    text: str, scenario: Scenario | None = None
) -> tuple[KubeletConfig, dict[str, Any], Profile]:
    if text not in _KUBELET_OF:
        scenario = scenario or load_scenario(text)
        while len(_KUBELET_OF) >= 8:
            del _KUBELET_OF[next(iter(_KUBELET_OF))]
        _KUBELET_OF[text] = (scenario.config.kubelet, scenario.kubelet_raw, scenario.profile)
    return _KUBELET_OF[text]


def action_submit(room: Room, payload: dict[str, Any], actor: str) -> Action:
    """Record an operator's fault; the next tick applies it (exactly once, in id order)."""
    payload = validate_action(room, payload)
    refuse_unstorable(actor, "actor")
    limits.check_action(room, payload)
    return Action.objects.create(
        room=room, actor=actor[:120], kind=payload["type"], payload=payload
    )


def parameters_submit(room: Room, params: dict[str, Any], actor: str) -> Action:
    """Change cluster parameters: validated with the scenario loader's code, applied as a
    SetParameters action so that replay and export see it too."""
    if not isinstance(params, dict):
        raise ActionError("parameters: must be a mapping of sections")
    unknown = sorted(set(params) - {"controllerManager", "kubelet", "apiServer"})
    if unknown:
        raise ActionError(
            f"parameters.{unknown[0]}: unknown section (known: controllerManager, kubelet, "
            "apiServer)"
        )
    payload = {"type": "SetParameters"}
    for key in ("controllerManager", "kubelet", "apiServer"):
        if params.get(key):
            payload[key] = params[key]
    if len(payload) == 1:
        raise ActionError("parameters: nothing to change")
    return action_submit(room, payload, actor)


def _now_target(room: Room, wall_now: datetime) -> int:
    if room.paused:
        return max(room.sim_ms, room.sim_anchor_ms)  # a step moves the anchor of a paused room
    if room.idle_since is not None and wall_now > room.idle_since:
        wall_now = room.idle_since  # nobody watches: the clock stopped then
    elapsed = (wall_now - room.wall_anchor).total_seconds()
    return max(room.sim_ms, room.sim_anchor_ms + int(elapsed * room.speed * 1000))


def has_pending_actions(room_id: int) -> bool:
    """Whether a live room has faults waiting for a tick (controls are applied at once)."""
    return (
        Action.objects.filter(room_id=room_id, status=Action.PENDING, room__build_state=Room.LIVE)
        .exclude(kind__in=CONTROL_KINDS)
        .exists()
    )


def room_advance(
    room_id: int, wall_now: datetime | None = None, extra_ms: int = 0
) -> dict[str, Any] | None:
    """The tick: apply pending actions, advance the engine to the room's "now", persist
    what changed and broadcast it after commit. Callers hold the room's Redis lock."""
    try:
        return _advance(room_id, wall_now or timezone.now(), extra_ms)
    except ActionFailed as exc:
        # Not a refusal but a bug: the cached engine may be half changed, so it is dropped
        # (the next tick rebuilds it from the snapshot and the log), and the action is refused
        # so that the room does not fail on it at every tick.
        _CACHE.pop(room_id, None)
        log.exception("room %s: action %s failed", room_id, exc.action_id)
        cause = type(exc.__cause__).__name__
        Action.objects.filter(pk=exc.action_id).update(
            status=Action.REFUSED,
            at_ms=None,
            error=f"action: could not be applied ({cause}); the room goes on without it",
        )
        return None


def _clock_message(room: Room) -> dict[str, Any]:
    """What a room's pages re-anchor their clock from (speed, paused, simulated time)."""
    return {"type": "clock", "speed": room.speed, "paused": room.paused, "t": room.sim_ms / 1000}


def _stalled(room: Room, target: int, wall_now: datetime) -> bool:
    """A running room that no worker ticked for more than PLAYGROUND_MAX_CATCH_UP_SECONDS of
    its clock (the whole stack was stopped, say, and started again hours later) resumes from
    where its clock stood, as if it had been paused meanwhile: re-anchored at ``wall_now``
    (saved, and a clock message sent to its pages). Catching up instead would simulate hours in
    one tick, holding the room (and on SQLite the whole database) for minutes."""
    limit = settings.PLAYGROUND_MAX_CATCH_UP_SECONDS
    if room.paused or limit <= 0 or room.speed <= 0:
        return False
    behind_s = (target - room.sim_ms) / (room.speed * 1000)
    if behind_s <= limit:
        return False
    log.warning(
        "room %s: its clock is %.0f s behind (nobody ticked it); it resumes from %.1f s",
        room.pk,
        behind_s,
        room.sim_ms / 1000,
    )
    room.sim_anchor_ms = room.sim_ms
    room.wall_anchor = wall_now
    room.save(update_fields=["sim_anchor_ms", "wall_anchor"])
    _broadcast_after_commit(
        room.pk,
        _clock_message(room),
    )
    return True


def _advance(room_id: int, wall_now: datetime, extra_ms: int) -> dict[str, Any] | None:
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.build_state != Room.LIVE:
            return None  # still being built by a worker (build.py), or its build failed
        rt = _runtime(room)
        sim = rt.sim
        pending = list(room.actions.filter(status=Action.PENDING).order_by("id"))
        target = _now_target(room, wall_now) + extra_ms
        if _stalled(room, target, wall_now):
            target = room.sim_ms + extra_ms
        for action in pending:
            if action.kind in CONTROL_KINDS:
                continue
            at = max(sim.now_ms + 1, room.sim_ms + 1)
            action.at_ms = at
            try:
                fault = _fault_from_action(action, set(sim.cluster.nodes), sim)
                if "pod" in fault.args and fault.args["pod"] not in sim.cluster.pods:
                    raise ScenarioError("action.pod", f'unknown pod "{fault.args["pod"]}"')
            except ScenarioError as exc:
                action.status, action.error, action.at_ms = Action.REFUSED, str(exc), None
                action.save(update_fields=["status", "error", "at_ms"])
                continue
            _schedule_action(sim, fault, action.pk)
            action.status = Action.APPLIED
            action.save(update_fields=["status", "at_ms"])
            target = max(target, at)
        if target <= room.sim_ms and not pending:
            return None
        try:
            # A lesson's clock stops right after the instant a checkpoint is reached (paused).
            lesson_msg = lessons.run(room, sim, target)
        except ScenarioError as exc:  # one of the scenario's own faults no longer fits
            log.warning("room %s: %s", room.pk, exc)
            _CACHE.pop(room.pk, None)
            raise
        refused = _record_refusals(room, sim)
        room.sim_ms = sim.now_ms
        if room.paused:
            room.sim_anchor_ms = room.sim_ms
        delta = _persist(room, rt)
        if refused:
            delta["refused"] = refused
    _broadcast_after_commit(room.pk, bounded(delta))
    if lesson_msg is not None:
        _broadcast_after_commit(room.pk, lesson_msg)
    return delta


def _record_refusals(room: Room, sim: Simulation) -> list[dict[str, Any]]:
    """Actions valid when sent but whose target was gone at their instant (two operators,
    one tick): refused with the engine's reason, never replayed or exported."""
    out: list[dict[str, Any]] = []
    if not sim.refused_actions:
        return out
    for action in room.actions.filter(pk__in=list(sim.refused_actions)).order_by("id"):
        error = sim.refused_actions[action.pk]  # "action.node: ..." (the fault's path)
        action.status, action.error, action.at_ms = Action.REFUSED, error, None
        action.save(update_fields=["status", "error", "at_ms"])
        out.append({"action": action.kind, "actor": action.actor, "error": action.error})
    sim.refused_actions.clear()
    return out


def _touched(events: list[dict[str, Any]]) -> tuple[set[str], set[str], bool]:
    nodes, pods, zones = set(), set(), False
    for e in events:
        node, pod = e.get("node"), e.get("pod")
        if isinstance(node, dict):  # an AddNode fault carries the node spec
            node = node.get("name")
        if node:
            nodes.add(node)
        if isinstance(pod, str) and pod:
            pods.add(pod)
        if e["type"] == "Fault" and e.get("fault") in ("AddNode", "DeleteNode"):
            zones = True  # a zone may appear or lose its last node
        if e["type"] in (
            "ZoneState",
            "ZoneRate",
            "TaintAdded",
            "TaintRemoved",
            "NodeReady",
            "PodDeleted",
        ):
            zones = True
        obj = e.get("object")
        if not isinstance(obj, str):  # an Apply fault carries the manifest
            continue
        if obj.startswith("Node/"):
            nodes.add(obj[5:])
        elif obj.startswith("Pod/"):
            pods.add(obj[4:])
    return nodes, pods, zones


def _persist(
    room: Room, rt: Runtime, force_snapshot: bool = False, fresh: bool = False
) -> dict[str, Any]:
    """Write what changed: new timeline rows, views of touched objects, the room's clock.
    ``fresh``: the room's first rows (none stored yet): every view, plain fast inserts, and
    no snapshot (the caller takes it once the room is live)."""
    sim = rt.sim
    events = list(sim.timeline.events)
    sim.timeline.events.clear()
    start = room.event_count
    if fresh or start == 0:
        # Nothing stored yet (a new room, or a rewind that deleted everything): many events
        # at once go in compressed chunks (timeline_store).
        timeline_store.write(room.pk, start, events)
        force_snapshot = True
    elif events:
        bulk.insert_events(room.pk, start, events)  # rows from event_count on: none exist
    # A fresh room's views are all of them (below): which objects its events touched is moot.
    nodes, pods, zones_changed = (set(), set(), True) if fresh else _touched(events)
    # Kubelets whose eviction signals moved at a sync: their view carries the new figures.
    observed = getattr(sim, "observed_nodes", set())
    nodes |= observed
    observed.clear()
    if force_snapshot:
        nodes = set(sim.cluster.nodes)
        pods = set(sim.cluster.pods)
        zones_changed = True
    # Taint-manager countdowns and heartbeat ages move without events: the page derives
    # them from timestamps in the views.
    changes: dict[str, Any] = {
        "nodes": {},
        "pods": {},
        "zones": None,
        "workloads": None,
        "params": None,
    }
    upserts, deletes = [], []
    for name in sorted(nodes):
        node = sim.cluster.nodes.get(name)
        data = node_state(sim, node) if node is not None else None
        changes["nodes"][name] = data
        (
            upserts.append(("node", name, data))
            if data is not None
            else deletes.append(("node", name))
        )
    for key in sorted(pods):
        pod = sim.cluster.pods.get(key)
        data = pod_state(sim, pod) if pod is not None else None
        changes["pods"][key] = data
        (upserts.append(("pod", key, data)) if data is not None else deletes.append(("pod", key)))
    if zones_changed:
        zs = zone_states(sim)
        changes["zones"] = zs
        upserts.append(("zone", "*", zs))
    if force_snapshot or any(
        e["type"] == "Fault" and e.get("fault") in ("SetParameters", "RestartControllerManager")
        for e in events
    ):
        params = parameters_view(sim)
        changes["params"] = params
        upserts.append(("params", "*", params))
    if pods:
        # Ready/desired replicas per workload, for the page's chart (only when pods changed).
        wl = {ref: list(v) for ref, v in sim.workloads.metrics().items()}
        changes["workloads"] = wl
        upserts.append(("metrics", "workloads", wl))
    for kind, key in deletes:
        ObjectView.objects.filter(room=room, kind=kind, key=key).delete()
    if fresh:
        bulk.insert_views(room.pk, upserts)
    elif upserts:
        bulk.upsert_views(room.pk, upserts)
    _persist_series(room, sim)
    room.event_count = start + len(events)
    room.seq += 1
    room.version += 1
    rt.version = room.version
    room.save(
        update_fields=[
            "series_t_ms",
            "sim_ms",
            "sim_anchor_ms",
            "wall_anchor",
            "event_count",
            "seq",
            "version",
            "speed",
            "paused",
        ]
    )
    every = max(SNAPSHOT_EVERY_S, SNAPSHOT_COST_FACTOR * rt.snapshot_cost)
    if (force_snapshot and not fresh) or time.monotonic() - rt.snapshot_at > every:
        _snapshot(room, rt)
    return {
        "type": "delta",
        "seq": room.seq,
        "t": sim.now_ms / 1000,
        "speed": room.speed,
        "paused": room.paused,
        # A new room's first instant is sent as a resync notice when it is big (room_went_live):
        # its events are not made into messages (935,000 of them at 5,000 nodes: 1.5 s).
        "events": None
        if fresh and len(events) > FIRST_DELTA_MAX
        else [_public_event(start + i, e) for i, e in enumerate(events)],
        **changes,
    }


def _persist_series(room: Room, sim: Simulation) -> None:
    """Store the chart points the engine kept since the last tick. Points of the last stored
    instant are written again (a later sample in one instant replaces the earlier), so every
    point from ``series_t_ms`` on is replaced by the engine's."""
    since = room.series_t_ms
    wl = sim.workloads
    rows = [
        SeriesPoint(room=room, series="zones", t_ms=t, value={z[0]: list(z[1:]) for z in zones})
        for t, _pods, zones in points_since(wl.cluster_series, since)
    ]
    for key, points in wl.workload_series.items():
        rows += [
            SeriesPoint(room=room, series=f"workload/{key}", t_ms=t, value=[desired, ready])
            for t, desired, ready in points_since(points, since)
        ]
    for zone, points in sim.queue_series.items():
        rows += [
            SeriesPoint(room=room, series=f"queue/{zone}", t_ms=t, value=n)
            for t, n in points_since(points, since)
        ]
    SeriesPoint.objects.filter(room=room, t_ms__gte=since).delete()
    SeriesPoint.objects.bulk_create(rows, batch_size=1000)
    room.series_t_ms = sim.now_ms


def room_series(room: Room) -> dict[str, Any]:
    """The room's charts from t=0 (seconds): ready nodes per zone, nodes waiting in each
    zone's queue, and desired/ready replicas per workload, each a list of changes."""
    out: dict[str, Any] = {"t": room.sim_ms / 1000, "zones": [], "queue": {}, "workloads": {}}
    rows = SeriesPoint.objects.filter(room=room).order_by("t_ms", "id")
    for series, t_ms, value in rows.values_list("series", "t_ms", "value"):
        t = t_ms / 1000
        if series == "zones":
            ready = {z: states[0] for z, states in value.items()}
            out["zones"].append([t, ready])
        elif series.startswith("queue/"):
            out["queue"].setdefault(series[6:], []).append([t, value])
        else:
            out["workloads"].setdefault(series[9:], []).append([t, *value])
    return out


def _snapshot(room: Room, rt: Runtime) -> None:
    """Store the engine as it is now, with the stamps a restore replays after (the room's
    event count, its last applied action, the room version it is). A big engine is pickled by
    a forked child once the caller's transaction has committed (controller/snapshots.py: the
    room's lock is released before it is stored); a small one right here, as it is cheaper
    than the fork."""
    started = time.monotonic()
    last = (
        room.actions.filter(status=Action.APPLIED)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    stamps = snapshots.Stamps(
        room_id=room.pk,
        room_version=room.version,
        sim_ms=rt.sim.now_ms,
        event_count=room.event_count,
        last_action_id=last or 0,
        engine_version=ENGINE_VERSION,
    )
    objects = len(rt.sim.cluster.pods) + len(rt.sim.cluster.nodes)
    if snapshots.use_fork(rt.snapshot_cost, objects):
        rt.snapshot_at = started
        transaction.on_commit(lambda: _fork_snapshot(rt, stamps), robust=True)
        return
    snapshots.store(stamps, snapshots.dump(rt.sim))
    rt.snapshot_at = time.monotonic()
    rt.snapshot_cost = rt.snapshot_at - started


def _fork_snapshot(rt: Runtime, stamps: snapshots.Stamps) -> None:
    """After the tick's commit, still under the room's lock: fork the snapshot's child (the
    engine as the tick left it). While the room's previous child (or too many) still runs,
    the snapshot is due again at the next tick; if the fork fails, it is taken here."""

    def done(child: snapshots.Child) -> None:
        if not child.error:
            rt.snapshot_cost = child.seconds

    try:
        child = snapshots.start(rt.sim, stamps, done)
    except OSError:  # logged: pickled here instead
        started = time.monotonic()
        snapshots.store(stamps, snapshots.dump(rt.sim))
        rt.snapshot_at = time.monotonic()
        rt.snapshot_cost = rt.snapshot_at - started
        return
    if child is None:
        rt.snapshot_at = 0.0


def _public_event(idx: int, e: dict[str, Any]) -> dict[str, Any]:
    out = dict(e)
    out["t"] = e["t"] / 1000
    out["idx"] = idx
    return out


# -- time controls --------------------------------------------------------------------------
def _reanchor(room: Room, wall_now: datetime) -> None:
    room.sim_anchor_ms = _now_target(room, wall_now)
    room.wall_anchor = wall_now


def room_control(room_id: int, kind: str, value: Any, actor: str) -> Room:
    """Speed, pause, resume and step (by N simulated seconds): logged like every action. A
    room compared with another takes the control with it, at the same wall instant, so the
    two keep one clock."""
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        for room in rooms:
            _control_one(room, kind, value, actor, wall_now)
    for room in rooms:
        _broadcast_after_commit(
            room.pk,
            _clock_message(room),
        )
    return Room.objects.get(pk=room_id)


def _control_one(room: Room, kind: str, value: Any, actor: str, wall_now: datetime) -> None:
    if kind == "speed":
        speed = _check_speed(value)
        _reanchor(room, wall_now)
        room.speed = speed
    elif kind == "pause":
        _reanchor(room, wall_now)
        room.paused = True
    elif kind == "resume":
        if room.paused:
            limits.check_running_rooms(room.creator, exclude=room.pk)
        room.paused = False
        room.sim_anchor_ms = max(room.sim_ms, room.sim_anchor_ms)
        room.wall_anchor = wall_now
    elif kind == "step":
        try:
            if isinstance(value, bool):
                raise TypeError
            seconds = float(value)
        except (TypeError, ValueError):
            raise ActionError(f"step: {value!r} is not a number of seconds") from None
        if not 0 < seconds <= MAX_STEP_S:
            raise ActionError(f"step: must be between 0 and {MAX_STEP_S} seconds")
        # The next tick runs the engine that much further (paused or not).
        room.sim_anchor_ms = max(room.sim_anchor_ms, room.sim_ms) + int(seconds * 1000)
    else:
        raise ActionError(f"unknown control {kind!r}")
    refuse_unstorable(value, f"{kind}.value")  # stored with the control's log entry
    room.save(update_fields=["speed", "paused", "sim_anchor_ms", "wall_anchor"])
    Action.objects.create(
        room=room,
        actor=actor[:120],
        kind=kind,
        payload={"value": value},
        status=Action.APPLIED,
        at_ms=room.sim_ms,
    )


def room_idle(room_ids: list[int], wall_now: datetime) -> list[int]:
    """Nobody has watched these rooms for PLAYGROUND_IDLE_PAUSE_SECONDS: their clocks stop at
    ``wall_now`` (the instant their last tick ran to) and beat stops ticking them, until a
    viewer arrives (``room_wake``). A room compared with another stops only with it."""
    wanted = set(room_ids)
    stop = [rid for rid in sorted(wanted) if set(lockstep_ids(rid)) <= wanted]
    Room.objects.filter(pk__in=stop, paused=False, idle_since__isnull=True).update(
        idle_since=wall_now
    )
    return stop


def room_wake(room_id: int) -> bool:
    """A viewer arrived at an idle room: its clock goes on from where it stopped (as after a
    pause), with the room it is compared with. True when it was idle."""
    wall_now = timezone.now()
    with transaction.atomic():
        rooms = [Room.objects.select_for_update().get(pk=rid) for rid in lockstep_ids(room_id)]
        woken = [room for room in rooms if room.idle_since is not None]
        for room in woken:
            room.sim_anchor_ms = _now_target(room, room.idle_since)
            room.wall_anchor = wall_now
            room.idle_since = None
            room.save(update_fields=["sim_anchor_ms", "wall_anchor", "idle_since"])
    for room in woken:
        _broadcast_after_commit(
            room.pk,
            _clock_message(room),
        )
    return bool(woken)


def lockstep_ids(room_id: int) -> list[int]:
    """The room and the one it is compared with (if any), in id order (the lock order)."""
    pair = (
        Comparison.objects.filter(left_id=room_id).values_list("left_id", "right_id").first()
        or Comparison.objects.filter(right_id=room_id).values_list("left_id", "right_id").first()
    )
    return sorted(pair) if pair else [room_id]


def room_rewind(room_id: int, t_s: float, actor: str) -> Room:
    """Re-simulate from the scenario and the actions applied up to ``t``, then continue (a
    compared room rewinds with its partner)."""
    for rid in lockstep_ids(room_id):
        if rid != room_id:
            _rewind_one(rid, t_s, actor)
    return _rewind_one(room_id, t_s, actor)


def _rewind_one(room_id: int, t_s: float, actor: str) -> Room:
    if isinstance(t_s, bool) or not isinstance(t_s, int | float | str):
        raise ActionError(f"rewind: t must be a number of seconds, got {t_s!r}")
    try:
        t = float(t_s)
    except ValueError:
        raise ActionError(f"rewind: t must be a number of seconds, got {t_s!r}") from None
    if not math.isfinite(t):
        raise ActionError(f"rewind: t must be a finite number of seconds, got {t_s!r}")
    t_ms = int(t * 1000)
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.build_state != Room.LIVE:
            raise ActionError(f"rewind: the room is not live yet (it is {room.build_state})")
        if not 0 <= t_ms <= room.sim_ms:
            raise ActionError(f"rewind: t must be between 0 and {room.sim_ms / 1000:g} s")
        room.actions.filter(status=Action.APPLIED, at_ms__gt=t_ms).exclude(
            kind__in=CONTROL_KINDS
        ).update(status=Action.REWOUND)
        sim = _new_sim(room)
        for action in room.actions.filter(status=Action.APPLIED).exclude(kind__in=CONTROL_KINDS):
            _schedule_action(sim, _fault_from_action(action, None, sim), action.pk)
        sim.run(t_ms)
        timeline_store.delete(room)
        ObjectView.objects.filter(room=room).delete()
        # A tombstone: no snapshot of before the rewind (a child still pickling one) is stored.
        snapshots.invalidate(room.pk, room.version)
        SeriesPoint.objects.filter(room=room).delete()
        room.series_t_ms = 0
        room.event_count = 0
        room.sim_ms = t_ms
        room.sim_anchor_ms = t_ms
        room.wall_anchor = timezone.now()
        lessons.on_rewind(room, t_ms)
        rt = Runtime(sim, room.version)
        delta = _persist(room, rt, force_snapshot=True)
        Action.objects.create(
            room=room,
            actor=actor[:120],
            kind="rewind",
            payload={"t": t_s},
            status=Action.APPLIED,
            at_ms=t_ms,
        )
    _CACHE[room.pk] = rt
    delta["type"] = "reset"
    _broadcast_after_commit(room.pk, delta)
    return room


# -- reading --------------------------------------------------------------------------------
@contextmanager
def one_committed_state() -> Iterator[None]:
    """A transaction whose reads all see one committed state (the room, its views and events
    of one tick), without waiting for a tick. SQLite's transaction gives that (it holds the
    database's lock); PostgreSQL's default, READ COMMITTED, gives each statement what was
    committed when it began, so a tick committing between two reads would mix two ticks:
    the outermost transaction asks for REPEATABLE READ (one snapshot, no locks taken)."""
    outermost = not transaction.get_connection().in_atomic_block
    with transaction.atomic():
        connection = transaction.get_connection()
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def room_snapshot(
    room: Room, last_events: int = 300, client: str = "", lesson: bool = True
) -> dict[str, Any]:
    """What a client gets on connect: every view row, the recent events, the clock, seq;
    for a lesson room the lesson and its state (``client``'s own answer included; the
    consumer filters it by role). ``lesson=False`` leaves the key out (the shared HTTP
    snapshot: the lesson's state is per role and changes without a new room version)."""
    room = Room.objects.get(pk=room.pk)
    out = orjson.loads(with_tail(room_snapshot_json(room, last_events), snapshot_clock(room)))
    if lesson:
        out["lesson"] = lessons.snapshot(room, client)
    return out


def snapshot_clock(room: Room) -> dict[str, Any]:
    """A snapshot's clock, as of now: the simulated time the page shows (``t``), speed,
    paused. Not part of ``room_snapshot_json`` (built once per room version), so that a
    snapshot served from that cache has the clock of the moment it is served."""
    return {
        "t": _now_target(room, timezone.now()) / 1000 if not room.paused else room.sim_ms / 1000,
        "speed": room.speed,
        "paused": room.paused,
    }


def with_tail(body: bytes, tail: dict[str, Any]) -> bytes:
    """The JSON object ``body`` with the (non-empty) ``tail``'s keys added at its end."""
    return body[:-1] + b"," + orjson.dumps(tail, option=orjson.OPT_NON_STR_KEYS)[1:]


def room_snapshot_json(room: Room, last_events: int = 300) -> bytes:
    """``room_snapshot(room, lesson=False)`` without its clock (snapshot_clock) as JSON
    bytes, made from the view rows' stored JSON texts without decoding them: a 1,000-node
    room's snapshot is 17 MB of JSON, and decoding its 31,000 rows and encoding them again
    took ~1 s per client."""
    with one_committed_state():
        room = Room.objects.get(pk=room.pk)
        views = list(
            ObjectView.objects.filter(room=room).values_list(
                "kind", "key", Cast("data", output_field=TextField())
            )
        )
        events = timeline_store.last(room, last_events)
    nodes = sorted((key, text) for kind, key, text in views if kind == "node")
    pods = sorted((key, text) for kind, key, text in views if kind == "pod")
    one = {kind: text for kind, _key, text in views if kind in ("zone", "metrics", "params")}
    head = orjson.dumps(
        {
            "type": "snapshot",
            "seq": room.seq,
            "simT": room.sim_ms / 1000,
            "room": {"name": room.name, "slug": room.slug, "scenario": room.scenario_name},
        }
    )
    recent = [{"idx": idx, "t": t / 1000, "type": typ, **data} for idx, t, typ, data in events]
    return b"".join(
        [
            head[:-1],
            b',"nodes":[',
            ",".join(text for _key, text in nodes).encode(),
            b'],"pods":[',
            ",".join(text for _key, text in pods).encode(),
            b'],"zones":',
            one["zone"].encode() if "zone" in one else b"[]",
            b',"workloads":',
            one["metrics"].encode() if "metrics" in one else b"{}",
            b',"params":',
            one["params"].encode() if "params" in one else b"null",
            b',"events":',
            orjson.dumps(recent, option=orjson.OPT_NON_STR_KEYS),
            b"}",
        ]
    )


def room_timeline(room: Room) -> list[dict[str, Any]]:
    """The room's whole timeline (``t`` in ms), as stored."""
    return [{"t": t, "type": typ, **data} for _idx, t, typ, data in timeline_store.after(room)]


def room_manifests(room: Room) -> str:
    """The room's cluster now: the scenario (nodes, settings with the parameter changes
    applied so far), workloads and pods, which ``import_cluster`` reads back into the same
    scenario."""
    from .kube_io.exports import cluster_manifests_yaml

    # Rebuilt from the stored state (this process's cached engine may be behind the worker's).
    sim, _snapshot_due = _restore(room)
    docs = [d for d in yaml.load_all(room.scenario_yaml, Loader=FAST_LOADER) if d is not None]
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    # The settings as they are now: the parameter changes applied so far, in order.
    spec = root.setdefault("spec", {})
    for action in room.actions.filter(status=Action.APPLIED, kind="SetParameters").order_by("id"):
        for section in ("controllerManager", "kubelet", "apiServer"):
            if action.payload.get(section):
                spec[section] = {**(spec.get(section) or {}), **action.payload[section]}
    header = (
        f"# Room {room.slug!r} at simulated {room.sim_ms / 1000:g} s: the scenario (nodes, "
        "settings), then workloads and pods.\n# manage.py import_cluster reads it back.\n"
    )
    return cluster_manifests_yaml(sim, root, header)


WHAT_IF_DURATION_S = 1800


def what_if_choices(room: Room) -> dict[str, list[str]]:
    """The zones and nodes a What-if may fail: the room's scenario's (zones by their
    topology.kubernetes.io/zone label, else the display name of their zone key)."""
    from .engine.nodelifecycle.zones import get_zone_key, zone_display

    scenario = load_scenario(room.scenario_yaml)
    zones = []
    for n in scenario.nodes:
        zone = n.labels.get("topology.kubernetes.io/zone") or zone_display(get_zone_key(n.labels))
        if zone and zone not in zones:
            zones.append(zone)
    return {"zones": zones, "nodes": [n.name for n in scenario.nodes]}


def room_what_if(room: Room, zone: str, nodes: list[str], at_s: float) -> dict[str, Any]:
    """What if ``zone`` (or ``nodes``) failed at ``at_s`` in the room's scenario: per workload,
    when it falls short of its desired replicas and when it is whole again (ms), run headless
    for WHAT_IF_DURATION_S simulated seconds. The room is not touched."""
    from .whatif import what_if

    choices = what_if_choices(room)
    if zone and zone not in choices["zones"]:
        raise ActionError(f'zone: unknown zone "{zone}"')
    for n in nodes:
        if n not in choices["nodes"]:
            raise ActionError(f'nodes: unknown node "{n}"')
    if not zone and not nodes:
        raise ActionError("pick a zone or at least one node to fail")
    if not (isinstance(at_s, int | float) and 0 <= at_s < WHAT_IF_DURATION_S):
        raise ActionError(f"at: must be between 0 and {WHAT_IF_DURATION_S} seconds")
    docs = [d for d in yaml.load_all(room.scenario_yaml, Loader=FAST_LOADER) if d is not None]
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    if len(docs) > 1:  # extra documents are objects
        root.setdefault("spec", {}).setdefault("objects", []).extend(
            d for d in docs if d is not root
        )
    rows = what_if(
        root,
        zone=zone or None,
        nodes=list(nodes),
        at_ms=round(at_s * 1000),
        duration_ms=WHAT_IF_DURATION_S * 1000,
    )
    return {
        "zone": zone,
        "nodes": list(nodes),
        "at_ms": round(at_s * 1000),
        "duration_ms": WHAT_IF_DURATION_S * 1000,
        "rows": rows,
    }


def room_export(room: Room) -> str:
    """The scenario plus the applied action log as one YAML that ``simulate`` replays."""
    # The room's own copy (validated at creation), so it is changed freely.
    docs = [d for d in yaml.load_all(room.scenario_yaml, Loader=FAST_LOADER) if d is not None]
    root = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario")
    spec = root.setdefault("spec", {})
    # Say the release even when the scenario did not (it ran as 1.18 then).
    spec["kubernetesVersion"] = profile_for(spec.get("kubernetesVersion")).version
    faults = list(spec.get("faults") or [])
    for action in (
        room.actions.filter(status=Action.APPLIED).exclude(kind__in=CONTROL_KINDS).order_by("id")
    ):
        # at, type, then the fields by name: PostgreSQL's jsonb does not keep key order.
        payload = dict(action.payload)
        fault = {"at": f"{action.at_ms}ms", "type": payload.pop("type")}
        faults.append({**fault, **dict(sorted(payload.items()))})
    spec["faults"] = faults
    spec["duration"] = f"{max(room.sim_ms, 1)}ms"
    spec.pop("expect", None)
    header = f"# Exported from room {room.slug!r} at simulated {room.sim_ms / 1000:g} s\n"
    # Extra documents are objects too (load_scenario): they stay, after the scenario.
    others = [d for d in docs if d is not root]
    return header + yaml.safe_dump_all([root, *others], sort_keys=False)


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
    docs = as_json or [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
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
    from . import build  # build.py builds rooms with this module: imported when used

    return build.comparison_start(
        base, list(zip(sides, texts, strict=True)), owner, speed, creator, inline_max
    )


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


# -- broadcasting ---------------------------------------------------------------------------
def group_name(room_id: int) -> str:
    return f"room-{room_id}"


def _broadcast_after_commit(room_id: int, message: dict[str, Any]) -> None:
    def send() -> None:
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(
                group_name(room_id), {"type": "room.message", "message": message}
            )
        except Exception:  # the layer (Redis) is down: clients resync by snapshot later
            log.exception("broadcast to room %s failed", room_id)

    transaction.on_commit(send)


BUILTIN_DIR = __import__("pathlib").Path(__file__).resolve().parent / "scenarios"
# The tour a newcomer opens first: listed first among the lessons, and `manage.py load_demo`
# makes the room "demo-lesson" of it.
DEMO_LESSON = "25-lesson-node-failure-tour"


def import_scenario(
    text: str,
    name: str = "",
    kubelet_config: str | None = None,
    controller_manager_config: str | None = None,
    flags: str | None = None,
) -> tuple[str, list[dict[str, str]]]:
    """kubectl output (and component configuration) -> the scenario YAML a room is created
    from (its report as the leading comment) and the report (importer.import_cluster)."""
    from .kube_io.report import dump_scenario

    scenario, report = _import(text, name, kubelet_config, controller_manager_config, flags)
    return dump_scenario(scenario, report), report


def import_preview(
    text: str,
    name: str = "",
    kubelet_config: str | None = None,
    controller_manager_config: str | None = None,
    flags: str | None = None,
) -> tuple[str, list[dict[str, str]]]:
    """The import form's Preview: what the room's page would say about the cluster (its
    "what to watch for" paragraph) and the report; no scenario text, no room, no engine."""
    scenario, report = _import(text, name, kubelet_config, controller_manager_config, flags)
    return " ".join(str(scenario.get("description") or "").split()), report


def _import(
    text: str,
    name: str,
    kubelet_config: str | None,
    controller_manager_config: str | None,
    flags: str | None,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """importer.import_cluster with the form's fields (an unnamed cluster gets IMPORTED_NAME)."""
    from .kube_io.importer import import_cluster

    return import_cluster(
        text,
        name=name or IMPORTED_NAME,
        kubelet_config=kubelet_config,
        controller_manager_config=controller_manager_config,
        flags=flags,
    )


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
            lesson = lessons.lesson_of_text(text)
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


__all__ = [
    "EVENT_FIELDS",
    "ActionError",
    "action_submit",
    "builtin_lessons",
    "builtin_scenarios",
    "room_advance",
    "room_control",
    "room_create",
    "room_export",
    "room_rewind",
    "room_snapshot",
]
