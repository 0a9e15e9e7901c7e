"""The kubelet's resource-fit admission (lifecycle.NewPredicateAdmitHandler, issue #16 item 3),
in both profiles, with exact simulated times.

Expected values come from the Kubernetes source, not from the simulator:
pkg/kubelet/lifecycle/predicate.go (Admit, the OutOf* reasons, InsufficientResourceError.Error
"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d"),
pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest: pods, cpu, memory,
ephemeral-storage, in that order; a pod requesting nothing is checked for the pod count only),
pkg/kubelet/kubelet.go (NewMainKubelet adds the eviction manager's handler first, the predicate
handler after it and the node shutdown manager's last; rejectPod: a Warning event with the
handler's message and the status message "Pod " + message in 1.18, "Pod was rejected: " +
message in 1.34).

Allocatable is capacity minus the hard eviction thresholds (memory.available 100Mi,
nodefs.available 10%): a 2-cpu node has 2000 m, a 4Gi node 4294967296 - 104857600 =
4190109696 bytes, a 10Gi disk 10737418240 - 1073741840 = 9663676400 bytes (GetThresholdQuantity
multiplies by the percentage as a float32, 0.10000000149).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from controller.engine.kubelet.predicate import (
    InsufficientResource,
    admitted_pods,
    admitted_usage,
    fits,
    fits_used,
)
from controller.engine.kubelet.preemption import (
    PreemptionError,
    distance,
    get_pods_to_preempt,
    subtract,
)
from controller.engine.objects import Container, Pod
from controller.engine.versions import CURRENT_VERSION

from .conftest import events, simulate, times

CPU_2000 = "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"


def bound_pod(
    name: str, requests: dict[str, str] | None = None, node: str = "n-1", **spec: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app"}
    if requests:
        container["resources"] = {"requests": requests}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [container], **spec},
    }


def scenario(
    objects: list[dict[str, Any]],
    applies: list[tuple[int, dict[str, Any]]] = (),  # type: ignore[assignment]
    capacity: dict[str, str] | None = None,
    version: str = "1.18",
    faults: list[dict[str, Any]] = (),  # type: ignore[assignment]
    kubelet: dict[str, Any] | None = None,
    duration: str = "60s",
    nodes: list[dict[str, Any]] | None = None,
) -> str:
    node: dict[str, Any] = {"name": "n-1", "zone": "z"}
    if capacity:
        node["capacity"] = capacity
    spec: dict[str, Any] = {
        "kubernetesVersion": version,
        "duration": duration,
        "nodes": nodes or [node],
        "objects": objects,
        "faults": [
            *({"at": f"{at}s", "type": "Apply", "object": obj} for at, obj in applies),
            *faults,
        ],
    }
    if kubelet:
        spec["kubelet"] = kubelet
    return yaml.safe_dump({"apiVersion": "playground/v1alpha1", "kind": "Scenario", "spec": spec})


def rejected(sim) -> list[tuple[float, str, str]]:
    return [(e["t"] / 1000, e["pod"], e["reason"]) for e in events(sim, "PodRejected")]


def pod_events(sim, key: str) -> list[tuple[float, str, str, str]]:
    return [
        (e["t"] / 1000, e["reason"], e["eventType"], e["message"])
        for e in events(sim, "K8sEvent", object=f"Pod/{key}")
        if e["reason"] != "Scheduled"
    ]


# -- fitsRequest (pure) ---------------------------------------------------------------------------
def _pod(name: str, **requests: int) -> Pod:
    return Pod("default", name, name, 0, containers=[Container("c", requests=dict(requests))])


ALLOC = {"cpu": 2000, "memory": 4_000, "ephemeral-storage": 10_000, "pods": 3}


@pytest.mark.parametrize(
    ("pod", "others", "want"),
    [
        pytest.param(_pod("p", cpu=500), [_pod("a", cpu=1500)], [], id="exactly fits: 1500+500"),
        pytest.param(
            _pod("p", cpu=501),
            [_pod("a", cpu=1500)],
            [InsufficientResource("cpu", 501, 1500, 2000)],
            id="one millicore too many",
        ),
        pytest.param(
            _pod("p", cpu=100, memory=3_000),
            [_pod("a", memory=1_500), _pod("b", cpu=1_950)],
            [
                InsufficientResource("cpu", 100, 1950, 2000),
                InsufficientResource("memory", 3000, 1500, 4000),
            ],
            id="cpu reported before memory",
        ),
        pytest.param(
            _pod("p", **{"ephemeral-storage": 20_000}),
            [],
            [InsufficientResource("ephemeral-storage", 20_000, 0, 10_000)],
            id="ephemeral-storage",
        ),
        pytest.param(
            _pod("p", cpu=3000),
            [_pod("a"), _pod("b"), _pod("c")],
            [
                InsufficientResource("pods", 1, 3, 3),
                InsufficientResource("cpu", 3000, 0, 2000),
            ],
            id="pods first",
        ),
        pytest.param(
            _pod("p"),
            [_pod("a", cpu=2000), _pod("b", memory=4000)],
            [],
            id="a pod that requests nothing only counts as a pod",
        ),
        pytest.param(
            _pod("p"),
            [_pod("a"), _pod("b"), _pod("c")],
            [InsufficientResource("pods", 1, 3, 3)],
            id="a pod that requests nothing still needs a pod slot",
        ),
    ],
)
def test_fits_request(pod: Pod, others: list[Pod], want: list[InsufficientResource]) -> None:
    assert fits(pod, ALLOC, others) == want


@pytest.mark.parametrize(
    ("resource", "reason"),
    [
        ("cpu", "OutOfcpu"),
        ("memory", "OutOfmemory"),
        ("ephemeral-storage", "OutOfephemeral-storage"),
        ("pods", "OutOfpods"),
        ("example.com/gpu", "OutOfexample.com/gpu"),
    ],
)
def test_reason_strings(resource: str, reason: str) -> None:
    assert InsufficientResource(resource, 1, 2, 3).reason == reason


def test_init_container_request_counts_for_the_new_pod_but_not_for_admitted_ones() -> None:
    """computePodResourceRequest takes max(sum of containers, largest init container) for the
    pod being admitted; NodeInfo's requested total (calculateResource) adds only the regular
    containers of the pods already there, as the scheduler's does."""
    big_init = Pod(
        "default",
        "i",
        "i",
        0,
        containers=[Container("c", requests={"cpu": 100})],
        init_containers=[Container("init", requests={"cpu": 1900})],
    )
    assert fits(big_init, ALLOC, [_pod("a", cpu=200)]) == [
        InsufficientResource("cpu", 1900, 200, 2000)
    ]
    assert fits(_pod("p", cpu=1900), ALLOC, [big_init]) == []


