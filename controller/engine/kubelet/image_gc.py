"""The kubelet's image garbage collection (pkg/kubelet/images/image_gc_manager.go): the
LRU ``freeSpace`` that both the eviction manager's node-level reclaim and the periodic
``GarbageCollect`` use, and the periodic loop (Kubelet.StartGarbageCollection)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..clock import MINUTE
from ..core import Handle, Phase

if TYPE_CHECKING:
    from .node_status import Kubelet

IMAGE_GC_PERIOD_MS = 5 * MINUTE  # ImageGCPeriod (kubelet.go)
UNLIMITED = 2**63 - 1  # DeleteUnusedImages frees math.MaxInt64 bytes


def free_space(kubelet: Kubelet, bytes_to_free: int, now: int) -> int:
    """Port of realImageGCManager.freeSpace: unused images least recently used first (then
    first detected), skipping those used at ``now`` or detected less than imageMinimumGCAge
    ago, until ``bytes_to_free`` is reached. Returns the bytes freed."""
    node = kubelet.node
    assert node is not None
    min_age = kubelet.cfg.image_minimum_gc_age_ms
    unused = sorted(
        (i for i in node.resources.images if not i.in_use),
        key=lambda i: (i.last_used_ms, i.first_detected_ms),
    )
    freed, removed = 0, set()
    for img in unused:
        if img.last_used_ms >= now or now - img.first_detected_ms < min_age:
            continue
        removed.add(id(img))
        freed += img.size
        if freed >= bytes_to_free:
            break
    if removed:
        node.resources.images = [i for i in node.resources.images if id(i) not in removed]
    return freed


class ImageGCLoop:
    """Kubelet.StartGarbageCollection's image half: ``wait.Until(GarbageCollect, 5m)`` from the
    kubelet's start (the first run at once); off when imageGCHighThresholdPercent is 100."""

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet
        self.sim = kubelet.sim
        self.handle: Handle | None = None
        self.prev_failed = False

    def start(self, now: int) -> None:
        """A kubelet process starts: a fresh loop (prevImageGCFailed false)."""
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.prev_failed = False
        if self.kubelet.cfg.image_gc_high_threshold_percent == 100:
            return
        self.handle = self.sim.sched.schedule(now, Phase.KUBELET_EVICTION, self._tick)

    def _tick(self) -> None:
        self.handle = None
        if not self.kubelet.alive:
            return  # the process is gone; start() begins a new loop
        now = self.sim.sched.now_ms
        self.garbage_collect(now)
        self.handle = self.sim.sched.schedule(
            now + IMAGE_GC_PERIOD_MS, Phase.KUBELET_EVICTION, self._tick
        )

    def garbage_collect(self, now: int) -> None:
        """Port of realImageGCManager.GarbageCollect and StartGarbageCollection's error
        handling: over imageGCHighThresholdPercent, free down to imageGCLowThresholdPercent;
        FreeDiskSpaceFailed when too little could be freed, ImageGCFailed when that happens
        twice in a row."""
        kubelet = self.kubelet
        node = kubelet.node
        if node is None:
            return
        fs = kubelet.eviction.image_fs_stats(now)
        # AvailableBytes is what the filesystem reports: never below 0, capped at capacity.
        capacity, available = fs.capacity, max(0, min(fs.capacity, fs.capacity - fs.used))
        cfg = kubelet.cfg
        if capacity == 0:
            message = "invalid capacity 0 on image filesystem"
            kubelet.record_event(
                now, f"Node/{node.name}", "InvalidDiskCapacity", message, "Warning"
            )
            self._failed(now, message)
            return
        usage_percent = 100 - available * 100 // capacity
        if usage_percent < cfg.image_gc_high_threshold_percent:
            self.prev_failed = False
            return
        amount = capacity * (100 - cfg.image_gc_low_threshold_percent) // 100 - available
        freed = free_space(kubelet, amount, now)
        if freed:
            self.sim.timeline.emit(
                now,
                "NodeReclaim",
                node=node.name,
                resource="ephemeral-storage",
                what="ImageGC",
                amount=freed,
            )
            kubelet.eviction.wake(now)
        if freed < amount:
            # The wording is the kubelet release's (reworded in 1.35, #132578).
            message = kubelet.profile.free_space_failed_message(
                amount, freed, usage_percent, capacity
            )
            kubelet.record_event(
                now, f"Node/{node.name}", "FreeDiskSpaceFailed", message, "Warning"
            )
            self._failed(now, message)
            return
        self.prev_failed = False

    def _failed(self, now: int, message: str) -> None:
        if self.prev_failed:
            node = self.kubelet.node_name
            self.kubelet.record_event(now, f"Node/{node}", "ImageGCFailed", message, "Warning")
        self.prev_failed = True
