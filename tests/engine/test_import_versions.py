"""The import's releases, exactly: the control plane's from kube-apiserver's version when the
text has it (``kubectl version -o yaml`` given with the List, or the image of a kube-apiserver
static pod), else the newest kubelet's; each node's kubelet release from its
``status.nodeInfo.kubeletVersion`` where it differs (``kubeletVersion``); never a neighbour's.
A release that is not simulated, or a kubelet outside the version skew policy, is refused with
the item's path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from controller.engine.scenario import ScenarioError, parse_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state
from controller.kube_io.exports import cluster_manifests_yaml
from controller.kube_io.importer import import_cluster

from .test_importer import THREE_ZONES

NODES = [
    "ip-10-0-1-11",
    "ip-10-0-1-12",
    "ip-10-0-2-21",
    "ip-10-0-2-22",
    "ip-10-0-3-31",
    "ip-10-0-3-32",
]


def cluster(kubelets: dict[str, str] | str, *extra: dict[str, Any]) -> str:
    """THREE_ZONES with its nodes' kubeletVersion set (one for all, or by node), and extra
    items (a kube-apiserver pod) appended."""
    doc = yaml.safe_load(THREE_ZONES)
    for item in doc["items"]:
        if item["kind"] == "Node":
            name = item["metadata"]["name"]
            v = kubelets if isinstance(kubelets, str) else kubelets.get(name, "v1.35.1")
            item["status"]["nodeInfo"]["kubeletVersion"] = v
    doc["items"].extend(extra)
    return yaml.safe_dump(doc)


def apiserver_pod(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "kube-apiserver-cp-1",
            "namespace": "kube-system",
            "labels": {"component": "kube-apiserver", "tier": "control-plane"},
            "annotations": {"kubernetes.io/config.mirror": "abc"},
        },
        "spec": {
            "nodeName": "ip-10-0-1-11",
            "containers": [{"name": "kube-apiserver", "image": image}],
        },
    }


def kubelets_of(scenario: dict[str, Any]) -> dict[str, str | None]:
    return {n["name"]: n.get("kubeletVersion") for n in scenario["spec"]["nodes"]}


MIXED = dict.fromkeys(NODES[:2], "v1.33.4-eks-1d4e8f0")  # two nodes still on 1.33


def test_a_mixed_1_33_1_35_cluster_says_both_releases() -> None:
    scenario, report = import_cluster(cluster(MIXED))
    assert scenario["spec"]["kubernetesVersion"] == "1.35"  # the newest kubelet's release
    assert kubelets_of(scenario) == {n: "1.33" if n in MIXED else None for n in NODES}
    assert report[0]["why"].startswith(
        "no kube-apiserver version in the List: the control plane is taken to run 1.35"
    )
    # The engine runs the controllers as 1.35 and those two kubelets as 1.33; the room page's
    # node state names the older kubelet.
    sim = Simulation(parse_scenario(copy.deepcopy(scenario)))
    sim.run(0)
    assert sim.config.profile.version == "1.35"
    assert {n: k.profile.version for n, k in sim.kubelets.items()} == {
        n: "1.33" if n in MIXED else "1.35" for n in NODES
    }
    views = {n.name: node_state(sim, n).get("kubeletVersion") for n in sim.sorted_nodes()}
    assert views == {n: "1.33" if n in MIXED else None for n in NODES}


@pytest.mark.parametrize("minor", range(27, 37))
def test_every_release_maps_to_itself(minor: int) -> None:
    scenario, report = import_cluster(cluster(f"v1.{minor}.3-gke.100"))
    assert scenario["spec"]["kubernetesVersion"] == f"1.{minor}"
    assert kubelets_of(scenario) == dict.fromkeys(NODES)


@pytest.mark.parametrize(
    ("text", "control_plane", "why"),
    [
        pytest.param(
            lambda: cluster(
                "v1.33.4-eks-1d4e8f0", apiserver_pod("registry.k8s.io/kube-apiserver:v1.36.0")
            ),
            "1.36",
            "the kube-apiserver static pod's image",
            id="a kube-apiserver pod's image: a 1.36 control plane, 1.33 kubelets",
        ),
        pytest.param(
            lambda: yaml.safe_dump(
                {
                    "clientVersion": {"gitVersion": "v1.36.1"},
                    "serverVersion": {"gitVersion": "v1.36.2-eks-113cf36"},
                }
            )
            + "---\n"
            + cluster("v1.33.4-eks-1d4e8f0"),
            "1.36",
            "kubectl version's serverVersion",
            id="kubectl version -o yaml given with the List",
        ),
        pytest.param(
            lambda: cluster("v1.33.4", apiserver_pod("example/kube-apiserver:latest")),
            "1.33",
            "an image tag that names no release: the newest kubelet's",
            id="a kube-apiserver image without a release",
        ),
    ],
)
def test_the_control_plane_from_kube_apiserver(
    text: Callable[[], str], control_plane: str, why: str
) -> None:
    scenario, report = import_cluster(text())
    assert scenario["spec"]["kubernetesVersion"] == control_plane, why
    skewed = control_plane != "1.33"
    assert kubelets_of(scenario) == dict.fromkeys(NODES, "1.33" if skewed else None)
    inferred = [r for r in report if r["why"].startswith("no kube-apiserver version")]
    assert bool(inferred) is (not skewed)


@pytest.mark.parametrize(
    ("text", "path", "why"),
    [
        pytest.param(
            lambda: cluster("v1.26.15"),
            "items[0].status.nodeInfo.kubeletVersion",
            "Kubernetes 1.26 is not simulated",
            id="a release not simulated: refused, not mapped to the nearest",
        ),
        pytest.param(
            lambda: cluster("v1.32.9", apiserver_pod("registry.k8s.io/kube-apiserver:v1.36.0")),
            "items[0].status.nodeInfo.kubeletVersion",
            "kubelet 1.32 is too old: the version skew policy allows a kubelet from 1.33 to 1.36",
            id="kubelets four minors behind kube-apiserver",
        ),
        pytest.param(
            lambda: cluster(
                {NODES[3]: "v1.35.0"} | {n: "v1.34.0" for n in NODES if n != NODES[3]},
                apiserver_pod("registry.k8s.io/kube-apiserver:v1.34.4"),
            ),
            "items[3].status.nodeInfo.kubeletVersion",
            "kubelet 1.35 is newer than the control plane",
            id="a kubelet newer than kube-apiserver",
        ),
        pytest.param(
            lambda: cluster({NODES[1]: "vX.1"}),
            "items[1].status.nodeInfo.kubeletVersion",
            "is not a Kubernetes release such as v1.34.1",
            id="not a version",
        ),
        pytest.param(
            lambda: cluster("v1.34.0", apiserver_pod("registry.k8s.io/kube-apiserver:v1.25.0")),
            "items[",
            "Kubernetes 1.25 is not simulated",
            id="kube-apiserver of a release not simulated",
        ),
    ],
)
def test_releases_that_cannot_be_simulated_are_refused_with_the_path(
    text: Callable[[], str], path: str, why: str
) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(text())
    assert exc.value.path.startswith(path), exc.value.path
    assert why in exc.value.why


def test_import_export_import_keeps_each_kubelets_release() -> None:
    first, _report = import_cluster(cluster(MIXED))
    sim = Simulation(parse_scenario(copy.deepcopy(first)))
    sim.run(0)
    again, _ = import_cluster(cluster_manifests_yaml(sim, first))
    assert again["spec"]["kubernetesVersion"] == "1.35"
    assert kubelets_of(again) == kubelets_of(first)
