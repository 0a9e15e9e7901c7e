"""RateLimitedTimedQueue and the token bucket that paces it.

Ports of ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go``, of client-go's
``util/flowcontrol/throttle.go`` and of ``golang.org/x/time/rate.Limiter`` as Kubernetes 1.18
vendors it (v0.0.0-20191024005414-555d28b269f0: ``tokensFromDuration`` splits whole seconds
from nanoseconds, ``advance`` caps the elapsed time at ``durationFromTokens(burst - tokens)``).

Time is integer milliseconds handed in as ``now_ms``; the bucket computes in nanoseconds and
float64 exactly as Go does, so every accept/refuse decision matches the Go code evaluated at
the same instants. Kubernetes keeps the QPS as a Go ``float32``
(``NewTokenBucketRateLimiter(qps float32, burst int)``, ``SwapLimiter(newQPS float32)``),
and so does this port: 0.01 as float32 is 0.0099999998, so 100 s after an acceptance a
0.01/s bucket still lacks 2235 ns of a token, exactly as in the real controller.

The package knows nothing of nodes: values are opaque strings (node names).
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

NODE_EVICTION_PERIOD_MS = 100  # NodeEvictionPeriod
EVICTION_RATE_LIMITER_BURST = 1  # EvictionRateLimiterBurst


def float32(x: float) -> float:
    """The float64 value of Go's ``float32(x)`` (round to nearest even)."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _go_divmod(d: int, n: int) -> tuple[int, int]:
    """Go's integer ``d / n`` and ``d % n``: truncated toward zero, remainder takes d's sign."""
    q = abs(d) // n
    if d < 0:
        q = -q
    return q, d - q * n


class RateLimiter(Protocol):
    """flowcontrol.RateLimiter, reduced to what the queue uses, plus ``next_accept_ms``."""

    @property
    def qps(self) -> float: ...

    def try_accept(self, now_ms: int) -> bool: ...

    def next_accept_ms(self, now_ms: int) -> int | None: ...


