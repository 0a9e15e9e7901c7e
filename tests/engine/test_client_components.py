"""Each kube-controller-manager component writes through its own clientset (client.py): the
taint-eviction controller's deletions and PodGC's, with the exact instants client-go's token
bucket gives them at --kube-api-qps / --kube-api-burst.

Every request takes one token, first come first served: from a full bucket of 30 at 20 qps the
k-th request of a backlog that starts at T is made at T + max(0, k - 30) x 50 ms.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.scheduler import PODS
from controller.engine.simulation import Simulation


def _pods(node: str, n: int, prefix: str) -> str:
    return "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: {prefix}-{j:03d}, "
        f"namespace: default}}, spec: {{nodeName: {node}, containers: [{{name: c}}]}}}}"
        for j in range(n)
    )


def _scenario(version: str, qps: float, burst: int, nodes: str, objects: str, faults: str) -> str:
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: clients}}
spec:
  kubernetesVersion: "{version}"
  duration: 600s
  controllerManager: {{kubeAPIQPS: {qps}, kubeAPIBurst: {burst}}}
  nodes:
{nodes}
  objects:
{objects}
  faults:
{faults}
"""


def _events(sim: Simulation, kind: str, **match: object) -> list[dict]:
    return [
        e
        for e in sim.timeline.events
        if e["type"] == kind and all(e.get(k) == v for k, v in match.items())
    ]


# -- PodGC ---------------------------------------------------------------------------------------
def _orphans(version: str, qps: float, burst: int = 30) -> Simulation:
    """100 pods bound to a-1; a-1 deleted at 30 s: the pass at 40 s quarantines the name
    (AddAfter 40 s), the pass at 80 s GETs it (NotFound) and force-deletes the 100 pods."""
    text = _scenario(
        version,
        qps,
        burst,
        "    - {name: a-1}\n    - {name: b-1}",
        _pods("a-1", 100, "p"),
        "    - {at: 30s, type: DeleteNode, node: a-1}",
    )
    sim = Simulation(load_scenario(text))
    sim.run(200_000)
    return sim


@pytest.mark.parametrize(
    "version, qps, requests, last",
    [
        # 1 GET + 100 x (status PATCH to Failed + DELETE) = 201 requests: the last at
        # 80,000 + (201 - 30) x 50 = 88,550 ms.
        pytest.param("1.34", 20, 201, 88_550, id="1.34-qps20: PATCH and DELETE per pod"),
        # 1.18's deletePod: 1 GET + 100 DELETEs = 101: 80,000 + 71 x 50 = 83,550 ms.
        pytest.param("1.18", 20, 101, 83_550, id="1.18-qps20: DELETE per pod"),
        # 1,000 qps: 1 ms apart past the burst: 80,000 + 171 = 80,171 ms.
        pytest.param("1.34", 1000, 201, 80_171, id="1.34-qps1000"),
        # No rate limiter (a negative QPS): every request at the pass's instant.
        pytest.param("1.34", -1, 201, 80_000, id="1.34-no-limiter"),
    ],
)
def test_podgc_deletes_100_orphans_through_its_client(
    version: str, qps: float, requests: int, last: int
) -> None:
    sim = _orphans(version, qps)
    gc = sim.pod_gc
    assert gc.client.name == "pod-garbage-collector"
    assert gc.client.requests == requests
    removed = [e["t"] for e in _events(sim, "PodRemoved") if e["pod"].startswith("default/p-")]
    deleted = _events(sim, "PodDeleted", by="PodGC", reason="OrphanedPod")
    assert len(removed) == len(deleted) == 100
    assert removed[0] == 80_000
    assert removed[-1] == last
    # The pass ended with its last request; wait.UntilWithContext starts the next 20 s later.
    assert gc.longest_pass == ((80_000, last) if last > 80_000 else (0, 0))


