"""Fast big rooms (issue #14): asynchronous room creation. The form validates the scenario and returns at once; a worker builds the engine
(room_build_task) while the room page shows the progress; the room is live when stored."""

from __future__ import annotations

import logging
import pickle
import threading
import time
from typing import IO, Any

import redis
from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from .. import bulk, heavy, snapshots
from ..engine.scenario import Scenario, ScenarioError, load_scenario
from ..engine.simulation import Simulation
from ..locks import RoomLock, redis_client
from ..models import Comparison, PendingImport, Room
from .controls import lockstep_ids
from .create import room_prepare, room_went_live, side_finish
from .errors import REFUSALS
from .imports import import_finish, import_pending, import_scenario, preview_form
from .runtime import _CACHE, ENGINE_VERSION, Runtime, gc_paused
from .tick import _persist

log = logging.getLogger(__name__)


# -- asynchronous creation ------------------------------------------------------------------
# A scenario this small (nodes + pods it creates) is built in the request itself (a few
# milliseconds); a bigger one in a worker (room_build_task) while the room page shows progress.
INLINE_MAX_OBJECTS = 300
# The builder holds the room's lock, renewed every BUILD_RENEW_S while it works: a worker
# killed mid-build lets it lapse within BUILD_LOCK_MS, and the beat queues the build again.
BUILD_LOCK_MS = 15_000
BUILD_RENEW_S = 3.0
# A queued build's marker lasts as long as a heavy job's slot may wait in the queue (heavy
# workers busy with others' jobs): within it, the beat does not queue the build again.
QUEUED_S = int(heavy.QUEUED_S)
# A comparison's room built before the other one: stored, cached, not live (build_state
# "building") until the other is built; then both go live together on one clock.
WAITING = "built; waiting for the other room of the comparison"
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)


def scenario_size(scenario: Scenario) -> tuple[int, int]:
    """Nodes, and pods the scenario's objects will create (replicas of workloads, DaemonSet
    pods counted one per node), without building anything. A Pod with a controller owner (an
    imported cluster's) is one of its workload's replicas, not one more."""
    nodes = len(scenario.nodes)
    pods = 0
    for obj in scenario.objects:
        kind = obj.get("kind")
        spec = obj.get("spec") or {}
        if kind == "Pod":
            owners = (obj.get("metadata") or {}).get("ownerReferences") or []
            if not any(isinstance(o, dict) and o.get("controller") for o in owners):
                pods += 1
        elif kind == "DaemonSet":
            pods += nodes
        elif kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
            replicas = spec.get("replicas", 1)
            pods += replicas if isinstance(replicas, int) else 1
        elif kind == "Job":
            n = spec.get("parallelism", 1)
            pods += n if isinstance(n, int) else 1
    return nodes, pods


def room_start(
    name: str,
    scenario_yaml: str,
    owner: Any = None,
    speed: float = 10.0,
    kubernetes_version: str | None = None,
    creator: str = "",
    inline_max: int | None = None,
) -> Room:
    """The room form: validate the scenario now (ScenarioError names the field, nothing is
    stored), then build a small room at once, or store a big one as "building" and queue its
    build on the worker that will tick it; returns at once."""
    limit = INLINE_MAX_OBJECTS if inline_max is None else inline_max
    with transaction.atomic():
        room, scenario = room_prepare(
            name,
            scenario_yaml,
            owner,
            speed,
            kubernetes_version,
            creator,
            build_state=Room.BUILDING,
        )
        nodes, pods = scenario_size(scenario)
        if nodes + pods <= limit:
            _build(room, scenario)
            return Room.objects.get(pk=room.pk)
        claim_build(room)
        Room.objects.filter(pk=room.pk).update(build_progress="queued")
        blob = parsed_blob(scenario)
        transaction.on_commit(lambda: (keep_parsed(room.pk, blob), queue_build(room.pk)))
    room.build_progress = "queued"
    return room


# kubectl output longer than this (characters) is imported by the worker, not in the request:
# libyaml reads about 1.4 MB of kubectl YAML a second, and the import and the check of the
# scenario it makes take as long again (measured: a 0.85 MiB -o yaml List of 600 pods kept the
# request 1.3 s; 10 MB: 30 s). JSON is ten times faster, but one rule is simpler to explain.
IMPORT_INLINE_MAX_CHARS = 512 * 1024


