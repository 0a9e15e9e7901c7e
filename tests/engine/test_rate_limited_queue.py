"""Ports of rate_limited_queue_test.go, plus the token bucket's timing with a fake clock.

Go's tests read a package-level ``now``; here every call gets ``now_ms``. Go's
FakeAlwaysRateLimiter is ported alongside the queue for them.
"""

from __future__ import annotations

import copy
import random

import pytest

from controller.engine.nodelifecycle.rate_limited_queue import (
    FakeAlwaysRateLimiter,
    FakeNeverRateLimiter,
    RateLimitedTimedQueue,
    RateLimiter,
    TimedValue,
    TokenBucket,
    UniqueQueue,
    float32,
)

THREE = ("first", "second", "third")


def evictor_with(
    *values: str, limiter: RateLimiter | None = None, now: int = 0
) -> RateLimitedTimedQueue:
    q = RateLimitedTimedQueue(limiter if limiter is not None else FakeAlwaysRateLimiter())
    for i, v in enumerate(values):
        q.add(v, f"uid-{i}", now)
    return q


def names(q: RateLimitedTimedQueue | UniqueQueue) -> list[str]:
    return [v.value for v in q.values_in_order()]


# -- rate_limited_queue_test.go --------------------------------------------------------------------


def test_add_node_queues_in_order_and_remembers_the_set() -> None:  # TestAddNode
    evictor = evictor_with(*THREE)
    assert names(evictor) == ["first", "second", "third"]
    assert evictor.queue.set == {"first", "second", "third"}


@pytest.mark.parametrize(
    "victim, left",
    [
        pytest.param("first", ["second", "third"], id="removing the head leaves the other two"),
        pytest.param("second", ["first", "third"], id="removing the middle keeps the order"),
        pytest.param("third", ["first", "second"], id="removing the tail keeps the order"),
    ],
)
def test_del_node_removes_from_heap_and_set(victim: str, left: list[str]) -> None:  # TestDelNode
    evictor = RateLimitedTimedQueue(FakeAlwaysRateLimiter())
    for tick, v in enumerate(THREE):  # Go's fake now() ticks one second per call
        evictor.add(v, v, tick * 1000)
    assert evictor.remove(victim)
    assert names(evictor) == left
    assert evictor.queue.set == set(left)


def test_try_processes_every_value_not_removed() -> None:  # TestTry
    evictor = evictor_with(*THREE)
    evictor.remove("second")
    deleted: set[str] = set()

    def fn(value: TimedValue) -> tuple[bool, int]:
        deleted.add(value.value)
        return True, 0

    evictor.try_(fn, 0)
    assert deleted == {"first", "third"}


def test_try_ordering_a_retry_waits_its_delay_plus_one_tick() -> None:  # TestTryOrdering
    evictor = RateLimitedTimedQueue(FakeAlwaysRateLimiter())
    evictor.add("first", "11111", 1)  # Go's clock: 1, 2, 3 ms at the three Adds
    evictor.add("second", "22222", 2)
    evictor.add("third", "33333", 3)
    order: list[str] = []
    seen: list[TimedValue] = []

    def fn(value: TimedValue) -> tuple[bool, int]:
        seen.append(value)
        if value.value == "second" and len([v for v in seen if v.value == "second"]) == 1:
            return False, 2  # retry no earlier than 2 ms later
        order.append(value.value)
        return True, 0

    evictor.try_(fn, 4)
    # "second" is due at 4 + 2 + 1ns: not in this pass, so "third" goes first.
    assert order == ["first", "third"] and len(seen) == 3
    assert [v.added_at_ms for v in seen] == [1, 2, 3]
    assert evictor.values_in_order()[0].process_at_ms == 7  # first whole ms at or after 6 ms + 1 ns
    evictor.try_(fn, 6)  # 6 ms is before 6 ms + 1 ns: nothing yet
    assert len(seen) == 3
    evictor.try_(fn, 7)
    assert order == ["first", "third", "second"] and len(evictor) == 0


