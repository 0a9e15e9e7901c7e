"""Ports of rate_limited_queue_test.go, plus the token bucket's timing with a fake clock."""

from __future__ import annotations

import pytest

from controller.engine.nodelifecycle.rate_limited_queue import (
    FakeNeverRateLimiter,
    RateLimitedTimedQueue,
    TimedValue,
    TokenBucket,
    UniqueQueue,
)


def queue_of(*values: str, now: int = 0) -> UniqueQueue:
    q = UniqueQueue()
    for v in values:
        q.add(TimedValue(v, "uid", now, now))
    return q


def test_add_node_keeps_fifo_order_and_set() -> None:  # TestAddNode
    q = queue_of("first", "second", "third")
    assert [v.value for v in q.values_in_order()] == ["first", "second", "third"]
    assert q.set == {"first", "second", "third"}


def test_del_node_removes_from_heap_and_set() -> None:  # TestDelNode
    for victim, rest in (("first", ["second", "third"]), ("second", ["first", "third"])):
        q = queue_of("first", "second", "third")
        assert q.remove(victim)
        assert [v.value for v in q.values_in_order()] == rest
        assert q.set == set(rest)


def test_try_processes_all_with_an_always_accepting_limiter_except_the_failed() -> None:  # TestTry
    evictor = RateLimitedTimedQueue(TokenBucket(1000, 1000))
    for v in ("first", "second", "third"):
        evictor.add(v, "uid", 0)
    evictor.remove("second")
    done: list[str] = []

    def fn(value: TimedValue) -> tuple[bool, int]:
        done.append(value.value)
        return value.value != "first", 0

    evictor.try_(fn, 0)
    assert done == ["first", "third"]
    # "first" failed and is due again 1 ms later (Go: now + wait + 1 ns).
    assert [v.value for v in evictor.values_in_order()] == ["first"]
    assert evictor.values_in_order()[0].process_at_ms == 1


def test_try_ordering_retries_come_after_their_wait() -> None:  # TestTryOrdering
    evictor = RateLimitedTimedQueue(TokenBucket(1000, 1000))
    for v in ("first", "second", "third"):
        evictor.add(v, "uid", 0)
    order: list[str] = []
    count = 0

    def fn(value: TimedValue) -> tuple[bool, int]:
        nonlocal count
        count += 1
        order.append(value.value)
        if value.value == "second" and count <= 2:
            return False, 0
        return True, 0

    evictor.try_(fn, 0)
    evictor.try_(fn, 1)
    assert order == ["first", "second", "third", "second"]


def test_add_after_try_is_ignored_until_remove() -> None:  # TestAddAfterTry
    evictor = RateLimitedTimedQueue(TokenBucket(1000, 1000))
    for v in ("first", "second", "third"):
        evictor.add(v, "uid", 0)
    evictor.remove("second")
    evictor.try_(lambda v: (True, 0), 0)
    assert len(evictor) == 0
    assert not evictor.add("first", "uid", 0)  # still in the set
    assert len(evictor) == 0
    evictor.remove("first")
    assert evictor.add("first", "uid", 0)


def test_clear_empties_queue_and_set() -> None:  # TestClear
    evictor = RateLimitedTimedQueue(TokenBucket(1000, 1000))
    for v in ("first", "second"):
        evictor.add(v, "uid", 0)
    evictor.clear()
    assert len(evictor) == 0 and "first" not in evictor


@pytest.mark.parametrize(
    "qps, accepts_at, refuses_at",
    [
        pytest.param(0.1, [0, 10_000, 20_000], [9_999, 19_999], id="0.1/s: one token per 10 s, full at start"),
        pytest.param(1.0, [0, 1_000, 2_000], [999], id="1/s"),
        pytest.param(
            0.01, [0, 100_001], [100_000],
            id="0.01/s as float32 lacks nanoseconds at 100 s: accepts 1 ms later",
        ),
    ],
)
def test_token_bucket_timing(qps: float, accepts_at: list[int], refuses_at: list[int]) -> None:
    bucket = TokenBucket(qps)
    events = sorted([(t, True) for t in accepts_at] + [(t, False) for t in refuses_at])
    for t, expected in events:
        assert bucket.try_accept(t) is expected, t


def test_refused_try_changes_nothing_and_next_accept_is_exact() -> None:
    bucket = TokenBucket(0.1)
    assert bucket.try_accept(0)
    assert bucket.next_accept_ms(1) == 10_000
    for t in range(0, 10_000, 100):
        assert not bucket.try_accept(t)
    assert bucket.try_accept(10_000)


@pytest.mark.parametrize(
    "old, new, first_accept",
    [
        pytest.param("never", 0.1, 20_000, id="leaving a stopped limiter drains the new bucket: 1/q later"),
        pytest.param("full", 0.01, 10_000, id="old bucket had a token: the new one starts full"),
        pytest.param("never", 1.0, None, id="FakeNever reports qps 1: swapping to 1.0 is a no-op"),
        pytest.param("full", 0.0, None, id="qps 0 installs the never-accepting limiter"),
    ],
)
def test_swap_limiter(old: str, new: float, first_accept: int | None) -> None:  # TestSwapLimiter
    limiter = FakeNeverRateLimiter() if old == "never" else TokenBucket(0.1)
    q = RateLimitedTimedQueue(limiter)
    q.add("n", "uid", 10_000)
    q.swap_limiter(new, 10_000)
    assert q.next_work_ms(10_000) == first_accept


def test_swap_to_same_qps_keeps_the_bucket() -> None:
    q = RateLimitedTimedQueue(TokenBucket(0.1))
    before = q.limiter
    q.swap_limiter(0.1, 5_000)
    assert q.limiter is before
