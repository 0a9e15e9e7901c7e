"""Pod QoS class: port of pkg/apis/core/v1/helper/qos GetPodQOS (v1.18)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .api import QOS_BEST_EFFORT, QOS_BURSTABLE, QOS_GUARANTEED, PodStats

QOS_COMPUTE_RESOURCES = ("cpu", "memory")  # supportedQoSComputeResources


def defaulted_requests(requests: Mapping[str, int], limits: Mapping[str, int]) -> dict[str, int]:
    """Port of core/v1 defaults SetDefaults_Pod: a container's missing request takes the value
    of its limit (done by the API server before GetPodQOS ever sees the pod)."""
    out = dict(requests)
    for name, value in limits.items():
        out.setdefault(name, value)
    return out


def qos_class(containers: Iterable[tuple[Mapping[str, int], Mapping[str, int]]]) -> str:
    """Port of qos.GetPodQOS over (requests, limits) of every container and init container.

    BestEffort: no positive cpu/memory request or limit anywhere. Guaranteed: every container
    limits both cpu and memory and the summed requests equal the summed limits (requests are
    defaulted from limits first). Anything else is Burstable."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    is_guaranteed = True
    for raw_requests, raw_limits in containers:
        container_requests = defaulted_requests(raw_requests, raw_limits)
        for name in QOS_COMPUTE_RESOURCES:
            quantity = container_requests.get(name, 0)
            if quantity > 0:
                requests[name] = requests.get(name, 0) + quantity
        limits_found: set[str] = set()
        for name in QOS_COMPUTE_RESOURCES:
            quantity = raw_limits.get(name, 0)
            if quantity > 0:
                limits_found.add(name)
                limits[name] = limits.get(name, 0) + quantity
        if not limits_found >= {"memory", "cpu"}:
            is_guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if is_guaranteed:
        for name, req in requests.items():
            if limits.get(name) != req:
                is_guaranteed = False
                break
    if is_guaranteed and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


def pod_qos(pod: PodStats) -> str:
    """The pod's QoS class: ``pod.qos_class`` when the engine set it, else GetPodQOS over its
    containers and init containers."""
    if pod.qos_class is not None:
        return pod.qos_class
    return qos_class((c.requests, c.limits) for c in [*pod.containers, *pod.init_containers])