def test_podgc_next_pass_waits_for_the_long_one() -> None:
    """After the 8.55 s pass of 80 s the passes are at 108.55 s, 128.55 s, ...: a node
    deleted at 110 s is quarantined by the pass of 128.55 s (readyAt 168.55 s), found gone by
    the pass of 168.55 s (its pods deleted then), not at 160 s as on the 20 s grid."""
    text = _scenario(
        "1.34",
        20,
        30,
        "    - {name: a-1}\n    - {name: a-2}\n    - {name: b-1}",
        _pods("a-1", 100, "p") + "\n" + _pods("a-2", 1, "q"),
        "    - {at: 30s, type: DeleteNode, node: a-1}\n"
        "    - {at: 110s, type: DeleteNode, node: a-2}",
    )
    sim = Simulation(load_scenario(text))
    sim.run(200_000)
    q = _events(sim, "PodRemoved", pod="default/q-000")
    assert [e["t"] for e in q] == [168_550]


# -- the taint-eviction controller -------------------------------------------------------------
def _tainted(version: str, qps: float, burst: int = 30) -> Simulation:
    """Five nodes of 60 pods each get a NoExecute taint no pod tolerates at 30 s: the 300
    deletions are due at once (processPodOnNode: not all taints tolerated)."""
    nodes = "\n".join(f"    - {{name: a-{i}, zone: a}}" for i in range(1, 6))
    nodes += "\n    - {name: b-1, zone: b}"
    objects = "\n".join(_pods(f"a-{i}", 60, f"p{i}") for i in range(1, 6))
    faults = "\n".join(
        f"    - {{at: 30s, type: Taint, node: a-{i}, key: x, effect: NoExecute}}"
        for i in range(1, 6)
    )
    sim = Simulation(load_scenario(_scenario(version, qps, burst, nodes, objects, faults)))
    sim.run(200_000)
    return sim


@pytest.mark.parametrize(
    "version, client_name, per_pod, last_request",
    [
        # 1.34: the taint-eviction-controller's own clientset; per pod the
        # TaintManagerEviction event, then addConditionAndDeletePod's GET, status PATCH and
        # DELETE: 1,200 requests, the last at 30,000 + 1,170 x 50 = 88,500 ms.
        pytest.param("1.34", "taint-eviction-controller", 4, 88_500, id="1.34"),
        # 1.29 has the separate controller too.
        pytest.param("1.29", "taint-eviction-controller", 4, 88_500, id="1.29"),
        # 1.28: the NoExecuteTaintManager inside the node lifecycle controller, on the
        # node-controller's clientset (idle and full at 30 s); the same four requests.
        pytest.param("1.28", "node-controller", 4, 88_500, id="1.28"),
        # 1.18: the event and the DELETE: 600 requests, the last at 30,000 + 570 x 50.
        pytest.param("1.18", "node-controller", 2, 58_500, id="1.18"),
    ],
)
def test_taint_eviction_deletes_300_pods_through_its_client(
    version: str, client_name: str, per_pod: int, last_request: int
) -> None:
    sim = _tainted(version, 20)
    tm = sim.taint_manager
    assert tm is not None
    client = tm.client()
    assert client.name == client_name
    before = 0 if client_name != "node-controller" else _requests_without_taints(version)
    assert client.requests - before == 300 * per_pod
    assert client.busy_until == last_request
    deleted = [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == "PodDeleted" and e["reason"] == "TaintManagerEviction"
    ]
    assert len(deleted) == 300
    assert deleted[0] == 30_000
    # Each row a request makes is at one of the bucket's instants, in order.
    grid = {30_000 + max(0, k - 30) * 50 for k in range(1, 300 * per_pod + 1)}
    rows = [
        e["t"]
        for e in sim.timeline.events
        if (e["type"] == "PodDeleted" and e["reason"] == "TaintManagerEviction")
        or e["type"] == "PodDisruptionTarget"
        or (e["type"] == "K8sEvent" and e["reason"] == "TaintManagerEviction")
    ]
    assert set(rows) <= grid
    assert rows == sorted(rows)
    assert max(rows) == last_request


