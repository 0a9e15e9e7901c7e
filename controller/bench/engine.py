"""The engine row: clusters of N nodes in 3 zones with 30 pods per node, one simulated hour
with a zone outage at minute 10 (``manage.py bench --only engine``). Each size runs in a fresh
process (``python -m controller.bench.engine SIZE``) so that its peak memory is its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

from ..engine.clock import HOUR, MINUTE
from ..engine.config import ClusterConfig
from ..engine.scenario import Fault, NodeSpec, Scenario
from ..engine.simulation import Simulation
from .scenarios import ZONES

CAPACITY = {"cpu": 16000, "memory": 64 * 2**30, "ephemeral-storage": 200 * 2**30, "pods": 110}


def bench_scenario(nodes: int, pods_per_node: int = 30, leak: bool = False) -> Scenario:
    """A cluster spread over three zones; ``zone-a`` goes dark at minute 10 (or, with
    ``leak``, one pod per node leaks memory from minute 10 instead)."""
    specs = []
    objects: list[dict[str, Any]] = []
    for i in range(nodes):
        zone = ZONES[i % len(ZONES)]
        name = f"{zone[-1]}-{i // len(ZONES) + 1}"
        specs.append(
            NodeSpec(
                name=name,
                labels={"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name},
                capacity=dict(CAPACITY),
                usage={"memory": 2 * 2**30},
            )
        )
        for j in range(pods_per_node):
            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-pod-{j}",
                        "namespace": "default",
                        "annotations": {"usage.playground/memory": "1Gi" if j == 0 else "256Mi"},
                    },
                    "spec": {
                        "nodeName": name,
                        "containers": [
                            {
                                "name": "app",
                                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
                            }
                        ],
                    },
                }
            )
    if leak:
        faults = [
            Fault(10 * MINUTE, "LeakMemory", {"pod": f"default/{s.name}-pod-0", "rate": "10Mi"})
            for s in specs
        ]
    else:
        faults = [Fault(10 * MINUTE, "ZoneOutage", {"zone": "zone-a"})]
    return Scenario(
        name=f"bench-{nodes}",
        duration_ms=HOUR,
        config=ClusterConfig(),
        nodes=specs,
        objects=objects,
        faults=faults,
        expect=[],
    )


def run_one(nodes: int, leak: bool = False) -> dict[str, Any]:
    import time  # the benchmark, not the engine, reads the wall clock

    t0 = time.perf_counter()
    sim = Simulation(bench_scenario(nodes, leak=leak), record=False)
    sim.start()
    t1 = time.perf_counter()
    c1 = time.process_time()
    sim.run(HOUR)
    t2 = time.perf_counter()
    c2 = time.process_time()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, end = sim.controller.longest_pass
    running = sim.controller.pass_waiting_ms(sim.now_ms)
    if running > end - start:  # the longest pass is still running at the end of the hour
        start, end = sim.now_ms - running, sim.now_ms
    return {
        "nodes": nodes,
        "pods": len(sim.cluster.pods),
        "scenario": "leaking pod per node" if leak else "zone outage at 10 min",
        "setup_s": round(t1 - t0, 2),
        "run_s": round(t2 - t1, 2),
        "run_cpu_s": round(c2 - c1, 2),  # CPU seconds: steadier than wall time under load
        "sim_s_per_wall_s": round(HOUR / 1000 / max(t2 - t1, 1e-9), 1),
        "events": sim.timeline.count,
        # the longest monitor pass: the node-controller's backlog of writes waiting for its
        # client's tokens (--kube-api-qps 20, --kube-api-burst 30)
        "longest_pass_s": round((end - start) / 1000, 1),
        "longest_pass_running": running > 0 and end == sim.now_ms,
        "longest_pass_at_s": round(start / 1000, 1),
        "peak_mib": round(peak_kib / 1024, 1),
    }


def run_all(sizes: list[int], leak_sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n, leak in [(n, False) for n in sizes] + [(n, True) for n in leak_sizes]:
        args = [sys.executable, "-m", "controller.bench.engine", str(n)] + (
            ["--leak"] if leak else []
        )
        proc = subprocess.run(args, capture_output=True, text=True, check=True)
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return rows


def format_rows(rows: list[dict[str, Any]]) -> list[str]:
    head = f"{'nodes':>6} {'pods':>7}  {'scenario':<22} {'setup s':>8} {'run s':>7} {'CPU s':>7} {'sim s/wall s':>13} {'events':>8} {'peak MiB':>9} {'longest pass s':>15}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['nodes']:>6} {r['pods']:>7}  {r['scenario']:<22} {r['setup_s']:>8} {r['run_s']:>7} "
            f"{r.get('run_cpu_s', '-'):>7} {r['sim_s_per_wall_s']:>13} {r['events']:>8} {r['peak_mib']:>9} {str(r.get('longest_pass_s', '-')) + ('+' if r.get('longest_pass_running') else ''):>15}"
        )
    return lines


if __name__ == "__main__":
    size = int(sys.argv[1])
    print(json.dumps(run_one(size, leak="--leak" in sys.argv)))
