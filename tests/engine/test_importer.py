"""Importing a real cluster (kubectl output, component configuration) and exporting it back
(issue #15): exact scenarios, exact recovery times after a simulated zone outage, every
error naming the item and field, and import -> export -> import giving the same scenario."""

from __future__ import annotations

import copy
import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.engine.scenario import ScenarioError, parse_scenario
from controller.engine.simulation import Simulation
from controller.kube_io.exports import (
    FORMULA_STARTS,
    cluster_manifests_yaml,
    timeline_csv,
    timeline_events,
)
from controller.kube_io.importer import import_cluster
from controller.whatif import what_if

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl"
THREE_ZONES = (FIXTURES / "three-zones.yaml").read_text()
UNUSUAL = (FIXTURES / "unusual.json").read_text()


def _walk_keys(value: Any) -> set[str]:
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.update(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _objects(scenario: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}": o
        for o in scenario["spec"]["objects"]
        if o["kind"] == kind
    }


def _sim(scenario: dict[str, Any]) -> Simulation:
    return Simulation(parse_scenario(copy.deepcopy(scenario)))


# -- the three-zone cluster -----------------------------------------------------------------
def test_three_zones_nodes_version_and_taints() -> None:
    scenario, _report = import_cluster(THREE_ZONES)
    spec = scenario["spec"]
    assert spec["kubernetesVersion"] == "1.33"  # kubeletVersion v1.33.4-eks-...: exactly 1.33
    assert [n["name"] for n in spec["nodes"]] == [
        "ip-10-0-1-11",
        "ip-10-0-1-12",
        "ip-10-0-2-21",
        "ip-10-0-2-22",
        "ip-10-0-3-31",
        "ip-10-0-3-32",
    ]
    node = spec["nodes"][2]
    assert node["capacity"] == {
        "cpu": "4",
        "ephemeral-storage": "83873772Ki",
        "memory": "16086764Ki",
        "pods": "58",
    }
    assert node["labels"]["topology.kubernetes.io/zone"] == "eu-west-1b"
    assert node["labels"]["failure-domain.beta.kubernetes.io/zone"] == "eu-west-1b"
    assert spec["faults"] == [
        {
            "at": "0s",
            "type": "Taint",
            "node": "ip-10-0-3-32",
            "taints": [{"key": "dedicated", "effect": "NoSchedule", "value": "db"}],
        }
    ]
    sim = _sim(scenario)
    sim.run(0)
    zones = {n.name: n.zone_key for n in sim.cluster.nodes.values()}
    assert zones["ip-10-0-2-21"] == "eu-west-1:\x00:eu-west-1b"
    assert [(t.key, t.value, t.effect) for t in sim.cluster.nodes["ip-10-0-3-32"].taints] == [
        ("dedicated", "db", "NoSchedule")
    ]


def test_three_zones_drops_status_and_server_fields() -> None:
    scenario, _report = import_cluster(THREE_ZONES)
    keys = _walk_keys(scenario)
    for dropped in (
        "status",
        "managedFields",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "kubectl.kubernetes.io/last-applied-configuration",
        "progressDeadlineSeconds",
        "volumeMounts",
    ):
        assert dropped not in keys, dropped


def test_three_zones_workloads_and_owner_chain() -> None:
    scenario, _report = import_cluster(THREE_ZONES)
    workloads = [
        (o["kind"], o["metadata"]["name"])
        for o in scenario["spec"]["objects"]
        if o["kind"] != "Pod"
    ]
    # The Deployments' ReplicaSets are the simulated Deployment controller's own.
    assert workloads == [
        ("Deployment", "web"),
        ("Deployment", "api"),
        ("StatefulSet", "db"),
        ("DaemonSet", "node-exporter"),
    ]
    pods = _objects(scenario, "Pod")
    assert len(pods) == 15
    web = pods["shop/web-7c5ddbdf54-2xkqp"]
    assert web["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-79668df6b", "controller": True}
    ]
    assert web["metadata"]["labels"] == {"app": "web", "pod-template-hash": "79668df6b"}
    assert web["spec"]["nodeName"] == "ip-10-0-1-11"
    assert web["spec"]["containers"] == [
        {
            "name": "web",
            "image": "ghcr.io/acme/web:2.14.1",
            "resources": {
                "requests": {"cpu": "250m", "memory": "256Mi"},
                "limits": {"memory": "512Mi"},
            },
        }
    ]
    api = pods["shop/api-58b7f9d6c8-k9rlx"]
    assert api["spec"]["priority"] == 100000
    assert "priorityClassName" not in api["spec"]
    assert api["spec"]["tolerations"][0] == {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "tolerationSeconds": 30,
    }
    api_deploy = _objects(scenario, "Deployment")["shop/api"]
    assert api_deploy["spec"]["template"]["spec"]["priority"] == 100000
    assert pods["shop/db-1"]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    exporter = pods["monitoring/node-exporter-4hvxq"]
    assert exporter["spec"]["priorityClassName"] == "system-node-critical"
    assert "affinity" not in exporter["spec"]  # the DaemonSet controller's own


def test_three_zones_simulates_without_new_pods() -> None:
    """The controllers find the imported pods: nothing is created or deleted at t=0, and each
    pod runs on its node with its QoS class."""
    scenario, _report = import_cluster(THREE_ZONES)
    sim = _sim(scenario)
    sim.run(30_000)
    created = [e["pod"] for e in sim.timeline.events if e["type"] == "PodCreated"]
    assert len(created) == 15
    assert created[0] == "shop/web-7c5ddbdf54-2xkqp"
    assert not [e for e in sim.timeline.events if e["type"] == "PodDeleted"]
    pods = sim.cluster.pods
    assert pods["shop/db-2"].node_name == "ip-10-0-3-32"
    assert pods["shop/api-58b7f9d6c8-w2fjd"].qos_class() == "Guaranteed"
    assert pods["shop/web-7c5ddbdf54-2xkqp"].qos_class() == "Burstable"
    assert sim.workloads.metrics() == {
        "DaemonSet/monitoring/node-exporter": (6, 6),
        "Deployment/shop/api": (2, 2),
        "Deployment/shop/web": (4, 4),
        "StatefulSet/shop/db": (3, 3),
    }


