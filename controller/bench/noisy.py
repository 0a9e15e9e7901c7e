"""The noisy-neighbour row: the rooms row (bench/rooms.py: 50 rooms of 100 nodes at 10x, ticks
on time and lag) run while one address (abuse.ATTACKER) does the most the limits allow, all at
once through a real Daphne: the largest room it is admitted (tried from 5,000 nodes and
145,000 replicas down) at the top speed (100x), Import Previews of a 16.6 MiB kubectl List and
What-ifs on its room, re-submitted every few seconds (what the per-address caps refuse is
counted), an oversized upload (600 MiB announced, streamed until answered, at most 64 MiB),
and a socket that does not read asking for its room's inline snapshot 15 times a second.
``parts`` (``--noisy-parts``) runs some of these alone, to see which one costs the rooms
their ticks: ``room`` (without it the neighbour has no room, hence no what-ifs and no
socket), ``previews``, ``what-ifs``, ``upload``, ``socket``."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

from .arena import ATTACKER
from .attacks import _refused_or_room, _token, scenario
from .rooms import format_rooms, rooms_bench
from .stack import Stack
from .visitor import Answer, RawSocket, Visitor, stream_post

MiB = 1024 * 1024

# (nodes, replicas), largest first: the first the server admits is the neighbour's room.
SIZES = [(5000, 145_000), (2500, 70_000), (1000, 30_000), (500, 10_000), (100, 1_000)]
PARTS = ("room", "previews", "what-ifs", "upload", "socket")


def neighbour(
    stack: Stack,
    stop: threading.Event,
    sizes: list[tuple[int, int]] = SIZES,
    list_nodes: int = 1500,
    upload_cap: int = 64 * MiB,
    parts: tuple[str, ...] = PARTS,
) -> dict[str, Any]:
    """The noisy neighbour (module docstring) until ``stop``; what it was admitted and
    refused. ``sizes``, ``list_nodes`` (the previews' List: 2 pods a node) and ``upload_cap``
    smaller for a test."""
    from .kubectl_list import big_kubectl_list

    port = stack.webs[0].port
    v = Visitor(port, ATTACKER, timeout=120)
    did: dict[str, Any] = {"refused": {}, "parts": ",".join(parts)}

    def refused(what: str, answer: Any) -> None:
        said = answer.error() if isinstance(answer, Answer) else str(answer)
        did["refused"].setdefault(what, [0, said[:120]])[0] += 1

    slug = token = ""
    for nodes, replicas in sizes if "room" in parts else []:
        a = v.post(
            "/",
            {"name": "", "speed": "100", "scenario": ""},
            {"upload": ("n.yaml", scenario(nodes, replicas).encode())},
        )
        kind, slug, said = _refused_or_room(a)
        if kind == "accepted":
            token = _token(a)
            did["room"] = f"{nodes} nodes, {replicas} replicas at 100x"
            break
        refused(f"room of {nodes} nodes", a)
    if stop.is_set():
        return did
    data = big_kubectl_list(list_nodes, 2, "json").encode()
    upload = threading.Thread(
        target=lambda: did.update(
            upload=stream_post(
                Visitor(port, ATTACKER), "/", 600 * MiB, upload_cap, stop=stop.is_set
            )
        ),
        daemon=True,
    )
    if "upload" in parts:
        upload.start()
    reader = threading.Thread(target=_non_reader, args=(port, slug, stop, did), daemon=True)
    if slug and "socket" in parts:
        reader.start()
    counts = {"previews": 0, "what_ifs": 0}
    while not stop.is_set():
        for _ in range(4):
            if "previews" in parts:
                a = v.post(
                    "/",
                    {"imp-name": "", "imp-speed": "10", "preview": "1"},
                    {"imp-upload": ("cluster.json", data)},
                )
                if a.status in (301, 302, 303):
                    counts["previews"] += 1
                else:
                    refused("preview", a)
            if slug and "what-ifs" in parts:
                w = v.post(f"/rooms/{slug}/whatif", {"token": token, "zone": "zone-a", "at": "60"})
                if w.status == 200:
                    counts["what_ifs"] += 1
                else:
                    refused("what-if", w)
            if stop.is_set():
                break
        stop.wait(5)
    did.update(counts)
    if upload.is_alive():
        upload.join(timeout=30)
    if reader.is_alive():
        reader.join(timeout=30)
    return did


def _non_reader(port: int, slug: str, stop: threading.Event, did: dict[str, Any]) -> None:
    ws = RawSocket(port, f"/ws/rooms/{slug}/?name=reader", ATTACKER, 4096)
    sent = 0
    try:
        while not stop.is_set():
            try:
                ws.send_json({"type": "snapshot", "inline": True})
            except OSError:
                break
            sent += 1
            time.sleep(1 / 15)
        r = ws.read_frames(5)
        did["non_reader"] = f"{sent} requests, close {r['close']}"
    finally:
        ws.close()


def noisy_bench(
    rooms: int = 50,
    nodes: int = 100,
    workers: int = 2,
    seconds: float = 60.0,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
    **neighbour_options: Any,
) -> dict[str, Any]:
    """The rooms row beside ``neighbour`` (its options: ``neighbour_options``)."""
    import functools

    from ..models import Room

    noisy = functools.partial(neighbour, **neighbour_options)
    try:
        return rooms_bench(
            rooms, nodes, workers, seconds, log_dir=log_dir, env=env, neighbour=noisy
        )
    finally:
        with contextlib.suppress(Exception):
            Room.objects.filter(creator=f"addr:{ATTACKER}").delete()


def format_noisy(r: dict[str, Any]) -> str:
    n = r.get("neighbour") or {}
    up = n.get("upload") or {}
    parts = [
        f"parts: {n.get('parts', '')}",
        f"room: {n.get('room', 'none admitted')}",
        f"previews admitted {n.get('previews', 0)}, what-ifs admitted {n.get('what_ifs', 0)}",
        f"600 MiB upload: answer {up.get('status')} after {up.get('sent', 0) / MiB:.0f} MiB",
        f"non-reading socket: {n.get('non_reader', '-')}",
    ]
    for what, (count, said) in (n.get("refused") or {}).items():
        parts.append(f"refused {what} x{count}: {said!r}")
    return "noisy neighbour: " + format_rooms(r) + "\n  neighbour: " + "; ".join(parts)
