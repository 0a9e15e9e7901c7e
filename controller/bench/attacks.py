"""The attacks of issue #35, each as the issue did it from one anonymous address (ATTACKER),
for the abuse suite (bench/abuse.py), which judges each one's window. Scaled where the issue's
size does not fit a 2-core machine in a bounded test, keeping its shape (said in each
``title`` and docstring):

1. a ~1 KB scenario of ~5,000 nodes and a 145,000-replica Deployment, POSTed and left running
   (30 s window);
2. a 600 MiB upload: the headers announce 600 MiB, the body is streamed only until the
   server answers (at most 128 MiB); 2b: the same without a length (chunked, at most 64 MiB);
3. four Import Previews at once of a 16.6 MiB kubectl List (1,500 nodes, 3,000 pods);
4. that List imported as one's own room, then four What-ifs on it at once;
5. a viewer that does not read asking for the inline snapshot of a ~0.5 MB room 15 times a
   second (20 s: 300 requests; the issue's 600 + 450);
6. rooms paused one after the other to hold more than the running-room limit, up to 27, each
   of 3,000 objects (150 nodes, 2,850 replicas: 27 rooms of the size of 1 would need
   ~20 GB), then a step of a paused one;
7. a node with 12,500 NoExecute taints (464 KB List) previewed and imported in the request;
   7b: a node with 10,000 NoSchedule taints imported and left running;
8. DeleteNode a-2 in the single-node-failure room, whose fault at 62 s names a-2;
9. a binary frame, and an unknown websocket path, through Daphne (close codes);
10. timeline.csv cells; 200 viewers of one room from one address (presence, connection
    cap); a What-if's result read through another room and an unknown id.

Every attack returns an ``Outcome``: what happened (``outcome``), what the server said
(``said``: its message), figures, and ``check``: what its own check found wrong (empty: it
holds). A refusal must carry a message and no answer to the attacker may be a 5xx."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from .arena import ATTACKER, Arena
from .procs import bytes_read
from .visitor import Answer, RawSocket, stream_post

MiB = 1024 * 1024
VICTIM_NODES = 75  # a ~0.56 MB snapshot with 10 pods each (attack 5; the 558 KB)
VICTIM_PODS_PER_NODE = 10
SINGLE = "01-single-node-failure"

ONE_KB_SCENARIO = """apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: one-kilobyte}
spec:
  nodes:
    - generate: {count: 1666, namePrefix: a-, zone: zone-a}
    - generate: {count: 1666, namePrefix: b-, zone: zone-b}
    - generate: {count: 1666, namePrefix: c-, zone: zone-c}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 145000
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: web, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
  faults:
    - {at: 30s, type: ZoneOutage, zone: zone-a}
"""


def scenario(nodes: int, replicas: int) -> str:
    """``nodes`` nodes over three zones and one Deployment of ``replicas`` (10m CPU each),
    zone-a dark at 30 s: attack 1's shape, at any size."""
    per_zone = nodes // 3
    gens = "\n".join(
        f"    - generate: {{count: {per_zone}, namePrefix: {z}-, zone: zone-{z}}}" for z in "abc"
    )
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: neighbour-{nodes}}}
spec:
  nodes:
{gens}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web, namespace: default}}
      spec:
        replicas: {replicas}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            containers: [{{name: web, resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}}}]
  faults:
    - {{at: 30s, type: ZoneOutage, zone: zone-a}}