def test_try_removing_while_try_does_not_retry_the_removed_value() -> (
    None
):  # TestTryRemovingWhileTry
    evictor = evictor_with(*THREE)
    order: list[str] = []
    count = 0

    def fn(value: TimedValue) -> tuple[bool, int]:
        nonlocal count
        count += 1
        if value.value == "second" and "second" in evictor:
            evictor.remove("second")  # Go does this from another goroutine while fn runs
            return False, 1
        order.append(value.value)
        return True, 0

    evictor.try_(fn, 0)
    evictor.try_(fn, 1_000)
    assert order == ["first", "third"]
    assert count == 3


def test_clear_empties_queue_and_set() -> None:  # TestClear
    evictor = evictor_with(*THREE)
    evictor.clear()
    assert len(evictor) == 0
    assert evictor.queue.set == frozenset()
    assert evictor.add("first", "11111", 0)


def test_swap_limiter_follows_the_requested_qps() -> None:  # TestSwapLimiter
    evictor = RateLimitedTimedQueue(FakeAlwaysRateLimiter())
    assert evictor.limiter.qps == FakeAlwaysRateLimiter().qps
    evictor.swap_limiter(0, 0)
    assert isinstance(evictor.limiter, FakeNeverRateLimiter)
    assert evictor.limiter.qps == FakeNeverRateLimiter().qps == 1.0
    evictor.swap_limiter(5.5, 0)
    assert isinstance(evictor.limiter, TokenBucket)
    assert evictor.limiter.qps == 5.5


def test_add_after_try_is_refused_until_an_explicit_remove() -> None:  # TestAddAfterTry
    evictor = evictor_with(*THREE)
    evictor.remove("second")
    deleted: set[str] = set()

    def record(value: TimedValue) -> tuple[bool, int]:
        deleted.add(value.value)
        return True, 0

    evictor.try_(record, 0)
    assert deleted == {"first", "third"}
    assert not evictor.add("first", "11111", 0)  # still in the set
    evictor.try_(lambda v: pytest.fail(f"processed {v.value} twice"), 0)
    assert "first" in evictor and len(evictor) == 0
    assert evictor.remove("first")  # in the set though no longer in the heap: True, as in Go
    assert evictor.add("first", "11111", 0)


# -- UniqueQueue details ---------------------------------------------------------------------------


def test_unique_queue_operations() -> None:
    q = UniqueQueue()
    assert q.head() is None and q.get() is None
    assert q.add(TimedValue("b", "u", 0, 5))
    assert q.add(TimedValue("a", "u", 0, 5))
    assert q.add(TimedValue("c", "u", 0, 1))
    assert not q.add(TimedValue("a", "other", 9, 0)), "duplicates are refused"
    assert names(q) == ["c", "b", "a"], "processAt first, then insertion order"
    assert not q.replace(TimedValue("zzz", "u", 0, 0)), "replace needs the value in the heap"
    assert q.replace(TimedValue("c", "u", 0, 5))
    assert names(q) == ["b", "a", "c"], "a replaced value queues behind equal processAt"
    head = q.head()
    assert head is not None and head.value == "b" and len(q) == 3
    got = q.get()
    assert got == head and "b" not in q, "Get forgets the value (heap and set)"
    assert q.remove_from_queue("a") and "a" in q and len(q) == 1
    assert not q.remove_from_queue("nope")
    assert not q.remove("nope")
    assert q.remove("c") and "c" not in q and len(q) == 0


def test_unique_queue_stays_small_under_churn() -> None:
    q = UniqueQueue()
    q.add(TimedValue("head", "u", 0, 0))
    for i in range(10_000):
        q.add(TimedValue(f"n{i}", "u", i, i + 1))
        q.remove(f"n{i}")
    assert len(q) == 1 and len(q._heap) < 100  # stale entries are compacted


