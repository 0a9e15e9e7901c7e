"""Real processes of the stack (redis-server, Daphne, Celery workers, beat) started by the
fault tests and the benchmarks that need them (``manage.py bench``, ``pagebench``): each one a
subprocess with the given environment, its output in a log file shown when it does not come
up."""

from __future__ import annotations

import contextlib
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


class BenchError(RuntimeError):
    """A process of the stack does not come up (with its log), or a program is missing; the
    management commands show its message."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(
    command: list[str], env: dict[str, str], log: Path | None, session: bool = False
) -> subprocess.Popen[bytes]:
    """``command`` with its output appended to ``log`` (None: discarded); ``session``: in a
    session of its own, which a Ctrl-C in the terminal does not reach."""
    if log is None:
        return subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=session,
        )
    with log.open("ab") as out:
        return subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=session,
        )


def _tail(log: Path | None) -> str:
    try:
        return log.read_text(errors="replace")[-3000:] if log else "(no log)"
    except OSError:
        return "(no log)"


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    """Return once something listens on 127.0.0.1:``port``; BenchError if ``proc`` exits
    first or nothing listens after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{proc.args} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return
        except OSError:
            time.sleep(0.1)
    raise BenchError(f"nothing listens on port {port} after {timeout:g} s")


class Proc:
    """A subprocess that can be killed (SIGKILL: no goodbye) and started again. ``start``
    waits until it is ready; one that does not come up is killed, not left running.
    ``session``: it runs in a session of its own (a Ctrl-C reaches the caller only), and a
    signal goes to its whole process group."""

    def __init__(self, env: dict[str, str], log: Path | None, session: bool = False) -> None:
        self.env = env
        self.log = log
        self.session = session
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def args(self) -> list[str]:
        raise NotImplementedError

    def command(self) -> list[str]:
        """What runs: this Python with ``args()``."""
        return [sys.executable, *self.args()]

    def wait_ready(self, timeout: float) -> None:
        """Return once the process serves; BenchError (with its log) if it does not."""

    def launch(self) -> None:
        """Start it without waiting for it to serve."""
        self.proc = spawn(self.command(), self.env, self.log, self.session)

    def start(self, timeout: float = 30.0) -> None:
        self.launch()
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.kill()
            raise

    def exited(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def send(self, sig: int) -> None:
        """Signal it (its process group when in its own session), if it still runs."""
        if self.proc is None or self.proc.poll() is not None:
            return
        if self.session:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)

    def reap(self, timeout: float = 15.0) -> None:
        """Wait for it to end; SIGKILL when it has not after ``timeout`` seconds."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.send(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.send(sig)
        self.reap()


class RedisServer(Proc):
    """``redis-server`` (the ``binary``) on 127.0.0.1:``port``, saving nothing, its files in
    ``workdir``; ready when it listens."""

    def __init__(
        self, binary: str, workdir: Path, env: dict[str, str], session: bool = False
    ) -> None:
        super().__init__(env, None, session)
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""] + [
            "--appendonly",
            "no",
            "--dir",
            str(self.workdir),
        ]

    def wait_ready(self, timeout: float) -> None:
        assert self.proc is not None
        wait_for_port(self.port, timeout, self.proc)


class Daphne(Proc):
    """``daphne playground.asgi:application`` on 127.0.0.1:``port`` (the same port after a
    restart, as behind a proxy); ready when ``/healthz`` answers, or (``probe=False``: no
    request of ours in its access log) when its port listens."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path | None,
        port: int | None = None,
        session: bool = False,
        probe: bool = True,
        tls_dir: Path | None = None,
    ) -> None:
        super().__init__(env, log, session)
        self.port = port or free_port()
        self.probe = probe
        # With ``tls_dir`` (controller/kubeapi/tls.py makes it): also https on ``tls_port``,
        # as `make run` serves the rooms' Kubernetes API.
        self.tls_dir = tls_dir
        self.tls_port = free_port() if tls_dir is not None else None

    def args(self) -> list[str]:
        extra: list[str] = []
        if self.tls_dir is not None and self.tls_port is not None:
            from controller.kubeapi import tls

            extra = ["-e", tls.endpoint(tls.ensure(self.tls_dir), self.tls_port)]
        return ["-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), *extra] + [
            "playground.asgi:application"
        ]

    def wait_ready(self, timeout: float) -> None:
        assert self.proc is not None
        if not self.probe:
            wait_for_port(self.port, timeout, self.proc)
            return
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
        raise BenchError(f"Daphne did not answer on port {self.port}; its log:\n{_tail(self.log)}")


class CeleryWorker(Proc):
    """A tick worker (``celery worker``, threads pool, the ticks' queue: playground/workers.py)
    named ``<name>@<host>``; ready when it answers a ping."""

    def __init__(
        self, env: dict[str, str], log: Path | None, concurrency: int = 4, session: bool = False
    ) -> None:
        super().__init__(env, log, session)
        self.name = ""
        self.concurrency = concurrency

    def args(self) -> list[str]:
        from playground.workers import tick_worker_args

        self.name = f"w{time.monotonic_ns()}"
        worker = tick_worker_args(f"{self.name}@%h", self.concurrency)
        return ["-m", "celery", "-A", "playground", *worker]

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
        raise BenchError(f"the Celery worker did not answer a ping; its log:\n{_tail(self.log)}")


class HeavyWorker(CeleryWorker):
    """A heavy worker (prefork pool, the "heavy" queue only: builds, imports, previews,
    what-ifs); in a session of its own, so that a kill reaches its pool's processes too."""

    def __init__(self, env: dict[str, str], log: Path | None, concurrency: int = 1) -> None:
        super().__init__(env, log, concurrency, session=True)

    def args(self) -> list[str]:
        from playground.workers import heavy_worker_args

        self.name = f"heavy{time.monotonic_ns()}"
        worker = heavy_worker_args(f"{self.name}@%h", self.concurrency)
        return ["-m", "celery", "-A", "playground", *worker]


class Beat(Proc):
    """``celery beat`` with its own schedule file (two beats can run at once)."""

    def args(self) -> list[str]:
        assert self.log is not None  # the schedule file sits beside it
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


def bytes_read(pid: int) -> int:
    """Bytes process ``pid`` has read through read(2) and its kind, sockets included (rchar of
    /proc/<pid>/io): what a server took off its connections, not what clients pushed."""
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0
