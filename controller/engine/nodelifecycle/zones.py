"""Zone math of the NodeLifecycleController: pure functions (node_lifecycle_controller.go,
pkg/util/node GetZoneKey)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from ..objects import LABEL_REGION_BETA, LABEL_REGION_STABLE, LABEL_ZONE_BETA, LABEL_ZONE_STABLE


class ZoneState(StrEnum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def compute_zone_state(
    ready_statuses: Iterable[str | None], unhealthy_zone_threshold: float
) -> tuple[int, ZoneState]:
    """Port of Controller.ComputeZoneState: (not-ready count, state). A node without a Ready
    condition (None) counts as not ready."""
    ready = not_ready = 0
    for status in ready_statuses:
        if status == "True":
            ready += 1
        else:
            not_ready += 1
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and not_ready / (ready + not_ready) >= unhealthy_zone_threshold:
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def reduced_qps(zone_size: int, secondary_rate: float, large_cluster_threshold: int) -> float:
    """Port of Controller.ReducedQPSFunc: the secondary rate for large zones, else 0."""
    if zone_size > large_cluster_threshold:
        return secondary_rate
    return 0.0


def healthy_qps(zone_size: int, eviction_rate: float) -> float:
    """Port of Controller.HealthyQPSFunc."""
    return eviction_rate


def get_zone_key(labels: Mapping[str, str]) -> str:
    """Port of nodeutil.GetZoneKey (1.18): beta labels first, stable ones as fallback."""
    zone = labels.get(LABEL_ZONE_BETA) or labels.get(LABEL_ZONE_STABLE, "")
    region = labels.get(LABEL_REGION_BETA) or labels.get(LABEL_REGION_STABLE, "")
    if not zone and not region:
        return ""
    return region + ":\x00:" + zone


def zone_display(key: str) -> str:
    """``region/zone``, or just ``zone`` without a region (the timeline's zone field)."""
    if not key:
        return ""
    region, _, zone = key.partition(":\x00:")
    return f"{region}/{zone}" if region else zone
