"""The HTTP adapter of a room's Kubernetes API, under ``/k8s/rooms/<room>/``: discovery,
get and list (JSON or Table), watch (``watch.py``), writes (``writes.py``); every refusal a
``metav1.Status``. Authenticated by bearer token (``auth``); no cookie counts, so CSRF does
not apply."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from . import auth, discovery, printers, rowcache, selectors, store, watch, writes
from .answers import JSON, respond, status_response
from .errors import ApiError, method_not_allowed
from .request import (
    Target,
    continue_counts,
    continue_token,
    int_param,
    not_found_path,
    parse_continue,
    parse_path,
    wants_table,
)

log = logging.getLogger(__name__)
WRITE_WAIT_S = 20.0


@csrf_exempt
async def kube_api(request: HttpRequest, slug: str, rest: str = "") -> HttpResponse:
    try:
        answer = await sync_to_async(_answer)(request, slug, [p for p in rest.split("/") if p])
        if isinstance(answer, watch.Plan):
            return StreamingHttpResponse(watch.stream(answer), content_type=JSON)
        if isinstance(answer, writes.Pending):
            return await _applied(answer)
        return answer
    except ApiError as error:
        return status_response(error)
    except Exception:
        log.exception("kubeapi: %s %s failed", request.method, request.path)
        return status_response(
            ApiError(
                500, "InternalError", "an error on the server prevented the request from succeeding"
            )
        )


async def _applied(pending: writes.Pending) -> HttpResponse:
    """Wait (without holding a thread) until the room applied or refused the action."""
    deadline = time.monotonic() + WRITE_WAIT_S
    state = await sync_to_async(writes.action_state)(pending.action_id)
    while state[0] == "pending" and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        state = await sync_to_async(writes.action_state)(pending.action_id)
    if state[0] == "pending":
        raise ApiError(
            504,
            "Timeout",
            f"the room did not apply the action within {WRITE_WAIT_S:g} s (is its worker running?); it stays queued",
        )
    return await sync_to_async(writes.answer)(pending, state)


def _answer(request: HttpRequest, slug: str, parts: list[str]) -> HttpResponse | watch.Plan:
    room = store.room_of(slug)
    if parts == ["version"]:
        return respond(discovery.version_info(store.Read.of(room).release))
    role = auth.role_of(room, request.headers.get("Authorization", ""))
    store.watched(room)
    if not parts or parts[0] not in ("api", "apis"):
        raise not_found_path()
    found = _discovery(request, parts)
    if found is not None:
        return found
    target = parse_path(parts)
    method = request.method or "GET"
    if method == "GET":
        auth.check(
            room,
            role,
            "get" if target.name else "list",
            target.group,
            target.resource,
            target.name or "",
        )
        if target.name is None:
            return _list(request, room, role, target)
        return _get(request, room, role, target)
    if method in ("PATCH", "PUT", "DELETE", "POST"):
        return writes.write(request, room, role, target)
    raise method_not_allowed(method, target.resource)


def _discovery(request: HttpRequest, parts: list[str]) -> HttpResponse | None:
    if request.method != "GET":
        if len(parts) <= 3 and not (len(parts) == 3 and parts[0] == "api"):
            raise method_not_allowed(request.method or "", "discovery")
        return None
    if parts in (["api"], ["apis"]):
        form = discovery.negotiate_discovery(request.headers.get("Accept", ""))
        if form is None:
            raise ApiError(
                406,
                "NotAcceptable",
                "only application/json and the aggregated discovery forms are served",
            )
        if form == "legacy":
            body = discovery.api_versions() if parts == ["api"] else discovery.api_group_list()
            return respond(body)
        ctype = f"application/json;g=apidiscovery.k8s.io;v={form};as={discovery.AGGREGATED}"
        return respond(discovery.aggregated(parts == ["api"], form), content_type=ctype)
    if parts == ["api", "v1"]:
        return respond(discovery.resource_list("", "v1"))
    if parts[0] == "apis" and len(parts) == 2:
        if parts[1] not in discovery.GROUPS:
            raise not_found_path()
        return respond(discovery.api_group(parts[1]))
    if parts[0] == "apis" and len(parts) == 3:
        if (parts[1], parts[2]) not in discovery.served_group_versions():
            raise not_found_path()
        return respond(discovery.resource_list(parts[1], parts[2]))
    return None


def _include(request: HttpRequest) -> str:
    value = request.GET.get("includeObject", "") or "Metadata"
    if value not in ("None", "Metadata", "Object"):
        raise ApiError(
            400,
            "BadRequest",
            f"includeObject: must be None, Metadata or Object, got {value[:40]!r}",
        )
    return value


def _get(request: HttpRequest, room: Any, role: str, target: Target) -> HttpResponse:
    table = wants_table(request.headers.get("Accept", ""))
    read = store.Read.of(room, role, fresh=True)  # room_of read it for this request
    if target.sub == "scale":
        return respond(writes.scale_of(read, target))
    if target.sub not in (None, "status"):
        raise not_found_path()
    obj = read.one(target.resource, target.group, target.namespace, target.name or "")
    if table:
        meta = {"resourceVersion": str(read.rv)}
        return respond(printers.table(obj["kind"], [obj], read.clock, _include(request), meta))
    return respond(obj)


def matcher(request: HttpRequest, target: Target) -> Any:
    label_text = request.GET.get("labelSelector", "")
    field_text = request.GET.get("fieldSelector", "")
    labels = selectors.parse_labels(label_text)
    fields = selectors.parse_fields(field_text, target.info.kind)
    if not label_text.strip() and not field_text.strip():
        return lambda obj: True
    return lambda obj: labels(obj["metadata"].get("labels") or {}) and fields(obj)


def _node_term(request: HttpRequest) -> str | None:
    return selectors.equal_term(request.GET.get("fieldSelector", ""), "spec.nodeName")


def _list(request: HttpRequest, room: Any, role: str, target: Target) -> HttpResponse | watch.Plan:
    query = request.GET
    table = wants_table(request.headers.get("Accept", ""))
    include = _include(request)
    match = matcher(request, target)
    if query.get("watch") in ("true", "1"):
        if "watch" not in target.info.verbs:
            raise method_not_allowed("watch", target.resource)
        return watch.plan(request, room, role, target, match, table, include)
    limit = int_param(query, "limit", 0, store_max()) or 0
    read = store.Read.of(room, role, fresh=True)  # room_of read it for this request
    start = ""
    before: tuple[int, int | None] | None = (0, None)  # served so far, the list's total
    if query.get("continue"):
        _rv, start = parse_continue(query["continue"], store.history_start(room))
        before = continue_counts(query["continue"])
    node = _node_term(request)
    meta: dict[str, Any] = {"resourceVersion": str(read.rv)}
    if (
        (not table or include != "Object")
        and target.resource == "pods"
        and target.group == ""
        and node is None
        and not query.get("labelSelector", "").strip()
        and not query.get("fieldSelector", "").strip()
    ):
        form = include if table else rowcache.ITEM
        return _pod_list(read, target, start, limit, form, meta, before)
    if limit and node is None and target.resource in PAGED and target.group in PAGED_GROUPS:
        found = _paged(read, target, match, start, limit)
        if len(found) > limit:
            last = found[limit - 1][0]
            counts = None
            if not query.get("labelSelector") and not query.get("fieldSelector"):
                kind = "pod" if target.resource == "pods" else "node"
                prefix = (
                    f"{target.namespace}/"
                    if target.resource == "pods" and target.namespace
                    else None
                )
                meta["remainingItemCount"], counts = _rest(read, kind, last, prefix, before, limit)
            meta["continue"] = continue_token(read.rv, last, counts)
            found = found[:limit]
        elif not start:
            states = {k: fp for k, fp, _o in found}
            watch.remember(store.room_key(room), target, read.rv, states, watch.selection(query))
        items = [obj for _key, _fp, obj in found]
    else:
        items = _whole(read, target, match, start, limit, node, meta, room, query)
    if table:
        return respond(printers.table(target.info.kind, items, read.clock, include, meta))
    for obj in items:
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
    return respond(
        {
            "kind": f"{target.info.kind}List",
            "apiVersion": target.info.group_version,
            "metadata": meta,
            "items": items,
        }
    )


# Resources read a page at a time from the database's index (a 150,000-pod room listed 500
# at a time reads 501 rows a page, not 150,000).
PAGED = ("nodes", "leases", "pods")
PAGED_GROUPS = ("", "coordination.k8s.io")


def _rest(
    read: store.Read,
    kind: str,
    last: str,
    prefix: str | None,
    before: tuple[int, int | None] | None,
    count: int,
) -> tuple[int, tuple[int, int] | None]:
    """The remainingItemCount after a page of ``count`` ending at ``last``, and the counts
    the next token carries: counted once per list (at its first page), then carried."""
    served = before[0] + count if before is not None else None
    if before is not None and before[1] is not None and served is not None:
        return max(0, before[1] - served), (served, before[1])
    remaining = read.count_after(kind, last, prefix)
    return remaining, ((served, served + remaining) if served is not None else None)


def _pod_list(
    read: store.Read,
    target: Target,
    start: str,
    limit: int,
    form: str,
    meta: dict[str, Any],
    before: tuple[int, int | None] | None = (0, None),
) -> HttpResponse:
    """Pods without selectors, as a Table (``form``: includeObject Metadata or None) whose
    rows are made straight from the stored views (printers.pod_view_row: no Pod objects), or
    as a PodList (``form`` rowcache.ITEM); each row or item serialised once per pod view
    (rowcache.py) and filled with this answer's clock."""
    prefix = f"{target.namespace}/" if target.namespace else None
    if limit:
        texts = read.page_texts("pod", start, limit + 1, prefix=prefix)
    else:
        texts = read.texts("pod", prefix=prefix)
    keys = sorted(texts)
    whole = not (limit and len(keys) > limit)
    if not whole:
        keys = keys[:limit]
        meta["remainingItemCount"], counts = _rest(read, "pod", keys[-1], prefix, before, limit)
        meta["continue"] = continue_token(read.rv, keys[-1], counts)
    cached = rowcache.ROWS.table((store.room_key(read.room), form))
    rows, states = rowcache.rows(cached, keys, texts, form, read.clock, read.view_rv)
    if whole and not start:
        # A whole list: a watch from its resourceVersion starts from exactly this state.
        watch.remember(store.room_key(read.room), target, read.rv, states)
    if form == rowcache.ITEM:
        head = orjson.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta})
        field = b',"items":['
    else:
        head = orjson.dumps(
            {
                "kind": "Table",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "columnDefinitions": printers.COLUMNS["Pod"],
            }
        )
        field = b',"rows":['
    body = b"".join((head[:-1], field, b",".join(rows), b"]}"))
    return HttpResponse(body, content_type=JSON)