def test_admitted_pods_are_the_started_or_running_ones_not_terminal() -> None:
    running = _pod("running")
    running.started, running.phase = True, "Running"
    unseen = _pod("unseen")  # bound, not seen by the kubelet yet: Pending, not started
    failed = _pod("failed")
    failed.phase = "Failed"
    rebooted = _pod("rebooted")  # Running in the API, containers not started again yet
    rebooted.phase = "Running"
    stopped = _pod("stopped")  # terminating and its containers have stopped
    stopped.phase, stopped.deletion_ms = "Running", 5_000
    terminating = _pod("terminating")  # terminating, containers still running
    terminating.phase, terminating.started, terminating.deletion_ms = "Running", True, 5_000
    me = _pod("me")
    pods = [running, unseen, failed, rebooted, stopped, terminating, me]
    assert [p.name for p in admitted_pods(pods, me)] == ["running", "rebooted", "terminating"]
    # admitted_usage: the same pods, counted and summed (as fits sums them)
    for i, p in enumerate(pods):
        p.containers[0].requests["cpu"] = 100 * (i + 1)
        p.nodeinfo_vec = None
    assert admitted_usage(pods, me) == (3, (100 + 400 + 600, 0, 0))
    assert fits_used(me, ALLOC, 3, (1100, 0, 0)) == fits(me, ALLOC, admitted_pods(pods, me))