"""


@dataclass
class Outcome:
    outcome: str
    said: str
    figures: dict[str, Any] = field(default_factory=dict)
    check: list[str] = field(default_factory=list)


@dataclass
class Attack:
    number: str
    title: str
    run: Callable[[Arena], Outcome]


# -- payloads made before the clock starts (bench/abuse.py) --------------------------------
def _big_list() -> bytes:
    from .kubectl_list import big_kubectl_list

    return big_kubectl_list(1500, 2, "json").encode()


def _tainted_list(taints: int, effect: str) -> bytes:
    from .kubectl_list import _node

    nodes = [_node(i) for i in range(3)]
    # 37 bytes a taint, as the (12,500 in 464 KB)
    nodes[0]["spec"]["taints"] = [{"key": f"t{i}", "effect": effect} for i in range(taints)]
    doc = {"apiVersion": "v1", "kind": "List", "items": nodes, "metadata": {}}
    return json.dumps(doc, separators=(",", ":")).encode()


PAYLOADS: dict[str, Callable[[], Any]] = {
    "big_list": _big_list,
    "noexecute_taints": lambda: _tainted_list(12_500, "NoExecute"),
    "noschedule_taints": lambda: _tainted_list(10_000, "NoSchedule"),
}


# -- helpers ----------------------------------------------------------------------------------
def _refused_or_room(answer: Answer) -> tuple[str, str, str]:
    """("accepted", room slug, token) for a redirect to a room, else ("refused" or "5xx",
    "", the message shown)."""
    if answer.status in (301, 302, 303) and "/rooms/" in answer.location:
        url = urlparse(answer.location)
        slug = url.path.strip("/").split("/")[1]
        token = parse_qs(url.query).get("token", [""])[0]
        return "accepted", slug, token
    kind = "5xx" if answer.status >= 500 else "refused"
    return kind, "", answer.error()


def _create(arena: Arena, visitor: Any, **form: Any) -> tuple[str, str, str, Answer]:
    fields = {"name": "", "speed": "10", "scenario": "", **form.pop("fields", {})}
    answer = visitor.post("/", fields, form.pop("files", None))
    kind, slug, said = _refused_or_room(answer)
    return kind, slug, said, answer


def _checks_for(kind: str, said: str) -> list[str]:
    if kind == "5xx":
        return [f"a 5xx to the attacker: {said[:80]}"]
    if kind == "refused" and not said.strip():
        return ["refused without a message"]
    return []


def _operate(arena: Arena, slug: str, token: str, message: dict[str, Any]) -> dict[str, Any]:
    """An operator's websocket message, and the reply (its types and errors)."""
    got: dict[str, Any] = {"types": {}, "errors": [], "close": None}
    try:
        ws = RawSocket(arena.port, f"/ws/rooms/{slug}/?token={token}&name=abuser", ATTACKER)
    except OSError as exc:
        got["errors"].append(f"websocket: {type(exc).__name__}: {exc}")
        return got
    try:
        if not ws.accepted:
            got["errors"].append(ws.status_line)
            return got
        ws.read_frames(1.0, until_close=False)  # the snapshot
        ws.send_json(message)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            r = ws.read_frames(1.0, until_close=False)
            for k, v in r["types"].items():
                got["types"][k] = got["types"].get(k, 0) + v
            got["errors"] += r["errors"]
            got["close"] = r["close"]
            if "ack" in got["types"] or got["errors"] or r["close"]:
                break
        return got
    except OSError as exc:
        got["errors"].append(f"websocket: {type(exc).__name__}: {exc}")
        return got
    finally:
        ws.close()


def _room_phrase(arena: Arena, slug: str, token: str) -> str:
    """What the attacker's room page says about its speed or build (the first line that
    mentions running at, too big, building or the build's error)."""
    try:
        page = arena.visitor(30).get(f"/rooms/{slug}/?token={token}")
        build = arena.visitor(30).get(f"/rooms/{slug}/build.json")
    except OSError as exc:
        return f"(room page: {exc})"
    from .visitor import _plain

    text = _plain(page.text())
    found = re.search(r"[^.]*(running at|too big|cannot keep up)[^.]*", text)
    state = build.text()[:160] if build.status == 200 else f"build.json {build.status}"
    return (found.group(0).strip()[:160] + " | " if found else "") + state


# -- 1 ------------------------------------------------------------------------------------------
def one_kilobyte(arena: Arena) -> Outcome:
    v = arena.visitor()
    t0 = time.monotonic()
    kind, slug, said, answer = _create(
        arena, v, files={"upload": ("one-kb.yaml", ONE_KB_SCENARIO.encode())}
    )
    figures = {"bytes": len(ONE_KB_SCENARIO), "answered_s": round(answer.seconds, 2)}
    if kind == "accepted":
        arena.hold(t0 + arena.seconds(30))
        said = _room_phrase(arena, slug, _token(answer))
    return Outcome(kind, said, figures, _checks_for(kind, said))


def _token(answer: Answer) -> str:
    return parse_qs(urlparse(answer.location).query).get("token", [""])[0]


