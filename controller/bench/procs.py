"""Real processes of the stack (Daphne, Celery workers, beat) started by the fault tests and
the ``manage.py bench`` rows that need them: each one a subprocess of this Python with the
given environment, its output in a log file shown when it does not come up."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no log)"


class Proc:
    """A subprocess that can be killed (SIGKILL: no goodbye) and started again. ``start``
    waits until it is ready; one that does not come up is killed, not left running."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def args(self) -> list[str]:
        raise NotImplementedError

    def wait_ready(self, timeout: float) -> None:
        """Return once the process serves; RuntimeError (with its log) if it does not."""

    def start(self, timeout: float = 30.0) -> None:
        self.proc = spawn(self.args(), self.env, self.log)
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.kill()
            raise

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=15)
            self.proc = None


class Daphne(Proc):
    """``daphne playground.asgi:application`` on 127.0.0.1:``port`` (the same port after a
    restart, as behind a proxy)."""

    def __init__(self, env: dict[str, str], log: Path, port: int | None = None) -> None:
        super().__init__(env, log)
        self.port = port or free_port()

    def args(self) -> list[str]:
        return ["-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)] + [
            "playground.asgi:application"
        ]

    def wait_ready(self, timeout: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # it answers (unhealthy is still an answer)
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(
            f"Daphne did not answer on port {self.port}; its log:\n{_tail(self.log)}"
        )


class CeleryWorker(Proc):
    """``celery worker`` (threads pool) named ``<name>@<host>``; ready when it answers a
    ping."""

    def __init__(self, env: dict[str, str], log: Path, concurrency: int = 4) -> None:
        super().__init__(env, log)
        self.name = ""
        self.concurrency = concurrency

    def args(self) -> list[str]:
        self.name = f"w{time.monotonic_ns()}"
        return ["-m", "celery", "-A", "playground", "worker", "--pool=threads"] + [
            f"--concurrency={self.concurrency}",
            "--loglevel=WARNING",
            "-n",
            f"{self.name}@%h",
        ]

    def wait_ready(self, timeout: float) -> None:
        from playground.celery import app

        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            replies = app.control.ping(timeout=0.5)
            if any(n.startswith(f"{self.name}@") for reply in replies for n in reply):
                return
            if self.proc.poll() is not None:
                break
        raise RuntimeError(f"the Celery worker did not answer a ping; its log:\n{_tail(self.log)}")


class Beat(Proc):
    """``celery beat`` with its own schedule file (two beats can run at once)."""

    def args(self) -> list[str]:
        schedule = self.log.with_suffix(".schedule")
        return ["-m", "celery", "-A", "playground", "beat", "--loglevel=WARNING"] + [
            f"--schedule={schedule}"
        ]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (and its reaped children), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After "pid (comm)": state is field 0; utime, stime, cutime, cstime are 11..14.
    ticks = sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")
