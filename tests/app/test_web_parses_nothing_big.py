"""Issue #35, attack 4: four What-if POSTs on one's own 1,500-node import took 23 s of Daphne's
CPU and grew it by 365 MiB, because the web process parsed the room's whole scenario for each
of them (and for each page view of an imported room) only to list its zones and nodes. The
choices are kept when the room's scenario is stored (rooms/whatif.py ``remember_choices``), in
the request that creates a small room or in the heavy worker that builds a big one; the web
process reads them. Real Redis; the parser is made to fail in the web's path to prove it."""

from __future__ import annotations

import io

import pytest

from controller.locks import redis_client
from controller.models import Room
from controller.rooms import build, whatif
from tests.app.test_import_export import THREE_ZONES, _room


def _no_parsing(monkeypatch) -> None:
    def refuse(text: str):
        raise AssertionError("the web process parsed the room's scenario")

    monkeypatch.setattr(whatif, "load_scenario", refuse)


def test_what_if_and_the_room_page_read_the_kept_choices(
    client, transactional_db, redis_server, monkeypatch
) -> None:
    room = _room()
    _no_parsing(monkeypatch)
    page = client.get(f"/rooms/{room.slug}/?token={room.operator_token}")
    assert page.status_code == 200
    assert b"eu-west-1b" in page.content  # the What-if form's zone choices
    answer = client.post(
        f"/rooms/{room.slug}/whatif", {"zone": "eu-west-1b", "token": room.operator_token}
    )
    assert answer.status_code == 200, answer.content
    refused = client.post(
        f"/rooms/{room.slug}/whatif", {"zone": "nowhere", "token": room.operator_token}
    )
    assert refused.status_code == 400 and b'unknown zone \\"nowhere\\"' in refused.content


def test_a_big_import_built_by_the_worker_keeps_its_choices(
    transactional_db, redis_server, monkeypatch
) -> None:
    room = build.import_start("shop", THREE_ZONES, {}, None, 10.0, inline_max_chars=0)
    assert room.build_state == Room.BUILDING and not room.scenario_yaml
    build.room_build(room.pk)  # the heavy worker's task, here
    room = Room.objects.get(pk=room.pk)
    assert room.build_state == Room.LIVE
    _no_parsing(monkeypatch)
    choices = whatif.what_if_choices(room)
    assert choices["zones"] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert len(choices["nodes"]) == 6


def test_choices_are_worked_out_again_when_redis_lost_them(transactional_db, redis_server) -> None:
    room = _room()
    redis_client().delete(*redis_client().keys("playground:whatif-choices:*"))
    assert "eu-west-1b" in whatif.what_if_choices(room)["zones"]
    assert redis_client().keys("playground:whatif-choices:*")


@pytest.fixture(autouse=True)
def _fresh_choices(redis_server):
    yield
    client = redis_client()
    keys = client.keys("playground:whatif-choices:*")
    if keys:
        client.delete(*keys)


def _spy_on_upload_reads(monkeypatch) -> list[int]:
    """Every read of an uploaded file from now on: its size (a whole read: minus what it got)."""
    from django.core.files import utils

    reads: list[int] = []
    plain = utils.FileProxyMixin.read

    def spied(self):
        inner = plain.fget(self)

        def read(size: int = -1) -> bytes:
            got = inner(size)
            reads.append(size if size is not None and size >= 0 else -len(got))
            return got

        return read

    monkeypatch.setattr(utils.FileProxyMixin, "read", property(spied))
    return reads


def test_a_long_upload_goes_to_the_preview_worker_a_piece_at_a_time(
    client, transactional_db, redis_server, monkeypatch
) -> None:
    """Attack 3: the web process copies a long uploaded kubectl List to Redis in pieces of
    UPLOAD_PIECE bytes; it never reads it whole (nor decodes it: the worker does)."""
    from controller.bench.kubectl_list import big_kubectl_list
    from controller.rooms import imports

    reads = _spy_on_upload_reads(monkeypatch)
    text = big_kubectl_list(60, 25, "yaml")  # ~2 MiB
    assert len(text) > 4 * 512 * 1024
    upload = io.BytesIO(text.encode())
    upload.name = "cluster.yaml"
    form = {"imp-speed": "10", "imp-name": "", "imp-flags": "", "imp-upload": upload}
    answer = client.post("/", {**form, "preview": "1"}, REMOTE_ADDR="10.0.0.9")
    assert answer.status_code == 302, answer.content[:300]
    preview_id = answer["Location"].rstrip("/").split("/")[-1]
    assert reads and all(0 <= size <= imports.UPLOAD_PIECE for size in reads), reads
    kept = imports.preview_form(preview_id)
    assert kept is not None and kept[0] == text
    assert imports.preview_state(preview_id)["size"] == len(text.encode())


def test_with_debug_a_big_import_s_sql_is_not_kept_in_the_web_process(
    transactional_db, redis_server, settings
) -> None:
    """Attack 4: with DEBUG (make run's default) Django kept every query's SQL with its
    parameters written in, the INSERT of a long kubectl List included (16.6 MiB per thread
    that made one). Queries are kept only where a tool forces it (controller/apps.py)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from controller.bench.kubectl_list import big_kubectl_list

    settings.DEBUG = True
    connection.queries_log.clear()
    text = big_kubectl_list(40, 25, "json")
    room = build.import_start("shop", text, {}, None, 10.0, inline_max_chars=0)
    assert room.build_state == Room.BUILDING
    assert sum(len(q["sql"]) for q in connection.queries) < 64 * 1024
    with CaptureQueriesContext(connection) as forced:  # a tool that asks still gets them
        Room.objects.filter(pk=room.pk).count()
    assert len(forced.captured_queries) == 1


def test_a_long_upload_to_import_is_stored_a_piece_at_a_time(
    client, transactional_db, redis_server, monkeypatch
) -> None:
    """Attack 4's import: a long uploaded List for "create" goes into its PendingImport row
    a piece at a time (the database appends each), as the form would have decoded it whole:
    UTF-8 across the pieces' edges, a bad byte replaced."""
    from controller import forms
    from controller.bench.kubectl_list import big_kubectl_list
    from controller.models import PendingImport
    from controller.rooms import imports

    # A long upload at a small scale: many pieces, some of their edges inside a character.
    monkeypatch.setattr(forms, "UPLOAD_READ_MAX", 20_000)
    monkeypatch.setattr(imports, "UPLOAD_PIECE", 1000)
    reads = _spy_on_upload_reads(monkeypatch)
    raw = big_kubectl_list(3, 5, "yaml").encode()
    raw = raw.replace(b"kind: Pod\n", "kind: Pod # ünïcödé ✓ 🚀\n".encode()) + b"# \xff\n"
    assert len(raw) > 20_000 and raw.count("🚀".encode()) >= 10
    upload = io.BytesIO(raw)
    upload.name = "cluster.yaml"
    form = {"imp-speed": "10", "imp-name": "", "imp-flags": "", "imp-upload": upload}
    answer = client.post("/", form, REMOTE_ADDR="10.0.0.8")
    assert answer.status_code == 302, answer.content[:300]
    assert reads and all(0 <= size <= 1000 for size in reads), reads[:10]
    room = Room.objects.get(slug=answer["Location"].split("/")[2])
    assert room.build_state == Room.BUILDING
    stored = PendingImport.objects.get(room=room).text
    assert stored == raw.decode("utf-8", errors="replace")