def _requests_without_taints(version: str) -> int:
    """The node-controller's requests in the same run without the taints (its own)."""
    nodes = "\n".join(f"    - {{name: a-{i}, zone: a}}" for i in range(1, 6))
    nodes += "\n    - {name: b-1, zone: b}"
    objects = "\n".join(_pods(f"a-{i}", 60, f"p{i}") for i in range(1, 6))
    text = _scenario(version, 20, 30, nodes, objects, "    []")
    sim = Simulation(load_scenario(text.replace("  faults:\n    []", "  faults: []")))
    sim.run(200_000)
    return sim.controller.client.requests


def test_taint_eviction_without_a_limiter_deletes_all_at_once() -> None:
    sim = _tainted("1.34", -1)
    deleted = {
        e["t"]
        for e in sim.timeline.events
        if e["type"] == "PodDeleted" and e["reason"] == "TaintManagerEviction"
    }
    assert deleted == {30_000}


# -- kube-scheduler's binds ----------------------------------------------------------------------
def _unbound(scheduler: str, fault: str = "") -> Simulation:
    """A Deployment of 500 replicas applied at 10 s on ten nodes of 110 pods: its
    ReplicaSet creates the 500 pods at once (burstReplicas 500; kube-controller-manager's
    clients without a limiter, kubeAPIQPS -1, so that the replicaset-controller's bucket does
    not spread the creates), one scheduling pass at 10 s assumes them all, and each bind
    waits for the scheduler's token. (The binds of t=0, the scenario's cluster as it stands,
    are not charged.)"""
    nodes = "\n".join(f"    - {{name: n-{i}}}" for i in range(1, 11))
    deployment = (
        "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default}, "
        "spec: {replicas: 500, selector: {matchLabels: {app: web}}, template: {metadata: "
        "{labels: {app: web}}, spec: {containers: [{name: c}]}}}}"
    )
    text = f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: binds}}
spec:
  kubernetesVersion: "1.34"
  duration: 60s
  controllerManager: {{kubeAPIQPS: -1}}
{scheduler}
  nodes:
{nodes}
  faults:
    - {{at: 10s, type: Apply, object: {deployment}}}
{fault}
"""
    sim = Simulation(load_scenario(text))
    sim.run(40_000)
    return sim


@pytest.mark.parametrize(
    "block, last",
    [
        # clientConnection's defaults, QPS 50 and Burst 100: the first 100 binds at 10 s, the
        # k-th at 10 s + (k - 100) x 20 ms: the 500th at 18,000 ms.
        pytest.param("", 18_000, id="defaults-50-100"),
        # 0 is defaulted to 50 / 100 (SetDefaults_KubeSchedulerConfiguration).
        pytest.param("  scheduler: {clientConnection: {qps: 0, burst: 0}}", 18_000, id="zeros"),
        # QPS 200, Burst 20: 10 s + (500 - 20) x 5 ms = 12,400 ms.
        pytest.param("  scheduler: {clientConnection: {qps: 200, burst: 20}}", 12_400, id="200-20"),
        # A negative QPS: no rate limiter, every bind in the pass.
        pytest.param("  scheduler: {clientConnection: {qps: -1}}", 10_000, id="no-limiter"),
    ],
)
def test_scheduler_binds_500_pods_through_its_client(block: str, last: int) -> None:
    sim = _unbound(block)
    bound = [e for e in sim.timeline.events if e["type"] == "PodScheduled"]
    assert len(bound) == 500
    assert bound[0]["t"] == 10_000
    assert bound[-1]["t"] == last
    assert sim.kube_scheduler.client.requests == 500
    assert not sim.kube_scheduler.assumed
    # Assumed pods count on their nodes while they wait (NodeInfo, SelectorSpread): the
    # pods spread as unthrottled binds would (50 a node), not onto the first empty node.
    per_node: dict[str, int] = {}
    for e in bound:
        per_node[e["node"]] = per_node.get(e["node"], 0) + 1
    assert sorted(per_node.values()) == [50] * 10


def test_a_pod_deleted_before_its_bind_is_not_bound() -> None:
    """The last pods' binds are due at up to 18 s; one deleted at 11 s is never bound
    (ForgetPod: it leaves NodeInfo); its ReplicaSet's replacement is."""
    first = _unbound("")
    late = [e["pod"] for e in first.timeline.events if e["type"] == "PodScheduled"][-1]
    sim = _unbound("", f"    - {{at: 11s, type: DeletePod, pod: {late}}}")
    bound = [e["pod"] for e in sim.timeline.events if e["type"] == "PodScheduled"]
    assert late not in bound
    assert len(bound) == 500  # the replacement
    assert sum(v[PODS] for v in sim.kube_scheduler.requested.values()) == 500