# -- token bucket ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "qps, burst, accepts_at, refuses_at",
    [
        pytest.param(
            0.1,
            1,
            [0, 10_000, 20_000],
            [9_999, 19_999],
            id="0.1/s: full at start, one token per 10 s",
        ),
        pytest.param(1.0, 1, [0, 1_000, 2_000], [1, 999, 1_999], id="1/s: one token per second"),
        pytest.param(
            0.01,
            1,
            [0, 100_001],
            [100_000],
            id="0.01/s as float32 lacks 2235 ns of a token at 100 s: accepted 1 ms later",
        ),
        pytest.param(0.1, 2, [0, 0, 10_000], [1, 9_999], id="burst 2 starts with two tokens"),
        pytest.param(1000.0, 1, [0, 1, 2], [], id="1000/s: one per millisecond"),
        pytest.param(0.1, 0, [], [0, 10_000], id="burst 0 never accepts"),
        pytest.param(
            0.0,
            1,
            [5_000],
            [5_001, 10_000, 3_600_000],
            id="0/s: the burst is spent once, never refilled",
        ),
        pytest.param(0.0, 2, [0, 0], [1, 60_000], id="0/s with burst 2: two tokens in all"),
    ],
)
def test_token_bucket_timing(
    qps: float, burst: int, accepts_at: list[int], refuses_at: list[int]
) -> None:
    bucket = TokenBucket(qps, burst)
    events = sorted([(t, False) for t in refuses_at] + [(t, True) for t in accepts_at])
    for t, expected in events:
        assert bucket.try_accept(t) is expected, f"t={t} ms"


def test_a_refused_try_changes_nothing() -> None:
    bucket = TokenBucket(0.1)
    assert bucket.try_accept(0)
    state = (bucket.tokens, bucket.last_ns)
    for t in range(1, 10_000, 7):
        assert not bucket.try_accept(t)
    assert (bucket.tokens, bucket.last_ns) == state
    assert bucket.try_accept(10_000)


def test_the_bucket_is_full_whenever_first_used() -> None:
    # rate.NewLimiter records no time: creation at 5 s or later makes no difference.
    bucket = TokenBucket(0.1, 1, now_ms=5_000)
    assert bucket.try_accept(5_001)
    assert bucket.qps == float32(0.1) and bucket.limit == float32(0.1)


@pytest.mark.parametrize(
    "qps, accepted_at, now, expected",
    [
        pytest.param(0.1, [], 123, 123, id="a fresh bucket accepts now"),
        pytest.param(0.1, [0], 1, 10_000, id="0.1/s: 10 s after the last acceptance"),
        pytest.param(0.1, [0], 10_000, 10_000, id="already due: now"),
        pytest.param(0.1, [0], 50_000, 50_000, id="long overdue: now"),
        pytest.param(0.01, [0], 1, 100_001, id="0.01/s float32: 100 s and 1 ms"),
        pytest.param(0.3, [0], 1, 3_334, id="0.3/s: ceil of 3333.33 ms"),
        pytest.param(5.5, [0], 0, 182, id="5.5/s: ceil of 181.8 ms"),
        pytest.param(0.0, [], 7, 7, id="0/s: a fresh bucket accepts now (its burst)"),
    ],
)
def test_next_accept_ms(qps: float, accepted_at: list[int], now: int, expected: int) -> None:
    bucket = TokenBucket(qps)
    for t in accepted_at:
        assert bucket.try_accept(t)
    assert bucket.next_accept_ms(now) == expected
    assert bucket.try_accept(expected)


def test_a_zero_rate_bucket_never_accepts_again_once_its_burst_is_spent() -> None:
    # reserveN's lim.limit == 0 branch: the token comes out of the burst itself.
    bucket = TokenBucket(0.0)
    assert bucket.try_accept(0) and bucket.burst == 0
    assert bucket.next_accept_ms(1) is None
    assert not bucket.try_accept(3_600_000)
    assert bucket.available_tokens(3_600_000) == 0.0


