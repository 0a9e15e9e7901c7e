"""The ReplicaSet controller's API client (issue #37, workloads/clients.py, replicaset.py;
docs/ports/workload-clients.md §2 and §8): one ``replicaset-controller`` bucket at
--kube-api-qps / --kube-api-burst (20 / 30) for the pod POSTs and DELETEs, the status PUTs and
the SuccessfulCreate events (the sink on the same client, the spam filter's 25 per
ReplicaSet first); creates in slowStartBatch batches 1, 2, 4, ... (the next batch once every
create of the previous is made), at most 500 per sync.

From a full bucket at 20 qps / 30 burst, the k-th token of a backlog that starts at T comes at
T + max(0, k - 30) x 50 ms. The cluster as the scenario states it at t=0 is not charged.
"""

from __future__ import annotations

import pytest

from controller.engine.client import Client
from controller.engine.faults import set_parameters
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation


def _rs(name: str, replicas: int) -> str:
    return (
        f"{{apiVersion: apps/v1, kind: ReplicaSet, metadata: {{name: {name}, namespace: default}},"
        f" spec: {{replicas: {replicas}, selector: {{matchLabels: {{app: {name}}}}},"
        f" template: {{metadata: {{labels: {{app: {name}}}}},"
        f" spec: {{containers: [{{name: c}}]}}}}}}}}"
    )


def _scenario(objects: str = "", faults: str = "", cm: str = "") -> str:
    return (
        f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: workload-clients}}
spec:
  kubernetesVersion: "1.31"
  duration: 9000s
{cm}
  nodes:
