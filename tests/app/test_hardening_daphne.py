"""Issue #24, item 10: the websocket message size limit is enforced by the server before the
message is buffered. Through a real Daphne: a frame whose header announces 64 MB is answered
with a close (1009, message too big) before any of its payload is sent; the consumer's own
check would only have seen it once all 64 MB had arrived."""

from __future__ import annotations

import socket
import struct
import time

from controller.bench.liveclient import ORIGIN
from controller.bench.procs import Daphne
from controller.rooms import create
from tests.app.test_hardening import SCENARIO


def _handshake(port: int, path: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: {ORIGIN}\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head[:200]
    return sock


def _close_code(sock: socket.socket, timeout: float) -> int | None:
    """The code of the first close frame the server sends within ``timeout`` s (other frames,
    such as the room's snapshot, are skipped)."""
    sock.settimeout(timeout)
    buf = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 20)
        except TimeoutError:
            return None
        if not chunk:
            return None
        buf += chunk
        while len(buf) >= 2:
            opcode, length = buf[0] & 0x0F, buf[1] & 0x7F
            offset = 2
            if length == 126:
                length, offset = struct.unpack("!H", buf[2:4])[0], 4
            elif length == 127:
                length, offset = struct.unpack("!Q", buf[2:10])[0], 10
            if len(buf) < offset + length:
                break
            payload, buf = buf[offset : offset + length], buf[offset + length :]
            if opcode == 0x8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
    return None


def test_a_64_mb_frame_is_refused_from_its_header_before_it_is_buffered(
    daphne_proc: Daphne,
) -> None:
    room = create.room_create("big frames", SCENARIO, None, 10.0)
    sock = _handshake(daphne_proc.port, f"/ws/rooms/{room.slug}/?token={room.operator_token}")
    # A masked text frame's header announcing 64 MB, and none of its payload.
    header = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 64 * 1024 * 1024) + b"\x01\x02\x03\x04"
    sock.sendall(header)
    start = time.monotonic()
    code = _close_code(sock, 10)
    took = time.monotonic() - start
    sock.close()
    assert code == 1009, code  # message too big, at once: the rest is never read
    assert took < 5