def import_start(
    name: str,
    text: str | IO[bytes],
    options: dict[str, str | None],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
    inline_max_chars: int | None = None,
    inline_max: int | None = None,
) -> Room:
    """The import form's "create": small kubectl output is imported now (an error names the
    item and field, nothing is stored) and its room started as the room form's (room_start);
    longer output is stored with its room "building" and imported by the worker, which then
    builds the room (an import error then marks the room failed, with the item and field).
    ``text`` may be an uploaded file too long to read in the request (forms.UPLOAD_READ_MAX):
    it is stored a piece at a time."""
    limit = IMPORT_INLINE_MAX_CHARS if inline_max_chars is None else inline_max_chars
    if not isinstance(text, str) or len(text) > limit:
        with transaction.atomic():
            room = import_pending(name, text, options, owner, speed, creator)
            claim_build(room)
            transaction.on_commit(lambda: queue_build(room.pk))
        return room
    scenario_yaml, _report = import_scenario(
        text,
        name=options.get("name") or "",
        kubelet_config=options.get("kubelet_config") or None,
        controller_manager_config=options.get("controller_manager_config") or None,
        flags=options.get("flags") or None,
    )
    return room_start(name, scenario_yaml, owner, speed, creator=creator, inline_max=inline_max)


def preview_create(preview_id: str, owner: Any = None, creator: str = "") -> Room | None:
    """ "Create the room" on a Preview's page: import_start with the text and the fields the
    form gave the Preview (a long text: stored, imported by the worker); None when the Preview
    is unknown or expired."""
    kept = preview_form(preview_id)
    if kept is None:
        return None
    text, form = kept
    return import_start(form["name"], text, form["options"], owner, form["speed"], creator)


def comparison_start(
    comparison: Comparison, scenarios: list[Scenario], inline_max: int | None = None
) -> None:
    """A comparison's two rooms, stored "building" (compare.comparison_create validated and
    stored them, in the caller's transaction), each built as room_start builds a room: a
    small one now, a big one by a worker; they go live together, on one clock, when the
    second is built (_build)."""
    limit = INLINE_MAX_OBJECTS if inline_max is None else inline_max
    sides = list(zip((comparison.left, comparison.right), scenarios, strict=True))
    claim_build(*(room for room, scenario in sides if sum(scenario_size(scenario)) > limit))
    for room, scenario in sides:
        nodes, pods = scenario_size(scenario)
        if nodes + pods <= limit:
            _build(room, scenario)
        else:
            Room.objects.filter(pk=room.pk).update(build_progress="queued")
            blob = parsed_blob(scenario)
            transaction.on_commit(
                lambda pk=room.pk, blob=blob: (keep_parsed(pk, blob), queue_build(pk))
            )


# -- the scenario the form validated, handed to the worker -----------------------------------
# The form parses and validates a big room's scenario; the worker that builds it would parse
# the same text again (0.17 s at 1,000 nodes, 0.27 s at 5,000). The parsed scenario is handed
# over pickled through Redis instead (0.01 s / 0.03 s to load), for KEPT_S, tagged with the
# engine code that parsed it: a worker of other code, or one that finds nothing (Redis
# restarted, the build re-queued later), parses the stored text as before.
KEPT_S = 600


def _seal(body: bytes) -> bytes:
    """The pickle's HMAC (SHA-256, keyed by SECRET_KEY): a blob is unpickled only when this
    app's own processes made it, not because it is in Redis (whoever can write to Redis could
    otherwise run code in a worker)."""
    return salted_hmac("playground.parsed-scenario", body, algorithm="sha256").hexdigest().encode()


def parsed_blob(scenario: Scenario) -> bytes:
    """The parsed scenario as the worker takes it (kept_scenario): the engine code's version,
    the pickle's seal, then the pickle."""
    body = pickle.dumps(scenario, pickle.HIGHEST_PROTOCOL)
    return ENGINE_VERSION.encode() + b"\n" + _seal(body) + b"\n" + body


def scenario_of_blob(blob: bytes | None) -> Scenario | None:
    """The scenario of a parsed_blob, or None when there is none, other engine code made it or
    its seal does not match (then the worker parses the stored text, as with none)."""
    if not blob:
        return None
    version, _, rest = blob.partition(b"\n")
    seal, _, body = rest.partition(b"\n")
    if version != ENGINE_VERSION.encode() or not constant_time_compare(seal, _seal(body)):
        return None
    with gc_paused():  # a collection per 700 new objects would walk them all again
        scenario = pickle.loads(body)  # sealed by this app's own processes (form, worker)
    return scenario if isinstance(scenario, Scenario) else None


def _kept_key(room_id: int) -> str:
    return f"playground:room:{room_id}:scenario"


def keep_parsed(room_id: int, blob: bytes) -> None:
    """Hand the parsed scenario to the room's builder (best effort: it parses the text if the
    scenario is not there)."""
    try:
        redis_client().set(_kept_key(room_id), blob, ex=KEPT_S)
    except redis.RedisError:
        pass


