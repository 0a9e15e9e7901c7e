"""The websocket message size limit, enforced by Daphne's websocket server (autobahn) itself:
a frame announcing more than PLAYGROUND_MAX_MESSAGE_BYTES is refused from its header, before
its payload is read, and the connection closed with 1009 (message too big). The consumer's own
check (controller/live) only ever sees messages within the limit.

Daphne sets its websocket factory's options in ``Server.run`` and has no flag for this one;
``asgi.py`` is imported before that, and installs (once) a factory that adds autobahn's
``maxMessagePayloadSize`` and ``maxFramePayloadSize`` to the options Daphne sets. Every way of
starting Daphne (make run's supervisord, systemd units, the tests' and benchmarks' processes) loads
``playground.asgi``, so each gets the limit."""

from __future__ import annotations

from typing import Any


def install(max_bytes: int) -> None:
    """Make Daphne's websocket factories refuse messages over ``max_bytes`` (0: no limit)."""
    try:
        from daphne import server
    except ImportError:  # not under Daphne (a worker, a management command)
        return
    if getattr(server.WebSocketFactory, "playground_limited", False):
        server.WebSocketFactory.max_bytes = max_bytes
        return

    base = server.WebSocketFactory

    class LimitedWebSocketFactory(base):  # type: ignore[misc, valid-type]
        playground_limited = True

        def setProtocolOptions(self, **options: Any) -> None:
            if self.max_bytes > 0:
                options.setdefault("maxMessagePayloadSize", self.max_bytes)
                options.setdefault("maxFramePayloadSize", self.max_bytes)
                # Refused with a close frame (1009, message too big) the client can read,
                # rather than by dropping the TCP connection (a reset).
                options.setdefault("failByDrop", False)
            super().setProtocolOptions(**options)

    LimitedWebSocketFactory.max_bytes = max_bytes
    server.WebSocketFactory = LimitedWebSocketFactory
