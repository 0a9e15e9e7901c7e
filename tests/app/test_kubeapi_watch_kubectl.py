"""``kubectl get nodes -w`` prints what a real API server makes it print for a scripted fault
(issue #36): a node's row again only when its Node changed (kube-apiserver sends MODIFIED
on a write to the object only). A kubelet stopping changes nothing of the Node; then the
node lifecycle controller writes it at most three times (Ready Unknown; the unreachable
NoSchedule taint; the unreachable NoExecute taint), which the room's ticks may gather into
fewer. Real kubectl binaries (every version found) print the Table form; the newest also
prints the events as JSON (``-o json --output-watch-events``), against the real stack.
Checked by content, never by timing."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

from controller.bench.procs import Daphne
from controller.models import Room
from controller.rooms import actions, create
from tests.app.kubectl_clients import kubectls
from tests.app.test_kubeapi_kubectl import SCENARIO, _kubeconfig, _ok, _wait, web  # noqa: F401

KUBECTLS, MISSING = kubectls()
NODES = ("cp-1", "a-1", "a-2", "a-3")
STAMPS = ("Time", "Timestamp", "timeAdded")


class Lines:
    """A kubectl watch running; its output collected as it comes."""

    def __init__(self, binary: str, cfg: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "get", "nodes", "-w", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={"KUBECONFIG": str(cfg), "HOME": str(cfg.parent)},
        )
        self.chunks: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.chunks.append(line)

    def text(self) -> str:
        return "".join(self.chunks)

    def rows(self, name: str) -> list[str]:
        return [line for line in self.text().splitlines() if re.match(rf"^{name}\s", line)]

    def events(self) -> list[dict[str, Any]]:
        """The watch events kubectl printed as JSON (one document after another)."""
        text, out, decoder, at = self.text(), [], json.JSONDecoder(), 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at >= len(text):
                return out
            try:
                event, at = decoder.raw_decode(text, at)
            except ValueError:
                return out  # a document still being written
            out.append(event)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def _content(obj: Any) -> Any:
    """The Node without what moves as it is read (resourceVersion, the wall-clock stamps)."""
    if isinstance(obj, dict):
        return {
            k: _content(v)
            for k, v in obj.items()
            if k != "resourceVersion" and not k.endswith(STAMPS)
        }
    if isinstance(obj, list):
        return [_content(v) for v in obj]
    return obj


def _of(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in events if e["object"]["metadata"]["name"] == name]


def test_get_nodes_w_prints_a_node_again_only_when_it_changed(
    web: Daphne,  # noqa: F811
    celery_worker_proc,
    celery_beat_proc,
    tmp_path: Path,
) -> None:
    assert KUBECTLS, f"no kubectl found (missing: {', '.join(MISSING)})"
    room: Room = create.room_create("watch", SCENARIO, None, 10.0)
    cfg = _kubeconfig(web, room, tmp_path / "op.kubeconfig", True)
    newest = KUBECTLS[-1][1]
    _wait("the nodes listed", lambda: "a-3" in _ok(newest, cfg, "get", "nodes"))
    tables = {name: Lines(binary, cfg) for name, binary in KUBECTLS}
    as_json = Lines(newest, cfg, "-o", "json", "--output-watch-events")
    watches = [*tables.values(), as_json]
    try:
        _wait(
            "every watch's list",
            lambda: all(w.rows("a-3") for w in tables.values())
            and len(as_json.events()) >= len(NODES),
        )
        actions.action_submit(room, {"type": "StopKubelet", "node": "a-2"}, "test")

        def tainted() -> bool:
            last = _of(as_json.events(), "a-2")[-1]["object"]
            taints = last["spec"].get("taints") or []
            return any(
                t["key"] == "node.kubernetes.io/unreachable" and t["effect"] == "NoExecute"
                for t in taints
            )

        _wait("a-2 tainted NoExecute (JSON watch)", tainted, timeout=120)
        events = as_json.events()
        _wait(
            "every Table watch at the same events",
            lambda: all(
                len(w.rows(n)) == len(_of(events, n)) for w in tables.values() for n in NODES
            ),
        )
    finally:
        for w in watches:
            w.stop()
    events = as_json.events()
    for name in NODES:
        seen = _of(events, name)
        assert seen[0]["type"] == "ADDED", (name, seen[0]["type"])
        versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen]
        assert versions == sorted(set(versions)), (name, versions)
        for before, after in zip(seen, seen[1:], strict=False):
            assert after["type"] == "MODIFIED", (name, after["type"])
            if name == "a-2":  # its kubelet is stopped: no heartbeat moves a stamp
                assert _content(after["object"]) != _content(before["object"]), (
                    f"{name}: a MODIFIED event with the same Node"
                )
    # a-2: its listed row, then one per write of the node lifecycle controller (1 to 3).
    a2 = _of(events, "a-2")
    assert 2 <= len(a2) <= 4, [e["object"]["spec"] for e in a2]
    ready = [c["status"] for c in a2[-1]["object"]["status"]["conditions"] if c["type"] == "Ready"]
    assert ready == ["Unknown"]
    for name, w in tables.items():
        rows = w.rows("a-2")
        assert len(rows) == len(a2), (name, w.text())
        assert re.match(r"^a-2\s+Ready\s", rows[0]) and re.match(r"^a-2\s+NotReady\s", rows[-1])
        assert w.text().count("NAME") == 1, (name, w.text())
    assert (
        not MISSING or print(f"kubectl versions not found (skipped): {', '.join(MISSING)}") is None
    )
