"""Version skew: a node's kubelet may be an older release than the control plane
(``spec.nodes[].kubeletVersion``), within the version skew policy. The controllers follow
``spec.kubernetesVersion``; that node's kubelet follows its own release (Kubelet.profile).

The cluster: node ``m`` (8Gi) whose system memory jumps at 15 s so that its hard threshold
(4608Mi available, 1Gi minimum reclaim) evicts ``burst`` then ``besteffort``; node ``f`` whose
kubelet stops at 100 s (last renewal 90 s), with the pod ``web`` (default 300 s toleration),
and a spare node ``s``. Both ``m`` and ``f`` carry the kubelet release under test.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from controller.engine.scenario import ScenarioError, load_scenario

from .conftest import events, simulate, times
from .test_audit_eviction import node, node_usage, pod
from .test_eviction_current import MIN_RECLAIM, MIN_RECLAIM_PODS, evicted, failed


def cluster(control_plane: str, kubelet: str | None) -> dict[str, Any]:
    own = {"kubeletVersion": kubelet} if kubelet else {}
    return {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "spec": {
            "kubernetesVersion": control_plane,
            "duration": "500s",
            "kubelet": MIN_RECLAIM,
            "nodes": [node("m", **own), node("f", **own), node("s")],
            "objects": [
                *MIN_RECLAIM_PODS,
                pod("web", node_name="f", requests={"memory": "64Mi"}),
            ],
            "faults": [
                node_usage(15, memory="1536Mi"),
                {"at": "100s", "type": "StopKubelet", "node": "f"},
            ],
        },
    }


def run(control_plane: str, kubelet: str | None) -> Any:
    return simulate(yaml.safe_dump(cluster(control_plane, kubelet)))


def controller_side(sim: Any) -> list[tuple[float, str, str]]:
    """What the node lifecycle and taint eviction controllers did to f and its pod."""
    out = [(t, "Unknown", "") for t in times(sim, "NodeReady", node="f", status="Unknown")]
    out += [
        (e["t"] / 1000, "Tainted", e["key"])
        for e in events(sim, "TaintAdded", node="f", effect="NoExecute")
    ]
    out += [
        (e["t"] / 1000, "Deleted", e["by"]) for e in events(sim, "PodDeleted", pod="default/web")
    ]
    return out


@pytest.mark.parametrize(
    ("control_plane", "kubelet", "unknown", "deleter", "want_evicted", "want_failed"),
    [
        pytest.param(
            "1.32",
            "1.30",
            145.0,
            "TaintEvictionController",
            [(20.0, "burst", 0), (51.0, "besteffort", 0)],
            [(50.0, "burst"), (81.0, "besteffort")],
            id="1.32 control plane (50 s grace) with 1.30 kubelets (hard eviction override 0: "
            "the pod's own 30 s)",
        ),
        pytest.param(
            "1.36",
            "1.33",
            145.0,
            "TaintEvictionController",
            [(20.0, "burst", 1), (22.0, "besteffort", 1)],
            [(21.0, "burst"), (23.0, "besteffort")],
            id="1.36 control plane with 1.33 kubelets",
        ),
        pytest.param(
            "1.31",
            "1.28",
            135.0,
            "TaintEvictionController",
            [(20.0, "burst", 0), (51.0, "besteffort", 0)],
            [(50.0, "burst"), (81.0, "besteffort")],
            id="1.31 control plane (40 s, its kubelet would kill over 1 s) with 1.28 kubelets",
        ),
        pytest.param(
            "1.30",
            "1.27",
            135.0,
            "TaintEvictionController",
            [(20.0, "burst", 0), (51.0, "besteffort", 0)],
            [(50.0, "burst"), (81.0, "besteffort")],
            id="1.30 control plane (taint-eviction-controller) with 1.27 kubelets",
        ),
    ],
)
def test_controllers_follow_the_control_plane_kubelets_their_own_release(
    control_plane: str,
    kubelet: str,
    unknown: float,
    deleter: str,
    want_evicted: list[tuple[float, str, int]],
    want_failed: list[tuple[float, str]],
) -> None:
    skew = run(control_plane, kubelet)
    # The controllers: the control plane's release, exactly as in a cluster of one release.
    assert controller_side(skew) == [
        (unknown, "Unknown", ""),
        (unknown + 5, "Tainted", "node.kubernetes.io/unreachable"),
        (unknown + 5 + 300, "Deleted", deleter),
    ]
    assert controller_side(skew) == controller_side(run(control_plane, None))
    # The kubelets: their own release, exactly as in a cluster of that release.
    assert evicted(skew) == want_evicted
    assert failed(skew) == want_failed
    alone = run(kubelet, None)
    assert (evicted(skew), failed(skew)) == (evicted(alone), failed(alone))
    assert {k.profile.version for n, k in skew.kubelets.items() if n != "s"} == {kubelet}
    assert skew.kubelets["s"].profile.version == control_plane


def test_the_skew_shows_where_releases_differ() -> None:
    """The test above can fail: under a 1.32 control plane a 1.32 kubelet evicts otherwise
    than a 1.30 one (immediateEvictionGracePeriodSeconds, #124063, came in 1.31)."""
    assert evicted(run("1.32", None)) != evicted(run("1.32", "1.30"))


def scenario_text(control_plane: str, nodes: str, faults: str = "") -> str:
    return (
        "apiVersion: playground/v1alpha1\nkind: Scenario\nspec:\n"
        f'  kubernetesVersion: "{control_plane}"\n  nodes:\n{nodes}{faults}'
    )


@pytest.mark.parametrize(
    ("control_plane", "nodes", "faults", "path", "why"),
    [
        pytest.param(
            "1.33",
            '    - {name: a-1, kubeletVersion: "1.34"}\n',
            "",
            "spec.nodes[0].kubeletVersion",
            "kubelet 1.34 is newer than the control plane: the version skew policy allows a "
            "kubelet from 1.30 to 1.33 under a Kubernetes 1.33 control plane",
            id="newer than the control plane",
        ),
        pytest.param(
            "1.36",
            '    - {name: a-1}\n    - {name: a-2, kubeletVersion: "v1.32.9"}\n',
            "",
            "spec.nodes[1].kubeletVersion",
            "kubelet 1.32 is too old: the version skew policy allows a kubelet from 1.33 to 1.36",
            id="four minors older",
        ),
        pytest.param(
            "1.29",
            '    - {generate: {count: 3, namePrefix: b-, kubeletVersion: "1.26"}}\n',
            "",
            "spec.nodes[0].generate.kubeletVersion",
            "Kubernetes 1.26 is not simulated",
            id="within the policy but not simulated, in a generate block",
        ),
        pytest.param(
            "1.34",
            "    - {name: a-1}\n",
            '  faults:\n    - {at: 10s, type: AddNode, node: {name: a-9, kubeletVersion: "1.35"}}\n',
            "spec.faults[0].node.kubeletVersion",
            "kubelet 1.35 is newer than the control plane",
            id="an AddNode's node",
        ),
        pytest.param(
            "1.34",
            "    - {name: a-1, kubeletVersion: 1.33}\n",
            "",
            "spec.nodes[0].kubeletVersion",
            "quote it",
            id="an unquoted version is a number",
        ),
    ],
)
def test_a_kubelet_outside_the_policy_is_refused_with_the_path(
    control_plane: str, nodes: str, faults: str, path: str, why: str
) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario_text(control_plane, nodes, faults))
    assert exc.value.path == path
    assert why in exc.value.why


def test_an_added_node_and_generated_nodes_carry_their_kubelet_release() -> None:
    text = scenario_text(
        "1.34",
        '    - {generate: {count: 2, namePrefix: b-, kubeletVersion: "v1.31.4-eks-1a2b"}}\n',
        '  faults:\n    - {at: 10s, type: AddNode, node: {name: a-9, kubeletVersion: "1.32"}}\n',
    )
    sim = simulate(text, until_s=10)
    assert {n: k.profile.version for n, k in sim.kubelets.items()} == {
        "b-1": "1.31",
        "b-2": "1.31",
        "a-9": "1.32",
    }


def test_the_room_state_names_a_kubelet_release_only_where_it_differs() -> None:
    """state.node_state (what the room page draws): ``kubeletVersion`` on a skewed node only,
    so a room of one release sends what it always sent."""
    from controller.engine.state import node_state

    sim = simulate(
        scenario_text("1.35", '    - {name: a-1, kubeletVersion: "v1.33.2"}\n    - {name: a-2}\n'),
        until_s=0,
    )
    views = {n.name: node_state(sim, n) for n in sim.sorted_nodes()}
    assert views["a-1"]["kubeletVersion"] == "1.33"
    assert "kubeletVersion" not in views["a-2"]