def _paged(
    read: store.Read, target: Target, match: Any, start: str, limit: int
) -> list[tuple[str, store.State, dict[str, Any]]]:
    """Up to ``limit + 1`` matching objects after the key ``start``, read in chunks of
    ``limit + 1`` rows (a selector may skip rows)."""
    found: list[tuple[str, store.State, dict[str, Any]]] = []
    after = start
    while True:
        chunk = list(
            read.items(target.resource, target.group, target.namespace, page=(after, limit + 1))
        )
        for key, fp, make in chunk:
            obj = make()
            if match(obj):
                found.append((key, fp, obj))
                if len(found) > limit:
                    return found
        if len(chunk) <= limit:
            return found
        after = chunk[-1][0]


def _whole(
    read: store.Read,
    target: Target,
    match: Any,
    start: str,
    limit: int,
    node: str | None,
    meta: dict[str, Any],
    room: Any,
    query: Any,
) -> list[dict[str, Any]]:
    """The objects of a list read whole and sorted (events, workloads, namespaces, metrics,
    one node's pods, or no limit); objects are made only up to the page's end."""
    entries = sorted(
        read.items(target.resource, target.group, target.namespace, node=node),
        key=lambda x: x[0],
    )
    found: list[tuple[str, dict[str, Any]]] = []
    fingerprints: dict[str, store.State] = {}
    for key, fp, make in entries:
        if start and key <= start:
            continue
        obj = make()
        if not match(obj):
            continue
        fingerprints[key] = fp
        found.append((key, obj))
        if limit and len(found) > limit:
            break
    if limit and len(found) > limit:
        last = found[limit - 1][0]
        meta["continue"] = continue_token(read.rv, last)
        if not query.get("labelSelector") and not query.get("fieldSelector"):
            meta["remainingItemCount"] = sum(1 for e in entries if e[0] > last)
        found = found[:limit]
    elif not start:
        # A whole list: a watch from its resourceVersion starts from exactly this state.
        watch.remember(store.room_key(room), target, read.rv, fingerprints, watch.selection(query))
    return [obj for _key, obj in found]


