"""RateLimitedTimedQueue and its token bucket
(pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go, client-go flowcontrol
throttle.go, golang.org/x/time/rate as vendored by Kubernetes 1.18).

Time is integer milliseconds handed in as ``now_ms``. The QPS is a Go ``float32`` in
Kubernetes (``NewTokenBucketRateLimiter(qps float32, burst int)``), which this port keeps:
0.01 as float32 is 0.0099999998, so after 100 s a 0.01/s bucket still lacks a few
nanoseconds of a token, exactly as in the real controller.
"""

from __future__ import annotations

import heapq
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


def float32(x: float) -> float:
    """The float64 value of Go's float32(x)."""
    return struct.unpack("f", struct.pack("f", x))[0]


class TokenBucket:
    """Port of tokenBucketRateLimiter over rate.Limiter (TryAccept = AllowN(now, 1))."""

    __slots__ = ("qps", "limit", "burst", "tokens", "last_ns")

    def __init__(self, qps: float, burst: int = 1, now_ms: int = 0) -> None:
        self.qps = float32(qps)  # what QPS() reports, compared by SwapLimiter
        self.limit = self.qps
        self.burst = burst
        # rate.NewLimiter starts with 0 tokens and a zero "last": the first advance fills it.
        self.tokens = 0.0
        self.last_ns: int | None = None

    def _tokens_from_duration(self, d_ns: int) -> float:
        """Limit.tokensFromDuration (integer seconds and nanoseconds split)."""
        sec = float(d_ns // NS_PER_S) * self.limit
        nsec = float(d_ns % NS_PER_S) * self.limit
        return sec + nsec / 1e9

    def _duration_from_tokens(self, tokens: float) -> int:
        """Limit.durationFromTokens: nanoseconds, truncated as time.Duration(float)."""
        return int(1e9 * (tokens / self.limit))

    def _advance(self, now_ns: int) -> float:
        """Limiter.advance: the tokens available at ``now``."""
        if self.last_ns is None:
            return float(self.burst)
        last = min(self.last_ns, now_ns)
        max_elapsed = self._duration_from_tokens(float(self.burst) - self.tokens)
        elapsed = min(now_ns - last, max_elapsed)
        tokens = self.tokens + self._tokens_from_duration(elapsed)
        return min(tokens, float(self.burst))

    def _would_accept(self, now_ns: int) -> tuple[bool, float]:
        tokens = self._advance(now_ns) - 1.0
        wait = self._duration_from_tokens(-tokens) if tokens < 0 else 0
        return (self.burst >= 1 and wait <= 0), tokens

    def try_accept(self, now_ms: int) -> bool:
        """AllowN(now, 1): take a token if one is there; a refusal changes nothing."""
        now_ns = now_ms * NS_PER_MS
        ok, tokens = self._would_accept(now_ns)
        if ok:
            self.last_ns = now_ns
            self.tokens = tokens
        return ok

    def available_tokens(self, now_ms: int) -> float:
        return self._advance(now_ms * NS_PER_MS)

    def next_accept_ms(self, now_ms: int) -> int:
        """The earliest whole millisecond >= now at which ``try_accept`` would succeed."""
        if self._would_accept(now_ms * NS_PER_MS)[0]:
            return now_ms
        missing = 1.0 - self._advance(now_ms * NS_PER_MS)
        t = now_ms + max(0, math.floor(missing / self.limit * 1000) - 2)
        while not self._would_accept(t * NS_PER_MS)[0]:
            t += 1
        return t


class FakeNeverRateLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: never accepts; QPS() reports 1."""

    __slots__ = ()
    qps = 1.0

    def try_accept(self, now_ms: int) -> bool:
        return False

    def next_accept_ms(self, now_ms: int) -> int | None:
        return None


Limiter = TokenBucket | FakeNeverRateLimiter


@dataclass(slots=True)
class TimedValue:
    """A queued node: ``value`` is its name; ``process_at_ms`` when it may be processed."""

    value: str
    uid: str
    added_at_ms: int
    process_at_ms: int


class UniqueQueue:
    """Port of UniqueQueue: a min-heap on processAt plus a membership set. Entries removed
    from the heap only are skipped lazily (tombstones), so ``remove`` is O(log n)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, TimedValue]] = []
        self._live: dict[str, tuple[int, int, TimedValue]] = {}  # value -> heap entry
        self.set: set[str] = set()
        self._seq = 0

    def add(self, v: TimedValue) -> bool:
        if v.value in self.set:
            return False
        self.set.add(v.value)
        self._push(v)
        return True

    def _push(self, v: TimedValue) -> None:
        self._seq += 1
        entry = (v.process_at_ms, self._seq, v)
        self._live[v.value] = entry
        heapq.heappush(self._heap, entry)

    def replace(self, v: TimedValue) -> bool:
        """Replace the entry of ``v.value`` (with its new processAt); False if absent."""
        if v.value not in self._live:
            return False
        del self._live[v.value]
        self._push(v)
        return True

    def remove_from_queue(self, value: str) -> bool:
        """Heap only: the set keeps the value, so a later Add is ignored (TestAddAfterTry)."""
        return self._live.pop(value, None) is not None

    def remove(self, value: str) -> bool:
        """Set and heap."""
        self.set.discard(value)
        return self._live.pop(value, None) is not None

    def head(self) -> TimedValue | None:
        heap = self._heap
        while heap and self._live.get(heap[0][2].value) is not heap[0]:
            heapq.heappop(heap)
        return heap[0][2] if heap else None

    def get(self) -> TimedValue | None:
        v = self.head()
        if v is not None:
            heapq.heappop(self._heap)
            del self._live[v.value]
        return v

    def clear(self) -> None:
        self._heap.clear()
        self._live.clear()
        self.set.clear()

    def values_in_order(self) -> list[TimedValue]:
        return [e[2] for e in sorted(self._live.values())]

    def __len__(self) -> int:
        return len(self._live)


