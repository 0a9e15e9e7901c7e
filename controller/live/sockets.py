"""What one client may hold of a Daphne process's websockets (issue #35).

- Live sockets per client address (PLAYGROUND_MAX_SOCKETS_PER_ADDRESS, counted in this
  process: the consumers of one Daphne share its event loop): one more is accepted and closed
  at once with 4429 (codes.TOO_MANY), before it costs a database read or a snapshot. The
  address is the client's, or with ``--proxy-headers`` the one the proxy saw. With several
  Daphne processes behind a proxy each counts its own.
- ``WIRE``: the scope key of the socket's sending state, set by playground.wslimits.WireScope
  under Daphne (absent under Channels' test communicator): the consumer refuses a snapshot
  while the previous one is still being sent."""

from __future__ import annotations

from collections import Counter

from django.conf import settings

WIRE = "playground.wire"

_open: Counter[str] = Counter()


def admit(address: str) -> bool:
    """Count one more socket of ``address``; False (nothing counted) when it has its cap."""
    cap = int(settings.PLAYGROUND_MAX_SOCKETS_PER_ADDRESS)
    if cap > 0 and _open[address] >= cap:
        return False
    _open[address] += 1
    return True


def release(address: str) -> None:
    _open[address] -= 1
    if _open[address] <= 0:
        del _open[address]


def open_sockets(address: str) -> int:
    return _open[address]
