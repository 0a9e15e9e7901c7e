"""Workload controllers of kube-controller-manager (v1.18): Deployment -> ReplicaSet -> Pods,
DaemonSet, StatefulSet; and the availability metrics the page charts.

Each controller is level-triggered, as in Kubernetes: an informer event (a pod of the
workload changed, a node changed, the object was applied or scaled) marks the workload
dirty, and every dirty workload is synced once at the WORKLOADS phase of that instant, in a
fixed order (Deployments, ReplicaSets, StatefulSets, DaemonSets; then by name), until
nothing is dirty. Nothing polls.

Names are generated the way the API server and the controllers do (``<rs>-<5 chars>`` from
the safe alphabet, ``<deploy>-<pod-template-hash>``, ``<sts>-<ordinal>``), from hashes of
stable inputs, so runs are reproducible.

Left out: adoption and release of pods by label selector (a controller owns the pods it
created, and manifests' pods whose controller ownerReference names it), matchExpressions,
minReadySeconds and progress deadlines, revision history cleanup, StatefulSet and DaemonSet
rolling updates (a changed template applies to pods created afterwards, as with OnDelete).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .admission import add_or_update_daemon_pod_tolerations
from .core import Phase
from .manifests import pod_from_manifest
from .nodelifecycle.zones import zone_display
from .objects import FALSE, NO_EXECUTE, NO_SCHEDULE, TRUE, Node, OwnerRef, Pod
from .scenario import INT32_MAX, ScenarioError, _int, _map, _show, _str
from .scheduler import node_info_contribution, nonzero_requests
from .series import append_change

# The fields _new_pod copies from a template: all of Pod's (a new field must be added there).
_POD_FIELDS = [
    "namespace",
    "name",
    "uid",
    "creation_ms",
    "labels",
    "annotations",
    "owner",
    "node_name",
    "node_selector",
    "tolerations",
    "containers",
    "init_containers",
    "priority",
    "priority_class_name",
    "termination_grace_period_s",
    "host_network",
    "phase",
    "reason",
    "message",
    "ready",
    "started",
    "deletion_ms",
    "deletion_grace_s",
    "usage",
    "unschedulable_reason",
    "disruption_target",
]
assert [f.name for f in fields(Pod) if f.init] == _POD_FIELDS, "update WorkloadControllers._new_pod"

if TYPE_CHECKING:
    from .simulation import Simulation

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
MAX_GENERATED_NAME_LENGTH = 63 - 5  # names.maxGeneratedNameLength
RS_BURST_REPLICAS = 500  # replicaset.BurstReplicas
DS_BURST_REPLICAS = 250  # daemon.BurstReplicas
DS_BACKOFF_INITIAL_MS = 1_000  # failedPodsBackoff: flowcontrol.NewBackOff(1s, 15m)
DS_BACKOFF_MAX_MS = 15 * 60_000
MAX_SYNCS_PER_INSTANT = 100  # simulator guard: a controller fighting the kubelet waits 1 s
RESYNC_DELAY_MS = 1_000
KIND_ORDER = {"Deployment": 0, "ReplicaSet": 1, "StatefulSet": 2, "DaemonSet": 3}
ROLLING_UPDATE, RECREATE = "RollingUpdate", "Recreate"
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
POD_PHASES = ("Running", "Pending", "Terminating", "Succeeded", "Failed")
NODE_STATES = ("Ready", "NotReady", "Unknown")


# -- names and hashes ------------------------------------------------------------------------
def fnv32a(data: bytes) -> int:
    """hash/fnv New32a."""
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode_string(s: str) -> str:
    """Port of rand.SafeEncodeString: every byte mapped into the safe alphabet."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in s.encode())