class TokenBucket:
    """Port of tokenBucketRateLimiter over rate.Limiter (``TryAccept`` = ``AllowN(now, 1)``).

    ``rate.NewLimiter`` starts with ``tokens = 0`` and ``last`` = the zero time, so the first
    ``advance`` sees an elapsed time longer than ``durationFromTokens(burst)`` and fills the
    bucket: it is full at any first use, whenever it was created (``now_ms`` is accepted for
    symmetry with the other engine constructors and not used, as in Go). Refilling to exactly
    ``burst`` is itself a float computation (0.1/s: 0.9999999999 tokens, still accepted
    because the missing 1e-10 token is worth less than 1 ns); it is kept as Go does it.

    A zero limit (``nodeEvictionRate: 0``) follows reserveN's ``lim.limit == 0`` branch
    (golang.org/x/time/rate, vendored by every release from 1.27): each accepted token is taken
    from the burst itself, so the first ``burst`` calls succeed and none after. The x/time of
    1.18 had no such branch (its float division by zero gave platform-dependent durations); the
    engine uses the later branch in every profile.

    Assumes ``burst / qps`` is below 292 years (Go's float-to-Duration conversion overflows
    beyond that; the eviction rates are >= 0.001/s in practice).
    """

    __slots__ = ("qps", "limit", "burst", "tokens", "last_ns")

    def __init__(
        self, qps: float, burst: int = EVICTION_RATE_LIMITER_BURST, now_ms: int = 0
    ) -> None:
        self.qps: float = float32(qps)  # tokenBucketRateLimiter.qps: what QPS() reports
        self.limit: float = self.qps  # rate.Limit(qps): the float32 widened to float64
        self.burst: int = burst
        self.tokens: float = 0.0  # Limiter.tokens as of last_ns
        self.last_ns: int | None = None  # Limiter.last; None is Go's zero time.Time

    # -- rate.Limit conversions ---------------------------------------------------------------
    def _tokens_from_duration(self, d_ns: int) -> float:
        """Port of Limit.tokensFromDuration (whole seconds and nanoseconds split)."""
        sec, nsec = _go_divmod(d_ns, NS_PER_S)
        return float(sec) * self.limit + float(nsec) * self.limit / 1e9

    def _duration_from_tokens(self, tokens: float) -> int:
        """Port of Limit.durationFromTokens: nanoseconds, truncated like time.Duration(f)."""
        seconds = tokens / self.limit
        return int(1e9 * seconds)

    # -- rate.Limiter ----------------------------------------------------------------------------
    def _advance(self, now_ns: int) -> tuple[int | None, float]:
        """Port of Limiter.advance: (last, tokens available at ``now``); changes nothing."""
        last = self.last_ns
        if last is not None and now_ns < last:
            last = now_ns
        max_elapsed = self._duration_from_tokens(float(self.burst) - self.tokens)
        # From the zero time, now.Sub(last) saturates far beyond max_elapsed.
        elapsed = max_elapsed if last is None else min(now_ns - last, max_elapsed)
        tokens = self.tokens + self._tokens_from_duration(elapsed)
        if tokens > float(self.burst):
            tokens = float(self.burst)
        return last, tokens

    def _reserve(self, now_ns: int) -> tuple[bool, int | None, float]:
        """Port of Limiter.reserveN(now, 1, maxFutureReserve=0): (ok, last, tokens after)."""
        last, tokens = self._advance(now_ns)
        tokens -= 1.0
        wait_ns = self._duration_from_tokens(-tokens) if tokens < 0 else 0
        return self.burst >= 1 and wait_ns <= 0, last, tokens

    def try_accept(self, now_ms: int) -> bool:
        """Port of tokenBucketRateLimiter.TryAccept (``Limiter.AllowN(now, 1)``).

        On success the token is taken and ``last`` becomes ``now``; a refusal only keeps
        ``last = min(last, now)``, i.e. changes nothing while time runs forward."""
        if self.limit == 0:
            # reserveN's zero-limit branch: the burst is spent once, never refilled.
            if self.burst >= 1:
                self.burst -= 1
                return True
            return False
        now_ns = now_ms * NS_PER_MS
        ok, last, tokens = self._reserve(now_ns)
        if ok:
            self.last_ns = now_ns
            self.tokens = tokens
        else:
            self.last_ns = last
        return ok

    def reserve_ns(self, now_ms: int, n: int = 1) -> int | None:
        """Port of Limiter.reserveN(now, n, InfDuration), the reservation behind Limiter.Wait
        and client-go's ``tokenBucketRateLimiter.Wait`` (rest.Request.tryThrottle): the
        ``n`` tokens are taken at once, into debt if the bucket lacks them (tokens accrue
        continuously at ``qps`` up to ``burst``), and the time to act is ``now`` plus
        ``durationFromTokens(debt)``, in nanoseconds. None when ``n > burst`` (Wait's error
        "exceeds limiter's burst"; nothing is taken). Reservations are first come, first
        served: the k-th token after an empty bucket comes at the same instant whoever asks
        and whenever they ask before it."""
        now_ns = now_ms * NS_PER_MS
        if self.limit == 0:
            if self.burst >= n:
                self.burst -= n
                return now_ns
            return None
        last, tokens = self._advance(now_ns)
        tokens -= float(n)
        wait_ns = self._duration_from_tokens(-tokens) if tokens < 0 else 0
        if n > self.burst:
            self.last_ns = last
            return None
        self.last_ns = now_ns
        self.tokens = tokens
        return now_ns + wait_ns

    def _would_accept(self, now_ms: int) -> bool:
        if self.limit == 0:
            return self.burst >= 1
        return self._reserve(now_ms * NS_PER_MS)[0]

    def available_tokens(self, now_ms: int) -> float:
        """The tokens ``advance`` would find at ``now_ms`` (for display); at a zero limit, the
        burst left."""
        if self.limit == 0:
            return float(self.burst)
        return self._advance(now_ms * NS_PER_MS)[1]

    def next_accept_ms(self, now_ms: int) -> int | None:
        """The earliest whole millisecond ``>= now_ms`` at which ``try_accept`` would succeed,
        or None if it never will (burst < 1, or float rounding leaves a full bucket short).

        Exact, not estimated: the bucket only fills while time passes and is full from
        ``last + durationFromTokens(burst - tokens)`` on, so the answer is found by bisection
        over whole milliseconds in ``[now_ms, that instant]``."""
        if self.burst < 1:
            return None
        if self._would_accept(now_ms):
            return now_ms
        if self.last_ns is None:
            return None  # already as full as it will ever be
        full_ns = self.last_ns + self._duration_from_tokens(float(self.burst) - self.tokens)
        hi = max(now_ms, -(-full_ns // NS_PER_MS))
        if not self._would_accept(hi):
            return None
        lo = now_ms  # refuses; hi accepts
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._would_accept(mid):
                hi = mid
            else:
                lo = mid
        return hi


class FakeNeverRateLimiter:
    """Port of flowcontrol.NewFakeNeverRateLimiter: never accepts, yet ``QPS()`` reports 1."""

    __slots__ = ()
    qps: float = 1.0

    def try_accept(self, now_ms: int) -> bool:
        return False

    def next_accept_ms(self, now_ms: int) -> int | None:
        return None


class FakeAlwaysRateLimiter:
    """Port of flowcontrol.NewFakeAlwaysRateLimiter: always accepts; ``QPS()`` reports 1."""

    __slots__ = ()
    qps: float = 1.0

    def try_accept(self, now_ms: int) -> bool:
        return True

    def next_accept_ms(self, now_ms: int) -> int | None:
        return now_ms


@dataclass(frozen=True, slots=True)
class TimedValue:
    """Port of TimedValue: ``value`` (a node name) is due at ``process_at_ms``.

    Frozen: Go's Head returns a copy, and Try re-queues a modified copy with Replace."""

    value: str
    uid: str
    added_at_ms: int
    process_at_ms: int


_Entry = tuple[int, int, TimedValue]  # (process_at_ms, seq, value): the heap order


class UniqueQueue:
    """Port of UniqueQueue: a min-heap on processAt plus a membership set.

    Go's heap leaves the order of equal processAt values unspecified; here an insertion
    sequence number breaks ties (first added, first out; ``replace`` queues anew).
    Entries are deleted lazily: a removed or replaced value leaves a stale heap entry that
    ``head`` skips, and the heap is rebuilt when stale entries outnumber live ones."""

    __slots__ = ("_heap", "_entries", "_set", "_seq")

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}  # value -> its live heap entry
        self._set: set[str] = set()
        self._seq = 0

    def _push(self, v: TimedValue) -> None:
        self._seq += 1
        entry = (v.process_at_ms, self._seq, v)
        self._entries[v.value] = entry
        heapq.heappush(self._heap, entry)

    def _drop(self, value: str) -> bool:
        entry = self._entries.pop(value, None)
        if entry is None:
            return False
        if len(self._heap) > 2 * len(self._entries) + 32:
            self._heap = sorted(self._entries.values())  # a sorted list is a valid heap
        return True

    def add(self, v: TimedValue) -> bool:
        """Port of UniqueQueue.Add: False if ``v.value`` is in the set (even if processed)."""
        if v.value in self._set:
            return False
        self._push(v)
        self._set.add(v.value)
        return True

    def replace(self, v: TimedValue) -> bool:
        """Port of UniqueQueue.Replace: requeue the heap entry of ``v.value`` as ``v``;
        False (and nothing queued) if it is not in the heap."""
        if v.value not in self._entries:
            return False
        self._drop(v.value)
        self._push(v)
        return True

    def remove_from_queue(self, value: str) -> bool:
        """Port of UniqueQueue.RemoveFromQueue: heap only. The set keeps the value, so a
        later ``add`` is refused until ``remove`` (TestAddAfterTry)."""
        if value not in self._set:
            return False
        return self._drop(value)

    def remove(self, value: str) -> bool:
        """Port of UniqueQueue.Remove: set and heap. True if the value was in the set,
        even when it had already left the heap (as in Go)."""
        if value not in self._set:
            return False
        self._set.discard(value)
        self._drop(value)
        return True

    def head(self) -> TimedValue | None:
        """Port of UniqueQueue.Head: the value due first, or None if the heap is empty."""
        heap = self._heap
        while heap and self._entries.get(heap[0][2].value) is not heap[0]:
            heapq.heappop(heap)  # stale
        return heap[0][2] if heap else None

    def get(self) -> TimedValue | None:
        """Port of UniqueQueue.Get: pop the head and forget it (heap and set)."""
        v = self.head()
        if v is not None:
            heapq.heappop(self._heap)
            del self._entries[v.value]
            self._set.discard(v.value)
        return v

    def clear(self) -> None:
        """Port of UniqueQueue.Clear: empty the heap and the set."""
        self._heap = []
        self._entries.clear()
        self._set.clear()

    @property
    def set(self) -> frozenset[str]:
        """The membership set (Go's ``UniqueQueue.set``)."""
        return frozenset(self._set)

    def values_in_order(self) -> list[TimedValue]:
        """Queued values in the order they would leave the heap."""
        return [e[2] for e in sorted(self._entries.values())]

    def __len__(self) -> int:
        """The heap length (values processed but still in the set do not count)."""
        return len(self._entries)

    def __contains__(self, value: object) -> bool:
        """Set membership."""
        return value in self._set


ActionFunc = Callable[[TimedValue], tuple[bool, int]]  # (done, wait_ms before a retry)


class RateLimitedTimedQueue:
    """Port of RateLimitedTimedQueue: a UniqueQueue drained by ``try_`` at the limiter's pace."""

    __slots__ = ("queue", "_limiter")

    def __init__(self, limiter: RateLimiter) -> None:
        self.queue = UniqueQueue()
        self._limiter: RateLimiter = limiter

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    def add(self, value: str, uid: str, now_ms: int) -> bool:
        """Port of RateLimitedTimedQueue.Add: due at once (addedAt = processAt = now)."""
        return self.queue.add(TimedValue(value, uid, now_ms, now_ms))

    def remove(self, value: str) -> bool:
        """Port of RateLimitedTimedQueue.Remove (set and heap)."""
        return self.queue.remove(value)

    def clear(self) -> None:
        """Port of RateLimitedTimedQueue.Clear."""
        self.queue.clear()

    def try_(self, fn: ActionFunc, now_ms: int) -> None:
        """Port of RateLimitedTimedQueue.Try.

        A token is taken *before* the processAt check, so a head that is not due yet wastes
        it, as in Go. ``fn`` returns ``(done, wait_ms)``: done values leave the heap but stay
        in the set; the others are requeued at Go's ``now + wait + 1ns``. Engine instants are
        whole milliseconds, and for a whole-ms ``t``, ``t < now + wait + 1ns`` holds exactly
        when ``t < now + wait + 1ms``; so ``process_at_ms = now + wait + 1`` keeps every
        ``now.Before(processAt)`` decision of the Go code (the stored value is the first
        instant the engine can reach, 1 ms minus 1 ns later than Go's field).

        Go reads the clock once per iteration; the engine's ``now`` does not move inside a
        pass, so ``now_ms`` serves every iteration."""
        head = self.queue.head()
        while head is not None:
            if not self._limiter.try_accept(now_ms):
                break
            if now_ms < head.process_at_ms:
                break
            ok, wait_ms = fn(head)
            if not ok:
                self.queue.replace(replace(head, process_at_ms=now_ms + wait_ms + 1))
            else:
                self.queue.remove_from_queue(head.value)
            head = self.queue.head()

    def swap_limiter(self, qps: float, now_ms: int) -> None:
        """Port of RateLimitedTimedQueue.SwapLimiter.

        No-op when the current limiter's float32 QPS equals ``float32(qps)`` (the
        never-accepting limiter reports 1, so swapping it for 1.0 keeps it). ``qps <= 0``
        installs the never-accepting limiter. Otherwise a new full bucket (burst 1) replaces
        the old one, drained at once if the old limiter refuses a token now; asking the old
        limiter takes its token when it has one, as in Go (it is discarded right after)."""
        new_qps = float32(qps)
        if self._limiter.qps == new_qps:
            return
        new: RateLimiter
        if new_qps <= 0:
            new = FakeNeverRateLimiter()
        else:
            new = TokenBucket(new_qps, EVICTION_RATE_LIMITER_BURST, now_ms)
            if not self._limiter.try_accept(now_ms):
                new.try_accept(now_ms)
        self._limiter = new

    def next_work_ms(self, now_ms: int) -> int | None:
        """The earliest instant ``>= now_ms`` at which ``try_`` could change anything, or None.

        A ``try_`` on an empty queue does nothing, and one whose first ``TryAccept`` is
        refused changes nothing either; every other ``try_`` takes a token (even when the
        head is not due yet), so the answer is the limiter's next acceptance while the queue
        is non-empty. Passes before it can be skipped without changing any result."""
        if not self.queue:
            return None
        return self._limiter.next_accept_ms(now_ms)

    def values_in_order(self) -> list[TimedValue]:
        """The queued values by (processAt, insertion), for display."""
        return self.queue.values_in_order()

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, value: object) -> bool:
        return value in self.queue
