"""Component configuration in a scenario (spec.controllerManager, kubelet, apiServer,
featureGates): the field tables, conversion of each value, and the checks the components'
own validation makes."""

from __future__ import annotations

import re
from typing import Any

from ..config import (
    SCHEDULER_BURST,
    SCHEDULER_QPS,
    ControllerManagerConfig,
    KubeletConfig,
    SchedulerConfig,
    copy_config,
)
from ..values import FLOAT32_MAX, INT32_MAX, rate_problem
from .fields import (
    _bool,
    _dur,
    _int,
    _list,
    _map,
    _no_unknown,
    _num,
    _seconds,
    _show,
    _str,
)
from .model import (
    ScenarioError,
)

# -- component configuration ------------------------------------------------------------------
# The shortest nodeStatusUpdateFrequency taken. Kubernetes has no floor (the kubelet's
# ValidateKubeletConfiguration does not check it); real clusters use 1 s and up (10 s by
# default, 4 s in the docs' "fast update"). Every node's kubelet syncs its status once a period:
# at 1 ms a 63-node scenario took 0.86 s of CPU per simulated second, a 5,000-node room would
# take a minute for each; at this floor, 10 syncs a second per node.
MIN_STATUS_PERIOD_MS = 100
# The smallest positive client QPS taken: below it one token takes longer than a simulated
# day (Kubernetes has no floor; a float32 of 1e-30 would wait longer than a Go Duration holds).
MIN_CLIENT_QPS = 0.001
CM_FIELDS: dict[str, tuple[str, str]] = {
    "nodeMonitorPeriod": ("node_monitor_period_ms", "duration+"),
    "nodeMonitorGracePeriod": ("node_monitor_grace_period_ms", "duration+"),
    "nodeStartupGracePeriod": ("node_startup_grace_period_ms", "duration"),
    "podEvictionTimeout": ("pod_eviction_timeout_ms", "duration"),
    "nodeEvictionRate": ("node_eviction_rate", "rate"),
    "secondaryNodeEvictionRate": ("secondary_node_eviction_rate", "rate"),
    "largeClusterSizeThreshold": ("large_cluster_size_threshold", "int32"),
    "unhealthyZoneThreshold": ("unhealthy_zone_threshold", "fraction"),
    "enableTaintManager": ("enable_taint_manager", "bool"),
    "kubeAPIQPS": ("kube_api_qps", "client qps"),
    "kubeAPIBurst": ("kube_api_burst", "client burst"),
}
KUBELET_FIELDS: dict[str, tuple[str, str]] = {
    "nodeLeaseDurationSeconds": ("node_lease_duration_seconds", "int32+"),
    "nodeStatusUpdateFrequency": ("node_status_update_frequency_ms", "status period"),
    "nodeStatusReportFrequency": ("node_status_report_frequency_ms", "duration+"),
    "evictionHard": ("eviction_hard", "thresholds"),
    "evictionSoft": ("eviction_soft", "thresholds"),
    "evictionSoftGracePeriod": ("eviction_soft_grace_period", "durations"),
    "evictionMinimumReclaim": ("eviction_minimum_reclaim", "thresholds"),
    "evictionPressureTransitionPeriod": ("eviction_pressure_transition_period_ms", "duration"),
    "evictionMaxPodGracePeriod": ("eviction_max_pod_grace_period", "int32"),
    "enforceNodeAllocatable": ("enforce_node_allocatable", "strings"),
    "imageGCHighThresholdPercent": ("image_gc_high_threshold_percent", "percent"),
    "imageGCLowThresholdPercent": ("image_gc_low_threshold_percent", "percent"),
    "imageMinimumGCAge": ("image_minimum_gc_age_ms", "duration"),
    "evictionRankingPolicy": ("eviction_ranking_policy", "ranking"),
    "shutdownGracePeriod": ("shutdown_grace_period_ms", "duration"),
    "shutdownGracePeriodCriticalPods": ("shutdown_grace_period_critical_pods_ms", "duration"),
    "shutdownGracePeriodByPodPriority": ("shutdown_grace_period_by_pod_priority", "shutdown"),
    "kubeAPIQPS": ("kube_api_qps", "kubelet client"),
    "kubeAPIBurst": ("kube_api_burst", "kubelet client"),
    "eventRecordQPS": ("event_record_qps", "kubelet client"),
    "eventBurst": ("event_burst", "kubelet client"),
}
# The kubelet flag of each client field, as ValidateKubeletConfiguration names it.
KUBELET_CLIENT_FLAGS = {
    "kubeAPIQPS": "--kube-api-qps",
    "kubeAPIBurst": "--kube-api-burst",
    "eventRecordQPS": "--event-qps",
    "eventBurst": "--event-burst",
}
API_FIELDS: dict[str, tuple[str, str]] = {
    "defaultNotReadyTolerationSeconds": ("default_not_ready_toleration_seconds", "seconds"),
    "defaultUnreachableTolerationSeconds": ("default_unreachable_toleration_seconds", "seconds"),
    "disableAdmissionPlugins": ("disable_admission_plugins", "strings"),
}
GATE_FIELDS: dict[str, tuple[str, str]] = {
    "NodeDisruptionExclusion": ("node_disruption_exclusion", "bool"),
    "LegacyNodeRoleBehavior": ("legacy_node_role_behavior", "bool"),
}


