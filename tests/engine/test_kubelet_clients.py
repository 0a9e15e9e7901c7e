"""The kubelet's API clients (issue #37, kubelet/clients.py, kubelet/status_loop.py): the
status manager's GET + PATCH (+ DELETE of a finished pod) wait for the tokens of the main
client (kubeAPIQPS / kubeAPIBurst), every kubelet event for those of the event client
(eventRecordQPS / eventBurst); defaults by the kubelet's own release: 5 / 10 in 1.18, 50 / 100
from 1.27 (#116121). Exact instants as client-go's token bucket gives them: from a full bucket
of B at Q qps, the n-th request of a backlog that starts at T is made at
T + max(0, n - B) x (1000 / Q) ms. The cluster as the scenario states it at t=0 is not charged.
"""

from __future__ import annotations

import pytest

from controller.engine.faults import set_parameters
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation


def _pod(name: str, node: str, cpu: str = "") -> str:
    res = f", resources: {{requests: {{cpu: '{cpu}'}}}}" if cpu else ""
    return (
        f"{{apiVersion: v1, kind: Pod, metadata: {{name: {name}, namespace: default}}, "
        f"spec: {{nodeName: {node}, containers: [{{name: c{res}}}]}}}}"
    )


def _scenario(version: str, kubelet: str = "", objects: str = "", faults: str = "") -> str:
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: kubelet-clients}}
spec:
  kubernetesVersion: "{version}"
  duration: 600s
{kubelet}
  nodes:
    - {{name: n-1, capacity: {{cpu: "64", pods: "110"}}}}
  objects:
{objects or "    []"}
  faults:
{faults or "    []"}
"""


def _run(text: str, until_ms: int = 200_000) -> Simulation:
    sim = Simulation(load_scenario(text))
    sim.run(until_ms)
    return sim


def _times(sim: Simulation, kind: str, **match: object) -> list[int]:
    return [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == kind and all(e.get(k) == v for k, v in match.items())
    ]


# -- pod statuses: 30 pods started after t=0 -----------------------------------------------------
def _thirty_started(version: str, kubelet: str = "") -> Simulation:
    """30 pods bound to n-1 by nodeName, applied at 10 s: each a Running + Ready status, one
    sync of 2 requests (GET, PATCH)."""
    faults = "\n".join(
        f"    - {{at: 10s, type: Apply, object: {_pod(f'p-{k:02d}', 'n-1')}}}" for k in range(30)
    )
    return _run(_scenario(version, kubelet, faults=faults), 60_000)


@pytest.mark.parametrize(
    "version, kubelet, last",
    [
        # 1.18 (5 qps, burst 10): pod k's PATCH is request 2k: 10 s + (60 - 10) x 200 ms.
        pytest.param("1.18", "", 20_000, id="1.18-defaults"),
        # 1.31 (50 / 100): 60 requests within the burst: nothing moves.
        pytest.param("1.31", "", 10_000, id="1.31-defaults"),
        # kubeAPIQPS 0 is client-go's 5: with burst 10 as 1.18.
        pytest.param(
            "1.31", "  kubelet: {kubeAPIQPS: 0, kubeAPIBurst: 10}", 20_000, id="1.31-qps0-is-5"
        ),
        # kubeAPIBurst 0 is the release's default: 10 in 1.18 (as above) ...
        pytest.param("1.18", "  kubelet: {kubeAPIBurst: 0}", 20_000, id="1.18-burst0-is-10"),
        # ... 100 from 1.27: at 5 qps the 60 requests still fit the burst.
        pytest.param(
            "1.31", "  kubelet: {kubeAPIQPS: 5, kubeAPIBurst: 0}", 10_000, id="1.31-burst0-is-100"
        ),
        # 10 qps, burst 20: 10 s + (60 - 20) x 100 ms.
        pytest.param(
            "1.18", "  kubelet: {kubeAPIQPS: 10, kubeAPIBurst: 20}", 14_000, id="1.18-10-20"
        ),
    ],
)
def test_thirty_pod_statuses_wait_for_the_kubelets_tokens(
    version: str, kubelet: str, last: int
) -> None:
    sim = _thirty_started(version, kubelet)
    running = _times(sim, "PodPhase", phase="Running")
    ready = _times(sim, "PodReady", status="True")
    assert len(running) == len(ready) == 30
    assert running[-1] == ready[-1] == last
    if last == 20_000:
        # Pods 1-5 in the burst; pod k >= 6 at 10 s + (2k - 10) x 200 ms.
        assert running[:5] == [10_000] * 5
        assert running[5] == 10_400 and running[9] == 12_000 and running[19] == 16_000
    assert sim.kubelets["n-1"].process.client.requests == 60


def test_pods_of_t0_are_the_cluster_as_it_stands() -> None:
    """30 pods in the scenario at t=0 on a 1.18 node: Running at 0, no token taken."""
    objects = "\n".join(f"    - {_pod(f'p-{k:02d}', 'n-1')}" for k in range(30))
    sim = _run(_scenario("1.18", objects=objects), 5_000)
    assert _times(sim, "PodPhase", phase="Running") == [0] * 30
    assert sim.kubelets["n-1"].process.client.requests == 0


# -- deletes: 110 pods deleted at 10 s (grace 5 s) -----------------------------------------------
@pytest.mark.parametrize(
    "version, last",
    [
        # 1.18: GET + PATCH (container statuses) + DELETE = 330 requests from 15 s:
        # 15 s + (330 - 10) x 200 ms.
        pytest.param("1.18", 79_000, id="1.18"),
        # 1.31: GET + PATCH (terminal phase) + DELETE: 15 s + (330 - 100) x 20 ms.
        pytest.param("1.31", 19_600, id="1.31"),
    ],
)
def test_deleting_110_pods_waits_for_the_kubelets_deletes(version: str, last: int) -> None:
    objects = "\n".join(f"    - {_pod(f'p-{k:03d}', 'n-1')}" for k in range(110))
    faults = "\n".join(
        f"    - {{at: 10s, type: DeletePod, pod: default/p-{k:03d}, gracePeriodSeconds: 5}}"
        for k in range(110)
    )
    sim = _run(_scenario(version, objects=objects, faults=faults), 120_000)
    removed = _times(sim, "PodRemoved")
    assert len(removed) == 110
    assert removed[0] == 15_000
    assert removed[-1] == last
    assert sim.kubelets["n-1"].process.client.requests == 330


# -- events: 15 pods the kubelet rejects ----------------------------------------------------------
@pytest.mark.parametrize(
    "version, kubelet, spacing",
    [
        # 1.18 (eventRecordQPS 5, eventBurst 10): the 11th to 15th 200 ms apart.
        pytest.param("1.18", "", 200, id="1.18"),
        # eventRecordQPS 0 is client-go's 5 (1.37's "unlimited" is not in 1.31).
        pytest.param("1.31", "  kubelet: {eventRecordQPS: 0, eventBurst: 10}", 200, id="1.31-0"),
        # 1.31 (50 / 100): all 15 at once.
        pytest.param("1.31", "", 0, id="1.31"),
    ],
)
def test_kubelet_events_wait_for_the_event_clients_tokens(
    version: str, kubelet: str, spacing: int
) -> None:
    """Each pod asks for 100 cpu on a 64-cpu node: rejectPod's Warning event (OutOfcpu)."""
    faults = "\n".join(
        f"    - {{at: 10s, type: Apply, object: {_pod(f'big-{k:02d}', 'n-1', '100')}}}"
        for k in range(15)
    )
    sim = _run(_scenario(version, kubelet, faults=faults), 30_000)
    warned = [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == "K8sEvent" and e["object"].startswith("Pod/default/big-")
    ]
    assert warned == [10_000] * 10 + [10_000 + k * spacing for k in range(1, 6)]
    assert sim.kubelets["n-1"].process.event_client.requests == 15