# -- 2 ------------------------------------------------------------------------------------------
def _streamed(arena: Arena, announced: int | None, cap: int) -> Outcome:
    from django.conf import settings

    limit = int(settings.PLAYGROUND_MAX_SCENARIO_BYTES)
    rss0 = arena.monitor.daphne_rss()
    daphne = arena.stack.webs[0].pid
    read0 = bytes_read(daphne) if daphne else 0
    r = stream_post(
        arena.visitor(),
        "/",
        announced,
        cap,
        stop=lambda: arena.daphne_growth(rss0) > 200,
    )
    # What Daphne took off its sockets meanwhile (the prober's small requests included): the
    # client's count also holds what sat in the kernel's buffers, never read by the server.
    read = (bytes_read(daphne) - read0) if daphne else r["sent"]
    figures = {
        "announced_mib": round(announced / MiB) if announced else "chunked",
        "streamed_mib": round(r["sent"] / MiB, 1),
        "daphne_read_mib": round(read / MiB, 1),
        "answer": r["status"],
        "answered_s": round(r["seconds"], 1),
    }
    check = []
    if r["status"] is None:
        check.append(f"no answer after {r['sent'] / MiB:.0f} MiB streamed")
    elif r["status"] >= 500:
        check.append(f"answered {r['status']}")
    elif r["status"] not in (400, 413):
        check.append(f"answered {r['status']}, not a refusal")
    # From the headers: before the body is read (a length); at the limit (chunked).
    allowed = 2 * MiB if announced is not None else limit + 2 * MiB
    if r["status"] is not None and read > allowed:
        check.append(f"answered only after Daphne read {read / MiB:.0f} MiB of the body")
    if r["status"] is not None and not r["message"].strip():
        check.append("refused without a message")
    kind = "refused" if r["status"] in (400, 413) else f"answer {r['status']}"
    return Outcome(kind, r["message"], figures, check)


def upload_600(arena: Arena) -> Outcome:
    return _streamed(arena, 600 * MiB, 128 * MiB)


def upload_chunked(arena: Arena) -> Outcome:
    return _streamed(arena, None, 64 * MiB)


# -- 3, 4 -------------------------------------------------------------------------------------
def _import_post(arena: Arena, data: bytes, preview: bool) -> Answer:
    fields = {"imp-name": "", "imp-speed": "10"}
    if preview:
        fields["preview"] = "1"
    return arena.visitor(180).post("/", fields, {"imp-upload": ("cluster.json", data)})


def _in_threads(fns: list[Callable[[], Any]]) -> list[Any]:
    out: list[Any] = [None] * len(fns)

    def run(i: int) -> None:
        try:
            out[i] = fns[i]()
        except Exception as exc:  # reported as the answer
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return out


def _summary(answers: list[Any]) -> tuple[list[str], list[str]]:
    """Each answer's kind and what it said ("" for an accepted one), in the answers' order."""
    kinds, saids = [], []
    for a in answers:
        if isinstance(a, Exception) or a is None:
            kinds.append("no answer")
            saids.append(f"{type(a).__name__}: {a}")
        elif a.status in (301, 302, 303):
            kinds.append("accepted")
            saids.append("")
        else:
            kinds.append("5xx" if a.status >= 500 else "refused")
            saids.append(a.error())
    return kinds, saids


def four_previews(arena: Arena) -> Outcome:
    from ..locks import redis_client

    data = arena.cache["big_list"]
    t0 = time.monotonic()
    mem0 = redis_client().info("memory")["used_memory"]
    answers = _in_threads([lambda: _import_post(arena, data, True)] * 4)
    kinds, saids = _summary(answers)
    arena.hold(t0 + arena.seconds(30))
    states = []
    for a in answers:
        if isinstance(a, Answer) and "/import/preview/" in a.location:
            pid = a.location.rstrip("/").split("/")[-1]
            r = arena.visitor(30).get(f"/import/preview/{pid}.json")
            states.append(r.text()[:40] if r.status == 200 else str(r.status))
    mem1 = redis_client().info("memory")["used_memory"]
    figures = {
        "list_mib": round(len(data) / MiB, 1),
        "answers": "/".join(kinds),
        "previews": "; ".join(states) or "-",
        "redis_plus_mib": round((mem1 - mem0) / MiB, 1),
    }
    check = [c for k, s in zip(kinds, saids, strict=True) for c in _checks_for(k, s)]
    check += ["no answer to a POST"] if "no answer" in kinds else []
    return Outcome(
        _kinds(kinds), " | ".join(dict.fromkeys(filter(None, saids)))[:300], figures, check
    )


def _kinds(kinds: list[str]) -> str:
    return ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))


