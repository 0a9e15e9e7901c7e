"""Engine benchmarks: clusters of N nodes in 3 zones with 30 pods per node, one simulated
hour with a zone outage at minute 10 (issue: ``manage.py bench``). Each size runs in a fresh
process (``python -m controller.bench SIZE``) so that its peak memory is its own."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from .engine.clock import HOUR, MINUTE
from .engine.config import ClusterConfig
from .engine.scenario import Fault, NodeSpec, Scenario
from .engine.simulation import Simulation

ZONES = ("zone-a", "zone-b", "zone-c")
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
    sim.run(HOUR)
    t2 = time.perf_counter()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "nodes": nodes,
        "pods": len(sim.cluster.pods),
        "scenario": "leaking pod per node" if leak else "zone outage at 10 min",
        "setup_s": round(t1 - t0, 2),
        "run_s": round(t2 - t1, 2),
        "sim_s_per_wall_s": round(HOUR / 1000 / max(t2 - t1, 1e-9), 1),
        "events": sim.timeline.count,
        "peak_mib": round(peak_kib / 1024, 1),
    }


def run_all(sizes: list[int], leak_sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n, leak in [(n, False) for n in sizes] + [(n, True) for n in leak_sizes]:
        args = [sys.executable, "-m", "controller.bench", str(n)] + (["--leak"] if leak else [])
        proc = subprocess.run(args, capture_output=True, text=True, check=True)
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return rows


def format_rows(rows: list[dict[str, Any]]) -> list[str]:
    head = f"{'nodes':>6} {'pods':>7}  {'scenario':<22} {'setup s':>8} {'run s':>7} {'sim s/wall s':>13} {'events':>8} {'peak MiB':>9}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['nodes']:>6} {r['pods']:>7}  {r['scenario']:<22} {r['setup_s']:>8} {r['run_s']:>7} "
            f"{r['sim_s_per_wall_s']:>13} {r['events']:>8} {r['peak_mib']:>9}"
        )
    return lines


if __name__ == "__main__":
    size = int(sys.argv[1])
    print(json.dumps(run_one(size, leak="--leak" in sys.argv)))


def bare_pods(per_zone: int, per_node: int) -> list[dict[str, Any]]:
    """``per_node`` bare pods (100m cpu) bound by nodeName to each of the ``per_zone`` nodes
    of every zone in ZONES (nodes named ``a-1``, ``b-1``...)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{z[-1]}-{i}-pod-{j}", "namespace": "default"},
            "spec": {
                "nodeName": f"{z[-1]}-{i}",
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}],
            },
        }
        for z in ZONES
        for i in range(1, per_zone + 1)
        for j in range(per_node)
    ]


def _live_scenario(nodes: int, pods_per_node: int, name: str, outage_at: str | None = "60s") -> str:
    """``nodes`` nodes in three zones with bare pods bound by nodeName (the live path, not the
    scheduler); zone-a goes dark at ``outage_at`` (None: never). Compact JSON (JSON is
    YAML)."""
    per_zone = max(1, nodes // len(ZONES))
    scenario = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": name},
        "spec": {
            "nodes": [
                {"generate": {"count": per_zone, "namePrefix": f"{z[-1]}-", "zone": z}}
                for z in ZONES
            ],
            "objects": bare_pods(per_zone, pods_per_node),
            "faults": [{"at": outage_at, "type": "ZoneOutage", "zone": "zone-a"}]
            if outage_at
            else [],
        },
    }
    return json.dumps(scenario, separators=(",", ":"))


