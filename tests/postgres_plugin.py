"""A pytest plugin (loaded with -p, like tests.redis_plugin, before pytest-django reads the
settings): with PLAYGROUND_DB=postgres the run gets a private, real PostgreSQL cluster
(Debian's postgresql package: initdb + postgres on a free loopback port, data and socket in a
temp dir, removed at the end) and DATABASE_URL points at it. pytest-django then creates its
test database there, which the Celery worker subprocesses share.

Without PLAYGROUND_DB=postgres (the default, ``sqlite``) this plugin does nothing. When run as
root, the server runs as the ``postgres`` user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Any


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found and name != "postgres":
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A private PostgreSQL cluster: ``start()`` runs initdb and the server, ``stop()`` ends
    it with a fast shutdown and removes its directory."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.dir = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.user = "postgres"

    @property
    def url(self) -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/playground"

    def _as_owner(self) -> dict[str, Any]:
        """Popen arguments that drop root to the ``postgres`` user (nothing otherwise)."""
        if os.geteuid() != 0:
            return {}
        import pwd

        pw = pwd.getpwnam("postgres")
        return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def start(self) -> None:
        initdb, postgres = _pg_bin("initdb"), _pg_bin("postgres")
        if not (initdb and postgres):
            raise RuntimeError(
                "PLAYGROUND_DB=postgres but PostgreSQL is not installed (apt-get install postgresql)"
            )
        self.dir = tempfile.mkdtemp(prefix="pg-postgres-")
        data, sock, log = (os.path.join(self.dir, n) for n in ("data", "sock", "server.log"))
        os.mkdir(sock)
        owner = self._as_owner()
        if owner:
            for path in (self.dir, sock):
                os.chown(path, owner["user"], owner["group"])
        subprocess.run(
            [initdb, "-D", data, "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=self.dir,
            **owner,
        )
        with open(log, "ab") as out:
            if owner:
                os.chown(log, owner["user"], owner["group"])
            self.proc = subprocess.Popen(
                [
                    postgres,
                    "-D",
                    data,
                    "-p",
                    str(self.port),
                    "-k",
                    sock,
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "max_connections=200",
                    # A throwaway cluster: durability off, speed on.
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
                **owner,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                import psycopg

                psycopg.connect(
                    host="127.0.0.1", port=self.port, user=self.user, dbname="postgres"
                ).close()
            except Exception:
                time.sleep(0.1)
                continue
            with psycopg.connect(
                host="127.0.0.1",
                port=self.port,
                user=self.user,
                dbname="postgres",
                autocommit=True,
            ) as conn:
                conn.execute("CREATE DATABASE playground")
            return
        with open(log, errors="replace") as f:
            tail = f.read()[-3000:]
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start; its log:\n{tail}")

    def version(self) -> str:
        import psycopg

        try:
            with psycopg.connect(
                host="127.0.0.1", port=self.port, user=self.user, dbname="postgres"
            ) as conn:
                row = conn.execute("SHOW server_version").fetchone()
        except Exception as exc:  # shown in the report header only
            return f"not answering ({exc})"
        return f"PostgreSQL {row[0] if row else '?'}, pid {self.proc.pid if self.proc else '?'}"

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)  # fast shutdown
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = ""


TEST_POSTGRES: PostgresServer | None = None
DB_CHOICE = os.environ.get("PLAYGROUND_DB", "sqlite").strip().lower() or "sqlite"
if DB_CHOICE not in ("sqlite", "postgres"):
    raise RuntimeError(f"PLAYGROUND_DB={DB_CHOICE!r}: expected sqlite or postgres")
if DB_CHOICE == "postgres":
    TEST_POSTGRES = PostgresServer()
    TEST_POSTGRES.start()
    atexit.register(TEST_POSTGRES.stop)
    os.environ["DATABASE_URL"] = TEST_POSTGRES.url