# -- a restart is a new process ---------------------------------------------------------------
def test_a_restarted_kubelet_has_full_buckets() -> None:
    """At 12 s the 30 pods' syncs wait for n-1's tokens (its bucket empty); the kubelet
    restarted then is a new process: a new client, its bucket full, the old one's backlog
    gone with it; the new one resyncs the pods (set_ready)."""
    faults = "\n".join(
        f"    - {{at: 10s, type: Apply, object: {_pod(f'p-{k:02d}', 'n-1')}}}" for k in range(30)
    )
    sim = Simulation(load_scenario(_scenario("1.18", faults=faults)))
    sim.run(12_000)
    kubelet = sim.kubelets["n-1"]
    before = kubelet.process
    assert before.client.backlog_ms(12_000) > 0
    kubelet.stop(12_000)
    kubelet.start(12_000)
    assert kubelet.process is not before and before.stopped
    # The new process resyncs its pods at once: 10 requests from the full bucket at 12 s,
    # the 11th waits 200 ms (the old bucket was 30 requests behind).
    assert kubelet.process.client.requests == 11
    assert kubelet.process.client.busy_until == 12_200


# -- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "field, flag",
    [
        ("kubeAPIQPS", "--kube-api-qps"),
        ("kubeAPIBurst", "--kube-api-burst"),
        ("eventRecordQPS", "--event-qps"),
        ("eventBurst", "--event-burst"),
    ],
)
def test_negative_kubelet_client_fields_refused(field: str, flag: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(_scenario("1.18", f"  kubelet: {{{field}: -1}}"))
    assert f"spec.kubelet.{field}" in str(err.value)
    assert f"{field} ({flag}) -1 must not be a negative number" in str(err.value)


def test_a_fractional_kubelet_qps_is_refused() -> None:
    """kubeAPIQPS is an int32 in KubeletConfiguration."""
    with pytest.raises(ScenarioError) as err:
        load_scenario(_scenario("1.31", "  kubelet: {kubeAPIQPS: 2.5}"))
    assert "spec.kubelet.kubeAPIQPS" in str(err.value) and "integer" in str(err.value)


def test_defaults_by_the_kubelets_own_release() -> None:
    """A 1.27 kubelet under a 1.30 control plane, and 1.30's own: 50 / 100 each; a 1.18
    control plane's: 5 / 10."""
    old = load_scenario(_scenario("1.18"))
    assert (old.nodes[0].kubelet.kube_api_qps, old.nodes[0].kubelet.event_burst) == (5, 10)
    new = load_scenario(_scenario("1.31"))
    assert (new.nodes[0].kubelet.kube_api_qps, new.nodes[0].kubelet.kube_api_burst) == (50, 100)
    assert (new.nodes[0].kubelet.event_record_qps, new.nodes[0].kubelet.event_burst) == (50, 100)


def test_set_parameters_negative_changes_nothing() -> None:
    sim = _run(_scenario("1.18"), 1_000)
    kubelet = sim.kubelets["n-1"]
    client = kubelet.process.client
    with pytest.raises(ScenarioError) as err:
        set_parameters(sim, {"kubelet": {"kubeAPIQPS": 20, "eventBurst": -3}}, 1_000)
    assert "kubelet.eventBurst" in str(err.value)
    assert kubelet.cfg.kube_api_qps == 5 and kubelet.process.client is client
    set_parameters(sim, {"kubelet": {"kubeAPIQPS": 20}}, 1_000)
    assert kubelet.cfg.kube_api_qps == 20 and kubelet.process.client is not client


def test_a_kubelet_config_file_brings_the_client_fields() -> None:
    """Import of a KubeletConfiguration: the four fields go into spec.kubelet, checked as the
    scenario's (a negative one refused naming the field)."""
    from controller.kube_io.components import merge_kubelet_config

    spec: dict = {}
    report: list = []
    text = (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "kubeAPIQPS: 25\nkubeAPIBurst: 50\neventRecordQPS: 0\neventBurst: 20\n"
    )
    merge_kubelet_config(spec, text, report)
    assert spec["kubelet"] == {
        "kubeAPIQPS": 25,
        "kubeAPIBurst": 50,
        "eventRecordQPS": 0,
        "eventBurst": 20,
    }
    assert report == []
    with pytest.raises(ScenarioError) as err:
        merge_kubelet_config({}, text.replace("eventBurst: 20", "eventBurst: -1"), [])
    assert "eventBurst" in str(err.value) and "must not be a negative number" in str(err.value)
