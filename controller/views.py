"""Thin views: each calls one service."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET

from . import build, deltas, services
from .engine.scenario import ScenarioError
from .engine.versions import CURRENT_VERSION
from .forms import CompareForm, RoomCreateForm
from .health import health
from .models import Comparison, Room
from .roles import is_operator


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    status, body = health()
    return JsonResponse(body, status=status)


def index(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and "cmp-scenario" in request.POST:
        return compare_create(request)
    form = RoomCreateForm(request.POST or None, request.FILES or None)
    error = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data.get("upload"):
            text = data["upload"].read().decode("utf-8", errors="replace")
        else:
            chosen = next(s for s in services.builtin_scenarios() if s["id"] == data["scenario"])
            text = chosen["yaml"]
        try:
            room = build.room_start(
                data.get("name") or "",
                text,
                request.user,
                data["speed"],
                kubernetes_version=data.get("kubernetes_version") or None,
            )
        except (ScenarioError, services.ActionError) as exc:
            error = str(exc)
        else:
            tokens = request.session.get("operator_tokens", {})
            tokens[room.slug] = room.operator_token
            request.session["operator_tokens"] = tokens
            return redirect(f"{reverse('room', args=[room.slug])}?token={room.operator_token}")
    return _index(request, form=form, error=error)


def _index(request: HttpRequest, **context: object) -> HttpResponse:
    """The landing page: rooms, comparisons, the two forms (with what was posted, if any)."""
    return render(
        request,
        "controller/index.html",
        {
            "rooms": Room.objects.all()[:50],
            "form": RoomCreateForm(),
            "compare_form": CompareForm(prefix="cmp"),
            "comparisons": Comparison.objects.all()[:20],
            "scenarios": services.builtin_scenarios(),
            "current_version": CURRENT_VERSION,
            **context,
        },
    )


def room_page(request: HttpRequest, slug: str) -> HttpResponse:
    room = get_object_or_404(Room, slug=slug)
    token = request.GET.get("token") or request.session.get("operator_tokens", {}).get(slug, "")
    operator = is_operator(room, request.user, token)
    viewer_url = request.build_absolute_uri(reverse("room", args=[room.slug]))
    if room.build_state != Room.LIVE:
        # Built by a worker (build.py): the page shows the progress, then reloads when live.
        return render(request, "controller/room_building.html", {"room": room})
    return render(
        request,
        "controller/room.html",
        {
            "room": room,
            "about": services.scenario_about(room.scenario_yaml),
            "operator": operator,
            "token": token if operator else "",
            "viewer_url": viewer_url,
            "operator_url": f"{viewer_url}?token={room.operator_token}" if operator else "",
        },
    )


@require_GET
def room_build(request: HttpRequest, slug: str) -> JsonResponse:
    """A building room's progress ("parsing", "creating 30,000 pods", "storing"), polled by
    its page: state building, live or failed (with the error)."""
    room = get_object_or_404(Room, slug=slug)
    return JsonResponse(
        {"state": room.build_state, "progress": room.build_progress, "error": room.build_error}
    )


@require_GET
def room_export(request: HttpRequest, slug: str) -> HttpResponse:
    room = get_object_or_404(Room, slug=slug)
    response = HttpResponse(services.room_export(room), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="{room.slug}.yaml"'
    return response


@require_GET
def room_events(request: HttpRequest, slug: str) -> JsonResponse:
    """The timeline after event ``since`` (for clients catching up and for tests)."""
    room = get_object_or_404(Room, slug=slug)
    try:
        since = int(request.GET.get("since", "-1"))
    except ValueError:
        raise Http404 from None
    rows = room.events.filter(idx__gt=since).order_by("idx")[:5000]
    return JsonResponse(
        {"events": [{"idx": r.idx, "t": r.t_ms / 1000, "type": r.type, **r.data} for r in rows]}
    )


@require_GET
@gzip_page
def room_snapshot(request: HttpRequest, slug: str) -> HttpResponse:
    """The room's whole current state (what a client gets on connect), for clients told to
    resync after a tick too large to broadcast; built once per room version."""
    room = get_object_or_404(Room, slug=slug)
    return HttpResponse(deltas.snapshot_bytes(room), content_type="application/json")


@require_GET
def room_series(request: HttpRequest, slug: str) -> JsonResponse:
    """The room's charts from t=0 (anyone who may watch the room may read them)."""
    room = get_object_or_404(Room, slug=slug)
    return JsonResponse(services.room_series(room))


def compare_create(request: HttpRequest) -> HttpResponse:
    """The index page's "compare" form: two rooms, one clock; errors name the side."""
    form = CompareForm(request.POST, prefix="cmp")
    error = None
    if form.is_valid():
        data = form.cleaned_data
        chosen = next(s for s in services.builtin_scenarios() if s["id"] == data["scenario"])
        try:
            comparison = services.comparison_create(
                "",
                chosen["yaml"],
                [
                    (data["left_label"], data["left_parsed"]),
                    (data["right_label"], data["right_parsed"]),
                ],
                request.user,
                data["speed"],
            )
        except (ScenarioError, services.ActionError) as exc:
            error = str(exc)
        else:
            token = comparison.left.operator_token
            tokens = request.session.get("operator_tokens", {})
            for room in (comparison.left, comparison.right):
                tokens[room.slug] = token
            request.session["operator_tokens"] = tokens
            return redirect(f"{reverse('compare', args=[comparison.slug])}?token={token}")
    return _index(request, compare_form=form, compare_error=error)


def compare_page(request: HttpRequest, slug: str) -> HttpResponse:
    comparison = get_object_or_404(Comparison, slug=slug)
    left = comparison.left
    token = request.GET.get("token") or request.session.get("operator_tokens", {}).get(
        left.slug, ""
    )
    operator = is_operator(left, request.user, token)
    return render(
        request,
        "controller/compare.html",
        {
            "comparison": comparison,
            "about": services.scenario_about(left.scenario_yaml),
            "operator": operator,
            "token": token if operator else "",
            "viewer_url": request.build_absolute_uri(reverse("compare", args=[slug])),
        },
    )
