"""Split a big room's engine snapshot (runtime._snapshot) into its phases: pickle, zlib,
the database write, and the cost of os.fork() in the process that holds the engine
(issue #14). ``python scripts/snapshot_split.py 1000 30000`` prints one JSON row."""

from __future__ import annotations

import json
import os
import pickle
import resource
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")


def main(nodes: int, pods: int) -> dict:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from django.db import transaction

    from controller.bench.build import big_room_text
    from controller.engine.scenario import load_scenario
    from controller.engine.simulation import Simulation
    from controller.models import EngineSnapshot
    from controller.rooms import create, runtime, tick
    from controller.rooms.build import gc_paused

    room, _ = create.room_prepare(f"snap-split-{nodes}", big_room_text(nodes, pods), None, 10.0)
    sim = Simulation(load_scenario(room.scenario_yaml))
    with gc_paused():
        sim.run(0)
    with transaction.atomic(), gc_paused():
        rt = runtime.Runtime(sim, room.version)
        tick._persist(room, rt, fresh=True)
    clock = time.perf_counter
    row: dict = {"nodes": len(sim.cluster.nodes), "pods": len(sim.cluster.pods)}
    listeners = sim.timeline.listeners
    sim.timeline.listeners = []
    t0 = clock()
    raw = pickle.dumps(sim, protocol=pickle.HIGHEST_PROTOCOL)
    t1 = clock()
    blob = zlib.compress(raw, 1)
    t2 = clock()
    sim.timeline.listeners = listeners
    EngineSnapshot.objects.update_or_create(
        room=room,
        defaults={"sim_ms": sim.now_ms, "event_count": room.event_count, "blob": blob},
    )
    t3 = clock()
    row.update(
        pickle_s=round(t1 - t0, 3),
        zlib_s=round(t2 - t1, 3),
        db_s=round(t3 - t2, 3),
        raw_mib=round(len(raw) / 2**20, 1),
        blob_mib=round(len(blob) / 2**20, 1),
    )
    from controller import snapshots

    t4 = clock()
    runtime._snapshot(room, rt)  # the room's lock is held this long (a fork, if big)
    row["snapshot_s"] = round(clock() - t4, 3)
    child = snapshots.running(room.pk)
    peak_private = 0  # the child's private (copied) memory, sampled while it runs
    while child is not None and not child.done.is_set():
        try:
            with open(f"/proc/{child.pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Private_Dirty:"):
                        peak_private = max(peak_private, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    child = snapshots.wait(room.pk, 600)
    row["snapshot_bg_s"] = round(clock() - t4, 3) if child is not None else 0.0
    row["child_private_mib"] = round(peak_private / 1024, 1)
    forks = []
    for _ in range(3):
        t5 = clock()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        forks.append(clock() - t5)
        os.waitpid(pid, 0)
    row["fork_s"] = round(min(forks), 4)
    row["rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    runtime._CACHE.pop(room.pk, None)
    room.delete()
    return row


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
