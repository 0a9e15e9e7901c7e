"""The pages of a list (issue #36, list speed): ``kubectl get pods -A``'s paged walk
(a Table, or a PodList, ``limit`` then each ``continue`` token) gives, page after page, the
rows of the unpaged list in the same order, and a second walk of the same room at the same
instant gives the same bytes (the caches that make a walk fast change no byte)."""

from __future__ import annotations

import pytest

from controller.bench.listcost import TABLE_ACCEPT, paged_list
from controller.kubeapi import auth
from controller.models import Room
from controller.rooms import create
from tests.app.test_kubeapi_kubectl import SCENARIO


@pytest.fixture
def room(transactional_db: None) -> Room:
    return create.room_create("pages", SCENARIO, None, 10.0)


@pytest.mark.parametrize("accept", [TABLE_ACCEPT, "application/json"])
def test_the_pages_of_a_list_are_the_whole_list_and_the_same_bytes_again(
    room: Room, accept: str
) -> None:
    token = auth.viewer_token(room)
    whole = paged_list(room, token, accept, limit=0)
    assert whole["pages"] == 1 and whole["rows"] > 4
    first = paged_list(room, token, accept, limit=2)
    assert first["pages"] == (whole["rows"] + 1) // 2
    assert first["listed"] == whole["listed"]
    again = paged_list(room, token, accept, limit=2)
    assert again["sha256"] == first["sha256"] and again["bytes"] == first["bytes"]
    # Another page size walks the same rows.
    assert paged_list(room, token, accept, limit=3)["listed"] == whole["listed"]
