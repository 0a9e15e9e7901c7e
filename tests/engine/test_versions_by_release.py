"""Every controller-side difference, release by release (1.18 and 1.27 to 1.36), at exact
simulated times. Each table says for every release what its source does; the stories are those
of tests/engine/test_taint_eviction_current.py (a-1's kubelet stops at 100 s, last renewal at
90 s; ``quick`` tolerates unreachable 20 s, ``web`` the default 300 s).

Read from: pkg/controller/nodelifecycle/config/v1alpha1/defaults.go (40 s until 1.31, 50 s from
1.32, #126287); pkg/features/kube_features.go (SeparateTaintEvictionController beta and on from
1.29, GA 1.34; PodDisruptionConditions beta and on from 1.26, GA 1.31;
NodeOutOfServiceVolumeDetach beta and on from 1.26, GA 1.28); tainteviction/timed_workers.go
(#129577, first released in 1.33); nodeutil.MarkPodsNotReady's event (#87743) and
markNodeForTainting's requeue (#89059), both since 1.19.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.versions import PROFILES

from .conftest import events, simulate, times
from .test_taint_eviction_current import CLUSTER, marking_times

RELEASES = list(PROFILES)  # 1.18, 1.27 ... 1.36


def since(release: str, first: str) -> bool:
    """``release`` has a rule that came in ``first`` (1.18 predates every one here)."""
    minor = int(release.split(".")[1])
    return release != "1.18" and minor >= int(first.split(".")[1])


def run(version: str, faults: str = "", grace: str | None = "40s", duration: str = "400s") -> Any:
    text = CLUSTER % {"version": version, "faults": faults, "duration": duration}
    if grace is None:  # the release's own default
        text = text.replace("  controllerManager: {nodeMonitorGracePeriod: 40s}\n", "")
    return simulate(text)


@pytest.mark.parametrize("release", RELEASES)
def test_the_grace_period_default_by_release(release: str) -> None:
    """RecommendedDefaultNodeLifecycleControllerConfiguration: the monitor pass (every 5 s)
    marks a-1 Unknown at the first pass strictly after 90 s + the grace period: 135 s with 40 s
    (1.18 to 1.31), 145 s with 50 s (1.32 on); the taint follows at the next pass."""
    sim = run(release, grace=None)
    unknown = 145.0 if since(release, "1.32") else 135.0
    assert times(sim, "NodeReady", node="a-1", status="Unknown") == [unknown]
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == [unknown + 5]


@pytest.mark.parametrize("release", RELEASES)
def test_who_deletes_and_the_disruption_condition_by_release(release: str) -> None:
    """The NoExecuteTaintManager inside the NodeLifecycleController until 1.28, the
    taint-eviction-controller from 1.29 (SeparateTaintEvictionController); both write the
    DisruptionTarget condition first from 1.27 on (PodDisruptionConditions, on since 1.26)."""
    sim = run(release)
    by = "TaintEvictionController" if since(release, "1.29") else "TaintManager"
    assert times(sim, "PodDeleted", pod="default/quick", by=by) == [160.0]
    want = [(160.0, "DeletionByTaintManager")] if since(release, "1.27") else []
    assert [
        (e["t"] / 1000, e["reason"])
        for e in events(sim, "PodDisruptionTarget", pod="default/quick")
    ] == want


@pytest.mark.parametrize("release", RELEASES)
def test_a_fired_deletion_is_forgotten_by_release(release: str) -> None:
    """TimedWorkerQueue.getWrappedWorkerFunc deletes a fired pod's key from 1.33 (#129577, not
    backported as far as the stored source shows): the maintenance taint at 200 s schedules
    quick again (+20 s). Before, in both taint managers, the key stays and refuses the add."""
    faults = "    - {at: 200s, type: Taint, node: a-1, key: maintenance, effect: NoExecute}"
    sim = run(release, faults)
    assert marking_times(sim) == ([160.0, 220.0] if since(release, "1.33") else [160.0])
    assert times(sim, "PodDeleted", pod="default/web") == [200.0]


@pytest.mark.parametrize("release", RELEASES)
def test_mark_pods_not_ready_and_the_requeue_by_release(release: str) -> None:
    """MarkPodsNotReady's Warning on each pod (#87743) and markNodeForTainting's Remove and
    re-Add of a node whose taint was taken off (#89059): every release from 1.19 on."""
    sim = run(
        release,
        "    - {at: 142s, type: Untaint, node: a-1, key: node.kubernetes.io/unreachable, effect: NoExecute}",
    )
    new = since(release, "1.27")
    warned = [
        e["object"] for e in events(sim, "K8sEvent", reason="NodeNotReady", eventType="Warning")
    ]
    assert warned == (["Pod/default/web", "Pod/default/quick"] if new else [])
    assert times(
        sim, "TaintAdded", node="a-1", key="node.kubernetes.io/unreachable", effect="NoExecute"
    ) == ([140.0, 150.0] if new else [140.0])


OUT_OF_SERVICE = """
apiVersion: playground/v1alpha1
kind: Scenario
spec:
  kubernetesVersion: "%s"
  duration: 500s
  controllerManager: {nodeMonitorGracePeriod: 40s}
  nodes:
    - {name: a-1, zone: a}
    - {name: a-2, zone: a}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: db, namespace: default}
      spec:
        nodeName: a-1
        tolerations:
          - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}
        containers: [{name: db}]
  faults:
    - {at: 100s, type: PowerOffNode, node: a-1}
    - {at: 200s, type: OutOfService, node: a-1}
"""


@pytest.mark.parametrize("release", RELEASES)
def test_podgc_out_of_service_by_release(release: str) -> None:
    """db is deleted by taint eviction at 160 s and stays Terminating (its node is off). The
    out-of-service taint at 200 s (a fault, first in its instant): from 1.27
    (NodeOutOfServiceVolumeDetach on since 1.26) PodGC's pass of that instant (every 20 s from
    0) marks it Failed and force-deletes it (gcTerminating, markFailedAndDeletePod); under 1.18
    it is only a NoExecute taint and db stays."""
    sim = simulate(OUT_OF_SERVICE % release)
    gc = times(sim, "PodDeleted", pod="default/db", by="PodGC", reason="TerminatingOutOfService")
    if since(release, "1.27"):
        assert gc == [200.0]
        assert times(sim, "PodRemoved", pod="default/db") == [200.0]
        assert times(sim, "PodPhase", pod="default/db", phase="Failed") == [200.0]
    else:
        assert gc == []
        assert times(sim, "PodRemoved", pod="default/db") == []


# Scenario fields by release: refused (with the release that removed them) or accepted.
FIELDS = [
    (
        "controllerManager",
        "enableTaintManager",
        "false",
        "removed in Kubernetes 1.27",
        "1.27",
        None,
    ),
    ("controllerManager", "podEvictionTimeout", "2m", "removed in Kubernetes 1.27", "1.27", None),
    (
        "featureGates",
        "LegacyNodeRoleBehavior",
        "false",
        "GA and locked since Kubernetes 1.21",
        "1.27",
        None,
    ),
    (
        "featureGates",
        "NodeDisruptionExclusion",
        "true",
        "GA and locked since Kubernetes 1.21",
        "1.27",
        None,
    ),
    ("kubelet", "shutdownGracePeriod", "30s", "came in Kubernetes 1.21", None, "1.27"),
    ("kubelet", "shutdownGracePeriodCriticalPods", "0s", "came in Kubernetes 1.21", None, "1.27"),
    (
        "kubelet",
        "shutdownGracePeriodByPodPriority",
        "[{priority: 0, shutdownGracePeriodSeconds: 10}]",
        "came in Kubernetes 1.23",
        None,
        "1.27",
    ),
]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    ("section", "key", "value", "why", "gone_in", "added_by"),
    [pytest.param(*f, id=f"{f[0]}.{f[1]}") for f in FIELDS],
)
def test_each_releases_fields(
    release: str,
    section: str,
    key: str,
    value: str,
    why: str,
    gone_in: str | None,
    added_by: str | None,
) -> None:
    """A field is refused where the release's source does not have it (removed from
    kube-controller-manager's options in 1.27; the gates removed after 1.21's GA; the kubelet's
    shutdown fields came in 1.21/1.23, after 1.18) and accepted everywhere else."""
    text = (
        "apiVersion: playground/v1alpha1\nkind: Scenario\nspec:\n"
        f'  kubernetesVersion: "{release}"\n  {section}: {{{key}: {value}}}\n'
        "  nodes: [{name: a-1}]\n"
    )
    refused = since(release, gone_in) if gone_in else not since(release, added_by)
    if not refused:
        load_scenario(text)
        return
    with pytest.raises(ScenarioError) as exc:
        load_scenario(text)
    assert exc.value.path == f"spec.{section}.{key}"
    assert f"not in Kubernetes {release}: " in exc.value.why and why in exc.value.why


