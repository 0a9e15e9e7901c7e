"""What the API stores of a recorder's events: client-go's ``EventCorrelator``
(k8s.io/client-go/tools/record/events_cache.go), one per recorder (``record.EventRecorder``:
one per component instance, as the kubelet of each node and each kube-controller-manager
controller build theirs), ported function by function.

``EventCorrelate`` runs, for each call to the recorder, ``EventAggregator.EventAggregate``
(similar events, same source, object, type and reason but another message, become one
"(combined from similar events): ..." event once 10 distinct messages were seen within 10
minutes), ``eventLogger.eventObserve`` (a repeat of a cached key patches the stored Event:
count + 1, the first timestamp kept, the last one now) and ``EventSourceObjectSpamFilter.Filter``
(25 events per source and object, then one per 5 minutes; a filtered call writes nothing, but
the logger has counted it, so the next stored write carries its count).

kube-scheduler records through the events.k8s.io API (``tools/events``), whose
EventBroadcaster has no correlator of this kind: its events are not passed through here.

Differences, documented: ``sets.String.PopAny`` pops an arbitrary message of the aggregate
record (Go's map order); here the one inserted first. The spam filter's token bucket
(``flowcontrol.NewTokenBucketPassiveRateLimiterWithClock``, x/time/rate) counts in float
seconds; here in integer milliseconds (a token each 300,000 ms), exact at every boundary.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_LRU_CACHE_ENTRIES = 4096  # maxLruCacheEntries
DEFAULT_AGGREGATE_MAX_EVENTS = 10  # defaultAggregateMaxEvents
DEFAULT_AGGREGATE_INTERVAL_MS = 600 * 1000  # defaultAggregateIntervalInSeconds
DEFAULT_SPAM_BURST = 25  # defaultSpamBurst
DEFAULT_SPAM_MS_PER_TOKEN = 300 * 1000  # defaultSpamQPS = 1/300
COMBINED_PREFIX = "(combined from similar events): "

# The component a reason's recorder reports as (EventSource.Component). The kubelet's are
# recorded with the node's name as host.
SCHEDULER = "default-scheduler"
EVENT_SOURCES = {
    "TaintManagerEviction": "taint-eviction-controller",
    "NodeNotReady": "node-controller",
    "RegisteredNode": "node-controller",
    "RemovingNode": "node-controller",
    "DeletingNode": "node-controller",
    "NodeHasSufficientMemory": "kubelet",
    "NodeHasNoDiskPressure": "kubelet",
    "NodeHasSufficientPID": "kubelet",
    "NodeHasInsufficientMemory": "kubelet",
    "NodeHasDiskPressure": "kubelet",
    "NodeHasInsufficientPID": "kubelet",
    "NodeReady": "kubelet",
    "NodeNotSchedulable": "kubelet",
    "NodeSchedulable": "kubelet",
    "Evicted": "kubelet",
    "Killing": "kubelet",
    "Preempting": "kubelet",
    "EvictionThresholdMet": "kubelet",
    "FreeDiskSpaceFailed": "kubelet",
    "ImageGCFailed": "kubelet",
    "ScalingReplicaSet": "deployment-controller",
    "SuccessfulCreate": "replicaset-controller",
    "SuccessfulDelete": "replicaset-controller",
    "Scheduled": SCHEDULER,
    "FailedScheduling": SCHEDULER,
}
DEFAULT_SOURCE = "kube-controller-manager"


class _LRU:
    """golang-lru's Cache (``lru.New(maxLruCacheEntries)``): Get refreshes an entry, Add
    inserts or refreshes, the least recently used entry goes past the size."""

    __slots__ = ("size", "items")

    def __init__(self, size: int = MAX_LRU_CACHE_ENTRIES) -> None:
        self.size = size
        self.items: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        value = self.items.get(key)
        if value is not None:
            self.items.move_to_end(key)
        return value

    def add(self, key: Any, value: Any) -> None:
        self.items[key] = value
        self.items.move_to_end(key)
        if len(self.items) > self.size:
            self.items.popitem(last=False)


@dataclass(slots=True)
class _AggregateRecord:
    """aggregateRecord: the distinct messages (localKeys) and when the last one came."""

    local_keys: dict[str, None] = field(default_factory=dict)
    last_ms: int | None = None


@dataclass(slots=True)
class _EventLog:
    """eventLog: what the logger remembers of a stored Event."""

    count: int
    first_ms: int


@dataclass(slots=True)
class _SpamRecord:
    """spamRecord: the passive token bucket of one source and object, in milliseconds of
    refill (``tokens_ms`` / ``DEFAULT_SPAM_MS_PER_TOKEN`` tokens), full when created."""

    tokens_ms: int
    last_ms: int


@dataclass(frozen=True, slots=True)
class Correlated:
    """EventCorrelateResult: ``skip`` (the spam filter dropped the call) or the Event to
    write: its message (combined or not), its count and first timestamp."""

    skip: bool
    message: str
    count: int
    first_ms: int
    aggregated: bool


class EventCorrelator:
    """NewEventCorrelator with the default CorrelatorOptions (what record.NewBroadcaster
    gives every recorder): EventAggregatorByReasonFunc, EventAggregatorByReasonMessageFunc,
    10 events, 600 s, spam burst 25 and qps 1/300 keyed by getSpamKey."""

    __slots__ = ("aggregates", "logs", "spam")

    def __init__(self) -> None:
        self.aggregates = _LRU()
        self.logs = _LRU()
        self.spam = _LRU()

    def correlate(
        self,
        now_ms: int,
        obj: str,
        reason: str,
        message: str,
        event_type: str,
        recorded_ms: int | None = None,
    ) -> Correlated:
        """EventCorrelator.EventCorrelate: aggregate, observe, then filter, by the correlator's
        clock ``now_ms`` (when recordToSink takes the call from its queue). ``recorded_ms``
        (default ``now_ms``) is the call's own timestamp (recorderImpl.makeEvent's
        ``clock.Now()``: firstTimestamp and lastTimestamp); a combined Event is made by
        EventAggregate with the correlator's ``now`` as both."""
        message, key, aggregated = self._aggregate(now_ms, obj, reason, message, event_type)
        first_ms = now_ms if aggregated or recorded_ms is None else recorded_ms
        count, first_ms = self._observe(first_ms, key)
        skip = self._filter(now_ms, obj)
        return Correlated(skip, message, count, first_ms, aggregated)

    def _aggregate(
        self, now_ms: int, obj: str, reason: str, message: str, event_type: str
    ) -> tuple[str, tuple[Any, ...], bool]:
        """EventAggregator.EventAggregate with EventAggregatorByReasonFunc (the aggregate key:
        everything but the message, which is the local key) and getEventKey (everything)."""
        event_key = ("event", obj, event_type, reason, message)
        aggregate_key = ("aggregate", obj, event_type, reason)
        record = self.aggregates.get(aggregate_key) or _AggregateRecord()
        # "Is the previous record too old?": a record never seen has a zero lastTimestamp.
        if record.last_ms is None or now_ms - record.last_ms > DEFAULT_AGGREGATE_INTERVAL_MS:
            record = _AggregateRecord()
        record.local_keys[message] = None
        record.last_ms = now_ms
        self.aggregates.add(aggregate_key, record)
        if len(record.local_keys) < DEFAULT_AGGREGATE_MAX_EVENTS:
            return message, event_key, False
        # record.localKeys.PopAny(): Go pops an arbitrary one; the first inserted here.
        del record.local_keys[next(iter(record.local_keys))]
        # EventAggregatorByReasonMessageFunc
        return COMBINED_PREFIX + message, aggregate_key, True

    def _observe(self, first_ms: int, key: tuple[Any, ...]) -> tuple[int, int]:
        """eventLogger.eventObserve: a cached key's Event is patched (count + 1, its
        firstTimestamp kept); a new key's is created with count 1 and the call's own
        firstTimestamp ``first_ms``."""
        last: _EventLog | None = self.logs.get(key)
        log = _EventLog(1, first_ms) if last is None else _EventLog(last.count + 1, last.first_ms)
        self.logs.add(key, log)
        return log.count, log.first_ms

    def _filter(self, now_ms: int, obj: str) -> bool:
        """EventSourceObjectSpamFilter.Filter keyed by getSpamKey (source and involved object;
        one correlator per source, so the object): ``!rateLimiter.TryAccept()``."""
        record: _SpamRecord | None = self.spam.get(obj)
        full = DEFAULT_SPAM_BURST * DEFAULT_SPAM_MS_PER_TOKEN
        if record is None:
            record = _SpamRecord(full, now_ms)
        record.tokens_ms = min(full, record.tokens_ms + (now_ms - record.last_ms))
        record.last_ms = now_ms
        self.spam.add(obj, record)
        if record.tokens_ms >= DEFAULT_SPAM_MS_PER_TOKEN:
            record.tokens_ms -= DEFAULT_SPAM_MS_PER_TOKEN
            return False
        return True