class RateLimitedTimedQueue:
    """Port of RateLimitedTimedQueue: a UniqueQueue drained by ``try_`` at the limiter's pace."""

    def __init__(self, limiter: Limiter) -> None:
        self.queue = UniqueQueue()
        self.limiter: Limiter = limiter

    def add(self, value: str, uid: str, now_ms: int) -> bool:
        return self.queue.add(TimedValue(value, uid, now_ms, now_ms))

    def remove(self, value: str) -> bool:
        return self.queue.remove(value)

    def clear(self) -> None:
        self.queue.clear()

    def try_(self, fn: Callable[[TimedValue], tuple[bool, int]], now_ms: int) -> None:
        """Port of RateLimitedTimedQueue.Try. The token is taken before the processAt check,
        so a head that is not due yet wastes it, as in Go. ``fn`` returns (done, wait_ms);
        a retry is due at now + wait + 1 ns, which the ms clock reaches at now + wait + 1."""
        head = self.queue.head()
        while head is not None:
            if not self.limiter.try_accept(now_ms):
                break
            if now_ms < head.process_at_ms:
                break
            ok, wait_ms = fn(head)
            if not ok:
                head.process_at_ms = now_ms + wait_ms + 1
                self.queue.replace(head)
            else:
                self.queue.remove_from_queue(head.value)
            head = self.queue.head()

    def swap_limiter(self, qps: float, now_ms: int) -> None:
        """Port of RateLimitedTimedQueue.SwapLimiter."""
        if self.limiter.qps == float32(qps):
            return
        if qps <= 0:
            self.limiter = FakeNeverRateLimiter()
            return
        new = TokenBucket(qps, 1, now_ms)
        # If the old limiter has no token now, the new one starts drained.
        if not self.limiter.try_accept(now_ms):
            new.try_accept(now_ms)
        self.limiter = new

    def next_work_ms(self, now_ms: int) -> int | None:
        """When a ``try_`` could next change anything: the queue is non-empty and the limiter
        accepts. A try before then is refused without side effects, so it can be skipped."""
        if not self.queue:
            return None
        return self.limiter.next_accept_ms(now_ms)

    def values_in_order(self) -> list[TimedValue]:
        return self.queue.values_in_order()

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, value: str) -> bool:
        return value in self.queue.set
