"""The event sink's goroutine (client.EventSink) as client-go's ``recordToSink``
(tools/record/event.go): each call taken from the queue is first correlated
(``EventCorrelator.EventCorrelate``, at the instant it is taken: after the previous call's
write was made); a call the spam filter skips (``result.Skip``) returns at once, with no
request and so no token from the client's bucket; only a written Event (``recordEvent``)
waits for its token (``Request.tryThrottle``). A skipped call must not delay the requests the
same client makes after it (node status writes, taint patches, MarkPodsNotReady's pod
updates share the node-controller's bucket).
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.client import Client, EventSink, Requests, Step
from controller.engine.cluster import Cluster
from controller.engine.core import Phase, Scheduler
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.timeline import Timeline

S = 1000


class _Owner:
    stopped = False


class _Cluster:
    """Cluster's two steps of recordToSink, noting when each is made: a message starting
    with "skip" is what the spam filter drops."""

    def __init__(self) -> None:
        self.correlated: list[tuple[int, str]] = []
        self.stored: list[tuple[int, str]] = []

    def correlate_event(
        self, now_ms: int, obj: str, reason: str, message: str, kind: str, recorded_ms: int
    ) -> Any:
        self.correlated.append((now_ms, message))
        return None if message.startswith("skip") else message

    def store_event(self, now_ms: int, pending: Any) -> None:
        self.stored.append((now_ms, pending))


@pytest.mark.parametrize(
    "qps, burst, messages, correlated, stored",
    [
        pytest.param(
            1,
            3,
            ["a", "b", "c"],
            [(0, "a"), (0, "b"), (0, "c")],
            [(0, "a"), (0, "b"), (0, "c")],
            id="tokens there: each correlated and written at once",
        ),
        pytest.param(
            1,
            1,
            ["a", "b", "c"],
            [(0, "a"), (0, "b"), (S, "c")],
            [(0, "a"), (S, "b"), (2 * S, "c")],
            id="1 qps: each taken (correlated) when the write before it was made",
        ),
        pytest.param(
            1,
            1,
            ["a", "skip-b", "c"],
            [(0, "a"), (0, "skip-b"), (0, "c")],
            [(0, "a"), (S, "c")],
            id="a skipped call takes no token: c at 1 s (2 s if b had taken one)",
        ),
        pytest.param(
            1,
            1,
            ["a", "b", "skip-c", "skip-d", "e"],
            [(0, "a"), (0, "b"), (S, "skip-c"), (S, "skip-d"), (S, "e")],
            [(0, "a"), (S, "b"), (2 * S, "e")],
            id="skipped after a wait: the next taken in the same instant",
        ),
    ],
)
def test_record_to_sink_correlates_at_dequeue_and_skips_without_a_token(
    qps: float,
    burst: int,
    messages: list[str],
    correlated: list[tuple[int, str]],
    stored: list[tuple[int, str]],
) -> None:
    sched = Scheduler()
    cluster = _Cluster()
    sink = EventSink(Client("c", qps, burst), sched, cluster, _Owner())  # type: ignore[arg-type]
    for m in messages:
        sink.post(0, "Pod/d/p", "NodeNotReady", m, "Warning")
    sched.run(60 * S)
    assert cluster.correlated == correlated
    assert cluster.stored == stored
    assert sink.client.requests == len(stored)


def _through_sink(calls: list[tuple[str, str]]) -> list[tuple[int, Any, int, bool]]:
    """Each (object, message) recorded at 0 as a NodeNotReady Warning through a sink at 1 qps,
    burst 1, over the real Cluster's correlator: the rows' (t, first, count, aggregated)."""
    sched = Scheduler()
    timeline = Timeline()
    cluster = Cluster(None, timeline)  # type: ignore[arg-type]  # events touch no object
    sink = EventSink(Client("c", 1, 1), sched, cluster, _Owner())
    for obj, message in calls:
        sink.post(0, obj, "NodeNotReady", message, "Warning")
    sched.run(60 * S)
    return [
        (e["t"], e.get("first"), e.get("count", 1), e.get("aggregated", False))
        for e in timeline.events
    ]


@pytest.mark.parametrize(
    "calls, rows",
    [
        # makeEvent stamps the call when it is recorded (0): the Event written at k s keeps
        # firstTimestamp 0.
        pytest.param(
            [(f"Pod/d/p{k}", "m") for k in range(3)],
            [(0, None, 1, False), (S, 0, 1, False), (2 * S, 0, 1, False)],
            id="distinct objects: written at 0, 1, 2 s, each firstTimestamp 0",
        ),
        # The 10th distinct message of one object and reason (k = 9) is combined by
        # EventAggregate at its correlator's now: the instant it is taken, 8 s (when the 9th
        # was written), not its recording (0) nor its token (9 s).
        pytest.param(
            [("Pod/d/p", f"m{k}") for k in range(10)],
            [(0, None, 1, False)] + [(k * S, 0, 1, False) for k in range(1, 9)]
            + [(9 * S, 8 * S, 1, True)],
            id="combined at the dequeue instant: firstTimestamp 8 s, written at 9 s",
        ),
        # A repeat keeps the first call's firstTimestamp (eventObserve).
        pytest.param(
            [("Pod/d/p", "m"), ("Pod/d/q", "m"), ("Pod/d/p", "m")],
            [(0, None, 1, False), (S, 0, 1, False), (2 * S, 0, 2, False)],
            id="a repeat written at 2 s: count 2, firstTimestamp 0",
        ),
    ],
)  # fmt: skip
def test_the_event_keeps_its_recording_instant_and_combines_at_dequeue(
    calls: list[tuple[str, str]], rows: list[tuple[int, Any, int, bool]]
) -> None:
    assert _through_sink(calls) == rows


T = 60 * S  # the bucket is full again long before: the t=0 RegisteredNode took one token
OBJ = "Pod/default/spam"

_SCENARIO = """apiVersion: playground/v1alpha1
kind: Scenario
metadata: {{name: spam}}
spec:
  kubernetesVersion: "1.34"
  duration: 600s
  controllerManager: {{kubeAPIQPS: {qps}, kubeAPIBurst: 1}}
  nodes: [{{name: n1}}]