def test_next_accept_ms_is_the_first_accepting_millisecond() -> None:
    rng = random.Random(20180326)
    for _ in range(200):
        qps = rng.choice([0.01, 0.02, 0.05, 0.1, 0.3, 0.7, 1.0, 3.0, 7.5, 250.0])
        bucket = TokenBucket(qps, rng.choice([1, 1, 2]))
        t = 0
        for _ in range(rng.randrange(1, 4)):
            t += rng.randrange(0, 3_000)
            bucket.try_accept(t)
        now = t + rng.randrange(0, 5_000)
        at = bucket.next_accept_ms(now)
        assert at is not None and at >= now
        probe = copy.deepcopy(bucket)  # refusals change nothing, so one copy probes many times
        earlier = sorted(
            {now, at - 1, *(rng.randrange(now, at) for _ in range(20))} if at > now else set()
        )
        for before in earlier:
            assert not probe.try_accept(before), (qps, now, at, before)
        assert probe.try_accept(at), (qps, now, at)


def test_fake_limiters() -> None:
    never, always = FakeNeverRateLimiter(), FakeAlwaysRateLimiter()
    assert not never.try_accept(0) and never.next_accept_ms(0) is None and never.qps == 1.0
    assert always.try_accept(0) and always.next_accept_ms(7) == 7 and always.qps == 1.0


# -- SwapLimiter timing ----------------------------------------------------------------------------


def _old_limiter(kind: str) -> RateLimiter:
    if kind == "never":
        return FakeNeverRateLimiter()
    bucket = TokenBucket(0.1)
    if kind == "drained":
        assert bucket.try_accept(5_000)  # half a token back by 10 s
    return bucket


@pytest.mark.parametrize(
    "old, new_qps, first_accept",
    [
        pytest.param(
            "never", 0.1, 20_000, id="leaving the stopped limiter drains the new bucket: 1/q later"
        ),
        pytest.param(
            "full", 0.01, 10_000, id="the old bucket had a token: the new one starts full"
        ),
        pytest.param(
            "drained",
            0.01,
            110_001,
            id="the old bucket had none: drained, 100 s (+1 ms float32) later",
        ),
        pytest.param(
            "never",
            1.0,
            None,
            id="FakeNever reports qps 1: swapping to 1.0 is a no-op, stays stopped",
        ),
        pytest.param("full", 0.0, None, id="qps 0 installs the never-accepting limiter"),
        pytest.param("full", -1.0, None, id="negative qps stops evictions too"),
    ],
)
def test_swap_limiter_timing(old: str, new_qps: float, first_accept: int | None) -> None:
    q = RateLimitedTimedQueue(_old_limiter(old))
    q.add("node-a", "uid", 10_000)
    q.swap_limiter(new_qps, 10_000)
    assert q.next_work_ms(10_000) == first_accept


def test_swap_to_the_same_qps_keeps_the_bucket() -> None:
    bucket = TokenBucket(0.1)
    q = RateLimitedTimedQueue(bucket)
    q.swap_limiter(0.1, 5_000)
    assert q.limiter is bucket
    assert bucket.try_accept(5_000), "the no-op swap did not ask the bucket for its token"


def test_swap_asks_the_old_bucket_and_takes_its_token() -> None:
    old = TokenBucket(0.1)
    q = RateLimitedTimedQueue(old)
    q.swap_limiter(0.2, 1_000)
    assert not old.try_accept(1_000), "SwapLimiter's TryAccept consumed the old token, as in Go"
    assert q.limiter.qps == float32(0.2)


# -- Try and next_work_ms --------------------------------------------------------------------------


def test_try_takes_a_token_before_checking_process_at() -> None:
    q = RateLimitedTimedQueue(TokenBucket(0.1))
    q.add("n", "uid", 0)
    q.try_(lambda v: (False, 15_000), 0)  # token 1: tried, fails, due at 15 s + 1 ms
    assert q.values_in_order()[0].process_at_ms == 15_001
    assert q.next_work_ms(1) == 10_000, "the bucket accepts at 10 s even though n is not due"
    q.try_(lambda v: pytest.fail("not due"), 10_000)  # token 2: wasted on a head not due
    assert q.next_work_ms(10_001) == 20_000
    done: list[str] = []

    def succeed(value: TimedValue) -> tuple[bool, int]:
        done.append(value.value)
        return True, 0

    q.try_(succeed, 20_000)
    assert done == ["n"] and len(q) == 0 and q.next_work_ms(20_000) is None


