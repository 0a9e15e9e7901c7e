"""A room of kubectl output: imported in the request (import_scenario, import_preview), or
stored with its room "building" and imported by the worker that builds it (import_pending,
import_finish).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from .. import limits
from ..engine import values
from ..engine.scenario import (
    Scenario,
    ScenarioError,
    check_nesting,
    parse_scenario,
)
from ..models import (
    PendingImport,
    Room,
)
from .actions import _scenario_kubelet
from .create import _create_with_unique_slug, _store_scenario_parts, _unique_slug
from .errors import _check_speed, refuse_unstorable

# -- a big cluster import: parsed by the worker that builds its room (build.py) -------------
IMPORTED_NAME = "imported-cluster"
IMPORT_OPTIONS = ("name", "kubelet_config", "controller_manager_config", "flags")


def import_pending(
    name: str,
    text: str,
    options: dict[str, str | None],
    owner: Any = None,
    speed: float = 10.0,
    creator: str = "",
) -> Room:
    """A room for kubectl output too big to parse in the request: stored "building" with the
    text and the import options (import_scenario's), checked only for what the database could
    not store and the running-room limit; the worker parses it (import_finish)."""
    refuse_unstorable(name, "name")
    refuse_unstorable(text, "kubectl output")
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
        PendingImport.objects.create(room=room, text=text, options=kept)
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
    limits.check_scenario_counts(scenario)
    _scenario_kubelet(scenario_yaml, scenario)
    with transaction.atomic():
        locked = Room.objects.select_for_update().get(pk=room.pk)
        if locked.build_state != Room.BUILDING or locked.scenario_yaml:
            return scenario
        renamed = not options.get("name")
        locked.scenario_yaml = scenario_yaml
        locked.scenario_name = scenario.name
        if renamed:
            locked.name = scenario.name
        locked.save(update_fields=["scenario_yaml", "scenario_name", "name"])
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
