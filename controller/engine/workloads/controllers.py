"""WorkloadControllers: the four workload controllers (their parts in deployment.py,
replicaset.py, statefulset.py, daemon.py) over one shared pod index, with the informer hooks,
the level-triggered sync loop and the pod writes they share. How they are triggered, how names
are generated and what is left out: the package's docstring (``__init__.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..admission import add_or_update_daemon_pod_tolerations
from ..core import Phase
from ..manifests import pod_from_manifest
from ..objects import OwnerRef, Pod
from ..scenario import ScenarioError
from ..scheduler import node_info_contribution, nonzero_requests
from .clients import COMPONENTS, ControllerProcess, new_processes
from .common import (
    KIND_ORDER,
    MAX_GENERATED_NAME_LENGTH,
    MAX_SYNCS_PER_INSTANT,
    ORDERED_READY,
    POD_PHASES,
    RECREATE,
    RESYNC_DELAY_MS,
    ROLLING_UPDATE,
    compute_hash,
    pod_metrics_class,
    random_suffix,
    selector_matches,
)
from .daemon import DaemonSetsController
from .deployment import DeploymentController
from .metrics import AvailabilityMetrics
from .replicaset import ReplicaSetController
from .statefulset import StatefulSetController
from .workload import Workload, parse_workload

if TYPE_CHECKING:
    from ..simulation import Simulation


class WorkloadControllers(
    ReplicaSetController,
    DeploymentController,
    StatefulSetController,
    DaemonSetsController,
    AvailabilityMetrics,
):
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
        # The ported controllers' clients, sinks and workqueues (clients.py), by kind.
        self.procs: dict[str, ControllerProcess] = new_processes(sim)
        self._burst: list[Any] | None = None  # the shortcuts' burst of creates (pods, tolerations)

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

    def restart(self, now: int) -> None:
        """A kube-controller-manager restart: the ported controllers' processes stop (their
        pending requests and queued events are lost) and new ones, with full buckets and
        empty workqueues, list every object again."""
        for proc in self.procs.values():
            proc.stop()
        self.procs = new_processes(self.sim)
        for key, w in self.workloads.items():
            if w.kind in self.procs:
                if w.kind == "DaemonSet":
                    w.dirty_nodes = None  # every node: the lost creates' too
                self._mark(key, now)

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
        prev = self._pod_class.get(key)
        if prev != cls:
            self._count_pod(key, prev, cls)
        if alive and pod.ready is True:  # is_pod_ready
            self.ready_since.setdefault(key, now)
        elif key in self.ready_since:
            del self.ready_since[key]
        if pod.node_name or not alive:
            # The scheduler's NodeInfo and queue. A pod that exists without a node was never
            # counted on one (nodeName is set once, by the bind, which tells the scheduler
            # itself): pod_changed would find nothing to do; its queue is enqueue's.
            self.sim.kube_scheduler.pod_changed(pod, now)
        owner = pod.owner
        if owner is not None and owner.controller:
            okey = pod.owner_key
            owned = self.owned.get(okey)
            if alive:
                if owned is None:
                    owned = self.owned[okey] = {}
                owned[key] = pod
            elif owned is not None and key in owned:
                del owned[key]
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
        if not self._reconciling and self._scheduled_at != now:
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
        proc = self.procs.get(w.kind)
        if proc is not None and not proc.gate(w.key):
            return
        count = self._syncs.get(w.key, 0) + 1
        self._syncs[w.key] = count
        if count > MAX_SYNCS_PER_INSTANT:
            # A controller and a kubelet fighting (pods created and rejected at once) would
            # loop forever in one instant; the workqueue's rate limiter spaces them out.
            if count == MAX_SYNCS_PER_INSTANT + 1:
                self.sim.sched.schedule(
                    now + RESYNC_DELAY_MS, Phase.WORKLOADS, self._mark_later, w.key
                )
            if proc is not None:
                proc.inflight.discard(w.key)
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
        # passed by position: the order is checked above). The template's labels,
        # annotations, node selector, tolerations, containers and usage are shared, not
        # copied (a pod's are replaced whole, never written in place: Pod).
        pod = Pod(
            t.namespace,
            name,
            self.sim.cluster.new_uid("pod"),
            now,
            {**t.labels, **extra_labels} if extra_labels else t.labels,
            t.annotations,
            t.owner,
            t.node_name,
            t.node_selector,
            t.tolerations,
            t.containers,
            t.init_containers,
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
            t.usage,
            t.unschedulable_reason,
            t.disruption_target,
        )
        # The same containers as the template's: what is derived from them, computed once
        # (kept on the template: read without the calls once it is there).
        pod.request_vec = t.request_vec or t.requests3()
        pod.nodeinfo_vec = t.nodeinfo_vec or node_info_contribution(t)
        pod.nonzero_vec = t.nonzero_vec or nonzero_requests(t)
        pod.qos = t.qos or t.qos_class()
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
        """record.EventRecorder.Event by the workload's controller: through its sink (its
        client's bucket) once its client is ported, else stored at once; either way with its
        own EventSource.Component (and so its own correlator)."""
        obj = f"{w.kind}/{w.namespace}/{w.name}"
        proc = self.procs.get(w.kind)
        if proc is not None:
            proc.record(now, obj, reason, message, etype)
        else:
            self.sim.cluster.record_event(
                now, obj, reason, message, etype, component=COMPONENTS[w.kind]
            )

    def _create_pod(self, w: Workload, pod: Pod, now: int, message: str) -> None:
        """PodControl.CreatePodsWithControllerRef: POST (through admission), then the event."""
        self.sim.create_pod(pod, now)
        self._event(now, w, "SuccessfulCreate", message)

    def _delete_pod(self, w: Workload, pod: Pod, now: int, reason: str, message: str) -> None:
        """PodControl.DeletePod with default options (the pod's own grace period)."""
        if self.sim.cluster.delete_pod(pod, now, w.ref, reason):
            self._event(now, w, "SuccessfulDelete", message)
