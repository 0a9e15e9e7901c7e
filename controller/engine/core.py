"""The discrete-event scheduler: one heap of (time_ms, phase, seq, event).

Modelled on SimPy's core: ``schedule``/``peek``/``step``/``run(until)``, with the
sequence counter as the FIFO tie-break that makes runs reproducible. The phase
is the design's fixed same-instant order, so results never depend on a race.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from enum import IntEnum
from typing import Any


class Phase(IntEnum):
    """Same-instant order (design.md, "Time")."""

    FAULT = 10  # faults and user actions
    KUBELET_EVICTION = 20  # kubelet eviction-manager sync
    KUBELET_LEASE = 21  # lease renewal
    KUBELET_STATUS = 22  # node status computation / post
    KUBELET_POD = 23  # kubelet pod work (termination confirmations)
    KUBELET_POD_STATUS = 24  # the kubelet status manager's syncBatch
    CONTROLLER_MONITOR = 30  # NodeLifecycleController.monitorNodeHealth
    CONTROLLER_TAINTING = 31  # doNoExecuteTaintingPass / doEvictionPass
    EVENT_SINK = 32  # an event whose client token came (client.EventSink)
    TAINT_MANAGER = 40  # NoExecuteTaintManager timers
    WORKLOADS = 50  # workload controllers
    SCHEDULER = 51  # kube-scheduler


class Handle:
    """A scheduled event; ``cancel()`` makes the scheduler skip it."""

    __slots__ = ("time_ms", "phase", "fn", "args", "cancelled")

    def __init__(self, time_ms: int, phase: int, fn: Callable[..., Any], args: tuple) -> None:
        self.time_ms = time_ms
        self.phase = phase
        self.fn = fn
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler:
    """A min-heap of events ordered by (time, phase, insertion sequence)."""

    phase = 0  # the phase of the event running now (a class default: older pickles load)

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms
        self._heap: list[tuple[int, int, int, Handle]] = []
        self._seq = 0

    def schedule(self, time_ms: int, phase: int, fn: Callable[..., Any], *args: Any) -> Handle:
        if time_ms < self.now_ms:
            raise ValueError(f"cannot schedule in the past: {time_ms} < {self.now_ms}")
        handle = Handle(time_ms, phase, fn, args)
        self._seq += 1
        heapq.heappush(self._heap, (time_ms, phase, self._seq, handle))
        return handle

    def peek(self) -> int | None:
        """Time of the next live event, or None."""
        heap = self._heap
        while heap and heap[0][3].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def step(self) -> None:
        time_ms, _phase, _seq, handle = heapq.heappop(self._heap)
        if handle.cancelled:
            return
        self.now_ms = time_ms
        self.phase = _phase
        handle.fn(*handle.args)

    def run(self, until_ms: int) -> None:
        """Run every event with time <= ``until_ms``; the clock ends at ``until_ms``."""
        heap = self._heap
        pop = heapq.heappop
        while heap and heap[0][0] <= until_ms:
            time_ms, phase, _seq, handle = pop(heap)
            if handle.cancelled:
                continue
            self.now_ms = time_ms
            self.phase = phase
            handle.fn(*handle.args)
        if until_ms > self.now_ms:
            self.now_ms = until_ms

    def run_until(self, until_ms: int, stopped: Callable[[], int | None]) -> int:
        """``run(until_ms)``, except that once ``stopped()`` gives an instant ``t`` the run
        ends after the last event at ``t``: returns where the clock ends."""
        heap = self._heap
        pop = heapq.heappop
        stop_t = stopped()
        while heap and heap[0][0] <= until_ms:
            if stop_t is not None and heap[0][0] > stop_t:
                break
            time_ms, phase, _seq, handle = pop(heap)
            if handle.cancelled:
                continue
            self.now_ms = time_ms
            # As run() does: handlers read the running phase (a syncBatch "still to come at
            # this instant" is judged by it); a stale one made a lesson room's timeline differ
            # from simulate's.
            self.phase = phase
            handle.fn(*handle.args)
            if stop_t is None:
                stop_t = stopped()
        end = until_ms if stop_t is None else min(stop_t, until_ms)
        if end > self.now_ms:
            self.now_ms = end
        return self.now_ms

    def __len__(self) -> int:
        return len(self._heap)
