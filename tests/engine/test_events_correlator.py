"""Events as the API stores them: client-go's EventCorrelator (tools/record/events_cache.go) per
recorder, at exact simulated times. Expected values follow the Go source:

- EventAggregator.EventAggregate: the distinct messages of similar events (same source,
  object, type, reason) within 600 s of the last one; when there are 10 (``Len() <
  maxEvents`` fails) the call becomes "(combined from similar events): <message>", keyed by the
  aggregate key, so every later one patches that one Event; a gap over 600 s starts afresh.
- eventLogger.eventObserve: an identical call patches the stored Event (count + 1, its
  firstTimestamp kept, lastTimestamp now).
- EventSourceObjectSpamFilter.Filter: 25 tokens per source and object, one more each 300 s;
  the call without a token is dropped (the logger has counted it all the same).
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.cluster import Cluster
from controller.engine.events import COMBINED_PREFIX, EventCorrelator, stored_events
from controller.engine.timeline import Timeline, to_public

S = 1000


def record(calls: list[tuple[int, str, str, str]]) -> list[dict[str, Any]]:
    """Each (t ms, object, reason, message) through Cluster.record_event (Warning)."""
    timeline = Timeline()
    cluster = Cluster(None, timeline)  # type: ignore[arg-type]  # events touch no object
    for t, obj, reason, message in calls:
        cluster.record_event(t, obj, reason, message, "Warning")
    return list(timeline.events)


def summary(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (r["t"] / S, r["type"], r["message"], r.get("count", 1), r.get("first", r["t"]) / S)
        for r in rows
    ]


@pytest.mark.parametrize(
    ("calls", "want"),
    [
        pytest.param(
            [(t * S, "Node/a", "NodeNotReady", "same") for t in (0, 5, 60)],
            [
                (0.0, "K8sEvent", "same", 1, 0.0),
                (5.0, "K8sEvent", "same", 2, 0.0),
                (60.0, "K8sEvent", "same", 3, 0.0),
            ],
            id="identical calls: one Event, count 3, firstTimestamp 0 s",
        ),
        pytest.param(
            [
                (i * S, "ReplicaSet/d/r", "SuccessfulCreate", f"Created pod: p{i}")
                for i in range(12)
            ],
            [
                *[(float(i), "K8sEvent", f"Created pod: p{i}", 1, float(i)) for i in range(9)],
                (9.0, "K8sEvent", COMBINED_PREFIX + "Created pod: p9", 1, 9.0),
                (10.0, "K8sEvent", COMBINED_PREFIX + "Created pod: p10", 2, 9.0),
                (11.0, "K8sEvent", COMBINED_PREFIX + "Created pod: p11", 3, 9.0),
            ],
            id="10th distinct similar message combined, the next ones patch it",
        ),
        pytest.param(
            [
                *[(i * S, "ReplicaSet/d/r", "SuccessfulCreate", f"m{i}") for i in range(9)],
                (608 * S + 1, "ReplicaSet/d/r", "SuccessfulCreate", "m9"),
            ],
            [
                *[(float(i), "K8sEvent", f"m{i}", 1, float(i)) for i in range(9)],
                (608.001, "K8sEvent", "m9", 1, 608.001),
            ],
            id="over 600 s after the last similar one: the record starts afresh",
        ),
        pytest.param(
            [
                *[(i * S, "ReplicaSet/d/r", "SuccessfulCreate", f"m{i}") for i in range(9)],
                (608 * S, "ReplicaSet/d/r", "SuccessfulCreate", "m9"),
            ],
            [
                *[(float(i), "K8sEvent", f"m{i}", 1, float(i)) for i in range(9)],
                (608.0, "K8sEvent", COMBINED_PREFIX + "m9", 1, 608.0),
            ],
            id="exactly 600 s after the last similar one: still aggregated",
        ),
        pytest.param(
            [(i * S, "ReplicaSet/d/r", "SuccessfulCreate", f"m{i % 3}") for i in range(12)],
            [
                *[(float(i), "K8sEvent", f"m{i}", 1, float(i)) for i in range(3)],
                *[
                    (float(i), "K8sEvent", f"m{i % 3}", i // 3 + 1, float(i % 3))
                    for i in range(3, 12)
                ],
            ],
            id="3 distinct messages repeated: counted, never combined",
        ),
    ],
)
def test_aggregation_and_counting(calls, want) -> None:
    assert summary(record(calls)) == want


def test_the_spam_filter_drops_past_its_burst_and_refills_every_5_minutes() -> None:
    """26 calls at 0 s on one object (any reason): 25 stored, the 26th dropped; a token again
    at 300 s (not at 299.999 s), the next at 600 s. The dropped call was counted: the Event
    stored at 300 s has count 27."""
    calls = [(0, "Pod/d/p", "Killing", "again")] * 26
    calls += [
        (299_999, "Pod/d/p", "Killing", "again"),
        (300 * S, "Pod/d/p", "Killing", "again"),
        (300 * S, "Pod/d/p", "Killing", "again"),
        (600 * S, "Pod/d/p", "Killing", "again"),
    ]
    rows = record(calls)
    got = [(r["t"] / S, r["type"], r.get("count", 1)) for r in rows]
    assert got == [
        *[(0.0, "K8sEvent", i) for i in range(1, 26)],
        (0.0, "K8sEventDropped", 26),
        (299.999, "K8sEventDropped", 27),
        (300.0, "K8sEvent", 28),
        (300.0, "K8sEventDropped", 29),
        (600.0, "K8sEvent", 30),
    ]
    stored = stored_events(list(enumerate(rows)))
    assert [(idx, e["count"], e["first"], e["t"]) for idx, e in stored] == [(0, 30, 0, 600 * S)]


def test_the_spam_filter_is_per_object_and_per_recorder() -> None:
    """Another object, or another recorder (a kubelet's: its node as host), has its own 25."""
    timeline = Timeline()
    cluster = Cluster(None, timeline)  # type: ignore[arg-type]
    for _ in range(25):
        cluster.record_event(0, "Pod/d/p", "NodeNotReady", "x", "Warning")
    cluster.record_event(0, "Pod/d/q", "NodeNotReady", "x", "Warning")
    cluster.record_event(0, "Pod/d/p", "Evicted", "x", "Warning", "node-1")
    cluster.record_event(0, "Pod/d/p", "NodeNotReady", "x", "Warning")
    assert [r["type"] for r in timeline.events[-3:]] == [
        "K8sEvent",
        "K8sEvent",
        "K8sEventDropped",
    ]


def test_the_scheduler_records_through_the_events_api_without_a_correlator() -> None:
    rows = record([(0, "Pod/d/p", "FailedScheduling", "no nodes")] * 30)
    assert [(r["type"], r.get("count", 1)) for r in rows] == [("K8sEvent", 1)] * 30


def test_stored_events_merge_patches_and_the_public_form_has_seconds() -> None:
    rows = record(
        [(i * S, "ReplicaSet/d/r", "SuccessfulCreate", f"m{i}") for i in range(11)]
        + [(20 * S, "ReplicaSet/d/r", "SuccessfulCreate", "m0")]
    )
    stored = stored_events(list(enumerate(rows)))
    assert [(idx, e["message"], e["count"], e["first"] / S) for idx, e in stored] == [
        *[(i, f"m{i}", 1, float(i)) for i in range(9)],
        (9, COMBINED_PREFIX + "m0", 3, 9.0),
    ]
    assert to_public(rows[10])["first"] == 9.0
    # Created by the row that made each Event (the API server's creationTimestamp): m0's
    # repeat at 20 s patches the combined Event created at 9 s.
    assert [e["created"] / S for _, e in stored] == [float(i) for i in range(10)]


def test_the_aggregate_record_pops_the_first_message_inserted() -> None:
    """PopAny: Go's is any element; here the oldest, so a repeat of the popped message is
    combined again and a repeat of a kept one is its own Event's next count."""
    c = EventCorrelator()
    for i in range(10):
        c.correlate(i * S, "RS/r", "R", f"m{i}", "Normal")
    kept = c.correlate(10 * S, "RS/r", "R", "m5", "Normal")
    assert (kept.aggregated, kept.message, kept.count) == (False, "m5", 2)
    popped = c.correlate(11 * S, "RS/r", "R", "m0", "Normal")
    assert (popped.aggregated, popped.count) == (True, 2)