def compute_hash(template: dict[str, Any], collision_count: int = 0) -> str:
    """Port of controller.ComputeHash: FNV-32a of the pod template (here its canonical JSON,
    where Kubernetes deep-prints the Go struct), plus the collision count, written in
    decimal and safe-encoded: up to 10 characters, e.g. ``5d59d67564``."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode_string(str(fnv32a(data)))


_SUFFIX_CHARS = bytes(ord(ALPHANUMS[b % len(ALPHANUMS)]) for b in range(256))


def random_suffix(seed: str, n: int = 5) -> str:
    """Stands in for utilrand.String(n) (the API server's generateName): ``n`` characters of
    the safe alphabet, drawn from a hash of ``seed`` instead of a global random source."""
    digest = hashlib.sha256(seed.encode()).digest()
    return digest[:n].translate(_SUFFIX_CHARS).decode()  # ALPHANUMS[b % len(ALPHANUMS)] each


# -- pod predicates ----------------------------------------------------------------------------
def is_pod_active(pod: Pod) -> bool:
    """Port of controller.IsPodActive: not Succeeded/Failed and not being deleted."""
    return pod.phase != "Succeeded" and pod.phase != "Failed" and pod.deletion_ms is None


def is_pod_ready(pod: Pod) -> bool:
    """Port of podutil.IsPodReady."""
    return pod.ready is True


def is_running_and_ready(pod: Pod) -> bool:
    """Port of statefulset isRunningAndReady."""
    return pod.phase == "Running" and pod.ready is True


def selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """A matchLabels selector; an empty one selects nothing (as GetPodDaemonSets treats it)."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_metrics_class(pod: Pod) -> str:
    return "Terminating" if pod.deletion_ms is not None else pod.phase


def node_metrics_class(node: Node) -> str:
    status = node.ready_status()
    return "Ready" if status == TRUE else "NotReady" if status == FALSE else "Unknown"


def stateful_ordinal(set_name: str, pod_name: str) -> int:
    """Port of statefulset getOrdinal: -1 unless the name is ``<set>-<int>``."""
    prefix, _, suffix = pod_name.rpartition("-")
    if prefix != set_name or not suffix.isdigit():
        return -1
    return int(suffix)


# -- Deployment arithmetic -----------------------------------------------------------------------
def int_or_percent(value: int | str, total: int, round_up: bool) -> int:
    """Port of intstr.GetValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    pct = int(value.rstrip("%"))
    scaled = pct * total
    return -(-scaled // 100) if round_up else scaled // 100


def resolve_fenceposts(
    max_surge: int | str, max_unavailable: int | str, desired: int
) -> tuple[int, int]:
    """Port of deploymentutil.ResolveFenceposts."""
    surge = int_or_percent(max_surge, desired, True)
    unavailable = int_or_percent(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # both zero would block every rollout
    return surge, unavailable


def active_pods_deletion_key(pod: Pod, rank: int, ready_since: int | None) -> tuple[Any, ...]:
    """Port of controller.ActivePodsWithRanks.Less as a sort key (first deleted first):
    unassigned, then Pending < Unknown < Running, not ready, more replicas on the same node,
    ready more recently, newer; the name breaks remaining ties."""
    ready = is_pod_ready(pod)
    return (
        1 if pod.node_name else 0,
        {"Pending": 0, "Unknown": 1, "Running": 2}.get(pod.phase, 0),
        1 if ready else 0,
        -rank,
        -(ready_since or 0) if ready else 0,
        -pod.creation_ms,
        pod.name,
    )


def parse_workload(manifest: dict[str, Any], path: str = "object") -> dict[str, Any]:
    """The workload fields the controllers use, with their Kubernetes defaults; bad values are
    refused with their path (ScenarioError)."""
    kind = manifest["kind"]
    meta = _map(manifest.get("metadata"), f"{path}.metadata")
    spec = _map(manifest.get("spec"), f"{path}.spec")
    template = copy.deepcopy(_map(spec.get("template"), f"{path}.spec.template"))  # private
    tmeta = template.setdefault("metadata", {})
    selector = _map(spec.get("selector"), f"{path}.spec.selector")
    match = dict(_map(selector.get("matchLabels"), f"{path}.spec.selector.matchLabels"))
    if not match:
        match = dict(tmeta.get("labels") or {})
    out: dict[str, Any] = {
        "namespace": _str(meta.get("namespace", "default"), f"{path}.metadata.namespace"),
        "name": str(meta["name"]),
        "replicas": _int(spec.get("replicas", 1), f"{path}.spec.replicas", maximum=INT32_MAX)
        if kind != "DaemonSet"
        else 0,
        "template": template,
        "selector": {str(k): str(v) for k, v in match.items()},
    }
    if kind == "Deployment":
        strategy = _map(spec.get("strategy"), f"{path}.spec.strategy")
        stype = strategy.get("type", ROLLING_UPDATE)
        if stype not in (ROLLING_UPDATE, RECREATE):
            raise ScenarioError(
                f"{path}.spec.strategy.type",
                f"must be RollingUpdate or Recreate, got {_show(stype)}",
            )
        rolling = _map(strategy.get("rollingUpdate"), f"{path}.spec.strategy.rollingUpdate")
        out["strategy"] = stype
        for key in ("maxSurge", "maxUnavailable"):
            value = rolling.get(key, "25%")
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            ok = ok or (isinstance(value, str) and value.endswith("%") and value[:-1].isdigit())
            if not ok:
                raise ScenarioError(
                    f"{path}.spec.strategy.rollingUpdate.{key}",
                    f"must be a count or a percentage, got {value!r}",
                )
            out[key] = value
        # ValidateRollingUpdateDeployment
        rp = f"{path}.spec.strategy.rollingUpdate"
        amounts = {k: int(str(out[k]).rstrip("%")) for k in ("maxSurge", "maxUnavailable")}
        if amounts["maxSurge"] == 0 and amounts["maxUnavailable"] == 0:
            raise ScenarioError(f"{rp}.maxUnavailable", "may not be 0 when `maxSurge` is 0")
        if str(out["maxUnavailable"]).endswith("%") and amounts["maxUnavailable"] > 100:
            raise ScenarioError(f"{rp}.maxUnavailable", "must not be greater than 100%")
    if kind == "StatefulSet":
        policy = spec.get("podManagementPolicy", ORDERED_READY)
        if policy not in (ORDERED_READY, PARALLEL):
            raise ScenarioError(
                f"{path}.spec.podManagementPolicy",
                f"must be OrderedReady or Parallel, got {_show(policy)}",
            )
        out["policy"] = policy
    return out


@dataclass(slots=True)
class Workload:
    """A Deployment, ReplicaSet, StatefulSet or DaemonSet: spec, status and controller state."""

    kind: str
    namespace: str
    name: str
    uid: str
    creation_ms: int
    replicas: int
    template: dict[str, Any]
    selector: dict[str, str]
    owner: OwnerRef | None = None  # a ReplicaSet's Deployment
    names_generated: int = 0
    # status
    status_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    # Deployment
    strategy: str = ROLLING_UPDATE
    max_surge: int | str = "25%"
    max_unavailable: int | str = "25%"
    template_hash: str = ""  # Deployment: of its template; ReplicaSet: its pod-template-hash
    collision_count: int = 0
    updated_replicas: int = 0
    # ReplicaSet of a Deployment: revision and the deployment.kubernetes.io/* annotations
    revision: int = 0
    desired_annotation: int | None = None
    max_annotation: int | None = None
    # StatefulSet
    policy: str = ORDERED_READY
    # DaemonSet
    proto: Pod | None = None  # the parsed pod template (DaemonSet: with daemon tolerations)
    dirty_nodes: set[str] | None = None  # None: every node
    should_run: set[str] = field(default_factory=set)
    ready_nodes: set[str] = field(default_factory=set)
    backoff: dict[str, tuple[int, int]] = field(default_factory=dict)  # node -> (delay, last)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    def desired_and_ready(self) -> tuple[int, int]:
        if self.kind == "DaemonSet":
            return len(self.should_run), len(self.ready_nodes)
        return self.replicas, self.ready_replicas


class WorkloadControllers:
    """The Deployment, ReplicaSet, DaemonSet and StatefulSet controllers, sharing one pod index."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.workloads: dict[str, Workload] = {}
        self.owned: dict[str, dict[str, Pod]] = {}  # "Kind/ns/name" -> pods it controls
        self.ds_pods: dict[str, dict[str, dict[str, Pod]]] = {}  # DaemonSet -> node -> pods
        self.ds_target: dict[str, str] = {}  # DaemonSet pod -> its node (bound or not)
        self.ready_since: dict[str, int] = {}
        self.dirty: set[str] = set()
        self._scheduled_at: int | None = None
        self._reconciling = False
        self._syncs_at = -1
        self._syncs: dict[str, int] = {}
        # availability metrics, kept incrementally
        self._pod_class: dict[str, str] = {}
        self.pod_counts: dict[str, int] = dict.fromkeys(POD_PHASES, 0)
        self._node_class: dict[str, tuple[str, str]] = {}  # node -> (zone, state)
        self.zone_counts: dict[str, dict[str, int]] = {}
        self.workload_series: dict[str, list[tuple[int, int, int]]] = {}
        self.cluster_series: list[tuple[Any, ...]] = []  # (t, pods by phase, zones)

    # -- API writes from scenarios and faults ----------------------------------------------------
    def check_apply(self, manifest: dict[str, Any], path: str) -> None:
        """What the API server refuses in an update: apps/v1 selectors are immutable."""
        spec = parse_workload(manifest, path)
        w = self.workloads.get(f"{manifest['kind']}/{spec['namespace']}/{spec['name']}")
        if w is not None and w.selector != spec["selector"]:
            raise ScenarioError(
                f"{path}.spec.selector", "field is immutable (selectors cannot change in apps/v1)"
            )

    def apply(self, manifest: dict[str, Any], now: int) -> None:
        """``kubectl apply`` of a Deployment, ReplicaSet, DaemonSet or StatefulSet."""
        kind = manifest["kind"]
        spec = parse_workload(manifest)
        key = f"{kind}/{spec['namespace']}/{spec['name']}"
        w = self.workloads.get(key)
        if w is None:
            w = Workload(
                kind=kind,
                namespace=spec["namespace"],
                name=spec["name"],
                uid=self.sim.cluster.new_uid(kind),
                creation_ms=now,
                replicas=spec["replicas"],
                template=spec["template"],
                selector=spec["selector"],
            )
            self.workloads[key] = w
        else:
            w.replicas, w.template = spec["replicas"], spec["template"]  # selectors are immutable
        w.strategy = spec.get("strategy", ROLLING_UPDATE)
        w.max_surge = spec.get("maxSurge", "25%")
        w.max_unavailable = spec.get("maxUnavailable", "25%")
        w.policy = spec.get("policy", ORDERED_READY)
        if kind == "Deployment":
            w.template_hash = compute_hash(w.template, w.collision_count)
        w.proto = None  # re-parsed from the new template on first use
        if kind == "DaemonSet":
            w.dirty_nodes = None
        self._mark(key, now)

    def scale(self, ref: str, replicas: int, now: int) -> None:
        """``kubectl scale Kind/name --replicas=N`` (the ScaleWorkload fault)."""
        w = self.check_scale(ref, replicas)
        w.replicas = replicas
        self._mark(w.key, now)
        if w.owner is not None:
            self._mark(f"{w.owner.kind}/{w.namespace}/{w.owner.name}", now)

    def check_scale(self, ref: str, replicas: int) -> Workload:
        """The workload ``kubectl scale`` would change, or the error it would print."""
        w = self._resolve(ref)
        if w.kind == "DaemonSet":
            raise ScenarioError("workload", f'"{ref}" is a DaemonSet, which has no replicas')
        if replicas < 0:
            raise ScenarioError("replicas", f"must be >= 0, got {replicas}")
        return w

    def _resolve(self, ref: str) -> Workload:
        """``Kind/name`` (the default namespace first, else the only match) or
        ``Kind/namespace/name``."""
        parts = ref.split("/")
        if len(parts) == 3:
            w = self.workloads.get(ref)
        elif len(parts) == 2:
            w = self.workloads.get(f"{parts[0]}/default/{parts[1]}")
            if w is None:
                matches = [x for k, x in sorted(self.workloads.items()) if x.ref == ref]
                w = matches[0] if len(matches) == 1 else None
        else:
            w = None
        if w is None:
            raise ScenarioError("workload", f'unknown workload "{ref}"')
        return w

    def resync_all(self, now: int) -> None:
        """After a kube-controller-manager restart: every controller lists everything again."""
        for key, w in self.workloads.items():
            if w.kind == "DaemonSet":
                w.dirty_nodes = None
                w.backoff.clear()
            self._mark(key, now)

    def daemonset_selects(self, pod: Pod) -> bool:
        """Port of the GetPodDaemonSets check in DeletePods: a DaemonSet of the pod's namespace
        whose selector matches the pod's labels."""
        for w in self.workloads.values():
            if w.kind == "DaemonSet" and w.namespace == pod.namespace:
                if selector_matches(w.selector, pod.labels):
                    return True
        return False

    def pods_of(self, key: str) -> list[Pod]:
        """Pods controlled by workload ``Kind/ns/name``, in creation order."""
        return list(self.owned.get(key, {}).values())

    # -- informer hooks --------------------------------------------------------------------------
    def on_pod_changed(self, pod: Pod, now: int) -> None:
        """A pod was added, updated, marked for deletion or removed."""
        key = pod.key
        current = self.sim.cluster.pods.get(key)
        if current is not None and current is not pod:
            return  # a late notice about an object already replaced under the same name
        alive = current is not None
        cls = pod_metrics_class(pod) if alive else None
        if self._pod_class.get(key) != cls:
            self._count_pod(key, cls)
        if alive and pod.ready is True:  # is_pod_ready
            self.ready_since.setdefault(key, now)
        else:
            self.ready_since.pop(key, None)
        self.sim.kube_scheduler.pod_changed(pod, now)
        owner = pod.owner
        if owner is not None and owner.controller:
            okey = pod.owner_key
            if alive:
                self.owned.setdefault(okey, {})[key] = pod
            elif key in self.owned.get(okey, {}):
                del self.owned[okey][key]
            if owner.kind == "DaemonSet":
                self._index_daemon_pod(okey, pod, alive)
            w = self.workloads.get(okey)
            if w is not None:
                if w.kind == "DaemonSet":
                    node = self.ds_target.get(key) or pod.node_name
                    self._mark_ds_node(w, node)
                self.dirty.add(okey)  # _mark: the reconcile is ensured below
                if not alive and w.kind == "ReplicaSet" and w.owner is not None:
                    self._recreate_deployment_emptied(w.owner.name, w.namespace, now)
        if not alive:
            self.ds_target.pop(key, None)
        self._ensure_reconcile(now)

    def _recreate_deployment_emptied(self, name: str, namespace: str, now: int) -> None:
        """Port of DeploymentController.deletePod: a Recreate Deployment is synced again when
        the last pod of all its ReplicaSets is gone (rolloutRecreate waits for that)."""
        d = self.workloads.get(f"Deployment/{namespace}/{name}")
        if d is None or d.strategy != RECREATE:
            return
        if all(not self.owned.get(rs.key) for rs in self._replica_sets_of(name, namespace)):
            self._mark(d.key, now)

    def on_node_changed(self, name: str, now: int) -> None:
        """A node was added, deleted, or its taints (and with them its Ready state) changed."""
        node = self.sim.cluster.nodes.get(name)
        self._count_node(name, node)
        for w in self.workloads.values():
            if w.kind == "DaemonSet":
                self._mark_ds_node(w, name)
                self._mark(w.key, now)
        self._ensure_reconcile(now)

    # -- reconcile loop ---------------------------------------------------------------------------
    def _mark(self, key: str, now: int) -> None:
        self.dirty.add(key)
        self._ensure_reconcile(now)

    def _ensure_reconcile(self, now: int) -> None:
        if self._reconciling or self._scheduled_at == now:
            return
        self._scheduled_at = now
        self.sim.sched.schedule(now, Phase.WORKLOADS, self.reconcile)

    def _mark_later(self, key: str) -> None:
        self._mark(key, self.sim.now_ms)

    def _mark_ds_node_later(self, key: str, node: str) -> None:
        w = self.workloads.get(key)
        if w is not None:
            self._mark_ds_node(w, node)
            self._mark(key, self.sim.now_ms)

    @staticmethod
    def _mark_ds_node(w: Workload, node: str) -> None:
        if w.dirty_nodes is not None and node:
            w.dirty_nodes.add(node)

    def reconcile(self) -> None:
        """Sync every dirty workload (processNextWorkItem for each controller), then sample the
        availability metrics."""
        now = self.sim.now_ms
        self._scheduled_at = None
        if self._syncs_at != now:
            self._syncs_at, self._syncs = now, {}
        self._reconciling = True
        try:
            while self.dirty:
                batch = sorted(self.dirty, key=lambda k: (KIND_ORDER.get(k.split("/", 1)[0], 9), k))
                self.dirty.clear()
                for key in batch:
                    w = self.workloads.get(key)
                    if w is not None:
                        self._sync(w, now)
        finally:
            self._reconciling = False
        self._sample(now)

    def _sync(self, w: Workload, now: int) -> None:
        count = self._syncs.get(w.key, 0) + 1
        self._syncs[w.key] = count
        if count > MAX_SYNCS_PER_INSTANT:
            # A controller and a kubelet fighting (pods created and rejected at once) would
            # loop forever in one instant; the workqueue's rate limiter spaces them out.
            if count == MAX_SYNCS_PER_INSTANT + 1:
                self.sim.sched.schedule(
                    now + RESYNC_DELAY_MS, Phase.WORKLOADS, self._mark_later, w.key
                )
            return
        if w.kind == "Deployment":
            self.sync_deployment(w, now)
        elif w.kind == "ReplicaSet":
            self.sync_replica_set(w, now)
        elif w.kind == "StatefulSet":
            self.sync_stateful_set(w, now)
        else:
            self.sync_daemon_set(w, now)

    # -- pods -----------------------------------------------------------------------------------
    def _pod_template(self, w: Workload) -> Pod:
        """The workload's pod template as a Pod (parsed once per applied template); for a
        DaemonSet, NewPod: with the daemon tolerations."""
        if w.proto is None:
            tmeta = w.template.get("metadata") or {}
            meta = {
                "labels": dict(tmeta.get("labels") or {}),
                "annotations": dict(tmeta.get("annotations") or {}),
            }
            manifest = {"kind": "Pod", "metadata": meta, "spec": w.template.get("spec") or {}}
            w.proto = pod_from_manifest(
                manifest,
                f"{w.key}.spec.template",
                w.creation_ms,
                "template",
                template=True,
                name=w.name,
                namespace=w.namespace,
                owner=OwnerRef(w.kind, w.name, w.uid, True),
            )
            if w.kind == "DaemonSet":
                add_or_update_daemon_pod_tolerations(w.proto)
        return w.proto

    def _new_pod(
        self, w: Workload, name: str, now: int, extra_labels: dict[str, str] | None = None
    ) -> Pod:
        """Port of controller.GetPodFromTemplate: a new pod of the workload, controlled by it."""
        t = self._pod_template(w)
        # dataclasses.replace(t, ...) written out, in _POD_FIELDS' order (every field of Pod,
        # passed by position: the order is checked above)
        pod = Pod(
            t.namespace,
            name,
            self.sim.cluster.new_uid("pod"),
            now,
            {**t.labels, **extra_labels} if extra_labels else dict(t.labels),
            dict(t.annotations),
            t.owner,
            t.node_name,
            dict(t.node_selector),
            list(t.tolerations),
            list(t.containers),
            list(t.init_containers),
            t.priority,
            t.priority_class_name,
            t.termination_grace_period_s,
            t.host_network,
            t.phase,
            t.reason,
            t.message,
            t.ready,
            t.started,
            t.deletion_ms,
            t.deletion_grace_s,
            dict(t.usage),
            t.unschedulable_reason,
            t.disruption_target,
        )
        # The same containers as the template's: what is derived from them, computed once.
        pod.request_vec = t.requests3()
        pod.nodeinfo_vec = node_info_contribution(t)
        pod.nonzero_vec = nonzero_requests(t)
        pod.qos = t.qos_class()
        return pod

    def _generate_name(self, w: Workload) -> str:
        """metadata.generateName ``<name>-`` completed by the API server."""
        base = f"{w.name}-"[:MAX_GENERATED_NAME_LENGTH]
        while True:
            w.names_generated += 1
            name = base + random_suffix(f"{w.uid}/{w.names_generated}")
            if f"{w.namespace}/{name}" not in self.sim.cluster.pods:
                return name

    def _event(
        self, now: int, w: Workload, reason: str, message: str, etype: str = "Normal"
    ) -> None:
        self.sim.cluster.record_event(
            now, f"{w.kind}/{w.namespace}/{w.name}", reason, message, etype
        )

    def _create_pod(self, w: Workload, pod: Pod, now: int, message: str) -> None:
        """PodControl.CreatePodsWithControllerRef: POST (through admission), then the event."""
        self.sim.create_pod(pod, now)
        self._event(now, w, "SuccessfulCreate", message)

    def _delete_pod(self, w: Workload, pod: Pod, now: int, reason: str, message: str) -> None:
        """PodControl.DeletePod with default options (the pod's own grace period)."""
        if self.sim.cluster.delete_pod(pod, now, w.ref, reason):
            self._event(now, w, "SuccessfulDelete", message)

    # -- ReplicaSet --------------------------------------------------------------------------------
    def sync_replica_set(self, rs: Workload, now: int) -> None:
        """Port of ReplicaSetController.syncReplicaSet: manageReplicas, then calculateStatus
        (from the pods as they were before this sync, like the informer cache)."""
        active = [p for p in self.owned.get(rs.key, {}).values() if is_pod_active(p)]
        ready = sum(1 for p in active if is_pod_ready(p))
        self.manage_replicas(rs, active, now)
        status = (len(active), ready, ready)
        if status != (rs.status_replicas, rs.ready_replicas, rs.available_replicas):
            rs.status_replicas, rs.ready_replicas, rs.available_replicas = status
            if rs.owner is not None:
                self._mark(f"Deployment/{rs.namespace}/{rs.owner.name}", now)

    def manage_replicas(self, rs: Workload, active: list[Pod], now: int) -> None:
        """Port of ReplicaSetController.manageReplicas (at most burstReplicas per sync)."""
        diff = len(active) - rs.replicas
        if diff < 0:
            n = min(-diff, RS_BURST_REPLICAS)
            for _ in range(n):
                name = self._generate_name(rs)
                pod = self._new_pod(rs, name, now)
                self._create_pod(rs, pod, now, f"Created pod: {name}")
            if n < -diff:
                self._mark(rs.key, now)
        elif diff > 0:
            n = min(diff, RS_BURST_REPLICAS)
            for pod in self.get_pods_to_delete(rs, active, n):
                self._delete_pod(rs, pod, now, "ScaleDown", f"Deleted pod: {pod.name}")

    def get_pods_to_delete(self, rs: Workload, active: list[Pod], diff: int) -> list[Pod]:
        """Port of getPodsToDelete with getPodsRankedByRelatedPodsOnSameNode: pods are ranked
        by how many active pods of the same Deployment share their node."""
        if diff >= len(active):
            return list(active)
        # getIndirectlyRelatedPods: the pods of every ReplicaSet with the same controller; a
        # ReplicaSet without one has none (getReplicaSetsWithSameController returns nil), so
        # all its pods rank 0.
        related: list[Pod] = []
        if rs.owner is not None:
            related = [
                p
                for sibling in self._replica_sets_of(rs.owner.name, rs.namespace)
                for p in self.owned.get(sibling.key, {}).values()
            ]
        on_node: dict[str, int] = {}
        for p in related:
            if is_pod_active(p):
                on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
        ranked = sorted(
            active,
            key=lambda p: active_pods_deletion_key(
                p, on_node.get(p.node_name, 0), self.ready_since.get(p.key)
            ),
        )
        return ranked[:diff]

    # -- Deployment --------------------------------------------------------------------------------
    def _replica_sets_of(self, deployment: str, namespace: str) -> list[Workload]:
        """The Deployment's ReplicaSets, oldest first (ReplicaSetsByCreationTimestamp)."""
        out = [
            w
            for w in self.workloads.values()
            if w.kind == "ReplicaSet"
            and w.namespace == namespace
            and w.owner is not None
            and w.owner.name == deployment
        ]
        out.sort(key=lambda w: (w.creation_ms, w.name))
        return out

    def sync_deployment(self, d: Workload, now: int) -> None:
        """Port of DeploymentController.syncDeployment (never paused)."""
        rs_list = self._replica_sets_of(d.name, d.namespace)
        if self._is_scaling_event(d, rs_list):
            new_rs, old_rss = self._get_new_rs(d, rs_list, False, now)
            self._scale(d, new_rs, old_rss, now)
        elif d.strategy == RECREATE:
            self._rollout_recreate(d, rs_list, now)
        else:
            self._rollout_rolling(d, rs_list, now)
        self._sync_deployment_status(d)

    def _sync_deployment_status(self, d: Workload) -> None:
        """Port of calculateStatus: sums over the Deployment's ReplicaSets."""
        rs_list = self._replica_sets_of(d.name, d.namespace)
        d.status_replicas = sum(rs.status_replicas for rs in rs_list)
        d.ready_replicas = sum(rs.ready_replicas for rs in rs_list)
        d.available_replicas = sum(rs.available_replicas for rs in rs_list)
        new_rs = next((rs for rs in rs_list if rs.template_hash == d.template_hash), None)
        d.updated_replicas = new_rs.status_replicas if new_rs is not None else 0

    def _max_surge(self, d: Workload) -> int:
        return (
            resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)[0]
            if d.strategy == ROLLING_UPDATE
            else 0
        )

    def _max_unavailable(self, d: Workload) -> int:
        """Port of deploymentutil.MaxUnavailable."""
        if d.strategy != ROLLING_UPDATE or d.replicas == 0:
            return 0
        unavailable = resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)[1]
        return min(unavailable, d.replicas)

    def _get_new_rs(
        self, d: Workload, rs_list: list[Workload], create: bool, now: int
    ) -> tuple[Workload | None, list[Workload]]:
        """Port of getAllReplicaSetsAndSyncRevision / getNewReplicaSet: the ReplicaSet whose
        template is the Deployment's, created (``<deploy>-<pod-template-hash>``) if asked."""
        new_rs = next((rs for rs in rs_list if rs.template_hash == d.template_hash), None)
        old_rss = [rs for rs in rs_list if rs is not new_rs]
        max_old_revision = max((rs.revision for rs in old_rss), default=0)
        if new_rs is not None:
            if new_rs.revision <= max_old_revision:
                new_rs.revision = max_old_revision + 1
            return new_rs, old_rss
        if not create:
            return None, old_rss
        while f"ReplicaSet/{d.namespace}/{d.name}-{d.template_hash}" in self.workloads:
            d.collision_count += 1  # a name taken by another template: rehash
            d.template_hash = compute_hash(d.template, d.collision_count)
        template = json.loads(json.dumps(d.template))
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        labels[POD_TEMPLATE_HASH] = d.template_hash
        rs = Workload(
            kind="ReplicaSet",
            namespace=d.namespace,
            name=f"{d.name}-{d.template_hash}",
            uid=self.sim.cluster.new_uid("ReplicaSet"),
            creation_ms=now,
            replicas=0,
            template=template,
            selector={**d.selector, POD_TEMPLATE_HASH: d.template_hash},
            owner=OwnerRef("Deployment", d.name, d.uid, True),
            template_hash=d.template_hash,
            revision=max_old_revision + 1,
        )
        rs.replicas = self._new_rs_new_replicas(d, old_rss, rs)
        rs.desired_annotation, rs.max_annotation = d.replicas, d.replicas + self._max_surge(d)
        self.workloads[rs.key] = rs
        self._mark(rs.key, now)
        if rs.replicas > 0:
            self._event(
                now, d, "ScalingReplicaSet", f"Scaled up replica set {rs.name} to {rs.replicas}"
            )
        return rs, old_rss

    def _new_rs_new_replicas(self, d: Workload, all_rss: list[Workload], new_rs: Workload) -> int:
        """Port of deploymentutil.NewRSNewReplicas."""
        if d.strategy == RECREATE:
            return d.replicas
        max_total = d.replicas + self._max_surge(d)
        current = sum(rs.replicas for rs in all_rss if rs is not new_rs) + new_rs.replicas
        if current >= max_total:
            return new_rs.replicas
        scale_up = min(max_total - current, d.replicas - new_rs.replicas)
        return new_rs.replicas + scale_up

    def _scale_rs(
        self, rs: Workload, new_scale: int, d: Workload, now: int, operation: str = ""
    ) -> bool:
        """Port of scaleReplicaSetAndRecordEvent (no ``operation``: nothing to do at the same
        size) and scaleReplicaSet (the size and the desired/max-replicas annotations; the
        ScalingReplicaSet event when the size changes). True if the size changed."""
        if not operation:
            if rs.replicas == new_scale:
                return False
            operation = "up" if new_scale > rs.replicas else "down"
        annotations = (d.replicas, d.replicas + self._max_surge(d))
        rs.desired_annotation, rs.max_annotation = annotations
        if rs.replicas == new_scale:
            return False
        rs.replicas = new_scale
        self._mark(rs.key, now)
        self._event(
            now, d, "ScalingReplicaSet", f"Scaled {operation} replica set {rs.name} to {new_scale}"
        )
        return True

    def _is_scaling_event(self, d: Workload, rs_list: list[Workload]) -> bool:
        """Port of isScalingEvent: an active ReplicaSet annotated with another desired size."""
        return any(
            rs.replicas > 0
            and rs.desired_annotation is not None
            and rs.desired_annotation != d.replicas
            for rs in rs_list
        )

    def _scale(
        self, d: Workload, new_rs: Workload | None, old_rss: list[Workload], now: int
    ) -> None:
        """Port of DeploymentController.scale, proportional scaling included."""
        active = [rs for rs in [*old_rss, new_rs] if rs is not None and rs.replicas > 0]
        if len(active) <= 1:  # FindActiveOrLatest
            target = (
                active[0]
                if active
                else new_rs
                or (max(old_rss, key=lambda r: (r.creation_ms, r.name)) if old_rss else None)
            )
            if target is not None:
                self._scale_rs(target, d.replicas, d, now)
            return
        if (
            new_rs is not None
            and new_rs.replicas == d.replicas
            and new_rs.desired_annotation == d.replicas
            and new_rs.available_replicas == d.replicas
        ):
            for rs in old_rss:  # IsSaturated: the old ones go
                if rs.replicas > 0:
                    self._scale_rs(rs, 0, d, now)
            return
        if d.strategy != ROLLING_UPDATE:
            return
        allowed = d.replicas + self._max_surge(d) if d.replicas > 0 else 0
        to_add = allowed - sum(rs.replicas for rs in active)
        if to_add > 0:  # ReplicaSetsBySizeNewer
            active.sort(key=lambda r: (-r.replicas, -r.creation_ms, r.name))
        elif to_add < 0:  # ReplicaSetsBySizeOlder
            active.sort(key=lambda r: (-r.replicas, r.creation_ms, r.name))
        operation = "up" if to_add > 0 else "down" if to_add < 0 else ""
        added = 0
        sizes: list[int] = []
        for rs in active:
            if to_add != 0:
                proportion = self._proportion(rs, d, to_add, added)
                sizes.append(rs.replicas + proportion)
                added += proportion
            else:
                sizes.append(rs.replicas)
        if to_add != 0:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftovers to the largest
        for rs, size in zip(active, sizes):
            self._scale_rs(rs, size, d, now, operation or "up")

    def _proportion(self, rs: Workload, d: Workload, to_add: int, added: int) -> int:
        """Port of deploymentutil.GetProportion and getReplicaSetFraction."""
        if rs.replicas == 0 or to_add == 0 or to_add == added:
            return 0
        if d.replicas == 0:
            fraction = -rs.replicas
        else:
            deployment_replicas = d.replicas + self._max_surge(d)
            annotated = rs.max_annotation if rs.max_annotation else d.status_replicas
            if not annotated:
                return 0
            fraction = (
                int(_round_half_away(rs.replicas * deployment_replicas / annotated)) - rs.replicas
            )
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def _rollout_rolling(self, d: Workload, rs_list: list[Workload], now: int) -> None:
        """Port of rolloutRolling: scale the new ReplicaSet up within maxSurge, else the old
        ones down within maxUnavailable."""
        new_rs, old_rss = self._get_new_rs(d, rs_list, True, now)
        assert new_rs is not None
        all_rss = [*old_rss, new_rs]
        # reconcileNewReplicaSet
        if new_rs.replicas != d.replicas:
            if new_rs.replicas > d.replicas:
                target = d.replicas
            else:
                target = self._new_rs_new_replicas(d, all_rss, new_rs)
            if self._scale_rs(new_rs, target, d, now):
                return
        # reconcileOldReplicaSets
        old_count = sum(rs.replicas for rs in old_rss)
        if old_count == 0:
            return
        all_count = sum(rs.replicas for rs in all_rss)
        min_available = d.replicas - self._max_unavailable(d)
        new_unavailable = new_rs.replicas - new_rs.available_replicas
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        cleaned = 0  # cleanupUnhealthyReplicas
        for rs in old_rss:
            if cleaned >= max_scaled_down:
                break
            if rs.replicas == 0 or rs.replicas == rs.available_replicas:
                continue
            down = min(max_scaled_down - cleaned, rs.replicas - rs.available_replicas)
            self._scale_rs(rs, rs.replicas - down, d, now)
            cleaned += down
        # scaleDownOldReplicaSetsForRollingUpdate
        available = sum(rs.available_replicas for rs in all_rss)
        if available <= min_available:
            return
        total_down = available - min_available
        scaled = 0
        for rs in old_rss:
            if scaled >= total_down:
                break
            if rs.replicas == 0:
                continue
            down = min(rs.replicas, total_down - scaled)
            self._scale_rs(rs, rs.replicas - down, d, now)
            scaled += down

    def _rollout_recreate(self, d: Workload, rs_list: list[Workload], now: int) -> None:
        """Port of rolloutRecreate: old ReplicaSets to 0, wait until none of their pods runs
        (Terminating ones included), then the new ReplicaSet to full size."""
        new_rs, old_rss = self._get_new_rs(d, rs_list, False, now)
        scaled_down = False
        for rs in old_rss:
            if rs.replicas > 0:
                scaled_down |= self._scale_rs(rs, 0, d, now)
        if scaled_down:
            return
        if sum(rs.status_replicas for rs in old_rss) > 0:
            return  # oldPodsRunning
        for rs in old_rss:
            for p in self.owned.get(rs.key, {}).values():
                if p.phase not in ("Failed", "Succeeded"):
                    return
        if new_rs is None:
            new_rs, old_rss = self._get_new_rs(d, rs_list, True, now)
        assert new_rs is not None
        if new_rs.replicas != d.replicas:
            self._scale_rs(new_rs, d.replicas, d, now)

    # -- StatefulSet -------------------------------------------------------------------------------
    def sync_stateful_set(self, ss: Workload, now: int) -> None:
        """Port of defaultStatefulSetControl.updateStatefulSet: ordinals 0..replicas-1 created
        in order (OrderedReady: each waits for its predecessors to be Running and Ready); a
        pod whose object still exists, Terminating or not, holds its ordinal; condemned pods
        go highest ordinal first."""
        pods = list(self.owned.get(ss.key, {}).values())
        ss.status_replicas = len(pods)
        ss.ready_replicas = sum(1 for p in pods if is_running_and_ready(p))
        replicas: list[Pod | None] = [None] * ss.replicas
        condemned: list[Pod] = []
        for p in pods:
            ordinal = stateful_ordinal(ss.name, p.name)
            if 0 <= ordinal < ss.replicas:
                replicas[ordinal] = p
            elif ordinal >= ss.replicas:
                condemned.append(p)
        condemned.sort(key=lambda p: stateful_ordinal(ss.name, p.name))
        first_unhealthy: Pod | None = None  # a missing replica is unhealthy but is no pod
        for p in [*replicas, *condemned]:
            if p is None or not self._healthy(p):
                first_unhealthy = p
                break
        monotonic = ss.policy != PARALLEL
        for ordinal, pod in enumerate(replicas):
            if pod is not None and pod.phase == "Failed" and pod.deletion_ms is None:
                self._event(
                    now,
                    ss,
                    "RecreatingFailedPod",
                    f"StatefulSet {ss.namespace}/{ss.name} is recreating failed Pod {pod.name}",
                    "Warning",
                )
                self._delete_pod(
                    ss,
                    pod,
                    now,
                    "RecreatingFailedPod",
                    f"delete Pod {pod.name} in StatefulSet {ss.name} successful",
                )
                pod = None if self.sim.cluster.pods.get(pod.key) is not pod else pod
                if pod is not None:
                    self._event(
                        now,
                        ss,
                        "FailedCreate",
                        f"create Pod {pod.name} in StatefulSet {ss.name} failed error: "
                        f'pods "{pod.name}" already exists',
                        "Warning",
                    )
                    return
            if pod is None:
                name = f"{ss.name}-{ordinal}"
                labels = {
                    STATEFULSET_POD_NAME: name,
                    CONTROLLER_REVISION_HASH: f"{ss.name}-{compute_hash(ss.template)}",
                }
                self._create_pod(
                    ss,
                    self._new_pod(ss, name, now, labels),
                    now,
                    f"create Pod {name} in StatefulSet {ss.name} successful",
                )
                if monotonic:
                    return
                continue
            if pod.deletion_ms is not None and monotonic:
                return  # wait for the graceful deletion to complete
            if not is_running_and_ready(pod) and monotonic:
                return
        for pod in reversed(condemned):
            if pod.deletion_ms is not None:
                if monotonic:
                    return
                continue
            if not is_running_and_ready(pod) and monotonic and pod is not first_unhealthy:
                return
            self._delete_pod(
                ss,
                pod,
                now,
                "ScaleDown",
                f"delete Pod {pod.name} in StatefulSet {ss.name} successful",
            )
            if monotonic:
                return

    @staticmethod
    def _healthy(pod: Pod) -> bool:
        """Port of statefulset isHealthy."""
        return is_running_and_ready(pod) and pod.deletion_ms is None

    # -- DaemonSet ---------------------------------------------------------------------------------
    def _index_daemon_pod(self, ds_key: str, pod: Pod, alive: bool) -> None:
        node = self.ds_target.get(pod.key) or pod.node_name
        if alive:
            self.ds_target.setdefault(pod.key, node)
            self.ds_pods.setdefault(ds_key, {}).setdefault(node, {})[pod.key] = pod
        else:
            on_node = self.ds_pods.get(ds_key, {}).get(node, {})
            if on_node.get(pod.key) is pod:
                del on_node[pod.key]

    def sync_daemon_set(self, ds: Workload, now: int) -> None:
        """Port of DaemonSetsController.manage (podsShouldBeOnNode for each node that changed,
        creations before deletions) and updateDaemonSetStatus."""
        proto = self._pod_template(ds)
        nodes = sorted(self.sim.cluster.nodes) if ds.dirty_nodes is None else sorted(ds.dirty_nodes)
        if ds.dirty_nodes is None:
            nodes = sorted(set(nodes) | set(self.ds_pods.get(ds.key, {})))
        ds.dirty_nodes = set()
        by_node = self.ds_pods.get(ds.key, {})
        to_create: list[str] = []
        to_delete: list[tuple[Pod, str]] = []
        for name in nodes:
            node = self.sim.cluster.nodes.get(name)
            pods = sorted(
                by_node.get(name, {}).values(),
                key=lambda p: (0 if p.node_name else 1, p.creation_ms, p.name),
            )
            if node is None:
                ds.should_run.discard(name)
                ds.ready_nodes.discard(name)
                # getUnscheduledPodsWithoutNode: pinned to a node that is gone
                to_delete.extend(
                    (p, "NodeGone") for p in pods if not p.node_name and p.deletion_ms is None
                )
                continue
            should_run, should_continue = node_should_run_daemon_pod(proto, node)
            if should_run and not pods:
                to_create.append(name)
            elif should_continue:
                running = []
                for p in pods:
                    if p.deletion_ms is not None:
                        continue
                    if p.phase == "Failed":
                        if self._in_backoff(ds, name, now):
                            continue
                        self._event(
                            now,
                            ds,
                            "FailedDaemonPod",
                            f"Found failed daemon pod {p.key} on node {name}, will try to kill it",
                            "Warning",
                        )
                        to_delete.append((p, "FailedDaemonPod"))
                    else:
                        running.append(p)
                to_delete.extend((p, "ExcessDaemonPod") for p in running[1:])
            elif pods:
                to_delete.extend((p, "NodeNotEligible") for p in pods if p.deletion_ms is None)
            if should_run:
                ds.should_run.add(name)
                if pods and is_pod_ready(pods[0]):
                    ds.ready_nodes.add(name)
                else:
                    ds.ready_nodes.discard(name)
            else:
                ds.should_run.discard(name)
                ds.ready_nodes.discard(name)
        for i, name in enumerate(to_create):
            if i >= DS_BURST_REPLICAS:
                self._mark_ds_node(ds, name)
                self._mark(ds.key, now)
                continue
            pod_name = self._generate_name(ds)
            labels = {
                CONTROLLER_REVISION_HASH: compute_hash(ds.template),
                "pod-template-generation": "1",
            }
            pod = self._new_pod(ds, pod_name, now, labels)
            self.ds_target[pod.key] = name
            self.sim.kube_scheduler.set_node_affinity(pod.key, name)
            self._create_pod(ds, pod, now, f"Created pod: {pod_name}")
        for pod, reason in to_delete:
            self._delete_pod(ds, pod, now, reason, f"Deleted pod: {pod.name}")

    def _in_backoff(self, ds: Workload, node: str, now: int) -> bool:
        """failedPodsBackoff (flowcontrol.Backoff, 1 s doubling to 15 min): True while the
        node's last failed-pod deletion is recent; else record this one."""
        entry = ds.backoff.get(node)
        expired = entry is None or now - entry[1] > 2 * DS_BACKOFF_MAX_MS
        if not expired and entry is not None and now - entry[1] < entry[0]:
            self.sim.sched.schedule(
                now + entry[0], Phase.WORKLOADS, self._mark_ds_node_later, ds.key, node
            )
            return True
        delay = (
            DS_BACKOFF_INITIAL_MS
            if expired or entry is None
            else min(entry[0] * 2, DS_BACKOFF_MAX_MS)
        )
        ds.backoff[node] = (delay, now)
        return False

    # -- availability metrics ----------------------------------------------------------------------
    def _count_pod(self, key: str, cls: str | None) -> None:
        prev = self._pod_class.get(key)
        if prev == cls:
            return
        if prev is not None:
            self.pod_counts[prev] -= 1
        if cls is None:
            self._pod_class.pop(key, None)
        else:
            self._pod_class[key] = cls
            self.pod_counts[cls] = self.pod_counts.get(cls, 0) + 1

    def _count_node(self, name: str, node: Node | None) -> None:
        prev = self._node_class.get(name)
        now_cls = (
            (zone_display(node.zone_key), node_metrics_class(node)) if node is not None else None
        )
        if prev == now_cls:
            return
        if prev is not None:
            self.zone_counts[prev[0]][prev[1]] -= 1
        if now_cls is None:
            self._node_class.pop(name, None)
        else:
            self._node_class[name] = now_cls
            zone = self.zone_counts.setdefault(now_cls[0], dict.fromkeys(NODE_STATES, 0))
            zone[now_cls[1]] += 1

    def metrics(self) -> dict[str, tuple[int, int]]:
        """Per workload ``Kind/namespace/name``: (desired, ready) replicas. A Deployment's
        ReplicaSets are counted in the Deployment; a DaemonSet's desired count is the number
        of nodes that should run its pod."""
        return {
            key: w.desired_and_ready()
            for key, w in sorted(self.workloads.items())
            if not (w.kind == "ReplicaSet" and w.owner is not None)
        }

    def cluster_metrics(self) -> dict[str, Any]:
        """Pods by phase (Terminating apart) and, per zone, nodes by Ready status."""
        return {
            "pods": dict(self.pod_counts),
            "zones": {z: dict(c) for z, c in sorted(self.zone_counts.items()) if any(c.values())},
        }

    def on_node_status(self, node: Node, now: int) -> None:
        """A node's status changed (its Ready condition moves it between Ready, NotReady and
        Unknown): count it, and sample the cluster series at once."""
        before = self._node_class.get(node.name)
        self._count_node(node.name, node)
        if self._node_class.get(node.name) != before:
            self._sample_cluster(now)

    def _sample(self, now: int) -> None:
        """Append to the series only what changed; several samples in one instant keep the
        last (memory grows with changes, not with time)."""
        for key, value in self.metrics().items():
            append_change(self.workload_series.setdefault(key, []), now, value)
        self._sample_cluster(now)

    def _sample_cluster(self, now: int) -> None:
        pods = tuple(self.pod_counts[p] for p in POD_PHASES)
        zones = tuple(
            (z, *(c[s] for s in NODE_STATES))
            for z, c in sorted(self.zone_counts.items())
            if any(c.values())
        )
        append_change(self.cluster_series, now, (pods, zones))

    def series(self) -> dict[str, Any]:
        """The time series, JSON-friendly: ``t`` in ms."""
        return {
            "workloads": {
                key: [{"t": t, "desired": d, "ready": r} for t, d, r in points]
                for key, points in sorted(self.workload_series.items())
            },
            "cluster": [
                {
                    "t": t,
                    "pods": dict(zip(POD_PHASES, pods)),
                    "zones": {z[0]: dict(zip(NODE_STATES, z[1:])) for z in zones},
                }
                for t, pods, zones in self.cluster_series
            ],
        }