def _convert(kind: str, v: Any, path: str) -> Any:
    if kind == "duration":
        return _dur(v, path)
    if kind == "duration+":
        return _dur(v, path, minimum_ms=1)
    if kind == "status period":
        ms = _dur(v, path, minimum_ms=1)
        if ms < MIN_STATUS_PERIOD_MS:
            raise ScenarioError(
                path,
                f"must be at least {MIN_STATUS_PERIOD_MS}ms, got {_show(v)} (the playground's "
                "floor: every node's kubelet syncs its status once a period)",
            )
        return ms
    if kind == "rate":  # a float32 flag of kube-controller-manager
        rate = _num(v, path, minimum=0.0)
        why = rate_problem(rate, "--" + re.sub("([A-Z])", r"-\1", path.rsplit(".", 1)[-1]).lower())
        if why:
            raise ScenarioError(path, why)
        return rate
    if kind == "client qps":  # a float32 flag; below 0: no client-side rate limiting
        qps = _num(v, path, minimum=None)
        if abs(qps) > FLOAT32_MAX:
            raise ScenarioError(path, f"{qps:g} is out of range (a float32)")
        if 0 < qps < MIN_CLIENT_QPS:
            raise ScenarioError(
                path,
                f"{qps:g} requests/s is below the playground's floor {MIN_CLIENT_QPS:g} "
                "(use 0 for client-go's default 5, a negative value for no rate limiting)",
            )
        return qps
    if kind == "kubelet client":
        # An int32 of the kubelet's config file (no fractional QPS); ValidateKubeletConfiguration
        # (pkg/kubelet/apis/config/validation) refuses a negative one.
        n = _int(v, path, minimum=None, maximum=INT32_MAX)
        if n < 0:
            key = path.rsplit(".", 1)[-1]
            raise ScenarioError(
                path, f"{key} ({KUBELET_CLIENT_FLAGS[key]}) {n} must not be a negative number"
            )
        return n
    if kind == "client burst":
        return _int(v, path, minimum=-INT32_MAX - 1, maximum=INT32_MAX)
    if kind == "int32":
        return _int(v, path, maximum=INT32_MAX)
    if kind == "int32+":
        return _int(v, path, minimum=1, maximum=INT32_MAX)
    if kind == "seconds":
        return _seconds(v, path)
    if kind == "fraction":
        return _num(v, path, minimum=0.0, maximum=1.0)
    if kind == "percent":
        return _int(v, path, minimum=0) if _int(v, path) <= 100 else _too_big(path, v)
    if kind == "bool":
        return _bool(v, path)
    if kind == "strings":
        return [_str(x, f"{path}[{i}]") for i, x in enumerate(_list(v, path))]
    if kind == "thresholds":
        out = {}
        for k, x in _map(v, path).items():
            if isinstance(x, int | float) and not isinstance(x, bool):
                x = str(x)
            out[k] = _str(x, f"{path}.{k}")
        return out
    if kind == "durations":
        out2 = {}
        for k, x in _map(v, path).items():
            _dur(x, f"{path}.{k}")
            out2[k] = x if isinstance(x, str) else f"{x}s"
        return out2
    if kind == "shutdown":
        return _shutdown_priorities(v, path)
    if kind == "ranking":
        if v not in ("priority", "qos"):
            raise ScenarioError(path, f'must be "priority" (v1.18) or "qos", got {_show(v)}')
        return v
    raise AssertionError(kind)


