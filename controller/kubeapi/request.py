"""What a request to a room's API asks for: the path parsed into group, version, resource,
namespace, name and subresource (k8s.io/apiserver/pkg/endpoints/request.RequestInfoFactory),
the answer's form from the Accept header, list options bounded where they enter."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import orjson

from . import discovery
from .errors import ApiError, bad_request, gone, not_acceptable

MAX_LIMIT = 100_000


@dataclass(frozen=True)
class Target:
    group: str
    version: str
    resource: str
    namespace: str | None
    name: str | None
    sub: str | None
    info: discovery.Resource


def not_found_path() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def parse_path(parts: list[str]) -> Target:
    """``api/v1/...`` or ``apis/<group>/<version>/...`` past the discovery documents."""
    if parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    else:
        group, version, rest = parts[1], parts[2], parts[3:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    elif len(rest) in (1, 2) and rest[0] == "namespaces" and group == "":
        pass  # the namespaces resource itself
    if not rest or len(rest) > 3:
        raise not_found_path()
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    info = discovery.find(group, version, resource)
    if info is None or (sub is not None and sub not in info.subresources):
        raise not_found_path()
    if namespace is not None and not info.namespaced:
        raise not_found_path()
    for value in (namespace, name):
        if value is not None and (not value or len(value) > 253):
            raise not_found_path()
    return Target(group, version, resource, namespace, name, sub, info)


def wants_table(accept: str) -> str | None:
    """``v1``/``v1beta1`` when the Accept's first acceptable entry is meta.k8s.io's Table,
    ``""`` for plain JSON (protobuf is not spoken: a JSON entry after it is taken); 406
    when nothing acceptable is offered."""
    if not accept.strip():
        return ""
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        p = dict(x.split("=", 1) for x in params if "=" in x)
        if media not in ("application/json", "*/*", "application/*"):
            continue
        if (
            p.get("as") == "Table"
            and p.get("g") == "meta.k8s.io"
            and p.get("v") in ("v1", "v1beta1")
        ):
            return p["v"]
        if "as" not in p:
            return ""
    raise not_acceptable(accept)


def int_param(query: Any, name: str, low: int, high: int) -> int | None:
    raw = query.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name}: must be an integer, got {raw[:40]!r}") from None
    if not low <= value <= high:
        raise bad_request(f"{name}: must be from {low} to {high}, got {value}")
    return value


def continue_token(rv: int, after: str, counts: tuple[int, int] | None = None) -> str:
    """The next page's token; ``counts`` (served so far, the list's total at its first page):
    the next page's remainingItemCount without counting the rows again (a 150,000-pod list
    in 300 pages counted the rest of the room at each page)."""
    body: dict[str, Any] = {"v": "meta.k8s.io/v1", "rv": rv, "start": after}
    if counts is not None:
        body["n"], body["total"] = counts
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode()


def continue_counts(token: str) -> tuple[int, int] | None:
    """The counts a token carries (served so far, total), None without (or not sound)."""
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        served, total = data["n"], data["total"]
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (served, total)):
        return None
    return (served, total) if 0 <= served <= total <= 10**9 else None


def parse_continue(token: str, history_start: int) -> tuple[int, str]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        rv, start = int(data["rv"]), str(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise bad_request("continue key is not valid: not a token this server gave") from None
    if rv < history_start:
        raise gone(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
        )
    return rv, start