def kept_scenario(room_id: int) -> Scenario | None:
    """The scenario the form parsed for this room (taken: once), or None."""
    try:
        blob = redis_client().getdel(_kept_key(room_id))
    except redis.RedisError:
        return None
    return scenario_of_blob(blob)


def claim_build(*rooms: Room) -> None:
    """Builds about to be queued for a request: a heavy-job slot of their owner each
    (heavy.take), all or none: LimitError naming PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS (in
    the caller's transaction: the rooms are not stored)."""
    taken: list[Room] = []
    try:
        for room in rooms:
            heavy.take(room.creator, f"room:{room.pk}")
            taken.append(room)
    except Exception:
        for room in taken:
            heavy.release(room.creator, f"room:{room.pk}")
        raise


def queue_build(room_id: int) -> None:
    """Send the room's build to the heavy queue (settings.CELERY_TASK_ROUTES: a heavy worker
    builds it, not a tick worker); a marker in Redis says it is queued (the beat re-queues a
    building room with neither a marker nor a builder holding its lock: a worker lost
    mid-build)."""
    try:
        redis_client().set(f"playground:room:{room_id}:build-queued", "1", ex=QUEUED_S)
    except redis.RedisError:
        pass
    # By name: tasks.py (the adapter) calls this package, not the other way round.
    current_app.send_task("controller.tasks.room_build_task", (room_id,))


def _started_key(room_id: int) -> str:
    return f"playground:room:{room_id}:build-started"


def requeue_lost_builds() -> list[int]:
    """Rooms still "building" that nobody builds (no lock) and nobody queued (no marker):
    queued again. The beat calls this."""
    ids = list(
        Room.objects.filter(build_state=Room.BUILDING)
        .exclude(build_progress=WAITING)
        .values_list("id", flat=True)
    )
    if not ids:
        return []
    client = redis_client()
    lost = [
        i
        for i in ids
        if not client.exists(f"playground:room:{i}:lock")
        and not client.exists(f"playground:room:{i}:build-queued")
    ]
    soft, _hard = heavy.time_limits()
    for room_id in lost:
        began = client.get(_started_key(room_id))
        if soft is not None and began is not None and time.time() - float(began) > soft:
            # Past its time limit: its process was killed (the hard limit); again would too.
            log.warning("room %s: build stopped by its time limit", room_id)
            _fail(room_id, heavy.stopped_message())
            continue
        log.warning("room %s: build lost (worker gone?), queued again", room_id)
        client.delete(_started_key(room_id))  # that attempt is over; the next one sets it
        queue_build(room_id)
    return lost


def _progress(room_id: int, message: str) -> None:
    Room.objects.filter(pk=room_id, build_state=Room.BUILDING).update(build_progress=message)


class _LockKeeper(threading.Thread):
    """Renews the builder's lock while the build runs (the engine's t=0 is one long call)."""

    def __init__(self, lock: Any) -> None:
        super().__init__(daemon=True, name=f"build-lock {lock.key}")
        self.lock = lock
        self.done = threading.Event()

    def renew(self) -> None:
        self.lock.client.eval(_RENEW, 1, self.lock.key, self.lock.token, BUILD_LOCK_MS)

    def run(self) -> None:
        while not self.done.wait(BUILD_RENEW_S):
            try:
                self.renew()
            except redis.RedisError:
                pass


def room_build(room_id: int, keep_engine: bool = True) -> None:
    """The worker's part: build the engine of a "building" room (parse, create the objects,
    run t=0), store its first rows and its snapshot, make it live; or mark it failed with the
    error (past the heavy tasks' time limit: heavy.stopped_message). Holds the room's lock
    (ticks skip it meanwhile) until its snapshot is stored, so that the worker that ticks the
    room restores the engine from it; ``keep_engine=False`` (a heavy worker, which never ticks
    it) then drops the engine. A room already built is left alone. The owner's heavy-job slot
    (claim_build) is renewed while it builds and given back at the end."""
    lock = RoomLock(room_id)
    lock.client.delete(f"playground:room:{room_id}:build-queued")
    with lock as got:
        if not got:
            return  # another worker is building it
        keeper = _LockKeeper(lock)
        keeper.renew()
        keeper.start()
        owner, job = "", f"room:{room_id}"
        try:
            room = Room.objects.filter(pk=room_id, build_state=Room.BUILDING).first()
            if room is None or room.build_progress == WAITING:
                return
            owner = room.creator
            heavy.started(owner, job)
            lock.client.set(_started_key(room_id), repr(time.time()), ex=86400)
            if not room.scenario_yaml:  # a big import's kubectl output, a comparison's side
                scenario = _pending_finish(room)
            else:
                _progress(room_id, "parsing the scenario")
                scenario = kept_scenario(room_id) or load_scenario(room.scenario_yaml)
            _build(room, scenario)
            snapshots.wait(room_id, settings.PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS)
        except Exception as exc:
            if not Room.objects.filter(pk=room_id).exists():
                # Deleted meanwhile (the admin's delete during the build): whatever the build
                # ran into on its way out is no failure; nothing is left to mark.
                log.info("room %s: deleted during its build (%s)", room_id, type(exc).__name__)
                return
            if heavy.is_stop(exc):
                log.warning("room %s: build stopped by its time limit", room_id)
                error = heavy.stopped_message()
            elif isinstance(exc, (ScenarioError, *REFUSALS)):
                # The form's message (an import's names the item and the field).
                log.warning("room %s: build refused: %s", room_id, exc)
                error = str(exc)
            else:
                log.exception("room %s: build failed", room_id)
                error = f"{type(exc).__name__}: {exc}"
            _fail(room_id, error)
        finally:
            keeper.done.set()
            if not keep_engine:
                _CACHE.pop(room_id, None)
            heavy.release(owner, job)
            lock.client.delete(_started_key(room_id))


