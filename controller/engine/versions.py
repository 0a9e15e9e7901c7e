"""Kubernetes version profiles: what a release's kube-controller-manager, kubelet and API
server default to, which configuration fields and faults it knows, and which of its rules the
engine runs. A profile is chosen once per simulation from ``spec.kubernetesVersion``, as a
real cluster fixes its feature gates and defaults when its components start; modules read
``sim.config.profile`` (data and small named functions), never the version string.

The 1.18 profile is the engine as it was before profiles existed (``k8s-behavior.md``). The
current profile follows the newest release read from the Kubernetes source; each of its
differences is listed, with its Go function and the test that checks it, in
``docs/behavior-current.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .clock import SECOND
from .kubelet.eviction.api import DEFAULT_EVICTION_HARD, DEFAULT_EVICTION_HARD_1_30
from .objects import LABEL_EXCLUDE_DISRUPTION


# -- is a node counted in its zone's health? -------------------------------------------------
def excluded_legacy_or_label(
    name: str, labels: dict[str, str], legacy_node_role_behavior: bool, exclusion_gate: bool
) -> bool:
    """Port of isNodeExcludedFromDisruptionChecks (1.18) with legacyIsMasterNode: behind
    LegacyNodeRoleBehavior a node named ``*master`` (or ``*master-xyz``) is not counted;
    behind NodeDisruptionExclusion the node.kubernetes.io/exclude-disruption label."""
    if legacy_node_role_behavior:
        if name.endswith("master"):
            return True
        if len(name) >= 10 and name[: len(name) - 3].endswith("master-"):
            return True
    if exclusion_gate and LABEL_EXCLUDE_DISRUPTION in labels:
        return True
    return False


def excluded_by_label(
    name: str, labels: dict[str, str], legacy_node_role_behavior: bool, exclusion_gate: bool
) -> bool:
    """Port of isNodeExcludedFromDisruptionChecks after LegacyNodeRoleBehavior and
    NodeDisruptionExclusion went GA and were removed: only the
    node.kubernetes.io/exclude-disruption label excludes a node (the gates' values are
    ignored: the fields are refused in such a profile)."""
    return LABEL_EXCLUDE_DISRUPTION in labels


# -- how long the kubelet's kill of an evicted or preempted pod takes --------------------------
MINIMUM_GRACE_PERIOD_S = 2  # kuberuntime minimumGracePeriodInSeconds


def kill_grace_as_given(override_s: int | None, pod_grace_s: int, terminating_grace_s: int) -> int:
    """killPodNow and killContainer (1.18): a gracePeriodOverride (the eviction manager's) is
    used as is (a hard eviction's 0 is a SIGKILL); without one (the critical pod preemption)
    the pod's deletion grace, else its terminationGracePeriodSeconds, at least 2 s."""
    if override_s is not None:
        return override_s
    grace = terminating_grace_s or pod_grace_s
    return max(grace, MINIMUM_GRACE_PERIOD_S)


def calculate_effective_grace_period(
    override_s: int | None, pod_grace_s: int, terminating_grace_s: int
) -> int:
    """Port of calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go, since the pod worker
    rewrite of 1.22): the grace of a pod already terminating (``terminating_grace_s``, 0 if
    not) can only shrink; an override of 0, like none, leaves the pod's
    terminationGracePeriodSeconds; the result is at least 1 s."""
    grace = terminating_grace_s
    if override_s is not None and (grace == 0 or override_s < grace):
        grace = override_s
    if grace == 0:
        grace = pod_grace_s
    return max(grace, 1)


def calculate_effective_grace_period_overridden(
    override_s: int | None, pod_grace_s: int, terminating_grace_s: int
) -> int:
    """Port of calculateEffectiveGracePeriod (pkg/kubelet/pod_workers.go) since #124063 (1.31):
    as ``calculate_effective_grace_period``, but a grace that was given (``overridden``: an
    override, or a deletion's grace, that shrank it) is kept even when it is 0, so an override
    of 0 is a 1 s kill instead of the pod's terminationGracePeriodSeconds."""
    grace = terminating_grace_s
    overridden = False
    if override_s is not None and (grace == 0 or override_s < grace):
        grace = override_s
        overridden = True
    if not overridden and grace == 0:
        grace = pod_grace_s
    return max(grace, 1)


# -- the image garbage collector's FreeDiskSpaceFailed event ------------------------------------
def free_space_failed_wanted_to_free(
    amount: int, freed: int, usage_percent: int, capacity: int
) -> str:
    """realImageGCManager.GarbageCollect (1.18 to 1.25): the error (and FreeDiskSpaceFailed
    event) when image GC freed less than ``amount`` bytes."""
    return (
        "failed to garbage collect required amount of images. "
        f"Wanted to free {amount} bytes, but freed {freed} bytes"
    )


def free_space_failed_attempted_to_free(
    amount: int, freed: int, usage_percent: int, capacity: int
) -> str:
    """realImageGCManager.GarbageCollect (pkg/kubelet/images/image_gc_manager.go) from #112631
    (1.26) to 1.34: ``fmt.Errorf("Failed to garbage collect required amount of images.
    Attempted to free %d bytes, but only found %d bytes eligible to free.", amountToFree,
    freed)``, the FreeDiskSpaceFailed event's message and the error ImageGCFailed repeats."""
    return (
        "Failed to garbage collect required amount of images. "
        f"Attempted to free {amount} bytes, but only found {freed} bytes eligible to free."
    )


def format_size(size: int) -> str:
    """formatSize (pkg/kubelet/images/image_gc_manager.go, 1.35): one decimal in the largest
    binary unit (KiB, MiB, GiB, TiB) the size reaches, bytes below 1 KiB. The function's source
    is not stored here; the GiB form (``26.4 GiB``, ``114.7 GiB``) is what 1.35 kubelets print,
    the other units are the same rule carried over."""
    units = ("KiB", "MiB", "GiB", "TiB")
    if size < 1024:
        return f"{size} B"
    value, unit = float(size), "B"
    for u in units:
        if value < 1024:
            break
        value, unit = value / 1024, u
    return f"{value:.1f} {unit}"


def free_space_failed_insufficient_disk(
    amount: int, freed: int, usage_percent: int, capacity: int
) -> str:
    """realImageGCManager.GarbageCollect since #132578 (1.35): the reworded FreeDiskSpaceFailed
    message (and the error ImageGCFailed repeats): the usage before GC and the capacity."""
    return (
        "Insufficient free disk space on the node's image filesystem "
        f"({usage_percent}% of {format_size(capacity)} used). "
        f"Failed to free sufficient space by deleting unused images (freed {freed} bytes). "
        "Investigate disk usage, as it could be used by active images, logs, volumes, or other "
        "data."
    )


@dataclass(frozen=True, slots=True)
class Profile:
    """One supported Kubernetes minor release (and those that simulate identically)."""

    version: str  # canonical minor release, "1.18"
    same_as: tuple[str, ...]  # other minor releases that behave the same for all simulated
    # Defaults, as attribute -> value of ControllerManagerConfig / KubeletConfig (the release's
    # RecommendedDefault*Configuration, kube-controller-manager options, kubelet v1beta1 defaults).
    controller_manager_defaults: Mapping[str, Any]
    kubelet_defaults: Mapping[str, Any]
    # Scenario fields this release does not have, by path below spec ("controllerManager.
    # enableTaintManager"): why, naming the release that removed (or added) it.
    fields_refused: Mapping[str, str]
    # Fault types this release cannot show, and why.
    faults_refused: Mapping[str, str]
    # -- rules chosen once per simulation (each named after the Kubernetes change) --------
    node_excluded_from_disruption: Callable[[str, dict[str, str], bool, bool], bool]
    # The NoExecute taint manager runs as its own controller (taint-eviction-controller,
    # SeparateTaintEvictionController, 1.29+), not inside the NodeLifecycleController.
    separate_taint_eviction_controller: bool = False
    # Pods deleted or evicted for a disruption get a DisruptionTarget condition
    # (PodDisruptionConditions, beta on by default 1.26, GA 1.31).
    pod_disruption_conditions: bool = False
    # PodGC force-deletes the terminating pods of a NotReady node tainted
    # node.kubernetes.io/out-of-service (NodeOutOfServiceVolumeDetach, GA 1.28).
    pod_gc_out_of_service: bool = False
    # PodGC patches a pod it force-deletes to phase Failed first (orphans also with the
    # DisruptionTarget condition DeletionByPodGC): markFailedAndDeletePodWithCondition, 1.26+
    # (behind PodDisruptionConditions until 1.28, then always); 1.18's deletePod only deletes.
    pod_gc_marks_failed: bool = False
    # StatefulSet Parallel pod management: slowStartBatch goroutines (1.28+, #117865).
    statefulset_parallel_slow_start: bool = False
    # The kubelet's node shutdown manager (GracefulNodeShutdown, beta 1.21).
    graceful_node_shutdown: bool = False
    # Who deletes a pod for a NoExecute taint (PodDeleted ``by``): the NoExecuteTaintManager
    # inside the NodeLifecycleController (event source "taint-controller"), or the
    # taint-eviction-controller, tainteviction.Controller (SeparateTaintEvictionController,
    # beta and on by default 1.29, GA 1.34; event source "taint-eviction-controller").
    taint_eviction_deleter: str = "TaintManager"
    # Once a pod's deletion has run, the TimedWorkerQueue forgets the pod (getWrappedWorkerFunc
    # deletes its key, #129577, 1.33), so a later NoExecute-taint change on its node schedules
    # the deletion again; before, the key stayed (a nil worker) and refused every re-add.
    taint_eviction_forgets_fired_work: bool = False
    # nodeutil.MarkPodsNotReady records a Warning event NodeNotReady "Node is not ready" on
    # every pod whose Ready condition it sets to False (not in 1.18; in 1.32 to 1.34).
    mark_pods_not_ready_event: bool = False
    # monitorNodeHealth visits the nodes one after another (1.18's ``for i := range nodes``)
    # or with workqueue.ParallelizeUntil(ctx, nc.nodeUpdateWorkerSize = 8, ...) (later).
    monitor_node_health_workers: int = 1
    # 1.18's nodeutil.MarkAllPodsNotReady lists the node's pods through the API (one request
    # of the node-controller's client); later releases' MarkPodsNotReady takes them from the
    # pod informer's index (getPodsAssignedToNode).
    mark_pods_not_ready_lists_pods: bool = True
    # markNodeForTainting(node, status) first Removes the node from its zone's queue (and
    # set) when the node does not carry that status's NoExecute taint yet, then Adds it: a
    # node whose taint was taken off while it stays not ready is tainted again (not in 1.18).
    mark_node_for_tainting_requeues: bool = False
    # Kubelet.rejectPod: the status message of a pod the kubelet did not admit is this prefix
    # and the admit handler's message ("Pod " in 1.18, "Pod was rejected: " in 1.34).
    reject_pod_message_prefix: str = "Pod "
    # -- the kubelet's eviction manager (pkg/kubelet/eviction) --------------------------------
    # The gracePeriodOverride of a hard-threshold or local-storage eviction: 0 in 1.18;
    # immediateEvictionGracePeriodSeconds = 1 since #124063 (1.31).
    eviction_immediate_grace_period_s: int = 0
    # How the pod worker turns that override into the kill's grace period (killPodNow 1.18,
    # calculateEffectiveGracePeriod since 1.22: an override of 0 means the pod's own grace).
    kill_grace_period: Callable[[int | None, int, int], int] = kill_grace_as_given
    # The status manager holds a kill's terminal phase (Failed) and its DisruptionTarget
    # condition back until the pod's containers have stopped (mergePodStatus with
    # couldHaveRunningContainers, 1.27+); 1.18 writes the Failed status before the kill.
    terminal_status_after_containers_stop: bool = False
    # Once a pod's containers have stopped, the kubelet computes its status with
    # podIsTerminal (SyncTerminatingPod -> generateAPIPodStatus -> getPhase): Succeeded when
    # every container exited 0, else Failed; a deleted pod gets that phase PATCHed before the
    # status manager deletes it (canBeDeleted waits for a terminal phase), and a kill's
    # status (an eviction's, a shutdown's) becomes Succeeded, its reason dropped, when the
    # containers exited 0 (#115331, 1.27). 1.18 deletes a deleted pod without a phase write,
    # and a kill's status is always Failed.
    terminal_phase_from_exit_codes: bool = False
    # evictionMessage: "Threshold quantity: <q>, available: <a>. " after the first sentence
    # (thresholdMetMessageFmt, getThresholdMetInfo), and the container sentence's wording
    # (containerMessageFmt, changed by #111597 in 1.26).
    eviction_message_threshold_met: bool = False
    eviction_container_message_fmt: str = (
        "Container {0} was using {1}, which exceeds its request of {2}. "
    )
    # rankPIDPressure: orderedBy(priority) in 1.18; orderedBy(priority, process) later (the
    # pod with more processes first among equal priorities).
    pid_rank_by_process_count: bool = False
    # reclaimNodeLevelResources: after the garbage collections, a threshold still met counts
    # its minimum reclaim (thresholdsMet(..., enforceMinReclaim=true), by ~1.21); 1.18 checks
    # the bare thresholds (false), so it stops at the threshold itself.
    reclaim_enforces_min_reclaim: bool = False
    # A soft eviction's gracePeriodOverride is min(evictionMaxPodGracePeriod, the pod's
    # terminationGracePeriodSeconds) (#122890, 1.32: AllowOverwriteTerminationGracePeriodSeconds
    # off by default; locked off in 1.35 by #133792); before, evictionMaxPodGracePeriod itself.
    eviction_soft_grace_capped_by_pod: bool = False
    # DefaultEvictionHard (pkg/kubelet/apis/config/v1beta1/defaults_linux.go): the evictionHard
    # a kubelet uses when the field is unset; imagefs.inodesFree 5% joined in 1.30 (#121834).
    kubelet_default_eviction_hard: Mapping[str, str] = field(
        default_factory=lambda: dict(DEFAULT_EVICTION_HARD)
    )
    # The FreeDiskSpaceFailed message of image GC (realImageGCManager.GarbageCollect),
    # (amount, freed, usage percent, capacity) -> text; reworded in 1.26 (#112631) and in
    # 1.35 (#132578).
    free_space_failed_message: Callable[[int, int, int, int], str] = (
        free_space_failed_wanted_to_free
    )
    # The status manager's goroutine (pkg/kubelet/status/status_manager.go Start): 1.18 queues
    # one syncPod request per status change (podStatusChannel, a buffer of 1000); from 1.27
    # (#115331) a change only marks it dirty and syncBatch(false) writes each pod's latest
    # status once (kubelet/status_loop.py).
    status_manager_coalesces: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return f"Kubernetes {self.version}"

    @property
    def releases(self) -> tuple[str, ...]:
        """Every minor release this profile stands for, in order."""
        return tuple(sorted({self.version, *self.same_as}, key=_minor))


def _minor(v: str) -> int:
    return int(v.split(".")[1])


V1_18 = Profile(
    version="1.18",
    same_as=(),
    controller_manager_defaults={},  # ControllerManagerConfig's own defaults are 1.18's
    kubelet_defaults={},
    fields_refused={
        "kubelet.shutdownGracePeriod": (
            "the kubelet's graceful node shutdown came in Kubernetes 1.21 (GracefulNodeShutdown)"
        ),
        "kubelet.shutdownGracePeriodCriticalPods": (
            "the kubelet's graceful node shutdown came in Kubernetes 1.21 (GracefulNodeShutdown)"
        ),
        "kubelet.shutdownGracePeriodByPodPriority": (
            "shutdown grace periods by pod priority came in Kubernetes 1.23 "
            "(GracefulNodeShutdownBasedOnPodPriority, on by default since 1.24)"
        ),
    },
    faults_refused={
        "ShutdownNode": (
            "the kubelet's graceful node shutdown came in Kubernetes 1.21 (GracefulNodeShutdown)"
        ),
    },
    node_excluded_from_disruption=excluded_legacy_or_label,
)

_REMOVED_127 = (
    "removed in Kubernetes 1.27 with legacy pod eviction (--enable-taint-manager and "
    "--pod-eviction-timeout): taint-based eviction is always on"
)
_GATE_GONE = "feature gate {gate} is GA and locked since Kubernetes {since}, and removed"

# -- the releases people run: 1.27 (the oldest under the clouds' extended support) to 1.36 --
# Each release is the one before it plus the changes its source made to a simulated rule
# (docs/behavior-current.md has one table of them, with the Go function and the test). A
# release whose source changed nothing simulated gets its own Profile all the same (its title
# and what the room shows are its own), and ``same_as`` names the releases it simulates
# identically to, computed from the rules below, never written by hand.
# The kubelet's client defaults from #116121 (1.27): kubeAPIQPS / kubeAPIBurst and
# eventRecordQPS / eventBurst 50 / 100 (1.18: 5 / 10 both, KubeletConfig's own defaults).
KUBELET_CLIENT_DEFAULTS_127 = {
    "kube_api_qps": 50,
    "kube_api_burst": 100,
    "event_record_qps": 50,
    "event_burst": 100,
}

V1_27 = Profile(
    version="1.27",
    same_as=(),
    controller_manager_defaults={},  # nodeMonitorGracePeriod still 40 s (50 s from 1.32)
    kubelet_defaults=KUBELET_CLIENT_DEFAULTS_127,
    fields_refused={
        "controllerManager.enableTaintManager": _REMOVED_127,
        "controllerManager.podEvictionTimeout": _REMOVED_127,
        "featureGates.LegacyNodeRoleBehavior": _GATE_GONE.format(
            gate="LegacyNodeRoleBehavior", since="1.21"
        ),
        "featureGates.NodeDisruptionExclusion": _GATE_GONE.format(
            gate="NodeDisruptionExclusion", since="1.21"
        ),
    },
    faults_refused={},
    node_excluded_from_disruption=excluded_by_label,
    # The NoExecuteTaintManager still runs inside the NodeLifecycleController
    # (pkg/controller/nodelifecycle/scheduler/taint_manager.go) until 1.29.
    separate_taint_eviction_controller=False,
    taint_eviction_deleter="TaintManager",
    # PodDisruptionConditions beta and on by default since 1.26 (GA 1.31).
    pod_disruption_conditions=True,
    # NodeOutOfServiceVolumeDetach beta and on by default since 1.26 (GA 1.28).
    pod_gc_out_of_service=True,
    pod_gc_marks_failed=True,
    graceful_node_shutdown=True,
    taint_eviction_forgets_fired_work=False,
    # #87743 (MarkPodsNotReady's event) and #89059 (markNodeForTainting's requeue), 1.19.
    mark_pods_not_ready_event=True,
    mark_node_for_tainting_requeues=True,
    monitor_node_health_workers=8,
    mark_pods_not_ready_lists_pods=False,
    reject_pod_message_prefix="Pod was rejected: ",
    eviction_immediate_grace_period_s=0,
    kill_grace_period=calculate_effective_grace_period,
    terminal_status_after_containers_stop=True,
    terminal_phase_from_exit_codes=True,
    eviction_message_threshold_met=True,
    eviction_container_message_fmt=(
        "Container {0} was using {1}, request is {2}, has larger consumption of {3}. "
    ),
    pid_rank_by_process_count=True,
    reclaim_enforces_min_reclaim=True,
    # Image GC's "Attempted to free ... eligible to free." (#112631, 1.26).
    free_space_failed_message=free_space_failed_attempted_to_free,
    # The status manager's one-slot channel and syncBatch(false) (#115331).
    status_manager_coalesces=True,
)


def _next(before: Profile, version: str, **changes: Any) -> Profile:
    """``version`` is ``before`` with ``changes`` (each a rule its source changed)."""
    return replace(before, version=version, same_as=(), **changes)


V1_28 = _next(
    V1_27,
    "1.28",
    # Parallel StatefulSets create their pods in slowStartBatch batches of goroutines, at
    # most 500 a batch, instead of one after another in the sync (#117865).
    statefulset_parallel_slow_start=True,
)
V1_29 = _next(
    V1_28,
    "1.29",
    # SeparateTaintEvictionController beta and on by default (GA 1.34): the
    # taint-eviction-controller (pkg/controller/tainteviction) deletes.
    separate_taint_eviction_controller=True,
    taint_eviction_deleter="TaintEvictionController",
)
V1_30 = _next(
    V1_29,
    "1.30",
    # DefaultEvictionHard gains imagefs.inodesFree 5% (#121834).
    kubelet_default_eviction_hard=DEFAULT_EVICTION_HARD_1_30,
)
V1_31 = _next(
    V1_30,
    "1.31",
    # immediateEvictionGracePeriodSeconds, and calculateEffectiveGracePeriod keeps an
    # override of 0 (``overridden``): both #124063.
    eviction_immediate_grace_period_s=1,
    kill_grace_period=calculate_effective_grace_period_overridden,
)
V1_32 = _next(
    V1_31,
    "1.32",
    # RecommendedDefaultNodeLifecycleControllerConfiguration: 50 s (#126287).
    controller_manager_defaults={"node_monitor_grace_period_ms": 50 * SECOND},
    # A soft eviction's override is capped by the pod's own grace (#122890).
    eviction_soft_grace_capped_by_pod=True,
)
V1_33 = _next(
    V1_32,
    "1.33",
    # TimedWorkerQueue.getWrappedWorkerFunc forgets a fired pod (#129577).
    taint_eviction_forgets_fired_work=True,
)
V1_34 = _next(V1_33, "1.34")
V1_35 = _next(
    V1_34,
    "1.35",
    # Image GC's reworded FreeDiskSpaceFailed (#132578).
    free_space_failed_message=free_space_failed_insufficient_disk,
)
V1_36 = _next(V1_35, "1.36")

CURRENT_VERSION = "1.34"  # what the built-in scenarios show
NEWEST_VERSION = "1.36"  # the newest release whose source is read

# Only ``version`` and ``same_as`` are not rules: everything else decides what a run does.
_NOT_RULES = frozenset({"version", "same_as"})


def _rules(p: Profile) -> tuple[Any, ...]:
    return tuple(getattr(p, f.name) for f in fields(Profile) if f.name not in _NOT_RULES)


def _with_same_as(profiles: tuple[Profile, ...]) -> dict[str, Profile]:
    """Each profile with ``same_as``: the other releases whose rules are all equal."""
    out: dict[str, Profile] = {}
    for p in profiles:
        twins = tuple(q.version for q in profiles if q is not p and _rules(q) == _rules(p))
        out[p.version] = replace(p, same_as=twins)
    return out


PROFILES: dict[str, Profile] = _with_same_as(
    (V1_18, V1_27, V1_28, V1_29, V1_30, V1_31, V1_32, V1_33, V1_34, V1_35, V1_36)
)
(V1_18, V1_27, V1_28, V1_29, V1_30, V1_31, V1_32, V1_33, V1_34, V1_35, V1_36) = (
    PROFILES[v]
    for v in (
        "1.18",
        "1.27",
        "1.28",
        "1.29",
        "1.30",
        "1.31",
        "1.32",
        "1.33",
        "1.34",
        "1.35",
        "1.36",
    )
)
CURRENT = PROFILES[CURRENT_VERSION]
NEWEST = PROFILES[NEWEST_VERSION]
# A scenario that does not say which release it shows is read as 1.18: every scenario
# written before profiles existed (the public examples among them) keeps its meaning.
# Everything the product writes (the room form, exports, built-in scenarios) says its version.
VERSION_WHEN_OMITTED = "1.18"

# The version skew policy (kubernetes.io/releases/version-skew-policy): a kubelet is never
# newer than kube-apiserver and at most three minor releases older (1.28+; two before).
KUBELET_SKEW_MINORS = 3

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def supported_text() -> str:
    """``1.18, 1.27, 1.28, ... 1.36``."""
    return ", ".join(PROFILES)


def _release_of(value: Any, path: str) -> str:
    """``"1.34"``, ``"v1.34.2"``, ``"v1.35.2-eks-1a2b"`` -> ``"1.34"`` / ``"1.35"``."""
    from .scenario import ScenarioError

    if not isinstance(value, str):
        hint = " (quote it: 1.30 unquoted is the number 1.3)" if isinstance(value, float) else ""
        raise ScenarioError(path, f'must be a string such as "{CURRENT_VERSION}"{hint}')
    m = _VERSION_RE.match(value.strip())
    if not m or m.group(1) != "1":
        raise ScenarioError(
            path, f'must be a Kubernetes release such as "{CURRENT_VERSION}", got "{value}"'
        )
    return f"1.{int(m.group(2))}"


def profile_for(value: Any, path: str = "spec.kubernetesVersion") -> Profile:
    """The profile of exactly the release named ``"1.34"``, ``"v1.34.2"`` or
    ``"v1.35.2-eks-1a2b"`` (a kubeletVersion): each simulated minor release has its own,
    never a neighbour's."""
    from .scenario import ScenarioError

    if value is None:
        return PROFILES[VERSION_WHEN_OMITTED]
    minor = _release_of(value, path)
    profile = PROFILES.get(minor)
    if profile is None:
        raise ScenarioError(
            path, f"Kubernetes {minor} is not simulated; supported releases: {supported_text()}"
        )
    return profile


def kubelet_skew_minors(control_plane: Profile) -> int:
    """How many minor releases older than kube-apiserver a kubelet may be: three since 1.28
    (KEP-3935), two before."""
    return KUBELET_SKEW_MINORS if _minor(control_plane.version) >= 28 else 2


def kubelet_profile_for(
    value: Any, control_plane: Profile, path: str = "spec.nodes[0].kubeletVersion"
) -> Profile:
    """The profile of a node's kubelet (``kubeletVersion``), within the version skew policy:
    not newer than the control plane, at most ``kubelet_skew_minors`` minors older; anything
    else is refused with the path and the policy."""
    from .scenario import ScenarioError

    minor = _release_of(value, path)
    cp = _minor(control_plane.version)
    older = kubelet_skew_minors(control_plane)
    policy = (
        f"the version skew policy allows a kubelet from 1.{cp - older} to 1.{cp} under a "
        f"Kubernetes {control_plane.version} control plane (never newer than kube-apiserver, at "
        f"most {older} minor releases older)"
    )
    if _minor(minor) > cp:
        raise ScenarioError(path, f"kubelet {minor} is newer than the control plane: {policy}")
    if _minor(minor) < cp - older:
        raise ScenarioError(path, f"kubelet {minor} is too old: {policy}")
    return profile_for(value, path)


def check_fields(profile: Profile, spec: Mapping[str, Any], prefix: str = "spec") -> None:
    """Refuse a field this release does not have, with its path, the release and why."""
    for section in ("controllerManager", "kubelet", "apiServer", "featureGates"):
        block = spec.get(section)
        if isinstance(block, Mapping):
            check_section(profile, section, block, f"{prefix}.{section}")


def check_section(profile: Profile, section: str, block: Mapping[str, Any], path: str) -> None:
    """``block`` is one configuration section (``kubelet``, ...) written at ``path``."""
    from .scenario import ScenarioError

    for key in block:
        why = profile.fields_refused.get(f"{section}.{key}")
        if why is not None:
            raise ScenarioError(f"{path}.{key}", f"not in Kubernetes {profile.version}: {why}")


def default_config(cls: type[Any], profile: Profile) -> Any:
    """A ControllerManagerConfig or KubeletConfig with this release's defaults."""
    from .config import ControllerManagerConfig, KubeletConfig, copy_config

    if cls is ControllerManagerConfig:
        return copy_config(cls(), **profile.controller_manager_defaults)
    if cls is KubeletConfig:
        return copy_config(cls(), **profile.kubelet_defaults)
    return cls()


def check_fault_type(profile: Profile, fault_type: str, path: str) -> None:
    from .scenario import ScenarioError

    why = profile.faults_refused.get(fault_type)
    if why is not None:
        raise ScenarioError(
            f"{path}.type", f"{fault_type} is not in Kubernetes {profile.version}: {why}"
        )
