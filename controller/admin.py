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
from .engine.config import (
    ApiServerConfig,
    ControllerManagerConfig,
    KubeletConfig,
    SchedulerConfig,
    copy_config,
)
from .engine.scenario import (
    API_FIELDS,
    CM_FIELDS,
    KUBELET_FIELDS,
    SCHEDULER_CLIENT_FIELDS,
    apply_fields,
    apply_scheduler,
    load_scenario,
)
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
    "kubeAPIQPS": "--kube-api-qps (default 20): each controller's client-side rate limit, requests per second (node status, taints, pod status, events); 0 = client-go's 5, below 0 = none.",
    "kubeAPIBurst": "--kube-api-burst (default 30): the burst of that token bucket; 0 = client-go's 10.",
    "clientConnection.qps": "kube-scheduler clientConnection.qps (default 50; its deprecated flag --kube-api-qps): the scheduler's client-side rate limit for its binds, requests per second; 0 = 50, below 0 = none.",
    "clientConnection.burst": "kube-scheduler clientConnection.burst (default 100; its deprecated flag --kube-api-burst): the burst of that token bucket; 0 = 100, below 0 refused.",
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
    # kube-scheduler's KubeSchedulerConfiguration, its fields nested ("clientConnection.qps");
    # ClusterParameters has no column for it: the form reads the scenario and the actions.
    ("scheduler", None, {f"clientConnection.{k}": v for k, v in SCHEDULER_CLIENT_FIELDS.items()}),
)


def _nested(key: str, value: Any) -> dict[str, Any]:
    """A section's field as a payload has it: "clientConnection.qps" -> {clientConnection:
    {qps: value}}; a plain field -> {field: value}."""
    head, _dot, rest = key.partition(".")
    return {head: _nested(rest, value) if rest else value}


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    for k, v in more.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _shown(value: Any, kind: str) -> str:
    """A setting as the scenario format writes it (a duration as "40s"), for a text field."""
    if value is None:
        return ""
    # Every duration in one style ("10s"): the status period too, which showed as "10000"
    # (its kind is "status period", a duration with a floor).
    if (kind.startswith("duration") or kind == "status period") and isinstance(value, int):
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
        "scheduler": scenario.config.scheduler,
    }
    applied = room.actions.filter(status=Action.APPLIED, kind="SetParameters").order_by("id")
    for action in applied:
        for section, _attr, table in SECTIONS:
            if section == "scheduler" and isinstance(action.payload.get(section), dict):
                configs[section] = apply_scheduler(
                    configs[section], action.payload[section], section
                )
            elif isinstance(action.payload.get(section), dict):
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
        "scheduler": SchedulerConfig(),
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
                name = f"{section}__{key.replace('.', '__')}"
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
        self.changed_names: list[str] = []
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
            _merge(out.setdefault(section, {}), _nested(key, value))
            self.changed_names.append(name)
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
            # the longest path that is a field: "kubelet.evictionHard.memory.available" is
            # kubelet__evictionHard, "scheduler.clientConnection.burst" its own field
            names = ["__".join(path[1:n]) for n in range(len(path), 2, -1)]
            name = next((n for n in names if n in self.fields), "")
            self.add_error(name or None, str(exc))
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
            if attr is None:
                continue
            merged = {**getattr(obj, attr), **settings.get(section, {})}
            setattr(obj, attr, merged)
        obj.save()
        from .tasks import send_tick

        send_tick(obj.room.pk)
        # As the timeline will log it: "nodeEvictionRate 0.1 → 0.5" (engine/timeline.py).
        changes = [
            f"{form.setting_fields[name][1].rsplit('.', 1)[-1]} {before.get(name) or '?'} → "
            f"{form.cleaned_data[name]}"
            for name in form.changed_names
        ]
        self.message_user(
            request, f"Parameters change submitted (action {action.pk}): " + "; ".join(changes)
        )


@admin.register(Preset)
class PresetAdmin(admin.ModelAdmin):
    list_display = ("name", "description")


def seconds_shown(ms: int | None) -> str:
    """A simulated time or duration in ms as every duration of the admin reads: "105s"."""
    return "" if ms is None else f"{ms / 1000:g}s"


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "scenario_name", "speed", "paused", "sim_time", "created_at")
    # The clock's milliseconds are the tick's to write: shown as durations ("3208s"), not
    # edited (issue #38: every duration of the admin in one unit style).
    exclude = ("sim_ms", "sim_anchor_ms", "series_t_ms")
    readonly_fields = (
        "sim_time",
        "clock_anchor",
        "charts_until",
        "seq",
        "event_count",
        "version",
        "operator_token",
    )

    @admin.display(description="simulated time", ordering="sim_ms")
    def sim_time(self, obj: Room) -> str:
        return seconds_shown(obj.sim_ms)

    @admin.display(description="clock anchor (simulated)")
    def clock_anchor(self, obj: Room) -> str:
        return seconds_shown(obj.sim_anchor_ms)

    @admin.display(description="chart points stored up to")
    def charts_until(self, obj: Room) -> str:
        return seconds_shown(obj.series_t_ms)


@admin.register(Action)
class ActionAdmin(admin.ModelAdmin):
    list_display = ("room", "kind", "actor", "status", "at", "created_at")
    list_filter = ("status", "kind")
    exclude = ("at_ms",)
    readonly_fields = ("at",)

    @admin.display(description="simulated time applied", ordering="at_ms")
    def at(self, obj: Action) -> str:
        return seconds_shown(obj.at_ms)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