def test_three_zones_report() -> None:
    _scenario, report = import_cluster(THREE_ZONES)
    got = [(r["kind"], r["name"], r["why"].split(":")[0]) for r in report]
    assert got == [
        ("Node", "(all)", "no kube-apiserver version in the List"),
        (
            "Node",
            "ip-10-0-1-11, ip-10-0-1-12, ip-10-0-2-21, ip-10-0-2-22, ip-10-0-3-31, ip-10-0-3-32",
            "allocatable cpu 3920m of 4, memory 15219948Ki of 16086764Ki",
        ),
        ("Deployment", "shop/web", "probes are not simulated"),
        ("ReplicaSet", "shop/web-6d9f7b8c5f", "an old ReplicaSet of Deployment web (0 replicas)"),
        ("ReplicaSet", "shop/web-7c5ddbdf54", "ReplicaSet of Deployment web"),
        (
            "Deployment",
            "shop/api",
            "priority class business-critical is not imported (PriorityClasses are not in the "
            "List)",
        ),
        ("ReplicaSet", "shop/api-58b7f9d6c8", "ReplicaSet of Deployment api"),
        ("StatefulSet", "shop/db", "volumeClaimTemplates"),
    ]


# Zone eu-west-1b fails at 60 s (1.34: nodeMonitorGracePeriod 50 s; the last lease renewal
# before the cut is at 50 s, so both nodes go Unknown at the 105 s monitor pass). The zone is
# in FullDisruption among healthy ones: nodes are tainted NoExecute at the 0.1/s rate, at 110 s
# (ip-10-0-2-21) and 120 s (ip-10-0-2-22).
RECOVERY_ZONE_B = [
    # api tolerates unreachable for 30 s: its pod on 2-21 is deleted at 140 s and its
    # replacement runs at once on another zone's node.
    ("Deployment/api", 2, 105_000, 1, 140_000),
    # web: 300 s, its pods on 2-21 and 2-22 are replaced at 410 s and 420 s.
    ("Deployment/web", 4, 105_000, 2, 420_000),
    # db-1 on 2-22 is deleted at 420 s but stays Terminating (its kubelet cannot confirm) and
    # a StatefulSet never runs two pods of one identity: not back while the zone is down.
    ("StatefulSet/db", 3, 105_000, 2, None),
    # DaemonSet pods tolerate unreachable forever: the two of zone b stay, not ready.
    ("DaemonSet/node-exporter", 6, 105_000, 4, None),
]


@pytest.mark.parametrize(
    "workload, desired, down, lowest, back",
    RECOVERY_ZONE_B,
    ids=[r[0] for r in RECOVERY_ZONE_B],
)
def test_zone_b_outage_recovery(workload, desired, down, lowest, back) -> None:
    scenario, _report = import_cluster(THREE_ZONES)
    rows = {r["workload"]: r for r in _zone_b_rows(scenario)}
    row = rows[workload]
    assert (row["desired"], row["down_at_ms"], row["lowest_ready"], row["back_at_ms"]) == (
        desired,
        down,
        lowest,
        back,
    )


_ROWS: dict[str, list[dict[str, Any]]] = {}


