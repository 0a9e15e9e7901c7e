"""Big-ish generated clusters give, byte for byte, the timelines the engine gave before its
t=0 speed work (issue #14, "Fast big rooms"): the sha256 of each run's JSON timeline was
computed with the code before the scheduler, kubelet admission and workload fast paths, so
an optimisation that changes any event of these runs fails here.

The runs cover what the fast paths touch: the block scheduler (more than 200 nodes; many
Deployments, whose blocks start from their pods' base blocks), a zone
outage and the rescheduling after it, nodes of mixed sizes that fill up, nodeSelectors,
DaemonSets (with and without tolerations), pods that never fit (FailedScheduling), bare pods
bound by nodeName beyond a node's capacity (kubelet admission's OutOf* rejections), taints of
every effect, a stopped kubelet, both simulated releases.

Recorded again once, for issue #37's model changes (not for an optimisation): the
node-controller's client-side throttling (fewer NoExecute taints and no taint-manager deletion
within the runs: the long monitor passes delay them, so fewer pods are recreated and bound)
and the event correlator (each
ReplicaSet's SuccessfulCreate past the spam filter's burst of 25 becomes a K8sEventDropped row).
And once more for #37's part 3, a pod's last phase: the mixed 1.34 run gains 19 PodPhase Failed
rows, each with its PodReady False, right before the PodRemoved of a pod deleted on a live node
(the timeline before is the one after without those 38 rows, in the same order).
And once more for #37's clients of the taint-eviction controller and PodGC: the 19 pods the
NoExecute taint on c-big-2 deletes at 15 s are no longer all deleted at 15 s. In 1.34 the
taint-eviction-controller's own bucket takes 4 requests a pod (the event, addConditionAndDeletePod's
GET, PATCH, DELETE: 76 > burst 30), the last DELETE at 16.9 s; in 1.18 the NoExecuteTaintManager
shares the node-controller's bucket, still draining the 321 RegisteredNode events of t=0, the last
DELETE at 15.8 s. What follows those deletions (terminations, the ReplicaSets' new pods) moves
with them.
And once more for the event sink's recordToSink: an Event that waited in its sink's queue for a
token keeps the instant it was recorded as its firstTimestamp (makeEvent), so its K8sEvent row
gains ``first`` (the node-controller's RegisteredNode events of t=0 and NodeNotReady events, the
taint manager's TaintManagerEviction ones); with those ``first`` fields taken out each run gives
its digest before, byte for byte (nothing else moved: no run has a node-controller or taint
manager event the spam filter drops).
And once more for #37's replicaset-controller client (workloads/clients.py): its pod POSTs,
status PUTs and events share one bucket of 20 qps / burst 30. Each of the 19 pods evicted from
c-big-2 costs its ReplicaSet a create and two or three status PUTs (replicas listed before the
create, then after it, then ready); the evictions come 50 ms apart, so the bucket runs dry at
the end: in 1.34 the last web replacement is created at 16.95 s instead of 16.9 s, in 1.18 the
last six web replacements at 15.6, 15.7, 15.75, 15.85, 15.9, 15.95 s instead of 15.55 ...
15.8 s (50 ms apart). Only those pods' rows move (PodCreated, its event or drop, PodScheduled,
Scheduled, PodPhase, PodReady; 6 rows in 1.34, 36 in 1.18), each with the row count unchanged.
With ``Simulation.shortcuts`` off the runs give
the same digests."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from controller.bench.build import big_room_scenario
from controller.engine.clock import SECOND
from controller.engine.scenario import parse_scenario
from controller.engine.simulation import Simulation
from controller.engine.timeline import to_json


def deployment(name: str, replicas: int, cpu: str, memory: str = "", **spec: Any) -> dict:
    requests = {"cpu": cpu, **({"memory": memory} if memory else {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": requests}}],
                    **spec,
                },
            },
        },
    }


def daemonset(name: str, cpu: str, **spec: Any) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                    **spec,
                },
            },
        },
    }


def bare(name: str, cpu: str, **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


def mixed(n: int, version: str) -> dict:
    """Small and big nodes in three zones, some without a zone, one cordoned; deployments
    that fill them, one pinned to a zone, one to a node, one that never fits; two
    DaemonSets; bare pods, 120 of them bound by nodeName to five small nodes (more
    than their cpu or pods allow); taints of
    every effect, a zone outage and a stopped kubelet."""
    nodes: list[dict] = []
    for z in "abc":
        small = {"pods": "20", "cpu": "2", "memory": "4Gi"}
        big = {"pods": "110", "cpu": "16", "memory": "64Gi"}
        for kind, capacity in (("small", small), ("big", big)):
            gen = {"count": n // 6, "namePrefix": f"{z}-{kind}-", "zone": f"zone-{z}"}
            nodes.append({"generate": {**gen, "capacity": capacity}})
    nodes.append({"generate": {"count": 20, "namePrefix": "plain-"}})
    nodes.append({"name": "cordoned", "zone": "zone-a", "unschedulable": True})
    objects = [
        deployment("web", n * 8, "100m", "128Mi"),
        deployment("api", n * 4, "250m"),
        deployment("pinned", n, "50m", nodeSelector={"topology.kubernetes.io/zone": "zone-b"}),
        deployment("huge", 30, "20"),
        deployment("hostpinned", 5, "10m", nodeSelector={"kubernetes.io/hostname": "a-big-1"}),
        daemonset("agent", "20m"),
        daemonset("tolerant", "5m", tolerations=[{"operator": "Exists"}]),
    ]
    objects += [bare(f"p-{i}", "30m") for i in range(200)]
    objects += [
        bare(f"bound-{i}", "150m" if i % 5 < 3 else "100m", nodeName=f"b-small-{i % 5 + 1}")
        for i in range(120)
    ]
    faults = [
        {"at": "10s", "type": "Taint", "node": "a-big-3", "key": "k", "effect": "NoSchedule"},
        {"at": "10s", "type": "Taint", "node": "b-big-5", "key": "p", "effect": "PreferNoSchedule"},
        {"at": "15s", "type": "Taint", "node": "c-big-2", "key": "x", "effect": "NoExecute"},
        {"at": "60s", "type": "ZoneOutage", "zone": "zone-c"},
        {"at": "90s", "type": "StopKubelet", "node": "b-big-7"},
    ]
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"mixed-{n}"},
        "spec": {
            "kubernetesVersion": version,
            "nodes": nodes,
            "objects": objects,
            "faults": faults,
        },
    }


def many_owners(n: int) -> dict:
    """``n`` nodes in three zones, one Deployment of 550 pods (its ReplicaSet creates them in
    two syncs of 500 and 50) and twelve of 40: the scheduler's owner indexes made from its
    base, and a returning Deployment's made again (schedwindow.OwnerIndex); a zone outage."""
    nodes = [
        {
            "generate": {
                "count": n // 3,
                "namePrefix": f"{z}-",
                "zone": f"zone-{z}",
                "capacity": {"pods": "110", "cpu": "8"},
            }
        }
        for z in "abc"
    ]
    objects = [deployment("big", 550, "10m")] + [deployment(f"s{i}", 40, "10m") for i in range(12)]
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"many-owners-{n}"},
        "spec": {
            "nodes": nodes,
            "objects": objects,
            "faults": [{"at": "20s", "type": "ZoneOutage", "zone": "zone-b"}],
        },
    }


