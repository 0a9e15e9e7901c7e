"""Admission plugins that shape pods and nodes on creation.

- DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds/admission.go)
- TaintNodesByCondition for Nodes (plugin/pkg/admission/nodetaint/admission.go)
- the DaemonSet controller's default tolerations
  (pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations)
"""

from __future__ import annotations

from .config import ApiServerConfig
from .objects import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    Node,
    Pod,
    Taint,
    Toleration,
)

DEFAULT_TOLERATION_SECONDS = "DefaultTolerationSeconds"
TAINT_NODES_BY_CONDITION = "TaintNodesByCondition"


def _tolerates_key(tolerations: list[Toleration], key: str) -> bool:
    """The plugin's test: a toleration whose key is ``key`` or empty and whose effect is
    NoExecute or empty."""
    for t in tolerations:
        if (t.key == key or t.key == "") and (t.effect == NO_EXECUTE or t.effect == ""):
            return True
    return False


# The plugin's tolerations, one object per (key, seconds): 30,000 pods share two objects
# instead of holding 60,000 (a snapshot pickles each shared one once). Toleration is frozen.
_DEFAULT_TOLERATIONS: dict[tuple[str, int | None], Toleration] = {}


def _default_toleration(key: str, seconds: int | None) -> Toleration:
    tol = _DEFAULT_TOLERATIONS.get((key, seconds))
    if tol is None:
        tol = _DEFAULT_TOLERATIONS[(key, seconds)] = Toleration(
            key, "Exists", "", NO_EXECUTE, seconds
        )
    return tol


def default_toleration_seconds(pod: Pod, cfg: ApiServerConfig) -> None:
    """Port of defaulttolerationseconds.Plugin.Admit: add not-ready and unreachable
    NoExecute tolerations for the configured seconds unless the pod already has them. The
    pod's list is replaced, not added to (it may be its workload template's: Pod)."""
    if DEFAULT_TOLERATION_SECONDS in cfg.disable_admission_plugins:
        return
    tolerations = pod.tolerations
    if not tolerations:  # (tolerates neither: both added)
        pod.tolerations = [
            _default_toleration(TAINT_NOT_READY, cfg.default_not_ready_toleration_seconds),
            _default_toleration(TAINT_UNREACHABLE, cfg.default_unreachable_toleration_seconds),
        ]
        return
    added = []
    if not _tolerates_key(tolerations, TAINT_NOT_READY):
        added.append(_default_toleration(TAINT_NOT_READY, cfg.default_not_ready_toleration_seconds))
    # (the not-ready toleration added above has a key, not unreachable's: it cannot count)
    if not _tolerates_key(tolerations, TAINT_UNREACHABLE):
        added.append(
            _default_toleration(TAINT_UNREACHABLE, cfg.default_unreachable_toleration_seconds)
        )
    if added:
        pod.tolerations = [*tolerations, *added]


def taint_node_on_create(node: Node, cfg: ApiServerConfig, now_ms: int) -> None:
    """Port of nodetaint.Plugin.Admit: every new Node starts with not-ready:NoSchedule."""
    if TAINT_NODES_BY_CONDITION in cfg.disable_admission_plugins:
        return
    if not node.has_taint(TAINT_NOT_READY, NO_SCHEDULE):
        node.taints.append(Taint(TAINT_NOT_READY, NO_SCHEDULE, "", now_ms))


def add_or_update_daemon_pod_tolerations(pod: Pod) -> None:
    """Port of daemonset util AddOrUpdateDaemonPodTolerations (tolerate forever)."""
    wanted = [
        Toleration(TAINT_NOT_READY, "Exists", "", NO_EXECUTE),
        Toleration(TAINT_UNREACHABLE, "Exists", "", NO_EXECUTE),
        Toleration(TAINT_DISK_PRESSURE, "Exists", "", NO_SCHEDULE),
        Toleration(TAINT_MEMORY_PRESSURE, "Exists", "", NO_SCHEDULE),
        Toleration(TAINT_PID_PRESSURE, "Exists", "", NO_SCHEDULE),
        Toleration(TAINT_UNSCHEDULABLE, "Exists", "", NO_SCHEDULE),
    ]
    if pod.host_network:
        wanted.append(Toleration(TAINT_NETWORK_UNAVAILABLE, "Exists", "", NO_SCHEDULE))
    tolerations = list(pod.tolerations)  # the pod's list is replaced, not written in place
    for tol in wanted:
        # v1helper.AddOrUpdateTolerationInPodSpec: replace a toleration with the same
        # key/operator/value/effect, else append.
        for i, existing in enumerate(tolerations):
            if (existing.key, existing.operator, existing.value, existing.effect) == (
                tol.key,
                tol.operator,
                tol.value,
                tol.effect,
            ):
                tolerations[i] = tol
                break
        else:
            tolerations.append(tol)
    pod.tolerations = tolerations