# -- stories ------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1.18", CURRENT_VERSION])
def test_a_bound_pod_that_does_not_fit_is_rejected_out_of_cpu(version: str) -> None:
    """n-1 has 2 cpus; pod a (1500 m) runs; pod b (1000 m, spec.nodeName n-1) comes at 10 s:
    the kubelet rejects it at once, a Warning event OutOfcpu with the error's message, the
    pod Failed with reason OutOfcpu. Pod c (500 m) at 20 s still fits: a rejected pod holds
    nothing."""
    sim = simulate(
        scenario(
            [bound_pod("a", {"cpu": "1500m"})],
            [(10, bound_pod("b", {"cpu": "1"})), (20, bound_pod("c", {"cpu": "500m"}))],
            capacity={"cpu": "2"},
            version=version,
        )
    )
    assert rejected(sim) == [(10.0, "default/b", "OutOfcpu")]
    assert pod_events(sim, "default/b") == [(10.0, "OutOfcpu", "Warning", CPU_2000)]
    b = sim.cluster.pods["default/b"]
    prefix = "Pod " if version == "1.18" else "Pod was rejected: "
    assert (b.phase, b.reason, b.message) == ("Failed", "OutOfcpu", prefix + CPU_2000)
    assert b.started is False
    assert times(sim, "PodPhase", pod="default/b", phase="Failed") == [10.0]
    assert times(sim, "PodPhase", pod="default/c", phase="Running") == [20.0]
    assert times(sim, "PodPhase", pod="default/a", phase="Running") == [0.0]


@pytest.mark.parametrize(
    ("capacity", "pods", "want_reason", "want_message"),
    [
        pytest.param(
            {"memory": "4Gi"},
            [bound_pod("x", {"memory": "4Gi"})],
            "OutOfmemory",
            "Node didn't have enough resource: memory, requested: 4294967296, used: 0, "
            "capacity: 4190109696",
            id="memory: fits the capacity, not the allocatable (minus the 100Mi threshold)",
        ),
        pytest.param(
            {"ephemeral-storage": "10Gi"},
            [bound_pod("x", {"ephemeral-storage": "10Gi"})],
            "OutOfephemeral-storage",
            "Node didn't have enough resource: ephemeral-storage, requested: 10737418240, "
            "used: 0, capacity: 9663676400",
            id="ephemeral-storage: the 10% nodefs threshold is reserved",
        ),
        pytest.param(
            {"pods": "2"},
            [bound_pod("x"), bound_pod("y"), bound_pod("z")],
            "OutOfpods",
            "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
            id="pods: the third pod on a 2-pod node",
        ),
        pytest.param(
            {"pods": "1", "cpu": "1"},
            [bound_pod("x", {"cpu": "1"}), bound_pod("y", {"cpu": "1"})],
            "OutOfpods",
            "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
            id="pods and cpu both short: the first failure (pods) is the reason",
        ),
    ],
)
def test_reasons_and_messages(
    capacity: dict[str, str], pods: list[dict[str, Any]], want_reason: str, want_message: str
) -> None:
    sim = simulate(scenario(pods, capacity=capacity))
    last = pods[-1]["metadata"]["name"]
    assert rejected(sim) == [(0.0, f"default/{last}", want_reason)]
    assert pod_events(sim, f"default/{last}") == [(0.0, want_reason, "Warning", want_message)]
    assert sim.cluster.pods[f"default/{last}"].message == "Pod " + want_message


