"""Version profiles: spec.kubernetesVersion picks a release's defaults, fields and faults."""

from __future__ import annotations

import pytest

from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
from controller.engine.versions import CURRENT_VERSION, PROFILES, profile_for

NODES = """
  nodes:
    - {name: a-1, zone: a}
    - {name: a-2, zone: a}
"""


def scenario(version: str | None, extra: str = "", nodes: str = NODES) -> str:
    v = f"  kubernetesVersion: {version}\n" if version is not None else ""
    return f"apiVersion: playground/v1alpha1\nkind: Scenario\nspec:\n{v}{extra}{nodes}"


@pytest.mark.parametrize(
    ("written", "profile"),
    [
        pytest.param(None, "1.18", id="a scenario that says nothing is read as 1.18"),
        pytest.param('"1.18"', "1.18", id="1.18 is its own profile"),
        pytest.param(f'"{CURRENT_VERSION}"', CURRENT_VERSION, id="the current release"),
        pytest.param('"1.33"', "1.33", id="1.33 is its own release, not 1.34's"),
        pytest.param('"v1.34.2"', CURRENT_VERSION, id="a kubeletVersion with v and patch"),
        pytest.param('"v1.35.2-eks-1a2b3c4"', "1.35", id="a cloud's build of 1.35 is 1.35"),
        pytest.param('"1.18.20"', "1.18", id="a patch release of 1.18"),
        *(
            pytest.param(f'"1.{m}"', f"1.{m}", id=f"1.{m} maps to exactly 1.{m}")
            for m in range(27, 37)
        ),
    ],
)
def test_kubernetes_version_picks_a_profile(written: str | None, profile: str) -> None:
    assert load_scenario(scenario(written)).profile.version == profile


@pytest.mark.parametrize(
    ("written", "why"),
    [
        pytest.param("1.30", "quote it", id="an unquoted version is a number: refused with a hint"),
        pytest.param('"1.25"', "Kubernetes 1.25 is not simulated", id="a release in between"),
        pytest.param('"1.26"', "Kubernetes 1.26 is not simulated", id="the one before 1.27"),
        pytest.param(
            '"1.37"', "Kubernetes 1.37 is not simulated", id="1.37: only an alpha is stored"
        ),
        pytest.param('"2.0"', "must be a Kubernetes release", id="not a 1.x release"),
        pytest.param('"latest"', "must be a Kubernetes release", id="not a version"),
    ],
)
def test_unsupported_versions_are_refused_with_the_path(written: str, why: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(written))
    assert exc.value.path == "spec.kubernetesVersion"
    assert why in exc.value.why


REMOVED = [
    pytest.param(
        "  controllerManager: {enableTaintManager: false}\n",
        "spec.controllerManager.enableTaintManager",
        "1.27",
        id="the taint manager switch is gone since 1.27",
    ),
    pytest.param(
        "  controllerManager: {podEvictionTimeout: 2m}\n",
        "spec.controllerManager.podEvictionTimeout",
        "1.27",
        id="podEvictionTimeout is gone since 1.27",
    ),
    pytest.param(
        "  featureGates: {LegacyNodeRoleBehavior: false}\n",
        "spec.featureGates.LegacyNodeRoleBehavior",
        "LegacyNodeRoleBehavior",
        id="the LegacyNodeRoleBehavior gate is removed",
    ),
    pytest.param(
        "  featureGates: {NodeDisruptionExclusion: true}\n",
        "spec.featureGates.NodeDisruptionExclusion",
        "NodeDisruptionExclusion",
        id="the NodeDisruptionExclusion gate is removed",
    ),
]


@pytest.mark.parametrize(("extra", "path", "why"), REMOVED)
def test_removed_fields_are_refused_under_the_current_release(
    extra: str, path: str, why: str
) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(f'"{CURRENT_VERSION}"', extra))
    assert exc.value.path == path
    assert f"not in Kubernetes {CURRENT_VERSION}" in exc.value.why
    assert why in exc.value.why


@pytest.mark.parametrize(("extra", "path", "why"), REMOVED)
def test_removed_fields_are_accepted_under_1_18(extra: str, path: str, why: str) -> None:
    load_scenario(scenario('"1.18"', extra))


def test_a_removed_field_in_set_parameters_is_refused_with_its_path() -> None:
    extra = "  faults:\n    - {at: 10s, type: SetParameters, controllerManager: {podEvictionTimeout: 1m}}\n"
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(f'"{CURRENT_VERSION}"', extra))
    assert exc.value.path == "spec.faults[0].controllerManager.podEvictionTimeout"


@pytest.mark.parametrize(
    ("version", "grace_ms"),
    [
        pytest.param('"1.18"', 40_000, id="1.18: nodeMonitorGracePeriod 40 s"),
        pytest.param(
            f'"{CURRENT_VERSION}"', 50_000, id="1.33 and later: 50 s (#126287, since 1.32)"
        ),
    ],
)
def test_each_release_has_its_own_defaults(version: str, grace_ms: int) -> None:
    cm = load_scenario(scenario(version)).config.controller_manager
    assert cm.node_monitor_grace_period_ms == grace_ms


def test_the_node_goes_unknown_after_each_releases_grace_period() -> None:
    """Same failure, both releases: StopKubelet at 100 s (last renewal 90 s); the monitor pass
    (every 5 s) sees the lease older than the grace period: 135 s under 1.18 (90 + 40 < 135),
    145 s under the current release (90 + 50 < 145)."""
    nodes = NODES + "  faults:\n    - {at: 100s, type: StopKubelet, node: a-1}\n"
    times = {}
    for version in ("1.18", CURRENT_VERSION):
        sim = Simulation(load_scenario(scenario(f'"{version}"', nodes=nodes)))
        sim.run(200_000)
        times[version] = [
            e["t"]
            for e in sim.timeline.events
            if e["type"] == "NodeReady" and e["status"] == "Unknown"
        ]
    assert times == {"1.18": [135_000], CURRENT_VERSION: [145_000]}


@pytest.mark.parametrize(
    ("name", "labels", "excluded_118", "excluded_current"),
    [
        pytest.param("cp-master", "{}", True, False, id="a *master node: legacy role only"),
        pytest.param(
            "a-9",
            "{node.kubernetes.io/exclude-disruption: ''}",
            False,
            True,
            id="the exclude-disruption label: gate off in 1.18, always in current",
        ),
        pytest.param("a-9", "{}", False, False, id="an ordinary node is counted in both"),
    ],
)
def test_which_nodes_a_zone_counts(
    name: str, labels: str, excluded_118: bool, excluded_current: bool
) -> None:
    nodes = NODES + f"    - {{name: {name}, zone: a, labels: {labels}}}\n"
    for version, expected in (("1.18", excluded_118), (CURRENT_VERSION, excluded_current)):
        sim = Simulation(load_scenario(scenario(f'"{version}"', nodes=nodes)))
        sim.run(0)
        assert sim.cluster.nodes[name].excluded_from_disruption is expected, version


def test_every_profile_is_reachable_by_its_own_name() -> None:
    for name, p in PROFILES.items():
        assert profile_for(name) is p
