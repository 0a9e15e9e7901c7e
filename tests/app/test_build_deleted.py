"""A room deleted in the admin while a worker builds it (issue #35): the build ends cleanly,
with one line saying so, and stores nothing (before: a KeyError traceback in the worker's log,
``locked[room.pk]`` of a room no longer there)."""

from __future__ import annotations

import logging

import pytest

from controller.models import Room, TimelineEvent
from controller.rooms import build, catalog

SINGLE = (catalog.BUILTIN_DIR / "01-single-node-failure.yaml").read_text()


@pytest.mark.parametrize("when", ["creating", "storing"])
def test_a_room_deleted_in_the_admin_during_its_build_ends_cleanly(
    admin_client, db, redis_server, caplog, monkeypatch, when: str
) -> None:
    room = build.room_start("big", SINGLE, inline_max=0)  # stored "building", its build queued
    assert Room.objects.get(pk=room.pk).build_state == Room.BUILDING
    progress = build._progress

    def admin_deletes_it(room_id: int, message: str) -> None:
        progress(room_id, message)
        if message.startswith(when) and Room.objects.filter(pk=room_id).exists():
            response = admin_client.post(
                f"/admin/controller/room/{room_id}/delete/", {"post": "yes"}
            )
            assert response.status_code == 302, response.content[:300]

    monkeypatch.setattr(build, "_progress", admin_deletes_it)
    with caplog.at_level(logging.INFO, logger="controller.rooms.build"):
        build.room_build(room.pk)  # raised nothing before either: it logged a KeyError
    assert not Room.objects.filter(pk=room.pk).exists()
    assert not TimelineEvent.objects.filter(room_id=room.pk).exists()
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]
    assert any("deleted during its build" in r.getMessage() for r in caplog.records)