@pytest.mark.parametrize(
    "limiter, queued, expected",
    [
        pytest.param(TokenBucket(0.1), False, None, id="empty queue: never"),
        pytest.param(FakeNeverRateLimiter(), True, None, id="stopped limiter: never"),
        pytest.param(TokenBucket(0.1), True, 500, id="full bucket and a queued node: now"),
        pytest.param(FakeAlwaysRateLimiter(), True, 500, id="always-accepting limiter: now"),
    ],
)
def test_next_work_ms(limiter: RateLimiter, queued: bool, expected: int | None) -> None:
    q = RateLimitedTimedQueue(limiter)
    if queued:
        q.add("n", "uid", 0)
    assert q.next_work_ms(500) == expected


def _run(seed: int, skip_idle: bool) -> list[tuple[int, str]]:
    """Passes every 100 ms for 10 minutes, or only those next_work_ms says can do work."""
    rng = random.Random(seed)
    q = RateLimitedTimedQueue(TokenBucket(rng.choice([0.01, 0.1, 0.3, 1.0])))
    script = sorted((rng.randrange(0, 600_000), rng.random(), f"node-{i % 12}") for i in range(60))
    log: list[tuple[int, str]] = []

    def fn(v: TimedValue) -> tuple[bool, int]:
        log.append((t, v.value))
        return int(v.value.split("-")[1]) % 3 != 0 or len(log) % 2 == 0, 50  # some retries

    for t in range(0, 600_000, 100):
        while script and script[0][0] <= t:
            _, r, name = script.pop(0)
            if r < 0.6:
                q.add(name, "uid", t)
            elif r < 0.9:
                q.remove(name)
            else:
                q.swap_limiter(rng.choice([0.0, 0.01, 0.1, 1.0]), t)
        if not skip_idle or q.next_work_ms(t) == t:
            q.try_(fn, t)
    return log


@pytest.mark.parametrize("seed", range(8))
def test_skipping_idle_passes_changes_nothing(seed: int) -> None:
    skipping = _run(seed, skip_idle=True)
    assert skipping, "the script does some work"
    assert skipping == _run(seed, skip_idle=False)


@pytest.mark.parametrize("version", ["1.18", "1.34"])
def test_a_zone_at_node_eviction_rate_zero_taints_one_node_and_no_more(version: str) -> None:
    # nodeEvictionRate: 0 (was a ZeroDivisionError): the zone's first NoExecute taint takes the
    # limiter's burst, the second silent node is never tainted.
    from tests.engine.conftest import simulate, times

    sim = simulate(
        f"""
        apiVersion: playground/v1alpha1
        kind: Scenario
        spec:
          kubernetesVersion: "{version}"
          duration: 600s
          controllerManager: {{nodeEvictionRate: 0}}
          nodes:
            - {{name: a-1, labels: {{topology.kubernetes.io/zone: z}}}}
            - {{name: a-2, labels: {{topology.kubernetes.io/zone: z}}}}
            - {{name: a-3, labels: {{topology.kubernetes.io/zone: z}}}}
          faults:
            - {{at: 10s, type: StopKubelet, node: a-1}}
            - {{at: 10s, type: StopKubelet, node: a-2}}
        """
    )
    tainted = [
        e["node"]
        for e in sim.timeline.events
        if e["type"] == "TaintAdded" and e["effect"] == "NoExecute"
    ]
    assert tainted == ["a-1"]
    grace_s = 40 if version == "1.18" else 50
    assert times(sim, "TaintAdded", node="a-1", effect="NoExecute") == [
        10 + grace_s
    ]  # Unknown, then tainted in the same instant
