"""An anonymous visitor of a running Daphne, from a loopback address of its own (any of
127.0.0.0/8 reaches a server bound to 127.0.0.1, and its REMOTE_ADDR is that address): HTTP
with the CSRF cookie as a browser has it (``Visitor``), a body streamed in pieces
(``stream_post``), and a websocket spoken byte for byte (``RawSocket``: frames sent, none read
unless asked, the close code). Used by the abuse suite (bench/abuse.py, bench/attacks.py) and
the noisy-neighbour row (bench/noisy.py). Standard library only."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import select
import socket
import struct
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

ORIGIN = "http://localhost"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    @property
    def location(self) -> str:
        return self.headers.get("location", "")

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def error(self) -> str:
        """The message the page shows: its first ``class="error"`` element or form error list
        (HTML), the JSON's ``error``, else the start of the body."""
        text = self.text()
        if self.headers.get("content-type", "").startswith("application/json"):
            try:
                value = json.loads(text)
                if isinstance(value, dict) and value.get("error"):
                    return str(value["error"])
            except ValueError:
                pass
        for pattern in (
            r'class="error"[^>]*>(.*?)</p>',
            r'class="errorlist[^"]*"[^>]*>(.*?)</ul>',
        ):
            found = re.search(pattern, text, re.S)
            if found:
                return _plain(found.group(1))
        return _plain(text[:300])


def _plain(html: str) -> str:
    import html as html_lib

    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def multipart(fields: dict[str, Any], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type; ``fields`` values may be lists."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        for v in value if isinstance(value, list) else [value]:
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                f"{v}\r\n".encode()
            )
    for name, (filename, data) in files.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


