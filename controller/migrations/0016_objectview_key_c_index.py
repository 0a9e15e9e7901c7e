"""On PostgreSQL, an index of ObjectView's (room, kind, key) with the key in the "C" collation:
the Kubernetes API's list pages compare and order keys as Python does (kubeapi/store.py,
``Read.page_sql``: ``key COLLATE "C"``), which the unique (room, kind, key) index, in the
database's collation, cannot serve: each page of 500 sorted every pod of the room (at
150,000 pods, 300 sorts for one ``kubectl get pods -A``). SQLite compares bytes already
(its unique index serves the pages): nothing to do there."""

from __future__ import annotations

from typing import Any

from django.db import migrations

NAME = "view_key_c"


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f'CREATE INDEX IF NOT EXISTS {NAME} ON controller_objectview (room_id, kind, key COLLATE "C")'
    )


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [("controller", "0015_room_cost_expiry")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
