"""A room's engine in this process: the cache, the restore (snapshot plus the applied
actions replayed), and the snapshots taken of it (controller/snapshots.py does the storing).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import pickle
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from .. import snapshots
from ..engine.core import Phase
from ..engine.scenario import (
    Fault,
    Scenario,
    load_scenario,
    parse_fault,
)
from ..engine.simulation import Simulation
from ..models import (
    Action,
    EngineSnapshot,
    Room,
)
from . import phases

log = logging.getLogger(__name__)
SNAPSHOT_EVERY_S = 30.0
# A snapshot costs CPU (about 0.7 s for 1,000 nodes / 30,000 pods; a big room's in a forked
# child, controller/snapshots.py, a small one's in its tick): big rooms take them less often,
# so that they cost at most ~2% of wall time.
SNAPSHOT_COST_FACTOR = 50
CONTROL_KINDS = ("speed", "pause", "resume", "step", "rewind")


_GC_LOCK = threading.Lock()
_GC = {"pauses": 0, "enabled": True}  # blocks of this process's threads with it paused


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while an engine's objects are created and its first rows
    stored: every collection would walk all of them again (~15% of the engine's t=0, ~25% of
    the store); nor while a snapshot's 31,000 rows are read (the collections those rows
    set off walk whatever else the process holds: 0.4 s of a 0.55 s snapshot.json with a
    1,000-node engine in memory); nor during a tick: what it allocates lives until its end
    (the engine's new events until stored, the views until sent), so collections during it
    found nothing to free, promoted it all, and a big tick (a zone's nodes and pods changing
    at once) set off a collection of the whole engine. Turned back on after the last of
    this process's threads in such a block leaves it."""
    with _GC_LOCK:
        if _GC["pauses"] == 0:
            _GC["enabled"] = gc.isenabled()
            gc.disable()
        _GC["pauses"] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC["pauses"] -= 1
            if _GC["pauses"] == 0 and _GC["enabled"]:
                gc.enable()


# -- the in-process engine cache ------------------------------------------------------------
@dataclass
class Runtime:
    sim: Simulation
    version: int
    snapshot_at: float = field(default_factory=time.monotonic)
    snapshot_cost: float = 0.0  # wall seconds the last snapshot took
    # The tick's (tick.py): simulated ms its engine advances per wall second (the steps of a
    # tick with a work budget are sized by it; 0: not measured yet), and the room's pace
    # (clock.Pace: how fast its clock really goes).
    sim_ms_per_s: float = 0.0
    pace: Any = None


# What a cached engine is estimated to take, per node or pod: 3.6-3.8 KB of Python objects
# traced (tracemalloc, scenario parse included, 100 and 1,000 nodes of 30 pods each), and the
# process grows more than it traces (the allocator's arenas: a worker grew ~800 MB for a
# 150,000-object room in issue #35, 5.3 KB each): 5 KB, plus ENGINE_BYTES_FIXED (0.58 MB
# traced for a 3-node room).
ENGINE_BYTES_PER_OBJECT = 5000
ENGINE_BYTES_FIXED = 600_000


def engine_bytes(sim: Simulation) -> int:
    """An engine's estimated size, from its nodes and pods (two len()s: cheap each tick)."""
    return ENGINE_BYTES_FIXED + ENGINE_BYTES_PER_OBJECT * (
        len(sim.cluster.nodes) + len(sim.cluster.pods)
    )


