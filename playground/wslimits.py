"""The websocket message size limit, enforced by Daphne's websocket server (autobahn) itself:
a frame announcing more than PLAYGROUND_MAX_MESSAGE_BYTES is refused from its header, before
its payload is read, and the connection closed with 1009 (message too big). The consumer's own
check (controller/live) only ever sees messages within the limit.

Daphne sets its websocket factory's options in ``Server.run`` and has no flag for this one;
``asgi.py`` is imported before that, and installs (once) a factory that adds autobahn's
``maxMessagePayloadSize`` and ``maxFramePayloadSize`` to the options Daphne sets. Every way of
starting Daphne (make run's supervisord, systemd units, the tests' and benchmarks' processes) loads
``playground.asgi``, so each gets the limit.

What a socket may hold unsent (issue #35): Daphne writes every message to its Twisted
transport, which buffers what the client has not read without bound (a viewer asking for a
558 KB snapshot 15 times a second and reading nothing grew Daphne 8 MB/s). Before each send
the protocol measures the transport's unsent bytes (``unsent_bytes``: Twisted's
``FileDescriptor`` buffer, ``dataBuffer`` past ``offset`` plus ``_tempDataLen``, the same sum
its ``_isSendBufferFull`` uses; a wrapping transport such as TLS is walked down to it). When
more than ``max_unsent`` bytes wait behind the snapshot the socket is still sending (one
snapshot may be bigger than the bound), the socket is closed with ``close_code`` (4408) and
what it would be sent is dropped; autobahn aborts the connection one second later if the
client has not answered the close, which frees the buffer. ``wire.Scope`` gives the consumer
the same measure (``scope["playground.wire"]``): it refuses a snapshot while one is still
being sent."""

from __future__ import annotations

from typing import Any

from playground import wire


def unsent_bytes(transport: Any) -> int | None:
    """Bytes written to ``transport`` that the kernel has not taken yet (None: unknown)."""
    for _ in range(4):  # a wrapping transport (TLS) keeps the socket's as .transport
        if hasattr(transport, "dataBuffer") and hasattr(transport, "_tempDataLen"):
            return len(transport.dataBuffer) - transport.offset + transport._tempDataLen
        transport = getattr(transport, "transport", None)
        if transport is None:
            return None
    return None


def install(max_bytes: int, max_unsent: int = 0, close_code: int = 4408) -> None:
    """Make Daphne's websocket factories refuse messages over ``max_bytes`` and close sockets
    with more than ``max_unsent`` bytes waiting behind their snapshot (0: no limit)."""
    try:
        from daphne import server
    except ImportError:  # not under Daphne (a worker, a management command)
        return
    if getattr(server.WebSocketFactory, "playground_limited", False):
        server.WebSocketFactory.max_bytes = max_bytes
        server.WebSocketFactory.max_unsent = max_unsent
        server.WebSocketFactory.close_code = close_code
        return

    base = server.WebSocketFactory

    class SendsWholeProtocol(base.protocol):  # type: ignore[misc, name-defined]
        """autobahn checks ``maxMessagePayloadSize`` on what it sends too: a room's snapshot
        (78 KB for the demo lesson's eleven nodes) was refused with PayloadExceededError and
        the page never got its state. The limit is for what clients send."""

        written = 0  # bytes handed to the transport
        snapshot_end = 0  # ``written`` after the last snapshot (wire.Wire.snapshot_sent)

        def onConnect(self, request: Any) -> Any:
            wire.building.append(self)  # for wire.Scope, while Daphne builds the application
            try:
                return super().onConnect(request)
            finally:
                wire.building.pop()

        def sendData(self, data: bytes, *args: Any, **kwargs: Any) -> Any:
            self.written += len(data)
            return super().sendData(data, *args, **kwargs)

        def unsent(self) -> int:
            return unsent_bytes(self.transport) or 0

        def snapshot_unsent(self) -> int:
            """Bytes of the last snapshot not yet taken by the kernel."""
            return max(0, self.snapshot_end - (self.written - self.unsent()))

        def sendMessage(self, *args: Any, **kwargs: Any) -> Any:
            if self.state != self.STATE_OPEN:
                return None  # closing (perhaps for not reading): nothing more is queued
            cap = self.factory.max_unsent
            if cap > 0 and self.unsent() - self.snapshot_unsent() > cap:
                self.sendClose(code=self.factory.close_code, reason="not reading")
                return None
            limit = self.maxMessagePayloadSize
            self.maxMessagePayloadSize = 0
            try:
                return super().sendMessage(*args, **kwargs)
            finally:
                self.maxMessagePayloadSize = limit

    class LimitedWebSocketFactory(base):  # type: ignore[misc, valid-type]
        playground_limited = True
        protocol = SendsWholeProtocol

        def setProtocolOptions(self, **options: Any) -> None:
            if self.max_bytes > 0:
                options.setdefault("maxMessagePayloadSize", self.max_bytes)
                options.setdefault("maxFramePayloadSize", self.max_bytes)
                # Refused with a close frame (1009, message too big) the client can read,
                # rather than by dropping the TCP connection (a reset).
                options.setdefault("failByDrop", False)
            super().setProtocolOptions(**options)

    LimitedWebSocketFactory.max_bytes = max_bytes
    LimitedWebSocketFactory.max_unsent = max_unsent
    LimitedWebSocketFactory.close_code = close_code
    server.WebSocketFactory = LimitedWebSocketFactory
