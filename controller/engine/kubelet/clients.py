"""The kubelet's API clients, per kubelet process (cmd/kubelet/app/server.go ``run``, read in
docs/ports/kubelet-clients.md):

- ``kubeDeps.KubeClient``: ``clientset.NewForConfig`` with QPS = kubeAPIQPS and Burst =
  kubeAPIBurst (buildKubeletClientConfig -> kubeClientConfigOverrides): the status manager's
  pod status GET + PATCH and its DELETE of a finished pod (manager.syncPod).
- ``kubeDeps.EventClient``: ``v1core.NewForConfig`` with QPS = eventRecordQPS and Burst =
  eventBurst; makeEventRecorder's ``StartRecordingToSink`` writes every event the kubelet
  records through it (client.EventSink: the correlator first, with client-go's defaults, then
  the token). No CorrelatorOptions are passed: the two fields reach only this token bucket.
- ``kubeDeps.HeartbeatClient``: QPS -1, no rate limiter: lease renewals and node status go
  through it, so nothing is built for them here (node_status.py writes them at once).

What 0 means (every release simulated, 1.18 to 1.36): a QPS of 0 is client-go's DefaultQPS 5
(rest.RESTClientFor; ``eventRecordQPS: 0`` = unlimited only from 1.37, #117119); a burst of 0
is the kubelet's own default for its release (SetDefaults_KubeletConfiguration defaults a
plain int when 0): 10 in 1.18, 100 from 1.27. Negative values are refused by the scenario
(ValidateKubeletConfiguration), so the clients always have a limiter.

A kubelet restart is a new process (``KubeletProcess``): new clients with full buckets, an
empty event queue and status manager channel; the stopped process's goroutines stop.

The requests of t=0 (the scenario's cluster as it stands: its pods' statuses, the kubelets'
first events) are not charged to the buckets, as kube-scheduler's binds of t=0 are not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..client import EventSink, SetUpClient

if TYPE_CHECKING:
    from ..config import KubeletConfig
    from ..versions import Profile
    from .node_status import Kubelet


def client_params(cfg: KubeletConfig, profile: Profile) -> tuple[int, int, int, int]:
    """(qps, burst, event qps, event burst) as the kubelet's clients get them: a burst of 0
    is the release's default (kubeAPIBurst / eventBurst defaulted when 0); a QPS of 0 stays 0
    for rest_limiter, which makes it client-go's 5."""
    from ..versions import default_config

    defaults = default_config(type(cfg), profile)
    return (
        cfg.kube_api_qps,
        cfg.kube_api_burst or defaults.kube_api_burst,
        cfg.event_record_qps,
        cfg.event_burst or defaults.event_burst,
    )


def _params(kubelet: Kubelet) -> tuple[int, int, int, int]:
    cfg = kubelet.cfg
    if hasattr(cfg, "kube_api_qps"):
        return client_params(cfg, kubelet.profile)
    # A KubeletConfig pickled before the client fields existed: the release's defaults.
    d = kubelet.profile.kubelet_defaults
    return (
        d.get("kube_api_qps", 5),
        d.get("kube_api_burst", 10),
        d.get("event_record_qps", 5),
        d.get("event_burst", 10),
    )


class KubeletProcess:
    """One run of the kubelet binary: its main and event clients, its event sink, and
    ``stopped`` for the goroutines it started (client.Requests / EventSink owners)."""

    __slots__ = ("stopped", "params", "client", "event_client", "events")

    def __init__(self, kubelet: Kubelet) -> None:
        self.stopped = False
        self.params = _params(kubelet)
        self.client = SetUpClient("kubelet", self.params[0], self.params[1])
        self.event_client = SetUpClient("kubelet-events", self.params[2], self.params[3])
        self.events = EventSink(self.event_client, kubelet.sim.sched, kubelet.sim.cluster, self)

    def reconfigure(self, kubelet: Kubelet) -> None:
        """New client settings (SetParameters) take effect as a restarted kubelet's would:
        new clients with full buckets."""
        params = _params(kubelet)
        if params != self.params:
            self.params = params
            self.client = SetUpClient("kubelet", params[0], params[1])
            self.event_client = SetUpClient("kubelet-events", params[2], params[3])
            self.events.client = self.event_client

    def stop(self) -> None:
        """The process is gone: its queued events are never sent, its goroutines stop."""
        self.stopped = True
        self.events.queue.clear()

    def record(self, now_ms: int, *event: Any) -> None:
        """record.EventRecorder.Event: (object, reason, message, type, host)."""
        self.events.post(now_ms, *event)
