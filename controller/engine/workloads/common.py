"""Shared pieces of the workload controllers: generated names and hashes (the API server's
and the controllers'), pod predicates (podutil), intstr and fencepost arithmetic, the
constants they share."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields
from typing import Any

from ..objects import FALSE, TRUE, Node, Pod

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


def round_half_away(x: float) -> float:
    """integer.RoundToInt32: math.Round, halves away from zero."""
    return float(int(x + 0.5)) if x >= 0 else -float(int(-x + 0.5))
