"""What Daphne's protocols give the application beside the ASGI messages (issue #35).

Daphne builds a connection's application synchronously, inside the protocol's own code (a
websocket's ``onConnect``, an HTTP request's ``process``): the protocol puts itself on
``building`` around that call, and ``Scope``, the outermost ASGI application (its
``__call__`` is not a coroutine function, so it runs right then), takes it from there:

- a websocket's scope gets its ``Wire`` under ``WIRE``: what its client has not read yet,
  and whether the last snapshot is still among it (playground/wslimits.py measures it);
- an HTTP request whose body Twisted kept in a temporary file (playground/httplimits.py
  hands Daphne an empty body instead) gets a ``receive`` that reads the file a chunk at a
  time as the application asks (``LazyBody``): Daphne used to copy the whole body into the
  application's queue in memory at once."""

from __future__ import annotations

from typing import Any

WIRE = "playground.wire"  # (controller/live/sockets.py reads it by this name)
building: list[Any] = []  # the protocol or request whose application Daphne is building


class Wire:
    """One socket's sending state, for its consumer."""

    def __init__(self, protocol: Any) -> None:
        self._protocol = protocol

    def snapshot_sent(self) -> None:
        """The snapshot just sent ends at the bytes written so far."""
        self._protocol.snapshot_end = self._protocol.written

    def sending_snapshot(self) -> bool:
        return self._protocol.snapshot_unsent() > 0


class LazyBody:
    """An HTTP application's ``receive``: the body from ``body`` (a file) in chunks of
    ``size`` bytes, as the application asks for them, then Daphne's own messages (the first,
    its empty body, skipped)."""

    def __init__(self, body: Any, size: int, receive: Any) -> None:
        self.body = body
        self.size = size
        self.receive = receive
        self.started = False

    async def __call__(self) -> dict[str, Any]:
        if not self.started:
            self.started = True
            first = await self.receive()  # already queued: Daphne's empty body
            if first.get("type") != "http.request":
                self.body.close()
                return first
        if self.body.closed:
            return await self.receive()
        chunk = self.body.read(self.size)
        more = len(chunk) == self.size
        if not more:
            self.body.close()
        return {"type": "http.request", "body": chunk, "more_body": more}


class Scope:
    """The outermost ASGI application (playground.asgi)."""

    _asgi_single_callable = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        maker = building[-1] if building else None
        if maker is not None and scope.get("type") == "websocket":
            scope = {**scope, WIRE: Wire(maker)}
        elif maker is not None and getattr(maker, "body_file", None) is not None:
            receive = LazyBody(maker.body_file, maker.server.request_buffer_size, receive)
        return self.inner(scope, receive, send)