@pytest.mark.parametrize("release", RELEASES)
def test_shutdown_node_fault_by_release(release: str) -> None:
    text = (
        "apiVersion: playground/v1alpha1\nkind: Scenario\nspec:\n"
        f'  kubernetesVersion: "{release}"\n  nodes: [{{name: a-1}}]\n'
        "  faults: [{at: 10s, type: ShutdownNode, node: a-1}]\n"
    )
    if since(release, "1.27"):
        load_scenario(text)
        return
    with pytest.raises(ScenarioError) as exc:
        load_scenario(text)
    assert exc.value.path == "spec.faults[0].type"


@pytest.mark.parametrize("release", RELEASES)
def test_default_toleration_seconds_by_release(release: str) -> None:
    """The DefaultTolerationSeconds admission plugin (plugin/pkg/admission/defaulttolerationseconds)
    is the same in every release: a pod without them gets not-ready and unreachable NoExecute
    tolerations of 300 s (kube-apiserver's --default-*-toleration-seconds); one that has its
    own keeps it."""
    sim = run(release, duration="1s")
    added = {
        (t.key, t.toleration_seconds)
        for t in sim.cluster.pods["default/web"].tolerations
        if t.effect == "NoExecute"
    }
    assert added == {
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 300),
    }
    quick = {
        (t.key, t.toleration_seconds)
        for t in sim.cluster.pods["default/quick"].tolerations
        if t.effect == "NoExecute"
    }
    assert quick == {
        ("node.kubernetes.io/unreachable", 20),
        ("maintenance", None),
        ("node.kubernetes.io/not-ready", 300),
    }
