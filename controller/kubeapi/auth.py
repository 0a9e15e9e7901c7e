"""Who a bearer token is in a room: its operator (the room's operator token, as on the page)
or a viewer (a token derived from the room's address and the server's secret key, so it
needs no storage and names one room). Any other token, another room's included, is refused
with 401. What each may do (RBAC's words): viewers get, list and watch; operators also
patch, delete and create evictions, as the page's operator buttons."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings

from ..models import Room
from .errors import forbidden, unauthorized

VIEWER, OPERATOR = "viewer", "operator"
READ_VERBS = frozenset({"get", "list", "watch"})
OPERATOR_VERBS = READ_VERBS | {"patch", "update", "delete", "create"}


def viewer_token(room: Room) -> str:
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"kubeapi-viewer:{room.slug}".encode(), hashlib.sha256).hexdigest()[:40]


def role_of(room: Room, authorization: str) -> str:
    """The role of ``Authorization: Bearer <token>`` in ``room``; 401 otherwise."""
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise unauthorized()
    if secrets.compare_digest(token.encode(), room.operator_token.encode()):
        return OPERATOR
    if secrets.compare_digest(token.encode(), viewer_token(room).encode()):
        return VIEWER
    raise unauthorized()


def user_of(room: Room, role: str) -> str:
    return f"playground:{room.slug}:{role}"


def allowed(role: str, verb: str) -> bool:
    return verb in (OPERATOR_VERBS if role == OPERATOR else READ_VERBS)


def check(room: Room, role: str, verb: str, group: str, resource: str, name: str) -> None:
    if not allowed(role, verb):
        raise forbidden(
            user_of(room, role),
            verb,
            group,
            resource,
            name,
            "a viewer's token reads only; the room's operator token may change the cluster",
        )
