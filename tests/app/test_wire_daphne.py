"""Issue #35: bodies refused from their headers, and what one websocket may hold, through a
real Daphne (``python -m daphne playground.asgi:application``, as every way of starting it).

A body over its path's limit is answered 413 from its headers, before it is sent; a chunked
one is cut off at the limit; binary frames, unknown paths, a client that does not read and
one address's extra sockets are closed with the documented codes (controller/live/codes.py)."""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.bench.liveclient import ORIGIN
from controller.bench.procs import Daphne
from controller.live import codes
from controller.rooms import create
from tests.app.test_hardening import SCENARIO

SMALL = 65536  # PLAYGROUND_MAX_REQUEST_BYTES of the Daphne below
SCENARIO_BYTES = 1024 * 1024  # its PLAYGROUND_MAX_SCENARIO_BYTES


@pytest.fixture
def web(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Daphne]:
    env = {
        **stack_env,
        "PLAYGROUND_MAX_REQUEST_BYTES": str(SMALL),
        "PLAYGROUND_MAX_SCENARIO_BYTES": str(SCENARIO_BYTES),
    }
    proc = Daphne(env, tmp_path / "daphne.log")
    proc.start()
    yield proc
    proc.kill()


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _head(method: str, path: str, port: int, extra: str) -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


def _response(sock: socket.socket, timeout: float = 10) -> bytes:
    """Everything the server sends until it closes the connection (or ``timeout``)."""
    sock.settimeout(timeout)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            break
        if not chunk:
            return out
        out += chunk
    raise AssertionError(f"the connection was not closed; got {out[:300]!r}")


