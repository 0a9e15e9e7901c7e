"""Client-side rate limiting: client-go's token bucket and the node-controller's clientset.

The bucket's cases are golang.org/x/time/rate's own (rate/rate_test.go: TestLimiterBurst1,
TestLimiterBurst3, TestLimiterJumpBackwards, TestSimpleReserve, TestMix, TestReserveJumpBack,
TestWaitSimple), with its ``d = 100 ms`` and ``t0`` an arbitrary instant; the zone outages
check the instants every request of the node-controller's client is made at.
"""

from __future__ import annotations

import pickle

import pytest

from controller.engine.client import DEFAULT_BURST, DEFAULT_QPS, Client, rest_limiter
from controller.engine.nodelifecycle.rate_limited_queue import NS_PER_MS, TokenBucket
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import zone_states

D = 100  # ms, rate_test.go's d
T0 = 7_000  # ms, rate_test.go's t0 (time.Now() there: any instant)


def t(k: int) -> int:
    return T0 + k * D


def _allow(lim: TokenBucket, at: int, n: int) -> bool:
    """Limiter.AllowN(at, n) = reserveN(at, n, 0).ok, through the port's reserve rule."""
    if n == 1:
        return lim.try_accept(at)
    ok, last, tokens = _reserve_n_zero(lim, at, n)
    return ok


def _reserve_n_zero(lim: TokenBucket, at: int, n: int) -> tuple[bool, int | None, float]:
    now_ns = at * NS_PER_MS
    last, tokens = lim._advance(now_ns)
    tokens -= float(n)
    wait_ns = lim._duration_from_tokens(-tokens) if tokens < 0 else 0
    ok = n <= lim.burst and wait_ns <= 0
    if ok:
        lim.last_ns, lim.tokens = now_ns, tokens
    else:
        lim.last_ns = last
    return ok, last, tokens


# (limit, burst, steps): ("allow", at, n, ok) | ("reserve", at, n, act or None)
CASES = {
    "TestLimiterBurst1": (
        10,
        1,
        [
            ("allow", t(0), 1, True),
            ("allow", t(0), 1, False),
            ("allow", t(0), 1, False),
            ("allow", t(1), 1, True),
            ("allow", t(1), 1, False),
            ("allow", t(1), 1, False),
            ("allow", t(2), 2, False),  # burst size is 1, so n=2 always fails
            ("allow", t(2), 1, True),
            ("allow", t(2), 1, False),
        ],
    ),
    "TestLimiterBurst3": (
        10,
        3,
        [
            ("allow", t(0), 2, True),
            ("allow", t(0), 2, False),
            ("allow", t(0), 1, True),
            ("allow", t(0), 1, False),
            ("allow", t(1), 4, False),
            ("allow", t(2), 1, True),
            ("allow", t(3), 1, True),
            ("allow", t(4), 1, True),
            ("allow", t(4), 1, True),
            ("allow", t(4), 1, False),
            ("allow", t(4), 1, False),
            ("allow", t(9), 3, True),
        ],
    ),
    "TestLimiterJumpBackwards": (
        10,
        3,
        [
            ("allow", t(1), 1, True),  # start at t1
            ("allow", t(0), 1, True),  # jump back to t0, two tokens remain
            ("allow", t(0), 1, True),
            ("allow", t(0), 1, False),
            ("allow", t(0), 1, False),
            ("allow", t(1), 1, True),  # got a token
            ("allow", t(1), 1, False),
            ("allow", t(1), 1, False),
            ("allow", t(2), 1, True),  # got another token
            ("allow", t(2), 1, False),
            ("allow", t(2), 1, False),
        ],
    ),
    "TestSimpleReserve": (
        10,
        2,
        [
            ("reserve", t(0), 2, t(0)),
            ("reserve", t(0), 2, t(2)),
            ("reserve", t(3), 2, t(4)),
        ],
    ),
    "TestMix": (
        10,
        2,
        [
            ("reserve", t(0), 3, None),  # n > burst
            ("reserve", t(0), 2, t(0)),
            ("allow", t(1), 2, False),  # not enough tokens
            ("reserve", t(1), 2, t(2)),
            ("allow", t(1), 1, False),  # negative tokens
            ("allow", t(3), 1, True),
        ],
    ),
    "TestReserveJumpBack": (
        10,
        2,
        [
            ("reserve", t(1), 2, t(1)),  # start at t1
            ("reserve", t(0), 1, t(1)),  # should violate Limit, Burst
            ("reserve", t(2), 2, t(3)),
        ],
    ),
    # TestWaitSimple: WaitN is reserveN(now, n, InfDuration) then a sleep of the delay.
    "TestWaitSimple": (
        10,
        3,
        [
            ("reserve", t(0), 4, None),  # exceed-burst-error
            ("reserve", t(0), 2, t(0)),  # act-now
            ("reserve", t(0), 3, t(2)),  # act-later: delay 2 d
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_token_bucket_as_x_time_rate(name: str) -> None:
    limit, burst, steps = CASES[name]
    lim = TokenBucket(limit, burst)
    for i, (kind, at, n, want) in enumerate(steps):
        if kind == "allow":
            got: object = _allow(lim, at, n)
        else:
            act = lim.reserve_ns(at, n)
            got = None if act is None else act // NS_PER_MS
        assert got == want, f"{name} step {i}: {kind}({at - T0} ms, {n}) = {got}, want {want}"


def test_zero_limit_spends_the_burst_once() -> None:
    """TestZeroLimit: NewLimiter(0, 1) allows once, then never."""
    lim = TokenBucket(0, 1)
    assert lim.reserve_ns(0) == 0
    assert lim.reserve_ns(0) is None


@pytest.mark.parametrize(
    "qps, burst, want",
    [
        pytest.param(0, 0, (DEFAULT_QPS, DEFAULT_BURST), id="0 and 0: client-go's 5 and 10"),
        pytest.param(20, 30, (20.0, 30), id="kube-controller-manager's 20 and 30"),
        pytest.param(-1, 30, None, id="negative QPS: no rate limiter"),
        pytest.param(50, 0, (50.0, DEFAULT_BURST), id="burst 0 alone: 10"),
    ],
)
def test_rest_config_defaulting(qps: float, burst: int, want: tuple[float, int] | None) -> None:
    lim = rest_limiter(qps, burst)
    assert (None if lim is None else (lim.qps, lim.burst)) == want


def test_waits_round_up_to_the_millisecond_without_drift() -> None:
    """At 3 qps the k-th token after the burst comes at k x 333.33.. ms: each request is made
    at the first whole millisecond at or after its token (ceil), and the bucket keeps its
    exact state, so the rounding never adds up (334 ms steps would give 3,340 at k=10)."""
    c = Client("x", 3, 1)
    times = [c.reserve(0) for _ in range(11)]
    assert times == [0, 334, 667, 1000, 1334, 1667, 2000, 2334, 2667, 3000, 3334]
    assert c.backlog_ms(1000) == 2334


def _outage_text(version: str, qps: float, burst: int, nodes: int = 200) -> str:
    pods = "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}-{j}, namespace: default}}, "
        f"spec: {{nodeName: a-{i}, containers: [{{name: c}}]}}}}"
        for i in range(1, nodes + 1)
        for j in range(30)
    )
    return f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: outage}}
