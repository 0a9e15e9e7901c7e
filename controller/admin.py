"""Django admin (staff only): rooms, parameters (a form per setting of the room's Kubernetes
release, with the flag's help and the release's default), presets, the action log read-only.
A parameter change is validated and applied as a SetParameters action, as from the page."""

from __future__ import annotations

import json
from typing import Any

import yaml
from django import forms
from django.contrib import admin

from .engine import safe_yaml
from .engine.config import ApiServerConfig, ControllerManagerConfig, KubeletConfig, copy_config
from .engine.scenario import API_FIELDS, CM_FIELDS, KUBELET_FIELDS, apply_fields, load_scenario
from .models import Action, ClusterParameters, Preset, Room
from .rooms import actions, errors

FLAG_HELP = {
    "nodeMonitorPeriod": "--node-monitor-period (default 5s): how often the controller checks node health.",
    "nodeMonitorGracePeriod": "--node-monitor-grace-period (default 40s): how long a node may stay silent before it is marked Unknown.",
    "nodeStartupGracePeriod": "--node-startup-grace-period (default 60s): the same, for nodes that never posted status.",
    "podEvictionTimeout": "--pod-eviction-timeout (default 5m): legacy mode only - how long before pods of a lost node are deleted.",
    "nodeEvictionRate": "--node-eviction-rate (default 0.1): nodes per second tainted/evicted in a healthy zone.",
    "secondaryNodeEvictionRate": "--secondary-node-eviction-rate (default 0.01): the rate in a partially disrupted large zone.",
    "largeClusterSizeThreshold": "--large-cluster-size-threshold (default 50): zones larger than this keep the secondary rate; smaller ones stop.",
    "unhealthyZoneThreshold": "--unhealthy-zone-threshold (default 0.55): fraction of not-ready nodes that makes a zone partially disrupted.",
    "enableTaintManager": "--enable-taint-manager (default true): taint-based eviction; false = the legacy pod eviction.",
    "defaultNotReadyTolerationSeconds": "--default-not-ready-toleration-seconds (default 300).",
    "defaultUnreachableTolerationSeconds": "--default-unreachable-toleration-seconds (default 300).",
    "nodeLeaseDurationSeconds": "nodeLeaseDurationSeconds (default 40): the kubelet renews every quarter of it.",
    "nodeStatusUpdateFrequency": "nodeStatusUpdateFrequency (default 10s).",
    "evictionHard": "evictionHard (default memory.available<100Mi, nodefs.available<10%, nodefs.inodesFree<5%, imagefs.available<15%; from Kubernetes 1.30 also imagefs.inodesFree<5%).",
    "evictionPressureTransitionPeriod": "evictionPressureTransitionPeriod (default 5m).",
}


SECTIONS = (
    ("controllerManager", "controller_manager", CM_FIELDS),
    ("kubelet", "kubelet", KUBELET_FIELDS),
    ("apiServer", "api_server", API_FIELDS),
)


def _shown(value: Any, kind: str) -> str:
    """A setting as the scenario format writes it (a duration as "40s"), for a text field."""
    if value is None:
        return ""
    if kind.startswith("duration") and isinstance(value, int):
        return f"{value / 1000:g}s"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(", ", ": "))
    return f"{value:g}" if isinstance(value, float) else str(value)


def room_settings(room: Room) -> tuple[Any, dict[str, Any]]:
    """(the room's release profile, {section: config}) as the room runs now: its scenario's
    settings with every applied SetParameters after them, in order."""
    scenario = load_scenario(room.scenario_yaml)
    configs = {
        "controllerManager": scenario.config.controller_manager,
        "kubelet": scenario.config.kubelet,
        "apiServer": scenario.config.api_server,
    }
    applied = room.actions.filter(status=Action.APPLIED, kind="SetParameters").order_by("id")
    for action in applied:
        for section, _attr, table in SECTIONS:
            if isinstance(action.payload.get(section), dict):
                configs[section] = apply_fields(
                    configs[section], action.payload[section], table, section
                )
    return scenario.profile, configs


def release_defaults(profile: Any) -> dict[str, Any]:
    """The release's own defaults per section (what a scenario that sets nothing runs with)."""
    return {
        "controllerManager": copy_config(
            ControllerManagerConfig(), **dict(profile.controller_manager_defaults)
        ),
        "kubelet": copy_config(KubeletConfig(), **dict(profile.kubelet_defaults)),
        "apiServer": ApiServerConfig(),
    }


