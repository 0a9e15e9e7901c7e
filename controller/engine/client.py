"""A component's API client: client-go's client-side rate limiter, and its event sink.

Every clientset kube-controller-manager builds (``ClientBuilder.ClientOrDie(name)`` ->
``clientset.NewForConfig`` -> ``rest.RESTClientFor``) has its own token bucket,
``flowcontrol.NewTokenBucketRateLimiter(qps, burst)`` (client-go util/flowcontrol/throttle.go)
over golang.org/x/time/rate's Limiter (``TokenBucket`` in nodelifecycle/rate_limited_queue.py).
Each request calls ``Request.tryThrottle`` -> ``rateLimiter.Wait(ctx)``: it reserves one token
and sleeps until the token is there.

Time. The bucket computes in nanoseconds and float64 as Go does; the engine's instants are
whole milliseconds, so a request whose token comes at ``act`` ns is made at
``ceil(act / 1 ms)``: rounded *up*, because Go's timer never fires before the token is there,
and a request made earlier would have taken a token the bucket did not have. The rounding
never accumulates: the bucket keeps its exact state (``last`` is the whole millisecond of the
reservation, the debt its float), so the k-th token after an empty bucket at 3 qps comes at
``ceil(k * 333.33 ms)``, not ``k * 334 ms``.

Requests take no time on the wire here (the API server answers at once): the only delays are
the limiter's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .core import Phase
from .nodelifecycle.rate_limited_queue import NS_PER_MS, TokenBucket

if TYPE_CHECKING:
    from .cluster import Cluster, PendingEvent
    from .core import Scheduler

DEFAULT_QPS = 5.0  # rest.DefaultQPS (client-go rest/config.go)
DEFAULT_BURST = 10  # rest.DefaultBurst
# record.maxQueuedEvents (client-go tools/record/event.go): the broadcaster's watcher channel;
# an event arriving while it is full is dropped (watch.DropIfChannelFull).
MAX_QUEUED_EVENTS = 1000


def rest_limiter(qps: float, burst: int) -> TokenBucket | None:
    """Port of the rate limiter ``rest.RESTClientFor`` builds from a rest.Config: QPS 0
    means DefaultQPS (5), Burst 0 DefaultBurst (10); a QPS below 0 means no rate limiter
    (``if qps > 0 { rateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst) }``;
    1.18's ``NewRESTClient`` has the same ``maxQPS > 0`` test)."""
    if qps == 0:
        qps = DEFAULT_QPS
    if burst == 0:
        burst = DEFAULT_BURST
    if qps < 0:
        return None
    return TokenBucket(qps, burst)