def four_what_ifs(arena: Arena) -> Outcome:
    data = arena.cache["big_list"]
    t0 = time.monotonic()
    answer = _import_post(arena, data, False)
    kind, slug, said = _refused_or_room(answer)
    figures: dict[str, Any] = {"import": kind, "import_s": round(answer.seconds, 1)}
    if kind != "accepted":
        return Outcome(f"import {kind}", said, figures, _checks_for(kind, said))
    token = _token(answer)
    v = arena.visitor(60)
    built = _wait_built(arena, slug, t0 + arena.seconds(45))
    figures["built_s"] = round(time.monotonic() - t0, 1) if built else "not built"
    t1 = time.monotonic()
    fields = {"token": token, "zone": "eu-west-1a", "at": "60"}
    answers = _in_threads([lambda: v.post(f"/rooms/{slug}/whatif", fields)] * 4)
    kinds = []
    saids = []
    ids = []
    for a in answers:
        if isinstance(a, Answer) and a.status == 200:
            kinds.append("accepted")
            saids.append("")
            ids.append(json.loads(a.body).get("id"))
        elif isinstance(a, Answer):
            kinds.append("5xx" if a.status >= 500 else "refused")
            saids.append(a.error())
        else:
            kinds.append("no answer")
            saids.append(str(a))
    arena.hold(t1 + arena.seconds(30))
    done = 0
    for i in ids:
        r = v.get(f"/rooms/{slug}/whatif/{i}")
        done += r.status == 200 and b'"done"' in r.body
    figures.update({"what_ifs": "/".join(kinds), "done_in_window": done})
    check = [c for k, s in zip(kinds, saids, strict=True) for c in _checks_for(k, s)]
    return Outcome(
        _kinds(kinds), " | ".join(dict.fromkeys(filter(None, saids)))[:300], figures, check
    )


def _wait_built(arena: Arena, slug: str, until: float) -> bool:
    v = arena.visitor(30)
    while time.monotonic() < until:
        r = v.get(f"/rooms/{slug}/build.json")
        if r.status == 200:
            state = json.loads(r.body).get("state")
            if state != "building":
                return state == "live"
        elif r.status == 404:
            return False
        time.sleep(0.5)
    return False


# -- 5 ------------------------------------------------------------------------------------------
def non_reader(arena: Arena) -> Outcome:
    size = len(arena.visitor(30).get(f"/rooms/{arena.victim}/snapshot.json").body)
    rss0 = arena.monitor.daphne_rss()
    ws = RawSocket(arena.port, f"/ws/rooms/{arena.victim}/?name=reader", ATTACKER, 4096)
    t0 = time.monotonic()
    sent, closed_at = 0, None
    try:
        until = t0 + arena.seconds(20)
        while time.monotonic() < until:
            if arena.daphne_growth(rss0) > 400:
                break  # enough to say it: the machine is shared
            try:
                ws.send_json({"type": "snapshot", "inline": True})
            except OSError:
                closed_at = time.monotonic() - t0
                break
            sent += 1
            time.sleep(1 / 15)
        grown = arena.daphne_growth(rss0)
        r = ws.read_frames(10)
    finally:
        ws.close()
    figures = {
        "snapshot_kb": round(size / 1024),
        "requests": sent,
        "closed_at_s": round(closed_at, 1) if closed_at is not None else "-",
        "close_code": r["close"],
        "snapshots_read": r["types"].get("snapshot", 0),
        "daphne_plus_mib": round(grown),
    }
    said = "; ".join(dict.fromkeys(r["errors"]))[:200] or (
        f"close {r['close']}" if r["close"] else ""
    )
    check = []
    if not isinstance(r["close"], int) and not r["errors"]:
        check.append("the non-reading socket was neither closed with a code nor refused")
    kind = f"closed {r['close']}" if isinstance(r["close"], int) else "kept open"
    return Outcome(kind, said, figures, check)


ATTACKS = [
    Attack("1", "1 KB POST: 5,000 nodes, 145,000 replicas", one_kilobyte),
    Attack("2", "600 MiB upload (streamed until answered)", upload_600),
    Attack("2b", "upload without a length (chunked)", upload_chunked),
    Attack("3", "4 Import Previews of a 16.6 MiB List", four_previews),
    Attack("4", "4 What-ifs on one's own 1,500-node import", four_what_ifs),
    Attack("5", "a viewer that does not read (inline x15/s)", non_reader),
]
