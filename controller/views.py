"""Thin views: each calls one service."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET, require_POST

from . import heavy, limits
from .engine.scenario import ScenarioError
from .engine.versions import NEWEST_VERSION
from .forms import CompareForm, ImportClusterForm, RoomCreateForm
from .health import health
from .kube_io.exports import timeline_csv, timeline_events_yaml
from .kube_io.report import import_report_of, is_imported
from .lessons import classroom, holding
from .lessons.definition import LessonError, lesson_of
from .live import deltas
from .live.roles import is_operator
from .models import Comparison, Room
from .rooms import build, catalog, compare, errors, imports, reading, whatif


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    status, body = health()
    return JsonResponse(body, status=status)


def index(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            request.POST  # noqa: B018 - parsing it is what may fail
        except RequestDataTooBig:
            # A pasted kubectl List past DATA_UPLOAD_MAX_MEMORY_SIZE (an uploaded file is not
            # counted): say so instead of a bare 400.
            return _index(
                request,
                import_error=(
                    "The pasted text is larger than "
                    f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 2**20:.1f} MiB: upload the file instead."
                ),
                import_open=True,
            )
    if request.method == "POST" and "cmp-scenario" in request.POST:
        return compare_create(request)
    if request.method == "POST" and "imp-speed" in request.POST:
        return import_create(request)
    if request.method == "GET" and "solo" in request.GET:
        return _solo_start(request, request.GET.get("solo") or catalog.DEMO_LESSON)
    form = RoomCreateForm(request.POST or None, request.FILES or None)
    error = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data.get("upload"):
            text = data["upload"].read().decode("utf-8", errors="replace")
        else:
            chosen = next(s for s in catalog.builtin_scenarios() if s["id"] == data["scenario"])
            text = chosen["yaml"]
        try:
            with transaction.atomic():
                room = build.room_start(
                    data.get("name") or "",
                    text,
                    request.user,
                    data["speed"],
                    kubernetes_version=data.get("kubernetes_version") or None,
                    creator=limits.owner_key(request.user, request.META.get("REMOTE_ADDR")),
                )
                if data.get("solo"):
                    classroom.make_solo(room)
                if room.build_state == Room.LIVE and lesson_of(room) is not None:
                    classroom.wait_for_start(room)  # the teacher's (learner's) Start
        except (ScenarioError, LessonError, *errors.REFUSALS) as exc:
            error = str(exc)
        else:
            tokens = request.session.get("operator_tokens", {})
            tokens[room.slug] = room.operator_token
            request.session["operator_tokens"] = tokens
            return redirect(f"{reverse('room', args=[room.slug])}?token={room.operator_token}")
    return _index(request, form=form, error=error)


def _solo_start(request: HttpRequest, lesson_id: str) -> HttpResponse:
    """``/?solo`` (the demo lesson) or ``/?solo=<lesson>``: a page that starts the learner's
    own room of that lesson (a POST, sent by the page itself: a link fetched by a preview or
    a crawler creates nothing)."""
    found = next((s for s in catalog.builtin_lessons() if s["id"] == lesson_id), None)
    if found is None:
        return _index(request, error=f'solo: no built-in lesson "{lesson_id}"')
    return render(request, "controller/solo.html", {"lesson": found})


def _index(request: HttpRequest, **context: object) -> HttpResponse:
    """The landing page: rooms, comparisons, the two forms (with what was posted, if any)."""
    return render(
        request,
        "controller/index.html",
        {
            # A learner's own room (learning alone) is theirs: not listed.
            "rooms": Room.objects.exclude(lesson__solo=True)[:50],
            "form": RoomCreateForm(),
            "compare_form": CompareForm(prefix="cmp"),
            "import_form": ImportClusterForm(prefix="imp"),
            "comparisons": Comparison.objects.all()[:20],
            "scenarios": catalog.builtin_scenarios(),
            "lessons": catalog.builtin_lessons(),
            "demo_lesson_room": Room.objects.filter(slug="demo-lesson").first(),
            "demo_lesson_id": catalog.DEMO_LESSON,
            "newest_version": NEWEST_VERSION,
            **context,
        },
    )


def import_create(request: HttpRequest) -> HttpResponse:
    """The index page's "your own cluster" form: import (the report shown first with
    Preview: no room, no engine), then a room of the imported scenario (build.import_start:
    a big cluster is imported and built by a worker while the room page shows the progress);
    an error names the item and field and creates nothing."""
    form = ImportClusterForm(request.POST, request.FILES, prefix="imp")
    error, report, preview = None, None, None
    if form.is_valid():
        data = form.cleaned_data
        options = {
            "name": data.get("name") or "",
            "kubelet_config": data.get("kubelet_config") or None,
            "controller_manager_config": data.get("controller_manager_config") or None,
            "flags": data.get("flags") or None,
        }
        # A long upload is not read here (forms.ImportClusterForm): its file goes as it is.
        text_or_file = data["text"] if data["text"] is not None else data["upload"]
        try:
            if "preview" in request.POST and (
                data["text"] is None or len(data["text"]) > build.IMPORT_INLINE_MAX_CHARS
            ):
                # Too long to import in the request: a worker does, its page polls.
                form_fields = {"name": options["name"], "options": options, "speed": data["speed"]}
                preview_id = imports.preview_start(
                    text_or_file,
                    form_fields,
                    limits.owner_key(request.user, request.META.get("REMOTE_ADDR")),
                )
                return redirect(reverse("import-preview", args=[preview_id]))
            if "preview" in request.POST:
                preview, report = imports.import_preview(data["text"], **options)
            else:
                room = build.import_start(
                    data.get("name") or "",
                    text_or_file,
                    options,
                    request.user,
                    data["speed"],
                    creator=limits.owner_key(request.user, request.META.get("REMOTE_ADDR")),
                )
        except (ScenarioError, *errors.REFUSALS) as exc:
            error = str(exc)
        else:
            if preview is None:
                tokens = request.session.get("operator_tokens", {})
                tokens[room.slug] = room.operator_token
                request.session["operator_tokens"] = tokens
                return redirect(f"{reverse('room', args=[room.slug])}?token={room.operator_token}")
    return _index(
        request,
        import_form=form,
        import_error=error,
        import_report=report,
        import_preview=preview,
    )


def import_preview_page(request: HttpRequest, preview_id: str) -> HttpResponse:
    """A long kubectl output's Preview, imported by a worker: its progress (the page polls
    ``import_preview_json``), then the summary and the report, or the error naming the item
    and the field; its "Create the room" imports it again for the room (build.preview_create)."""
    if request.method == "POST":
        room = build.preview_create(
            preview_id,
            request.user,
            creator=limits.owner_key(request.user, request.META.get("REMOTE_ADDR")),
        )
        if room is None:
            raise Http404("this preview has expired")
        tokens = request.session.get("operator_tokens", {})
        tokens[room.slug] = room.operator_token
        request.session["operator_tokens"] = tokens
        return redirect(f"{reverse('room', args=[room.slug])}?token={room.operator_token}")
    state = imports.preview_state(preview_id)
    if state is None:
        raise Http404("no such preview (they are kept 15 minutes)")
    return render(
        request, "controller/import_preview.html", {"state": state, "preview_id": preview_id}
    )


@require_GET
def import_preview_json(request: HttpRequest, preview_id: str) -> JsonResponse:
    state = imports.preview_state(preview_id)
    if state is None:
        raise Http404("no such preview")
    return JsonResponse({"state": state["state"]})


def room_page(request: HttpRequest, slug: str) -> HttpResponse:
    room = get_object_or_404(Room, slug=slug)
    token = request.GET.get("token") or request.session.get("operator_tokens", {}).get(slug, "")
    operator = is_operator(room, request.user, token)
    viewer_url = request.build_absolute_uri(reverse("room", args=[room.slug]))
    if room.build_state != Room.LIVE:
        # Built by a worker (build.py): the page shows the progress, then reloads when live.
        # An import's report once the worker has imported it (its scenario's leading comment).
        return render(
            request,
            "controller/room_building.html",
            {
                "room": room,
                "importing": not room.scenario_yaml and not _compared(room),
                "import_report": import_report_of(room.scenario_yaml)
                if is_imported(room.scenario_yaml)
                else None,
            },
        )
    imported = is_imported(room.scenario_yaml)
    return render(
        request,
        "controller/room.html",
        {
            "room": room,
            # A lesson's notes say what happens when: not for whoever answers its questions.
            "about": ""
            if holding.keeps_secrets(room, operator)
            else catalog.scenario_about(room.scenario_yaml),
            "import_report": import_report_of(room.scenario_yaml),
            # For an imported cluster (reading the zones parses the scenario: not for every room).
            "what_if": whatif.what_if_choices(room) if operator and imported else None,
            "operator": operator,
            "token": token if operator else "",
            "viewer_url": viewer_url,
            "operator_url": f"{viewer_url}?token={room.operator_token}" if operator else "",
            # A class that has not started: its teacher's Start runs the clock.
            "not_started": operator and room.paused and room.sim_ms == 0,
            # Learning alone: a page for one (no class links, counts or operator tools).
            "solo": holding.is_solo(room),
            # A class's viewer can take the same built-in lesson again alone, at their pace.
            "learn_alone": None if operator else catalog.builtin_lesson_of(room),
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


def _compared(room: Room) -> bool:
    return Comparison.objects.filter(Q(left=room) | Q(right=room)).exists()


def _not_imported_yet(room: Room) -> HttpResponse | None:
    """A big import's room has no scenario until the worker has imported it (or when that
    failed): nothing to export yet."""
    if room.scenario_yaml:
        return None
    if _compared(room):  # a big comparison's side: its worker reads the scenario
        what = "scenario"
        state = "could not be read" if room.build_state == Room.FAILED else "is not read yet"
    else:
        what = "cluster"
        state = (
            "could not be imported" if room.build_state == Room.FAILED else "is not imported yet"
        )
    return HttpResponse(
        f"The room's {what} {state}: nothing to export.\n",
        status=409,
        content_type="text/plain; charset=utf-8",
    )


@require_GET
def room_export(request: HttpRequest, slug: str) -> HttpResponse:
    room = get_object_or_404(Room, slug=slug)
    if (refused := _not_imported_yet(room)) is not None:
        return refused
    secret = holding.keeps_secrets(room, _operator(request, room))
    response = HttpResponse(
        reading.room_export(room, without_answers=secret), content_type="application/yaml"
    )
    response["Content-Disposition"] = f'attachment; filename="{room.slug}.yaml"'
    return response


def _operator(request: HttpRequest, room: Room) -> bool:
    token = request.GET.get("token") or request.session.get("operator_tokens", {}).get(
        room.slug, ""
    )
    return is_operator(room, request.user, token)


def _timeline(request: HttpRequest, room: Room) -> list[dict[str, object]]:
    """The room's timeline for this audience (holding.timeline_for)."""
    return holding.timeline_for(room, _operator(request, room), reading.room_timeline(room))


