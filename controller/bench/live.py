"""The live row: one big room's ticks (advance + persist + broadcast) in this process."""

from __future__ import annotations

from typing import Any

from .scenarios import ZONES, live_scenario
from .stats import load_average, percentile


def live_bench(
    nodes: int = 5000, ticks: int = 60, speed: float = 10.0, pods_per_node: int = 10
) -> dict[str, Any]:
    """The live path: a room of ``nodes`` nodes at ``speed``; each tick = advance + persist
    + broadcast (through the configured channel layer), one beat (PLAYGROUND_TICK_SECONDS) of
    simulated wall time apart (run back to back: the figure is the tick's cost). Bytes: the
    raw delta the tick produced and what was broadcast after bounded deltas
    (controller/rooms/broadcast.py: a resync notice instead of a delta over the limit, whose
    size is then the lower bound the tick knew it by). By phase (controller/rooms/phases.py):
    wall and CPU ms at p95 and max."""
    import statistics
    import time
    from datetime import timedelta

    from django.conf import settings
    from django.test.utils import override_settings
    from django.utils import timezone

    from ..engine.scenario import documents as scenario_module
    from ..models import Room
    from ..rooms import broadcast, create, phases, tick

    text = live_scenario(nodes, pods_per_node, f"live-bench-{nodes}")
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
    period = float(settings.PLAYGROUND_TICK_SECONDS)
    durations: list[float] = []
    cpu: list[float] = []
    by_phase: dict[str, list[tuple[float, float]]] = {p: [] for p in phases.PHASES}
    raw: list[int] = []
    sent: list[int] = []
    resyncs = 0
    for i in range(1, ticks + 1):
        t, c = time.perf_counter(), time.process_time()
        delta = tick.room_advance(room.pk, start + timedelta(seconds=i * period))
        durations.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        for name, figures in phases.last().items():
            by_phase[name].append(figures)
        if delta is None:
            raw.append(0)
            sent.append(0)
            continue
        message = broadcast.bounded(delta)
        resyncs += message["type"] == "resync"
        # A delta over the limit is not made (tick._persist): its notice says how big it would
        # have been at least.
        raw.append(delta["bytes"] if delta["type"] == "resync" else broadcast.encoded_size(delta))
        sent.append(broadcast.encoded_size(message))
    room.delete()
    return {
        "nodes": nodes,
        "pods": nodes // len(ZONES) * len(ZONES) * pods_per_node,
        "speed": speed,
        "ticks": ticks,
        "beat_s": period,
        "create_s": round(create_s, 2),
        "mean_tick_ms": round(statistics.mean(durations) * 1000, 1),
        "p95_tick_ms": round(percentile(durations, 0.95) * 1000, 1),
        "max_tick_ms": round(max(durations) * 1000, 1),
        "p95_cpu_ms": round(percentile(cpu, 0.95) * 1000, 1),
        "max_cpu_ms": round(max(cpu) * 1000, 1),
        # Each phase's wall and CPU ms at p95 and max (over the ticks, each phase alone).
        "phases": {
            name: {
                "wall_p95": round(percentile([w for w, _ in v], 0.95) * 1000, 1),
                "wall_max": round(max(w for w, _ in v) * 1000, 1),
                "cpu_p95": round(percentile([c for _, c in v], 0.95) * 1000, 1),
                "cpu_max": round(max(c for _, c in v) * 1000, 1),
            }
            for name, v in by_phase.items()
        },
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
        f"{r['beat_s']} s apart "
        f"(created in {r['create_s']} s): tick (advance + persist + broadcast) mean "
        f"{r['mean_tick_ms']} ms, p95 {r['p95_tick_ms']} ms, max {r['max_tick_ms']} ms; bytes "
        f"broadcast per tick mean {r['mean_bytes']}, max {r['max_bytes']} (raw deltas, at "
        f"least: mean "
        f"{r['mean_raw_bytes']}, max {r['max_raw_bytes']}; {r['resync_ticks']} ticks over the "
        f"{r['limit_bytes']} B limit sent as resync notices) [{r['load']}]\n"
        f"  tick CPU p95 {r['p95_cpu_ms']} ms, max {r['max_cpu_ms']} ms; by phase, ms p95/max "
        "wall (CPU): "
        + ", ".join(
            f"{name} {f['wall_p95']}/{f['wall_max']} ({f['cpu_p95']}/{f['cpu_max']})"
            for name, f in r["phases"].items()
        )
    )