"""
        + "".join(
            f"    - {{name: n-{i}, capacity: {{cpu: '64', pods: '110'}}}}\n" for i in range(3)
        )
        + f"""  objects:
{objects or "    []"}
  faults:
{faults or "    []"}
"""
    )


def _run(text: str, until_ms: int) -> Simulation:
    sim = Simulation(load_scenario(text))
    sim.run(until_ms)
    return sim


def _times(sim: Simulation, kind: str, **match: object) -> list[int]:
    return [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == kind and all(e.get(k) == v for k, v in match.items())
    ]


def _rs_client(sim: Simulation) -> Client:
    return sim.workloads.procs["ReplicaSet"].client


# -- a ReplicaSet of 300 applied at 10 s -----------------------------------------------------
@pytest.mark.parametrize(
    "cm, last, at_once, events_last, requests",
    [
        # §8: batches 1, 2, 4, 8 and their 15 events take tokens 1-30 at 10 s; from batch 5 on
        # the sink gets one token per batch boundary: 19 events before the last create, which
        # is token 319: 10 s + (319 - 30) x 50 ms = 24.45 s. The 25 events end at 24.85 s; the
        # status PUT (replicas 300) and the one of the pods Ready follow.
        pytest.param("", 24_450, 15, 24_850, 327, id="20qps-30burst"),
        # A bucket of 1,000 at 1,000 qps: every create at once, as before the port. More
        # requests: no sync holds the key for seconds, so each instant a pod turns Ready (the
        # kubelets' own buckets spread them) is a sync of its own with its status PUT.
        pytest.param(
            "  controllerManager: {kubeAPIQPS: 1000, kubeAPIBurst: 1000}",
            10_000,
            300,
            10_000,
            527,
            id="1000qps-1000burst",
        ),
        # 40 qps, burst 30: the same order, 25 ms a token: 10 s + 289 x 25 ms.
        pytest.param(
            "  controllerManager: {kubeAPIQPS: 40, kubeAPIBurst: 30}",
            17_225,
            15,
            17_425,
            327,
            id="40qps-30burst",
        ),
    ],
)
def test_three_hundred_replicas_wait_for_the_replicaset_controllers_tokens(
    cm: str, last: int, at_once: int, events_last: int, requests: int
) -> None:
    sim = _run(
        _scenario(faults=f"    - {{at: 10s, type: Apply, object: {_rs('web', 300)}}}", cm=cm),
        60_000,
    )
    created = _times(sim, "PodCreated")
    assert len(created) == 300
    assert created[-1] == last
    assert created.count(10_000) == at_once
    written = _times(sim, "K8sEvent", reason="SuccessfulCreate")
    assert len(written) == 25 and written[-1] == events_last
    assert len(_times(sim, "K8sEventDropped", reason="SuccessfulCreate")) == 275
    assert _rs_client(sim).requests == requests


def test_slow_start_batches() -> None:
    """The creates of batch k (1, 2, 4, ...) start once batch k - 1 is made: at 20 qps the
    first of batch 5 (creates 16-31) waits for token 31 (50 ms), batch 6's first (create 32)
    for token 48: the 16 of batch 5 and the event the first of them posted (token 47)."""
    sim = _run(
        _scenario(faults=f"    - {{at: 10s, type: Apply, object: {_rs('web', 300)}}}"), 60_000
    )
    created = _times(sim, "PodCreated")
    assert created[15] == 10_050 and created[30] == 10_800
    assert created[31] == 10_000 + (48 - 30) * 50


def test_the_replicas_of_t0_are_the_cluster_as_it_stands() -> None:
    """A ReplicaSet of 300 in the scenario: every pod at 0, no token taken."""
    sim = _run(_scenario(objects=f"    - {_rs('web', 300)}"), 5_000)
    assert _times(sim, "PodCreated") == [0] * 300
    assert _rs_client(sim).requests == 0


# -- 30 pods deleted at once and replaced ----------------------------------------------------
def _thirty_deleted(at_s: int) -> Simulation:
    """A ReplicaSet of 30 at t=0 (its 30 events at 0 spend the spam filter's 25), its pods
    deleted together (kubectl, graceful) at ``at_s``: 30 replacements in one sync."""
    first = _run(_scenario(objects=f"    - {_rs('web', 30)}"), 0)
    names = [p.key for p in first.workloads.pods_of("ReplicaSet/default/web")]
    faults = "\n".join(f"    - {{at: {at_s}s, type: DeletePod, pod: {k}}}" for k in names)
    return _run(_scenario(objects=f"    - {_rs('web', 30)}", faults=faults), at_s * 1000 + 5_000)


@pytest.mark.parametrize(
    "at_s, events, last",
    [
        # The filter has had 1/300 of a token per second since t=0: none at 10 s; the 30
        # creates are tokens 1-30, all at once.
        pytest.param(10, 0, 10_000, id="spent-event-budget"),
        # 10 tokens at 3,000 s: the first 10 creates' events are written (tokens 1-20 with
        # them), creates 11-30 are tokens 21-40: the last at 10 x 50 ms.
        pytest.param(3000, 10, 3_000_500, id="ten-events"),
        # A full budget (25 x 300 s): batches 1-4 and their 15 events are tokens 1-30, batch 5
        # (15 creates) tokens 31-45: the last replacement at 0.75 s.
        pytest.param(7500, 25, 7_500_750, id="full-event-budget"),
    ],
)
def test_thirty_replacements(at_s: int, events: int, last: int) -> None:
    sim = _thirty_deleted(at_s)
    created = [t for t in _times(sim, "PodCreated") if t > 0]
    assert len(created) == 30 and created[-1] == last
    written = [t for t in _times(sim, "K8sEvent", reason="SuccessfulCreate") if t > 0]
    assert len(written) == events
    # The status PUT after the creates (replicas 0 listed before them) takes the next token.
    assert _rs_client(sim).busy_until > last


# -- restarts and new parameters ----------------------------------------------------------------
def test_a_restarted_controller_manager_has_a_full_bucket() -> None:
    """At 12 s the 300-pod burst is 2 s into its backlog; a kube-controller-manager restarted
    then is a new process: the old one's pending creates never happen, the new one lists the
    ReplicaSet and creates the rest from a full bucket."""
    faults = (
        f"    - {{at: 10s, type: Apply, object: {_rs('web', 300)}}}\n"
        "    - {at: 12s, type: RestartControllerManager}"
    )
    sim = _run(_scenario(faults=faults), 11_999)
    before = sim.workloads.procs["ReplicaSet"]
    sim.run(60_000)
    assert before.stopped and sim.workloads.procs["ReplicaSet"] is not before
    created = _times(sim, "PodCreated")
    assert len(created) == 300
    # Before the restart: tokens up to 12 s (k = 70: 15 + 16 creates of batches 1-5, the
    # event at token 47, batch 6's first 22 creates at 0.90 ... 1.95 s): 53 creates.
    assert sum(1 for t in created if t < 12_000) == 53
    # The spam filter (one correlator per component, kept here across the restart) let 17 of
    # the ReplicaSet's 25 through before: 16 written, the 17th waiting for token 80 (12.5 s)
    # and lost with the old process. The new bucket's 30 tokens at 12 s: 22 creates and the
    # 8 events left.
    assert created.count(12_000) == 22
    written = _times(sim, "K8sEvent", reason="SuccessfulCreate")
    assert len(written) == 24 and written[-8:] == [12_000] * 8


def test_set_parameters_gives_a_new_client() -> None:
    sim = _run(_scenario(objects=f"    - {_rs('web', 3)}"), 1_000)
    client = _rs_client(sim)
    set_parameters(sim, {"controllerManager": {"kubeAPIQPS": 5}}, 1_000)
    sim.workloads.scale("ReplicaSet/web", 4, 1_000)
    sim.run(2_000)
    assert _rs_client(sim) is not client and _rs_client(sim).limiter.qps == 5


def test_each_controller_records_as_its_own_component() -> None:
    """The recorder's EventSource.Component, not a guess from the reason: a DaemonSet's
    SuccessfulCreate goes to daemonset-controller's correlator."""
    ds = (
        "{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent, namespace: default},"
        " spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}},"
        " spec: {containers: [{name: c}]}}}}"
    )
    sim = _run(_scenario(objects=f"    - {_rs('web', 3)}\n    - {ds}"), 1_000)
    sources = {source for source, _ in sim.cluster.correlators}
    assert {"replicaset-controller", "daemonset-controller"} <= sources


# -- the DaemonSet controller ----------------------------------------------------------------------
_DS = (
    "{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent, namespace: default},"
    " spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}},"
    " spec: {containers: [{name: c}]}}}}"
)


def _ds_scenario(objects: str = "    []", faults: str = "    []") -> str:
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: ds-client}}
spec:
  kubernetesVersion: "1.31"
  duration: 600s
  nodes:
    - {{generate: {{count: 300, namePrefix: n-}}}}
  objects:
{objects}
  faults:
{faults}
"""


def test_a_daemonset_on_300_nodes_waits_for_its_tokens() -> None:
    """daemon-set-controller, 20 / 30: the first sync creates burstReplicas = 250 in batches
    1 ... 64, 123; the last is token 268 (250 creates and 18 events): 10 s + 238 x 50 ms =
    21.9 s. Its status PUT is token 270 (22.0 s; the sink took 269), then the key syncs again:
    the 50 left from token 272 (22.1 s); the last pod is token 326 (300 creates, the 25
    events, one PUT): 24.8 s."""
    sim = _run(_ds_scenario(faults=f"    - {{at: 10s, type: Apply, object: {_DS}}}"), 60_000)
    created = _times(sim, "PodCreated")
    assert len(created) == 300
    assert created.count(10_000) == 15
    assert created[249] == 21_900 and created[250] == 22_100 and created[-1] == 24_800
    assert len(_times(sim, "K8sEvent", reason="SuccessfulCreate")) == 25
    assert ("daemonset-controller", "") in sim.cluster.correlators
    assert sim.workloads.procs["DaemonSet"].client.name == "daemon-set-controller"


def test_a_daemonset_of_t0_is_the_cluster_as_it_stands() -> None:
    sim = _run(_ds_scenario(objects=f"    - {_DS}"), 5_000)
    assert _times(sim, "PodCreated") == [0] * 300
    assert sim.workloads.procs["DaemonSet"].client.requests == 0


def test_a_restart_during_a_daemonsets_burst_creates_the_lost_pods() -> None:
    """The creates still waiting for the old process's tokens at 15 s are lost with it; the
    new process syncs every node again and creates them: one pod a node in the end."""
    faults = (
        f"    - {{at: 10s, type: Apply, object: {_DS}}}\n"
        "    - {at: 15s, type: RestartControllerManager}"
    )
    sim = _run(_ds_scenario(faults=faults), 60_000)
    created = _times(sim, "PodCreated")
    before = sum(1 for t in created if t < 15_000)
    assert 0 < before < 250
    assert len(created) == 300
    assert len({p.node_name for p in sim.workloads.pods_of("DaemonSet/default/agent")}) == 300


# -- the StatefulSet controller ----------------------------------------------------------------
def _sts(replicas: int) -> str:
    return (
        "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: default},"
        f" spec: {{replicas: {replicas}, podManagementPolicy: Parallel, serviceName: db,"
        " selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}},"
        " spec: {containers: [{name: c}]}}}}"
    )


@pytest.mark.parametrize(
    "version, last",
    [
        # Up to 1.27 the sync creates one pod after another: create k is token 2k - 1 while
        # its event is written (the first 25), so creates 26-100 are tokens 51-125:
        # 10 s + 95 x 50 ms.
        pytest.param("1.27", 14_750, id="1.27-one-after-another"),
        # 1.28 (#117865): slow-start batches 1 ... 32, 37; as the ReplicaSet's, the sink gets a
        # token per batch boundary: the last create is token 117 (100 creates, 17 events):
        # 10 s + 87 x 50 ms.
        pytest.param("1.28", 14_350, id="1.28-slow-start"),
    ],
)
def test_a_parallel_statefulset_of_100_waits_for_its_tokens(version: str, last: int) -> None:
    text = _scenario(faults=f"    - {{at: 10s, type: Apply, object: {_sts(100)}}}").replace(
        '"1.31"', f'"{version}"'
    )
    sim = _run(text, 60_000)
    created = _times(sim, "PodCreated")
    assert len(created) == 100 and created.count(10_000) == 15 and created[-1] == last
    assert len(_times(sim, "K8sEvent", reason="SuccessfulCreate")) == 25
    assert ("statefulset-controller", "") in sim.cluster.correlators
    assert sim.workloads.procs["StatefulSet"].client.name == "statefulset-controller"


def test_a_statefulset_of_t0_is_the_cluster_as_it_stands() -> None:
    sim = _run(_scenario(objects=f"    - {_sts(100)}"), 5_000)
    assert _times(sim, "PodCreated") == [0] * 100
    assert sim.workloads.procs["StatefulSet"].client.requests == 0
