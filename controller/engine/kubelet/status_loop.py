"""The status manager's goroutine (pkg/kubelet/status/status_manager.go ``manager.Start``):
one goroutine runs both ``syncPod`` and ``syncBatch`` ("syncPod and syncBatch share the same
go routine to avoid sync races"), so each pod's requests wait for their tokens of the kubelet's
main client (kubelet/clients.py) after the requests of the pod before.

A pod's sync (``manager.syncPod``) is a GET of the pod, the status PATCH
(``statusutil.PatchPodStatus``), then, for a deleted pod whose status may be deleted
(``canBeDeleted``), a DELETE with grace 0 and a UID precondition: 2 or 3 requests, each taking
one token. A GET that finds the pod gone (NotFound) ends the sync; a request made while the
API cannot be reached fails (its token spent), and the status waits for the first syncBatch
after the heal, as before.

Two shapes, by the kubelet's release (``Profile.status_manager_coalesces``):

- 1.18: ``podStatusChannel`` buffers one request per status change (up to 1000), each synced
  in turn with *its* status; a request whose status the API already has a newer one of
  (``needsUpdate``, e.g. a syncBatch sent it first) is dropped without a request.
- 1.27+ (#115331): a status change only puts ``struct{}{}`` into a one-slot channel;
  ``syncBatch(false)`` then writes the latest status of each pod whose cached version is
  ahead of the API's, once, so changes made while a batch runs cost one more batch.

The 10 s ticker's ``syncBatch(true)`` (needsUpdate, needsReconcile) runs in the same
goroutine: a tick that falls while a request waits runs once the current sync (1.18) or batch
(1.27+) is done, before the queued requests (Go's select picks at random among ready cases;
the engine takes the tick first). The pods of one batch are synced in the order their
statuses were set (Go walks a map: random); a reconciled pod after them, in the node's pod
order. Not modelled (docs/ports/kubelet-clients.md, unconfirmed or left out): the informers'
LIST and WATCH calls on the same bucket at kubelet start; whether 1.18 skipped an empty PATCH
(here every sync PATCHes); the failed requests of statuses set while the API cannot be
reached (they wait for the heal without a request).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import Handle, Phase

if TYPE_CHECKING:
    from ..objects import Pod
    from .status_manager import PendingStatus, StatusManager

# A step: (fn, args), fn(now, *args) made at its token's instant; it returns the steps to make
# next (the answer of a GET decides the PATCH), before the rest.
Step = tuple[Callable[..., Any], tuple[Any, ...]]


class StatusLoop:
    """One kubelet process's status manager goroutine."""

    def __init__(self, manager: StatusManager) -> None:
        self.manager = manager
        self.requests: deque[tuple[Pod, PendingStatus]] = deque()  # 1.18's podStatusChannel
        self.dirty = False  # 1.27+: the one-slot channel holds its struct{}{}
        self.tick = False  # a syncBatch(true) tick waits for the goroutine
        self.steps: deque[Step] = deque()  # the requests of the sync (or batch) under way
        self.busy = False
        self.handle: Handle | None = None

    def reset(self) -> None:
        """The process stopped: its channel and the sync under way are gone."""
        self.requests.clear()
        self.steps.clear()
        self.dirty = self.tick = self.busy = False
        if self.handle is not None:
            self.handle.cancel()
        self.handle = None

    # -- what wakes the goroutine -------------------------------------------------------------
    def status_set(self, pod: Pod, status: PendingStatus, now: int) -> None:
        """updateStatusInternal's send on podStatusChannel."""
        if now <= 0 and self._idle() and len(self.manager.pending) == 1:
            self._sync_at_once(pod, status, now)
            return
        if self.manager.kubelet.profile.status_manager_coalesces:
            self.dirty = True
        else:
            self.requests.append((pod, status))
        self.kick()

    def sync_batch_tick(self) -> None:
        """The ticker's channel has a tick (syncTicker)."""
        self.tick = True
        self.kick()

    def _idle(self) -> bool:
        return not (self.busy or self.steps or self.requests or self.dirty or self.tick)

    def _sync_at_once(self, pod: Pod, status: PendingStatus, now: int) -> None:
        """The set-up of t=0 (the scenario's pods as they stand), whose requests take no
        token (client.SetUpClient): with the goroutine idle and this the only status to
        send, what the goroutine would do (1.18's one request, or 1.27's syncBatch(false) of
        this pod alone) is this pod's sync, made here without its machinery."""
        steps = deque(self.manager.sync_steps(pod, status))
        while steps:
            fn, args = steps.popleft()
            more = fn(now, *args)
            if more:
                steps.extendleft(reversed(more))

    def kick(self) -> None:
        if not self.busy:
            self.busy = True
            self._run()

    # -- the goroutine ------------------------------------------------------------------------
    def _refill(self) -> bool:
        """The next thing the select takes: the tick's syncBatch(true), else the next request
        (1.18) or syncBatch(false) (1.27+). False: nothing to do, the goroutine blocks."""
        manager = self.manager
        while True:
            if self.tick:
                self.tick = False
                self.steps.extend(manager.batch_steps(reconcile=True))
            elif self.dirty:
                self.dirty = False
                self.steps.extend(manager.batch_steps(reconcile=False))
            elif self.requests:
                pod, status = self.requests.popleft()
                if manager.needs_update(pod.key, status):
                    self.steps.extend(manager.sync_steps(pod, status))
            else:
                return False
            if self.steps:
                return True

    def _run(self) -> None:
        kubelet = self.manager.kubelet
        sched = kubelet.sim.sched
        while self.steps or self._refill():
            now = sched.now_ms
            t = kubelet.process.client.reserve(now)
            if t > now:
                self.handle = sched.schedule(t, Phase.KUBELET_POD_STATUS, self._resume)
                return
            self._step(now)
        self.busy = False

    def _step(self, now: int) -> None:
        fn, args = self.steps.popleft()
        more = fn(now, *args)
        if more:
            self.steps.extendleft(reversed(more))

    def _resume(self) -> None:
        self.handle = None
        self._step(self.manager.kubelet.sim.sched.now_ms)
        self._run()
