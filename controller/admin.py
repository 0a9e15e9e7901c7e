"""Django admin (staff only): rooms, parameters with the Kubernetes flag help, presets,
the action log read-only. Parameters are validated with the scenario loader's code."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from .engine.config import ApiServerConfig, ControllerManagerConfig, KubeletConfig
from .engine.scenario import API_FIELDS, CM_FIELDS, KUBELET_FIELDS, ScenarioError, apply_fields
from .models import Action, ClusterParameters, Preset, Room

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


def _help(table: dict[str, tuple[str, str]]) -> str:
    return " | ".join(FLAG_HELP.get(k, k) for k in table)


class ParametersForm(forms.ModelForm):
    class Meta:
        model = ClusterParameters
        fields = ["room", "controller_manager", "kubelet", "api_server"]
        help_texts = {
            "controller_manager": _help(CM_FIELDS),
            "kubelet": _help(KUBELET_FIELDS),
            "api_server": _help(API_FIELDS),
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for field, base, table, path in (
            ("controller_manager", ControllerManagerConfig(), CM_FIELDS, "controllerManager"),
            ("kubelet", KubeletConfig(), KUBELET_FIELDS, "kubelet"),
            ("api_server", ApiServerConfig(), API_FIELDS, "apiServer"),
        ):
            try:
                apply_fields(base, data.get(field) or {}, table, path)
            except ScenarioError as exc:
                self.add_error(field, str(exc))
        return data


@admin.register(ClusterParameters)
class ClusterParametersAdmin(admin.ModelAdmin):
    form = ParametersForm
    list_display = ("room",)

    def save_model(self, request: Any, obj: ClusterParameters, form: Any, change: bool) -> None:
        from .rooms import actions, errors

        super().save_model(request, obj, form, change)
        params = {
            "controllerManager": obj.controller_manager,
            "kubelet": obj.kubelet,
            "apiServer": obj.api_server,
        }
        try:
            actions.parameters_submit(obj.room, params, f"{request.user} (admin)")
        except errors.ActionError:
            pass


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
