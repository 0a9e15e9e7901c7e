"""The close codes a room websocket ends with, one place for the server, the page and the
README.

Daphne's websocket server (autobahn) lets an application close only with 1000 or a code from
3000 to 4999 (``sendClose``: "invalid close code"); the RFC 6455 codes 1003 and 1008 the
consumers used raised inside Daphne, which answered "server error" and left the socket open
(a binary frame) or closed with 1011 (an unknown path). So the application's codes are in
the private-use range 4000-4999, as 4000 + the HTTP status that says the same thing (4404
was already the unknown room's): a client reads them as it would the HTTP answer. 1009
(message too big) stays: autobahn itself sends it, from the frame's header."""

from __future__ import annotations

NOT_FOUND = 4404  # no such room, or no websocket at this path
UNSUPPORTED = 4415  # a binary frame: this protocol is JSON text
NOT_READING = 4408  # the client did not read: its unsent messages passed the bound
TOO_MANY = 4429  # this address already has PLAYGROUND_MAX_SOCKETS_PER_ADDRESS sockets

MEANING = {
    NOT_FOUND: "no such room (or no websocket at this path)",
    UNSUPPORTED: "binary frames are not part of this protocol (JSON text only)",
    NOT_READING: "the client did not read what the server sent; reconnect for a fresh snapshot",
    TOO_MANY: "too many live sockets from this address (PLAYGROUND_MAX_SOCKETS_PER_ADDRESS)",
}