def event_source(
    reason: str, obj: str, host: str | None, component: str | None = None
) -> tuple[str, str]:
    """The recorder (EventSource: component, host) that records ``reason`` on ``obj``: a
    kubelet's carry its node's name as host. ``component``: the recorder's own
    ``EventSource.Component`` when the caller knows it (the workload controllers pass theirs);
    else guessed from the reason (EVENT_SOURCES)."""
    if component is None:
        component = EVENT_SOURCES.get(reason, DEFAULT_SOURCE)
    if host is not None:
        return "kubelet", host
    if component == "kubelet":
        return component, obj.split("/")[-1] if obj.startswith("Node/") else ""
    return component, ""


def correlated_row(
    now_ms: int,
    obj: str,
    reason: str,
    message: str,
    event_type: str,
    result: Correlated | None,
) -> dict[str, Any]:
    """The timeline row of a recorder call at ``now_ms``: ``K8sEvent`` (the Event the API
    stores then, created, or patched when ``count`` > 1; ``aggregated`` when combined,
    ``recorded`` then the call's own message) or ``K8sEventDropped`` (the spam filter's).
    ``first``, its firstTimestamp, when it patches a repeat or is not ``now_ms`` (a call
    that waited in its sink's queue keeps the instant it was recorded, makeEvent's)."""
    row: dict[str, Any] = {
        "t": now_ms,
        "type": "K8sEvent",
        "object": obj,
        "reason": reason,
        "message": message,
        "eventType": event_type,
    }
    if result is None:
        return row
    if result.skip:
        row["type"] = "K8sEventDropped"
    if result.aggregated:
        row["message"] = result.message
        row["aggregated"] = True
        row["recorded"] = message
    if result.count > 1:
        row["count"] = result.count
    if result.count > 1 or result.first_ms != now_ms:
        row["first"] = result.first_ms
    return row