def test_binds_at_t0_are_the_cluster_as_it_stands() -> None:
    text = """apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: t0}
spec:
  nodes: [{name: n-1}, {name: n-2}, {name: n-3}]
  objects:
    - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default},
       spec: {replicas: 300, selector: {matchLabels: {app: web}},
              template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}}
"""
    sim = Simulation(load_scenario(text))
    sim.run(1_000)
    bound = {e["t"] for e in sim.timeline.events if e["type"] == "PodScheduled"}
    assert bound == {0}
    assert sim.kube_scheduler.client.requests == 0


@pytest.mark.parametrize(
    "block, path, words",
    [
        ("{clientConnection: {burst: -1}}", "clientConnection.burst", "must be non-negative"),
        ("{clientConnection: {qps: 0.0001}}", "clientConnection.qps", "floor"),
        ("{clientConnection: {qps: 1.0e+39}}", "clientConnection.qps", "float32"),
        ("{clientConnection: {burst: 3000000000}}", "clientConnection.burst", "<="),
        ("{clientConnection: {contentType: json}}", "clientConnection.contentType", ""),
        ("{profiles: []}", "profiles", ""),
    ],
)
def test_scheduler_client_parameters_refused(block: str, path: str, words: str) -> None:
    text = f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: x}}
spec:
  scheduler: {block}
  nodes: [{{name: n1}}]
"""
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert f"spec.scheduler.{path}" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize(
    "make, until, cut",
    [
        pytest.param(lambda: _orphans("1.34", 20), 200_000, 84_000, id="podgc-mid-pass"),
        pytest.param(lambda: _tainted("1.34", 20), 200_000, 50_000, id="taint-eviction"),
        pytest.param(lambda: _tainted("1.18", 20), 200_000, 45_000, id="taint-manager-1.18"),
        pytest.param(lambda: _unbound(""), 40_000, 14_000, id="scheduler-binds"),
    ],
)
def test_pickled_while_requests_wait_goes_on_identically(
    make: Callable[[], Simulation], until: int, cut: int
) -> None:
    """A room's engine is pickled between ticks: goroutines waiting for their tokens are
    continuations in the scheduler's queue, and go on after a round trip exactly as without."""
    whole = make()
    scenario = whole.scenario
    first = Simulation(scenario)
    first.run(cut)
    before = list(first.timeline.events)
    first.timeline.events.clear()
    restored: Simulation = pickle.loads(pickle.dumps(first))
    restored.run(until)
    assert before + restored.timeline.events == whole.timeline.events


# -- SetParameters: scheduler.clientConnection ----------------------------------------------------
_RAISE = "    - {at: 5s, type: SetParameters, scheduler: {clientConnection: {qps: 200, burst: 20}}}"


def test_set_parameters_scheduler_client_before_the_pods() -> None:
    """Raised at 5 s to QPS 200, Burst 20: the 500 binds of 10 s go as the scenario's
    200-20 setting makes them: 10 s + (500 - 20) x 5 ms = 12,400 ms (18,000 ms at 50 / 100)."""
    sim = _unbound("", _RAISE)
    bound = [e["t"] for e in sim.timeline.events if e["type"] == "PodScheduled"]
    assert len(bound) == 500
    assert (bound[0], bound[19], bound[20], bound[-1]) == (10_000, 10_000, 10_005, 12_400)
    (fault,) = _events(sim, "Fault", fault="SetParameters")
    assert fault["changes"] == [
        "scheduler.clientConnection.burst: 100 -> 20",
        "scheduler.clientConnection.qps: 50 -> 200",
    ]
    assert sim.config.scheduler.client_qps == 200 and sim.config.scheduler.client_burst == 20