def _pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def live_bench(
    nodes: int = 5000, ticks: int = 60, speed: float = 10.0, pods_per_node: int = 10
) -> dict[str, Any]:
    """The live path: a room of ``nodes`` nodes at ``speed``; each tick = advance + persist
    + broadcast (through the configured channel layer), one simulated wall second apart (run
    back to back: the figure is the tick's cost). Bytes: the raw delta the tick produced and
    what was broadcast after bounded deltas (controller/rooms/broadcast.py: a resync notice instead
    of a delta over the limit)."""
    import statistics
    import time
    from datetime import timedelta

    from django.conf import settings
    from django.test.utils import override_settings
    from django.utils import timezone

    from .engine.scenario import documents as scenario_module
    from .models import Room
    from .rooms import broadcast, create, tick

    text = _live_scenario(nodes, pods_per_node, f"live-bench-{nodes}")
    t0 = time.perf_counter()
    Room.objects.filter(slug__startswith="live-bench").delete()
    # 10 bare pod manifests per node are ~10 MB at 5,000 nodes (more with --live-pods-per-node):
    # the scenario size limits (PLAYGROUND_MAX_SCENARIO_BYTES, the parser's cap) are raised
    # to fit, for this process's own room only (the row measures ticks, not uploads; the
    # engine stays cached here, so the scenario is not parsed again).
    parser_limit = scenario_module.MAX_SCENARIO_BYTES
    scenario_module.MAX_SCENARIO_BYTES = max(parser_limit, 2 * len(text))
    try:
        with override_settings(
            PLAYGROUND_MAX_SCENARIO_BYTES=max(settings.PLAYGROUND_MAX_SCENARIO_BYTES, 2 * len(text))
        ):
            room = create.room_create("live-bench", text, None, speed)
    finally:
        scenario_module.MAX_SCENARIO_BYTES = parser_limit
    create_s = time.perf_counter() - t0
    start = timezone.now()
    Room.objects.filter(pk=room.pk).update(wall_anchor=start, sim_anchor_ms=0)
    durations: list[float] = []
    raw: list[int] = []
    sent: list[int] = []
    resyncs = 0
    for i in range(1, ticks + 1):
        t = time.perf_counter()
        delta = tick.room_advance(room.pk, start + timedelta(seconds=i))
        durations.append(time.perf_counter() - t)
        if delta is None:
            raw.append(0)
            sent.append(0)
            continue
        message = broadcast.bounded(delta)
        resyncs += message["type"] == "resync"
        raw.append(broadcast.encoded_size(delta))
        sent.append(broadcast.encoded_size(message))
    room.delete()
    return {
        "nodes": nodes,
        "pods": nodes // len(ZONES) * len(ZONES) * pods_per_node,
        "speed": speed,
        "ticks": ticks,
        "create_s": round(create_s, 2),
        "mean_tick_ms": round(statistics.mean(durations) * 1000, 1),
        "p95_tick_ms": round(_pct(durations, 0.95) * 1000, 1),
        "max_tick_ms": round(max(durations) * 1000, 1),
        "mean_bytes": int(statistics.mean(sent)),
        "max_bytes": max(sent),
        "mean_raw_bytes": int(statistics.mean(raw)),
        "max_raw_bytes": max(raw),
        "resync_ticks": resyncs,
        "limit_bytes": broadcast.max_bytes(),
        "load": load_average(),
    }


def format_live(r: dict[str, Any]) -> str:
    return (
        f"live room: {r['nodes']} nodes / {r['pods']} pods at {r['speed']}x, {r['ticks']} ticks "
        f"(created in {r['create_s']} s): tick (advance + persist + broadcast) mean "
        f"{r['mean_tick_ms']} ms, p95 {r['p95_tick_ms']} ms, max {r['max_tick_ms']} ms; bytes "
        f"broadcast per tick mean {r['mean_bytes']}, max {r['max_bytes']} (raw deltas: mean "
        f"{r['mean_raw_bytes']}, max {r['max_raw_bytes']}; {r['resync_ticks']} ticks over the "
        f"{r['limit_bytes']} B limit sent as resync notices) [{r['load']}]"
    )


# -- rows with real processes: Celery workers and beat, Daphne --------------------------------
def check_stack() -> None:
    """The process rows need Redis (REDIS_URL) and no other worker on it (its ticks would
    be counted as ours); raises RuntimeError naming what is wrong."""
    from django.conf import settings
    from redis import Redis
    from redis.exceptions import RedisError

    from . import affinity

    try:
        client = Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        client.ping()
    except RedisError as exc:
        raise RuntimeError(
            f"Redis at REDIS_URL={settings.REDIS_URL} does not answer ({exc}); start one "
            "(make run does)"
        ) from None
    others = affinity.live_workers(client)
    if others:
        raise RuntimeError(
            f"other Celery workers are running on REDIS_URL={settings.REDIS_URL} "
            f"({', '.join(others)}): stop them (or point REDIS_URL at another Redis) so that "
            "only the benchmark's workers tick its rooms"
        )


