"""The room-creation benchmark (issue #14, "Fast big rooms"): a big room's scenario (pure,
no Django) and the wall time of each phase of building it (``manage.py bench``)."""

from __future__ import annotations

import json
from typing import Any

from .scenarios import ZONES, bare_pods


def big_room_scenario(nodes: int, pods: int, bare_per_node: int | None = None) -> dict[str, Any]:
    """``nodes`` nodes over three zones (generated) and about ``pods`` pods: ``bare_per_node``
    bare pods bound by nodeName to each node (2, or 1 over 1,000 nodes: the file stays under
    the 2 MiB limit), the rest from Deployments of 1,000 replicas each (scheduled)."""
    if bare_per_node is None:
        bare_per_node = 2 if nodes <= 1000 else 1
    per_zone = nodes // len(ZONES)
    bare = bare_pods(per_zone, bare_per_node)
    rest = max(0, pods - len(bare))
    deployments = []
    i = 0
    while rest > 0:
        n = min(1000, rest)
        i += 1
        deployments.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"web-{i}", "namespace": "default"},
                "spec": {
                    "replicas": n,
                    "selector": {"matchLabels": {"app": f"web-{i}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"web-{i}"}},
                        "spec": {
                            "containers": [
                                {"name": "app", "resources": {"requests": {"cpu": "50m"}}}
                            ]
                        },
                    },
                },
            }
        )
        rest -= n
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"big-room-{nodes}"},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": deployments + bare,
            "faults": [{"at": "60s", "type": "ZoneOutage", "zone": "zone-a"}],
        },
    }


def big_room_text(nodes: int, pods: int) -> str:
    return json.dumps(big_room_scenario(nodes, pods), separators=(",", ":"))


def build_phases(nodes: int, pods: int) -> dict[str, Any]:
    """Seconds of each phase of creating a room of ``nodes`` nodes / ``pods`` pods, as the
    worker builds it (the benchmark of ``manage.py bench``; a fresh room, deleted after)."""
    import time  # the benchmark, not the engine, reads the wall clock

    from django.db import transaction

    from .. import bulk
    from ..engine.scenario import load_scenario
    from ..engine.simulation import Simulation
    from ..rooms import build, create, reading, runtime, tick
    from ..rooms.runtime import gc_paused

    text = big_room_text(nodes, pods)
    clock = time.perf_counter
    c0 = time.process_time()
    t0 = clock()
    room, parsed = create.room_prepare(f"bench-build-{nodes}", text, None, 10.0)
    blob = build.parsed_blob(parsed)  # the form hands its parse to the worker (through Redis)
    t1 = clock()
    # The worker takes it (build.kept_scenario, less Redis' GETDEL of ~1 MB), or parses the text.
    scenario = build.scenario_of_blob(blob) or load_scenario(room.scenario_yaml)
    t2 = clock()
    c2 = time.process_time()
    sim = Simulation(scenario)
    with gc_paused():
        sim.run(0)
    t3 = clock()
    c3 = time.process_time()
    events = len(sim.timeline.events)
    with bulk.big_write(), transaction.atomic(), gc_paused():
        rt = runtime.Runtime(sim, room.version)
        tick._persist(room, rt, fresh=True)
    t4 = clock()
    c4 = time.process_time()
    from .. import snapshots

    runtime._snapshot(room, rt)  # what the room's lock is held for (a fork, for a big room)
    t5 = clock()
    child = snapshots.wait(room.pk, timeout=600)
    t6 = clock()
    # What a page then fetches to show the room (snapshot.json, built once per version).
    page_kib = len(reading.room_snapshot_json(room)) // 1024
    t7 = clock()
    runtime._CACHE.pop(room.pk, None)
    room.delete()
    return {
        "nodes": len(sim.cluster.nodes),
        "pods": len(sim.cluster.pods),
        "events": events,
        "scenario_kib": len(text) // 1024,
        "validate_s": round(t1 - t0, 2),
        "parse_s": round(t2 - t1, 2),
        "engine_s": round(t3 - t2, 2),
        "store_s": round(t4 - t3, 2),
        # CPU seconds of this process storing (a loaded machine's wall time is not; on
        # PostgreSQL the server's own work is not in it)
        "store_cpu_s": round(c4 - c3, 2),
        "live_s": round(t4 - t0, 2),
        # CPU seconds of this process (what the wall times would be on an idle core)
        "engine_cpu_s": round(c3 - c2, 2),
        "live_cpu_s": round(c4 - c0, 2),
        "snapshot_s": round(t5 - t4, 3),
        # until the snapshot was stored (its child pickled it meanwhile; 0: in the tick)
        "snapshot_bg_s": round(t6 - t4, 2) if child is not None else 0.0,
        "page_s": round(t7 - t6, 3),
        "page_kib": page_kib,
    }


def run_build_rows(sizes: list[int], pods_per_node: int = 30) -> list[dict[str, Any]]:
    """One fresh process per size (``python -m controller.bench.build N P``): its own peak
    memory, and no engine of the previous size in memory."""
    import subprocess
    import sys

    rows = []
    for n in sizes:
        args = [sys.executable, "-m", "controller.bench.build", str(n), str(n * pods_per_node)]
        proc = subprocess.run(args, capture_output=True, text=True, check=True)
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return rows


def format_build_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Room creation, seconds by phase: validate (the form), parse (the worker), engine t=0,
    store the first rows (and its CPU seconds); live = their sum; the first snapshot is taken after: the room's lock
    is held for "snapshot s" (a fork, for a big room), "bg s" until its child stored it;
    "page s": building the snapshot.json a page then fetches to show the room (its size)."""
    head = (
        f"{'nodes':>6} {'pods':>7} {'events':>7} {'KiB':>5}  {'validate s':>10} {'parse s':>7} "
        f"{'engine s':>8} {'store s':>7} {'(cpu s)':>7} {'live s':>6} {'(cpu s)':>7} {'snapshot s':>10} "
        f"{'(bg s)':>6} {'page s':>6} {'(KiB)':>7} {'peak MiB':>9} {'load':>5}"
    )
    lines = ["room creation, by phase:", head]
    for r in rows:
        lines.append(
            f"{r['nodes']:>6} {r['pods']:>7} {r['events']:>7} {r['scenario_kib']:>5}  "
            f"{r['validate_s']:>10} {r['parse_s']:>7} {r['engine_s']:>8} {r['store_s']:>7} "
            f"{r.get('store_cpu_s', ''):>7} {r['live_s']:>6} {r.get('live_cpu_s', ''):>7} {r['snapshot_s']:>10} "
            f"{r.get('snapshot_bg_s', ''):>6} {r.get('page_s', ''):>6} {r.get('page_kib', ''):>7} "
            f"{r['peak_mib']:>9} {r.get('load', ''):>5}"
        )
    return lines


if __name__ == "__main__":
    import os
    import resource
    import sys

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    row = build_phases(int(sys.argv[1]), int(sys.argv[2]))
    row["peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    row["load"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row))
