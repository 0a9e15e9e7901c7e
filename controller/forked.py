"""Work done by a forked child while the parent goes on (issue #14, "Fast big rooms").

Storing a big room's first rows is two independent jobs: encoding its timeline (935,000
events at 5,000 nodes: ~0.9 s of orjson and zlib) and building and inserting its views
(~1.6 s). The worker is one process whose threads share one core (the GIL), so the second
core only helps through a second process: ``os.fork`` copies the parent's memory
copy-on-write, the child computes ``fn(*args)`` (bytes), writes it to an anonymous temporary
file and exits with ``os._exit``, never touching the parent's database connection, Redis,
logging or locks (controller/snapshots.py does the same for engine snapshots). The parent
calls ``result()`` when it needs the bytes; a child that failed is logged and the work is
done again in the parent, so the outcome never depends on the fork.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import tempfile
from collections.abc import Callable
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

# Signals whose parent's handlers (Celery's, Daphne's) must not run in the child.
_CHILD_DEFAULT_SIGNALS = ("SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2")


def can_fork() -> bool:
    """Forking is allowed (PLAYGROUND_STORE_FORK) and possible here (os.fork)."""
    return bool(settings.PLAYGROUND_STORE_FORK) and hasattr(os, "fork")


class Forked:
    """``fn(*args)`` (which returns bytes) computed in a forked child, or in the parent when
    forking is off, impossible, or the child fails."""

    def __init__(self, fn: Callable[..., bytes], *args: Any) -> None:
        self.fn, self.args = fn, args
        self.pid = 0
        self.file: Any = None
        self.forked = False  # whether the result came from the child
        if not can_fork():
            return
        self.file = tempfile.TemporaryFile(prefix="playground-forked-")  # noqa: SIM115
        try:
            pid = os.fork()
        except OSError:
            log.exception("could not fork: %s is done in this process", fn.__qualname__)
            self.file.close()
            self.file = None
            return
        if pid == 0:
            self._child()  # never returns
        self.pid = pid

    def _child(self) -> None:
        code = 1
        try:
            for name in _CHILD_DEFAULT_SIGNALS:
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            gc.disable()  # a collection would touch (copy) every page for nothing
            view = memoryview(self.fn(*self.args))
            fd = self.file.fileno()
            while view:
                view = view[os.write(fd, view) :]
            code = 0
        except BaseException:  # the exit code tells the parent
            code = 1
        finally:
            os._exit(code)

    def result(self) -> bytes:
        """The bytes: the child's when it succeeded (waiting for it), else computed here."""
        if self.pid:
            try:
                _pid, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped by someone else: its result is unknown
                status = -1
            self.pid = 0
            try:
                if status == 0:
                    self.file.seek(0)
                    self.forked = True
                    return self.file.read()
                log.error(
                    "the child computing %s failed (wait status %s): done in this process",
                    self.fn.__qualname__,
                    status,
                )
            finally:
                self.file.close()
                self.file = None
        return self.fn(*self.args)

    def close(self) -> None:
        """The result is not wanted (the caller failed): reap the child, drop its file."""
        if self.pid:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        if self.file is not None:
            self.file.close()
            self.file = None

    def __del__(self) -> None:  # never leave a zombie behind
        self.close()
