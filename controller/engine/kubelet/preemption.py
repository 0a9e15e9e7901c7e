"""The kubelet's critical pod admission: port of pkg/kubelet/preemption/preemption.go
(CriticalPodAdmissionHandler, the AdmissionFailureHandler of the predicate admit handler).

A critical pod (static, mirror, or priority >= 2000000000) that does not fit only for lack of
resources is not rejected: the kubelet picks running pods to free the shortfall (BestEffort
first, then Burstable, then Guaranteed, each class only as far as the classes before it fall
short, within a class by "distance"), kills them one after the other, each Failed with reason
``Preempting`` and a Warning ``Preempting`` event, and admits the critical pod once the kills
have returned (HandlePodAdditions blocks in killPodNow). When no set of pods can free enough,
the pod is rejected ``UnexpectedAdmissionError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..clock import SECOND
from ..core import Phase
from ..objects import Pod
from .predicate import InsufficientResource
from .termination import DEFAULT_EXIT_CODE, container_stop

if TYPE_CHECKING:
    from .node_status import Kubelet

MESSAGE = "Preempted in order to admit critical pod"
REASON = "Preempting"  # events.PreemptContainer
# The DisruptionTarget message of a preempted pod (PodDisruptionConditions).
DISRUPTION_MESSAGE = "Pod was preempted by Kubelet to accommodate a critical pod."
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"

Requirement = tuple[str, int]  # admissionRequirement: (resourceName, quantity)


class PreemptionError(Exception):
    """getPodsToPreempt found no set of pods to free the requirements."""


def get_resource_request(pod: Pod, resource: str) -> int:
    """Port of pkg/api/v1/resource GetResourceRequest: 1 for ``pods``, else the pod's
    request (max of the containers' sum and the largest init container; cpu in millicores)."""
    if resource == "pods":
        return 1
    return pod.request(resource)


def preemptable(preemptor: Pod, preemptee: Pod) -> bool:
    """Port of kubetypes.Preemptable: a critical pod may preempt a non-critical one; else
    only a pod of strictly higher priority."""
    if preemptor.is_critical() and not preemptee.is_critical():
        return True
    return preemptor.priority > preemptee.priority


def requirements_of(reasons: list[InsufficientResource]) -> list[Requirement]:
    """HandleAdmissionFailure: each InsufficientResourceError's GetInsufficientAmount
    (requested - (capacity - used))."""
    return [(r.resource, r.requested - (r.capacity - r.used)) for r in reasons]


def subtract(requirements: list[Requirement], pods: list[Pod]) -> list[Requirement]:
    """Port of admissionRequirementList.subtract: what is still missing if ``pods`` went."""
    out = []
    for resource, quantity in requirements:
        for p in pods:
            quantity -= get_resource_request(p, resource)
            if quantity <= 0:
                break
        if quantity > 0:
            out.append((resource, quantity))
    return out


def distance(requirements: list[Requirement], pod: Pod) -> float:
    """Port of admissionRequirementList.distance: the sum over requirements of the squared
    share each would still miss with the pod gone."""
    dist = 0.0
    for resource, quantity in requirements:
        remaining = float(quantity - get_resource_request(pod, resource))
        if remaining > 0:
            dist += (remaining / float(quantity)) ** 2
    return dist


def smaller_resource_request(p1: Pod, p2: Pod) -> bool:
    """Port of smallerResourceRequest: memory, then cpu; true when equal."""
    for resource in ("memory", "cpu"):
        r1, r2 = get_resource_request(p1, resource), get_resource_request(p2, resource)
        if r1 < r2:
            return True
        if r1 > r2:
            return False
    return True


def to_string(requirements: list[Requirement]) -> str:
    """Port of admissionRequirementList.toString."""
    return "[" + "".join(f"(res: {r}, q: {q}), " for r, q in requirements) + "]"


def get_pods_to_preempt_by_distance(pods: list[Pod], requirements: list[Requirement]) -> list[Pod]:
    """Port of getPodsToPreemptByDistance: repeatedly the pod closest to the remaining
    requirements (a tie to the smaller request), removed by swapping in the last pod."""
    pods = list(pods)
    to_evict: list[Pod] = []
    while requirements:
        if not pods:
            raise PreemptionError(
                f"no set of running pods found to reclaim resources: {to_string(requirements)}"
            )
        best_distance = float(len(requirements) + 1)
        best = 0
        for i, p in enumerate(pods):
            dist = distance(requirements, p)
            if dist < best_distance or (
                best_distance == dist and smaller_resource_request(p, pods[best])
            ):
                best_distance = dist
                best = i
        requirements = subtract(requirements, [pods[best]])
        to_evict.append(pods[best])
        pods[best] = pods[-1]
        pods.pop()
    return to_evict


def get_pods_to_preempt(pod: Pod, pods: list[Pod], requirements: list[Requirement]) -> list[Pod]:
    """Port of getPodsToPreempt: the Guaranteed pods needed if every BestEffort and
    Burstable pod went, the Burstable ones needed if every BestEffort pod and those went,
    then the BestEffort ones; evicted BestEffort first."""
    best_effort, burstable, guaranteed = [], [], []
    for p in pods:
        if preemptable(pod, p):
            {"BestEffort": best_effort, "Burstable": burstable}.get(
                p.qos_class(), guaranteed
            ).append(p)
    unable = subtract(requirements, best_effort + burstable + guaranteed)
    if unable:
        raise PreemptionError(
            f"no set of running pods found to reclaim resources: {to_string(unable)}"
        )
    guaranteed_to_evict = get_pods_to_preempt_by_distance(
        guaranteed, subtract(requirements, best_effort + burstable)
    )
    burstable_to_evict = get_pods_to_preempt_by_distance(
        burstable, subtract(requirements, best_effort + guaranteed_to_evict)
    )
    best_effort_to_evict = get_pods_to_preempt_by_distance(
        best_effort, subtract(requirements, burstable_to_evict + guaranteed_to_evict)
    )
    return best_effort_to_evict + burstable_to_evict + guaranteed_to_evict


def handle_admission_failure(
    kubelet: Kubelet, pod: Pod, reasons: list[InsufficientResource], active: list[Pod], now: int
) -> tuple[bool, str, str]:
    """Port of CriticalPodAdmissionHandler.HandleAdmissionFailure with evictPodsToFreeRequests
    (only resource reasons reach here): a non-critical pod keeps its reasons (not admitted);
    a critical one gets the chosen pods killed one after the other and is admitted when the
    last kill returns (``kubelet.admission_done_ms``), or is rejected UnexpectedAdmissionError
    when no set of pods frees enough."""
    if not pod.is_critical():
        return False, "", ""
    try:
        victims = get_pods_to_preempt(pod, active, requirements_of(reasons))
    except PreemptionError as exc:
        message = (
            "Unexpected error while attempting to recover from admission failure: "
            f"preemption: error finding a set of pods to preempt: {exc}"
        )
        return False, UNEXPECTED_ADMISSION_ERROR, message
    sim, loop = kubelet.sim, kubelet.eviction
    at = now
    for victim in victims:
        # The Warning event, then killPodNow without a grace override, blocking until the
        # kill completes (its timeout, max(10 s, 1.5 x the pod's grace), is never shorter).
        grace_ms, code = container_stop(
            victim.annotations, loop.kill_grace_s(victim, None) * SECOND
        )
        if at == now:
            _preempt(kubelet, victim.key, grace_ms, code)
        else:
            sim.sched.schedule(at, Phase.KUBELET_POD, _preempt, kubelet, victim.key, grace_ms, code)
        at += grace_ms
    admission_done(kubelet)[pod.key] = at
    sim.admission_changed(pod)
    return True, "", ""


def _preempt(kubelet: Kubelet, key: str, grace_ms: int, exit_code: int = DEFAULT_EXIT_CODE) -> None:
    sim = kubelet.sim
    now = sim.sched.now_ms
    victim = sim.cluster.pods.get(key)
    if victim is None or not kubelet.alive:
        return
    kubelet.record_event(now, f"Pod/{key}", REASON, MESSAGE, "Warning")
    kubelet.eviction.kill_with_status(
        victim, REASON, MESSAGE, DISRUPTION_MESSAGE, grace_ms, grace_ms, now, exit_code
    )


def admission_done(kubelet: Kubelet) -> dict[str, int]:
    """Pods admitted after preempting others: pod key -> when HandlePodAdditions gets past
    the kills and starts the pod."""
    done = kubelet.__dict__.get("admission_done_ms")
    if done is None:
        done = kubelet.__dict__["admission_done_ms"] = {}
    return done