def _round_half_away(x: float) -> float:
    """integer.RoundToInt32: math.Round, halves away from zero."""
    return float(int(x + 0.5)) if x >= 0 else -float(int(-x + 0.5))


def node_should_run_daemon_pod(pod: Pod, node: Node) -> tuple[bool, bool]:
    """Port of nodeShouldRunDaemonPod (Predicates: nodeName, nodeSelector, NoSchedule and
    NoExecute taints): (should run, should continue running if already there)."""
    if pod.node_name and pod.node_name != node.name:
        return False, False
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False, False
    untolerated = [
        t
        for t in node.taints
        if (t.effect == NO_SCHEDULE or t.effect == NO_EXECUTE)
        and not any(tol.tolerates(t) for tol in pod.tolerations)
    ]
    if untolerated:
        return False, not any(t.effect == NO_EXECUTE for t in untolerated)
    return True, True


def count_cluster(sim: Simulation) -> dict[str, Any]:
    """``cluster_metrics`` computed from scratch (O(pods + nodes)): for checks and snapshots."""
    pods = dict.fromkeys(POD_PHASES, 0)
    for pod in sim.cluster.pods.values():
        cls = pod_metrics_class(pod)
        pods[cls] = pods.get(cls, 0) + 1
    zones: dict[str, dict[str, int]] = {}
    for node in sim.sorted_nodes():
        zone = zones.setdefault(zone_display(node.zone_key), dict.fromkeys(NODE_STATES, 0))
        zone[node_metrics_class(node)] += 1
    return {"pods": pods, "zones": dict(sorted(zones.items()))}