class EngineCache(OrderedDict[int, Runtime]):
    """The engines this process keeps between ticks, least recently used first, within
    PLAYGROUND_ENGINE_CACHE_MB (engine_bytes): storing one (a tick's restore, a new room, a
    rewind) or using one (``get``: its tick may have grown it) drops the least recently used
    others past the cap. A dropped engine goes back to its snapshot: the room's next tick
    restores it (snapshot + applied actions, as after a worker restart; keep_engines_frozen
    frees its memory). The engine just stored or used is kept, even alone over the cap."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.RLock()  # a worker's threads tick rooms side by side

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        with self._lock:
            if key not in self:
                return default
            self.move_to_end(key)
            self.trim()
            return self[key]

    def __setitem__(self, key: int, value: Runtime) -> None:
        with self._lock:
            super().__setitem__(key, value)
            self.move_to_end(key)
            self.trim()

    def pop(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        with self._lock:
            return super().pop(key, default)

    def __delitem__(self, key: int) -> None:
        with self._lock:
            super().__delitem__(key)

    def pop_if(self, key: int, value: Runtime) -> bool:
        """Drop ``key`` only while it still holds ``value`` (this very engine), in one step
        under the lock: another thread may have stored a newer engine for the room meanwhile
        (a rewind, a restore), and that one stays. True when it was dropped."""
        with self._lock:
            if super().get(key) is not value:
                return False
            super().pop(key)
            return True

    def clear(self) -> None:
        with self._lock:
            super().clear()

    def engines(self) -> list[Simulation]:
        """The cached engines, taken at once (another thread may drop one meanwhile)."""
        with self._lock:
            return [rt.sim for rt in self.values()]

    def trim(self) -> list[int]:
        """Drop least recently used engines until the others fit; the dropped rooms' ids."""
        global DROPPED
        cap = settings.PLAYGROUND_ENGINE_CACHE_MB * 1024 * 1024
        if cap <= 0:
            return []
        with self._lock:
            sizes = {key: engine_bytes(rt.sim) for key, rt in self.items()}
            total, dropped = sum(sizes.values()), []
            for key in list(self)[:-1]:  # the newest stays
                if total <= cap:
                    break
                total -= sizes[key]
                super().pop(key, None)
                dropped.append(key)
        if dropped:
            DROPPED += len(dropped)
            log.info(
                "rooms %s: engines dropped from the cache (PLAYGROUND_ENGINE_CACHE_MB)", dropped
            )
        return dropped


_CACHE: EngineCache = EngineCache()
# Engines dropped by the cache's bound in this process (rooms.runtime.EngineCache.trim).
DROPPED = 0


def _engine_version() -> str:
    """A digest of the engine's source: a snapshot pickled by other engine code (before an
    upgrade) may not load, or load into objects the new code misreads."""
    root = Path(__file__).resolve().parent.parent / "engine"
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


def _staggered(room_id: int) -> float:
    """A restored room's last snapshot instant as if taken a fraction of SNAPSHOT_EVERY_S ago,
    the fraction its id's (the golden ratio's multiples: consecutive ids spread evenly): a
    worker that restores all its rooms in one beat (a restart) would otherwise take all their
    periodic snapshots together, in one beat every SNAPSHOT_EVERY_S (50 small rooms: 1.6 s
    late, every room's tick of that beat)."""
    return time.monotonic() - (room_id * 0.6180339887498949) % 1.0 * SNAPSHOT_EVERY_S


def _runtime(room: Room) -> Runtime:
    global RESTORES
    rt = _CACHE.get(room.pk)
    if rt is None or rt.version != room.version:
        RESTORES += 1
        sim, snapshot_due = _restore(room)
        rt = Runtime(sim, room.version, snapshot_at=0.0 if snapshot_due else _staggered(room.pk))
        _CACHE[room.pk] = rt
    return rt


# Engines whose objects gc.freeze() took out of the cyclic collector's sight (strong
# references: an engine dropped from the cache is told from a new one at the same address).
_FROZEN: list[Simulation] = []


def keep_engines_frozen() -> None:
    """The cached engines' objects are frozen (gc.freeze): a full collection no longer walks
    them (a 5,000-node engine is a million objects: each full collection took 0.3-0.7 s of a
    tick, whenever enough new objects had piled up). When an engine was dropped from the
    cache, everything is unfrozen and collected once, so that it is freed; a new engine is
    frozen at its first tick (after a collection of the young generations, so that little
    garbage is frozen with it)."""
    cached = _CACHE.engines()
    ids = {id(sim) for sim in cached}
    if any(id(sim) not in ids for sim in _FROZEN):
        gc.unfreeze()
        _FROZEN.clear()
        gc.collect()
    frozen = {id(sim) for sim in _FROZEN}
    if any(id(sim) not in frozen for sim in cached):
        gc.collect(1)
        gc.freeze()
        _FROZEN[:] = cached


def forget_cache() -> None:
    """Drop every cached engine (tests simulate a worker restart with it)."""
    _CACHE.clear()


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

    with phases.moved("commit", "snapshot"):
        _fork(rt, stamps)


def _fork(rt: Runtime, stamps: snapshots.Stamps) -> None:
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
