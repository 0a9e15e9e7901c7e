"""The viewers row: websocket viewers through Daphne processes, from an operator's action to
every viewer's screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scenarios import ZONES, live_scenario
from .stack import Stack, check_stack, stack_env
from .stats import load_average, percentile


def viewers_bench(
    viewers: int = 100,
    webs: int = 2,
    actions: int = 20,
    nodes: int = 100,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``viewers`` websocket clients (controller.bench.liveclient, all in this process's event loop)
    spread over ``webs`` Daphne processes, watching one running room of ``nodes`` nodes ticked
    by a real worker and beat; an operator client cordons a different node every 1.5 s,
    ``actions`` times (after one unmeasured action that warms the worker up). For each action and viewer: the wall time from the operator sending
    it to that viewer receiving the delta that carries its Fault event. ``env``: the started
    processes' environment (default: this process's)."""
    import asyncio
    import tempfile
    import time

    from asgiref.sync import async_to_sync

    from ..models import Room
    from ..rooms import create
    from .liveclient import LiveClient, wait_until

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-viewers-"))
    Room.objects.filter(slug__startswith="bench-viewers").delete()
    room = create.room_create(
        "bench-viewers", live_scenario(nodes, 10, "bench-viewers", None), None, 1.0
    )
    node_names = [f"{z[-1]}-{i}" for i in range(1, nodes // len(ZONES) + 1) for z in ZONES]
    # Every viewer comes from this process's one address: no per-address socket cap (#35).
    env = {"PLAYGROUND_MAX_SOCKETS_PER_ADDRESS": "0", **(env or stack_env())}
    stack = Stack(env, logs, webs=webs, workers=1, beat=True)
    servers = stack.webs

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
        with stack:
            each, last, connect_s = async_to_sync(run)()
    finally:
        Room.objects.filter(pk=room.pk).delete()
    return {
        "viewers": viewers,
        "webs": webs,
        "actions": actions,
        "nodes": nodes,
        "connect_s": round(connect_s, 1),
        "p50_ms": round(percentile(each, 0.5) * 1000, 1),
        "p95_ms": round(percentile(each, 0.95) * 1000, 1),
        "max_ms": round(max(each) * 1000, 1),
        "last_p50_ms": round(percentile(last, 0.5) * 1000, 1),
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
