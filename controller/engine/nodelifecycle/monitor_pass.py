"""One run of Controller.monitorNodeHealth whose requests wait for the node-controller's
client tokens (client.py): the nodes' loop body (``updateNodeFunc``) as goroutines that stop
at each request whose token is not there yet and go on at the token's instant.

1.18 visits the nodes one after another (``for i := range nodes``); later releases hand them
to ``workqueue.ParallelizeUntil(ctx, nc.nodeUpdateWorkerSize = 8, len(nodes), ...)``: each of
the 8 workers takes the next node when it is free. Goroutines that can go on at the same
instant go on in the order they started waiting (the engine's stand-in for Go's scheduler):
the scheduler's same-instant order is first scheduled, first run.

Written as continuations (bound methods and their arguments in the scheduler's queue), not
generators, so that a room's engine can be pickled in the middle of a long pass.

A visit's decisions are taken at the instant of the visit, with the objects as they are then
(the listers' view); requests take no time but their wait. Go's ``nodes[piece]`` is the list
of the pass's start: a node deleted in the meantime is still visited there (its update
fails); here it is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..core import Phase
from ..objects import TRUE, Node, Pod

if TYPE_CHECKING:
    from .controller import NodeLifecycleController
    from .lazy_health import LazyHealth


class MonitorPass:
    """The pass's state: what the workers share, and how many still run."""

    __slots__ = (
        "ctl",
        "start",
        "nodes",
        "lazy",
        "pieces",
        "done",
        "zone_conds",
        "running",
        "waited",
    )

    def __init__(
        self,
        ctl: NodeLifecycleController,
        start: int,
        nodes: list[Node],
        lazy: LazyHealth | None,
        pieces: Iterator[Node],
        done: Callable[[], None] | None,
    ) -> None:
        self.ctl = ctl
        self.start = start
        self.nodes = nodes
        self.lazy = lazy
        self.pieces = pieces
        self.done = done
        self.zone_conds: dict[str, list[str | None]] = {}
        self.running = 0
        self.waited = False

    def run(self, workers: int) -> None:
        self.running = workers
        for _ in range(workers):
            self._worker()

    # -- the workers ------------------------------------------------------------------------
    def _worker(self) -> None:
        """A worker takes the next node while its visits end at once."""
        while not self.ctl.stopped:
            node = next(self.pieces, None)
            if node is None:
                self.running -= 1
                if self.running == 0:
                    self._end()
                return
            if node.name not in self.ctl.cluster.nodes:
                continue
            if not self._visit(node):
                return  # waiting: the visit's continuation takes the worker on

    def _end(self) -> None:
        ctl = self.ctl
        ctl.end_monitor_pass(self)
        now = ctl.sim.sched.now_ms
        # Requests of the pass the engine makes without suspending it (markNodeAsReachable of
        # handleDisruption, ...): the pass ends with the last of them.
        if ctl._pass_writes_until > now:
            ctl.sim.sched.schedule(ctl._pass_writes_until, Phase.CONTROLLER_MONITOR, self._finish)
        else:
            self._finish()

    def _finish(self) -> None:
        if self.done is not None and not self.ctl.stopped:
            self.done()

    def _wait(self, fn: Callable[..., bool], *args: Any) -> bool:
        """``rateLimiter.Wait`` then ``fn(*args)``: True when the visit ended now, False when
        it goes on at the token's instant."""
        sched = self.ctl.sim.sched
        now = sched.now_ms
        t = self.ctl.client.reserve(now)
        if t <= now:
            return fn(*args)
        self._waits()
        sched.schedule(t, Phase.CONTROLLER_MONITOR, self._resume, fn, args)
        return False

    def _waits(self) -> None:
        if not self.waited:
            self.waited = True
            if self.lazy is not None:
                self.lazy.pass_waits()

    def _resume(self, fn: Callable[..., bool], args: tuple[Any, ...]) -> None:
        if not self.ctl.stopped and fn(*args):
            self._worker()

    # -- one node: updateNodeFunc -----------------------------------------------------------
    def _visit(self, node: Node) -> bool:
        ctl = self.ctl
        _grace, observed, current, write = ctl.try_update_node_health(node, ctl.sim.sched.now_ms)
        if write is not None:
            return self._wait(self._health_written, node, observed, write)
        return self._after_health(node, observed, current)

    def _health_written(self, node: Node, observed: Any, write: tuple[Any, ...]) -> bool:
        current = self.ctl.write_node_health(node, write, self.ctl.sim.sched.now_ms)
        return self._after_health(node, observed, current)

    def _after_health(self, node: Node, observed: Any, current: Any) -> bool:
        ctl = self.ctl
        if not node.excluded_from_disruption:
            conds = self.zone_conds.get(node.zone_key)
            if conds is None:
                conds = self.zone_conds[node.zone_key] = []
            conds.append(current.status if current is not None else None)
        if current is None:
            return True
        now = ctl.sim.sched.now_ms
        if ctl.taint_mode:
            swap = ctl.taint_base_eviction_swap(node, observed.status, now)
            if swap is not None:
                return self._wait(self._swapped, node, observed, current, swap)
        else:
            ctl.process_no_taint_base_eviction(
                node, observed.status, ctl.cluster.pods_on_node(node.name), now
            )
        return self._after_taint(node, observed, current)

    def _swapped(self, node: Node, observed: Any, current: Any, swap: tuple[Any, ...]) -> bool:
        self.ctl.swap_taints_now(node, swap, self.ctl.sim.sched.now_ms)
        return self._after_taint(node, observed, current)

    def _after_taint(self, node: Node, observed: Any, current: Any) -> bool:
        ctl = self.ctl
        if current.status == TRUE or observed.status != TRUE:
            return True
        ctl._event(
            ctl.sim.sched.now_ms,
            f"Node/{node.name}",
            "NodeNotReady",
            f"Node {node.name} status is now: NodeNotReady",
        )
        if ctl.sim.config.profile.mark_pods_not_ready_lists_pods:
            return self._wait(self._pods_listed, node.name)  # 1.18: MarkAllPodsNotReady's List
        return self._pods_listed(node.name)

    def _pods_listed(self, node_name: str) -> bool:
        pods = [p for p in self.ctl.cluster.pods_on_node(node_name) if p.node_name == node_name]
        return self._mark_from(node_name, pods, 0)

    def _mark_from(self, node_name: str, pods: list[Pod], i: int) -> bool:
        """MarkPodsNotReady from pod ``i`` on: one UpdateStatus per pod it sets not ready."""
        ctl = self.ctl
        sched = ctl.sim.sched
        event = ctl.sim.config.profile.mark_pods_not_ready_event
        while i < len(pods):
            pod = pods[i]
            if pod.ready is not True:
                i += 1
                continue
            now = sched.now_ms
            t = ctl.client.reserve(now)
            if t > now:
                self._waits()
                sched.schedule(
                    t,
                    Phase.CONTROLLER_MONITOR,
                    self._resume,
                    self._pod_resumed,
                    (node_name, pods, i),
                )
                return False
            ctl._pod_not_ready_now(now, pod, event)
            i += 1
        return True

    def _pod_resumed(self, node_name: str, pods: list[Pod], i: int) -> bool:
        ctl = self.ctl
        ctl._pod_not_ready_now(
            ctl.sim.sched.now_ms, pods[i], ctl.sim.config.profile.mark_pods_not_ready_event
        )
        return self._mark_from(node_name, pods, i + 1)
