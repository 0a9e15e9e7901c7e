"""The kubelet's resource-fit admission: lifecycle.NewPredicateAdmitHandler
(pkg/kubelet/lifecycle/predicate.go), the third of the kubelet's pod admit handlers (after
the eviction manager's and the sysctl allow-list, before the node shutdown manager's; kubelet.go
NewMainKubelet). A pod bound by ``spec.nodeName`` bypasses the scheduler, so only this handler
keeps it off a node that has no room: it runs the scheduler's GeneralPredicates (1.18) /
AdmissionCheck (1.34) against the node's allocatable and the requests of the pods the kubelet
has already admitted, and rejects the pod with ``OutOf<resource>`` and the
InsufficientResourceError's message.

Only the resource part is ported (noderesources.Fits): a pod here cannot ask for host ports
or extended resources, a nodeSelector/affinity mismatch on a nodeName pod is not modelled, and
a NoExecute taint check (added to the kubelet's generalFilter after 1.18) is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

from ..objects import Pod
from ..scheduler import node_info_contribution

if TYPE_CHECKING:
    from .node_status import Kubelet

# predicate.go constants.
INSUFFICIENT_RESOURCE_PREFIX = "OutOf"
OUT_OF_CPU = "OutOfcpu"
OUT_OF_MEMORY = "OutOfmemory"
OUT_OF_EPHEMERAL_STORAGE = "OutOfephemeral-storage"
OUT_OF_PODS = "OutOfpods"
_REASONS = {
    "cpu": OUT_OF_CPU,
    "memory": OUT_OF_MEMORY,
    "ephemeral-storage": OUT_OF_EPHEMERAL_STORAGE,
    "pods": OUT_OF_PODS,
}


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """noderesources.InsufficientResource / lifecycle.InsufficientResourceError."""

    resource: str
    requested: int
    used: int
    capacity: int

    def error(self) -> str:
        """Port of InsufficientResourceError.Error."""
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )

    @property
    def reason(self) -> str:
        """The admit result's reason: OutOfcpu, OutOfmemory, OutOfephemeral-storage,
        OutOfpods (predicateAdmitHandler.Admit's switch; others ``OutOf<name>``)."""
        return _REASONS.get(self.resource, INSUFFICIENT_RESOURCE_PREFIX + self.resource)


def fits(
    pod: Pod, allocatable: dict[str, int], other_pods: list[Pod]
) -> list[InsufficientResource]:
    """Port of noderesources.Fits (fitsRequest) over a NodeInfo built from ``other_pods``
    (schedulerframework.NewNodeInfo(pods...)): pods first, then cpu, memory,
    ephemeral-storage. The pod's request is max(sum of containers, largest init container)
    (computePodResourceRequest); the node's requested total counts the other pods' regular
    containers, as the scheduler's NodeInfo does (node_info_contribution). A pod that requests
    nothing is checked for the pod count only."""
    cpu = mem = eph = 0
    for p in other_pods:
        c = p.nodeinfo_vec or node_info_contribution(p)
        cpu += c[0]
        mem += c[1]
        eph += c[2]
    return fits_used(pod, allocatable, len(other_pods), (cpu, mem, eph))


def fits_used(
    pod: Pod, allocatable: dict[str, int], others: int, used: tuple[int, int, int]
) -> list[InsufficientResource]:
    """``fits`` given the other pods' count and their summed cpu, memory and
    ephemeral-storage requests (admitted_usage)."""
    out: list[InsufficientResource] = []
    allowed = allocatable.get("pods", 0)
    if others + 1 > allowed:
        out.append(InsufficientResource("pods", 1, others, allowed))
    cpu, mem, eph = pod.request_vec or pod.requests3()
    if not (cpu or mem or eph):
        return out
    cap = allocatable.get("cpu", 0)
    if cap < cpu + used[0]:
        out.append(InsufficientResource("cpu", cpu, used[0], cap))
    cap = allocatable.get("memory", 0)
    if cap < mem + used[1]:
        out.append(InsufficientResource("memory", mem, used[1], cap))
    cap = allocatable.get("ephemeral-storage", 0)
    if cap < eph + used[2]:
        out.append(InsufficientResource("ephemeral-storage", eph, used[2], cap))
    return out


def predicate_admit(
    pod: Pod, allocatable: dict[str, int], other_pods: list[Pod]
) -> tuple[bool, str, str]:
    """Port of predicateAdmitHandler.Admit, resource part: (admit, reason, message). When
    the pod does not fit, the first failure is the reason (``OutOfpods`` before
    ``OutOfcpu`` before ``OutOfmemory``), its InsufficientResourceError the message."""
    reasons = fits(pod, allocatable, other_pods)
    if not reasons:
        return True, "", ""
    first = reasons[0]
    return False, first.reason, first.error()


def admitted_pods(
    pods_on_node: list[Pod],
    pod: Pod,
    waiting: Collection[str] = (),
    phase_of: Callable[[Pod], str] = lambda p: p.phase,
) -> list[Pod]:
    """The ``OtherPods`` of the admit attributes: the pods the kubelet admitted before that are
    still alive (HandlePodAdditions: filterOutTerminatedPods (1.18) / the allocated pods
    (1.34), the pod itself left out). A pod is admitted once the kubelet started it (or its
    phase says it runs), or admitted and ``waiting`` for its preemption kills to end; a
    terminal pod (Failed, Succeeded: rejected or evicted ones) and a terminating pod whose
    containers have stopped (podIsTerminated) no longer count. A pod bound here that the
    kubelet has not seen yet is not admitted. ``phase_of``: the phase as the kubelet has it
    (its status manager's copy, which a partitioned kubelet has not sent yet)."""
    out = []
    for p in pods_on_node:
        phase = phase_of(p)
        if p is pod or phase == "Failed" or phase == "Succeeded":
            continue
        if p.started or (phase == "Running" and p.deletion_ms is None) or p.key in waiting:
            out.append(p)
    return out


_api_phase = attrgetter("phase")  # a kubelet with no status waiting to be sent: the API's


def admitted_usage(
    pods_on_node: Iterable[Pod],
    pod: Pod,
    waiting: Collection[str] = (),
    phase_of: Callable[[Pod], str] = lambda p: p.phase,
) -> tuple[int, tuple[int, int, int]]:
    """How many pods ``admitted_pods`` gives and their summed cpu, memory and
    ephemeral-storage requests (as ``fits`` sums them), without making the list: the same
    test, pod by pod."""
    n = cpu = mem = eph = 0
    if phase_of is _api_phase:  # the same test with the API's phase read inline
        for p in pods_on_node:
            phase = p.phase
            if p is pod or phase == "Failed" or phase == "Succeeded":
                continue
            if p.started or (phase == "Running" and p.deletion_ms is None) or p.key in waiting:
                c = p.nodeinfo_vec or node_info_contribution(p)
                n += 1
                cpu += c[0]
                mem += c[1]
                eph += c[2]
        return n, (cpu, mem, eph)
    for p in pods_on_node:
        phase = phase_of(p)
        if p is pod or phase == "Failed" or phase == "Succeeded":
            continue
        if p.started or (phase == "Running" and p.deletion_ms is None) or p.key in waiting:
            c = p.nodeinfo_vec or node_info_contribution(p)
            n += 1
            cpu += c[0]
            mem += c[1]
            eph += c[2]
    return n, (cpu, mem, eph)


def _admitted(p: Pod, waiting: Collection[str], phase_of: Callable[[Pod], str]) -> bool:
    """Whether ``admitted_pods`` counts ``p`` (the pod being admitted aside)."""
    phase = phase_of(p)
    if phase == "Failed" or phase == "Succeeded":
        return False
    return p.started or (phase == "Running" and p.deletion_ms is None) or p.key in waiting


class AdmittedIndex:
    """The pods ``admitted_usage`` counts on one kubelet's node and their summed requests,
    kept from one admission to the next (issue #27; ``Simulation.shortcuts``): the shortcut
    for the loops HandlePodAdditions runs for every new pod, filterOutTerminatedPods (1.18) /
    the allocated pods (1.34) over all the kubelet's pods, then NewNodeInfo(pods...) adding
    each one's requests (NodeInfo.AddPod, calculateResource). Every write that can change
    whether a pod counts (bound, removed, deletionTimestamp, phase, started, a status not yet
    sent, an admission waiting for its preemption kills) names the pod
    (Simulation.admission_changed), and only those pods are looked at again; a kubelet
    process that loses its unsent statuses or its waiting admissions drops the whole index
    (Kubelet.drop_admitted_index). With the shortcut off, admitted_usage sums every pod."""

    __slots__ = ("cpu", "dirty", "eph", "mem", "n", "pods")

    def __init__(
        self, bound: dict[str, Pod], waiting: Collection[str], phase_of: Callable[[Pod], str]
    ) -> None:
        # key -> pod counted (its NodeInfo part is the one kept on it: node_info_contribution;
        # no tuple per pod, for the garbage collector's sake)
        self.pods: dict[str, Pod] = {}
        self.dirty: set[str] = set()  # pods to look at again
        self.n = self.cpu = self.mem = self.eph = 0
        for p in bound.values():
            if _admitted(p, waiting, phase_of):
                self._add(p)

    def _add(self, p: Pod) -> None:
        c = p.nodeinfo_vec or node_info_contribution(p)
        self.pods[p.key] = p
        self.n += 1
        self.cpu += c[0]
        self.mem += c[1]
        self.eph += c[2]

    def _remove(self, key: str) -> None:
        c = self.pods.pop(key).nodeinfo_vec
        assert c is not None  # set by _add
        self.n -= 1
        self.cpu -= c[0]
        self.mem -= c[1]
        self.eph -= c[2]

    def usage(
        self,
        bound: dict[str, Pod],
        pod: Pod,
        waiting: Collection[str],
        phase_of: Callable[[Pod], str],
    ) -> tuple[int, tuple[int, int, int]]:
        """``admitted_usage(bound.values(), pod, waiting, phase_of)``, from the kept sums.
        The pod itself is left out of them whether it counts or not, so a mark on it waits
        for the next admission (when it has started, for a pod the kubelet admits now),
        unless another pod of its name is bound or kept."""
        pods, dirty = self.pods, self.dirty
        own = pod.key
        kept = pods.get(own)
        wait = own in dirty and (kept is None or kept is pod) and bound.get(own) is pod
        if wait:
            dirty.discard(own)
        for key in dirty:
            cur = bound.get(key)
            kept = pods.get(key)
            counts = cur is not None and _admitted(cur, waiting, phase_of)
            if kept is not None and (cur is not kept or not counts):
                self._remove(key)
                kept = None
            if kept is None and counts:
                self._add(cur)  # type: ignore[arg-type]  # counts: cur is a pod
        dirty.clear()
        if wait:
            dirty.add(own)
        n, cpu, mem, eph = self.n, self.cpu, self.mem, self.eph
        kept = pods.get(pod.key)
        if kept is pod:  # the pod itself is left out
            c = pod.nodeinfo_vec
            assert c is not None  # set by _add
            n, cpu, mem, eph = n - 1, cpu - c[0], mem - c[1], eph - c[2]
        return n, (cpu, mem, eph)


def kubelet_predicate_admit(kubelet: Kubelet, pod: Pod, now_ms: int) -> tuple[bool, str, str]:
    """predicateAdmitHandler.Admit on a kubelet: the node (getNodeAnyWay: none left to read
    here means nothing to check), the pods it admitted, fits; a pod that does not fit goes
    to the CriticalPodAdmissionHandler, which may admit a critical pod by preempting others
    (preemption.handle_admission_failure); otherwise the first reason rejects it."""
    node = kubelet.node
    if node is None:
        return True, "", ""
    waiting = preemption.admission_done(kubelet)
    cluster = kubelet.sim.cluster
    status = kubelet.status
    phase_of = status.phase_of if status.pending else _api_phase
    # The node's pods as pods_on_node lists them, read in place (nothing changes them here).
    bound = cluster.pods_by_node.get(kubelet.node_name, {})
    if kubelet.sim.shortcuts:
        index = kubelet.admitted_index
        if index is None:
            index = kubelet.admitted_index = AdmittedIndex(bound, waiting, phase_of)
        usage = index.usage(bound, pod, waiting, phase_of)
    else:
        usage = admitted_usage(bound.values(), pod, waiting, phase_of)
    reasons = fits_used(pod, node.resources.allocatable, *usage)
    if not reasons:
        return True, "", ""
    pods = cluster.pods_on_node(kubelet.node_name)
    others = admitted_pods(pods, pod, waiting, phase_of)
    ok, reason, message = preemption.handle_admission_failure(kubelet, pod, reasons, others, now_ms)
    if ok or reason:
        return ok, reason, message
    first = reasons[0]
    return False, first.reason, first.error()


# preemption.py imports this module (InsufficientResource): imported last, once.
from . import preemption  # noqa: E402