def test_scheduled_pods_count_and_a_deleted_pod_frees_its_room() -> None:
    """A Deployment's pod (1500 m) placed by the scheduler at 0 s uses the room; a bound pod
    of 1 cpu is rejected at 10 s. The Deployment is scaled to 0 at 20 s: its pod (grace 30 s)
    goes at 50 s; a bound pod applied at 30 s is still rejected (the terminating pod's
    containers run), one applied at 55 s is admitted."""
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "web", "resources": {"requests": {"cpu": "1500m"}}}]
                },
            },
        },
    }
    scaled = {**deploy, "spec": {**deploy["spec"], "replicas": 0}}
    sim = simulate(
        scenario(
            [deploy],
            [
                (10, bound_pod("b", {"cpu": "1"})),
                (20, scaled),
                (30, bound_pod("c", {"cpu": "1"})),
                (55, bound_pod("d", {"cpu": "1"})),
            ],
            capacity={"cpu": "2"},
        )
    )
    assert rejected(sim) == [(10.0, "default/b", "OutOfcpu"), (30.0, "default/c", "OutOfcpu")]
    (web,) = [e["pod"] for e in events(sim, "PodCreated") if "web" in e["pod"]]
    assert times(sim, "PodRemoved", pod=web) == [50.0]
    assert times(sim, "PodPhase", pod="default/d", phase="Running") == [55.0]


def test_eviction_managers_admit_runs_first() -> None:
    """A node under DiskPressure (9.5 of 10 Gi used) and a bound pod that does not fit its
    cpu either: the eviction manager's handler comes first, so the reason is Evicted."""
    node = {
        "name": "n-1",
        "zone": "z",
        "capacity": {"cpu": "1", "ephemeral-storage": "10Gi"},
        "usage": {"ephemeral-storage": "9500Mi"},
    }
    sim = simulate(scenario([], [(30, bound_pod("b", {"cpu": "2"}))], nodes=[node]))
    assert rejected(sim) == [(30.0, "default/b", "Evicted")]


def test_resource_fit_runs_before_the_node_shutdown_manager() -> None:
    """1.34: during a graceful shutdown (60 s; pods get 20 s) a bound pod that does not fit
    is rejected OutOfcpu, not NodeShutdown: the predicate handler comes before the shutdown
    manager's; one that fits is rejected NodeShutdown."""
    sim = simulate(
        scenario(
            [bound_pod("a", {"cpu": "1500m"})],
            [(65, bound_pod("big", {"cpu": "1"})), (66, bound_pod("small", {"cpu": "100m"}))],
            capacity={"cpu": "2"},
            version=CURRENT_VERSION,
            kubelet={"shutdownGracePeriod": "30s", "shutdownGracePeriodCriticalPods": "10s"},
            faults=[{"at": "60s", "type": "ShutdownNode", "node": "n-1"}],
            duration="70s",
        )
    )
    assert rejected(sim) == [
        (65.0, "default/big", "OutOfcpu"),
        (66.0, "default/small", "NodeShutdown"),
    ]


# -- critical pods: the CriticalPodAdmissionHandler (pkg/kubelet/preemption/preemption.go) ------
def critical_pod(name: str, requests: dict[str, str] | None = None) -> dict[str, Any]:
    return bound_pod(name, requests, priorityClassName="system-node-critical")


def guaranteed(name: str, cpu: str, grace: int) -> dict[str, Any]:
    pod = bound_pod(name, terminationGracePeriodSeconds=grace)
    both = {"cpu": cpu, "memory": "1Gi"}
    pod["spec"]["containers"][0]["resources"] = {"requests": both, "limits": dict(both)}
    return pod


PREEMPTED = "Preempted in order to admit critical pod"
PREEMPTED_DISRUPTION = "Pod was preempted by Kubelet to accommodate a critical pod."


def preemption_story(sim, key: str) -> dict[str, Any]:
    return {
        "events": [
            (t, reason) for t, reason, _, _ in pod_events(sim, key) if reason == "Preempting"
        ],
        "failed": times(sim, "PodPhase", pod=key, phase="Failed"),
        "disruption": [
            (e["t"] / 1000, e["reason"], e["message"])
            for e in events(sim, "PodDisruptionTarget", pod=key)
        ],
    }