def store_max() -> int:
    from .request import MAX_LIMIT

    return MAX_LIMIT


# -- the kubeconfig a room's page offers ------------------------------------------------------
@csrf_exempt
def room_kubeconfig(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the viewer's kubeconfig (whoever sees the room's page); POST: the operator's,
    for the operator (token in the form or the session, never in a URL)."""
    from django.conf import settings
    from django.shortcuts import get_object_or_404

    from ..live.roles import is_operator
    from ..models import Room
    from . import tls
    from .kubeconfig import ca_of, kubeconfig

    if request.method not in ("GET", "POST"):
        return HttpResponse(status=405)
    room = get_object_or_404(Room, slug=slug)
    role = auth.VIEWER
    token = auth.viewer_token(room)
    if request.method == "POST":
        given = request.POST.get("token") or request.session.get("operator_tokens", {}).get(
            slug, ""
        )
        if not is_operator(room, request.user, given):
            return HttpResponse(
                "Only the room's operator gets the operator's kubeconfig.\n",
                status=403,
                content_type="text/plain",
            )
        role, token = auth.OPERATOR, room.operator_token
    host = request.get_host()
    hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    server = f"https://{hostname}:{settings.PLAYGROUND_KUBEAPI_PORT}"
    ca = ca_of(tls.ensure(settings.PLAYGROUND_KUBEAPI_TLS_DIR))
    response = HttpResponse(
        kubeconfig(server, room.slug, role, token, ca), content_type="application/yaml"
    )
    response["Content-Disposition"] = f'attachment; filename="{room.slug}-{role}.kubeconfig"'
    response["Cache-Control"] = "no-store"
    return response
