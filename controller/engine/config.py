"""Component configuration with Kubernetes v1.18 defaults (k8s-behavior.md section 1); a
version profile (versions.py) overrides the defaults its release changed.

Field names follow KubeControllerManagerConfiguration / KubeletConfiguration; durations
are held in milliseconds (``*_ms``) once parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .clock import MINUTE, SECOND

if TYPE_CHECKING:
    from .versions import Profile


@dataclass(slots=True)
class ControllerManagerConfig:
    node_monitor_period_ms: int = 5 * SECOND
    node_monitor_grace_period_ms: int = 40 * SECOND
    node_startup_grace_period_ms: int = 60 * SECOND
    pod_eviction_timeout_ms: int = 5 * MINUTE
    node_eviction_rate: float = 0.1
    secondary_node_eviction_rate: float = 0.01
    large_cluster_size_threshold: int = 50
    unhealthy_zone_threshold: float = 0.55
    enable_taint_manager: bool = True
    # --kube-api-qps / --kube-api-burst: every controller's clientset (ClientBuilder
    # .ClientOrDie(name)) gets a token bucket of these (GenericControllerManagerConfiguration
    # ClientConnection defaults 20 / 30, every release). 0 is client-go's default (5 / 10),
    # a negative QPS no rate limiting (rest.RESTClientFor).
    kube_api_qps: float = 20.0
    kube_api_burst: int = 30


@dataclass(slots=True)
class KubeletConfig:
    node_lease_duration_seconds: int = 40
    node_status_update_frequency_ms: int = 10 * SECOND
    node_status_report_frequency_ms: int = 5 * MINUTE
    eviction_hard: dict[str, str] | None = None  # None = the kubelet's defaults
    eviction_soft: dict[str, str] = field(default_factory=dict)
    eviction_soft_grace_period: dict[str, str] = field(default_factory=dict)
    eviction_minimum_reclaim: dict[str, str] = field(default_factory=dict)
    eviction_pressure_transition_period_ms: int = 5 * MINUTE
    eviction_max_pod_grace_period: int = 0
    enforce_node_allocatable: list[str] = field(default_factory=lambda: ["pods"])
    image_gc_high_threshold_percent: int = 85
    image_gc_low_threshold_percent: int = 80
    image_minimum_gc_age_ms: int = 2 * MINUTE
    eviction_ranking_policy: str = "priority"  # "qos": the pre-1.9 qosComparator ranking
    # Graceful node shutdown (GracefulNodeShutdown, 1.21+): 0 = the shutdown manager is off.
    shutdown_grace_period_ms: int = 0
    shutdown_grace_period_critical_pods_ms: int = 0
    # (priority, shutdownGracePeriodSeconds) pairs (GracefulNodeShutdownBasedOnPodPriority).
    shutdown_grace_period_by_pod_priority: list[tuple[int, int]] = field(default_factory=list)
    # The kubelet's API clients (cmd/kubelet/app/server.go run): kubeAPIQPS / kubeAPIBurst for
    # its main client (pod status, pod deletes), eventRecordQPS / eventBurst for its event
    # client; int32 config file fields, 1.18's defaults here (5 / 10 and 5 / 10), the later
    # releases' in versions.py (50 / 100, #116121). Kept as written: a QPS of 0 is client-go's
    # 5 (rest.RESTClientFor), a burst of 0 the release's default (SetDefaults_
    # KubeletConfiguration); kubelet/clients.py resolves both when it builds the clients.
    kube_api_qps: int = 5
    kube_api_burst: int = 10
    event_record_qps: int = 5
    event_burst: int = 10

    @property
    def lease_renew_interval_ms(self) -> int:
        """0.25 x nodeLeaseDurationSeconds (pkg/kubelet/nodelease renewIntervalFraction)."""
        return self.node_lease_duration_seconds * SECOND // 4


@dataclass(slots=True)
class ApiServerConfig:
    default_not_ready_toleration_seconds: int = 300
    default_unreachable_toleration_seconds: int = 300
    disable_admission_plugins: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SchedulerConfig:
    """KubeSchedulerConfiguration's clientConnection, as defaulted: kube-scheduler's own
    opinion, QPS 50 and Burst 100 where 0 is written (SetDefaults_KubeSchedulerConfiguration,
    1.18's v1alpha2 and every later version alike); a negative QPS is no rate limiter
    (rest.RESTClientFor)."""

    client_qps: float = 50.0  # SCHEDULER_QPS
    client_burst: int = 100  # SCHEDULER_BURST


SCHEDULER_QPS = 50.0
SCHEDULER_BURST = 100


@dataclass(slots=True)
class FeatureGates:
    node_disruption_exclusion: bool = False
    legacy_node_role_behavior: bool = True


@dataclass(slots=True)
class ClusterConfig:
    controller_manager: ControllerManagerConfig = field(default_factory=ControllerManagerConfig)
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    api_server: ApiServerConfig = field(default_factory=ApiServerConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    profile: Profile = field(default_factory=lambda: _v1_18())


def _v1_18() -> Profile:
    from .versions import V1_18

    return V1_18


def copy_config(obj: Any, **changes: Any) -> Any:
    """A shallow copy with changes (dataclasses.replace, lists/dicts copied)."""
    out = replace(obj, **changes)
    for f in fields(out):
        v = getattr(out, f.name)
        if isinstance(v, dict | list):
            setattr(out, f.name, type(v)(v))
    return out
