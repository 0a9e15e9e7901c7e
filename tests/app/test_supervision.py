"""Issue #24, item 7: under `make run` (scripts/run.sh: supervisord) a kill -9 of the Celery
worker, of the heavy worker (issue #35), of beat and of Daphne each comes back within 5 s, the other processes untouched, and
no operator action is lost (each applied exactly once). The real script, on the test's Redis and
database, a free port and its own RUN_DIR."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from controller import timeline_store
from controller.bench.procs import free_port
from controller.models import Action
from controller.rooms import actions, create

REPO = Path(__file__).resolve().parents[2]
BACK_WITHIN_S = 5.0

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: supervised}
spec:
  kubernetesVersion: "1.34"
  nodes: [{name: n-1}, {name: n-2}]
"""


def _pids(conf: Path) -> dict[str, int]:
    """program -> pid of the RUNNING ones, asked over supervisord's socket (XML-RPC, as
    supervisorctl does, without starting a process per question)."""
    import xmlrpc.client

    from supervisor.xmlrpc import SupervisorTransport

    sock = conf.parent / "supervisor.sock"
    if not sock.exists():
        return {}
    proxy = xmlrpc.client.ServerProxy(
        "http://127.0.0.1", transport=SupervisorTransport(None, None, f"unix://{sock}")
    )
    try:
        infos = proxy.supervisor.getAllProcessInfo()
    except (OSError, xmlrpc.client.Fault):
        return {}
    return {i["name"]: i["pid"] for i in infos if i["statename"] == "RUNNING"}


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _wait(what: str, timeout: float, ok) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if ok():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


def test_kill_9_of_worker_beat_and_daphne_each_come_back_alone_and_lose_no_action(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    run_dir = tmp_path / "run"
    env = {**stack_env, "WEB_PORT": str(port), "RUN_DIR": str(run_dir), "LOAD_DEMO": "0"}
    log = (tmp_path / "run.log").open("wb")
    script = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    conf = run_dir / "supervisord.conf"
    try:
        _wait("make run healthy", 120, lambda: _healthy(port))
        _wait("four processes", 30, lambda: len(_pids(conf)) == 4)
        room = create.room_create("supervised", SCENARIO, None, 10.0)
        submitted: list[int] = []
        for program in ("worker-1", "heavy-1", "beat", "web-0"):
            before = _pids(conf)
            assert set(before) == {"web-0", "worker-1", "heavy-1", "beat"}, before
            node = "n-1" if len(submitted) % 2 == 0 else "n-2"
            submitted.append(actions.action_submit(room, {"type": "Cordon", "node": node}, "t").pk)
            os.kill(before[program], signal.SIGKILL)
            took = _wait(
                f"{program} restarted",
                BACK_WITHIN_S,
                lambda p=program, b=before: _pids(conf).get(p, b[p]) != b[p],
            )
            after = _pids(conf)
            others = {k: v for k, v in before.items() if k != program}
            assert {k: after.get(k) for k in others} == others, (program, before, after)
            print(f"{program}: back after {took:.1f} s, the others untouched")
            submitted.append(
                actions.action_submit(room, {"type": "Uncordon", "node": node}, "t").pk
            )
        _wait("healthy again", 60, lambda: _healthy(port))
        # Every action applied exactly once, by the restarted processes.
        _wait(
            "every action applied",
            60,
            lambda: Action.objects.filter(pk__in=submitted, status=Action.APPLIED).count()
            == len(submitted),
        )
        faults = [row for row in timeline_store.after(room) if row[2] == "Fault"]
        assert len(faults) == len(submitted), faults
    finally:
        os.killpg(script.pid, signal.SIGINT)
        try:
            script.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait(timeout=10)
        log.close()
    assert not _pids(conf), "supervisord left processes running"