def _zone_b_rows(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    if "b" not in _ROWS:
        _ROWS["b"] = what_if(scenario, zone="eu-west-1b", at_ms=60_000, duration_ms=900_000)
    return _ROWS["b"]


def test_zone_b_outage_timeline() -> None:
    """The same outage as scenario faults: who deletes which pod when, and where the
    replacements go (the dedicated=db node takes no web or api pod)."""
    scenario, _report = import_cluster(THREE_ZONES)
    scenario["spec"]["faults"].append({"at": "60s", "type": "ZoneOutage", "zone": "eu-west-1b"})
    sim = _sim(scenario)
    sim.run(600_000)
    deleted = [
        (e["t"], e["pod"], e["by"]) for e in sim.timeline.events if e["type"] == "PodDeleted"
    ]
    assert deleted == [
        (140_000, "shop/api-58b7f9d6c8-k9rlx", "TaintEvictionController"),
        (410_000, "shop/web-7c5ddbdf54-8hz4m", "TaintEvictionController"),
        (420_000, "shop/web-7c5ddbdf54-bq7wd", "TaintEvictionController"),
        (420_000, "shop/db-1", "TaintEvictionController"),
    ]
    scheduled = {
        e["pod"].rsplit("-", 1)[0]: e["node"]
        for e in sim.timeline.events
        if e["type"] == "PodScheduled" and e["t"] > 0
    }
    assert "ip-10-0-3-32" not in scheduled.values()
    assert not any(node.startswith("ip-10-0-2-") for node in scheduled.values())


def test_json_output_imports_the_same() -> None:
    as_json = json.dumps(yaml.safe_load(THREE_ZONES), indent=4)
    assert import_cluster(as_json) == import_cluster(THREE_ZONES)


# -- the unusual cluster ------------------------------------------------------------------------
def test_unusual_cluster() -> None:
    scenario, report = import_cluster(UNUSUAL)
    spec = scenario["spec"]
    assert spec["kubernetesVersion"] == "1.29"
    nodes = {n["name"]: n for n in spec["nodes"]}
    assert nodes["worker-3"]["unschedulable"] is True
    assert "unschedulable" not in nodes["worker-1"]
    assert nodes["worker-1"]["capacity"] == {
        "cpu": "8",
        "ephemeral-storage": "101430960Ki",
        "memory": "32882012Ki",
        "pods": "110",
    }
    assert spec["faults"] == [
        {
            "at": "0s",
            "type": "Taint",
            "node": "cp-1",
            "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        }
    ]
    pods = _objects(scenario, "Pod")
    assert sorted(pods) == [
        "default/cache-6f7d8c9b5-4rx2k",
        "default/cache-6f7d8c9b5-9vhtz",
        "default/debug",
        "default/legacy-8kq2w",
        "default/stray",
        "kube-system/kube-apiserver-cp-1",
        "ops/report-28911600-p2m9d",
    ]
    assert "ownerReferences" not in pods["kube-system/kube-apiserver-cp-1"]["metadata"]
    assert "ownerReferences" not in pods["ops/report-28911600-p2m9d"]["metadata"]
    assert "nodeName" not in pods["default/stray"]["spec"]
    assert pods["default/legacy-8kq2w"]["metadata"]["ownerReferences"][0]["name"] == "legacy"
    cache = _objects(scenario, "Deployment")["default/cache"]
    assert cache["spec"]["strategy"] == {"type": "Recreate"}
    assert cache["spec"]["selector"] == {"matchLabels": {"app": "cache"}}
    assert _objects(scenario, "ReplicaSet").keys() == {"default/legacy", "default/orphan-5c8d"}
    whys = {(r["kind"], r["name"]): r["why"] for r in report}
    versions = [r["why"] for r in report if r["name"] == "(all)"]
    assert versions == [
        "no kube-apiserver version in the List: the control plane is taken to run 1.29, the "
        "newest kubelet's release (add `kubectl version -o yaml` to the text to give it)",
    ]
    # The 1.28 kubelet keeps its release (version skew); the others run the control plane's.
    assert {n["name"]: n.get("kubeletVersion") for n in spec["nodes"]} == {
        "cp-1": None,
        "worker-1": None,
        "worker-2": "1.28",
        "worker-3": None,
    }
    assert whys[("Service", "default/kubernetes")].startswith("kind Service is not simulated")
    assert whys[("Pod", "ops/backup-28911520-x7kqz")] == (
        "phase Succeeded: a finished pod is not imported"
    )
    assert whys[("Pod", "kube-system/kube-apiserver-cp-1")] == (
        "a static (mirror) pod: imported as a bare pod"
    )
    assert whys[("Node", "worker-1")] == "capacity not simulated: nvidia.com/gpu: 1"
    assert whys[("Deployment", "ops/batch-api")].endswith("no pod shows its value: priority 0")
    debug = [r["why"] for r in report if r["name"] == "default/debug"]
    assert debug == [
        "affinity is not simulated (only nodeSelector and taints steer scheduling)",
        "persistent volumes are not simulated: a pod may come back in any zone",
        "topologySpreadConstraints are not simulated",
        "probes are not simulated: a pod is Ready as soon as it runs",
    ]
    assert not [r for r in report if r["kind"] == "Event"]  # the past is dropped, not listed
    sim = _sim(scenario)
    sim.run(60_000)
    assert sim.cluster.pods["default/stray"].node_name  # scheduled somewhere else
    assert sim.workloads.metrics()["Deployment/default/cache"] == (2, 2)


# -- errors: the item and the field, nothing changed -----------------------------------------------
def _mutated(change) -> str:
    doc = yaml.safe_load(THREE_ZONES)
    change(doc["items"])
    return yaml.safe_dump(doc, sort_keys=False)


def _set(path: list[Any], value: Any):
    def change(items: list[Any]) -> None:
        target = items
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value

    return change


ERRORS = [
    (
        _set([12, "spec", "containers", 0, "resources", "requests", "memory"], "16GB"),
        'items[12].spec.containers[0].resources.requests.memory: "16GB" is not a Kubernetes '
        "quantity",
    ),
    (
        _set([2, "status", "capacity", "memory"], "lots"),
        'items[2].status.capacity.memory: "lots" is not a Kubernetes quantity',
    ),
    (
        _set([5, "spec", "taints", 0, "effect"], "NoWay"),
        "items[5].spec.taints[0].effect: must be NoSchedule, PreferNoSchedule or NoExecute",
    ),
    (
        _set([0, "metadata", "labels", "bad key!"], "x"),
        'items[0].metadata.labels: "bad key!": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ),
    (
        _set([1, "status", "nodeInfo", "kubeletVersion"], "v2.0.0"),
        'items[1].status.nodeInfo.kubeletVersion: "v2.0.0" is not a Kubernetes release such '
        "as v1.34.1",
    ),
    (
        _set([15, "spec", "tolerations", 0, "operator"], "Maybe"),
        'items[15].spec.tolerations[0].operator: must be "Equal" or "Exists", got "Maybe"',
    ),
    (
        _set([6, "spec", "replicas"], "four"),
        'items[6].spec.replicas: must be an integer, got "four"',
    ),
    (
        _set([17, "spec", "podManagementPolicy"], "Whenever"),
        'items[17].spec.podManagementPolicy: must be OrderedReady or Parallel, got "Whenever"',
    ),
    (
        _set([21, "spec", "template", "spec", "containers"], []),
        "items[21].spec.template.spec.containers: a pod needs at least one container",
    ),
    (
        _set([9, "metadata", "name"], None),
        "items[9].metadata.name: must be a non-empty string, got nothing",
    ),
    (_set([9, "kind"], None), "items[9].kind: is required"),
    (_set([3], "a string"), 'items[3]: must be a Kubernetes object (a mapping), got "a string"'),
    (
        lambda items: items.__setitem__(slice(0, 6), []),
        "items: no Node: the List must hold the cluster's nodes",
    ),
]


@pytest.mark.parametrize("change, message", ERRORS, ids=[m.split(":")[0] for _c, m in ERRORS])
def test_import_errors_name_item_and_field(change, message) -> None:
    text = _mutated(change)
    before = text
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert str(exc.value) == message
    assert text == before


def test_import_error_pod_index_is_a_pod() -> None:
    assert yaml.safe_load(THREE_ZONES)["items"][12]["kind"] == "Pod"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the text holds no YAML or JSON document"),
        ("items: [a", "malformed YAML at line 2, column 1: did not find expected ',' or ']'"),
        ('{"kind": "List", "items": 3}', "items: must be a list, got 3"),
    ],
)
def test_import_errors_documents(text, message) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert str(exc.value) == message


# -- component configuration -------------------------------------------------------------------
KUBELET_CONFIG = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
nodeStatusUpdateFrequency: 20s
nodeLeaseDurationSeconds: 60
evictionHard: {memory.available: 500Mi, nodefs.available: "10%"}
kubeReserved: {cpu: 100m, memory: 1Gi}
clusterDNS: [10.96.0.10]
featureGates: {GracefulNodeShutdown: true}
"""
CM_CONFIG = """\
apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1
kind: KubeControllerManagerConfiguration
Generic: {Controllers: ["*"]}
KubeCloudShared: {NodeMonitorPeriod: 2s, ClusterName: prod}
NodeLifecycleController:
  NodeMonitorGracePeriod: 20s
  NodeEvictionRate: 0.5
  LargeClusterSizeThreshold: 3
DeploymentController: {ConcurrentDeploymentSyncs: 5}
"""


def test_component_configuration_merged_and_reported() -> None:
    scenario, report = import_cluster(
        THREE_ZONES,
        kubelet_config=KUBELET_CONFIG,
        controller_manager_config=CM_CONFIG,
        flags="kube-controller-manager --node-eviction-rate=0.2 --unhealthy-zone-threshold 0.6 "
        "--concurrent-deployment-syncs=10 --default-unreachable-toleration-seconds=120",
    )
    spec = scenario["spec"]
    assert spec["kubelet"] == {
        "nodeStatusUpdateFrequency": "20s",
        "nodeLeaseDurationSeconds": 60,
        "evictionHard": {"memory.available": "500Mi", "nodefs.available": "10%"},
    }
    assert spec["controllerManager"] == {
        "nodeMonitorGracePeriod": "20s",
        "nodeEvictionRate": 0.2,  # the flag, after the file
        "largeClusterSizeThreshold": 3,
        "nodeMonitorPeriod": "2s",
        "unhealthyZoneThreshold": 0.6,
    }
    assert spec["apiServer"] == {"defaultUnreachableTolerationSeconds": 120}
    notes = [(r["kind"], r["name"], r["why"]) for r in report[-4:]]
    assert notes == [
        (
            "KubeletConfiguration",
            "kubeReserved",
            "not simulated: the simulated kubelet keeps only evictionHard back from capacity",
        ),
        ("featureGate", "GracefulNodeShutdown", "not simulated"),
        (
            "KubeControllerManagerConfiguration",
            "Generic.Controllers, KubeCloudShared.ClusterName, DeploymentController",
            "not simulated",
        ),
        ("flag", "--concurrent-deployment-syncs", "not simulated"),
    ]
    sim = _sim(scenario)
    assert sim.config.controller_manager.node_monitor_grace_period_ms == 20_000
    assert sim.config.kubelet.node_status_update_frequency_ms == 20_000
    assert sim.config.api_server.default_unreachable_toleration_seconds == 120


def test_client_rate_limits_imported() -> None:
    """--kube-api-qps / --kube-api-burst, as flags or as the configuration file's
    Generic.ClientConnection (GenericControllerManagerConfiguration), become
    controllerManager.kubeAPIQPS / kubeAPIBurst: the node-controller's token bucket."""
    cm = CM_CONFIG.replace(
        'Generic: {Controllers: ["*"]}', "Generic: {ClientConnection: {QPS: 50, Burst: 80}}"
    )
    scenario, _report = import_cluster(THREE_ZONES, controller_manager_config=cm)
    assert scenario["spec"]["controllerManager"]["kubeAPIQPS"] == 50
    assert scenario["spec"]["controllerManager"]["kubeAPIBurst"] == 80
    scenario, _report = import_cluster(THREE_ZONES, flags="--kube-api-qps=-1 --kube-api-burst 7")
    assert scenario["spec"]["controllerManager"] == {"kubeAPIQPS": -1.0, "kubeAPIBurst": 7}
    assert _sim(scenario).controller.client.limiter is None
    with pytest.raises(ScenarioError) as exc:
        import_cluster(THREE_ZONES, flags="--kube-api-burst=-2")
    assert str(exc.value).startswith("spec.controllerManager.kubeAPIBurst: -2 must not be negative")


def test_component_configuration_changes_recovery() -> None:
    """nodeMonitorGracePeriod 20s: zone b goes Unknown at 85 s instead of 105 s."""
    scenario, _report = import_cluster(THREE_ZONES, flags="--node-monitor-grace-period=20s")
    rows = {r["workload"]: r for r in what_if(scenario, zone="eu-west-1b", duration_ms=600_000)}
    assert rows["Deployment/api"]["down_at_ms"] == 75_000
    assert rows["Deployment/api"]["back_at_ms"] == 110_000


CONFIG_ERRORS = [
    (
        {"kubelet_config": KUBELET_CONFIG.replace("500Mi", "5 lots")},
        "KubeletConfiguration.evictionHard.memory.available",
    ),
    (
        {"kubelet_config": "apiVersion: v1\nkind: KubeletConfiguration\n"},
        'KubeletConfiguration.apiVersion: must be kubelet.config.k8s.io/v1beta1, got "v1"',
    ),
    (
        {"controller_manager_config": CM_CONFIG.replace("0.5", "-1")},
        "KubeControllerManagerConfiguration.NodeLifecycleController.NodeEvictionRate: must be "
        ">= 0, got -1",
    ),
    (
        {"controller_manager_config": CM_CONFIG.replace("2s", "soon")},
        "KubeControllerManagerConfiguration.KubeCloudShared.NodeMonitorPeriod:",
    ),
    ({"flags": "--node-eviction-rate=fast"}, '--node-eviction-rate: must be a number, got "fast"'),
    (
        {"flags": "--node-monitor-grace-period=0s"},
        "--node-monitor-grace-period: must be at least 0.001s",
    ),
    (
        {"flags": "--large-cluster-size-threshold=-3"},
        "--large-cluster-size-threshold: must be >= 0, got -3",
    ),
    (
        {"flags": "--feature-gates=NodeDisruptionExclusion=maybe"},
        '--feature-gates.NodeDisruptionExclusion: must be true or false, got "maybe"',
    ),
]


@pytest.mark.parametrize("kwargs, message", CONFIG_ERRORS, ids=[m for _k, m in CONFIG_ERRORS])
def test_component_configuration_errors(kwargs, message) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(THREE_ZONES, **kwargs)
    assert str(exc.value).startswith(message)


def test_fields_the_release_does_not_have_are_reported() -> None:
    """A 1.33 cluster's --pod-eviction-timeout (removed in 1.27): dropped and listed."""
    scenario, report = import_cluster(THREE_ZONES, flags="--pod-eviction-timeout=2m")
    assert "controllerManager" not in scenario["spec"]
    assert report[-1]["name"] == "podEvictionTimeout"
    assert report[-1]["why"].startswith("not in Kubernetes 1.33: removed in Kubernetes 1.27")


# -- exports and the round trip ------------------------------------------------------------------
def test_round_trip_import_export_import() -> None:
    first, _report = import_cluster(THREE_ZONES)
    sim = _sim(first)
    sim.run(0)
    text = cluster_manifests_yaml(sim, first)
    again, report = import_cluster(text)
    assert again == first
    assert report == []


def test_round_trip_after_a_zone_outage() -> None:
    """After the outage the export holds the replacements; importing it gives a scenario
    whose cluster has them where the simulation put them."""
    first, _report = import_cluster(THREE_ZONES)
    first["spec"]["faults"].append({"at": "60s", "type": "ZoneOutage", "zone": "eu-west-1b"})
    sim = _sim(first)
    sim.run(500_000)
    again, _report = import_cluster(cluster_manifests_yaml(sim, first))
    assert again["spec"]["faults"] == first["spec"]["faults"][:1]  # t=0 taints only
    pods = _objects(again, "Pod")
    assert "shop/api-58b7f9d6c8-k9rlx" not in pods
    live = {p.key: p.node_name for p in sim.cluster.pods.values() if not p.terminating}
    assert {k: p["spec"].get("nodeName") for k, p in pods.items()} == live
    sim2 = _sim(again)
    sim2.run(1_000)
    assert sim2.workloads.metrics()["Deployment/shop/web"] == (4, 4)


def test_timeline_csv() -> None:
    events = [
        {"t": 105_000, "type": "NodeReady", "node": "a-1", "status": "Unknown", "reason": "X"},
        {
            "t": 140_250,
            "type": "PodDeleted",
            "pod": "shop/api-1",
            "node": "a-1",
            "by": "T",
            "reason": "R",
        },
    ]
    assert timeline_csv(events).splitlines() == [
        "t_seconds,type,subject,node,pod,zone,what,fields",
        '105.000,NodeReady,a-1,a-1,,,Ready=Unknown (X),"{""node"":""a-1"",""reason"":""X"",""status"":""Unknown""}"',
        '140.250,PodDeleted,shop/api-1,a-1,shop/api-1,,deleted by T on a-1: R,"{""by"":""T"",""node"":""a-1"",""pod"":""shop/api-1"",""reason"":""R""}"',
    ]


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        (
            "+ node.kubernetes.io/unreachable:NoExecute",
            "'+ node.kubernetes.io/unreachable:NoExecute",
        ),
        ("- k:NoSchedule", "'- k:NoSchedule"),
        ('=HYPERLINK("http://x")', '"\'=HYPERLINK(""http://x"")"'),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a-1", "a-1"),
        ("", ""),
        ("x=1", "x=1"),
    ],
)
def test_timeline_csv_cells_never_start_like_a_formula(cell: str, written: str) -> None:
    """OWASP's CSV injection advice: a cell that starts with = + - @, a tab or a carriage
    return is written with a single quote in front; the t column is a number >= 0."""
    events = [{"t": 1_000, "type": "NodeReady", "node": cell, "status": "True", "reason": "R"}]
    row = timeline_csv(events).split("\n", 1)[1]
    assert row.startswith(f"1.000,NodeReady,{written},{written},,,")
    for added in ("TaintAdded", "TaintRemoved"):
        taint = {"t": 0, "type": added, "node": "a-1", "key": "k", "effect": "NoExecute"}
        cells = next(csv.reader(io.StringIO(timeline_csv([taint]).splitlines()[1])))
        assert not any(c.startswith(FORMULA_STARTS) for c in cells)
        assert cells[6] in ("'+ k:NoExecute", "'- k:NoExecute")