class Client:
    """One clientset: its name (the ``ClientOrDie`` name) and its token bucket."""

    __slots__ = ("name", "limiter", "busy_until", "requests", "waited")

    def __init__(self, name: str, qps: float, burst: int) -> None:
        self.name = name
        self.limiter = rest_limiter(qps, burst)
        self.busy_until = 0  # the instant of the last token reserved (the backlog's end)
        self.requests = 0
        self.waited = 0  # requests that waited for their token

    def reserve(self, now_ms: int) -> int:
        """``rateLimiter.Wait``: the instant (>= ``now_ms``) the request is made."""
        self.requests += 1
        if self.limiter is None:
            return now_ms
        act_ns = self.limiter.reserve_ns(now_ms)
        if act_ns is None:  # burst < 1: refused where the parameter enters
            raise ValueError(f"client {self.name}: burst below 1")
        t = max(now_ms, -(-act_ns // NS_PER_MS))
        if t > now_ms:
            self.waited += 1
        if t > self.busy_until:
            self.busy_until = t
        return t

    def backlog_ms(self, now_ms: int) -> int:
        """How long a request made now would wait behind the tokens already reserved."""
        return max(0, self.busy_until - now_ms)

    def do(
        self, sched: Scheduler, now_ms: int, phase: int, fn: Callable[..., Any], *args: Any
    ) -> int:
        """One request made by a goroutine that does nothing else meanwhile: ``fn(*args)``
        now when the token is there, else at the token's instant. Returns that instant."""
        t = self.reserve(now_ms)
        if t <= now_ms:
            fn(*args)
        else:
            sched.schedule(t, phase, fn, *args)
        return t


class SetUpClient(Client):
    """A clientset whose requests made at t=0 take no token: t=0 is the scenario's cluster as
    it stands (its pods' statuses, its workloads' pods), not charged to any bucket, as
    kube-scheduler's binds of t=0 are not (the kubelets' and the workload controllers'
    clients)."""

    __slots__ = ()

    def reserve(self, now_ms: int) -> int:
        if now_ms <= 0:
            return now_ms
        return Client.reserve(self, now_ms)


class EventSink:
    """``StartRecordingToSink``'s goroutine over a component's client: it takes the recorder's
    calls one at a time from the broadcaster's queue and hands each to ``recordToSink``; a
    call made while ``MAX_QUEUED_EVENTS`` wait is dropped (watch.DropIfChannelFull).

    ``recordToSink`` first runs ``EventCorrelator.EventCorrelate`` at the instant the call is
    taken from the queue (the correlator's clock, ``e.clock.Now()``), then, unless the spam
    filter skipped it (``result.Skip``: it returns at once, no request, so no token), writes
    the Event (``recordEvent``: sink.Create, or sink.Patch for a repeat) in a request that
    waits for its token (``Request.tryThrottle``). So a skipped call's ``K8sEventDropped``
    row is at its dequeue instant and the goroutine takes the next call in the same instant;
    a written one's ``K8sEvent`` row is at its token's instant. A call whose token is there
    at once is written in the same instant as the call that recorded it. A stopped
    ``owner``'s calls are neither correlated nor written.
    """

    __slots__ = ("client", "sched", "cluster", "owner", "queue", "busy", "dropped")

    def __init__(self, client: Client, sched: Scheduler, cluster: Cluster, owner: Any) -> None:
        self.client = client
        self.sched = sched
        self.cluster = cluster
        self.owner = owner
        self.queue: deque[tuple[Any, ...]] = deque()
        self.busy = False
        self.dropped = 0

    def post(self, now_ms: int, *event: Any) -> None:
        """record.EventRecorder.Event at ``now_ms`` (makeEvent's timestamp): ``event`` is
        (object, reason, message, type)."""
        if self.busy:
            if len(self.queue) >= MAX_QUEUED_EVENTS:
                self.dropped += 1
                return
            self.queue.append((now_ms, *event))
            return
        self._take(now_ms, (now_ms, *event))

    def _take(self, now_ms: int, call: tuple[Any, ...]) -> None:
        """recordToSink for ``call`` (its recording instant, then the event) and each queued
        after it, taken at ``now_ms``: the skipped ones at once, until one waits for its
        token (or the queue is empty)."""
        while True:
            pending = None
            if not self.owner.stopped:
                recorded_ms, *event = call
                pending = self.cluster.correlate_event(now_ms, *event, recorded_ms=recorded_ms)
            if pending is not None:
                t = self.client.reserve(now_ms)
                if t > now_ms:
                    self.busy = True
                    self.sched.schedule(t, Phase.EVENT_SINK, self._write, pending)
                    return
                self.cluster.store_event(now_ms, pending)
            if not self.queue:
                self.busy = False
                return
            call = self.queue.popleft()

    def _write(self, pending: PendingEvent) -> None:
        """recordEvent at the token's instant, then the next queued call."""
        now = self.sched.now_ms
        if not self.owner.stopped:
            self.cluster.store_event(now, pending)
        if self.queue:
            self._take(now, self.queue.popleft())
        else:
            self.busy = False


# A step of ``Requests``: (fn, args), fn(now, *args) made at the step's token instant; it may
# return further steps, made next, before the rest (a request whose answer decides the next
# one). ``SLEEP`` as fn is ``time.Sleep(args[0] ms)``: no token, the goroutine just waits.
SLEEP = None
Step = tuple[Callable[..., Any] | None, tuple[Any, ...]]


class Requests:
    """One goroutine that makes its requests one after another through ``client``: each waits
    for its token (``rateLimiter.Wait``) after the one before was made, so a goroutine with
    1,000 deletes to make at 20 qps takes 50 s. ``done`` runs when the last was made (the
    caller's loop goes on then: ``wait.Until``'s next period, the next step of a pass). The
    goroutine stops between requests once ``owner.stopped`` is true (its process is gone).

    Written as continuations (a bound method and its list of steps in the scheduler's queue),
    not a generator, so that a room's engine can be pickled while it waits."""

    __slots__ = ("client", "sched", "phase", "owner", "steps", "done")

    def __init__(
        self,
        client: Client,
        sched: Scheduler,
        phase: int,
        owner: Any,
        steps: list[Step],
        done: Callable[[], None] | None = None,
    ) -> None:
        self.client = client
        self.sched = sched
        self.phase = phase
        self.owner = owner
        self.steps: deque[Step] = deque(steps)
        self.done = done

    def run(self) -> None:
        sched = self.sched
        while self.steps:
            if self.owner.stopped:
                return
            now = sched.now_ms
            fn, args = self.steps[0]
            if fn is SLEEP:
                self.steps.popleft()
                if args[0] > 0:
                    sched.schedule(now + args[0], self.phase, self.run)
                    return
                continue
            t = self.client.reserve(now)
            if t > now:
                sched.schedule(t, self.phase, self._resume)
                return
            self._step(now)
        if self.done is not None and not self.owner.stopped:
            self.done()

    def _step(self, now: int) -> None:
        fn, args = self.steps.popleft()
        assert fn is not None
        more = fn(now, *args)
        if more:
            self.steps.extendleft(reversed(more))

    def _resume(self) -> None:
        if self.owner.stopped:
            return
        self._step(self.sched.now_ms)
        self.run()


class Parallel:
    """``sync.WaitGroup`` over goroutines each making its own ``Requests`` (PodGC's
    gcTerminated and gcTerminating start one per pod and wait for all): ``done`` runs when the
    last has made its last request. They start in list order; at one instant the one that
    started waiting first goes on first (the engine's stand-in for Go's scheduler)."""

    __slots__ = ("left", "done")

    def __init__(self, done: Callable[[], None]) -> None:
        self.left = 0
        self.done = done

    def run(
        self, client: Client, sched: Scheduler, phase: int, owner: Any, each: list[list[Step]]
    ) -> None:
        self.left = len(each) + 1  # + 1: the loop that starts them (wait.Add before Wait)
        for steps in each:
            Requests(client, sched, phase, owner, steps, self._one_done).run()
        self._one_done()

    def _one_done(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.done()