RUNS = {
    # name: (scenario, seconds to run, events, sha256 of the JSON timeline)
    "big room of 300 nodes, zone-a down at 60 s": (
        lambda: big_room_scenario(300, 9000),
        400,
        58856,
        "ac13ecc1d0a8732ce23dc82bb163dbeefd6a73502e310b6f3a3b0d0abeeb3f1e",
    ),
    # computed with the code before the scheduler's base blocks (schedwindow.WindowIndex.base)
    "600 nodes, a big Deployment and twelve small ones, zone-b down at 20 s": (
        lambda: many_owners(600),
        400,
        13776,
        "c8ba1d3dc833a9b49e814264adca7a48502497422db89f0b25f682c14b69a50e",
    ),
    "mixed 1.34 cluster of 300 nodes": (
        lambda: mixed(300, "1.34"),
        300,
        35295,
        "63922ebb1dcfb85c8f6906b580b3845f99bb7ec36b24436fddd99aed8d2cb655",
    ),
    # Issue #37: c-big-2's 1.18 kubelet (5 qps, burst 10) deletes the 19 pods the NoExecute
    # taint evicted through its client, GET + PATCH + DELETE each: the PodRemoved rows of pods
    # 4 to 19 move from 45.0-45.8 s to 45.0 + (3k - 10) x 200 ms (45.4 s ... 54.4 s).
    "mixed 1.18 cluster of 300 nodes": (
        lambda: mixed(300, "1.18"),
        300,
        34122,
        "7ea0823ea7f24afb3258feb27389fc751586fa6145161958310f2b04bdb219bf",
    ),
}


@pytest.mark.parametrize("name", list(RUNS))
def test_big_timeline_digest_is_the_original_one(name: str) -> None:
    make, seconds, events, digest = RUNS[name]
    sim = Simulation(parse_scenario(make()))
    sim.run(seconds * SECOND)
    text = "".join(to_json(e) + "\n" for e in sim.timeline.events)
    got = hashlib.sha256(text.encode()).hexdigest()
    assert (len(sim.timeline.events), got) == (events, digest)