def test_timeline_events_list() -> None:
    events = [
        {
            "t": 140_000,
            "type": "K8sEvent",
            "object": "Pod/shop/api-1",
            "reason": "TaintManagerEviction",
            "message": "Marking for deletion Pod shop/api-1",
            "eventType": "Normal",
        },
        {"t": 110_500, "type": "TaintAdded", "node": "a-1", "key": "k", "effect": "NoExecute"},
    ]
    out = timeline_events(events)
    assert out["apiVersion"] == "events.k8s.io/v1" and out["kind"] == "EventList"
    first, second = out["items"]
    assert first["regarding"] == {
        "kind": "Pod",
        "name": "api-1",
        "namespace": "shop",
        "apiVersion": "v1",
    }
    assert (first["reason"], first["note"], first["type"]) == (
        "TaintManagerEviction",
        "Marking for deletion Pod shop/api-1",
        "Normal",
    )
    assert first["eventTime"] == "2026-01-01T00:02:20.000000Z"
    assert second["metadata"]["name"] == "a-1.0000000000000001"
    assert second["metadata"]["namespace"] == "default"
    assert (second["reason"], second["note"], second["reportingController"]) == (
        "TaintAdded",
        "a-1: + k:NoExecute",
        "playground/node-lifecycle-controller",
    )
    assert second["eventTime"] == "2026-01-01T00:01:50.500000Z"


