"""A room's engine snapshot taken in the background (issue #14), as Redis' BGSAVE does.

Pickling a big engine takes seconds (6.2 s at 5,000 nodes / 150,000 pods) and a tick that
took it held the room's lock meanwhile: the room's next ticks were skipped, its page froze.
Now the tick only records the snapshot's stamps (``Stamps``: what the restore needs to replay
after it) and, once its transaction has committed, forks: the child is a copy-on-write image
of the engine at that instant, pickles and compresses it into an anonymous temporary file and
exits (``os._exit``: it never touches the database connection, Redis, logging or any lock of
the parent, whose other threads run ticks). The parent returns at once (fork: 18 ms at 1.2 GB)
and releases the lock; a collector thread waits for the child and stores the blob with the
stamps taken at fork time, unless a newer snapshot is stored already (``store``).

"Newer" is the room's version (Room.version: every persisted tick adds one, a rewind too, and
it never goes back); a rewind leaves a tombstone of its version (``invalidate``) so that an
older child finishing after it cannot bring back the engine from before the rewind.

One child per room at a time, at most PLAYGROUND_SNAPSHOT_MAX_CHILDREN per process (a
snapshot due meanwhile is taken at a later tick); each is reaped by its collector. A child
that fails (its engine cannot be pickled, it was killed, it ran longer than
PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS) is logged and leaves the last good snapshot: the
room's next periodic snapshot retries.
Small engines are pickled in the tick as before (``use_fork``): below
PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS of pickling the fork is not worth it; without os.fork or
with PLAYGROUND_SNAPSHOT_FORK off, every snapshot is.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import pickle
import signal
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from .models import EngineSnapshot

log = logging.getLogger(__name__)

# Seconds of pickling per pod and node before a room's first snapshot measured one (1,000
# nodes / 30,000 pods: ~0.7 s): a room's first snapshot is forked when the estimate is over
# the threshold.
PICKLE_S_PER_OBJECT = 25e-6
# Seconds a fork takes per GiB of the process's resident memory (scripts/snapshot_split.py).
FORK_S_PER_GIB = 0.02
# Signals whose parent's handlers (Celery's, Daphne's) must not run in the child.
_CHILD_DEFAULT_SIGNALS = ("SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2")


@dataclass(frozen=True)
class Stamps:
    """What a snapshot records beside its blob, taken when the engine was copied."""

    room_id: int
    room_version: int
    sim_ms: int
    event_count: int
    last_action_id: int
    engine_version: str


def store(stamps: Stamps, blob: bytes) -> bool:
    """Store a snapshot unless one of the same or a newer room version is stored already
    (or the room is gone). Returns whether it was stored."""
    fields = {
        "room_version": stamps.room_version,
        "sim_ms": stamps.sim_ms,
        "event_count": stamps.event_count,
        "last_action_id": stamps.last_action_id,
        "engine_version": stamps.engine_version,
        "blob": blob,
    }
    rows = EngineSnapshot.objects.filter(room_id=stamps.room_id)
    if rows.filter(room_version__lt=stamps.room_version).update(**fields):
        return True
    if rows.exists():
        return False  # the stored one is as new or newer
    try:
        with transaction.atomic():
            EngineSnapshot.objects.create(room_id=stamps.room_id, **fields)
    except IntegrityError:
        return False  # another snapshot was stored meanwhile (or the room was deleted)
    return True


def invalidate(room_id: int, room_version: int) -> None:
    """A rewind: the stored engine is not the room's any more. A tombstone (no engine,
    version ``room_version``) stays, so that no snapshot taken before it is stored after it;
    a restore replays the room from its scenario."""
    EngineSnapshot.objects.update_or_create(
        room_id=room_id,
        defaults={
            "room_version": room_version,
            "sim_ms": 0,
            "event_count": 0,
            "last_action_id": 0,
            "engine_version": "",
            "blob": b"",
        },
    )


def dump(sim: Any) -> bytes:
    """The engine, pickled and compressed (its listeners are the process's, not the room's).
    The garbage collector is paused meanwhile: pickling allocates an object per object it
    writes, and collections of the whole engine made it ~30% slower (1,000 nodes)."""
    listeners = sim.timeline.listeners
    sim.timeline.listeners = []
    collecting = gc.isenabled()
    gc.disable()
    try:
        return zlib.compress(pickle.dumps(sim, protocol=pickle.HIGHEST_PROTOCOL), 1)
    finally:
        sim.timeline.listeners = listeners
        if collecting:
            gc.enable()


def fork_cost_s() -> float:
    """What a fork of this process costs (copying its page tables), estimated from its
    resident memory: measured 4 ms at 0.3 GiB, 18 ms at 1.2 GiB."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**30 * FORK_S_PER_GIB


def use_fork(last_cost_s: float, objects: int) -> bool:
    """Whether a snapshot is forked: when enabled, os.fork exists, and its pickling (the last
    one's cost, else estimated from the number of pods and nodes) takes longer than
    PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS and than the fork would (a small room in a worker
    that holds big ones is pickled in its tick)."""
    if not settings.PLAYGROUND_SNAPSHOT_FORK or not hasattr(os, "fork"):
        return False
    estimate = last_cost_s if last_cost_s > 0 else objects * PICKLE_S_PER_OBJECT
    minimum = settings.PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS
    return estimate >= minimum and (minimum == 0 or estimate > fork_cost_s())


@dataclass
class Child:
    """A snapshot child of one room: its process, the stamps of its instant, its collector."""

    pid: int
    stamps: Stamps
    started: float
    file: Any
    done: threading.Event = field(default_factory=threading.Event)
    stored: bool = False
    error: str = ""
    seconds: float = 0.0