class ParametersForm(forms.ModelForm):
    """One text field per setting the room's Kubernetes release has (a field it does not
    have, such as podEvictionTimeout under 1.34, is not offered), holding the value in force;
    its help names the flag and the release's default. Saving validates the changed fields as
    one SetParameters action (actions.validate_action: the room's release decides which
    fields exist and what they accept); the change is then applied by the next tick and logged
    with each field's old and new value."""

    class Meta:
        model = ClusterParameters
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting_fields: dict[str, tuple[str, str, str]] = {}  # form field -> section...
        room = self.instance.room if self.instance.pk else None
        if room is None:
            return
        profile, configs = room_settings(room)
        defaults = release_defaults(profile)
        for section, _attr, table in SECTIONS:
            for key, (attr, kind) in table.items():
                if f"{section}.{key}" in profile.fields_refused:
                    continue
                name = f"{section}__{key}"
                default = _shown(getattr(defaults[section], attr), kind) or "(the kubelet's)"
                flag = FLAG_HELP.get(key, key).split(" (default")[0].split(":")[0]
                self.fields[name] = forms.CharField(
                    label=f"{section}.{key}",
                    required=False,
                    initial=_shown(getattr(configs[section], attr), kind),
                    help_text=f"{flag}. Default in Kubernetes {profile.version}: {default}",
                )
                self.setting_fields[name] = (section, key, kind)
        self.profile = profile

    def changed_settings(self) -> dict[str, dict[str, Any]]:
        """{section: {field: value}} of the fields whose text changed, read as YAML values
        ("0.5" is a number, "40s" a duration, "{memory.available: 100Mi}" a mapping)."""
        out: dict[str, dict[str, Any]] = {}
        for name, (section, key, _kind) in self.setting_fields.items():
            text = (self.cleaned_data.get(name) or "").strip()
            if text == (self.fields[name].initial or "").strip():
                continue
            if not text:
                self.add_error(name, "give a value (empty: the field keeps its value)")
                continue
            try:
                value = safe_yaml.load(text, max_bytes=65536)
            except (yaml.YAMLError, safe_yaml.YamlLimitError) as exc:
                self.add_error(name, f"not a YAML value: {str(exc).splitlines()[0]}")
                continue
            out.setdefault(section, {})[key] = value
        return out

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not self.setting_fields:
            return data
        self.settings = self.changed_settings()
        if self.errors or not self.settings:
            return data
        try:
            actions.validate_action(self.instance.room, {"type": "SetParameters", **self.settings})
        except errors.REFUSALS as exc:
            # "action.controllerManager.nodeEvictionRate: ..." -> that field's error
            path = str(exc).split(":", 1)[0].split(".")
            name = f"{path[1]}__{path[2]}" if len(path) >= 3 else ""
            self.add_error(name if name in self.fields else None, str(exc))
        return data


@admin.register(ClusterParameters)
class ClusterParametersAdmin(admin.ModelAdmin):
    form = ParametersForm
    list_display = ("room",)

    def has_add_permission(self, request: Any) -> bool:
        return False  # each room has its own, made with it

    def get_fields(self, request: Any, obj: Any = None) -> list[str]:
        return list(self.get_form(request, obj, fields=None)(instance=obj).fields)

    def get_form(self, request: Any, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        kwargs["fields"] = None  # the form makes its own fields, per the room's release
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request: Any, obj: ClusterParameters, form: Any, change: bool) -> None:
        settings = getattr(form, "settings", None)
        if not settings:
            self.message_user(request, "Nothing changed.")
            return
        before = {
            name: form.fields[name].initial for name in form.setting_fields if name in form.fields
        }
        action = actions.parameters_submit(obj.room, settings, f"{request.user} (admin)")
        for section, attr, _table in SECTIONS:
            merged = {**getattr(obj, attr), **settings.get(section, {})}
            setattr(obj, attr, merged)
        obj.save()
        from .tasks import send_tick

        send_tick(obj.room.pk)
        changes = [
            f"{section}.{key}: {before.get(f'{section}__{key}') or '?'} -> {form.cleaned_data[f'{section}__{key}']}"
            for section, fields_ in settings.items()
            for key in fields_
        ]
        self.message_user(
            request, f"SetParameters (action {action.pk}) submitted: " + "; ".join(changes)
        )


@admin.register(Preset)
class PresetAdmin(admin.ModelAdmin):
    list_display = ("name", "description")


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "scenario_name", "speed", "paused", "sim_ms", "created_at")
    readonly_fields = ("sim_ms", "seq", "event_count", "version", "operator_token")


@admin.register(Action)
class ActionAdmin(admin.ModelAdmin):
    list_display = ("room", "kind", "actor", "status", "at_ms", "created_at")
    list_filter = ("status", "kind")

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