@pytest.mark.parametrize("version", ["1.18", CURRENT_VERSION])
def test_a_critical_pod_preempts_what_frees_its_shortfall(version: str) -> None:
    """2 cpus: a BestEffort pod, a Burstable one (500 m) and a Guaranteed one (1 cpu, grace
    30 s) run; a system-node-critical pod of 1500 m comes at 10 s: 1000 m short. The
    BestEffort and Burstable pods together free only 500 m, so getPodsToPreempt takes the
    Guaranteed pod (and then needs neither of the others). Its kill has no grace override:
    its own 30 s. HandlePodAdditions blocks in killPodNow until then, so the critical pod
    starts at 40 s. 1.18 writes the Failed status (reason Preempting) first; the current
    release when the containers stopped, with DisruptionTarget."""
    sim = simulate(
        scenario(
            [
                bound_pod("be"),
                bound_pod("burst", {"cpu": "500m"}),
                guaranteed("guar", "1", 30),
            ],
            [(10, critical_pod("crit", {"cpu": "1500m"}))],
            capacity={"cpu": "2"},
            version=version,
        )
    )
    assert rejected(sim) == []
    current = version != "1.18"
    assert preemption_story(sim, "default/guar") == {
        "events": [(10.0, "Preempting")],
        "failed": [40.0] if current else [10.0],
        "disruption": [(40.0, "TerminationByKubelet", PREEMPTED_DISRUPTION)] if current else [],
    }
    guar = sim.cluster.pods["default/guar"]
    assert (guar.phase, guar.reason, guar.message) == ("Failed", "Preempting", PREEMPTED)
    assert [e[3] for e in pod_events(sim, "default/guar")] == [PREEMPTED]
    assert times(sim, "PodPhase", pod="default/crit", phase="Running") == [40.0]
    for name in ("be", "burst"):
        assert sim.cluster.pods[f"default/{name}"].phase == "Running"


@pytest.mark.parametrize("version", ["1.18", CURRENT_VERSION])
def test_preempted_pods_are_killed_one_after_the_other(version: str) -> None:
    """Two Guaranteed pods of 1 cpu (grace 10 s and 20 s) fill 2 cpus; a critical pod of 2
    cpus comes at 10 s. Both are equally close to the 2000 m shortfall and request the same:
    smallerResourceRequest is true on a tie, so the later one (g2) is chosen first (Go's input
    order is the pod manager's map order; here the order the pods were bound). g2's kill
    takes 20 s, then g1's 10 s: the critical pod starts at 40 s."""
    sim = simulate(
        scenario(
            [guaranteed("g1", "1", 10), guaranteed("g2", "1", 20)],
            [(10, critical_pod("crit", {"cpu": "2"}))],
            capacity={"cpu": "2"},
            version=version,
        )
    )
    current = version != "1.18"
    assert preemption_story(sim, "default/g2")["events"] == [(10.0, "Preempting")]
    assert preemption_story(sim, "default/g1")["events"] == [(30.0, "Preempting")]
    assert times(sim, "PodPhase", pod="default/g2", phase="Failed") == [30.0 if current else 10.0]
    assert times(sim, "PodPhase", pod="default/g1", phase="Failed") == [40.0 if current else 30.0]
    assert times(sim, "PodPhase", pod="default/crit", phase="Running") == [40.0]


def test_a_critical_pod_short_of_a_pod_slot_preempts_a_best_effort_pod() -> None:
    """3 pod slots, all used; a critical pod without requests needs one slot
    (GetResourceRequest of pods is 1): any pod frees it, and the BestEffort class is tried
    last but needed first (the classes before it need none). be's grace is 5 s."""
    be = bound_pod("be", terminationGracePeriodSeconds=5)
    sim = simulate(
        scenario(
            [be, bound_pod("burst", {"cpu": "500m"}), guaranteed("guar", "1", 30)],
            [(10, critical_pod("crit"))],
            capacity={"pods": "3"},
        )
    )
    assert preemption_story(sim, "default/be")["events"] == [(10.0, "Preempting")]
    assert times(sim, "PodPhase", pod="default/crit", phase="Running") == [15.0]