def _stack_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    return env


def _forget_workers(workers: list[Any]) -> None:
    """Drop the heartbeats of our killed workers (SIGKILL: no goodbye), so that the next row
    does not take them for someone else's for WORKER_TTL_S."""
    from . import affinity
    from .tasks import redis_client

    client = redis_client()
    prefixes = tuple(f"{w.name}@" for w in workers if w.name)
    names = [n.decode() for n in client.zrange(affinity.WORKERS_KEY, 0, -1)]
    gone = [n for n in names if prefixes and n.startswith(prefixes)]
    if gone:
        client.zrem(affinity.WORKERS_KEY, *gone)


def _wait_workers(count: int, timeout: float = 30.0) -> list[str]:
    import time

    from . import affinity
    from .tasks import redis_client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = affinity.live_workers(redis_client())
        if len(live) >= count:
            return live
        time.sleep(0.2)
    raise RuntimeError(f"{count} workers did not announce themselves within {timeout} s")


def rooms_bench(
    rooms: int = 50,
    nodes: int = 100,
    workers: int = 2,
    seconds: float = 60.0,
    speed: float = 10.0,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``rooms`` running rooms of ``nodes`` nodes (10 pods each) ticked by ``workers`` real
    Celery worker processes and one beat, for ``seconds``.

    Ticks on time: every beat ticks every room to the beat's wall instant W, so a room's
    clock tells which W it was advanced to (wall_anchor + (sim_ms - sim_anchor_ms) / speed).
    Every 0.2 s the bench reads every room's clock; the beats are the instants seen; a
    (beat, room) pair is on time when that room was seen at that beat's instant (advanced to
    it before the next beat moved it on), out of (beats seen, or the beats expected in the
    window when more) x rooms. Also the lag behind "now" (p50, p95, max).
    ``env``: the started processes' environment (default: this process's). CPU: user + system seconds of the worker
    processes over the run (/proc), per room per minute; beat's separately."""
    import tempfile
    import time

    from django.conf import settings
    from django.utils import timezone

    from .models import Room
    from .procs import Beat, CeleryWorker, cpu_seconds
    from .rooms import controls, create

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-rooms-"))
    period = float(settings.PLAYGROUND_TICK_SECONDS)
    Room.objects.filter(slug__startswith="bench-rooms").delete()
    text = _live_scenario(nodes, 10, "bench-rooms", outage_at="30s")
    t0 = time.perf_counter()
    ids = []
    for _ in range(rooms):
        room = create.room_create("bench-rooms", text, None, speed)
        controls.room_control(room.pk, "pause", None, "bench")
        ids.append(room.pk)
    create_s = time.perf_counter() - t0
    # Nobody watches these rooms: idle pausing (PLAYGROUND_IDLE_PAUSE_SECONDS) is off here.
    env = {**(env or _stack_env()), "PLAYGROUND_IDLE_PAUSE_SECONDS": "0"}
    procs = [CeleryWorker(env, logs / f"worker{i}.log") for i in range(workers)]
    beat = Beat(env, logs / "beat.log")
    try:
        for p in procs:
            p.start()
        _wait_workers(workers)
        beat.start()
        for pk in ids:
            controls.room_control(pk, "resume", None, "bench")
        # Warm-up: every room's engine built on its owner and the room within two beats of
        # "now" (at most 60 s), then measure.
        warm0 = time.perf_counter()
        while time.perf_counter() - warm0 < 60:
            reads = _clock_reads(ids)
            if all(w is not None and lag <= 2 * period for _pk, lag, w in reads):
                break
            time.sleep(0.2)
        warmup_s = time.perf_counter() - warm0
        cpu0 = [cpu_seconds(p.pid) for p in procs if p.pid]
        beat_cpu0 = cpu_seconds(beat.pid) if beat.pid else 0.0
        lags: list[float] = []
        reached: dict[int, set[float]] = {pk: set() for pk in ids}
        wall0 = time.perf_counter()
        start = timezone.now().timestamp()
        while time.perf_counter() - wall0 < seconds:
            for pk, lag, w in _clock_reads(ids):
                lags.append(lag)
                if w is not None:
                    reached[pk].add(w)
            time.sleep(0.2)
        run_s = time.perf_counter() - wall0
        end = timezone.now().timestamp()
        cpu1 = [cpu_seconds(p.pid) for p in procs if p.pid]
        beat_cpu = (cpu_seconds(beat.pid) if beat.pid else 0.0) - beat_cpu0
    finally:
        beat.kill()
        for p in procs:
            p.kill()
        _forget_workers(procs)
    stats = {pk: Room.objects.get(pk=pk).sim_ms for pk in ids}
    Room.objects.filter(pk__in=ids).delete()
    worker_cpu = sum(cpu1) - sum(cpu0)
    # The beats: every instant some room was advanced to (each beat ticks every room to
    # its one instant), within the window, less the last two periods (ticks under way).
    beats = _cluster(
        sorted(w for ws in reached.values() for w in ws if start <= w <= end - 2 * period)
    )
    pairs = sum(any(abs(w - b) < 0.05 for w in reached[pk]) for b in beats for pk in ids)
    expected = int((end - start - 2 * period) / period)
    return {
        "rooms": rooms,
        "nodes": nodes,
        "workers": workers,
        "seconds": round(run_s, 1),
        "speed": speed,
        "create_s": round(create_s, 1),
        "beats": len(beats),
        "beats_expected": expected,
        # A beat that no room reached is not seen at all: count the expected beats then.
        "on_time": round(pairs / max(1, max(len(beats), expected) * len(ids)), 3),
        "warmup_s": round(warmup_s, 1),
        "lag_p50_s": round(_pct(lags, 0.5), 2),
        "lag_p95_s": round(_pct(lags, 0.95), 2),
        "lag_max_s": round(max(lags), 2),
        "cpu_s_per_room_min": round(worker_cpu / rooms / (run_s / 60), 2),
        "worker_cpu_s": round(worker_cpu, 1),
        "beat_cpu_s": round(beat_cpu, 1),
        "min_sim_s": round(min(stats.values()) / 1000, 1),
        "logs": str(logs),
        "load": load_average(),
    }


