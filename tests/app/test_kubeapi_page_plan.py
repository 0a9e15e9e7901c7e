"""A page of a list is read from the database's index in key order, not sorted: at 150,000
pods a sort per page of 500 is 300 sorts of the room's pods. On PostgreSQL the pages compare
keys in the "C" collation (Python's order), which only an index of that collation serves
(migration 0016); the unique (room, kind, key) index has the database's own collation."""

from __future__ import annotations

import pytest
from django.db import connection

from controller.kubeapi.store import Read
from controller.models import Room
from controller.rooms import create
from tests.app.test_kubeapi_kubectl import SCENARIO


@pytest.fixture
def room(transactional_db: None) -> Room:
    return create.room_create("plan", SCENARIO, None, 10.0)


def _plan(sql: str, params: list[object]) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET enable_seqscan = off")  # a small table: show the index's use
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(r[0] for r in cursor.fetchall())
            cursor.execute("RESET enable_seqscan")
            return plan
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(str(r[-1]) for r in cursor.fetchall())


@pytest.mark.parametrize("after", ["", "default/a"])
def test_a_page_is_read_in_index_order_not_sorted(room: Room, after: str) -> None:
    store = Read.of(room)
    sql, params = store.page_sql("pod", after, 500)
    plan = _plan(sql, params)
    assert "Sort" not in plan and "TEMP B-TREE" not in plan, plan
    assert "Index" in plan or "INDEX" in plan, plan
    # And it is the page: keys in code-point order.
    keys = list(store.page_texts("pod", after, 500))
    assert keys == sorted(keys) and keys