"""


def _spam_then_requests(qps: float, events: int, start: int, requests: int) -> Simulation:
    """The node-controller records ``events`` identical NodeNotReady events on one pod at T;
    at ``start`` a goroutine of it makes ``requests`` pod updates through the same client."""
    sim = Simulation(load_scenario(_SCENARIO.format(qps=qps)))
    ctl = sim.controller
    made: list[int] = []
    sim.made = made  # type: ignore[attr-defined]

    def update(now: int) -> None:
        made.append(now)

    def spam() -> None:
        for _ in range(events):
            ctl._event(sim.sched.now_ms, OBJ, "NodeNotReady", "Node is not ready", "Warning")

    def goroutine() -> None:
        steps: list[Step] = [(update, ())] * requests
        Requests(ctl.client, sim.sched, Phase.CONTROLLER_MONITOR, ctl, steps).run()

    sim.sched.schedule(T, Phase.CONTROLLER_MONITOR, spam)
    sim.sched.schedule(start, Phase.CONTROLLER_MONITOR, goroutine)
    sim.run(T + 120 * S)
    return sim


@pytest.mark.parametrize(
    "qps, events, start, requests, written, dropped_at, made",
    [
        # 1 qps, burst 1: the k-th event (from 0) is taken at T + max(0, k - 1) s and written at
        # T + k s. The spam filter's 25 tokens (one back each 300 s: 24 s bring 0.08) last to
        # the 25th; the 26th to 30th are taken at T + 24 s, when the 25th was written, and
        # dropped at once. The 5 updates from T + 24.5 s: the next tokens, T + 25 .. 29 s (with
        # a token per dropped event they would be at T + 26, 28, 30, 32, 34 s).
        pytest.param(1, 30, T + 24_500, 5, 25, [T + 24 * S] * 5, [T + k * S for k in range(25, 30)],
                     id="1 qps: 5 dropped at T+24 s, updates at T+25..29 s"),
        # No drop: the same updates, after the 25th event's token.
        pytest.param(1, 25, T + 24_500, 5, 25, [], [T + k * S for k in range(25, 30)],
                     id="1 qps, 25 events: none dropped"),
        # 2 qps: the 26th is taken at T + 12 s and dropped (12 s bring 0.04 token); the 3
        # updates from T + 12.25 s at T + 12.5, 13, 13.5 s (else T + 13, 14, 14.5 s).
        pytest.param(2, 27, T + 12_250, 3, 25, [T + 12 * S] * 2, [T + 12_500, T + 13_000, T + 13_500],
                     id="2 qps: 2 dropped at T+12 s, updates at T+12.5..13.5 s"),
    ],
)  # fmt: skip
def test_dropped_events_do_not_delay_the_node_controllers_next_requests(
    qps: float,
    events: int,
    start: int,
    requests: int,
    written: int,
    dropped_at: list[int],
    made: list[int],
) -> None:
    sim = _spam_then_requests(qps, events, start, requests)
    assert sim.made == made  # type: ignore[attr-defined]
    rows = [e for e in sim.timeline.events if e.get("object") == OBJ]
    stored = [(e["t"], e.get("count", 1)) for e in rows if e["type"] == "K8sEvent"]
    assert stored == [(T + k * S // qps, k + 1) for k in range(written)]
    dropped = [(e["t"], e["count"]) for e in rows if e["type"] == "K8sEventDropped"]
    assert dropped == [(t, written + 1 + i) for i, t in enumerate(dropped_at)]
