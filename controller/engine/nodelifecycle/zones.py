"""Zone math of the NodeLifecycleController: pure functions.

Ports of ``Controller.ComputeZoneState``, ``ReducedQPSFunc`` and ``HealthyQPSFunc``
(``pkg/controller/nodelifecycle/node_lifecycle_controller.go``) and of ``GetZoneKey``
(``pkg/util/node/node.go``, 1.18). The controller's rates and threshold are Go ``float32``;
the ratio test below is done in float32 as Go does it, the rates are returned as configured
(the rate-limited queue rounds them to float32 where Kubernetes does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from ..objects import LABEL_REGION_BETA, LABEL_REGION_STABLE, LABEL_ZONE_BETA, LABEL_ZONE_STABLE
from .rate_limited_queue import float32

ZONE_KEY_SEPARATOR = ":\x00:"


class ZoneState(StrEnum):
    """Kubernetes' ZoneState strings (stateInitial, stateNormal, ...)."""

    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def compute_zone_state(
    ready_statuses: Iterable[str | None], unhealthy_zone_threshold: float
) -> tuple[int, ZoneState]:
    """Port of Controller.ComputeZoneState: (not-ready count, state).

    ``ready_statuses`` holds each node's Ready condition status; only ``"True"`` is ready,
    and a node without a Ready condition (None) counts as not ready. The partial test is
    ``float32(notReady)/float32(notReady+ready) >= unhealthyZoneThreshold`` in float32."""
    ready = not_ready = 0
    for status in ready_statuses:
        if status == "True":
            ready += 1
        else:
            not_ready += 1
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2:
        ratio = float32(float32(not_ready) / float32(not_ready + ready))
        if ratio >= float32(unhealthy_zone_threshold):
            return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def reduced_qps(zone_size: int, secondary_rate: float, large_cluster_threshold: int) -> float:
    """Port of Controller.ReducedQPSFunc: the secondary rate for zones strictly larger than
    the large-cluster threshold, else 0 (evictions stop)."""
    if zone_size > large_cluster_threshold:
        return secondary_rate
    return 0.0


def healthy_qps(zone_size: int, eviction_rate: float) -> float:
    """Port of Controller.HealthyQPSFunc: the normal eviction rate, whatever the size."""
    return eviction_rate


def get_zone_key(labels: Mapping[str, str]) -> str:
    """Port of nodeutil.GetZoneKey (1.18): ``region + ":\\x00:" + zone``, or "" when both are
    empty. The beta labels win when present (even if empty); the stable
    ``topology.kubernetes.io`` labels are read only when the beta key is absent."""
    zone = _label(labels, LABEL_ZONE_BETA, LABEL_ZONE_STABLE)
    region = _label(labels, LABEL_REGION_BETA, LABEL_REGION_STABLE)
    if region == "" and zone == "":
        return ""
    return region + ZONE_KEY_SEPARATOR + zone


def _label(labels: Mapping[str, str], key: str, fallback: str) -> str:
    """Go's ``v, ok := labels[key]; if !ok { v = labels[fallback] }``."""
    return labels[key] if key in labels else labels.get(fallback, "")


def zone_display(key: str) -> str:
    """A zone key for people: ``region/zone``, just ``zone`` without a region, "" for ""."""
    if not key:
        return ""
    region, _, zone = key.partition(ZONE_KEY_SEPARATOR)
    return f"{region}/{zone}" if region else zone
