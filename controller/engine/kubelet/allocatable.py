"""Node allocatable: what the kubelet reports to the scheduler (port of the Allocatable part of
nodestatus.MachineInfo with cm.GetNodeAllocatableReservation, pkg/kubelet/cm)."""

from __future__ import annotations

from ..config import KubeletConfig
from .eviction.api import MEMORY_AVAILABLE, NODEFS_AVAILABLE, get_threshold_quantity
from .eviction.helpers import parse_threshold_config


def hard_eviction_reservation(cfg: KubeletConfig, capacity: dict[str, int]) -> dict[str, int]:
    """Port of cm.hardEvictionReservation: the hard memory.available and nodefs.available
    thresholds (ParseThresholdConfig of evictionHard alone, no allocatable copies), resolved
    against capacity, reserved from memory and ephemeral-storage."""
    out: dict[str, int] = {}
    for t in parse_threshold_config([], cfg.eviction_hard, {}, {}, {}):
        if t.signal == MEMORY_AVAILABLE:
            out["memory"] = get_threshold_quantity(t.value, capacity.get("memory", 0))
        elif t.signal == NODEFS_AVAILABLE:
            out["ephemeral-storage"] = get_threshold_quantity(
                t.value, capacity.get("ephemeral-storage", 0)
            )
    return out


def node_allocatable(cfg: KubeletConfig, capacity: dict[str, int]) -> dict[str, int]:
    """nodestatus.MachineInfo: Allocatable = Capacity - GetNodeAllocatableReservation (no
    kube-reserved or system-reserved in the playground, so the hard eviction thresholds),
    never below 0."""
    reserved = hard_eviction_reservation(cfg, capacity)
    return {k: max(0, v - reserved.get(k, 0)) for k, v in capacity.items()}
