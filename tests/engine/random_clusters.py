"""Seeded random clusters and faults for the tests that compare the engine's shortcuts with
the straightforward loops they stand for (issue #27): small clusters in a few zones, nodes
with their own lease durations, offsets and exclusion labels, pods bound and scheduled, and a
random list of every kind of fault that changes what the shortcuts skip (kubelets stopped,
partitioned, powered, shut down; conditions, taints, nodes added and deleted, restarts,
parameters, passes run by hand, usage, deletions)."""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

from controller.engine.scenario import Scenario, ScenarioError, parse_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import cluster_state
from controller.engine.timeline import to_json

VERSIONS = ("1.18", "1.34")


def _pod(name: str, node: str | None, rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "requests": {
                        "cpu": rng.choice(["100m", "500m", "1", "3"]),
                        "memory": rng.choice(["128Mi", "1Gi", "3Gi"]),
                    }
                },
            }
        ]
    }
    if node is not None:
        spec["nodeName"] = node
    if rng.random() < 0.3:
        spec["tolerations"] = [
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": rng.choice([0, 5, 30]),
            }
        ]
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if rng.random() < 0.3:
        meta["annotations"] = {"usage.playground/memory": rng.choice(["500Mi", "2Gi", "7Gi"])}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _node(name: str, zone: str, rng: random.Random, version: str) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": name,
        "zone": zone,
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": str(rng.choice([3, 10, 110]))},
    }
    if rng.random() < 0.3:
        node["kubeletOffset"] = f"{rng.randrange(0, 10000)}ms"
    kubelet: dict[str, Any] = {}
    if rng.random() < 0.25:
        kubelet["nodeLeaseDurationSeconds"] = rng.choice([8, 40, 200])
    if rng.random() < 0.2:
        kubelet["nodeStatusReportFrequency"] = rng.choice(["20s", "1m"])
    if version == "1.34" and rng.random() < 0.2:
        kubelet["shutdownGracePeriod"] = "20s"
        kubelet["shutdownGracePeriodCriticalPods"] = "5s"
    if kubelet:
        node["kubelet"] = kubelet
    if rng.random() < 0.1:
        node["labels"] = {"node.kubernetes.io/exclude-disruption": ""}
    return node


def _more_admissions(
    seed: int, names: list[str], objects: list[Any], faults: list[Any], duration: int
) -> None:
    """Work for the kubelets' admission (its kept sums, kubelet/predicate.AdmittedIndex): a
    Deployment whose pods fill nodes (some do not fit and wait), critical pods applied later
    to nodes by name (their admission preempts running pods), deletions of them. From a
    random source of its own, drawn last: what the seeds drew before stays as it was."""
    more = random.Random(seed * 7919 + 3)
    if more.random() < 0.6:
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "fill", "namespace": "default"},
                "spec": {
                    "replicas": more.randint(2, 14),
                    "selector": {"matchLabels": {"app": "fill"}},
                    "template": {
                        "metadata": {"labels": {"app": "fill"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "resources": {
                                        "requests": {
                                            "cpu": more.choice(["700m", "1500m"]),
                                            "memory": more.choice(["512Mi", "2Gi"]),
                                        }
                                    },
                                }
                            ]
                        },
                    },
                },
            }
        )
    for i in range(more.randint(0, 4)):
        pod = _pod(f"crit-{i}", more.choice(names), more)
        pod["spec"]["priorityClassName"] = "system-node-critical"
        at = more.randrange(0, duration)
        faults.append({"at": f"{at}s", "type": "Apply", "object": pod})
        if more.random() < 0.3:
            faults.append(
                {
                    "at": f"{more.randrange(at, duration)}s",
                    "type": "DeletePod",
                    "pod": f"default/crit-{i}",
                }
            )


