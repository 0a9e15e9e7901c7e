"""The server's own cost of ``kubectl get pods -A`` (issue #36), in process and without the
network: the requests kubectl makes (a Table, ``limit=500``, then each ``continue`` token
until the last page) answered by the API's view one after the other, with the CPU seconds of
each page (``time.process_time``: a loaded machine's wall time is not) and a digest of every
page's bytes (two runs of the same room and requests must give the same digest).

``python -m controller.bench.listcost NODES [PODS_PER_NODE] [--profile=cold|warm]`` builds a room of
that size in a fresh SQLite file with its own redis-server, and prints the figures (JSON)."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from typing import Any
from unittest import mock

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def paged_list(
    room: Any, token: str, accept: str = TABLE_ACCEPT, limit: int = 500, path: str = "api/v1/pods"
) -> dict[str, Any]:
    """Every page of the list as kubectl asks for it (``limit`` 0: the whole list at once),
    answered at a fixed wall instant: CPU seconds of the answers (the view's, not this
    client's) in all and of the slowest page, pages, rows,
    bytes, a sha256 of the pages' bodies in order, and the rows (or items) themselves."""
    import orjson
    from django.test import RequestFactory

    from ..kubeapi import objects, views

    factory = RequestFactory()
    fixed = datetime(2026, 1, 1, tzinfo=UTC)  # the same wall instant: the same bytes
    digest = hashlib.sha256()
    pages, size, worst, cpu = 0, 0, 0.0, 0.0
    rows: list[Any] = []
    cont = ""
    while True:
        query: dict[str, Any] = {"limit": str(limit)} if limit else {}
        if cont:
            query["continue"] = cont
        request = factory.get(
            f"/k8s/rooms/{room.slug}/{path}",
            query,
            HTTP_ACCEPT=accept,
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        p0 = time.process_time()
        with mock.patch.object(objects, "now_clock", lambda s: objects.Clock(s, fixed)):
            answer = views._answer(request, room.slug, path.split("/"))
        body = answer.content  # type: ignore[union-attr]
        spent = time.process_time() - p0
        cpu += spent
        worst = max(worst, spent)
        assert answer.status_code == 200, body[:300]
        digest.update(body)
        size += len(body)
        pages += 1
        doc = orjson.loads(body)
        rows += doc.get("rows", doc.get("items", []))
        cont = doc["metadata"].get("continue", "")
        if not cont:
            break
    return {
        "pages": pages,
        "rows": len(rows),
        "bytes": size,
        "cpu_s": round(cpu, 3),
        "cpu_per_page_ms": round(1000 * cpu / pages, 2),
        "worst_page_ms": round(1000 * worst, 2),
        "sha256": digest.hexdigest(),
        "listed": rows,
    }


def build_room(nodes: int, pods_per_node: int) -> str:
    """A room of ``nodes`` nodes at its t=0 state (live_scenario, no outage); its slug."""
    from django.test.utils import override_settings

    from ..engine.scenario import documents
    from ..rooms import create
    from .scenarios import live_scenario

    text = live_scenario(nodes, pods_per_node, f"listcost-{nodes}", None)
    documents.MAX_SCENARIO_BYTES = max(documents.MAX_SCENARIO_BYTES, 2 * len(text))
    with override_settings(PLAYGROUND_MAX_SCENARIO_BYTES=2 * len(text)):
        return create.room_create(f"listcost-{nodes}", text, None, 10.0).slug


def measure(slug: str, profile: str = "") -> dict[str, Any]:
    """The room ``slug``'s pods listed as a Table twice (the first walk finds this process's
    caches cold, as Daphne's are for a room a worker built; the second warm), then as a
    PodList. ``profile`` "cold" or "warm": that walk's cProfile printed (by own time)."""
    import cProfile
    import gc
    import pstats

    from ..kubeapi import auth
    from ..models import Room

    room = Room.objects.get(slug=slug)
    token = auth.viewer_token(room)
    out: dict[str, Any] = {"pods": room.views.filter(kind="pod").count()}

    def walk(accept: str = TABLE_ACCEPT) -> dict[str, Any]:
        gc.collect()  # each walk starts with the same garbage: none
        found = paged_list(room, token, accept)
        del found["listed"]
        return found

    for name in ("cold", "warm"):
        prof = cProfile.Profile() if profile == name else None
        if prof is not None:
            prof.enable()
        out[f"table_{name}"] = walk()
        if prof is not None:
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    out["podlist"] = walk("application/json")
    return out


def _main() -> None:
    """NODES [PODS_PER_NODE] [--profile=cold|warm] [--db=DIR]: the room is built by a child
    process (this one then holds what Daphne would: no engine) into DIR's SQLite file (kept:
    a later run with the same DIR measures the same room again; a temp dir by default)."""
    import json
    import os
    import shutil
    import socket
    import subprocess
    import sys
    import tempfile

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    nodes = int(args[0]) if args else 1000
    per_node = int(args[1]) if len(args) > 1 else 30
    work = opts.get("db") or tempfile.mkdtemp(prefix="listcost-")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "db.sqlite3")
    built = os.path.exists(db)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    redis_bin = shutil.which("redis-server") or "redis-server"
    cmd = [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", work]
    redis = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    try:
        import django

        django.setup()
        if "--build" in sys.argv:
            print(build_room(nodes, per_node))
            return
        from django.core.management import call_command

        if not built:
            call_command("migrate", verbosity=0, interactive=False)
            child = [sys.executable, "-m", "controller.bench.listcost", *args, f"--db={work}"]
            child.append("--build")
            subprocess.run(child, check=True, env=os.environ.copy(), stdout=subprocess.DEVNULL)
        out = {"nodes": nodes, **measure(f"listcost-{nodes}", opts.get("profile", ""))}
        print(json.dumps(out))
    finally:
        redis.kill()
        if not opts.get("db"):
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    _main()