def _clock_reads(ids: list[int]) -> list[tuple[int, float, float | None]]:
    """For every room: its lag behind "now" (wall seconds) and the wall instant (epoch s,
    rounded to 10 ms) that its clock was last advanced to (None before its first tick)."""
    from django.utils import timezone

    from .models import Room

    now = timezone.now()
    out = []
    for r in Room.objects.filter(pk__in=ids).values(
        "pk", "sim_ms", "sim_anchor_ms", "wall_anchor", "speed"
    ):
        per_s = r["speed"] * 1000
        elapsed = (now - r["wall_anchor"]).total_seconds()
        lag = max(0.0, (r["sim_anchor_ms"] + elapsed * per_s - r["sim_ms"]) / per_s)
        w = None
        if r["sim_ms"] > r["sim_anchor_ms"]:
            w = round(r["wall_anchor"].timestamp() + (r["sim_ms"] - r["sim_anchor_ms"]) / per_s, 2)
        out.append((r["pk"], lag, w))
    return out


def _cluster(instants: list[float], within: float = 0.05) -> list[float]:
    """Sorted instants merged when closer than ``within`` (one beat seen by many rooms)."""
    out: list[float] = []
    for w in instants:
        if not out or w - out[-1] >= within:
            out.append(w)
    return out


def format_rooms(r: dict[str, Any]) -> str:
    return (
        f"{r['rooms']} rooms of {r['nodes']} nodes at {r['speed']}x on {r['workers']} workers "
        f"+ beat, {r['seconds']} s (created in {r['create_s']} s, warm in {r['warmup_s']} s): "
        f"ticks on time {r['on_time'] * 100:.1f}% of {r['beats']} beats x {r['rooms']} rooms "
        f"({r['beats_expected']} beats expected) (lag behind now p50 {r['lag_p50_s']} s, p95 "
        f"{r['lag_p95_s']} s, max {r['lag_max_s']} s); CPU {r['cpu_s_per_room_min']} s per "
        f"room per minute (workers {r['worker_cpu_s']} s, beat {r['beat_cpu_s']} s) "
        f"[{r['load']}]"
    )


