"""A room client in Python that follows the page's protocol (static/js/room.js, state.js):
snapshot on connect, deltas in ``seq`` order (a gap asks for a snapshot), a ``resync`` notice
or a big room's snapshot note (``fetch``) fetches ``snapshot.json`` over HTTP (or asks the
socket for it inline when that fails), and a closed socket
reconnects after a second. Used by the fault tests (tests/app/test_faults.py) and the
``manage.py bench`` viewer row; it keeps the seq only, not the objects.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import websockets

ORIGIN = "http://localhost"


@dataclass
class Received:
    wall: float  # time.monotonic() on arrival
    type: str
    seq: int | None
    message: dict[str, Any]


@dataclass
class LiveClient:
    """One viewer (or operator, with ``token``) of room ``slug`` on ``host:port``."""

    host: str
    port: int
    slug: str
    token: str = ""
    name: str = "bench"
    reconnect_s: float = 1.0
    keep: bool = True  # keep every message (tests); the bench keeps only what it matches
    seq: int = -1
    connects: int = 0
    connected_at: list[float] = field(default_factory=list)  # time.monotonic() of each
    snapshots: int = 0
    resyncs: int = 0
    gaps: int = 0
    received: list[Received] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _ws: Any = None
    _task: asyncio.Task[None] | None = None
    _stop: bool = False
    _watchers: list[tuple[Any, asyncio.Future[Received]]] = field(default_factory=list)
    _resyncing: bool = False

    # -- life cycle ---------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        self._stop = True
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def url(self) -> str:
        return (
            f"ws://{self.host}:{self.port}/ws/rooms/{self.slug}/"
            f"?token={quote(self.token)}&name={quote(self.name)}"
        )

    async def _run(self) -> None:
        while not self._stop:
            try:
                async with websockets.connect(
                    self.url(),
                    origin=ORIGIN,
                    max_size=None,
                    open_timeout=10,
                    ping_interval=None,
                ) as ws:
                    self._ws = ws
                    self.connects += 1
                    self.connected_at.append(time.monotonic())
                    async for raw in ws:
                        self._handle(json.loads(raw))
            except (TimeoutError, OSError, websockets.WebSocketException) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                self._ws = None
            if not self._stop:
                await asyncio.sleep(self.reconnect_s)

    # -- the page's handling --------------------------------------------------------------
    def _handle(self, m: dict[str, Any]) -> None:
        kind = m.get("type", "")
        rec = Received(time.monotonic(), kind, m.get("seq"), m)
        if self.keep:
            self.received.append(rec)
        if kind == "snapshot" and m.get("fetch"):  # a big room's: fetched, as a resync's
            if not self._resyncing:
                self._resyncing = True
                asyncio.get_running_loop().create_task(self._fetch_snapshot(m))
        elif kind == "snapshot":
            self.snapshots += 1
            self.seq = m["seq"]
        elif kind == "resync":
            self.resyncs += 1
            if not self._resyncing:
                self._resyncing = True
                asyncio.get_running_loop().create_task(self._fetch_snapshot(m))
        elif kind in ("delta", "reset") and m.get("seq") is not None:
            if kind == "reset" or m["seq"] == self.seq + 1:
                self.seq = m["seq"]
            elif m["seq"] > self.seq + 1 and not self._resyncing:
                self.gaps += 1
                self.send({"type": "snapshot"})
        for watcher in list(self._watchers):
            match, fut = watcher
            if not fut.done() and match(m):
                fut.set_result(rec)
                self._watchers.remove(watcher)

    async def _fetch_snapshot(self, notice: dict[str, Any]) -> None:
        url = f"http://{self.host}:{self.port}/rooms/{self.slug}/snapshot.json"
        try:
            body = await asyncio.to_thread(_get, url)
            snap = json.loads(body)
            if snap["seq"] < notice["seq"]:
                self.send({"type": "snapshot"})  # (a note again, when the room is big)
            else:
                self.snapshots += 1
                self.seq = max(self.seq, snap["seq"])
        except (OSError, ValueError, KeyError):
            self.send({"type": "snapshot", "inline": True})  # on the socket, not a note
        finally:
            self._resyncing = False

    def send(self, message: dict[str, Any]) -> None:
        ws = self._ws
        if ws is not None:
            asyncio.get_running_loop().create_task(_send(ws, message))

    def expect(self, match) -> asyncio.Future[Received]:
        """A future resolved with the first later message for which ``match(m)`` is true."""
        fut: asyncio.Future[Received] = asyncio.get_running_loop().create_future()
        self._watchers.append((match, fut))
        return fut


async def _send(ws: Any, message: dict[str, Any]) -> None:
    try:
        await ws.send(json.dumps(message))
    except websockets.WebSocketException:
        pass  # closed meanwhile: the reconnect's snapshot covers it


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read()


async def wait_until(predicate, timeout: float, what: str, step: float = 0.1) -> float:
    """Poll ``predicate`` (sync) until true; the seconds it took. AssertionError on timeout."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            return time.monotonic() - t0
        await asyncio.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