# -- a 10 MB list ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt, pods", [("json", 2000), ("yaml", 3700)])
def test_ten_megabyte_list_imports(fmt, pods) -> None:
    """Hundreds of nodes and thousands of pods, as kubectl -o json writes them; the time is
    printed (no timing assertion: the machine is shared)."""
    doc = json.loads(json.dumps(yaml.safe_load(THREE_ZONES)))
    items = doc["items"]
    nodes = [i for i in items if i["kind"] == "Node"]
    pod = next(i for i in items if i["metadata"]["name"] == "web-7c5ddbdf54-2xkqp")
    big = []
    for n in range(300):
        node = copy.deepcopy(nodes[n % len(nodes)])
        node["metadata"]["name"] = f"node-{n:04d}"
        node["metadata"]["labels"]["kubernetes.io/hostname"] = f"node-{n:04d}"
        big.append(node)
    big.extend(i for i in items if i["kind"] != "Node" and i["kind"] != "Pod")
    for p in range(pods):
        q = copy.deepcopy(pod)
        q["metadata"]["name"] = f"web-7c5ddbdf54-x{p:05d}"
        q["spec"]["nodeName"] = f"node-{p % 300:04d}"
        big.append(q)
    doc["items"] = big
    if fmt == "json":
        text = json.dumps(doc, indent=4)
    else:
        text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    assert len(text) > 10_000_000
    start = time.perf_counter()
    scenario, _report = import_cluster(text)
    elapsed = time.perf_counter() - start
    print(
        f"\n{fmt} list of {len(text) / 1e6:.1f} MB (300 nodes, {pods} pods) imported in "
        f"{elapsed:.2f} s"
    )
    assert len(scenario["spec"]["nodes"]) == 300
    assert len(_objects(scenario, "Pod")) == pods