def test_set_parameters_scheduler_client_gives_a_full_bucket() -> None:
    """At 50 / 100, the 500 binds of 10 s leave the bucket 400 tokens short (the last due at
    18,000 ms). Raised at 11 s to QPS 200, Burst 20, a second Deployment of 100 pods at 12 s
    binds through a new client with a full bucket: 20 at 12,000 ms, the k-th at 12 s +
    (k - 20) x 5 ms, the 100th at 12,400 ms (through the old bucket: 18,000 + 100 x 20 ms =
    20,000 ms). The binds already waiting keep their instants."""
    second = (
        "{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: default}, "
        "spec: {replicas: 100, selector: {matchLabels: {app: api}}, template: {metadata: "
        "{labels: {app: api}}, spec: {containers: [{name: c}]}}}}"
    )
    faults = (
        "    - {at: 11s, type: SetParameters, scheduler: {clientConnection: {qps: 200, burst: 20}}}\n"
        f"    - {{at: 12s, type: Apply, object: {second}}}"
    )
    sim = _unbound("", faults)
    bound = [e for e in sim.timeline.events if e["type"] == "PodScheduled"]
    web = [e["t"] for e in bound if e["pod"].startswith("default/web-")]
    api = [e["t"] for e in bound if e["pod"].startswith("default/api-")]
    assert (len(web), web[0], web[-1]) == (500, 10_000, 18_000)
    assert len(api) == 100
    assert (api[0], api[19], api[20], api[-1]) == (12_000, 12_000, 12_005, 12_400)


def test_set_parameters_scheduler_qps_only_and_zero_defaults() -> None:
    """qps alone keeps the burst; 0 is defaulted (50 / 100) as in the scenario."""
    sim = _unbound(
        "  scheduler: {clientConnection: {qps: 10, burst: 5}}",
        "    - {at: 5s, type: SetParameters, scheduler: {clientConnection: {qps: 0}}}",
    )
    (fault,) = _events(sim, "Fault", fault="SetParameters")
    assert fault["changes"] == ["scheduler.clientConnection.qps: 10 -> 50"]
    assert (sim.config.scheduler.client_qps, sim.config.scheduler.client_burst) == (50, 5)


@pytest.mark.parametrize(
    "block, path, words",
    [
        ("{clientConnection: {qps: 200, burst: -1}}", "clientConnection.burst", "non-negative"),
        ("{clientConnection: {qps: 0.0001}}", "clientConnection.qps", "floor"),
        ("{clientConnection: {burst: 3000000000}}", "clientConnection.burst", "<="),
        ("{clientConnection: {contentType: json}}", "clientConnection.contentType", ""),
        ("{profiles: []}", "profiles", ""),
    ],
)
def test_set_parameters_scheduler_refused_in_the_scenario(
    block: str, path: str, words: str
) -> None:
    fault = f"    - {{at: 5s, type: SetParameters, scheduler: {block}}}"
    with pytest.raises(ScenarioError) as err:
        _unbound("", fault)
    assert f"spec.faults[1].scheduler.{path}" in str(err.value) and words in str(err.value)


def test_set_parameters_scheduler_refused_live_changes_nothing() -> None:
    """A live SetParameters (an operator's action) with one bad field changes nothing: not the
    controller-manager section given with it, not the scheduler's qps."""
    from controller.engine.faults import apply_fault
    from controller.engine.scenario import Fault

    sim = _unbound("")
    cm_before = sim.config.controller_manager.kube_api_qps
    bad = Fault(
        at_ms=sim.now_ms,
        type="SetParameters",
        args={
            "controllerManager": {"kubeAPIQPS": 99},
            "scheduler": {"clientConnection": {"qps": 200, "burst": -3}},
        },
    )
    with pytest.raises(ScenarioError) as err:
        apply_fault(sim, bad, sim.now_ms)
    assert "scheduler.clientConnection.burst" in str(err.value)
    assert (sim.config.scheduler.client_qps, sim.config.scheduler.client_burst) == (50, 100)
    assert sim.config.controller_manager.kube_api_qps == cm_before
    assert not _events(sim, "Fault", fault="SetParameters")