def stored_events(rows: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The Event objects the API holds after ``rows`` (index, K8sEvent row), in creation
    order: a row of count 1 creates one; a row of count n > 1 patches the latest Event of the
    same key (object, type, reason, and the message or, for a combined one, the aggregate);
    a patch with no Event to patch creates it (recordEvent's fallback to Create). Each item is
    (the index of the row that created it, the last row with ``count``, ``first``,
    ``lastIdx``, the index of that last row, and ``created``, the instant the Create was made
    (the API server's creationTimestamp; an Event that waited for its client's token was
    recorded, its ``first``, before), set)."""
    out: list[tuple[int, dict[str, Any]]] = []
    latest: dict[tuple[Any, ...], int] = {}
    for idx, row in rows:
        if row.get("type", "K8sEvent") != "K8sEvent":
            continue
        if row.get("aggregated"):
            key: tuple[Any, ...] = ("a", row["object"], row["eventType"], row["reason"])
        else:
            key = ("e", row["object"], row["eventType"], row["reason"], row["message"])
        count = int(row.get("count", 1))
        merged = {**row, "count": count, "first": row.get("first", row["t"]), "lastIdx": idx}
        at = latest.get(key)
        if count > 1 and at is not None:
            merged["created"] = out[at][1]["created"]
            out[at] = (out[at][0], merged)
        else:
            merged["created"] = row["t"]  # the Create's instant: its creationTimestamp
            latest[key] = len(out)
            out.append((idx, merged))
    return out