# -- manage.py import_cluster ------------------------------------------------------------------
def test_cli_writes_scenario_and_report(tmp_path: Path) -> None:
    import io

    from controller.engine.scenario import load_scenario
    from controller.kube_io.cli import run_cli

    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(KUBELET_CONFIG)
    out, err = io.StringIO(), io.StringIO()
    code = run_cli(
        str(FIXTURES / "three-zones.yaml"),
        str(kubelet),
        None,
        "--node-monitor-grace-period=30s",
        "shop-prod",
        out,
        err,
    )
    assert code == 0
    scenario = load_scenario(out.getvalue())
    assert scenario.name == "shop-prod"
    assert scenario.config.controller_manager.node_monitor_grace_period_ms == 30_000
    assert scenario.config.kubelet.node_lease_duration_seconds == 60
    assert out.getvalue().startswith(
        "# Imported from kubectl output: 6 nodes in 3 zones, 4 workloads, 15 pods; "
    )
    assert "#   StatefulSet shop/db: volumeClaimTemplates: " in out.getvalue()
    assert err.getvalue().splitlines()[0] == (
        "import report: 10 notes (also at the top of the scenario)"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["/nonexistent.yaml"],
            "error: FILE: cannot read /nonexistent.yaml: No such file or directory",
        ),
        (
            [str(FIXTURES / "unusual.json"), "--flags=--node-eviction-rate=x"],
            'error: --node-eviction-rate: must be a number, got "x"',
        ),
        (
            [str(FIXTURES / "unusual.json"), "--kubelet-config", "/nope"],
            "error: --kubelet-config: cannot read /nope: No such file or directory",
        ),
    ],
)
def test_manage_py_import_cluster_exits_2(args, message) -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "manage.py", "import_cluster", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == message


def test_rollout_in_progress_is_reported() -> None:
    doc = yaml.safe_load(THREE_ZONES)
    old = next(i for i in doc["items"] if i["metadata"]["name"] == "web-6d9f7b8c5f")
    old["spec"]["replicas"] = 1
    doc["items"][6]["spec"]["template"]["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/restartedAt": "2025-09-14T08:00:00Z"
    }
    scenario, report = import_cluster(yaml.safe_dump(doc))
    assert {
        "kind": "Deployment",
        "name": "shop/web",
        "why": (
            "a rollout in progress (web-6d9f7b8c5f, web-7c5ddbdf54 have replicas): all their pods "
            "are counted in the ReplicaSet of the current template"
        ),
    } in report
    web = _objects(scenario, "Deployment")["shop/web"]
    assert web["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/restartedAt": "2025-09-14T08:00:00Z"
    }


@pytest.mark.parametrize(
    "reason, obj, controller",
    [
        ("TaintManagerEviction", "Pod/shop/a", "taint-eviction-controller"),
        ("ScalingReplicaSet", "Deployment/shop/web", "deployment-controller"),
        ("SuccessfulCreate", "StatefulSet/shop/db", "statefulset-controller"),
        ("SuccessfulCreate", "ReplicaSet/shop/web-1", "replicaset-controller"),
        ("NodeHasSufficientMemory", "Node/a-1", "kubelet"),
        ("SomethingElse", "Node/a-1", "node-failure-playground"),
    ],
)
def test_recorded_events_name_their_component(reason, obj, controller) -> None:
    event = {"t": 0, "type": "K8sEvent", "object": obj, "reason": reason, "message": "m"}
    item = timeline_events([{**event, "eventType": "Normal"}])["items"][0]
    assert item["reportingController"] == f"playground/{controller}"