@pytest.mark.parametrize(
    ("path", "length"),
    [("/", 10 * 1024**3), ("/", SCENARIO_BYTES + 3 * 1024 * 1024), ("/rooms/x/whatif", SMALL + 1)],
)
def test_a_body_over_its_limit_is_refused_413_from_its_headers(
    web: Daphne, path: str, length: int
) -> None:
    """Only the headers are sent: the 413 comes back and the connection is closed without
    the body (Daphne used to wait for all of it, and hold it in memory)."""
    with _connect(web.port) as sock:
        sock.sendall(_head("POST", path, web.port, f"Content-Length: {length}\r\n"))
        answer = _response(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"PLAYGROUND_MAX_" in answer


def test_expect_100_continue_gets_the_413_and_no_continue(web: Daphne) -> None:
    with _connect(web.port) as sock:
        head = f"Content-Length: {10 * 1024**3}\r\nExpect: 100-continue\r\n"
        sock.sendall(_head("POST", "/", web.port, head))
        answer = _response(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"100 Continue" not in answer


def test_a_chunked_body_is_cut_off_at_the_limit(web: Daphne) -> None:
    """No length: the body is counted as it comes; past the limit the client gets a 413 and
    the connection is closed (it would go on sending forever)."""
    chunk = b"x" * 8192
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    with _connect(web.port) as sock:
        sock.sendall(_head("POST", "/rooms/x/whatif", web.port, "Transfer-Encoding: chunked\r\n"))
        try:
            while sent < 50 * SMALL:  # far past the limit: the server must stop it first
                sock.sendall(frame)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = _response(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]


def test_bodies_within_their_limits_reach_the_application(web: Daphne) -> None:
    """Under the limit the request goes on to Django (here refused by its CSRF check, not by
    the size): "/" takes more than the small limit (a scenario upload)."""
    for path, size in (("/", SMALL * 4), ("/rooms/x/whatif", SMALL // 2)):
        with _connect(web.port) as sock:
            head = f"Content-Length: {size}\r\nConnection: close\r\n"
            sock.sendall(_head("POST", path, web.port, head) + b"a" * size)
            answer = _response(sock, 30)
        assert answer.startswith(b"HTTP/1.1 403 "), (path, answer[:200])


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_a_body_within_the_limit_reaches_the_application_without_being_held_in_memory(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    """A 48 MiB upload (its limit raised to 64 MiB) stays in Twisted's temporary file and is
    read by the application a chunk at a time: Daphne's peak memory grows by much less than
    the body (it copied all of it into the application's queue at once)."""
    env = {**stack_env, "PLAYGROUND_MAX_SCENARIO_BYTES": str(64 * 2**20)}
    proc = Daphne(env, tmp_path / "daphne.log")
    proc.start()
    try:
        before = _peak_rss(proc.pid or 0)
        size = 48 * 2**20
        with _connect(proc.port) as sock:
            head = f"Content-Length: {size}\r\nConnection: close\r\n"
            sock.sendall(_head("POST", "/", proc.port, head))
            block = b"a" * 2**20
            for _ in range(size // len(block)):
                sock.sendall(block)
            answer = _response(sock, 60)
        grown = _peak_rss(proc.pid or 0) - before
    finally:
        proc.kill()
    print(f"48 MiB body within its limit: Daphne's peak RSS +{grown / 2**20:.1f} MiB")
    assert answer.startswith(b"HTTP/1.1 403 "), answer[:200]  # Django's CSRF check: it arrived
    assert grown < size // 3, grown / 2**20


def test_a_multipart_upload_is_not_parsed_in_memory_by_twisted(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    """A 16 MiB file in a multipart form (its limit raised to 64 MiB): Twisted used to parse a
    whole multipart POST body into ``request.args`` in memory before Daphne even built the
    application (four 16.6 MiB Import Previews grew Daphne by 262 MiB; one peaked it at +177
    MiB). Django parses it from the file a chunk at a time; Daphne's peak grows by much less
    than the body."""
    env = {**stack_env, "PLAYGROUND_MAX_SCENARIO_BYTES": str(64 * 2**20)}
    proc = Daphne(env, tmp_path / "daphne.log")
    proc.start()
    try:
        before = _peak_rss(proc.pid or 0)
        size = 16 * 2**20
        boundary = "playgroundboundary"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="imp-upload"; '
            'filename="cluster.json"\r\nContent-Type: application/json\r\n\r\n'
        ).encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        with _connect(proc.port) as sock:
            extra = (
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {len(head) + size + len(tail)}\r\nConnection: close\r\n"
            )
            sock.sendall(_head("POST", "/", proc.port, extra))
            sock.sendall(head)
            block = b'{"a": 1}\n' * (2**20 // 9) + b"\n" * (2**20 % 9)
            for _ in range(size // len(block)):
                sock.sendall(block)
            sock.sendall(tail)
            answer = _response(sock, 60)
        grown = _peak_rss(proc.pid or 0) - before
    finally:
        proc.kill()
    print(f"16 MiB multipart upload: Daphne's peak RSS +{grown / 2**20:.1f} MiB")
    assert answer.startswith(b"HTTP/1.1 403 "), answer[:200]  # Django's CSRF check: it arrived
    assert grown < size // 3, grown / 2**20


# -- websockets ---------------------------------------------------------------------------------
class Ws:
    """A raw websocket client that reads only when told to (a browser always reads)."""

    def __init__(
        self, port: int, path: str, sock: socket.socket | None = None, source: str = ""
    ) -> None:
        if sock is None:
            addr = (source, 0) if source else None
            sock = socket.create_connection(("127.0.0.1", port), 10, source_address=addr)
        self.sock = sock
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: {ORIGIN}\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(4096)
        head, self.buf = head.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head[:200]

    def send_text(self, text: str) -> None:
        self.send_frame(0x1, text.encode())

    def send_frame(self, opcode: int, payload: bytes) -> None:
        mask = b"\x01\x02\x03\x04"
        size = len(payload)
        head = bytes([0x80 | opcode])
        if size < 126:
            head += bytes([0x80 | size])
        else:
            head += bytes([0x80 | 126]) + struct.pack("!H", size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def frames(self, timeout: float) -> Iterator[tuple[int, bytes]]:
        """(opcode, payload) of each whole frame, until the server closes or ``timeout``."""
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            while len(self.buf) >= 2:
                opcode, length = self.buf[0] & 0x0F, self.buf[1] & 0x7F
                offset = {126: 4, 127: 10}.get(length, 2)
                if len(self.buf) < offset:
                    break
                if length == 126:
                    length = struct.unpack("!H", self.buf[2:4])[0]
                elif length == 127:
                    length = struct.unpack("!Q", self.buf[2:10])[0]
                if len(self.buf) < offset + length:
                    break
                payload = self.buf[offset : offset + length]
                self.buf = self.buf[offset + length :]
                yield opcode, payload
            if time.monotonic() > deadline:
                return
            try:
                chunk = self.sock.recv(1 << 20)
            except (TimeoutError, ConnectionResetError):
                return
            if not chunk:
                return
            self.buf += chunk

    def close_code(self, timeout: float = 10) -> int | None:
        for opcode, payload in self.frames(timeout):
            if opcode == 0x8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        return None

    def close(self) -> None:
        self.sock.close()


# -- close codes (issue #35, attack 9): autobahn refuses 1003 and 1008 from an application ------
def test_a_binary_frame_is_closed_with_4415(web: Daphne) -> None:
    room = create.room_create("binary", SCENARIO, None, 10.0)
    ws = Ws(web.port, f"/ws/rooms/{room.slug}/")
    ws.send_frame(0x2, b"\x00")
    code = ws.close_code()
    ws.close()
    assert code == codes.UNSUPPORTED, code


def test_an_unknown_path_is_closed_with_4404(web: Daphne) -> None:
    ws = Ws(web.port, "/ws/nowhere/")
    code = ws.close_code()
    ws.close()
    assert code == codes.NOT_FOUND, code


# -- what one socket may hold (attack 5) ------------------------------------------------------
def _big_scenario(nodes: int, replicas: int) -> str:
    rows = "\n".join(f"    - {{name: n-{i}, zone: zone-{'abc'[i % 3]}}}" for i in range(nodes))
    return f"""
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: big}}
spec:
  kubernetesVersion: "1.34"
  nodes:
{rows}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: api, namespace: default}}
      spec:
        replicas: {replicas}
        selector: {{matchLabels: {{app: api}}}}
        template:
          metadata: {{labels: {{app: api}}}}
          spec: {{containers: [{{name: api}}]}}
"""


def _messages(ws: Ws, timeout: float) -> list[dict[str, Any]]:
    return [json.loads(p) for op, p in ws.frames(timeout) if op == 0x1]


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _quiet(port: int, path: str) -> Ws:
    """A client whose receive buffer is small and which never reads."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return Ws(port, path, sock)


@pytest.fixture
def open_web(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Daphne]:
    """A Daphne without message rates (a client can send as fast as it likes)."""
    env = {
        **stack_env,
        "PLAYGROUND_MAX_ACTIONS_PER_SECOND": "0",
        "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS": "0",
        "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN": "0",
        "PLAYGROUND_MAX_UNSENT_BYTES": str(1024 * 1024),
        "PLAYGROUND_MAX_SOCKETS_PER_ADDRESS": "3",
        "PLAYGROUND_TICK_SECONDS": "3",
    }
    proc = Daphne(env, tmp_path / "daphne.log")
    proc.start()
    yield proc
    proc.kill()


def test_inline_snapshots_to_a_client_that_does_not_read_stay_bounded(open_web: Daphne) -> None:
    """Attack 5 as written: inline snapshots asked for and never read. The first is sent;
    each further one is refused with an error reply while it is still being sent, so Daphne
    holds one snapshot, not one per request (it grew by each: ~8 MB/s)."""
    room = create.room_create("big", _big_scenario(300, 1500), None, 10.0)
    ws = _quiet(open_web.port, f"/ws/rooms/{room.slug}/")
    before = _rss(open_web.pid or 0)
    for _ in range(150):
        ws.send_text('{"type":"snapshot","inline":true}')
    time.sleep(3)  # let Daphne handle them all (no assertion on time)
    grown = _rss(open_web.pid or 0) - before
    # The reader at last: the snapshot, then the refusals.
    replies = _messages(ws, 10)
    ws.close()
    refused = [m for m in replies if m["type"] == "error" and "still being sent" in m["message"]]
    sent = sum(m["type"] == "snapshot" for m in replies)
    print(
        f"150 inline snapshot requests, not read: {sent} snapshots sent, {len(refused)} refused,"
        f" Daphne RSS +{grown / 2**20:.1f} MiB"
    )
    assert refused, [m["type"] for m in replies][:10]
    assert grown < 60 * 1024 * 1024, grown / 2**20  # 150 snapshots would be ~150 x 400 KB


def test_a_client_that_does_not_read_is_disconnected(open_web: Daphne) -> None:
    """An operator's refused message is answered with its own text: ~60 KB answers, asked for
    as fast as the client can write and never read. Past PLAYGROUND_MAX_UNSENT_BYTES unsent,
    Daphne closes the socket (4408) and drops it: the client finds its connection ended."""
    room = create.room_create("quiet", SCENARIO, None, 10.0)
    ws = _quiet(open_web.port, f"/ws/rooms/{room.slug}/?token={room.operator_token}")
    before = _rss(open_web.pid or 0)
    message = '{"type":"nope","pad":"' + "x" * 60_000 + '"}'
    ended = False
    try:
        for _ in range(2000):  # 120 MB of answers if it were all kept
            ws.send_text(message)
    except (BrokenPipeError, ConnectionResetError):
        ended = True
    except TimeoutError:  # the server stopped reading: not the end yet
        pass
    grown = _rss(open_web.pid or 0) - before
    if not ended:  # it is dropped a second after the close it does not read
        for _opcode, _payload in ws.frames(15):
            pass
        ws.sock.settimeout(5)
        try:
            ended = ws.sock.recv(1) == b""
        except ConnectionResetError:
            ended = True
        except TimeoutError:  # open, and silent
            ended = False
    ws.close()
    print(
        f"60 KB answers never read: connection ended {ended}, Daphne RSS +{grown / 2**20:.1f} MiB"
    )
    assert ended
    assert grown < 60 * 1024 * 1024, grown / 2**20


def test_an_addresss_sockets_past_its_cap_are_closed_with_4429(open_web: Daphne) -> None:
    room = create.room_create("crowd", SCENARIO, None, 10.0)
    path = f"/ws/rooms/{room.slug}/"
    held = [Ws(open_web.port, path) for _ in range(3)]
    extra = Ws(open_web.port, path)
    assert extra.close_code() == codes.TOO_MANY
    extra.close()
    held.pop().close()
    time.sleep(1)  # Daphne sees the close (no assertion on time)
    again = Ws(open_web.port, path)
    first = next(p for op, p in again.frames(10) if op == 0x1)
    assert first.startswith(b'{"type":"snapshot"'), first[:80]
    for ws in [*held, again]:
        ws.close()


def test_presence_is_broadcast_once_per_beat_not_once_per_join(open_web: Daphne) -> None:
    """Ten viewers join within a beat (3 s here): the first sees who is watching once or
    twice, all ten in the last, not ten broadcasts (200 joins were 24,591 messages)."""
    room = create.room_create("presence", SCENARIO, None, 10.0)
    path = f"/ws/rooms/{room.slug}/"
    first = Ws(open_web.port, path)
    others: list[Ws] = []
    for _ in range(2):  # the cap is 3 per address: the rest from other loopback addresses
        others.append(Ws(open_web.port, path))
    for i in range(2, 9):
        others.append(Ws(open_web.port, path, source=f"127.0.0.{i}"))
    seen = [m for m in _messages(first, 8) if m["type"] == "presence"]
    for ws in [first, *others]:
        ws.close()
    assert 1 <= len(seen) <= 3, len(seen)
    assert len(seen[-1]["viewers"]) == 10, seen[-1]