def random_scenario(seed: int) -> Scenario:
    """A random cluster and fault list, the same for the same seed."""
    rng = random.Random(seed)
    version = rng.choice(VERSIONS)
    zones = [f"z{i}" for i in range(rng.randint(1, 3))]
    names = [f"n-{i}" for i in range(1, rng.randint(3, 9))]
    nodes = [_node(n, rng.choice(zones), rng, version) for n in names]
    objects: list[dict[str, Any]] = []
    for i in range(rng.randint(0, 12)):
        objects.append(_pod(f"p-{i}", rng.choice(names + [None]), rng))  # type: ignore[list-item]
    if rng.random() < 0.5:
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": rng.randint(1, 6),
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [
                                {"name": "c", "resources": {"requests": {"cpu": "200m"}}}
                            ]
                        },
                    },
                },
            }
        )
    duration = rng.choice([300, 600, 900])
    faults: list[dict[str, Any]] = []
    added = 0
    for _ in range(rng.randint(0, 14)):
        at = (
            f"{rng.randrange(0, duration * 1000)}ms"
            if rng.random() < 0.5
            else f"{rng.randrange(0, duration)}s"
        )
        node = rng.choice(names)
        kind = rng.choice(
            [
                "StopKubelet",
                "StartKubelet",
                "PartitionNode",
                "HealNode",
                "PowerOffNode",
                "PowerOnNode",
                "SetNodeNotReady",
                "SetNodeReady",
                "SetNodeCondition",
                "ZoneOutage",
                "ZoneRestore",
                "Taint",
                "Untaint",
                "AddNode",
                "DeleteNode",
                "RestartControllerManager",
                "SetParameters",
                "RunControllerPass",
                "DeletePod",
                "Cordon",
                "LeakMemory",
            ]
            + (["ShutdownNode", "OutOfService", "RemoveOutOfService"] if version == "1.34" else [])
        )
        fault: dict[str, Any] = {"at": at, "type": kind}
        if kind in ("ZoneOutage", "ZoneRestore"):
            fault["zone"] = rng.choice(zones)
        elif kind == "SetNodeCondition":
            fault.update(
                node=node, condition="NetworkUnavailable", status=rng.choice(["True", "False"])
            )
        elif kind in ("Taint", "Untaint"):
            key = rng.choice(
                ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready", "maint"]
            )
            fault.update(node=node, key=key, effect=rng.choice(["NoExecute", "NoSchedule"]))
        elif kind == "AddNode":
            added += 1
            name = f"x-{added}"
            fault["node"] = _node(name, rng.choice(zones), rng, version)
            if rng.random() < 0.3:
                fault["kubeletMode"] = rng.choice(["Stopped", "LeaseOnly"])
            names.append(name)
        elif kind == "RestartControllerManager":
            pass
        elif kind == "SetParameters":
            cm = rng.choice(
                [
                    {"nodeMonitorGracePeriod": rng.choice(["20s", "40s", "70s"])},
                    {"nodeMonitorPeriod": rng.choice(["2s", "5s", "7s"])},
                    {"nodeEvictionRate": 0.5},
                ]
            )
            fault["controllerManager"] = cm
        elif kind == "RunControllerPass":
            fault["pass"] = rng.choice(["monitor", "monitor", "tainting"])
        elif kind == "DeletePod":
            fault["pod"] = f"default/p-{rng.randrange(0, 12)}"
        elif kind == "LeakMemory":
            fault.update(pod=f"default/p-{rng.randrange(0, 12)}", rate="50Mi")
        else:
            fault["node"] = node
        faults.append(fault)
    _more_admissions(seed, names[: len(nodes)], objects, faults, duration)
    spec: dict[str, Any] = {
        "kubernetesVersion": version,
        "duration": f"{duration}s",
        "nodes": nodes,
        "objects": objects,
        "faults": faults,
    }
    if rng.random() < 0.25:
        spec["controllerManager"] = {"enableTaintManager": False} if version == "1.18" else {}
    if rng.random() < 0.3:
        spec.setdefault("controllerManager", {})["nodeMonitorGracePeriod"] = rng.choice(
            ["20s", "50s"]
        )
    # Half the seeds throttle the node-controller's client hard (its own random stream, so
    # the rest of the scenario is what it was): passes that wait for tokens, visits at
    # their own instants, parked nodes whose deadline comes during a pass.
    slow = random.Random(seed * 7919 + 1)
    if slow.random() < 0.5:
        spec.setdefault("controllerManager", {}).update(
            kubeAPIQPS=slow.choice([0.5, 1, 2, 3]), kubeAPIBurst=slow.choice([1, 2, 3])
        )
    root = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"r{seed}"},
        "spec": spec,
    }
    while True:  # a fault the loader refuses (a node deleted before) is left out
        try:
            return parse_scenario(copy.deepcopy(root))
        except ScenarioError as exc:
            m = re.match(r"spec\.faults\[(\d+)\]", exc.path)
            if m is None:
                raise
            del faults[int(m.group(1))]


def run(seed: int, shortcuts: bool, checkpoints: list[int]) -> tuple[list[str], list[str]]:
    """The timeline (one JSON line per event) and the cluster state at each checkpoint of the
    random scenario ``seed``, with the shortcuts or without. A fault whose target is gone by
    its instant is refused and changes nothing (as a live room's action)."""
    sim = make_sim(seed, shortcuts)
    states = []
    for t in checkpoints:
        sim.run(t)
        states.append(json.dumps(cluster_state(sim), sort_keys=True))
    sim.run(sim.scenario.duration_ms)
    return [to_json(e) for e in sim.timeline.events], states


def make_sim(seed: int, shortcuts: bool) -> Simulation:
    """The simulation of the random scenario ``seed``, made afresh (SetParameters changes
    the scenario's config); odd seeds lower PodGC's terminatedPodThreshold."""
    sim = Simulation(random_scenario(seed))
    sim.shortcuts = shortcuts
    if seed % 2:
        sim.pod_gc.terminated_pod_threshold = seed % 5 + 1  # gcTerminated at work
    sim.apply_fault = lambda fault: sim.apply_action(fault, 0)  # type: ignore[method-assign]
    return sim