_LOCK = threading.Lock()
_CHILDREN: dict[int, Child] = {}  # room id -> its running snapshot child
_LAST: dict[int, Child] = {}  # room id -> its last child (running or collected)


def running(room_id: int) -> Child | None:
    with _LOCK:
        return _CHILDREN.get(room_id)


def _child_main(sim: Any, fd: int) -> None:
    """In the forked child: pickle, compress, write, exit. Nothing else of the parent's."""
    code = 1
    try:
        for name in _CHILD_DEFAULT_SIGNALS:
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.set_wakeup_fd(-1)  # the parent's event loop's (Daphne), not the child's
        # Only its file: a child must not keep the parent's sockets (Daphne's listening one, a
        # restarted server could not bind it) or pipes (its stdout) open after the parent.
        os.closerange(0, fd)
        os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
        gc.disable()  # a collection would touch (copy) every page for nothing
        view = memoryview(dump(sim))
        while view:
            view = view[os.write(fd, view) :]
        code = 0
    except BaseException:  # the exit code tells the parent
        code = 1
    finally:
        os._exit(code)


def start(sim: Any, stamps: Stamps, on_done: Any = None) -> Child | None:
    """Fork a child that pickles ``sim`` as it is now; a thread stores its blob with
    ``stamps`` when it exits and then calls ``on_done(child)``. None when the room has a
    child already or this process has PLAYGROUND_SNAPSHOT_MAX_CHILDREN (each may copy up to
    its engine's memory); OSError when the fork failed (logged)."""
    with _LOCK:
        limit = settings.PLAYGROUND_SNAPSHOT_MAX_CHILDREN
        if stamps.room_id in _CHILDREN or (limit and len(_CHILDREN) >= limit):
            return None
        # Anonymous (nothing left behind); the collector closes it.
        out = tempfile.TemporaryFile(prefix="engine-snapshot-")  # noqa: SIM115
        try:
            pid = os.fork()
        except OSError:
            out.close()
            log.exception("room %s: could not fork a snapshot child", stamps.room_id)
            raise
        if pid == 0:
            _child_main(sim, out.fileno())  # never returns
        child = Child(pid, stamps, time.monotonic(), out)
        _CHILDREN[stamps.room_id] = _LAST[stamps.room_id] = child
    threading.Thread(
        target=_collect, args=(child, on_done), daemon=True, name=f"snapshot-{stamps.room_id}"
    ).start()
    return child


def _wait(child: Child) -> int:
    """Wait for the child's exit (killed past the timeout); its wait status."""
    deadline = child.started + settings.PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS
    delay = 0.005
    while True:
        pid, status = os.waitpid(child.pid, os.WNOHANG)
        if pid:
            return status
        if time.monotonic() > deadline:
            child.error = "timed out"
            os.kill(child.pid, signal.SIGKILL)
            return os.waitpid(child.pid, 0)[1]
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _collect(child: Child, on_done: Any) -> None:
    room_id = child.stamps.room_id
    try:
        try:
            status = _wait(child)
        except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): result unknown
            status = -1
        child.seconds = time.monotonic() - child.started
        if status == 0:
            child.file.seek(0)
            blob = child.file.read()
            child.stored = store(child.stamps, blob)
        else:
            if not child.error:
                if status > 0 and os.WIFSIGNALED(status):
                    child.error = f"killed by signal {os.WTERMSIG(status)}"
                elif status > 0 and os.WIFEXITED(status):
                    child.error = f"exited with code {os.WEXITSTATUS(status)}"
                else:
                    child.error = "was reaped by another (its result is unknown)"
            log.error(
                "room %s: the snapshot child of t=%.1f s %s; the last good snapshot stays",
                room_id,
                child.stamps.sim_ms / 1000,
                child.error,
            )
    except Exception as exc:
        child.error = f"could not be stored: {exc!r}"
        log.exception("room %s: the background snapshot could not be stored", room_id)
    finally:
        child.file.close()
        connection.close()  # this thread's database connection
        if on_done is not None:
            try:
                on_done(child)
            except Exception:
                log.exception("room %s: after its background snapshot", room_id)
        with _LOCK:
            _CHILDREN.pop(room_id, None)
        child.done.set()


def wait(room_id: int, timeout: float = 60.0) -> Child | None:
    """Wait for the room's running snapshot child, if any, to be collected (tests, bench);
    the room's last child (None: this process forked none for it)."""
    child = running(room_id)
    if child is not None and not child.done.wait(timeout):
        raise TimeoutError(f"room {room_id}: the snapshot child is still running")
    with _LOCK:
        return _LAST.get(room_id)


def wait_all(timeout: float) -> int:
    """Wait (at most ``timeout`` seconds in all) for every snapshot child this process is
    still running to be stored; how many were still running at the end."""
    deadline = time.monotonic() + timeout
    with _LOCK:
        children = list(_CHILDREN.values())
    for child in children:
        child.done.wait(max(0.0, deadline - time.monotonic()))
    return sum(not c.done.is_set() for c in children)


@atexit.register
def _store_before_exit() -> None:
    """A process leaving (a management command that made a big room, a worker shut down)
    waits for its snapshot children: their collectors are daemon threads, which would die with
    it, and the room's snapshot with them (the next worker would replay the room from its
    scenario: ~20 s at 5,000 nodes). Not in a forked child, which leaves by os._exit."""
    if not _CHILDREN:
        return
    left = wait_all(settings.PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS)
    if left:
        log.error("%s snapshot children still running at exit: their snapshots are lost", left)