STRUCTURE_ERRORS = [
    (_set([9, "metadata", "labels"], 7), "items[9].metadata.labels: must be a mapping, got 7"),
    (
        _set([9, "metadata", "ownerReferences"], "x"),
        'items[9].metadata.ownerReferences: must be a list, got "x"',
    ),
    (
        _set([9, "metadata", "ownerReferences", 0, "name"], []),
        "items[9].metadata.ownerReferences[0].name: must be a non-empty string, got a list",
    ),
    (_set([9, "spec"], 7), "items[9].spec: must be a mapping, got 7"),
    (
        _set([9, "spec", "nodeName"], [1]),
        "items[9].spec.nodeName: must be a non-empty string, got a list",
    ),
    (_set([9, "spec", "volumes"], 7), "items[9].spec.volumes: must be a list, got 7"),
    (_set([5, "spec", "taints"], 7), "items[5].spec.taints: must be a list, got 7"),
    (_set([0, "status", "conditions"], "x"), 'items[0].status.conditions: must be a list, got "x"'),
    (
        _set([6, "spec", "template", "metadata", "labels"], "x"),
        'items[6].spec.template.metadata.labels: must be a mapping, got "x"',
    ),
    (
        _set([13, "spec", "template", "spec", "priorityClassName"], [1]),
        "items[13].spec.template.spec.priorityClassName: must be a non-empty string, got a list",
    ),
]


@pytest.mark.parametrize(
    "change, message", STRUCTURE_ERRORS, ids=[m.split(":")[0] for _c, m in STRUCTURE_ERRORS]
)
def test_import_errors_wrong_shapes(change, message) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(_mutated(change))
    assert str(exc.value) == message


def test_any_wrong_shape_is_a_scenario_error() -> None:
    """Every field of a node, a pod and a Deployment replaced by a number or a list: the
    import succeeds or names the field, never crashes."""
    base = json.loads(UNUSUAL)
    base["items"] = [base["items"][i] for i in (1, 9, 11)]
    paths: list[list[Any]] = []

    def walk(v: Any, p: list[Any]) -> None:
        paths.append(p)
        children = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else []
        for k, x in children:
            walk(x, [*p, k])

    walk(base["items"], ["items"])
    for path in paths[1:]:
        for bad in (7, ["x"]):
            doc = copy.deepcopy(base)
            target = doc
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = bad
            try:
                import_cluster(json.dumps(doc))
            except ScenarioError as exc:
                assert exc.path.startswith("items"), (path, exc)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda items: items.append(copy.deepcopy(items[2])),
            "items[28].metadata.name: duplicate Node ip-10-0-2-21 (first at items[2])",
        ),
        (
            lambda items: items.append(copy.deepcopy(items[9])),
            "items[28].metadata.name: duplicate Pod shop/web-7c5ddbdf54-2xkqp (first at items[9])",
        ),
    ],
)
def test_duplicates_are_refused(change, message) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(_mutated(change))
    assert str(exc.value) == message


def test_a_single_object_document() -> None:
    """``kubectl get pod x -o yaml`` prints one object: its errors say "document"."""
    with pytest.raises(ScenarioError) as exc:
        import_cluster("apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\n")
    assert str(exc.value) == "document.metadata.name: must be a non-empty string, got 5"
    with pytest.raises(ScenarioError) as exc:
        import_cluster(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n"
        )
    assert str(exc.value) == "items: no Node: the List must hold the cluster's nodes"
    docs = yaml.safe_load(THREE_ZONES)["items"]
    scenario, _report = import_cluster(yaml.safe_dump_all(docs))  # several documents
    assert scenario == import_cluster(THREE_ZONES)[0]


def test_replicasets_left_out_of_the_list_give_the_same_scenario() -> None:
    """``kubectl get nodes,pods,deployments,...`` without replicasets: a Deployment's pods
    are found by their ReplicaSet's name, ``<deployment>-<pod-template-hash>``."""
    doc = yaml.safe_load(THREE_ZONES)
    doc["items"] = [i for i in doc["items"] if i["kind"] != "ReplicaSet"]
    without, report = import_cluster(yaml.safe_dump(doc))
    full, _report = import_cluster(THREE_ZONES)
    assert without["spec"] == full["spec"]
    assert not [r for r in report if r["kind"] in ("ReplicaSet", "Pod")]


def test_export_of_a_built_in_scenario_imports_back() -> None:
    """The demo (``generate:`` nodes) at 300 s: its manifests import into a scenario whose
    controllers find every pod (nothing created or deleted at 0 s beyond the pods listed)."""
    from controller.engine.scenario import load_scenario

    repo = Path(__file__).resolve().parents[2]
    demo = load_scenario((repo / "controller" / "scenarios" / "00-demo.yaml").read_text())
    sim = Simulation(demo)
    sim.run(300_000)
    again, report = import_cluster(cluster_manifests_yaml(sim, demo.raw))
    assert report == []
    assert again["spec"]["nodes"] == demo.raw["spec"]["nodes"]
    assert "faults" not in again["spec"]  # the demo's faults come later than 0 s
    live = sorted(p.key for p in sim.cluster.pods.values() if not p.terminating)
    sim2 = _sim(again)
    sim2.run(5_000)
    created = sorted(e["pod"] for e in sim2.timeline.events if e["type"] == "PodCreated")
    assert created == live
    assert not [e for e in sim2.timeline.events if e["type"] == "PodDeleted"]


# -- kube-scheduler's client rate limit from its static pod (issue #37) -------------------------
def _with_scheduler_pods(*containers: dict[str, Any]) -> str:
    """THREE_ZONES with one kube-scheduler static pod per container given (kubeadm's labels)."""
    doc = yaml.safe_load(THREE_ZONES)
    for i, c in enumerate(containers, start=1):
        doc["items"].append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"kube-scheduler-ip-10-0-{i}-11",
                    "namespace": "kube-system",
                    "labels": {"component": "kube-scheduler", "tier": "control-plane"},
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": f"ip-10-0-{i}-11"}
                    ],
                },
                "spec": {"nodeName": f"ip-10-0-{i}-11", "containers": [c]},
            }
        )
    return yaml.safe_dump(doc)


