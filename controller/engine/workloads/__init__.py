"""Workload controllers of kube-controller-manager (v1.18): Deployment -> ReplicaSet -> Pods,
DaemonSet, StatefulSet; and the availability metrics the page charts.

Each controller is level-triggered, as in Kubernetes: an informer event (a pod of the
workload changed, a node changed, the object was applied or scaled) marks the workload
dirty, and every dirty workload is synced once at the WORKLOADS phase of that instant, in a
fixed order (Deployments, ReplicaSets, StatefulSets, DaemonSets; then by name), until
nothing is dirty. Nothing polls.

Names are generated the way the API server and the controllers do (``<rs>-<5 chars>`` from
the safe alphabet, ``<deploy>-<pod-template-hash>``, ``<sts>-<ordinal>``), from hashes of
stable inputs, so runs are reproducible.

The ReplicaSet, DaemonSet and StatefulSet controllers write through their own clients
(clients.py: client-go's token bucket at --kube-api-qps / --kube-api-burst, events on the same
bucket, one sync per key in flight); the Deployment controller still writes at once.

Left out: adoption and release of pods by label selector (a controller owns the pods it
created, and manifests' pods whose controller ownerReference names it), matchExpressions,
minReadySeconds and progress deadlines, revision history cleanup, StatefulSet and DaemonSet
rolling updates (a changed template applies to pods created afterwards, as with OnDelete).
"""

from .common import CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH, compute_hash
from .controllers import WorkloadControllers
from .daemon import node_should_run_daemon_pod
from .metrics import count_cluster
from .workload import Workload, parse_workload

__all__ = [
    "CONTROLLER_REVISION_HASH",
    "POD_TEMPLATE_HASH",
    "Workload",
    "WorkloadControllers",
    "compute_hash",
    "count_cluster",
    "node_should_run_daemon_pod",
    "parse_workload",
]
