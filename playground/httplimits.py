"""Request bodies refused from their headers, in Daphne itself (issue #35).

Daphne's request (Twisted's ``http.Request``) receives the whole body before any ASGI code
runs, then hands all of it to the application at once: one 600 MiB POST grew Daphne to
7.3 GiB before Django's form refused it. This installs a request class that checks the
length where Twisted learns it:

- a ``Content-Length`` over the path's limit is answered ``413`` from the headers, before a
  byte of the body is read (an ``Expect: 100-continue`` client never sends it);
- a body without a length (``Transfer-Encoding: chunked``) is counted as it arrives and cut
  off with ``413`` at the limit;
- either way the connection is closed: the answer is written, the write side shut (the client
  reads the 413 and an end of stream), what the client still sends is discarded unread for
  at most ``LINGER_S`` seconds (so that a browser sees the answer rather than a reset), then
  the connection is dropped. The application never sees the request.

The limits (``limits_for``): ``/`` (the forms that upload a scenario or import a cluster)
PLAYGROUND_MAX_SCENARIO_BYTES plus Django's DATA_UPLOAD_MAX_MEMORY_SIZE (a pasted List
beside the file) plus ``MULTIPART_OVERHEAD``; every other path PLAYGROUND_MAX_REQUEST_BYTES.
Bodies within them stay where Twisted puts them (a temporary file from 100 kB) and are
handed to the application a chunk at a time as it reads them (``wire.LazyBody``; Daphne
copied a whole body into the application's queue, in memory, at once); Django spools them
to disk past FILE_UPLOAD_MAX_MEMORY_SIZE and writes uploaded files to disk
(settings.FILE_UPLOAD_HANDLERS).

Like ``wslimits``, it is installed by ``playground.asgi``, which Daphne imports before it
builds its factories (``Server.run``): every way of starting Daphne (make run's supervisord,
the systemd unit, the tests' and benchmarks' processes, ``manage.py runserver``) gets it."""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from typing import Any

from playground import wire

LAZY_MIN = 64 * 1024  # a body this big is read by the application as it asks (wire.LazyBody)
LINGER_S = 5.0  # after a 413: how long what the client still sends is read and discarded
MULTIPART_OVERHEAD = 64 * 1024  # boundaries, part headers and the form's small fields
UPLOAD_PATHS = frozenset({b"/"})  # RoomCreateForm, ImportClusterForm and CompareForm post here


@dataclass(frozen=True)
class BodyLimits:
    """Bytes of request body allowed: ``upload`` on UPLOAD_PATHS, ``other`` elsewhere (0: no
    limit)."""

    upload: int
    other: int

    def for_path(self, target: bytes) -> int:
        path = target.split(b"?", 1)[0]
        return self.upload if path in UPLOAD_PATHS else self.other


def limits_for(settings: Any) -> BodyLimits:
    scenario = int(settings.PLAYGROUND_MAX_SCENARIO_BYTES)
    form = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)
    upload = scenario + form + MULTIPART_OVERHEAD if scenario > 0 else 0
    return BodyLimits(upload=upload, other=int(settings.PLAYGROUND_MAX_REQUEST_BYTES))


def refusal(limit: int) -> bytes:
    """The 413 written to the connection (a complete HTTP/1.1 response that closes it)."""
    body = (
        f"413 Content Too Large: this request's body is over {limit} bytes, the most this "
        "address takes (PLAYGROUND_MAX_SCENARIO_BYTES for an upload, "
        "PLAYGROUND_MAX_REQUEST_BYTES elsewhere).\n"
    ).encode()
    head = (
        "HTTP/1.1 413 Content Too Large\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head + body


def install(limits: BodyLimits) -> None:
    """Make Daphne's HTTP factory build requests that refuse bodies over ``limits``."""
    try:
        from daphne import http_protocol, server
    except ImportError:  # not under Daphne (a worker, a management command)
        return
    if getattr(server.HTTPFactory, "playground_limited", False):
        server.HTTPFactory.limits = limits
        return
    from twisted.internet import reactor

    class LimitedRequest(http_protocol.WebRequest):  # type: ignore[misc, name-defined]
        refused = False
        received = 0
        limit = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Twisted parses a whole multipart or URL-encoded POST body into ``request.args``
            # (in memory, several copies: one 16.6 MiB upload peaked Daphne at +177 MiB) before
            # the application is even built; Daphne never reads ``args``, Django parses the
            # body itself, from the file, a chunk at a time (issue #35, attack 3).
            self._parsePOSTFormSubmission = False

        def gotLength(self, length: int | None) -> None:
            channel = self.channel
            self.limit = channel.factory.limits.for_path(getattr(channel, "_path", b"") or b"")
            if self.limit and length is not None and length > self.limit:
                # Twisted answers "Expect: 100-continue" after this returns: not to a refusal.
                self.requestHeaders.removeHeader(b"Expect")
                self.refuse()
                return
            super().gotLength(length)

        def handleContentChunk(self, data: bytes) -> None:
            if self.refused:
                return  # discarded unread until the client stops or LINGER_S passes
            self.received += len(data)
            if self.limit and self.received > self.limit:
                self.refuse()
                return
            super().handleContentChunk(data)

        body_file: Any = None  # the body, read by the application as it asks (wire.LazyBody)

        def process(self) -> Any:
            content = self.content
            if content is not None and not self.requestHeaders.hasHeader(b"Upgrade"):
                size = content.seek(0, 2)
                content.seek(0)
                if size >= LAZY_MIN:  # Daphne gets an empty body, the application the file
                    self.body_file, self.content = content, BytesIO()
            wire.building.append(self)  # for wire.Scope, while Daphne builds the application
            try:
                return super().process()
            finally:
                wire.building.pop()

        def finish(self) -> Any:
            self.close_body()
            return super().finish()

        def close_body(self) -> None:
            if self.body_file is not None and not self.body_file.closed:
                self.body_file.close()

        def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
            if not self.refused:  # a refused body that did end: the application never sees it
                super().requestReceived(command, path, version)

        def refuse(self) -> None:
            self.refused = True
            transport = self.channel.transport
            transport.write(refusal(self.limit))
            half_close = getattr(transport, "loseWriteConnection", None)
            if half_close is not None:
                half_close()
                self.linger = reactor.callLater(LINGER_S, transport.abortConnection)
            else:
                transport.loseConnection()

        def connectionLost(self, reason: Any) -> None:
            self.close_body()
            linger = getattr(self, "linger", None)
            if linger is not None and linger.active():
                linger.cancel()
            super().connectionLost(reason)

    base = server.HTTPFactory

    class LimitedHTTPFactory(base):  # type: ignore[misc, valid-type]
        playground_limited = True

        def buildProtocol(self, addr: Any) -> Any:
            protocol = super().buildProtocol(addr)
            protocol.requestFactory = LimitedRequest
            return protocol

    LimitedHTTPFactory.limits = limits
    server.HTTPFactory = LimitedHTTPFactory