def _shutdown_priorities(v: Any, path: str) -> list[tuple[int, int]]:
    """ShutdownGracePeriodByPodPriority: a list of {priority, shutdownGracePeriodSeconds}."""
    out = []
    for i, item in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        d = _map(item, p)
        _no_unknown(d, {"priority", "shutdownGracePeriodSeconds"}, p)
        for key in ("priority", "shutdownGracePeriodSeconds"):
            if key not in d:
                raise ScenarioError(f"{p}.{key}", "is required")
        out.append(
            (
                _int(d["priority"], f"{p}.priority", minimum=-(2**31), maximum=2**31 - 1),
                _seconds(d["shutdownGracePeriodSeconds"], f"{p}.shutdownGracePeriodSeconds"),
            )
        )
    return out


def _go_seconds(ms: int) -> str:
    """A duration as Go prints it, for the seconds this field takes ("30s", "1.5s")."""
    return f"{ms / 1000:g}s"


def _check_shutdown(cfg: KubeletConfig, path: str) -> None:
    """The graceful node shutdown part of ValidateKubeletConfiguration."""
    grace, critical = cfg.shutdown_grace_period_ms, cfg.shutdown_grace_period_critical_pods_ms
    if critical > grace:
        raise ScenarioError(
            f"{path}.shutdownGracePeriodCriticalPods",
            f"{_go_seconds(critical)} must be <= shutdownGracePeriod {_go_seconds(grace)}",
        )
    for key, ms in (("shutdownGracePeriod", grace), ("shutdownGracePeriodCriticalPods", critical)):
        if 0 < ms < 1000:
            raise ScenarioError(
                f"{path}.{key}", f"{_go_seconds(ms)} must be either zero or otherwise >= 1 sec"
            )
    if cfg.shutdown_grace_period_by_pod_priority and (grace > 0 or critical > 0):
        raise ScenarioError(
            f"{path}.shutdownGracePeriodByPodPriority",
            "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at "
            "the same time",
        )


def _check_client(qps: float, burst: int, burst_path: str) -> None:
    """kube-controller-manager does not validate --kube-api-burst, but with a rate limiter
    (QPS not below 0) a negative burst makes client-go refuse every request ("rate: Wait(n=1)
    exceeds limiter's burst"): the controllers could never write. Refused here."""
    if qps >= 0 and burst < 0:
        raise ScenarioError(
            burst_path,
            f"{burst} must not be negative while the QPS limits requests: client-go's "
            "token bucket would refuse every request (0 means client-go's default 10)",
        )


def parse_scheduler(data: Any, path: str) -> SchedulerConfig:
    """spec.scheduler: KubeSchedulerConfiguration's ``clientConnection`` {qps, burst}, the
    only part the playground reads. Defaulted as SetDefaults_KubeSchedulerConfiguration does
    (0 -> QPS 50, Burst 100) and validated as ValidateKubeSchedulerConfiguration does
    (ValidateClientConnectionConfiguration: "must be non-negative" for a burst below 0; any
    QPS: a negative one is no rate limiter), within the playground's bounds (the float32
    range and the same floor as kubeAPIQPS; burst an int32)."""
    return apply_scheduler(SchedulerConfig(), data, path)


# spec.scheduler.clientConnection's fields: (SchedulerConfig attribute, kind for _shown)
SCHEDULER_CLIENT_FIELDS: dict[str, tuple[str, str]] = {
    "qps": ("client_qps", "client qps"),
    "burst": ("client_burst", "client burst"),
}