spec:
  kubernetesVersion: "{version}"
  duration: 600s
  controllerManager: {{kubeAPIQPS: {qps}, kubeAPIBurst: {burst}}}
  nodes:
    - generate: {{count: {nodes}, namePrefix: a-, zone: a}}
    - generate: {{count: 3, namePrefix: b-, zone: b}}
  objects:
{pods}
  faults:
    - {{at: 30s, type: ZoneOutage, zone: a}}
"""


def _outage(version: str, qps: float, burst: int, until_ms: int) -> Simulation:
    sim = Simulation(load_scenario(_outage_text(version, qps, burst)))
    sim.run(until_ms)
    return sim


def _not_ready_writes(sim: Simulation) -> list[int]:
    return [
        e["t"] for e in sim.timeline.events if e["type"] == "PodReady" and e["status"] == "False"
    ]


def test_zone_outage_1_18_default_qps_last_mark_pods_not_ready() -> None:
    """200 nodes x 30 pods lose zone a at 30 s; Kubernetes 1.18, --kube-api-qps 20,
    --kube-api-burst 30. By hand, from the rules:

    - leases and status are renewed every 10 s from 0: the last renewal before the outage is
      at 20 s, seen by the pass at 20 s (probe 20 s); the first pass with now > 20 + 40 s is
      at 65 s = T, and it finds all 200 nodes late (same kubelet offsets);
    - the bucket is full at T: its last requests were the 203 RegisteredNode events of t=0
      (the last at (203 - 30) x 50 ms = 8.65 s), and 30 tokens need 1.5 s to come back;
    - 1.18's pass visits the nodes one after another; per zone-a node, in this order: the
      UpdateStatus to Unknown (the pass), the unreachable:NoSchedule patch its node update
      triggers (doNoScheduleTaintingPass, reserved at that instant), the NodeNotReady event
      (the event sink, idle: it reserves at once), MarkAllPodsNotReady's List, and 30 pod
      UpdateStatus: 34 requests, 6,800 for the 200 nodes; zone b's 3 nodes make none;
    - every request takes one token, first come first served: the first 30 at T, the k-th
      at T + (k - 30) x 50 ms. The last MarkPodsNotReady write is request 6,800:
      65,000 + 6,770 x 50 = 403,500 ms (338.5 s of backlog; the engine without a limiter
      writes all 6,000 at 65,000 ms)."""
    sim = _outage("1.18", 20, 30, 410_000)
    writes = _not_ready_writes(sim)
    assert len(writes) == 6000
    assert writes[0] == 65_000
    assert writes[-1] == 403_500
    # The next monitor pass starts 5 s after this one ended (wait.Until), at 408.5 s: only
    # then are the nodes queued for the NoExecute taint, and the first is tainted at once.
    tainted = [
        e["t"]
        for e in sim.timeline.events
        if e["type"] == "TaintAdded" and e["effect"] == "NoExecute"
    ]
    assert tainted == [408_500]


def test_zone_outage_without_a_limiter_is_todays_timeline() -> None:
    """A negative QPS is no rate limiter (rest.RESTClientFor): every write at the pass's
    instant, as the engine did before clients had buckets."""
    sim = _outage("1.18", -1, 30, 70_000)
    assert set(_not_ready_writes(sim)) == {65_000}
    assert sim.controller.client.waited == 0


def test_zone_outage_at_1000_qps() -> None:
    """The same at --kube-api-qps 1000: the same 6,800 requests, 1 ms apart past the burst:
    the last at 65,000 + 6,770 = 71,770 ms. (1,000 qps is not "no limit" at this size.)"""
    writes = _not_ready_writes(_outage("1.18", 1000, 30, 80_000))
    assert (len(writes), writes[0], writes[-1]) == (6000, 65_000, 71_770)


def test_zone_outage_1_34_every_request_takes_the_next_token() -> None:
    """1.34: the pass runs 8 workers (workqueue.ParallelizeUntil) and MarkPodsNotReady
    records an event per pod, so the event sink competes with the workers for the tokens
    and its queue (1,000) overflows: events are dropped. Whoever makes them, the node-
    controller's requests from T on (T = 75 s: the grace period is 50 s since 1.32) are
    made at T + max(0, k - 30) x 50 ms for the k-th: no token is lost or given twice. The
    last pod write is request 7,189 (6,200 of the workers, 200 NoSchedule patches and 789
    events before it: the sink holds one token in nine while the 8 workers wait too),
    at 75,000 + 7,159 x 50 = 432,950 ms."""
    sim = _outage("1.34", 20, 30, 440_000)
    writes = _not_ready_writes(sim)
    assert (len(writes), writes[0]) == (6000, 75_000)
    mine = {"NodeReady", "PodReady", "TaintAdded", "K8sEvent"}
    times = [
        e["t"]
        for e in sim.timeline.events
        if 75_000 <= e["t"] <= writes[-1]
        and e["type"] in mine
        and (e["type"] != "PodReady" or e["status"] == "False")
        and (e["type"] != "NodeReady" or e["status"] == "Unknown")
        and (e["type"] != "K8sEvent" or e["reason"] == "NodeNotReady")
        and (e["type"] != "TaintAdded" or e["effect"] == "NoSchedule")
    ]
    assert times == [75_000 + max(0, k - 30) * 50 for k in range(1, len(times) + 1)]
    assert sim.controller.events.dropped > 0
    assert writes[-1] == times[-1] == 432_950
    assert len(times) == 7189


@pytest.mark.parametrize(
    "block, path, words",
    [
        ("{kubeAPIQPS: 20, kubeAPIBurst: -1}", "kubeAPIBurst", "refuse every request"),
        ("{kubeAPIQPS: 0.0001}", "kubeAPIQPS", "floor"),
        ("{kubeAPIQPS: 1.0e+39}", "kubeAPIQPS", "float32"),
        ("{kubeAPIBurst: 3000000000}", "kubeAPIBurst", "<="),
    ],
)
def test_client_parameters_refused(block: str, path: str, words: str) -> None:
    text = f"""apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: x}}