@pytest.mark.parametrize("version", ["1.18", CURRENT_VERSION])
def test_a_critical_pod_that_nothing_can_make_room_for_is_rejected(version: str) -> None:
    """4 cpus asked on a 2-cpu node with 1500 m used: 3500 m short, 1500 m preemptable:
    HandleAdmissionFailure's error rejects it UnexpectedAdmissionError, nothing is killed."""
    sim = simulate(
        scenario(
            [bound_pod("burst", {"cpu": "500m"}), guaranteed("guar", "1", 30)],
            [(10, critical_pod("crit", {"cpu": "4"}))],
            capacity={"cpu": "2"},
            version=version,
        )
    )
    message = (
        "Unexpected error while attempting to recover from admission failure: preemption: "
        "error finding a set of pods to preempt: no set of running pods found to reclaim "
        "resources: [(res: cpu, q: 2000), ]"
    )
    assert rejected(sim) == [(10.0, "default/crit", "UnexpectedAdmissionError")]
    assert pod_events(sim, "default/crit") == [
        (10.0, "UnexpectedAdmissionError", "Warning", message)
    ]
    assert events(sim, "K8sEvent", reason="Preempting") == []


def test_only_lower_priority_pods_are_preemptable_by_a_critical_pod() -> None:
    """kubetypes.Preemptable: a critical pod may preempt any non-critical pod, a critical one
    only when its own priority is higher. A system-cluster-critical pod (2000000000) on the
    node cannot be preempted by another one of the same priority."""
    other = critical_pod("other-critical", {"cpu": "1500m"})
    other["spec"]["priorityClassName"] = "system-cluster-critical"
    crit = critical_pod("crit", {"cpu": "1"})
    crit["spec"]["priorityClassName"] = "system-cluster-critical"
    sim = simulate(scenario([other], [(10, crit)], capacity={"cpu": "2"}))
    assert rejected(sim) == [(10.0, "default/crit", "UnexpectedAdmissionError")]


def test_a_pod_failed_by_a_partitioned_kubelet_holds_no_room_on_that_kubelet() -> None:
    """The kubelet counts the pods it admitted by its own status (filterOutTerminatedPods reads
    the status manager): a pod it evicted while partitioned is Failed for it at once, though
    the API has it Running until the status manager sends the status. n-1 (2 cpus) runs hog
    (1500 m); cut off at 20 s, its kubelet evicts hog at the 40 s sync (5.5Gi of system memory
    from 40 s leaves 1.5Gi, below the hard 2Gi). A pod of 1 cpu is bound at 50 s, while the
    kubelet cannot see it. At the heal (60 s) the kubelet's status post resyncs its pods and
    admits late, before the status manager's syncBatch of that instant writes hog Failed."""
    hog = bound_pod("hog", {"cpu": "1500m", "memory": "512Mi"})
    hog["metadata"]["annotations"] = {"usage.playground/memory": "1Gi"}
    sim = simulate(
        scenario(
            [hog],
            [(50, bound_pod("late", {"cpu": "1"}))],
            capacity={"cpu": "2", "memory": "8Gi"},
            faults=[
                {"at": "20s", "type": "PartitionNode", "node": "n-1"},
                {"at": "40s", "type": "SetUsage", "node": "n-1", "memory": "5632Mi"},
                {"at": "60s", "type": "HealNode", "node": "n-1"},
            ],
            kubelet={"evictionHard": {"memory.available": "2Gi"}},
            duration="80s",
        )
    )
    assert times(sim, "PodEvicted", pod="default/hog") == [40.0]
    assert times(sim, "PodPhase", pod="default/hog", phase="Failed") == [60.0]
    late_running = [
        i
        for i, e in enumerate(sim.timeline.events)
        if e["type"] == "PodPhase" and e["pod"] == "default/late" and e["phase"] == "Running"
    ]
    hog_failed = [
        i
        for i, e in enumerate(sim.timeline.events)
        if e["type"] == "PodPhase" and e["pod"] == "default/hog" and e["phase"] == "Failed"
    ]
    assert late_running and hog_failed and late_running[0] < hog_failed[0]
    assert times(sim, "PodPhase", pod="default/late", phase="Running") == [60.0]
    assert rejected(sim) == []