def viewers_bench(
    viewers: int = 100,
    webs: int = 2,
    actions: int = 20,
    nodes: int = 100,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``viewers`` websocket clients (controller.liveclient, all in this process's event loop)
    spread over ``webs`` Daphne processes, watching one running room of ``nodes`` nodes ticked
    by a real worker and beat; an operator client cordons a different node every 1.5 s,
    ``actions`` times (after one unmeasured action that warms the worker up). For each action and viewer: the wall time from the operator sending
    it to that viewer receiving the delta that carries its Fault event. ``env``: the started
    processes' environment (default: this process's)."""
    import asyncio
    import tempfile
    import time

    from asgiref.sync import async_to_sync

    from .liveclient import LiveClient, wait_until
    from .models import Room
    from .procs import Beat, CeleryWorker, Daphne
    from .rooms import create

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-viewers-"))
    Room.objects.filter(slug__startswith="bench-viewers").delete()
    room = create.room_create(
        "bench-viewers", _live_scenario(nodes, 10, "bench-viewers", None), None, 1.0
    )
    node_names = [f"{z[-1]}-{i}" for i in range(1, nodes // len(ZONES) + 1) for z in ZONES]
    env = env or _stack_env()
    servers = [Daphne(env, logs / f"daphne{i}.log") for i in range(webs)]
    worker = CeleryWorker(env, logs / "worker.log")
    beat = Beat(env, logs / "beat.log")

    async def run() -> tuple[list[float], list[float], float]:
        clients = [
            LiveClient("127.0.0.1", servers[i % webs].port, room.slug, name=f"v{i}", keep=False)
            for i in range(viewers)
        ]
        op = LiveClient(
            "127.0.0.1", servers[0].port, room.slug, room.operator_token, "op", keep=False
        )
        t0 = time.monotonic()
        for c in [*clients, op]:
            c.start()
        await wait_until(
            lambda: all(c.snapshots for c in [*clients, op]), 60, "every viewer's snapshot"
        )
        connect_s = time.monotonic() - t0
        each: list[float] = []
        last: list[float] = []
        try:
            for i in range(actions + 1):  # the first warms up (engine built on its owner)
                node = node_names[i % len(node_names)]

                def carries(m: dict[str, Any], node: str = node) -> bool:
                    return m.get("type") in ("delta", "reset") and any(
                        e.get("type") == "Fault"
                        and e.get("fault") == "Cordon"
                        and e.get("node") == node
                        for e in m.get("events") or []
                    )

                futures = [c.expect(carries) for c in clients]
                sent = time.monotonic()
                op.send({"type": "action", "action": {"type": "Cordon", "node": node}})
                done = await asyncio.wait_for(asyncio.gather(*futures), 30)
                times = [r.wall - sent for r in done]
                if i:
                    each.extend(times)
                    last.append(max(times))
                await asyncio.sleep(1.5)
        finally:
            for c in [*clients, op]:
                await c.close()
        return each, last, connect_s

    try:
        for s in servers:
            s.start()
        worker.start()
        _wait_workers(1)
        beat.start()
        each, last, connect_s = async_to_sync(run)()
    finally:
        beat.kill()
        worker.kill()
        _forget_workers([worker])
        for s in servers:
            s.kill()
        Room.objects.filter(pk=room.pk).delete()
    return {
        "viewers": viewers,
        "webs": webs,
        "actions": actions,
        "nodes": nodes,
        "connect_s": round(connect_s, 1),
        "p50_ms": round(_pct(each, 0.5) * 1000, 1),
        "p95_ms": round(_pct(each, 0.95) * 1000, 1),
        "max_ms": round(max(each) * 1000, 1),
        "last_p50_ms": round(_pct(last, 0.5) * 1000, 1),
        "last_max_ms": round(max(last) * 1000, 1),
        "logs": str(logs),
        "load": load_average(),
    }


def format_viewers(r: dict[str, Any]) -> str:
    return (
        f"{r['viewers']} viewers on one {r['nodes']}-node room through {r['webs']} Daphne "
        f"processes (all connected in {r['connect_s']} s), {r['actions']} operator actions: "
        f"action to a viewer's screen p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, max "
        f"{r['max_ms']} ms; to the last viewer p50 {r['last_p50_ms']} ms, max "
        f"{r['last_max_ms']} ms [{r['load']}]"
    )