def apply_scheduler(cfg: SchedulerConfig, data: Any, path: str) -> SchedulerConfig:
    """A copy of ``cfg`` with a scheduler section (``{clientConnection: {qps, burst}}``)
    applied: the fields it names, checked as parse_scheduler says; ``cfg`` is not changed."""
    out = copy_config(cfg)
    if data is None:
        return out
    d = _map(data, path)
    _no_unknown(d, {"clientConnection"}, path)
    cc_path = f"{path}.clientConnection"
    cc = _map(d.get("clientConnection") or {}, cc_path)
    _no_unknown(cc, set(SCHEDULER_CLIENT_FIELDS), cc_path)
    if "qps" in cc:
        qps = _convert("client qps", cc["qps"], f"{cc_path}.qps")
        out.client_qps = qps if qps != 0 else SCHEDULER_QPS
    if "burst" in cc:
        burst = _int(cc["burst"], f"{cc_path}.burst", minimum=-INT32_MAX - 1, maximum=INT32_MAX)
        if burst < 0:
            raise ScenarioError(f"{cc_path}.burst", f"Invalid value: {burst}: must be non-negative")
        out.client_burst = burst if burst != 0 else SCHEDULER_BURST
    return out


def _too_big(path: str, v: Any) -> int:
    raise ScenarioError(path, f"must be between 0 and 100, got {v}")


def apply_fields(obj: Any, data: Any, table: dict[str, tuple[str, str]], path: str) -> Any:
    """A copy of config dataclass ``obj`` with the camelCase fields of ``data`` applied."""
    d = _map(data, path)
    _no_unknown(d, set(table), path)
    changes = {}
    for key, value in d.items():
        attr, kind = table[key]
        changes[attr] = _convert(kind, value, f"{path}.{key}")
    out = copy_config(obj, **changes)
    if isinstance(out, ControllerManagerConfig):
        _check_client(out.kube_api_qps, out.kube_api_burst, f"{path}.kubeAPIBurst")
    if isinstance(out, KubeletConfig):
        _check_kubelet(out, data if isinstance(data, dict) else {}, path)
    return out


def _check_kubelet(cfg: KubeletConfig, data: dict[str, Any], path: str) -> None:
    from ..kubelet.eviction.helpers import parse_threshold_config

    if "nodeStatusUpdateFrequency" in data and "nodeStatusReportFrequency" not in data:
        # Since 1.17 the report frequency follows an explicitly set update frequency.
        cfg.node_status_report_frequency_ms = cfg.node_status_update_frequency_ms
    try:
        parse_threshold_config(
            cfg.enforce_node_allocatable,
            cfg.eviction_hard,
            cfg.eviction_soft,
            cfg.eviction_soft_grace_period,
            cfg.eviction_minimum_reclaim,
            path_prefix=path,
        )
    except ValueError as exc:
        msg = str(exc)
        raise ScenarioError("", msg if msg.startswith(path) else f"{path}: {msg}") from None
    # ValidateKubeletConfiguration (pkg/kubelet/apis/config/validation)
    if cfg.image_gc_low_threshold_percent >= cfg.image_gc_high_threshold_percent:
        raise ScenarioError(
            f"{path}.imageGCLowThresholdPercent",
            f"{cfg.image_gc_low_threshold_percent} must be less than "
            f"imageGCHighThresholdPercent {cfg.image_gc_high_threshold_percent}",
        )
    for i, value in enumerate(cfg.enforce_node_allocatable):
        if value not in ("pods", "system-reserved", "kube-reserved", "none"):
            raise ScenarioError(
                f"{path}.enforceNodeAllocatable[{i}]",
                f"must be pods, system-reserved, kube-reserved or none, got {_show(value)}",
            )
    if "none" in cfg.enforce_node_allocatable and len(cfg.enforce_node_allocatable) > 1:
        raise ScenarioError(
            f"{path}.enforceNodeAllocatable", '"none" cannot be combined with other values'
        )
    _check_shutdown(cfg, path)
