"""Tokens never in a log: a real Daphne's access log (and the app's log records) show
``?token=[REDACTED]`` for an operator's link, a websocket URL and the API's paths."""

from __future__ import annotations

import logging
import socket
import time
import urllib.error
import urllib.request

from controller.bench.procs import Daphne
from playground import logredact


def test_redact_replaces_every_token_query_value() -> None:
    line = "GET /rooms/a/?name=x&token=s3cr3t&b=1 /x?operator_token=abc;TOKEN=Z"
    out = logredact.redact(line)
    assert "s3cr3t" not in out and "abc" not in out and "Z" not in out.split("TOKEN=")[1][:1]
    assert out.count("[REDACTED]") == 3 and "name=x" in out and "b=1" in out


def test_a_log_record_is_redacted_by_the_console_filter() -> None:
    record = logging.LogRecord(
        "django.server",
        logging.INFO,
        __file__,
        1,
        '"%s" %s',
        ("GET /r/?token=abc123 HTTP/1.1", 200),
        None,
    )
    assert logredact.RedactFilter().filter(record)
    assert "abc123" not in record.getMessage() and "[REDACTED]" in record.getMessage()


def test_daphne_access_log_has_no_token(daphne_proc: Daphne, db: None) -> None:
    secret = "tok-" + "9" * 30
    base = f"http://127.0.0.1:{daphne_proc.port}"
    for path in (
        f"/rooms/no-such-room/?token={secret}",
        f"/rooms/no-such-room/?name=ann&token={secret}&x=1",
        f"/k8s/rooms/no-such-room/api?token={secret}",
    ):
        try:
            urllib.request.urlopen(base + path, timeout=10).read()
        except urllib.error.HTTPError:
            pass
    # A websocket handshake with the token in its URL (refused or not, Daphne logs it).
    with socket.create_connection(("127.0.0.1", daphne_proc.port), timeout=10) as sock:
        sock.sendall(
            (
                f"GET /ws/rooms/no-such-room/?token={secret} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            ).encode()
        )
        sock.recv(4096)
    assert daphne_proc.log is not None
    deadline = time.monotonic() + 20
    text = ""
    while time.monotonic() < deadline:
        text = daphne_proc.log.read_text(errors="replace")
        if text.count("[REDACTED]") >= 3:
            break
        time.sleep(0.2)
    assert "token=[REDACTED]" in text, text[-2000:]
    assert secret not in text, text[-2000:]