def _attachment(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
def room_timeline_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The room's timeline so far as CSV (one row per event)."""
    room = get_object_or_404(Room, slug=slug)
    body = timeline_csv(_timeline(request, room))
    return _attachment(body, "text/csv; charset=utf-8", f"{room.slug}-timeline.csv")


@require_GET
def room_events_yaml(request: HttpRequest, slug: str) -> HttpResponse:
    """The room's timeline so far as an events.k8s.io/v1 EventList (t=0 at the room's
    creation)."""
    room = get_object_or_404(Room, slug=slug)
    body = timeline_events_yaml(_timeline(request, room), start=room.created_at)
    return _attachment(body, "application/yaml", f"{room.slug}-events.yaml")


@require_GET
def room_manifests(request: HttpRequest, slug: str) -> HttpResponse:
    """The room's cluster now as manifests: the scenario, workloads and pods."""
    room = get_object_or_404(Room, slug=slug)
    if (refused := _not_imported_yet(room)) is not None:
        return refused
    return _attachment(
        reading.room_manifests(
            room, without_answers=holding.keeps_secrets(room, _operator(request, room))
        ),
        "application/yaml",
        f"{room.slug}-manifests.yaml",
    )


@require_POST
def room_what_if(request: HttpRequest, slug: str) -> JsonResponse:
    """Operator only: queue a headless What-if run in the worker; answers its task id."""
    room = get_object_or_404(Room, slug=slug)
    token = request.POST.get("token") or request.session.get("operator_tokens", {}).get(slug, "")
    if not is_operator(room, request.user, token):
        return JsonResponse({"error": "only the room's operator may run a What-if"}, status=403)
    if holding.keeps_secrets(room, True):
        # A learner alone is their room's operator: a What-if runs the lesson ahead (its
        # steps' faults too) and would tell when its questions' answers happen (issue #38).
        return JsonResponse(
            {"error": "What-if: not in a lesson learned alone until its last answer is revealed"},
            status=403,
        )
    zone = request.POST.get("zone", "")
    nodes = request.POST.getlist("nodes")
    try:
        at_s = float(request.POST.get("at", "60"))
        whatif.what_if_check(room, zone, nodes, at_s)
    except ValueError as exc:  # ActionError too
        return JsonResponse({"error": str(exc)}, status=400)
    import uuid

    from .tasks import what_if_task

    owner = limits.owner_key(request.user, request.META.get("REMOTE_ADDR"))
    task_id = str(uuid.uuid4())
    try:
        heavy.take(owner, f"what-if:{task_id}")
    except limits.LimitError as exc:
        return JsonResponse({"error": str(exc), "limit": exc.setting}, status=429)
    whatif.what_if_queued(room, task_id)
    result = what_if_task.apply_async((room.pk, zone, nodes, at_s, owner), task_id=task_id)
    return JsonResponse({"id": result.id})


@require_GET
def room_what_if_result(request: HttpRequest, slug: str, task_id: str) -> JsonResponse:
    """A What-if run's state, and its rows once done: 404 for a run of another room, an
    unknown or expired id."""
    room = get_object_or_404(Room, slug=slug)
    if not whatif.what_if_of(room, task_id):
        return JsonResponse({"error": "no such What-if run in this room"}, status=404)
    from celery.result import AsyncResult

    result = AsyncResult(task_id)
    if result.successful():
        return JsonResponse({"state": "done", **result.result})
    if result.failed():
        return JsonResponse({"state": "failed", "error": heavy.failure_message(result.result)})
    return JsonResponse({"state": "running"})


@require_GET
def room_events(request: HttpRequest, slug: str) -> JsonResponse:
    """The timeline after event ``since`` (for clients catching up and for tests)."""
    room = get_object_or_404(Room, slug=slug)
    try:
        since = int(request.GET.get("since", "-1"))
    except ValueError:
        raise Http404 from None
    events = reading.room_events(room, since)
    hold = holding.current_hold(room, _operator(request, room))
    return JsonResponse({"events": events if hold is None else hold.events(events)})


@require_GET
@gzip_page
def room_snapshot(request: HttpRequest, slug: str) -> HttpResponse:
    """The room's whole current state (what a client gets on connect), for clients told to
    resync after a tick too large to broadcast; built once per room version."""
    room = get_object_or_404(Room, slug=slug)
    body = deltas.snapshot_bytes(room)
    hold = holding.current_hold(room, _operator(request, room))
    if hold is not None:  # a lesson room (small): decoded, held, encoded again
        body = json.dumps(hold.snapshot(json.loads(body)), separators=(",", ":")).encode()
    return HttpResponse(body, content_type="application/json")


@require_GET
def room_series(request: HttpRequest, slug: str) -> JsonResponse:
    """The room's charts from t=0 (anyone who may watch the room may read them)."""
    room = get_object_or_404(Room, slug=slug)
    return JsonResponse(reading.room_series(room))


def compare_create(request: HttpRequest) -> HttpResponse:
    """The index page's "compare" form: two rooms, one clock; errors name the side."""
    form = CompareForm(request.POST, prefix="cmp")
    error = None
    if form.is_valid():
        data = form.cleaned_data
        chosen = next(s for s in catalog.builtin_scenarios() if s["id"] == data["scenario"])
        try:
            comparison = compare.comparison_create(
                "",
                chosen["yaml"],
                [
                    (data["left_label"], data["left_parsed"]),
                    (data["right_label"], data["right_parsed"]),
                ],
                request.user,
                data["speed"],
                creator=limits.owner_key(request.user, request.META.get("REMOTE_ADDR")),
            )
        except (ScenarioError, *errors.REFUSALS) as exc:
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
    if left.build_state != Room.LIVE or comparison.right.build_state != Room.LIVE:
        # Built as rooms are (build.py): each side's progress; both go live together.
        return render(
            request,
            "controller/compare_building.html",
            {
                "comparison": comparison,
                "sides": [
                    ("left", comparison.left_label, left),
                    ("right", comparison.right_label, comparison.right),
                ],
            },
        )
    return render(
        request,
        "controller/compare.html",
        {
            "comparison": comparison,
            "about": catalog.scenario_about(left.scenario_yaml),
            "operator": operator,
            "token": token if operator else "",
            "viewer_url": request.build_absolute_uri(reverse("compare", args=[slug])),
        },
    )