def test_scheduler_client_flags_from_its_static_pod() -> None:
    """kube-scheduler's deprecated --kube-api-qps / --kube-api-burst set clientConnection
    (Options.ApplyDeprecated): they become spec.scheduler.clientConnection, and the
    scheduler's binds go through a client of that rate."""
    text = _with_scheduler_pods(
        {
            "name": "kube-scheduler",
            "image": "registry.k8s.io/kube-scheduler:v1.33.4",
            "command": [
                "kube-scheduler",
                "--kubeconfig=/etc/kubernetes/scheduler.conf",
                "--leader-elect=true",
                "--kube-api-qps=200",
                "--kube-api-burst",
                "300",
            ],
        }
    )
    scenario, _report = import_cluster(text)
    assert scenario["spec"]["scheduler"] == {"clientConnection": {"qps": 200.0, "burst": 300}}
    limiter = _sim(scenario).kube_scheduler.client.limiter
    assert (limiter.qps, limiter.burst) == (200.0, 300)


def test_scheduler_client_flags_in_args_and_zero() -> None:
    """In ``args`` too; a flag of 0 overwrites the defaulted 50 and client-go gives its own
    default 5 (rest.RESTClientFor), reported; the burst not given keeps the default."""
    text = _with_scheduler_pods(
        {"name": "kube-scheduler", "command": ["kube-scheduler"], "args": ["--kube-api-qps=0"]}
    )
    scenario, report = import_cluster(text)
    assert scenario["spec"]["scheduler"] == {"clientConnection": {"qps": 5.0}}
    assert {
        "kind": "kube-scheduler",
        "name": "--kube-api-qps=0",
        "why": "client-go's default 5",
    } in report
    cfg = parse_scenario(copy.deepcopy(scenario)).config.scheduler
    assert (cfg.client_qps, cfg.client_burst) == (5.0, 100)


def test_scheduler_client_flags_ignored_with_config() -> None:
    """With --config kube-scheduler ignores its deprecated flags (Options.ApplyTo)."""
    text = _with_scheduler_pods(
        {
            "name": "kube-scheduler",
            "command": [
                "kube-scheduler",
                "--config=/etc/kubernetes/scheduler-config.yaml",
                "--kube-api-qps=200",
            ],
        }
    )
    scenario, report = import_cluster(text)
    assert "scheduler" not in scenario["spec"]
    whys = {(r["kind"], r["name"]): r["why"] for r in report}
    assert whys[("kube-scheduler", "--kube-api-qps")].startswith("ignored: with --config")
    assert whys[("kube-scheduler", "--config")].startswith("not read")


def test_scheduler_client_flags_of_an_ha_control_plane() -> None:
    """Three schedulers: the first one's flags, a disagreeing one reported."""
    same = {"name": "kube-scheduler", "command": ["kube-scheduler", "--kube-api-qps=100"]}
    other = {"name": "kube-scheduler", "command": ["kube-scheduler", "--kube-api-qps=70"]}
    scenario, report = import_cluster(_with_scheduler_pods(same, same, other))
    assert scenario["spec"]["scheduler"] == {"clientConnection": {"qps": 100.0}}
    (entry,) = [r for r in report if r["kind"] == "kube-scheduler"]
    assert "flags differ from" in entry["why"] and entry["name"].startswith("items[")


@pytest.mark.parametrize(
    "flag, words",
    [
        ("--kube-api-burst=-1", "--kube-api-burst: Invalid value: -1: must be non-negative"),
        ("--kube-api-qps=fast", '--kube-api-qps: must be a number, got "fast"'),
        ("--kube-api-qps=0.0001", "--kube-api-qps: 0.0001 requests/s is below"),
    ],
)
def test_scheduler_client_flags_refused_naming_the_pod(flag: str, words: str) -> None:
    text = _with_scheduler_pods({"name": "kube-scheduler", "command": ["kube-scheduler", flag]})
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert ".spec.containers[0] " in str(exc.value) and words in str(exc.value)


def test_scheduler_flags_given_as_its_command_line() -> None:
    """--flags text that starts with kube-scheduler is kube-scheduler's: its --kube-api-qps
    is clientConnection's, not kube-controller-manager's, and it overrides the pod's."""
    text = _with_scheduler_pods(
        {"name": "kube-scheduler", "command": ["kube-scheduler", "--kube-api-qps=100"]}
    )
    scenario, report = import_cluster(
        text, flags="/usr/local/bin/kube-scheduler --kube-api-burst=400 --v=2"
    )
    assert scenario["spec"]["scheduler"] == {"clientConnection": {"qps": 100.0, "burst": 400}}
    assert "controllerManager" not in scenario["spec"]
    assert {"kind": "flag", "name": "--v", "why": "not simulated"} in report
    with pytest.raises(ScenarioError) as exc:
        import_cluster(THREE_ZONES, flags="kube-scheduler --kube-api-burst=-5")
    assert str(exc.value).startswith("--kube-api-burst: Invalid value: -5")
    # kube-controller-manager's own stay its own.
    scenario, _report = import_cluster(
        THREE_ZONES, flags="kube-controller-manager --kube-api-qps=9"
    )
    assert scenario["spec"]["controllerManager"] == {"kubeAPIQPS": 9.0}
    assert "scheduler" not in scenario["spec"]


def test_scheduler_pod_with_a_bad_command_is_refused_by_its_path() -> None:
    text = _with_scheduler_pods({"name": "kube-scheduler", "command": "kube-scheduler --v=2"})
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text)
    assert ".spec.containers[0].command: must be a list of strings" in str(exc.value)