spec:
  controllerManager: {block}
  nodes: [{{name: n1}}]
"""
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert path in str(err.value) and words in str(err.value)


def test_client_parameters_taken() -> None:
    text = """apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: x}
spec:
  controllerManager: {kubeAPIQPS: -1, kubeAPIBurst: -5}
  nodes: [{name: n1}]
"""
    sim = Simulation(load_scenario(text))
    assert sim.controller.client.limiter is None


@pytest.mark.parametrize("version, started", [("1.18", 65), ("1.34", 75)])
def test_pickled_in_the_middle_of_a_waiting_pass_goes_on_identically(
    version: str, started: int
) -> None:
    """A room's engine is pickled between ticks: the pass's workers wait in the scheduler's
    queue as continuations, and go on after a round trip exactly as without one (20 nodes
    x 30 pods at 2 qps: the pass that finds them late waits for minutes)."""
    text = _outage_text(version, 2, 5, nodes=20)
    whole = Simulation(load_scenario(text))
    whole.run(300_000)
    first = Simulation(load_scenario(text))
    first.run(120_000)
    # In the middle of the pass: the page's zone view shows how long it has run.
    assert {z["zone"]: z["clientBacklog"] for z in zone_states(first)} == {
        "a": 120 - started,
        "b": 120 - started,
    }
    before = list(first.timeline.events)
    first.timeline.events.clear()
    restored: Simulation = pickle.loads(pickle.dumps(first))
    restored.run(300_000)
    assert before + restored.timeline.events == whole.timeline.events
