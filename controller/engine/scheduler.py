"""kube-scheduler, v1.18 (pkg/scheduler): the default profile reduced to what a pod spec in this
playground can ask for.

- Queue: PrioritySort (higher priority first, then the time the pod entered the queue); a
  pod that does not fit is re-queued behind the others and retried when the scheduler is
  woken (a node added or changed, a pod removed or terminated: MoveAllToActiveQueue).
- Filters, in the default profile's order, the first failure naming the node's reason:
  NodeUnschedulable, NodeResourcesFit (pods, cpu, memory, ephemeral-storage), NodeAffinity
  (nodeSelector, and the DaemonSet controller's required node), TaintToleration
  (NoSchedule/NoExecute). Node conditions block only through their taints
  (TaintNodesByCondition).
- Only ``numFeasibleNodesToFind`` nodes are looked for, starting where the last cycle
  stopped, over a zone-interleaved node list (the scheduler cache's nodeTree): a 5,000-node
  cluster examines about 500 nodes per pod, as Kubernetes does.
- Scores (weight 1 each): NodeResourcesLeastAllocated, NodeResourcesBalancedAllocation,
  DefaultPodTopologySpread (SelectorSpread), TaintToleration (PreferNoSchedule). The plugins
  that score every node alike here (NodeAffinity, ImageLocality, InterPodAffinity,
  NodePreferAvoidPods) are left out. Ties go to the first node name, where Kubernetes picks
  one at random.
- NodeInfo: per-node requested totals of the pods bound there that are not terminated
  (terminating pods still count), kept up to date on every bind and pod change.

The client. Every bind is a request of kube-scheduler's clientset (``createClients`` from
``clientConnection``: QPS 50, Burst 100 by default, ``spec.scheduler.clientConnection``) made by
the binding goroutine scheduleOne starts after it assumed the pod (``go func() { ... sched.bind
... }``): the scheduling goes on at once, the pod counting on its node in NodeInfo (the cache's
AssumePod), and the pod is bound (spec.nodeName, PodScheduled) when the bind's token comes. A pod
deleted or being deleted by then is not bound (the API's Conflict / NotFound; ForgetPod). The
Scheduled event goes through the scheduler's separate event clientset (its own bucket) and is
not throttled here. The binds of t=0 (the scenario's cluster as it stands) are not charged.

Left out: preemption, the 1-10 s pod backoff and the 60 s unschedulable flush (a pod is
retried at the next wake), volumes, host ports, inter-pod affinity.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING

from . import schedwindow
from .client import Client
from .core import Phase
from .objects import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    TAINT_UNSCHEDULABLE,
    Node,
    Pod,
    Taint,
    Toleration,
    tolerations_tolerate_taint,
)
from .schedwindow import MIN_NODES as WINDOW_MIN_NODES
from .schedwindow import BaseIndex, OwnerIndex, schedule_window

if TYPE_CHECKING:
    from .simulation import Simulation

MAX_NODE_SCORE = 100  # framework.MaxNodeScore (1.18: scores run 0..100)
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest
ZONE_WEIGHTING = 2.0 / 3.0  # defaultpodtopologyspread zoneWeighting
TERMINAL_PHASES = ("Succeeded", "Failed")
SPREAD_OWNER_KINDS = ("ReplicaSet", "StatefulSet", "ReplicationController")

ERR_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_NODE_SELECTOR = "node(s) didn't match node selector"
ERR_TOO_MANY_PODS = "Too many pods"
ERR_CPU = "Insufficient cpu"
ERR_MEMORY = "Insufficient memory"
ERR_EPHEMERAL = "Insufficient ephemeral-storage"
ERR_NO_NODES = "no nodes available to schedule pods"

# NodeInfo vector: requested resources of the node's pods, and the non-zero cpu/memory
# requests the scorers use.
CPU, MEMORY, EPHEMERAL, PODS, NZ_CPU, NZ_MEMORY = range(6)
_ZERO = (0, 0, 0, 0, 0, 0)
assert (schedwindow.CPU, schedwindow.MEMORY, schedwindow.EPHEMERAL, schedwindow.PODS) == (
    CPU,
    MEMORY,
    EPHEMERAL,
    PODS,
) and (schedwindow._ZERO, schedwindow.MAX_NODE_SCORE, schedwindow.ZONE_WEIGHTING) == (
    _ZERO,
    MAX_NODE_SCORE,
    ZONE_WEIGHTING,
)
_UNSCHEDULABLE_TAINT = Taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE)
_TOLERATION_FIELDS = attrgetter("key", "operator", "value", "effect")
# (requested cpu, memory, allocatable cpu, memory) -> KubeScheduler.resource_score
_RESOURCE_SCORES: dict[tuple[int, int, int, int], int] = {}
# PodInfo.signature -> a PodInfo with it (pods with equal signatures schedule alike)
_POD_INFOS: dict[tuple[object, ...], PodInfo] = {}
# (node, name, allocatable cpu, memory, ephemeral-storage, pods, zone key)
NodeEntry = tuple[Node, str, int, int, int, int, str]


# -- pure helpers (ports) ----------------------------------------------------------------------
def num_feasible_nodes_to_find(num_all_nodes: int, percentage_of_nodes_to_score: int = 0) -> int:
    """Port of genericScheduler.numFeasibleNodesToFind (adaptive when the percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage_of_nodes_to_score >= 100:
        return num_all_nodes
    adaptive = percentage_of_nodes_to_score
    if adaptive <= 0:
        adaptive = 50 - num_all_nodes // 125
        if adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * adaptive // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def node_info_contribution(pod: Pod) -> tuple[int, int, int, int, int, int]:
    """What a pod adds to its node's NodeInfo: port of nodeinfo.calculateResource (regular
    containers only) with schedutil.GetNonzeroRequests for the scorers. Computed once per pod
    (its containers' requests never change) and kept on it."""
    vec = pod.nodeinfo_vec
    if vec is not None:
        return vec
    cpu = mem = eph = nz_cpu = nz_mem = 0
    for c in pod.containers:
        r = c.requests
        cpu += r.get("cpu", 0)
        mem += r.get("memory", 0)
        eph += r.get("ephemeral-storage", 0)
        nz_cpu += r.get("cpu", DEFAULT_MILLI_CPU_REQUEST)
        nz_mem += r.get("memory", DEFAULT_MEMORY_REQUEST)
    vec = pod.nodeinfo_vec = (cpu, mem, eph, 1, nz_cpu, nz_mem)
    return vec


def nonzero_pod_request(pod: Pod, resource: str) -> int:
    """Port of noderesources.calculatePodResourceRequest: containers summed with non-zero
    defaults, at least the largest init container."""
    default = DEFAULT_MILLI_CPU_REQUEST if resource == "cpu" else DEFAULT_MEMORY_REQUEST
    total = sum(c.requests.get(resource, default) for c in pod.containers)
    for c in pod.init_containers:
        total = max(total, c.requests.get(resource, default))
    return total


def nonzero_requests(pod: Pod) -> tuple[int, int]:
    """``nonzero_pod_request`` of cpu and memory, computed once per pod (kept on it)."""
    vec = pod.nonzero_vec
    if vec is None:
        vec = pod.nonzero_vec = (
            nonzero_pod_request(pod, "cpu"),
            nonzero_pod_request(pod, "memory"),
        )
    return vec


def fit_error_message(num_all_nodes: int, reasons: dict[str, int]) -> str:
    """Port of core.FitError.Error: ``count reason`` strings sorted as strings."""
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{num_all_nodes} nodes are available: {', '.join(parts)}."


def taint_reason(taint: Taint) -> str:
    """tainttoleration.Filter's reason for the first untolerated taint."""
    return f"node(s) had taint {{{taint.key}: {taint.value}}}, that the pod didn't tolerate"


def least_requested_score(requested: int, capacity: int) -> int:
    """Port of noderesources.leastRequestedScore."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def balanced_resource_score(cpu_req: int, cpu_cap: int, mem_req: int, mem_cap: int) -> int:
    """Port of noderesources.balancedResourceScorer (cpu and memory, no volumes)."""
    cpu_fraction = cpu_req / cpu_cap if cpu_cap else 1.0
    mem_fraction = mem_req / mem_cap if mem_cap else 1.0
    if cpu_fraction >= 1 or mem_fraction >= 1:
        return 0
    return int((1 - abs(cpu_fraction - mem_fraction)) * MAX_NODE_SCORE)


def default_normalize_score(scores: list[int], reverse: bool) -> list[int]:
    """Port of pluginhelper.DefaultNormalizeScore."""
    max_count = max(scores, default=0)
    if max_count == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    out = []
    for s in scores:
        s = MAX_NODE_SCORE * s // max_count
        out.append(MAX_NODE_SCORE - s if reverse else s)
    return out


def spread_score(
    count: int, max_node: int, zone_count: int, max_zone: int, have_zones: bool
) -> int:
    """One node's DefaultPodTopologySpread score (NormalizeScore): fewer matching pods on the
    node (1/3) and in its zone (2/3) score higher. ``zone_count`` < 0: the node has no zone."""
    f = float(MAX_NODE_SCORE)
    if max_node > 0:
        f = MAX_NODE_SCORE * (float(max_node - count) / float(max_node))
    if have_zones and zone_count >= 0:
        zone_score = float(MAX_NODE_SCORE)
        if max_zone > 0:
            zone_score = MAX_NODE_SCORE * (float(max_zone - zone_count) / float(max_zone))
        f = (f * (1.0 - ZONE_WEIGHTING)) + (ZONE_WEIGHTING * zone_score)
    return int(f)


def selector_spread_scores(counts: list[int], zones: list[str]) -> list[int]:
    """Port of DefaultPodTopologySpread.NormalizeScore over the feasible nodes' counts."""
    by_zone: dict[str, int] = {}
    for count, zone in zip(counts, zones):
        if zone:
            by_zone[zone] = by_zone.get(zone, 0) + count
    max_node = max(counts, default=0)
    max_zone = max(by_zone.values(), default=0)
    return [
        spread_score(c, max_node, by_zone[z] if z else -1, max_zone, bool(by_zone))
        for c, z in zip(counts, zones)
    ]


def zone_interleaved(nodes: list[Node]) -> list[Node]:
    """The scheduler cache's node order for ``nodes`` given in the order they were added
    (a nodeTree built by addNode, read by list/next): one node from each zone in turn, zones
    in the order their first node was added, an exhausted zone skipped."""
    tree = NodeTree()
    for node in nodes:
        tree.add(node.name, node.zone_key)
    by_name = {n.name: n for n in nodes}
    return [by_name[name] for name in tree.list()]


class NodeTree:
    """Port of the scheduler cache's nodeTree (pkg/scheduler/internal/cache/node_tree.go):
    node names per zone in the order they were added, zones in the order they first
    appeared; removeNode drops an emptied zone. ``list`` is the round robin that
    nodeTree.next yields over one full pass starting at the first zone (v1.18's next keeps
    its cursor between snapshot rebuilds, which can rotate the starting zone; not kept)."""

    def __init__(self) -> None:
        self.tree: dict[str, list[str]] = {}
        self.zones: list[str] = []
        self.zone_of: dict[str, str] = {}

    def add(self, name: str, zone: str) -> None:
        """nodeTree.addNode."""
        if name in self.zone_of:
            return
        if zone not in self.tree:
            self.zones.append(zone)
            self.tree[zone] = []
        self.tree[zone].append(name)
        self.zone_of[name] = zone

    def remove(self, name: str) -> None:
        """nodeTree.removeNode (and removeZone when the zone empties)."""
        zone = self.zone_of.pop(name, None)
        if zone is None:
            return
        names = self.tree[zone]
        names.remove(name)
        if not names:
            del self.tree[zone]
            self.zones.remove(zone)

    def sync(self, nodes: list[Node]) -> None:
        """Apply the informer's adds and deletes (and zone changes: updateNode) since the
        last call; ``nodes`` in the order they were added to the cluster."""
        current = {n.name: n.zone_key for n in nodes}
        for name, zone in list(self.zone_of.items()):
            if current.get(name) != zone:
                self.remove(name)
        for name, zone in current.items():
            self.add(name, zone)

    def list(self) -> list[str]:
        """nodeTree.list: the zones in turn, one node from each."""
        out: list[str] = []
        lists = [self.tree[z] for z in self.zones]
        for i in range(max((len(x) for x in lists), default=0)):
            out.extend(x[i] for x in lists if i < len(x))
        return out


@dataclass(slots=True)
class PodInfo:
    """What the filters need from one pod, computed once per scheduling cycle."""

    tolerations: list[Toleration]
    tolerates_unschedulable: bool
    cpu: int
    memory: int
    ephemeral: int
    has_requests: bool
    node_selector: list[tuple[str, str]]
    required_node: str
    signature: tuple[object, ...]  # pods with equal signatures fit on the same nodes

    @classmethod
    def of(cls, pod: Pod, required_node: str) -> PodInfo:
        """The pod's PodInfo: one made for an earlier pod with the same signature when there
        is one (its tolerations equal in every field the filters and scores read: key,
        operator, value and effect; tolerationSeconds matters to eviction only)."""
        cpu, mem, eph = pod.request_vec or pod.requests3()
        tols = pod.tolerations
        selector = sorted(pod.node_selector.items()) if pod.node_selector else []
        signature = (
            tuple(map(_TOLERATION_FIELDS, tols)),
            tuple(selector),
            cpu,
            mem,
            eph,
            required_node,
        )
        info = _POD_INFOS.get(signature)
        if info is not None:
            return info
        if len(_POD_INFOS) >= 1 << 12:
            _POD_INFOS.clear()
        # By position, in the fields' order: tolerations, tolerates_unschedulable, cpu,
        # memory, ephemeral, has_requests, node_selector, required_node, signature.
        info = _POD_INFOS[signature] = cls(
            list(tols),  # (its own: the info outlives this pod, whatever becomes of its list)
            tolerations_tolerate_taint(tols, _UNSCHEDULABLE_TAINT),
            cpu,
            mem,
            eph,
            bool(cpu or mem or eph),
            selector,
            required_node,
            signature,
        )
        return info


class KubeScheduler:
    """The default scheduler: one scheduling pass per woken instant, at Phase.SCHEDULER."""

    # Outside a pass (and in an engine pickled before they existed): no block summaries.
    # Never changed in place: run_pass assigns the instance's own.
    _windows: dict[tuple[object, ...], OwnerIndex] = {}
    _bases: dict[tuple[object, ...], BaseIndex] = {}
    # schedwindow.current's last answer: (PodInfo, non-zero requests, owner, base, owner's)
    _last_window: tuple[PodInfo, tuple[int, int], str | None, BaseIndex, OwnerIndex | None] | None
    _last_window = None

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.queue: dict[str, tuple[int, Pod]] = {}  # pod key -> (queue order, pod)
        self._seq = 0
        self._at: int | None = None  # instant a pass is scheduled for
        self.requested: dict[str, list[int]] = {}  # node -> NodeInfo vector
        self._accounted: dict[str, tuple[Pod, str, tuple[int, ...]]] = {}
        self.node_affinity: dict[str, str] = {}  # pod key -> required node (DaemonSet pods)
        self.next_start_node_index = 0
        self._nodes: list[NodeEntry] = []
        self._nodes_src: object = None
        self.node_tree = NodeTree()
        self._version = 0  # bumped by anything that may let a pending pod fit
        self._unfit: dict[tuple[object, ...], tuple[int, str]] = {}  # signature -> message
        self._spread: dict[str, dict[str, int]] = {}  # owner -> node -> pods (this pass)
        # (non-zero cpu, memory) request -> node -> resource score, until the node changes
        self._resource_scores: dict[tuple[int, int], dict[str, int]] = {}
        self._failures: dict[tuple[object, ...], dict[str, tuple[str, ...]]] = {}
        self._failures_version = 0
        # Block summaries of big clusters (schedwindow.py), only during a scheduling pass: per
        # (signature, non-zero requests) the nodes' keys and their blocks' (_bases), per
        # (signature, non-zero requests, spreading owner) its groups' (_windows).
        self._windows: dict[tuple[object, ...], OwnerIndex] = {}
        self._bases: dict[tuple[object, ...], BaseIndex] = {}
        self._in_pass = False
        self.client = self._new_client()
        # pod key -> (the pod, its node) from the assume until its bind is made
        self.assumed: dict[str, tuple[Pod, str]] = {}

    # -- the client -------------------------------------------------------------------------------
    def _new_client(self) -> Client:
        cfg = self.sim.config.scheduler
        self._client_params = (cfg.client_qps, cfg.client_burst)
        return Client("scheduler", *self._client_params)

    def _check_client(self) -> None:
        """A changed clientConnection (SetParameters) takes effect as a restarted
        kube-scheduler's would: a new clientset with a full bucket (binds already waiting keep
        their instants)."""
        cfg = self.sim.config.scheduler
        if (cfg.client_qps, cfg.client_burst) != self._client_params:
            self.client = self._new_client()

    # -- hooks ------------------------------------------------------------------------------------
    def enqueue(self, pod: Pod, now: int) -> None:
        """A new pod without a node: activeQ.Add."""
        self._seq += 1
        self.queue[pod.key] = (self._seq, pod)
        self.wake(now)

    def enqueue_all(self, pods: list[Pod], now: int) -> None:
        """``enqueue`` of each pod in turn, the pass scheduled once: each pod queued behind
        the one before, the version bumped once per pod as each enqueue's wake does."""
        if not pods:
            return
        queue = self.queue
        for pod in pods:
            self._seq += 1
            queue[pod.key] = (self._seq, pod)
        self._version += len(pods) - 1
        self.wake(now)

    def wake(self, now: int) -> None:
        """Something changed in the cluster: MoveAllToActiveQueue, then a pass at this instant."""
        self._version += 1
        if self.queue and self._at != now:
            self._at = now
            self.sim.sched.schedule(now, Phase.SCHEDULER, self.run_pass)

    def set_node_affinity(self, pod_key: str, node_name: str) -> None:
        """The DaemonSet controller's required node affinity
        (ReplaceDaemonSetPodNodeNameNodeAffinity) for a pod it is about to create."""
        self.node_affinity[pod_key] = node_name

    def pod_changed(self, pod: Pod, now: int) -> None:
        """Keep NodeInfo current: a pod counts on its node while it exists, is bound and is
        not Succeeded/Failed (the scheduler's pod informer drops terminated pods)."""
        key = pod.key
        current = self.sim.cluster.pods.get(key)
        if current is not None and current is not pod:
            return  # a late notice about an object that has been replaced
        node_name = pod.node_name or (self._assumed_node(pod) if self.assumed else "")
        counts = current is not None and bool(node_name) and pod.phase not in TERMINAL_PHASES
        prev = self._accounted.get(key)
        if prev is not None and (not counts or prev[1] != node_name):
            del self._accounted[key]
            used = self.requested[prev[1]]
            for i, v in enumerate(prev[2]):
                used[i] -= v
            self._node_changed(prev[1])
            self._spread.clear()
            self.wake(now)  # AssignedPodDelete: room may have been freed
            prev = None
        if counts and prev is None:
            vec = node_info_contribution(pod)
            used = self.requested.get(node_name) or self.requested.setdefault(
                node_name, [0, 0, 0, 0, 0, 0]
            )  # (no new list when the node has one)
            used[0] += vec[0]
            used[1] += vec[1]
            used[2] += vec[2]
            used[3] += vec[3]
            used[4] += vec[4]
            used[5] += vec[5]
            self._accounted[key] = (pod, node_name, vec)
            self._node_changed(node_name)
        if current is None:
            self.queue.pop(key, None)
            self.node_affinity.pop(key, None)

    def pending(self) -> list[Pod]:
        """Pods waiting to be scheduled, in queue order."""
        return [p for _, p in sorted(self.queue.values(), key=lambda e: (-e[1].priority, e[0]))]

    # -- the scheduling pass --------------------------------------------------------------------
    def run_pass(self) -> None:
        """scheduleOne for every queued pod, highest priority first."""
        self._windows, self._bases, self._last_window = {}, {}, None
        self._in_pass = True
        try:
            self._run_pass()
        finally:
            self._windows, self._bases, self._last_window = {}, {}, None
            self._in_pass = False

    def _run_pass(self) -> None:
        now = self.sim.now_ms
        self._at = None
        self._spread.clear()
        cluster = self.sim.cluster
        for _seq, pod in self._queue_order():
            key = pod.key
            if cluster.pods.get(key) is not pod or pod.node_name or pod.deletion_ms is not None:
                self.queue.pop(key, None)  # skipPodSchedule: gone, bound or being deleted
                continue
            node_name, message = self.schedule(pod)
            if node_name is None:
                self._seq += 1
                self.queue[key] = (self._seq, pod)  # back of the queue, retried on the next wake
                if message != pod.unschedulable_reason:
                    pod.unschedulable_reason = message
                    cluster.record_event(now, f"Pod/{key}", "FailedScheduling", message, "Warning")
                continue
            self.queue.pop(key, None)
            self._bind(pod, node_name, now)

    def _queue_order(self) -> list[tuple[int, Pod]]:
        """The queue's entries by priority (higher first), then queue order: the seq sort (an
        int key read in C) and, only when the priorities differ, a stable sort by priority."""
        order = sorted(self.queue.values(), key=itemgetter(0))
        if order:
            first = order[0][1].priority
            if any(e[1].priority != first for e in order):
                order.sort(key=lambda e: -e[1].priority)
        return order

    def _bind(self, pod: Pod, node_name: str, now: int) -> None:
        owner = self._spread_owner(pod)
        if owner is not None and owner in self._spread:
            counts = self._spread[owner]
            counts[node_name] = counts.get(node_name, 0) + 1
        # t=0 is the scenario's cluster as it stands (as the node-controller's set-up writes):
        # its binds are not charged to the client.
        self._check_client()
        t = self.client.reserve(now) if now > 0 else now
        if t <= now:
            self.sim.cluster.bind_pod(pod, node_name, now)
            self.pod_changed(pod, now)
            self.node_affinity.pop(pod.key, None)
            return
        # assume: NodeInfo counts the pod on its node from now; the binding goroutine waits.
        self.assumed[pod.key] = (pod, node_name)
        self.pod_changed(pod, now)
        self.sim.sched.schedule(t, Phase.SCHEDULER, self._bind_now, pod, node_name)

    def _assumed_node(self, pod: Pod) -> str:
        entry = self.assumed.get(pod.key)
        return entry[1] if entry is not None and entry[0] is pod else ""

    def _bind_now(self, pod: Pod, node_name: str) -> None:
        """The binding goroutine's ``Pods(ns).Bind`` at its token's instant: a pod gone (or
        another of that name) or being deleted is not bound (ForgetPod: it leaves NodeInfo)."""
        now = self.sim.now_ms
        key = pod.key
        if self._assumed_node(pod) == node_name:
            del self.assumed[key]
        cluster = self.sim.cluster
        if cluster.pods.get(key) is not pod or pod.deletion_ms is not None or pod.node_name:
            self.pod_changed(pod, now)
            return
        cluster.bind_pod(pod, node_name, now)
        self.pod_changed(pod, now)
        self.node_affinity.pop(key, None)

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        """Port of genericScheduler.Schedule: the chosen node, or None and the FitError."""
        nodes = self._node_list()
        n = len(nodes)
        if n == 0:
            return None, ERR_NO_NODES
        info = PodInfo.of(pod, self.node_affinity.get(pod.key, ""))
        known = self._unfit.get(info.signature)
        if known is not None and known[0] == self._version:
            return None, known[1]  # an identical pod found no node since nothing changed
        if info.required_node:
            # Only its own node can pass NodeAffinity: when it fits, every other node fails
            # and all are processed, so nextStartNodeIndex stays where it is.
            node = self.sim.cluster.nodes.get(info.required_node)
            if node is not None and self.filter(info, node) is None:
                return node.name, ""
        elif n >= WINDOW_MIN_NODES and not info.node_selector and getattr(self, "_in_pass", False):
            chosen = schedule_window(self, pod, info, nodes)  # the same choice, by blocks
            if chosen is not None:
                return chosen, ""
        feasible, reasons = self.find_nodes_that_pass_filters(info, nodes)
        if not feasible:
            message = fit_error_message(n, reasons)
            self._unfit[info.signature] = (self._version, message)
            return None, message
        if len(feasible) == 1:
            return feasible[0][1], ""
        return self.prioritize(pod, info, feasible), ""

    def find_nodes_that_pass_filters(
        self, info: PodInfo, nodes: list[NodeEntry]
    ) -> tuple[list[NodeEntry], dict[str, int]]:
        """Port of genericScheduler.findNodesThatPassFilters (sequential): stop after
        numFeasibleNodesToFind feasible nodes; the next cycle starts after the last one seen.
        A schedulable node without taints is checked inline; others go through ``filter``."""
        n = len(nodes)
        to_find = num_feasible_nodes_to_find(n)
        start = self.next_start_node_index % n
        feasible: list[NodeEntry] = []
        reasons: dict[str, int] = {}
        processed = 0
        requested, zero, fits = self.requested, _ZERO, self.filter
        memo = self._failures_for(info.signature)
        plain = not info.required_node and not info.node_selector
        cpu, mem, eph, has_requests = info.cpu, info.memory, info.ephemeral, info.has_requests
        add, need = feasible.append, to_find
        for entry in chain(nodes[start:], nodes[:start]):
            processed += 1
            node = entry[0]
            if plain and not node.unschedulable and not node.taints:
                used = requested.get(entry[1], zero)
                if used[PODS] < entry[5] and (
                    not has_requests
                    or (
                        entry[2] >= cpu + used[CPU]
                        and entry[3] >= mem + used[MEMORY]
                        and entry[4] >= eph + used[EPHEMERAL]
                    )
                ):
                    add(entry)
                    need -= 1
                    if not need:
                        break
                    continue
            failed = memo.get(entry[1])
            if failed is None:
                failed = memo[entry[1]] = fits(info, node) or ()
            if not failed:
                add(entry)
                need -= 1
                if not need:
                    break
            else:
                for reason in failed:
                    reasons[reason] = reasons.get(reason, 0) + 1
        self.next_start_node_index = (start + processed) % n
        return feasible, reasons

    def filter(self, p: PodInfo, node: Node) -> tuple[str, ...] | None:
        """RunFilterPlugins, stopping at the first plugin that fails; None if the node fits."""
        # NodeUnschedulable
        if node.unschedulable and not p.tolerates_unschedulable:
            return (ERR_UNSCHEDULABLE,)
        # NodeResourcesFit (fitsRequest)
        used = self.requested.get(node.name, _ZERO)
        alloc = node.resources.allocatable
        insufficient: list[str] = []
        if used[PODS] + 1 > alloc.get("pods", 0):
            insufficient.append(ERR_TOO_MANY_PODS)
        if p.has_requests:
            if alloc.get("cpu", 0) < p.cpu + used[CPU]:
                insufficient.append(ERR_CPU)
            if alloc.get("memory", 0) < p.memory + used[MEMORY]:
                insufficient.append(ERR_MEMORY)
            if alloc.get("ephemeral-storage", 0) < p.ephemeral + used[EPHEMERAL]:
                insufficient.append(ERR_EPHEMERAL)
        if insufficient:
            return tuple(insufficient)
        # NodeAffinity: nodeSelector, and a DaemonSet pod's required node
        if p.required_node and p.required_node != node.name:
            return (ERR_NODE_SELECTOR,)
        labels = node.labels
        for k, v in p.node_selector:
            if labels.get(k) != v:
                return (ERR_NODE_SELECTOR,)
        # TaintToleration: NoSchedule and NoExecute taints
        for taint in node.taints:
            if taint.effect != NO_SCHEDULE and taint.effect != NO_EXECUTE:
                continue
            if not any(t.tolerates(taint) for t in p.tolerations):
                return (taint_reason(taint),)
        return None

    def prioritize(self, pod: Pod, p: PodInfo, feasible: list[NodeEntry]) -> str:
        """Port of genericScheduler.prioritizeNodes + selectHost: the highest total of
        LeastAllocated + BalancedAllocation (cached per node until its NodeInfo changes),
        SelectorSpread and TaintToleration; ties to the first node name."""
        nz = nonzero_requests(pod)
        cache = self._resource_scores.get(nz)
        if cache is None:
            if len(self._resource_scores) >= 16:
                self._resource_scores.clear()
            cache = self._resource_scores[nz] = {}
        get = cache.get
        totals = [get(e[1]) for e in feasible]
        if None in totals:
            for i, entry in enumerate(feasible):
                if totals[i] is None:
                    totals[i] = cache[entry[1]] = self.resource_score(entry, nz[0], nz[1])
        scores: list[int] = totals  # type: ignore[assignment]  # no None left
        counts = self._spread_counts(pod)
        if counts:
            scores = self._add_spread(scores, feasible, counts)
        # else: every node would score MAX_NODE_SCORE, which changes no ranking
        if any(e[0].taints for e in feasible):
            prefer = [t for t in p.tolerations if t.effect in (PREFER_NO_SCHEDULE, "")]
            intolerable = [
                sum(
                    1
                    for t in e[0].taints
                    if t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(prefer, t)
                )
                for e in feasible
            ]
            taint_scores = default_normalize_score(intolerable, reverse=True)
            scores = [t + s for t, s in zip(scores, taint_scores)]
        best = max(scores)
        return min(e[1] for e, score in zip(feasible, scores) if score == best)

    @staticmethod
    def _add_spread(
        scores: list[int], feasible: list[NodeEntry], counts: dict[str, int]
    ) -> list[int]:
        """``scores`` plus each node's SelectorSpread score (spread_score, with its two float
        terms computed once per pod count and once per zone)."""
        cget = counts.get
        node_counts = [cget(e[1], 0) for e in feasible]
        by_zone: dict[str, int] = {}
        for e, c in zip(feasible, node_counts):
            if e[6]:
                by_zone[e[6]] = by_zone.get(e[6], 0) + c
        max_node, max_zone = max(node_counts), max(by_zone.values(), default=0)
        if not by_zone:
            memo: dict[int, int] = {}
            out = []
            for score, c in zip(scores, node_counts):
                s = memo.get(c)
                if s is None:
                    s = memo[c] = spread_score(c, max_node, -1, max_zone, False)
                out.append(score + s)
            return out
        node_part: dict[int, float] = {}
        zone_part = {
            z: ZONE_WEIGHTING
            * (MAX_NODE_SCORE * (float(max_zone - zc) / float(max_zone)) if max_zone > 0 else 100.0)
            for z, zc in by_zone.items()
        }
        out = []
        for score, e, c in zip(scores, feasible, node_counts):
            zone = e[6]
            if not zone:  # a node without a zone among zoned ones
                out.append(score + spread_score(c, max_node, -1, max_zone, True))
                continue
            a = node_part.get(c)
            if a is None:
                f = MAX_NODE_SCORE * (float(max_node - c) / float(max_node)) if max_node else 100.0
                a = node_part[c] = f * (1.0 - ZONE_WEIGHTING)
            out.append(score + int(a + zone_part[zone]))
        return out

    def resource_score(self, entry: NodeEntry, nz_cpu: int, nz_mem: int) -> int:
        """NodeResourcesLeastAllocated + NodeResourcesBalancedAllocation for one node (a pure
        function of requested and allocatable cpu and memory: remembered per those four, as
        nodes alike with the same pods score alike)."""
        used = self.requested.get(entry[1], _ZERO)
        key = (used[NZ_CPU] + nz_cpu, used[NZ_MEMORY] + nz_mem, entry[2], entry[3])
        score = _RESOURCE_SCORES.get(key)
        if score is None:
            if len(_RESOURCE_SCORES) >= 1 << 16:
                _RESOURCE_SCORES.clear()
            cpu_req, mem_req, cpu_cap, mem_cap = key
            least = (
                least_requested_score(cpu_req, cpu_cap) + least_requested_score(mem_req, mem_cap)
            ) // 2
            score = _RESOURCE_SCORES[key] = least + balanced_resource_score(
                cpu_req, cpu_cap, mem_req, mem_cap
            )
        return score

    # -- helpers ----------------------------------------------------------------------------------
    def _node_changed(self, name: str) -> None:
        """The node's NodeInfo changed: forget what was derived from it."""
        for scores in self._resource_scores.values():
            scores.pop(name, None)
        for failures in self._failures.values():
            failures.pop(name, None)
        windows, bases = self._windows, self._bases
        if windows or bases:
            schedwindow.forget(chain(windows.values(), bases.values()), name)

    def _failures_for(self, signature: tuple[object, ...]) -> dict[str, tuple[str, ...]]:
        """Why each node failed pods of this signature; valid until the scheduler is woken
        (a node or taint changed) or the node's NodeInfo changes."""
        if self._failures_version != self._version or len(self._failures) > 64:
            self._failures.clear()
            self._failures_version = self._version
        return self._failures.setdefault(signature, {})

    def _node_list(self) -> list[NodeEntry]:
        """The zone-interleaved node list, each node with its allocatable resources (fixed at
        registration), rebuilt when nodes come or go."""
        src = self.sim.sorted_nodes()
        if src is not self._nodes_src:
            self._nodes_src = src
            self._resource_scores.clear()
            self._nodes = [
                (
                    n,
                    n.name,
                    n.resources.allocatable.get("cpu", 0),
                    n.resources.allocatable.get("memory", 0),
                    n.resources.allocatable.get("ephemeral-storage", 0),
                    n.resources.allocatable.get("pods", 0),
                    n.zone_key,
                )
                for n in self._tree_order()
            ]
        return self._nodes

    def _tree_order(self) -> list[Node]:
        """The nodes in the scheduler cache's order (NodeTree, kept across node changes)."""
        nodes = self.sim.cluster.nodes
        tree = getattr(self, "node_tree", None)
        if tree is None:  # an engine pickled before the tree existed
            tree = self.node_tree = NodeTree()
        tree.sync(list(nodes.values()))
        return [nodes[name] for name in tree.list()]

    def _spread_owner(self, pod: Pod) -> str | None:
        owner = pod.owner
        if owner is None or not owner.controller or owner.kind not in SPREAD_OWNER_KINDS:
            return None
        key = pod.owner_key
        return key if key in self.sim.workloads.workloads else None

    def _spread_counts(self, pod: Pod) -> dict[str, int] | None:
        """Pods selected by the same controller, per node (countMatchingPods: bound, not
        terminated, not being deleted); None when no controller selects the pod."""
        owner = self._spread_owner(pod)
        return None if owner is None else self.owner_counts(owner)

    def owner_counts(self, owner: str) -> dict[str, int]:
        """_spread_counts of the pods of ``owner`` (kept in _spread: _bind adds to it, a
        counted pod that leaves drops them all)."""
        counts = self._spread.get(owner)
        if counts is None:
            counts = {}
            assumed = self.assumed
            for p in self.sim.workloads.pods_of(owner):
                node = p.node_name or (self._assumed_node(p) if assumed else "")
                if node and p.deletion_ms is None and p.phase not in TERMINAL_PHASES:
                    counts[node] = counts.get(node, 0) + 1
            self._spread[owner] = counts
        return counts
