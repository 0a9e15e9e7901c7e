"""Write the supervisord configuration for `make run` (scripts/run.sh) and print its path.

supervisord runs Daphne (WEB_PROCESSES of them, on WEB_PORT, WEB_PORT+1, ...), the Celery
tick workers (WORKER_PROCESSES), the heavy workers (HEAVY_WORKER_PROCESSES, each running
HEAVY_WORKER_CONCURRENCY jobs at once: room builds, imports, previews, what-ifs, apart from the
ticks; playground/workers.py) and one beat in the foreground; it restarts any of them that exits
(a crash, a kill -9) at once, leaving the others running, and Ctrl-C stops them all. Every
process waits for Redis first (scripts/redis_url.py wait). BEHIND_PROXY=1 (the default with
more than one Daphne, which needs a proxy in front) runs Daphne with --proxy-headers, so that
the client's address (rate limits, a room's owner) is the one the proxy saw, from
X-Forwarded-For; without a proxy that header would be the client's own word and is ignored.

    python scripts/supervisor_conf.py RUN_DIR     # writes RUN_DIR/supervisord.conf
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from playground.workers import (  # noqa: E402  (no Django: the worker command lines only)
    HEAVY_CONCURRENCY,
    HEAVY_MAX_MEMORY_MB,
    heavy_worker_args,
    tick_worker_args,
)


def program(name: str, command: str, run_dir: Path) -> str:
    wait = f"{REPO}/.venv/bin/python {REPO}/scripts/redis_url.py wait 3600"
    return f"""
[program:{name}]
command=bash -c {shlex.quote(f"{wait} && exec {command}")}
directory={REPO}
autostart=true
; a process that exits for any reason (a crash, kill -9) is started again at once
autorestart=true
startsecs=1
startretries=1000000
stopasgroup=true
killasgroup=true
stopwaitsecs=10
redirect_stderr=true
stdout_logfile=/dev/stdout
stdout_logfile_maxbytes=0
"""


def config(run_dir: Path, env: dict[str, str]) -> str:
    webs = int(env.get("WEB_PROCESSES") or 1)
    workers = int(env.get("WORKER_PROCESSES") or 1)
    port = int(env.get("WEB_PORT") or 8000)
    bind = env.get("WEB_BIND") or "127.0.0.1"
    level = env.get("CELERY_LOG_LEVEL") or "WARNING"
    proxy = env.get("BEHIND_PROXY", "1" if webs > 1 else "0") == "1"
    bin_ = f"{REPO}/.venv/bin"
    out = f"""; Written by scripts/supervisor_conf.py for `make run`; do not edit (it is rewritten).
[supervisord]
nodaemon=true
logfile={run_dir}/supervisord.log
pidfile={run_dir}/supervisord.pid
childlogdir={run_dir}
loglevel=warn

[unix_http_server]
file={run_dir}/supervisor.sock
chmod=0700

[supervisorctl]
serverurl=unix://{run_dir}/supervisor.sock

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface
"""
    # The rooms' Kubernetes API over https (kubectl sends a bearer token over https only):
    # the first Daphne also listens on KUBEAPI_PORT (0: not at all) with the certificate
    # controller/kubeapi/tls.py makes once into KUBEAPI_TLS_DIR.
    kube_port = int(env.get("KUBEAPI_PORT") or port + 443)
    tls_flags = ""
    if kube_port:
        sys.path.insert(0, str(REPO))
        from controller.kubeapi import tls

        tls_dir = tls.ensure(Path(env.get("KUBEAPI_TLS_DIR") or run_dir / "kubeapi-tls"))
        tls_flags = f" -e {shlex.quote(tls.endpoint(tls_dir, kube_port, bind))}"
    for i in range(webs):
        flags = " --proxy-headers" if proxy else ""
        if i == 0:
            flags += tls_flags
        out += program(
            f"web-{i}",
            f"{bin_}/daphne -b {bind} -p {port + i}{flags} playground.asgi:application",
            run_dir,
        )
    celery = f"{bin_}/celery -A playground"
    for i in range(1, workers + 1):
        args = tick_worker_args(f"worker-{i}@%%h", loglevel=level)
        out += program(f"worker-{i}", f"{celery} {shlex.join(args)}", run_dir)
    heavies = int(env.get("HEAVY_WORKER_PROCESSES") or 1)
    concurrency = int(env.get("HEAVY_WORKER_CONCURRENCY") or HEAVY_CONCURRENCY)
    memory = int(env.get("HEAVY_WORKER_MAX_MEMORY_MB") or HEAVY_MAX_MEMORY_MB)
    for i in range(1, heavies + 1):
        args = heavy_worker_args(f"heavy-{i}@%%h", concurrency, level, memory)
        out += program(f"heavy-{i}", f"{celery} {shlex.join(args)}", run_dir)
    out += program(
        "beat",
        f"{bin_}/celery -A playground beat --loglevel={level} "
        f"--schedule={run_dir}/celerybeat-schedule",
        run_dir,
    )
    return out


def main() -> None:
    run_dir = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / ".run").resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "supervisord.conf"
    path.write_text(config(run_dir, dict(os.environ)))
    print(path)


if __name__ == "__main__":
    main()