def _fail(room_id: int, error: str) -> None:
    """A room whose build failed: failed with ``error``, and the other room of its comparison
    with it (it does not go live alone)."""
    with transaction.atomic():
        Room.objects.filter(pk=room_id, build_state=Room.BUILDING).update(
            build_state=Room.FAILED, build_progress="", build_error=error[:2000]
        )
        PendingImport.objects.filter(room_id__in=lockstep_ids(room_id)).delete()
        Room.objects.filter(pk__in=lockstep_ids(room_id), build_state=Room.BUILDING).exclude(
            pk=room_id
        ).update(
            build_state=Room.FAILED,
            build_progress="",
            build_error=f"the other room of the comparison could not be built: {error}"[:2000],
        )


def _pending_finish(room: Room) -> Scenario:
    """A room stored without its scenario: a big import (imports.import_finish) or a side of
    a big comparison (create.side_finish) gets it now."""
    options = PendingImport.objects.filter(room=room).values_list("options", flat=True).first()
    finish = side_finish if isinstance(options, dict) and "compare" in options else import_finish
    return finish(room, lambda message: _progress(room.pk, message))


def _build(room: Room, scenario: Scenario) -> None:
    nodes, pods = scenario_size(scenario)
    _progress(room.pk, f"creating {nodes:,} nodes and {pods:,} pods")
    sim = Simulation(scenario)
    with gc_paused():
        sim.run(0)
    _progress(
        room.pk,
        f"storing {len(sim.cluster.nodes):,} nodes, {len(sim.cluster.pods):,} pods and "
        f"{len(sim.timeline.events):,} events",
    )
    with bulk.big_write(), transaction.atomic(), gc_paused():
        # A compared room and its partner are locked together, in id order (the lock order).
        ids = lockstep_ids(room.pk)
        locked = {
            r.pk: r for r in Room.objects.select_for_update().filter(pk__in=ids).order_by("pk")
        }
        built = locked.get(room.pk)
        if built is None:  # deleted meanwhile (the admin's delete): nothing to store
            log.info("room %s: deleted during its build; the build is dropped", room.pk)
            return
        room = built
        if room.build_state != Room.BUILDING or room.build_progress == WAITING:
            return
        partner = next((r for pk, r in locked.items() if pk != room.pk), None)
        if partner is not None and partner.build_state == Room.FAILED:
            room.build_state, room.build_progress = Room.FAILED, ""
            room.build_error = (
                f"the other room of the comparison could not be built: {partner.build_error}"[:2000]
            )
            room.save(update_fields=["build_state", "build_progress", "build_error"])
            return
        rt = Runtime(sim, room.version)
        delta = _persist(room, rt, fresh=True)
        if (
            partner is not None
            and partner.build_state == Room.BUILDING
            and partner.build_progress != WAITING
        ):
            # The first of a comparison's rooms built: it waits for the other (not ticked).
            room.build_progress = WAITING
            room.save(update_fields=["build_progress"])
        else:
            together = [room] if partner is None else [room, partner]
            now = timezone.now()
            for r in together:
                r.build_state, r.build_progress = Room.LIVE, ""
                fields = ["build_state", "build_progress"]
                if partner is not None:  # both on one clock, from now
                    r.wall_anchor, r.sim_anchor_ms = now, 0
                    fields += ["wall_anchor", "sim_anchor_ms"]
                r.save(update_fields=fields)
    room_went_live(room, rt, delta, anchor=partner is None)