# -- preemption.go helpers (pure) -----------------------------------------------------------------
def _qos_pod(name: str, qos: str, priority: int = 0, **requests: int) -> Pod:
    c = Container("c", requests=dict(requests))
    if qos == "Guaranteed":
        c.requests = {"cpu": requests.get("cpu", 100), "memory": requests.get("memory", 100)}
        c.limits = dict(c.requests)
    elif qos == "Burstable" and not requests:
        c.requests = {"memory": 1}
    return Pod("default", name, name, 0, containers=[c], priority=priority)


@pytest.mark.parametrize(
    ("requirements", "pods", "want"),
    [
        pytest.param([("cpu", 1000)], [_pod("a", cpu=600)], [("cpu", 400)], id="partly freed"),
        pytest.param([("cpu", 1000)], [_pod("a", cpu=600), _pod("b", cpu=600)], [], id="freed"),
        pytest.param([("pods", 2)], [_pod("a")], [("pods", 1)], id="each pod frees one slot"),
        pytest.param(
            [("cpu", 100), ("memory", 100)],
            [_pod("a", cpu=100)],
            [("memory", 100)],
            id="per resource",
        ),
    ],
)
def test_subtract(requirements, pods, want) -> None:
    assert subtract(requirements, pods) == want


@pytest.mark.parametrize(
    ("requirements", "pod", "want"),
    [
        pytest.param([("cpu", 1000)], _pod("a", cpu=1000), 0.0, id="meets it"),
        pytest.param([("cpu", 1000)], _pod("a", cpu=2000), 0.0, id="more than enough is 0"),
        pytest.param([("cpu", 1000)], _pod("a", cpu=500), 0.25, id="half left: 0.5 squared"),
        pytest.param(
            [("cpu", 1000), ("memory", 100)], _pod("a", cpu=500), 1.25, id="summed per resource"
        ),
    ],
)
def test_distance(requirements, pod, want) -> None:
    assert distance(requirements, pod) == want


def test_get_pods_to_preempt_by_class() -> None:
    """BestEffort pods go first, but a class is only used as far as the others fall short:
    1000 m short with a BestEffort pod (0 m), a Burstable one (500 m) and two Guaranteed
    ones (1000 m, 300 m): the Guaranteed 1000 m pod covers it alone (distance 0); then
    nothing is needed from the others."""
    crit = _pod("crit", cpu=1000)
    crit.priority = 2_000_001_000
    be = _qos_pod("be", "BestEffort")
    burst = _qos_pod("burst", "Burstable", cpu=500)
    g_big = _qos_pod("g-big", "Guaranteed", cpu=1000)
    g_small = _qos_pod("g-small", "Guaranteed", cpu=300)
    got = get_pods_to_preempt(crit, [be, burst, g_big, g_small], [("cpu", 1000)])
    assert [p.name for p in got] == ["g-big"]
    # 1500 m short: the Guaranteed pods needed if BestEffort and Burstable all went (1000 m
    # more: g-big), then the Burstable ones needed on top of BestEffort and g-big (500 m:
    # burst), then no BestEffort one. Evicted in class order: burst, then g-big.
    got = get_pods_to_preempt(crit, [be, burst, g_big, g_small], [("cpu", 1500)])
    assert [p.name for p in got] == ["burst", "g-big"]
    # A critical pod of equal priority is not preemptable: nothing frees 5000 m.
    other = _qos_pod("other", "Guaranteed", cpu=5000, priority=2_000_001_000)
    with pytest.raises(PreemptionError, match=r"\[\(res: cpu, q: 5000\), \]"):
        get_pods_to_preempt(crit, [other], [("cpu", 5000)])
