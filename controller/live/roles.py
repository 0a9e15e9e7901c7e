"""Who may act in a room: the owner, staff, or whoever holds the operator token."""

from __future__ import annotations

import secrets
from typing import Any

from ..models import Room


def is_operator(room: Room, user: Any, token: str) -> bool:
    if token and secrets.compare_digest(token, room.operator_token):
        return True
    if user is not None and getattr(user, "is_authenticated", False):
        return bool(user.is_staff or (room.owner_id is not None and room.owner_id == user.pk))
    return False