@dataclass
class Visitor:
    """A browser without JavaScript at ``source`` (e.g. 127.0.0.66): cookies kept (the CSRF
    token and the session, which holds the operator tokens of the rooms it made)."""

    port: int
    source: str = "127.0.0.1"
    timeout: float = 60.0
    cookies: dict[str, str] = field(default_factory=dict)

    def connection(self, timeout: float | None = None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(
            "127.0.0.1",
            self.port,
            timeout=timeout or self.timeout,
            source_address=(self.source, 0),
        )

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Host": f"127.0.0.1:{self.port}"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if "csrftoken" in self.cookies:
            headers["X-CSRFToken"] = self.cookies["csrftoken"]
        return {**headers, **(extra or {})}

    def _keep_cookies(self, resp: http.client.HTTPResponse) -> None:
        for raw in resp.headers.get_all("Set-Cookie") or []:
            name, _, rest = raw.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Answer:
        conn = self.connection(timeout)
        t0 = time.monotonic()
        try:
            conn.request(method, path, body=body, headers=self._headers(headers))
            resp = conn.getresponse()
            data = resp.read()
            self._keep_cookies(resp)
            return Answer(
                resp.status,
                {k.lower(): v for k, v in resp.getheaders()},
                data,
                time.monotonic() - t0,
            )
        finally:
            conn.close()

    def get(self, path: str, timeout: float | None = None) -> Answer:
        return self.request("GET", path, timeout=timeout)

    def csrf(self) -> None:
        if "csrftoken" not in self.cookies:
            self.get("/")

    def post(
        self,
        path: str,
        fields: dict[str, Any],
        files: dict[str, tuple[str, bytes]] | None = None,
        timeout: float | None = None,
    ) -> Answer:
        self.csrf()
        if files:
            body, ctype = multipart(fields, files)
        else:
            body, ctype = (
                urlencode(fields, doseq=True).encode(),
                "application/x-www-form-urlencoded",
            )
        return self.request("POST", path, body, {"Content-Type": ctype}, timeout)


def stream_post(
    visitor: Visitor,
    path: str,
    announced: int | None,
    cap: int,
    chunk: int = 1 << 20,
    stop: Any = None,
) -> dict[str, Any]:
    """POST a multipart upload whose headers announce ``announced`` bytes (None: chunked, no
    length), streaming zeros only until the server answers, closes, or ``cap`` bytes went
    out (or ``stop()`` is true): what a 600 MiB upload does to the server before it is
    refused, without sending 600 MiB. Returns the status (None: no answer), the bytes sent,
    the seconds until the answer and its message."""
    visitor.csrf()
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.yaml"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    ).encode()
    lines = [f"POST {path} HTTP/1.1"]
    for k, v in visitor._headers(
        {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    ).items():
        lines.append(f"{k}: {v}")
    lines.append(
        f"Content-Length: {announced}" if announced is not None else "Transfer-Encoding: chunked"
    )
    sock = socket.create_connection(
        ("127.0.0.1", visitor.port), timeout=30, source_address=(visitor.source, 0)
    )
    t0 = time.monotonic()
    sent, answer = 0, b""
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        zeros = head + b"0" * (chunk - len(head))
        while sent < cap and not (stop and stop()):
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            piece = zeros if sent == 0 else b"0" * chunk
            data = piece if announced is not None else b"%x\r\n%s\r\n" % (len(piece), piece)
            try:
                sock.sendall(data)
            except OSError:
                break
            sent += len(piece)
        sock.settimeout(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and b"\r\n\r\n" not in answer:
            try:
                got = sock.recv(65536)
            except OSError:
                break
            if not got:
                break
            answer += got
        # The body of a short answer (the message), if it came.
        sock.settimeout(1)
        try:
            while len(answer) < 200_000:
                got = sock.recv(65536)
                if not got:
                    break
                answer += got
        except OSError:
            pass
    finally:
        sock.close()
    took = time.monotonic() - t0
    status = None
    if answer.startswith(b"HTTP/"):
        status = int(answer.split(b" ", 2)[1])
    head_part, _, body = answer.partition(b"\r\n\r\n")
    headers = {}
    for line in head_part.split(b"\r\n")[1:]:
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    message = Answer(status or 0, headers, body, took).error() if status else ""
    return {"status": status, "sent": sent, "seconds": took, "message": message}


class RawSocket:
    """A websocket spoken byte for byte from ``source``: ``recv_buffer`` shrinks the kernel's
    receive buffer (a client that does not read fills it at once); frames are sent masked as a
    client must; nothing is read unless asked."""

    def __init__(
        self, port: int, path: str, source: str = "127.0.0.1", recv_buffer: int | None = None
    ) -> None:
        self.sock = socket.socket()
        if recv_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer)
        self.sock.settimeout(10)
        self.sock.bind((source, 0))
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: {ORIGIN}\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            got = self.sock.recv(4096)
            if not got:
                break
            head += got
        self.status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        self.accepted = head.startswith(b"HTTP/1.1 101")
        self.buffer = head.partition(b"\r\n\r\n")[2]

    def send_frame(self, payload: bytes, opcode: int = 0x1) -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = bytes([0x80 | opcode, 0x80 | n])
        elif n < 1 << 16:
            header = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack("!H", n)
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack("!Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_json(self, message: dict[str, Any]) -> None:
        self.send_frame(json.dumps(message).encode())

    def read_frames(self, timeout: float, until_close: bool = True) -> dict[str, Any]:
        """Read for up to ``timeout`` s (until a close frame when ``until_close``): the text
        messages' types (counted), the error messages' text, the close code (None: none came;
        "reset": the connection was cut without one), the bytes read."""
        types: dict[str, int] = {}
        errors: list[str] = []
        code: int | str | None = None
        read = len(self.buffer)
        buf, self.buffer = self.buffer, b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while len(buf) >= 2:
                opcode, length = buf[0] & 0x0F, buf[1] & 0x7F
                offset = 2
                if length == 126:
                    if len(buf) < 4:
                        break
                    length, offset = struct.unpack("!H", buf[2:4])[0], 4
                elif length == 127:
                    if len(buf) < 10:
                        break
                    length, offset = struct.unpack("!Q", buf[2:10])[0], 10
                if len(buf) < offset + length:
                    break
                payload, buf = buf[offset : offset + length], buf[offset + length :]
                if opcode == 0x8:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                    return {"types": types, "errors": errors, "close": code, "bytes": read}
                if opcode == 0x1:
                    try:
                        m = json.loads(payload)
                        kind = str(m.get("type"))
                    except (ValueError, AttributeError):
                        kind, m = "?", {}
                    types[kind] = types.get(kind, 0) + 1
                    if kind == "error":
                        errors.append(str(m.get("message")))
            self.sock.settimeout(max(0.05, min(1.0, deadline - time.monotonic())))
            try:
                got = self.sock.recv(1 << 20)
            except TimeoutError:
                if not until_close:
                    break
                continue
            except OSError:
                code = "reset"
                break
            if not got:
                code = code or "reset"
                break
            read += len(got)
            buf += got
        return {"types": types, "errors": errors, "close": code, "bytes": read}

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
