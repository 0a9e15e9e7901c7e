"""The attacks of issue #35 that go through a room (6 to 10: paused rooms, taints, a fault's
node deleted, close codes, CSV, presence, What-if ids); 1 to 5 and the helpers are in
bench/attacks.py, whose docstring lists them all."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from .arena import ATTACKER, Arena
from .attacks import (
    SINGLE,
    Attack,
    Outcome,
    _checks_for,
    _create,
    _import_post,
    _operate,
    _refused_or_room,
    _room_phrase,
    _token,
    _wait_built,
    scenario,
)
from .visitor import RawSocket


# -- 6 ------------------------------------------------------------------------------------------
def paused_rooms(arena: Arena) -> Outcome:
    """Rooms of 150 nodes and 2,850 replicas (3,000 objects; the issue's were of the size of 1,
    ~800 MB each), each paused once made, up to 27: contained when a refusal with a message
    comes first (paused rooms count)."""
    v = arena.visitor(60)
    held: list[tuple[str, str]] = []
    said, kind = "", "27 held"
    t0 = time.monotonic()
    text = scenario(150, 2850).encode()
    for _ in range(27):
        k, slug, msg, answer = _create(arena, v, files={"upload": ("paused.yaml", text)})
        if k != "accepted":
            kind, said = k, msg
            break
        token = _token(answer)
        _wait_built(arena, slug, time.monotonic() + 60)
        r = _operate(arena, slug, token, {"type": "pause"})
        held.append((slug, token))
        if "ack" not in r["types"]:
            kind, said = "pause refused", "; ".join(r["errors"])[:200]
            break
    step = {}
    if held:
        step = _operate(arena, held[0][0], held[0][1], {"type": "step", "value": 10})
    arena.hold(t0 + arena.seconds(5))
    stepped = "acked" if "ack" in step.get("types", {}) else "; ".join(step.get("errors", []))
    figures = {"held": len(held), "step_of_paused": stepped[:80]}
    check = _checks_for("5xx" if kind == "5xx" else "refused", said) if kind != "27 held" else []
    if len(held) >= 27:
        check.append("one address held 27 rooms (paused)")
    return Outcome(kind, said, figures, check)


# -- 7 ------------------------------------------------------------------------------------------
def taints_noexecute(arena: Arena) -> Outcome:
    from .procs import cpu_seconds

    data = arena.cache["noexecute_taints"]
    t0 = time.monotonic()
    web = arena.stack.webs[0]
    out, saids, check = [], [], []
    for preview in (True, False):
        cpu0 = cpu_seconds(web.pid) if web.pid else 0.0
        a = _import_post(arena, data, preview)
        cpu = (cpu_seconds(web.pid) if web.pid else 0.0) - cpu0
        kind, _slug, said = _refused_or_room(a)
        if kind == "accepted":
            said = ""
        elif a.status in (301, 302, 303) and "/import/preview/" in a.location:
            kind, said = "previewed (in a worker)", ""
        elif a.status == 200 and preview and "import-error" not in a.text():
            kind, said = "previewed", ""
        out.append(
            f"{'preview' if preview else 'import'} {kind} in {a.seconds:.1f} s "
            f"({cpu:.1f} s Daphne CPU)"
        )
        if said:
            saids.append(said)
        check += _checks_for(kind, said)
    arena.hold(t0 + arena.seconds(20))
    figures = {"list_kb": round(len(data) / 1024), "requests": "; ".join(out)}
    return Outcome(out[-1].split(" in ")[0], " | ".join(saids)[:300], figures, check)


def taints_noschedule(arena: Arena) -> Outcome:
    data = arena.cache["noschedule_taints"]
    t0 = time.monotonic()
    a = _import_post(arena, data, False)
    kind, slug, said = _refused_or_room(a)
    if kind == "accepted":
        arena.hold(t0 + arena.seconds(20))
        said = _room_phrase(arena, slug, _token(a))
    figures = {"list_kb": round(len(data) / 1024), "answered_s": round(a.seconds, 1)}
    return Outcome(kind, said, figures, _checks_for(kind, said))


# -- 8 ------------------------------------------------------------------------------------------
def delete_named_node(arena: Arena) -> Outcome:
    from ..models import Room

    v = arena.visitor(60)
    kind, slug, said, answer = _create(arena, v, fields={"scenario": SINGLE})
    if kind != "accepted":
        return Outcome(kind, said, {}, ["could not make the room: " + said])
    token = _token(answer)
    r = _operate(
        arena, slug, token, {"type": "action", "action": {"type": "DeleteNode", "node": "a-2"}}
    )
    acked = "ack" in r["types"]
    deadline = time.monotonic() + arena.seconds(20)
    room = Room.objects.get(slug=slug)
    while time.monotonic() < deadline:
        room.refresh_from_db()
        if room.sim_ms > 75_000 or room.paused:
            break
        time.sleep(0.3)
    events = json.loads(v.get(f"/rooms/{slug}/events.json?token={token}").body or b"{}")
    refused = [
        e
        for e in events.get("events", [])
        if "a-2" in json.dumps(e) and "refus" in json.dumps(e).lower()
    ]
    said = json.dumps(refused[0])[:200] if refused else ""
    paused_why = [e for e in events.get("events", []) if "paused" in json.dumps(e)]
    figures = {
        "delete_acked": acked,
        "sim_s": round(room.sim_ms / 1000, 1),
        "room_paused": room.paused,
    }
    check = []
    if room.paused:
        check.append(
            "the room paused: " + (json.dumps(paused_why[-1])[:160] if paused_why else "?")
        )
        said = said or (json.dumps(paused_why[-1])[:200] if paused_why else "")
    if room.sim_ms <= 62_000:
        check.append(f"the room did not pass the fault at 62 s (at {room.sim_ms / 1000:.1f} s)")
    if not refused:
        check.append("no refused event naming a-2 in the timeline")
    return Outcome("room went on" if not check else "bricked", said, figures, check)


# -- 9 ------------------------------------------------------------------------------------------
def close_codes(arena: Arena) -> Outcome:
    """A binary frame and an unknown path must end with the close codes the server declares
    (controller/live/codes.py: ones Daphne can send), and no traceback in its log."""
    from ..live import codes

    offset = arena.daphne_log_size()
    ws = RawSocket(arena.port, f"/ws/rooms/{arena.observed}/?name=binary", ATTACKER)
    ws.read_frames(1.0, until_close=False)
    ws.send_frame(b"\x00\x01binary", opcode=0x2)
    binary = ws.read_frames(10)
    ws.close()
    ws = RawSocket(arena.port, "/ws/nowhere/", ATTACKER)
    unknown = ws.read_frames(10) if ws.accepted else {"close": ws.status_line}
    ws.close()
    time.sleep(0.5)
    log = arena.daphne_log_since(offset)
    traces = log.count("Traceback") + log.count("invalid close code")
    figures = {"binary": binary["close"], "unknown_path": unknown["close"], "tracebacks": traces}
    check = []
    if binary["close"] != codes.UNSUPPORTED:
        check.append(f"binary frame: close {binary['close']}, not {codes.UNSUPPORTED}")
    if unknown["close"] != codes.NOT_FOUND:
        check.append(f"unknown path: close {unknown['close']}, not {codes.NOT_FOUND}")
    if traces:
        check.append(f"{traces} traceback(s) in Daphne's log")
    said = "; ".join(binary["errors"])[:120]
    return Outcome(f"closes {binary['close']} / {unknown['close']}", said, figures, check)


# -- 10 -----------------------------------------------------------------------------------------
def smaller(arena: Arena) -> Outcome:
    import csv
    import io

    v = arena.visitor(60)
    kind, slug, said, answer = _create(arena, v, fields={"scenario": SINGLE})
    if kind != "accepted":
        return Outcome(kind, said, {}, ["could not make the room: " + said])
    token = _token(answer)
    t0 = time.monotonic()
    figures: dict[str, Any] = {}
    check: list[str] = []
    # Presence and the connection cap: 200 viewers from one address.
    viewers = asyncio.run(_viewers(arena, slug, 200, arena.seconds(6)))
    beats = int(viewers["seconds"] / arena.period) + 2
    figures.update(
        {
            "viewers_accepted": viewers["accepted"],
            "viewers_refused": viewers["refused"],
            "presence_msgs": viewers["presence"],
        }
    )
    if viewers["accepted"] >= 200:
        check.append("200 sockets from one address accepted (no cap)")
    if viewers["presence"] > viewers["accepted"] * beats:
        check.append(
            f"presence: {viewers['presence']} messages to {viewers['accepted']} viewers "
            f"in {beats} beats"
        )
    # timeline.csv (its t=0 taint rows read "+ ..." and "- ...").
    text = v.get(f"/rooms/{slug}/timeline.csv?token={token}").text()
    rows = list(csv.reader(io.StringIO(text)))[1:]
    formula = [r for r in rows if any(c[:1] in ("=", "+", "-", "@", "\t", "\r") for c in r)]
    figures["csv_formula_rows"] = f"{len(formula)} of {len(rows)}"
    if formula:
        check.append(f"timeline.csv: {len(formula)} rows with cells starting = + - @")
    # A What-if's result through another room, and an unknown id.
    w = v.post(f"/rooms/{slug}/whatif", {"token": token, "zone": "a", "at": "60"})
    if w.status == 200:
        wid = json.loads(w.body).get("id")
        other = v.get(f"/rooms/{arena.observed}/whatif/{wid}")
        figures["whatif_via_other_room"] = other.status
        if other.status != 404:
            check.append(f"a What-if read through another room: {other.status}")
    else:
        figures["whatif"] = f"{w.status} {w.error()[:60]}"
    unknown = v.get(f"/rooms/{slug}/whatif/0123456789abcdef")
    figures["whatif_unknown_id"] = f"{unknown.status} {unknown.text()[:30]}"
    if unknown.status != 404:
        check.append(f"an unknown What-if id: {unknown.status} {unknown.text()[:40]}")
    arena.hold(t0 + arena.seconds(8))
    said = "; ".join(viewers["said"])[:200]
    return Outcome("see figures", said, figures, check)


async def _viewers(arena: Arena, slug: str, count: int, hold: float) -> dict[str, Any]:
    import websockets

    from .liveclient import ORIGIN

    url = f"ws://127.0.0.1:{arena.port}/ws/rooms/{slug}/?name=v"
    presence = 0
    accepted = refused = 0
    said: list[str] = []
    socks = []
    t0 = time.monotonic()

    gate = asyncio.Semaphore(10)  # joins arrive ten at a time, as pages open

    async def one() -> None:
        nonlocal accepted, refused
        try:
            async with gate:
                ws = await websockets.connect(
                    url,
                    origin=ORIGIN,
                    open_timeout=20,
                    ping_interval=None,
                    max_size=None,
                    local_addr=(ATTACKER, 0),
                )
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            refused += 1
            said.append(f"{type(exc).__name__}: {exc}"[:100])
            return
        accepted += 1
        socks.append(ws)

    await asyncio.gather(*(one() for _ in range(count)))

    async def count_presence(ws: Any) -> None:
        nonlocal presence
        try:
            async for raw in ws:
                if '"presence"' in str(raw)[:40]:
                    presence += 1
        except websockets.WebSocketException as exc:
            said.append(f"closed: {exc}"[:100])

    readers = [asyncio.create_task(count_presence(ws)) for ws in socks]
    await asyncio.sleep(hold)
    closed = [ws.close_code for ws in socks if ws.close_code is not None]  # by the server
    for ws in socks:
        await ws.close()
    for r in readers:
        r.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    if closed:
        said.append(f"closed by the server: {', '.join(map(str, sorted(set(closed))))}")
    return {
        "accepted": accepted - len(closed),
        "refused": refused + len(closed),
        "presence": presence,
        "said": list(dict.fromkeys(said))[:3],
        "seconds": time.monotonic() - t0,
    }


ATTACKS = [
    Attack("6", "paused rooms past the limit (up to 27)", paused_rooms),
    Attack("7", "12,500 NoExecute taints, in the request", taints_noexecute),
    Attack("7b", "10,000 NoSchedule taints, running", taints_noschedule),
    Attack("8", "DeleteNode a-2 named by a later fault", delete_named_node),
    Attack("9", "binary frame, unknown path: close codes", close_codes),
    Attack("10", "CSV cells, 200 viewers, What-if ids", smaller),
]
