"""kube-controller-manager's NodeLifecycleController (node_lifecycle_controller.go, v1.18;
the later releases' differences are switches of ``sim.config.profile``).

One instance per controller-manager process: ``RestartControllerManager`` throws it
away with all its in-memory state and builds a new one from the API objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..client import Client, EventSink
from ..clock import next_on_grid
from ..core import Handle, Phase
from ..objects import FALSE, READY, TRUE, UNKNOWN, Node, NodeCondition, Pod
from ..series import append_change
from ..timeline import Timeline
from .lazy_health import LazyHealth
from .monitor_pass import MonitorPass
from .rate_limited_queue import RateLimitedTimedQueue, TimedValue, TokenBucket
from .taints import NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE, no_schedule_taint_diff
from .zones import ZoneState, compute_zone_state, healthy_qps, reduced_qps, zone_display

if TYPE_CHECKING:
    from ..simulation import Simulation

NODE_EVICTION_PERIOD_MS = 100  # NodeEvictionPeriod
EVICTION_RATE_LIMITER_BURST = 1  # EvictionRateLimiterBurst

# nodeEvictionMap statuses (legacy mode)
UNMARKED, TO_BE_EVICTED, EVICTED = "unmarked", "toBeEvicted", "evicted"

PRESSURE_AND_READY = (READY, "MemoryPressure", "DiskPressure", "PIDPressure")


@dataclass(slots=True)
class NodeHealth:
    """nodeHealthData: what the controller remembers about a node (controller clock)."""

    probe_ms: int
    ready_transition_ms: int
    saved_ready: NodeCondition | None  # the Ready condition of the saved status
    lease_renew_ms: int | None = None


class NodeLifecycleController:
    """Port of nodelifecycle.Controller."""

    _lazy: LazyHealth | None = None  # the monitor pass's shortcut (made at the first pass)

    def __init__(self, sim: Simulation, start_ms: int) -> None:
        self.sim = sim
        self.cluster = sim.cluster
        self.cfg = sim.config.controller_manager
        self.gates = sim.config.feature_gates
        self.timeline: Timeline = sim.timeline
        self.taint_mode = self.cfg.enable_taint_manager
        self.start_ms = start_ms
        self.known_nodes: set[str] = set()
        self.node_health: dict[str, NodeHealth] = {}
        self.zone_states: dict[str, ZoneState] = {}
        self.zone_queues: dict[str, RateLimitedTimedQueue] = {}
        self.node_eviction_map: dict[str, str] = {}
        self._pass_handle: Handle | None = None
        self._pass_at: int | None = None
        self._last_pass_ms: int = -1
        self.stopped = False
        # Before Run, the writes of the simulation's set-up (the scenario's cluster as it
        # stands at t=0) are not charged to the client.
        self.running = False
        # ClientBuilder.ClientOrDie("node-controller"): the node status updates, taint patches,
        # MarkPodsNotReady's pod status updates and the Events share its token bucket.
        self.client = self._new_client()
        self.events = EventSink(self.client, sim.sched, self.cluster, self)
        self._pass_writes_until = 0  # the last deferred write the running pass made
        self._pass_started = start_ms
        self._pass_running = False
        self.longest_pass = (0, 0)  # (start, end) of the longest monitor pass so far

    # -- the client --------------------------------------------------------------------
    def _new_client(self) -> Client:
        self._client_params = (self.cfg.kube_api_qps, self.cfg.kube_api_burst)
        return Client("node-controller", *self._client_params)

    def _check_client(self) -> None:
        """A changed --kube-api-qps/-burst (SetParameters) takes effect as a restarted
        kube-controller-manager's would: a new clientset with a full bucket."""
        if (self.cfg.kube_api_qps, self.cfg.kube_api_burst) != self._client_params:
            self.client = self._new_client()
            self.events.client = self.client

    def _event(self, now: int, obj: str, reason: str, message: str, kind: str = "Normal") -> None:
        """recorder.Eventf: the event is created through the client by the sink's goroutine."""
        self.events.post(now, obj, reason, message, kind)

    def _later(self, fn: Callable[..., Any], *args: Any) -> None:
        """One request of an informer-driven goroutine (or of the pass, where the engine does
        not suspend it): made now if its token is there, else at the token's instant; a
        stopped controller's pending requests are never made."""
        now = self.sim.sched.now_ms
        if not self.running:
            fn(now, *args)
            return
        t = self.client.do(self.sim.sched, now, Phase.CONTROLLER_MONITOR, self._call, fn, args)
        if t > self._pass_writes_until:
            self._pass_writes_until = t

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        if not self.stopped:
            fn(self.sim.sched.now_ms, *args)

    # -- loops ------------------------------------------------------------------------
    def run(self) -> None:
        """Port of Controller.Run: monitorNodeHealth every nodeMonitorPeriod from now."""
        self.running = True
        for name in self.cluster.nodes:
            self.node_eviction_map[name] = UNMARKED
        self.sim.sched.schedule(self.start_ms, Phase.CONTROLLER_MONITOR, self._monitor_tick)

    def stop(self) -> None:
        self.stopped = True
        self.events.queue.clear()  # a stopped process's queued events are never sent
        if self._pass_handle is not None:
            self._pass_handle.cancel()

    def _monitor_tick(self) -> None:
        """wait.Until(monitorNodeHealth, nodeMonitorPeriod): the period starts when the pass
        ends (JitterUntil with sliding=true), so a pass whose requests wait 40 s for their
        tokens delays the next one by as much."""
        if self.stopped:
            return
        self._pass_started = self.sim.sched.now_ms
        self._pass_running = True
        self.monitor_node_health(self._pass_started, self._monitor_done)

    def pass_waiting_ms(self, now: int) -> int:
        """How long the running monitor pass has been going (0 when none runs): a pass takes
        time only while its requests wait for the client's tokens."""
        return now - self._pass_started if self._pass_running else 0

    def _monitor_done(self) -> None:
        self._pass_running = False
        now = self.sim.sched.now_ms
        if now - self._pass_started > self.longest_pass[1] - self.longest_pass[0]:
            self.longest_pass = (self._pass_started, now)
        self.sample_queues(now)
        self.sim.sched.schedule(
            now + self.cfg.node_monitor_period_ms, Phase.CONTROLLER_MONITOR, self._monitor_tick
        )

    def wake_pass(self, now_ms: int) -> None:
        """Make sure a tainting (or eviction) pass runs at the next 100 ms tick where a zone
        queue could do work. Passes that would find every queue empty or every limiter
        refusing change nothing (a refused TryAccept leaves the bucket as it was), so they
        are skipped."""
        if self.stopped:
            return
        earliest: int | None = None
        for q in self.zone_queues.values():
            t = q.next_work_ms(now_ms)
            if t is not None and (earliest is None or t < earliest):
                earliest = t
        if earliest is None:
            return
        floor = now_ms if self._last_pass_ms < now_ms else now_ms + 1
        at = next_on_grid(max(earliest, floor), self.start_ms, NODE_EVICTION_PERIOD_MS)
        if self._pass_at is not None and self._pass_at <= at and self._pass_at >= now_ms:
            return
        if self._pass_handle is not None:
            self._pass_handle.cancel()
        self._pass_at = at
        self._pass_handle = self.sim.sched.schedule(at, Phase.CONTROLLER_TAINTING, self._pass)

    def _pass(self) -> None:
        now = self.sim.sched.now_ms
        self._pass_handle = None
        self._pass_at = None
        self._last_pass_ms = now
        if self.taint_mode:
            self.do_no_execute_tainting_pass(now)
        else:
            self.do_eviction_pass(now)
        self.sample_queues(now)
        self.wake_pass(now)

    def sample_queues(self, now: int) -> None:
        """The length of every zone's queue, for the page's chart from t=0: appended to
        ``sim.queue_series`` only when it changed (not part of the timeline)."""
        series = self.sim.queue_series
        for zone, queue in self.zone_queues.items():
            append_change(series.setdefault(zone_display(zone), []), now, (len(queue),))

    # -- monitorNodeHealth --------------------------------------------------------------
    def monitor_node_health(self, now: int, done: Callable[[], None] | None = None) -> None:
        """Port of Controller.monitorNodeHealth: runs now, and on at the instants its requests
        get their tokens; ``done`` runs when it has ended."""
        self._check_client()
        nodes = self.sim.sorted_nodes()
        self._pass_writes_until = now
        lazy = self._lazy_health()
        if lazy is not None and lazy.can_skip_classify(nodes):
            added: list[Node] = []
            deleted: list[str] = []
            new_zone_reps: list[Node] = []
        else:
            added, deleted, new_zone_reps = self.classify_nodes(nodes)
        for node in new_zone_reps:
            self.add_pod_evictor_for_new_zone(node, now)
        for node in added:
            self._event(
                now,
                f"Node/{node.name}",
                "RegisteredNode",
                f"Node {node.name} event: Registered Node {node.name} in Controller",
            )
            self.known_nodes.add(node.name)
            self.add_pod_evictor_for_new_zone(node, now)
            if self.taint_mode:
                self.mark_node_as_reachable(node, now)
            else:
                self.cancel_pod_eviction(node, now)
        for name in deleted:
            self._event(
                now,
                f"Node/{name}",
                "RemovingNode",
                f"Node {name} event: Removing Node {name} from Controller",
            )
            self.known_nodes.discard(name)

        if lazy is not None:
            lazy.begin_pass(nodes, now)
        # The shortcut visits the nodes whose visit can change something, in the same order.
        pieces = iter(nodes) if lazy is None else iter(lazy.next_node, None)
        MonitorPass(self, now, nodes, lazy, pieces, done).run(
            self.sim.config.profile.monitor_node_health_workers
        )

    def end_monitor_pass(self, p: MonitorPass) -> None:
        """After the workers: handleDisruption, at the instant the last one ended."""
        end = self.sim.sched.now_ms
        if p.lazy is not None:
            p.lazy.add_zone_conds(p.zone_conds)
        self.handle_disruption(p.zone_conds, p.nodes, end)
        if p.lazy is not None:
            p.lazy.end_pass(p.start)

    # -- the monitor pass's shortcut (lazy_health.py) ------------------------------------------
    def _lazy_health(self) -> LazyHealth | None:
        if not self.sim.shortcuts:
            if self._lazy is not None and self._lazy.passes:  # switched off: health as it is
                self._lazy.materialize_all(self._lazy.passes[-1])
            self._lazy = None
            return None
        if self._lazy is None:
            self._lazy = LazyHealth(self)
        return self._lazy

    def health_of(self, name: str) -> NodeHealth | None:
        """The node's nodeHealthData as the passes so far have left it."""
        lazy = self._lazy
        if lazy is not None and name in lazy.parked:
            lazy.materialize(name, lazy.through(name))
        return self.node_health.get(name)

    def node_written(self, name: str) -> None:
        """Something a visit of the node reads changed: its status or taints (the store calls
        this), or its place in its zone queue's set."""
        if self._lazy is not None:
            self._lazy.node_written(name)

    def lease_changing(self, name: str) -> None:
        """The node's kubelet is about to change when it renews its Lease."""
        if self._lazy is not None:
            self._lazy.lease_changing(name)

    def node_deleted(self, name: str) -> None:
        if self._lazy is not None:
            self._lazy.node_deleted(name)

    def classify_nodes(self, nodes: list[Node]) -> tuple[list[Node], list[str], list[Node]]:
        """Port of Controller.classifyNodes."""
        added: list[Node] = []
        new_zone_reps: list[Node] = []
        for node in nodes:
            if node.name not in self.known_nodes:
                added.append(node)
            elif node.zone_key not in self.zone_states:
                new_zone_reps.append(node)
        deleted: list[str] = []
        if len(self.known_nodes) + len(added) != len(nodes):
            present = {n.name for n in nodes}
            deleted = sorted(n for n in self.known_nodes if n not in present)
        return added, deleted, new_zone_reps

    def add_pod_evictor_for_new_zone(self, node: Node, now: int) -> None:
        """Port of Controller.addPodEvictorForNewZone: a new zone starts Initial with a full
        token bucket at nodeEvictionRate."""
        zone = node.zone_key
        if zone in self.zone_states:
            return
        self.zone_states[zone] = ZoneState.INITIAL
        self.zone_queues[zone] = RateLimitedTimedQueue(
            TokenBucket(self.cfg.node_eviction_rate, EVICTION_RATE_LIMITER_BURST, now)
        )
        self._emit_zone_state(zone, ZoneState.INITIAL, now)
        self._emit_zone_rate(zone, now)
        if self._lazy is not None:
            self._lazy.zone_queue_replaced(zone)

    def try_update_node_health(self, node: Node, now: int) -> tuple[Any, ...]:
        """Port of Controller.tryUpdateNodeHealth up to its UpdateStatus: returns (grace
        period, observed Ready condition as found at the start of the pass, current Ready
        condition, the write to make or None). The write (``write_node_health``) is a request
        of the client: it is made when its token comes."""
        health = self.node_health.get(node.name)
        current = node.condition(READY)
        if current is None:
            # The kubelet never posted status: a synthetic Unknown condition dated at creation.
            observed = NodeCondition(
                READY,
                UNKNOWN,
                last_heartbeat_ms=node.creation_ms,
                last_transition_ms=node.creation_ms,
            )
            grace = self.cfg.node_startup_grace_period_ms
            if health is not None:
                health.saved_ready = None
            else:
                health = NodeHealth(node.creation_ms, node.creation_ms, None)
        else:
            # NodeCondition objects are never mutated once written to a node (every writer
            # builds new ones), so the condition itself serves as the observed copy.
            observed = current
            grace = self.cfg.node_monitor_grace_period_ms

        saved = health.saved_ready if health is not None else None
        saved_lease = health.lease_renew_ms if health is not None else None
        # Each branch that builds a fresh nodeHealthData drops the saved lease, as Go does.
        if health is None or saved is None and current is not None:
            health = NodeHealth(now, now, current)
        elif saved is not None and current is None:
            health = NodeHealth(now, now, None)
        elif (
            saved is not None
            and current is not None
            and saved.last_heartbeat_ms != current.last_heartbeat_ms
        ):
            transition = (
                now
                if saved.last_transition_ms != current.last_transition_ms
                else health.ready_transition_ms
            )
            health = NodeHealth(now, transition, current)
        # Always update the probe time if the node lease is renewed (a first-seen lease counts).
        lease = self.sim.lease_renew_ms(node.name, now)
        if lease is not None and (saved_lease is None or saved_lease < lease):
            health.lease_renew_ms = lease
            health.probe_ms = now

        self.node_health[node.name] = health
        if now > health.probe_ms + grace and (current is None or current.status != UNKNOWN):
            # Kubelet stopped posting: rewrite Ready and the pressure conditions to Unknown.
            # (Go rewrites a local copy every pass but updates the API only when Ready
            # changes; a node already Unknown needs no work.)
            new_conditions = [c.copy() for c in node.conditions]
            by_type = {c.type: c for c in new_conditions}
            for ctype in PRESSURE_AND_READY:
                c = by_type.get(ctype)
                if c is None:
                    new_conditions.append(
                        NodeCondition(
                            ctype,
                            UNKNOWN,
                            "NodeStatusNeverUpdated",
                            "Kubelet never posted node status.",
                            node.creation_ms,
                            now,
                        )
                    )
                elif c.status != UNKNOWN:
                    c.status = UNKNOWN
                    c.reason = "NodeStatusUnknown"
                    c.message = "Kubelet stopped posting node status."
                    c.last_transition_ms = now
            new_ready = next(c for c in new_conditions if c.type == READY)
            if not _same_condition(new_ready, observed):
                # UpdateStatus: the conditions carry the instant they were computed at
                return grace, observed, current, (new_conditions, new_ready, health, lease)
        return grace, observed, current, None

    def write_node_health(self, node: Node, write: tuple[Any, ...], now: int) -> Any:
        """tryUpdateNodeHealth's UpdateStatus, made at ``now`` (its token's instant), and the
        nodeHealthData it saves (readyTransitionTimestamp: ``nc.now()`` after the update).
        Returns the current Ready condition."""
        new_conditions, new_ready, health, lease = write
        self.cluster.set_node_conditions(node, new_conditions, now)
        health.saved_ready = new_ready
        health.ready_transition_ms = now
        health.lease_renew_ms = lease
        return node.condition(READY)

    def predicted_unknown_ms(self, node: Node, now: int) -> int | None:
        """When a monitor pass will write Ready=Unknown if the kubelet stays silent from
        ``now`` (for "what happens next"): tryUpdateNodeHealth's check, the first pass strictly
        later than probeTimestamp + grace period, where the probe first moves to the next pass
        if that pass will see a lease renewal or a status heartbeat it has not seen yet.
        None when the node is Unknown already."""
        current = node.condition(READY)
        if current is not None and current.status == UNKNOWN:
            return None
        period = self.cfg.node_monitor_period_ms
        next_pass = self.start_ms + ((now - self.start_ms) // period + 1) * period
        grace = (
            self.cfg.node_startup_grace_period_ms
            if current is None
            else self.cfg.node_monitor_grace_period_ms
        )
        health = self.health_of(node.name)
        if health is None:
            probe = next_pass  # the next pass builds its nodeHealthData
        else:
            probe = health.probe_ms
            lease = self.sim.lease_renew_ms(node.name, now)
            unseen_lease = lease is not None and (
                health.lease_renew_ms is None or health.lease_renew_ms < lease
            )
            saved = health.saved_ready
            unseen_status = current is not None and (
                saved is None or saved.last_heartbeat_ms != current.last_heartbeat_ms
            )
            if unseen_lease or unseen_status:
                probe = next_pass
        deadline = probe + grace
        if next_pass > deadline:
            return next_pass
        return self.start_ms + ((deadline - self.start_ms) // period + 1) * period

    # -- taint-based path ----------------------------------------------------------------
    def taint_base_eviction_swap(
        self, node: Node, observed: str, now: int
    ) -> tuple[Any, ...] | None:
        """Port of Controller.processTaintBaseEviction up to its one request: the taint swap
        to make at once, as (add, remove, then markNodeAsReachable's Remove from the queue),
        or None (markNodeForTainting, or a reachable node without taints: done here)."""
        if observed == FALSE:
            if node.has_taint(UNREACHABLE_TAINT_TEMPLATE.key, UNREACHABLE_TAINT_TEMPLATE.effect):
                return [NOT_READY_TAINT_TEMPLATE], [UNREACHABLE_TAINT_TEMPLATE], False
            self.mark_node_for_tainting(node, observed, now)
        elif observed == UNKNOWN:
            if node.has_taint(NOT_READY_TAINT_TEMPLATE.key, NOT_READY_TAINT_TEMPLATE.effect):
                return [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], False
            self.mark_node_for_tainting(node, observed, now)
        elif observed == TRUE:
            remove = self._reachable_taints(node)
            if remove:
                return [], remove, True
            self._leave_queue(node)
        return None

    def swap_taints_now(self, node: Node, swap: tuple[Any, ...], now: int) -> None:
        """The swap ``taint_base_eviction_swap`` returned, made at its token's instant."""
        add, remove, reachable = swap
        if node.name in self.cluster.nodes:
            self.cluster.swap_node_taints(node, add, remove, now)
        if reachable:
            self._leave_queue(node)

    def mark_node_for_tainting(self, node: Node, observed: str, now: int) -> None:
        """Port of Controller.markNodeForTainting. 1.18: Add only (a node already processed
        stays in the queue's set, so it is not tainted again until it is Removed). Later
        releases (``profile.mark_node_for_tainting_requeues``) take a status: when the node
        lacks that status's taint, Remove it first, so it is queued anew (processAt = now)."""
        queue = self.zone_queues[node.zone_key]
        if self.sim.config.profile.mark_node_for_tainting_requeues:
            template = NOT_READY_TAINT_TEMPLATE if observed == FALSE else UNREACHABLE_TAINT_TEMPLATE
            if not node.has_taint(template.key, template.effect):
                queue.remove(node.name)
        if queue.add(node.name, node.uid, now):
            self.wake_pass(now)

    def mark_node_as_reachable(self, node: Node, now: int) -> None:
        """Port of Controller.markNodeAsReachable: remove both NoExecute taints (a request
        of the node-controller's client), then Remove the node from its zone's queue."""
        remove = self._reachable_taints(node)
        if remove:
            self._later(self._swap_now, node, [], remove)
        self._leave_queue(node)

    def _swap_now(self, now: int, node: Node, add: list[Any], remove: list[Any]) -> None:
        if node.name in self.cluster.nodes:
            self.cluster.swap_node_taints(node, add, remove, now)

    @staticmethod
    def _reachable_taints(node: Node) -> list[Any]:
        if not node.taints:
            return []
        return [
            t
            for t in (UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE)
            if node.has_taint(t.key, t.effect)
        ]

    def _leave_queue(self, node: Node) -> None:
        queue = self.zone_queues.get(node.zone_key)
        if queue is not None and node.name in queue:
            queue.remove(node.name)
            self.node_written(node.name)  # a parked node out of its queue's set is visited

    def do_no_execute_tainting_pass(self, now: int) -> None:
        """Port of Controller.doNoExecuteTaintingPass."""
        for zone in sorted(self.zone_queues):
            self.zone_queues[zone].try_(self._taint_fn, now)

    def _taint_fn(self, value: TimedValue) -> tuple[bool, int]:
        now = self.sim.sched.now_ms
        node = self.cluster.nodes.get(value.value)
        if node is None:
            return True, 0
        condition = node.condition(READY)
        if condition is None:
            return False, 50
        if condition.status == FALSE:
            add, opposite = NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE
        elif condition.status == UNKNOWN:
            add, opposite = UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE
        else:
            return True, 0
        # The tainting goroutine's SwapNodeControllerTaint waits for its token; the engine
        # does not suspend the pass: the patch is made at the token's instant.
        t = self.client.reserve(now)
        if t <= now:
            return self.cluster.swap_node_taints(node, [add], [opposite], now), 0
        self.sim.sched.schedule(
            t, Phase.CONTROLLER_TAINTING, self._taint_later, node, add, opposite
        )
        return True, 0

    def _taint_later(self, node: Node, add: Any, opposite: Any) -> None:
        if not self.stopped and node.name in self.cluster.nodes:
            self.cluster.swap_node_taints(node, [add], [opposite], self.sim.sched.now_ms)

    # -- legacy path (enableTaintManager=false) -------------------------------------------
    def process_no_taint_base_eviction(
        self, node: Node, observed: str, pods: list[Pod], now: int
    ) -> None:
        """Port of Controller.processNoTaintBaseEviction."""
        health = self.node_health[node.name]
        if observed == FALSE:
            if now > health.ready_transition_ms + self.cfg.pod_eviction_timeout_ms:
                self.evict_pods(node, pods, now)
        if observed == UNKNOWN:
            if now > health.probe_ms + self.cfg.pod_eviction_timeout_ms:
                self.evict_pods(node, pods, now)
        if observed == TRUE:
            self.cancel_pod_eviction(node, now)

    def evict_pods(self, node: Node, pods: list[Pod], now: int) -> None:
        """Port of Controller.evictPods."""
        if self.node_eviction_map.get(node.name) == EVICTED:
            self.delete_pods(pods, node.name, now)
            return
        self.node_eviction_map[node.name] = TO_BE_EVICTED
        if self.zone_queues[node.zone_key].add(node.name, node.uid, now):
            self.wake_pass(now)

    def cancel_pod_eviction(self, node: Node, now: int) -> bool:
        """Port of Controller.cancelPodEviction."""
        self.node_eviction_map[node.name] = UNMARKED
        queue = self.zone_queues.get(node.zone_key)
        return queue.remove(node.name) if queue is not None else False

    def do_eviction_pass(self, now: int) -> None:
        """Port of Controller.doEvictionPass."""
        for zone in sorted(self.zone_queues):
            self.zone_queues[zone].try_(self._evict_fn, now)

    def _evict_fn(self, value: TimedValue) -> tuple[bool, int]:
        now = self.sim.sched.now_ms
        # Go logs a node missing from the lister and still deletes the pods bound to its name;
        # setStatus is skipped for a node unregistered in the meantime.
        self.delete_pods(self.cluster.pods_on_node(value.value), value.value, now)
        if value.value in self.node_eviction_map:
            self.node_eviction_map[value.value] = EVICTED
        return True, 0

    def delete_pods(self, pods: list[Pod], node_name: str, now: int) -> bool:
        """Port of nodeutil.DeletePods: NodeLost reason on every pod, DELETE all but
        DaemonSet pods and pods already being deleted. Returns ``remaining``. Each
        UpdateStatus and DELETE is a request of the node-controller's client, made at its
        token's instant (the decisions are the ones of ``now``)."""
        remaining = False
        if pods:
            self._event(
                now,
                f"Node/{node_name}",
                "DeletingAllPods",
                f"Node {node_name} event: Deleting all Pods from Node {node_name}.",
            )
        for pod in pods:
            if pod.node_name != node_name:
                continue
            if pod.reason != "NodeLost":
                self._later(self._node_lost_now, pod, node_name)
            if pod.deletion_grace_s is not None:
                remaining = True
                continue
            if self.sim.is_daemonset_pod(pod):
                continue
            self._event(
                now,
                f"Pod/{pod.key}",
                "NodeControllerEviction",
                f"Marking for deletion Pod {pod.name} from Node {node_name}",
            )
            self._later(self._delete_now, pod)
            remaining = True
        return remaining

    def _node_lost_now(self, now: int, pod: Pod, node_name: str) -> None:
        if pod.key in self.cluster.pods and pod.reason != "NodeLost":
            self.cluster.set_pod_phase(
                pod,
                pod.phase,
                now,
                "NodeLost",
                f"Node {node_name} which was running pod {pod.name} is unresponsive",
            )

    def _delete_now(self, now: int, pod: Pod) -> None:
        if pod.key in self.cluster.pods and pod.deletion_grace_s is None:
            self.cluster.delete_pod(pod, now, "NodeLifecycleController", "NodeLost")

    # -- pods ------------------------------------------------------------------------------
    def mark_pods_not_ready(self, pods: list[Pod], node_name: str, now: int) -> None:
        """Port of nodeutil.MarkPodsNotReady from the pod informer's processPod: each pod
        status update is a request of the node-controller's client, made at its token's
        instant."""
        event = self.sim.config.profile.mark_pods_not_ready_event
        for pod in pods:
            if pod.node_name != node_name:
                continue
            if pod.ready is True:
                self._later(self._pod_not_ready_now, pod, event)

    def _pod_not_ready_now(self, now: int, pod: Pod, event: bool) -> None:
        """One UpdateStatus of MarkPodsNotReady, at its token's instant; a pod gone by then is
        skipped (the update's NotFound), in later releases a Warning event NodeNotReady on
        the pod after it."""
        if pod.key not in self.cluster.pods or pod.ready is not True:
            return
        self.cluster.set_pod_ready(pod, False, now)
        if event and pod.key in self.cluster.pods:
            self._event(now, f"Pod/{pod.key}", "NodeNotReady", "Node is not ready", "Warning")

    def process_pod(self, pod: Pod, now: int) -> None:
        """Port of Controller.processPod (a pod was bound or moved to a node)."""
        health = self.node_health.get(pod.node_name)
        node = self.cluster.nodes.get(pod.node_name)
        if health is None or node is None:
            return
        saved = health.saved_ready
        if saved is None:
            return
        if not self.taint_mode:
            self.process_no_taint_base_eviction(node, saved.status, [pod], now)
        if saved.status != TRUE:
            self.mark_pods_not_ready([pod], pod.node_name, now)

    # -- NoSchedule taints (informer-driven) ------------------------------------------------
    def do_no_schedule_tainting_pass(self, node: Node, now: int) -> None:
        """Port of Controller.doNoScheduleTaintingPass (runs on every node Add/Update)."""
        to_add, to_remove = no_schedule_taint_diff(node)
        if to_add or to_remove:
            self._later(self._swap_now, node, to_add, to_remove)

    # -- zones ---------------------------------------------------------------------------------
    def handle_disruption(
        self, zone_conds: dict[str, list[str | None]], nodes: list[Node], now: int
    ) -> None:
        """Port of Controller.handleDisruption."""
        new_states: dict[str, ZoneState] = {}
        all_are_full = True
        for zone in sorted(zone_conds):
            _unhealthy, state = compute_zone_state(
                zone_conds[zone], self.cfg.unhealthy_zone_threshold
            )
            if state != ZoneState.FULL_DISRUPTION:
                all_are_full = False
            new_states[zone] = state
            if zone not in self.zone_states:
                self.zone_states[zone] = ZoneState.INITIAL
                self._emit_zone_state(zone, ZoneState.INITIAL, now)
        all_was_full = True
        for zone in sorted(self.zone_states):
            if zone not in zone_conds:
                del self.zone_states[zone]
                continue
            if self.zone_states[zone] != ZoneState.FULL_DISRUPTION:
                all_was_full = False
                break
        if all_are_full and all_was_full:
            return
        if all_are_full:
            # Entering "master disruption mode": every node reachable, every limiter stopped.
            for node in nodes:
                if self.taint_mode:
                    self.mark_node_as_reachable(node, now)
                else:
                    self.cancel_pod_eviction(node, now)
            for zone in sorted(self.zone_states):
                self._swap_limiter(zone, 0.0, now)
            for zone in sorted(self.zone_states):
                self._set_zone_state(zone, ZoneState.FULL_DISRUPTION, now)
            return
        if all_was_full:
            # Exiting: reset probe timestamps on all nodes, limiters as the new states say.
            if self._lazy is not None:
                self._lazy.materialize_all(now)
            for node in nodes:
                health = self.node_health.get(node.name)
                if health is None:
                    health = NodeHealth(now, now, None)
                    self.node_health[node.name] = health
                health.probe_ms = now
                health.ready_transition_ms = now
            for zone in sorted(self.zone_states):
                self.set_limiter_in_zone(zone, len(zone_conds.get(zone, ())), new_states[zone], now)
                self._set_zone_state(zone, new_states[zone], now)
            return
        for zone in sorted(self.zone_states):
            new_state = new_states.get(zone)
            if new_state is None:
                # Go reads the zero value "": setLimiterInZone matches no case and the zone keeps
                # its limiter; the next pass's allWasFullyDisrupted loop may drop it.
                continue
            if self.zone_states[zone] == new_state:
                continue
            self.set_limiter_in_zone(zone, len(zone_conds[zone]), new_state, now)
            self._set_zone_state(zone, new_state, now)

    def set_limiter_in_zone(self, zone: str, size: int, state: ZoneState, now: int) -> None:
        """Port of Controller.setLimiterInZone."""
        if state == ZoneState.NORMAL:
            qps = self.cfg.node_eviction_rate
        elif state == ZoneState.PARTIAL_DISRUPTION:
            qps = reduced_qps(
                size, self.cfg.secondary_node_eviction_rate, self.cfg.large_cluster_size_threshold
            )
        elif state == ZoneState.FULL_DISRUPTION:
            qps = healthy_qps(size, self.cfg.node_eviction_rate)
        else:
            return
        self._swap_limiter(zone, qps, now)

    def _swap_limiter(self, zone: str, qps: float, now: int) -> None:
        queue = self.zone_queues[zone]
        before = self.effective_qps(zone)
        queue.swap_limiter(qps, now)
        if self.effective_qps(zone) != before:
            self._emit_zone_rate(zone, now)
        self.wake_pass(now)

    def effective_qps(self, zone: str) -> float:
        """The rate the zone's queue really runs at: 0 for the never-accepting limiter."""
        limiter = self.zone_queues[zone].limiter
        if not isinstance(limiter, TokenBucket):
            return 0.0
        return float(f"{limiter.qps:.7g}")  # the float32 QPS, printed as it was configured

    def _set_zone_state(self, zone: str, state: ZoneState, now: int) -> None:
        if self.zone_states.get(zone) != state:
            self._emit_zone_state(zone, state, now)
        self.zone_states[zone] = state

    def _emit_zone_state(self, zone: str, state: ZoneState, now: int) -> None:
        self.timeline.emit(now, "ZoneState", zone=zone_display(zone), state=str(state))

    def _emit_zone_rate(self, zone: str, now: int) -> None:
        self.timeline.emit(now, "ZoneRate", zone=zone_display(zone), qps=self.effective_qps(zone))


def _same_condition(a: NodeCondition, b: NodeCondition) -> bool:
    """apiequality.Semantic.DeepEqual on two NodeConditions."""
    return (
        a.status == b.status
        and a.reason == b.reason
        and a.message == b.message
        and a.last_heartbeat_ms == b.last_heartbeat_ms
        and a.last_transition_ms == b.last_transition_ms
    )
