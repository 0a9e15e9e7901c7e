"""The workload controllers' API clients (docs/ports/workload-clients.md).

kube-controller-manager builds one clientset per controller
(``ClientBuilder.ClientOrDie(name)`` in cmd/kube-controller-manager/app/apps.go, every release
1.18-1.36), each with its own token bucket at ``--kube-api-qps`` / ``--kube-api-burst``
(20 / 30 by default), and each controller's event broadcaster writes through that same
clientset (``StartRecordingToSink(&v1core.EventSinkImpl{Interface:
kubeClient.CoreV1().Events("")})``): pod POSTs and DELETEs, the status PUTs and the Events of
one controller take tokens from one bucket. The recorder's ``EventSource.Component`` is the
controller's own, so each has its own EventCorrelator (client-go's defaults: no
CorrelatorOptions).

Ported so far: the ReplicaSet controller (``replicaset-controller``, 5 workers), the
DaemonSet controller (``daemon-set-controller``, recorder ``daemonset-controller``, 2
workers) and the StatefulSet controller (``statefulset-controller``, 5 workers). The
Deployment controller still writes at once (its recorder component is passed, its client not
yet simulated).

The workqueue: a key is never synced by two workers at once (a key made dirty during its sync
is synced once more after it), and at most ``workers`` keys are in flight
(``ConcurrentRSSyncs`` = 5); the expectations (``ExpectCreations`` / ``CreationObserved``) hold
nothing more here, as the engine's informer sees every create at its instant.

The requests of t=0 (the scenario's cluster as it stands) are not charged to the bucket, as
kube-scheduler's binds and the kubelets' writes of t=0 are not.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..client import EventSink, Parallel, SetUpClient, Step
from ..core import Phase

if TYPE_CHECKING:
    from ..core import Scheduler
    from ..simulation import Simulation

# ClientOrDie names and recorder components (EventSource.Component), by workload kind.
CLIENT_NAMES = {
    "ReplicaSet": "replicaset-controller",
    "Deployment": "deployment-controller",
    "StatefulSet": "statefulset-controller",
    "DaemonSet": "daemon-set-controller",
}
COMPONENTS = {
    "ReplicaSet": "replicaset-controller",
    "Deployment": "deployment-controller",
    "StatefulSet": "statefulset-controller",
    "DaemonSet": "daemonset-controller",
}
RS_WORKERS = 5  # kube-controller-manager --concurrent-replicaset-syncs
DS_WORKERS = 2  # ConcurrentDaemonSetSyncs (no flag: #128442)
STS_WORKERS = 5  # --concurrent-statefulset-syncs (#79169)
STS_MAX_BATCH_SIZE = 500  # statefulset MaxBatchSize (stateful_set_control.go, 1.28+)
SLOW_START_INITIAL_BATCH_SIZE = 1  # controller.SlowStartInitialBatchSize


class ControllerProcess:
    """One controller of one kube-controller-manager process: its client and event sink, its
    workqueue's in-flight keys, and ``stopped`` for the goroutines it started."""

    __slots__ = (
        "kind",
        "component",
        "params",
        "client",
        "events",
        "stopped",
        "workers",
        "inflight",
        "redo",
        "waiting",
    )

    def __init__(self, sim: Simulation, kind: str, workers: int) -> None:
        self.kind = kind
        self.component = COMPONENTS[kind]
        cm = sim.config.controller_manager
        self.params = (cm.kube_api_qps, cm.kube_api_burst)
        self.client = SetUpClient(CLIENT_NAMES[kind], *self.params)
        self.events = EventSink(self.client, sim.sched, sim.cluster, self)
        self.stopped = False
        self.workers = workers
        self.inflight: set[str] = set()
        self.redo: set[str] = set()  # keys made dirty while in flight
        self.waiting: list[str] = []  # keys waiting for a free worker

    def check_client(self, sim: Simulation) -> None:
        """A changed --kube-api-qps/-burst (SetParameters) takes effect as a restarted
        kube-controller-manager's would: a new clientset with a full bucket."""
        cm = sim.config.controller_manager
        params = (cm.kube_api_qps, cm.kube_api_burst)
        if params != self.params:
            self.params = params
            self.client = SetUpClient(CLIENT_NAMES[self.kind], *params)
            self.events.client = self.client

    def stop(self) -> None:
        """The process is gone: its queued events are never sent, its goroutines stop."""
        self.stopped = True
        self.events.queue.clear()

    def record(self, now_ms: int, obj: str, reason: str, message: str, etype: str) -> None:
        """record.EventRecorder.Event through the controller's sink."""
        self.events.post(now_ms, obj, reason, message, etype, None, self.component)

    def gate(self, key: str) -> bool:
        """processNextWorkItem: may ``key`` be synced now? Not while its sync is in flight
        (it syncs once more after) nor while every worker is busy (it waits its turn)."""
        if key in self.inflight:
            self.redo.add(key)
            return False
        if len(self.inflight) >= self.workers:
            if key not in self.waiting:
                self.waiting.append(key)
            return False
        self.inflight.add(key)
        return True

    def done(self, key: str) -> list[str]:
        """The sync of ``key`` returned: the keys to sync again (its own if it became dirty
        meanwhile, then the next waiting one)."""
        self.inflight.discard(key)
        again: list[str] = []
        if key in self.redo:
            self.redo.discard(key)
            again.append(key)
        while self.waiting and len(self.inflight) + len(again) < self.workers:
            again.append(self.waiting.pop(0))
        return again


def new_processes(sim: Simulation) -> dict[str, Any]:
    """The ported controllers' processes, by workload kind."""
    return {
        "ReplicaSet": ControllerProcess(sim, "ReplicaSet", RS_WORKERS),
        "DaemonSet": ControllerProcess(sim, "DaemonSet", DS_WORKERS),
        "StatefulSet": ControllerProcess(sim, "StatefulSet", STS_WORKERS),
    }


def slow_start_batch(
    proc: ControllerProcess,
    sched: Scheduler,
    each: list[list[Step]],
    done: Callable[[], None],
    size: int = SLOW_START_INITIAL_BATCH_SIZE,
    max_size: int | None = None,
) -> None:
    """Port of slowStartBatch (pkg/controller/replicaset/replica_set.go; the DaemonSet
    controller's loop in syncNodes is the same): ``min(size, len(each))`` goroutines, each
    making its requests (``each[i]``) through the controller's client, then, once all of them
    are made (``wg.Wait()``), the next batch of twice the size (at most ``max_size``: the
    StatefulSet controller's MaxBatchSize); ``done`` after the last. Every request succeeds
    here, so no batch ends the loop early."""
    batch, rest = each[:size], each[size:]
    nxt = 2 * len(batch) if max_size is None else min(2 * len(batch), max_size)
    after = partial(slow_start_batch, proc, sched, rest, done, nxt, max_size) if rest else done
    Parallel(after).run(proc.client, sched, Phase.WORKLOADS, proc, batch)
