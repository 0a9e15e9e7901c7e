"""Workload controllers: Deployment -> ReplicaSet -> Pods, DaemonSet, StatefulSet.

Enough of pkg/controller/{deployment,replicaset,daemon,statefulset} to show evicted pods
coming back: each controller reconciles at the WORKLOADS phase of an instant at which one
of its pods or (for DaemonSets) a node changed. Names are generated as Kubernetes does
(``<rs>-<5 chars>`` from its safe alphabet), but from a hash, so runs are reproducible.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .admission import add_or_update_daemon_pod_tolerations
from .core import Phase
from .manifests import pod_from_manifest
from .objects import NO_EXECUTE, NO_SCHEDULE, OwnerRef, Pod, tolerations_tolerate_taint
from .scenario import ScenarioError

if TYPE_CHECKING:
    from .simulation import Simulation

HOSTNAME = "kubernetes.io/hostname"
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand alphanums


def safe_suffix(seed: str, n: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:n])


def pod_template_hash(template: dict[str, Any]) -> str:
    """Stands in for ComputeHash(template): stable for the same template."""
    return safe_suffix(json.dumps(template, sort_keys=True), 10)


def is_pod_active(pod: Pod) -> bool:
    """Port of controller.IsPodActive: not terminal and not being deleted."""
    return pod.phase not in ("Succeeded", "Failed") and pod.deletion_ms is None


def selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@dataclass(slots=True)
class Workload:
    kind: str
    namespace: str
    name: str
    uid: str
    replicas: int
    template: dict[str, Any]
    selector: dict[str, str]
    owner: OwnerRef | None = None
    created: int = 0  # pods created so far (name generation)
    children: list[str] = field(default_factory=list)  # a Deployment's ReplicaSets

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


class WorkloadControllers:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.workloads: dict[str, Workload] = {}
        self.dirty: set[str] = set()
        self._at: int | None = None
        self.series: list[tuple[int, dict[str, list[int]]]] = []  # (t, {ref: [desired, ready]})

    # -- API ------------------------------------------------------------------------------
    def apply(self, manifest: dict[str, Any], now: int) -> None:
        meta = manifest["metadata"]
        spec = manifest.get("spec") or {}
        ns = meta.get("namespace", "default")
        kind = manifest["kind"]
        key = f"{kind}/{ns}/{meta['name']}"
        template = copy.deepcopy(spec.get("template") or {})
        selector = dict((spec.get("selector") or {}).get("matchLabels") or {})
        if not selector:
            selector = dict((template.get("metadata") or {}).get("labels") or {})
        replicas = int(spec.get("replicas", 1)) if kind != "DaemonSet" else 0
        existing = self.workloads.get(key)
        if existing is not None:
            existing.replicas, existing.template, existing.selector = replicas, template, selector
        else:
            self.workloads[key] = Workload(kind, ns, meta["name"], self.sim.cluster.new_uid(kind), replicas, template, selector)
        self._mark(key, now)

    def scale(self, ref: str, replicas: int, now: int) -> None:
        parts = ref.split("/")
        kind, name = parts[0], parts[-1]
        ns = parts[1] if len(parts) == 3 else "default"
        key = f"{kind}/{ns}/{name}"
        w = self.workloads.get(key)
        if w is None or kind == "DaemonSet":
            raise ScenarioError("workload", f'unknown workload "{ref}"')
        w.replicas = replicas
        self._mark(key, now)

    def daemonset_selects(self, pod: Pod) -> bool:
        for w in self.workloads.values():
            if w.kind == "DaemonSet" and w.namespace == pod.namespace and w.selector and selector_matches(w.selector, pod.labels):
                return True
        return False

    def on_pod_changed(self, pod: Pod, now: int) -> None:
        if pod.owner is None or pod.owner.kind not in ("ReplicaSet", "DaemonSet", "StatefulSet"):
            return
        key = f"{pod.owner.kind}/{pod.namespace}/{pod.owner.name}"
        if key in self.workloads:
            self._mark(key, now)

    def on_node_changed(self, name: str, now: int) -> None:
        for key, w in self.workloads.items():
            if w.kind == "DaemonSet":
                self._mark(key, now)

    # -- reconcile ---------------------------------------------------------------------------
    def _mark(self, key: str, now: int) -> None:
        self.dirty.add(key)
        if self._at != now:
            self._at = now
            self.sim.sched.schedule(now, Phase.WORKLOADS, self._reconcile)

    def _reconcile(self) -> None:
        now = self.sim.sched.now_ms
        self._at = None
        while self.dirty:
            key = min(self.dirty, key=lambda k: (0 if k.startswith("Deployment/") else 1, k))
            self.dirty.discard(key)
            w = self.workloads.get(key)
            if w is None:
                continue
            {"Deployment": self.sync_deployment, "ReplicaSet": self.sync_replica_set,
             "DaemonSet": self.sync_daemon_set, "StatefulSet": self.sync_stateful_set}[w.kind](w, now)
        self._sample(now)

    def _owned(self, w: Workload) -> list[Pod]:
        return [
            p for p in self.sim.cluster.pods.values()
            if p.owner is not None and p.owner.kind == w.kind and p.owner.name == w.name and p.namespace == w.namespace
        ]

    def _new_pod(self, w: Workload, name: str, now: int, node_name: str = "") -> Pod:
        manifest = {"kind": "Pod", "metadata": {**(w.template.get("metadata") or {}), "name": name, "namespace": w.namespace},
                    "spec": {**(w.template.get("spec") or {})}}
        if node_name:
            manifest["spec"]["nodeName"] = node_name
        return pod_from_manifest(manifest, w.key, now, self.sim.cluster.new_uid("pod"), owner=OwnerRef(w.kind, w.name, w.uid, True))

    def sync_deployment(self, w: Workload, now: int) -> None:
        """A Deployment keeps one ReplicaSet per template (no rolling update here)."""
        rs_name = f"{w.name}-{pod_template_hash(w.template)}"
        key = f"ReplicaSet/{w.namespace}/{rs_name}"
        rs = self.workloads.get(key)
        if rs is None:
            rs = Workload("ReplicaSet", w.namespace, rs_name, self.sim.cluster.new_uid("rs"), w.replicas, w.template, w.selector,
                          owner=OwnerRef("Deployment", w.name, w.uid))
            self.workloads[key] = rs
            w.children.append(key)
            self._event(now, w, "ScalingReplicaSet", f"Scaled up replica set {rs_name} to {w.replicas}")
        elif rs.replicas != w.replicas:
            verb = "up" if w.replicas > rs.replicas else "down"
            rs.replicas = w.replicas
            self._event(now, w, "ScalingReplicaSet", f"Scaled {verb} replica set {rs_name} to {w.replicas}")
        self.sync_replica_set(rs, now)

    def sync_replica_set(self, w: Workload, now: int) -> None:
        """Port of ReplicaSetController.manageReplicas (active pods vs replicas)."""
        active = [p for p in self._owned(w) if is_pod_active(p)]
        diff = w.replicas - len(active)
        for _ in range(max(0, diff)):
            while True:
                w.created += 1
                name = f"{w.name}-{safe_suffix(f'{w.uid}/{w.created}', 5)}"
                if f"{w.namespace}/{name}" not in self.sim.cluster.pods:
                    break
            pod = self._new_pod(w, name, now)
            self._event(now, w, "SuccessfulCreate", f"Created pod: {name}")
            self.sim.create_pod(pod, now)
        if diff < 0:
            # getPodsToDelete: unscheduled, then pending, then not ready, then newest first.
            ranked = sorted(active, key=lambda p: (bool(p.node_name), p.phase != "Pending", bool(p.ready), -p.creation_ms, p.key))
            for pod in ranked[: -diff]:
                self._event(now, w, "SuccessfulDelete", f"Deleted pod: {pod.name}")
                self.sim.cluster.delete_pod(pod, now, w.ref, "ScaleDown")

    def sync_daemon_set(self, w: Workload, now: int) -> None:
        """One pod per eligible node (nodeShouldRunDaemonPod: selector and taints)."""
        owned = self._owned(w)
        by_node: dict[str, list[Pod]] = {}
        for p in owned:
            by_node.setdefault(p.node_name or p.node_selector.get(HOSTNAME, ""), []).append(p)
        template_pod = self._new_pod(w, "probe", now)
        add_or_update_daemon_pod_tolerations(template_pod)
        for node in self.sim.sorted_nodes():
            if not selector_matches(template_pod.node_selector, node.labels):
                continue
            if any(t.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerations_tolerate_taint(template_pod.tolerations, t) for t in node.taints):
                continue
            pods = [p for p in by_node.get(node.name, []) if p.deletion_ms is None]
            failed = [p for p in pods if p.phase == "Failed"]
            for p in failed:
                self.sim.cluster.delete_pod(p, now, w.ref, "FailedDaemonPod")
            if any(p.phase != "Failed" for p in pods):
                continue
            w.created += 1
            name = f"{w.name}-{safe_suffix(f'{w.uid}/{w.created}', 5)}"
            # 1.18 (ScheduleDaemonSetPods): the default scheduler binds it, pinned to the node.
            pod = self._new_pod(w, name, now)
            pod.node_selector = {**pod.node_selector, HOSTNAME: node.name}
            add_or_update_daemon_pod_tolerations(pod)
            self._event(now, w, "SuccessfulCreate", f"Created pod: {name}")
            self.sim.create_pod(pod, now)

    def sync_stateful_set(self, w: Workload, now: int) -> None:
        """Ordinal pods; pod N is recreated only once the old pod N object is gone, and
        (OrderedReady) only when every lower ordinal is Running and Ready."""
        pods = {p.name: p for p in self._owned(w)}
        for i in range(w.replicas):
            name = f"{w.name}-{i}"
            pod = pods.get(name)
            if pod is not None:
                if pod.phase == "Failed" and pod.deletion_ms is None:
                    self.sim.cluster.delete_pod(pod, now, w.ref, "FailedStatefulPod")
                if not (pod.phase == "Running" and pod.ready and pod.deletion_ms is None):
                    return  # OrderedReady: wait for this ordinal
                continue
            if f"{w.namespace}/{name}" in self.sim.cluster.pods:
                return
            self._event(now, w, "SuccessfulCreate", f"create Pod {name} in StatefulSet {w.name} successful")
            self.sim.create_pod(self._new_pod(w, name, now), now)
            return
        for name, pod in sorted(pods.items(), reverse=True):
            ordinal = int(name.rsplit("-", 1)[1]) if name.rsplit("-", 1)[1].isdigit() else -1
            if ordinal >= w.replicas and pod.deletion_ms is None:
                self.sim.cluster.delete_pod(pod, now, w.ref, "ScaleDown")
                return

    def _event(self, now: int, w: Workload, reason: str, message: str) -> None:
        self.sim.cluster.record_event(now, f"{w.kind}/{w.namespace}/{w.name}", reason, message)

    # -- availability metrics -------------------------------------------------------------------
    def metrics(self) -> dict[str, list[int]]:
        """Per workload [desired, ready] (Deployments count their ReplicaSets' pods)."""
        out: dict[str, list[int]] = {}
        for key in sorted(self.workloads):
            w = self.workloads[key]
            if w.kind == "ReplicaSet" and w.owner is not None:
                continue
            if w.kind == "Deployment":
                pods = [p for k in w.children for p in self._owned(self.workloads[k])]
            else:
                pods = self._owned(w)
            ready = sum(1 for p in pods if p.ready and is_pod_active(p))
            desired = w.replicas if w.kind != "DaemonSet" else len([p for p in pods if is_pod_active(p)])
            out[w.ref] = [desired, ready]
        return out

    def _sample(self, now: int) -> None:
        m = self.metrics()
        if not self.series or self.series[-1][1] != m:
            if self.series and self.series[-1][0] == now:
                self.series[-1] = (now, m)
            else:
                self.series.append((now, m))
