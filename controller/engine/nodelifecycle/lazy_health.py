"""The monitor pass's shortcut for nodes whose visit would change nothing (issue #27).

Controller.monitorNodeHealth runs ``for i := range nodes { tryUpdateNodeHealth(node); ...
processTaintBaseEviction(node) }`` over every node every nodeMonitorPeriod. For a node that is
Ready=True, carries neither NoExecute taint of the controller, is in no zone queue (and, with
the taint manager off, is ``unmarked``) and whose status has not been written since its last
visit, that loop body does one thing: when the kubelet renewed the Lease since the last pass,
``nodeHealth.lease = observedLease; probeTimestamp = now``. Such a node is *parked* here: it
is not visited, and its ``NodeHealth`` is brought up to date (``materialize``) only when
someone reads it or it must be visited again, in closed form: after the passes up to
``through``, the saved lease is the Lease's renewTime at ``through`` and the probe timestamp
is the first pass that saw it (renewTime is the instant of the write, so the first pass at or
after it). A node Ready=False or Unknown (taint manager on) is parked too once it sits in its
zone queue's set without the other status's taint (and, in releases that requeue, with its
own): markNodeForTainting's Add is refused, so its visits change nothing either (an Unknown one has no deadline: nothing
more is written to it).

A parked node is visited again (unparked) when:

- its status or taints are written (``node_written``): the next pass (or this one, when the
  write comes during a pass before the node's turn) visits it, as the straightforward loop
  would see the write;
- the pass where ``now > probeTimestamp + nodeMonitorGracePeriod`` could hold comes (the
  deadline heap). A kubelet that keeps renewing every leaseDuration/4 <= grace period never
  gets there, so it has no deadline at all (``_threshold``);
- its kubelet is about to stop, start, be partitioned or healed (``lease_changing``: the
  health is brought up to date with the old renewal schedule, and the deadline is set from
  the probe, then refined when it comes);
- it is deleted (``node_deleted``: its health stays as the last pass left it);
- it leaves its zone queue's set (markNodeAsReachable of "master disruption mode");
- its zone gets a new, empty queue (``zone_queue_replaced``) while it is in the old one.

Same-instant order is kept: a pass visits the unparked nodes in the lister's (name) order,
and a node unparked during a pass before its turn is visited in it. ``Simulation.shortcuts``
False switches the shortcut off (tests compare both paths byte for byte).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from typing import TYPE_CHECKING

from ..clock import next_on_grid
from ..objects import FALSE, READY, TRUE, UNKNOWN, Node
from .taints import NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE

if TYPE_CHECKING:
    from .controller import NodeLifecycleController

MAX_PASSES = 512  # pass instants kept before every parked node is brought up to date


class LazyHealth:
    """Parked nodes, their deadlines, and the instants of the passes since they were parked."""

    def __init__(self, ctl: NodeLifecycleController) -> None:
        self.ctl = ctl
        self.parked: dict[str, int] = {}  # name -> last pass its NodeHealth reflects
        # name -> (zone it counts in (None: none), its Ready status)
        self.parked_as: dict[str, tuple[str | None, str]] = {}
        self.zone_parked: dict[tuple[str, str], int] = {}  # (zone, status) -> parked nodes
        self.pass_parked: dict[tuple[str, str], int] = {}  # the same, this pass, not visited
        self.active: set[str] = set()  # nodes visited every pass
        self.deadline: dict[str, int] = {}  # name -> probe + grace (the live heap entry)
        self.heap: list[tuple[int, str]] = []
        self.passes: list[int] = []  # instants of the passes run (ascending)
        self.grace = ctl.cfg.node_monitor_grace_period_ms
        self.nodes: list[Node] | None = None  # the lister's list the sets below were made for
        self.index: dict[str, int] = {}
        self.zones: set[str] = set()
        # during a pass: the position of the node visited now, and the nodes still to visit
        self.cursor: int | None = None
        self.todo: list[tuple[int, str]] = []

    # -- the pass ---------------------------------------------------------------------------
    def nodes_changed(self, nodes: list[Node]) -> bool:
        """Whether the lister's list is another one than at the last pass."""
        return nodes is not self.nodes

    def begin_pass(self, nodes: list[Node], now: int) -> None:
        """Record the pass, then put on its to-do list every active node and every parked
        one whose deadline has come."""
        if nodes is not self.nodes:
            self.nodes = nodes
            self.index = {n.name: i for i, n in enumerate(nodes)}
            self.zones = {n.zone_key for n in nodes}
            for name in [n for n in self.parked if n not in self.index]:
                self._unpark(name)
            self.active = {n.name for n in nodes if n.name not in self.parked}
        grace = self.ctl.cfg.node_monitor_grace_period_ms
        if grace != self.grace:
            self.grace = grace
            for name in self.parked:
                self._set_deadline(name, self._threshold(name, self.ctl.node_health[name].probe_ms))
        passes = self.passes
        prev = passes[-1] if passes else None
        if prev is not None and len(passes) >= MAX_PASSES:
            for name in self.parked:
                self.materialize(name, prev)
            del passes[:-1]
        passes.append(now)
        heap = self.heap
        while heap and heap[0][0] < now:
            thr, name = heapq.heappop(heap)
            if self.deadline.get(name) != thr:
                continue
            del self.deadline[name]
            assert prev is not None
            self.materialize(name, prev)
            health = self.ctl.node_health[name]
            if now > health.probe_ms + self.grace:
                self._unpark(name)
                self.active.add(name)
            else:
                self._set_deadline(name, self._threshold(name, health.probe_ms))
        index = self.index
        self.todo = [(index[name], name) for name in self.active]
        heapq.heapify(self.todo)
        self.pass_parked = dict(self.zone_parked)
        self.cursor = -1

    def next_node(self) -> Node | None:
        """The next node to visit in this pass, in the lister's order."""
        assert self.nodes is not None
        if not self.todo:
            self.cursor = len(self.nodes)
            return None
        i, _name = heapq.heappop(self.todo)
        self.cursor = i
        return self.nodes[i]

    def pass_waits(self) -> None:
        """The pass waits for a client token (monitor_pass.py): its next visits come at later
        instants, which the closed form of a parked node (visited at the pass's instant) does
        not describe. Every parked node whose turn is still to come is visited in this pass,
        at its own instant, as the straightforward loop does; the visits before were at the
        pass's instant (nothing had waited yet). ``end_pass`` parks them again."""
        for name in [n for n in self.parked if self._before_turn(n)]:
            self.materialize(name, self.through(name))
            zone, status = self._unpark(name)
            self.active.add(name)
            heapq.heappush(self.todo, (self.index[name], name))
            if zone is not None:
                self.pass_parked[(zone, status)] -= 1

    def end_pass(self, now: int) -> None:
        """Park every active node whose next visit would change nothing."""
        self.cursor = None
        ctl = self.ctl
        nodes = ctl.cluster.nodes
        for name in list(self.active):
            node = nodes.get(name)
            status = self._steady(node) if node is not None else None
            if status is None:
                continue
            assert node is not None
            self.active.discard(name)
            self.parked[name] = now
            zone = None if node.excluded_from_disruption else node.zone_key
            self.parked_as[name] = (zone, status)
            if zone is not None:
                key = (zone, status)
                self.zone_parked[key] = self.zone_parked.get(key, 0) + 1
            self._set_deadline(name, self._threshold(name, ctl.node_health[name].probe_ms))

    def add_zone_conds(self, zone_conds: dict[str, list[str | None]]) -> None:
        """Add the Ready statuses of the nodes this pass did not visit to
        handleDisruption's zones."""
        for (zone, status), k in self.pass_parked.items():
            if k:
                conds = zone_conds.get(zone)
                if conds is None:
                    conds = zone_conds[zone] = []
                conds.extend([status] * k)

    def can_skip_classify(self, nodes: list[Node]) -> bool:
        """classifyNodes finds nothing when the list is the one of the last pass (every node
        known, none gone) and every zone has its state."""
        return nodes is self.nodes and self.zones <= self.ctl.zone_states.keys()

    # -- what unparks -------------------------------------------------------------------------
    def node_written(self, name: str) -> None:
        """The node's status or taints were written: the straightforward loop sees it at its
        next visit."""
        if name not in self.parked:
            return
        before_turn = self._before_turn(name)
        self.materialize(name, self.through(name))
        zone, status = self._unpark(name)
        self.active.add(name)
        if before_turn:
            # During a pass, before the node's turn: it is visited in this pass.
            heapq.heappush(self.todo, (self.index[name], name))
            if zone is not None:
                self.pass_parked[(zone, status)] -= 1

    def lease_changing(self, name: str) -> None:
        """The node's kubelet is about to change its renewal schedule: bring the health up to
        date with the schedule it had, and look again from the probe's deadline."""
        if name not in self.parked:
            return
        self.materialize(name, self.through(name))
        if self.parked_as[name][1] != UNKNOWN:
            self._set_deadline(name, self.ctl.node_health[name].probe_ms + self.grace)

    def zone_queue_replaced(self, zone: str) -> None:
        """A zone got a new, empty queue (addPodEvictorForNewZone): its parked nodes that
        were in the old one's set are visited again."""
        for name, (_zone, status) in list(self.parked_as.items()):
            if status != TRUE and self.ctl.cluster.nodes[name].zone_key == zone:
                self.node_written(name)

    def node_deleted(self, name: str) -> None:
        if name in self.parked:
            self.materialize(name, self.through(name))
            self._unpark(name)
        self.active.discard(name)

    def _before_turn(self, name: str) -> bool:
        """During a pass, whether the node's turn in it is still to come."""
        i = self.index.get(name)
        return self.cursor is not None and i is not None and i > self.cursor

    def through(self, name: str) -> int:
        """The last pass whose visit of the node is behind us: the one before this, during a
        pass before the node's turn; else the last one."""
        passes = self.passes
        if len(passes) > 1 and self._before_turn(name):
            return passes[-2]
        return passes[-1]

    # -- health ---------------------------------------------------------------------------------
    def materialize(self, name: str, through: int) -> None:
        """Bring a parked node's NodeHealth to what the passes up to ``through`` (one of
        ``passes``) leave: the lease they last saw, and the probe of the first pass that saw
        it, as tryUpdateNodeHealth's "if the lease was renewed, probeTimestamp = now" does."""
        v = self.parked.get(name)
        if v is None or through <= v:
            return
        health = self.ctl.node_health[name]
        lease = self.ctl.sim.lease_renew_ms(name, through)
        if lease is not None and (health.lease_renew_ms is None or health.lease_renew_ms < lease):
            health.lease_renew_ms = lease
            health.probe_ms = self.passes[bisect_left(self.passes, max(lease, v + 1))]
        self.parked[name] = through

    def materialize_all(self, through: int) -> None:
        for name in self.parked:
            self.materialize(name, through)

    def _threshold(self, name: str, probe_ms: int) -> int | None:
        """When ``now > probe + grace`` could first hold, or None if never while the kubelet
        keeps its schedule (or the node is Unknown already: nothing more to write). A kubelet
        that reaches the API renews at anchor + k * period from the first grid instant after
        it became active, each renewal is seen by the first pass at or after it, so from then
        on probe >= renewTime > now - period >= now - grace."""
        if self.parked_as[name][1] == UNKNOWN:
            return None
        thr = probe_ms + self.grace
        kubelet = self.ctl.sim.kubelets.get(name)
        if kubelet is None or not kubelet.reaches_api or kubelet.lease_period_ms > self.grace:
            return thr
        first = next_on_grid(kubelet.active_since_ms, kubelet.anchor_ms, kubelet.lease_period_ms)
        return thr if thr < first else None

    def _set_deadline(self, name: str, thr: int | None) -> None:
        if thr is None:
            self.deadline.pop(name, None)
            return
        self.deadline[name] = thr
        heapq.heappush(self.heap, (thr, name))

    def _unpark(self, name: str) -> tuple[str | None, str]:
        """Take the node off the parked ones; returns the zone it was counted in and its
        status."""
        self.parked.pop(name)
        self.deadline.pop(name, None)
        zone, status = self.parked_as.pop(name)
        if zone is not None:
            self.zone_parked[(zone, status)] -= 1
        return zone, status

    def _steady(self, node: Node) -> str | None:
        """The node's Ready status if a visit now would change nothing but the lease and the
        probe, else None. Ready=True: neither NoExecute taint of the controller, in no zone
        queue, and (taint manager off) unmarked. Ready=False or Unknown (taint manager on
        only): in its zone queue's set, so markNodeForTainting's Add is refused, without the
        taint of the other status (processTaintBaseEviction would swap them) and, in later
        releases, with the taint of its own (they requeue a node without it). And in both cases the status seen at
        the last visit (same heartbeat)."""
        ctl = self.ctl
        current = node.condition(READY)
        if current is None:
            return None
        health = ctl.node_health.get(node.name)
        if health is None:
            return None
        saved = health.saved_ready
        if saved is None or saved.last_heartbeat_ms != current.last_heartbeat_ms:
            return None
        status = current.status
        queue = ctl.zone_queues.get(node.zone_key)
        queued = queue is not None and node.name in queue
        if status == TRUE:
            if queued:
                return None
            if ctl.taint_mode:
                for t in (UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE):
                    if node.has_taint(t.key, t.effect):
                        return None
                return status
            return status if ctl.node_eviction_map.get(node.name) == "unmarked" else None
        if not ctl.taint_mode or not queued:
            return None
        if status == UNKNOWN:
            own, other = UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE
        elif status == FALSE:
            own, other = NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE
        else:
            return None
        if node.has_taint(other.key, other.effect):
            return None
        requeues = ctl.sim.config.profile.mark_node_for_tainting_requeues
        if requeues and not node.has_taint(own.key, own.effect):
            return None
        return status
