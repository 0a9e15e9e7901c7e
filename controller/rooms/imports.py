"""A room of kubectl output: imported in the request (import_scenario, import_preview), or
stored with its room "building" and imported by the worker that builds it (import_pending,
import_finish); a long output's Preview imported by a worker too (preview_start, preview_run,
preview_state).
"""

from __future__ import annotations

import codecs
import logging
import secrets
import time
from collections.abc import Iterator
from typing import IO, Any

import orjson
import redis
from celery import current_app
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from .. import heavy, limits
from ..engine import values
from ..engine.scenario import (
    Scenario,
    ScenarioError,
    check_nesting,
    parse_scenario,
)
from ..locks import redis_client
from ..models import (
    PendingImport,
    Room,
)
from .actions import _scenario_kubelet
from .create import _create_with_unique_slug, _store_scenario_parts, _unique_slug
from .errors import REFUSALS, ActionError, _check_speed, refuse_unstorable

log = logging.getLogger(__name__)

# -- a big cluster import: parsed by the worker that builds its room (build.py) -------------
IMPORTED_NAME = "imported-cluster"
IMPORT_OPTIONS = ("name", "kubelet_config", "controller_manager_config", "flags")


def _pieces(upload: IO[bytes]) -> Iterator[str]:
    """An uploaded file's text, UPLOAD_PIECE bytes at a time, decoded as the form decodes a
    short one (UTF-8, a bad byte replaced), never whole in memory."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    upload.seek(0)
    while raw := upload.read(UPLOAD_PIECE):
        yield decoder.decode(raw)
    yield decoder.decode(b"", final=True)


def _store_pending_text(pending: PendingImport, text: str | IO[bytes]) -> None:
    """The kubectl output into its row: a string at once, an uploaded file a piece at a time
    (each appended by the database: the web process holds one piece, not the whole text and
    its copies; issue #35, attack 4). A piece that cannot be stored refuses it all."""
    if isinstance(text, str):
        refuse_unstorable(text, "kubectl output")
        pending.text = text
        pending.save(update_fields=["text"])
        return
    rows = PendingImport.objects.filter(pk=pending.pk)
    for piece in _pieces(text):
        if piece:
            refuse_unstorable(piece, "kubectl output")
            rows.update(text=Concat(F("text"), Value(piece)))


def import_pending(
    name: str,
    text: str | IO[bytes],
    options: dict[str, str | None],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
) -> Room:
    """A room for kubectl output too big to parse in the request: stored "building" with the
    text and the import options (import_scenario's), checked only for what the database could
    not store and the running-room limit; the worker parses it (import_finish)."""
    refuse_unstorable(name, "name")
    kept = {k: options.get(k) or None for k in IMPORT_OPTIONS}
    refuse_unstorable(kept, "")
    creator = creator or limits.owner_key(owner)
    limits.check_running_rooms(creator)
    speed = _check_speed(speed)
    shown = name or IMPORTED_NAME
    with transaction.atomic():
        room = _create_with_unique_slug(
            Room,
            _unique_slug,
            shown,
            name=shown,
            owner=owner if getattr(owner, "is_authenticated", False) else None,
            creator=creator[:160],
            scenario_name=kept["name"] or IMPORTED_NAME,
            scenario_yaml="",
            speed=speed,
            wall_anchor=timezone.now(),
            build_state=Room.BUILDING,
            build_progress="queued",
        )
        _store_pending_text(PendingImport.objects.create(room=room, text="", options=kept), text)
    return room


def import_finish(room: Room, progress: Any = None) -> Scenario:
    """The worker's part of a big import: the stored kubectl output -> the room's scenario
    (as the form would have made it, validated whole: ScenarioError names the item and the
    field), its parameters; the pending text deleted. An error changes nothing. ``progress``
    is told each phase."""
    say = progress or (lambda message: None)
    pending = PendingImport.objects.get(room=room)
    options = pending.options or {}
    say(f"importing the cluster ({len(pending.text) / 1e6:.1f} MB of kubectl output)")
    from ..kube_io.importer import import_cluster
    from ..kube_io.report import dump_scenario

    mapping, report = import_cluster(
        pending.text,
        name=options.get("name") or IMPORTED_NAME,
        kubelet_config=options.get("kubelet_config"),
        controller_manager_config=options.get("controller_manager_config"),
        flags=options.get("flags"),
    )
    scenario_yaml = dump_scenario(mapping, report)  # what import_scenario gives the form
    say("checking the imported scenario")
    limits.check_scenario_size(scenario_yaml)
    # The text is the safe dump of this mapping, which loads back into the same mapping: the
    # scenario is parsed from the mapping rather than read back from the text (4 s of YAML
    # for 6,600 pods). Restores read the text (the tests compare the two timelines).
    if values.text_may_hide_problems(scenario_yaml):
        refuse_unstorable(mapping, "", ScenarioError, numbers=False)
    check_nesting(mapping, "")
    scenario = parse_scenario(mapping)
    objects = limits.check_scenario_counts(scenario)
    # Its cost is known only now: checked with the rooms its owner holds meanwhile.
    limits.check_budget(room.creator, objects, room.speed, exclude=(room.pk,))
    _scenario_kubelet(scenario_yaml, scenario)
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        if locked.build_state != Room.BUILDING or locked.scenario_yaml:
            return scenario
        renamed = not options.get("name")
        locked.scenario_yaml = scenario_yaml
        locked.scenario_name = scenario.name
        locked.cost_objects = objects
        if renamed:
            locked.name = scenario.name
        locked.save(update_fields=["scenario_yaml", "scenario_name", "name", "cost_objects"])
        _store_scenario_parts(locked, scenario)
        PendingImport.objects.filter(room=room).delete()
    room.scenario_yaml, room.scenario_name, room.name = (
        locked.scenario_yaml,
        locked.scenario_name,
        locked.name,
    )
    return scenario


def import_scenario(
    text: str,
    name: str = "",
    kubelet_config: str | None = None,
    controller_manager_config: str | None = None,
    flags: str | None = None,
) -> tuple[str, list[dict[str, str]]]:
    """kubectl output (and component configuration) -> the scenario YAML a room is created
    from (its report as the leading comment) and the report (importer.import_cluster)."""
    from ..kube_io.report import dump_scenario

    scenario, report = _import(text, name, kubelet_config, controller_manager_config, flags)
    return dump_scenario(scenario, report), report


def import_preview(
    text: str,
    name: str = "",
    kubelet_config: str | None = None,
    controller_manager_config: str | None = None,
    flags: str | None = None,
) -> tuple[str, list[dict[str, str]]]:
    """The import form's Preview: what the room's page would say about the cluster (its
    "what to watch for" paragraph) and the report; no scenario text, no room, no engine."""
    scenario, report = _import(text, name, kubelet_config, controller_manager_config, flags)
    return " ".join(str(scenario.get("description") or "").split()), report


def _import(
    text: str,
    name: str,
    kubelet_config: str | None,
    controller_manager_config: str | None,
    flags: str | None,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """importer.import_cluster with the form's fields (an unnamed cluster gets IMPORTED_NAME)."""
    from ..kube_io.importer import import_cluster

    return import_cluster(
        text,
        name=name or IMPORTED_NAME,
        kubelet_config=kubelet_config,
        controller_manager_config=controller_manager_config,
        flags=flags,
    )


# -- a long output's Preview: imported by a worker, the page polls ---------------------------
# How long a Preview (its text, its result) is kept in Redis: long enough to read its report and
# press "create" (then the text is imported again for the room), not an hour of 16 MiB each.
PREVIEW_S = 900


def _preview_key(preview_id: str) -> str:
    return f"playground:import-preview:{preview_id}"


def _text_key(preview_id: str) -> str:
    return f"{_preview_key(preview_id)}:text"


# An uploaded file goes to Redis in pieces of this many bytes (never whole in the web process).
UPLOAD_PIECE = 1024 * 1024


def _keep_text(client: Any, key: str, text: str | IO[bytes]) -> int:
    """``text`` (or the uploaded file's bytes, a piece at a time) under ``key``: its size."""
    if isinstance(text, str):
        client.set(key, text, ex=PREVIEW_S)
        return len(text)
    text.seek(0)
    client.set(key, b"", ex=PREVIEW_S)
    size = 0
    while piece := text.read(UPLOAD_PIECE):
        client.append(key, piece)
        size += len(piece)
    return size


def preview_start(text: str | IO[bytes], form: dict[str, Any], owner: str = "") -> str:
    """The Preview of kubectl output too long to import in the request: the text (or the
    uploaded file, copied to Redis a piece at a time: it is decoded by the worker) and the
    form's fields (the import options, the room's name and speed, for "create" after) kept in
    Redis for PREVIEW_S, imported by a heavy worker (preview_run); returns its id. ``owner``
    (limits.owner_key) takes one of its heavy-job slots: LimitError naming
    PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS when it has them all, and nothing is kept."""
    preview_id = secrets.token_urlsafe(16)
    key = _preview_key(preview_id)
    heavy.take(owner, f"preview:{preview_id}")
    try:
        client = redis_client()
        size = _keep_text(client, _text_key(preview_id), text)
        client.hset(key, mapping={"form": orjson.dumps(form), "size": size, "owner": owner})
        client.expire(key, PREVIEW_S)
    except redis.RedisError as exc:
        heavy.release(owner, f"preview:{preview_id}")
        raise ActionError(f"preview: could not be queued ({exc}); try again") from None
    # By name: tasks.py (the adapter) calls this package, not the other way round.
    current_app.send_task("controller.tasks.import_preview_task", (preview_id,))
    return preview_id


def preview_run(preview_id: str) -> None:
    """The heavy worker's part: import the kept text as Preview does in the request; its
    result (the summary and the report, or the error naming the item and the field, or
    heavy.stopped_message past the time limit) kept beside it; its owner's slot given back."""
    client = redis_client()
    key = _preview_key(preview_id)
    form, owner_raw = client.hmget(key, ["form", "owner"])
    text = client.get(_text_key(preview_id))
    owner = owner_raw.decode() if owner_raw else ""
    job = f"preview:{preview_id}"
    if text is None or form is None:
        heavy.release(owner, job)
        return  # expired
    heavy.started(owner, job)
    client.hset(key, "started", repr(time.time()))
    options = orjson.loads(form)["options"]
    try:
        summary, report = import_preview(text.decode("utf-8", errors="replace"), **options)
        result: dict[str, Any] = {"state": "done", "preview": summary, "report": report}
    except (ScenarioError, *REFUSALS) as exc:
        result = {"state": "failed", "error": str(exc)}
    except Exception as exc:  # the page would wait for ever: say what broke
        if heavy.is_stop(exc):
            result = {"state": "failed", "error": heavy.stopped_message()}
        else:
            log.exception("import preview %s failed", preview_id)
            result = {"state": "failed", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        heavy.release(owner, job)
    client.hset(key, "result", orjson.dumps(result))


def preview_state(preview_id: str) -> dict[str, Any] | None:
    """A Preview's state: ``running`` (with the text's ``size``), ``done`` (``preview``,
    ``report``) or ``failed`` (``error``); None when unknown or expired. One started longer
    ago than the hard time limit with no result was killed by it: failed, saying so."""
    size, result, began = redis_client().hmget(
        _preview_key(preview_id), ["size", "result", "started"]
    )
    if size is None:
        return None
    _soft, hard = heavy.time_limits()
    if result is not None:
        state = orjson.loads(result)
    elif began is not None and hard is not None and time.time() - float(began) > hard + 5:
        state = {"state": "failed", "error": heavy.stopped_message()}
    else:
        state = {"state": "running"}
    return {**state, "size": int(size)}


def preview_form(preview_id: str) -> tuple[str, dict[str, Any]] | None:
    """The kept text and form fields of a Preview ("create" from its page), or None."""
    client = redis_client()
    form = client.hget(_preview_key(preview_id), "form")
    text = client.get(_text_key(preview_id))
    if text is None or form is None:
        return None
    return text.decode("utf-8", errors="replace"), orjson.loads(form)
