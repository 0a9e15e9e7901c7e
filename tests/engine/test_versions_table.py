"""The profile table: every release 1.27..1.36 (and 1.18) has its own profile, releases that
simulate identically say so (``same_as``, computed from the rules), and a node's kubelet
release stays within the version skew policy."""

from __future__ import annotations

import pytest

from controller.engine.scenario import ScenarioError
from controller.engine.versions import PROFILES, kubelet_profile_for, profile_for

RELEASES = ["1.18", *(f"1.{m}" for m in range(27, 37))]


def test_every_release_has_its_own_profile() -> None:
    assert list(PROFILES) == RELEASES
    for release in RELEASES:
        assert profile_for(release).version == release
        assert profile_for(f"v{release}.3").version == release


# Which releases simulate identically, and the rule that starts each group.
GROUPS = [
    pytest.param(("1.18",), id="1.18: the reference"),
    pytest.param(("1.27",), id="1.27: taint manager inside the NLC, 40 s"),
    pytest.param(("1.28",), id="1.28: Parallel StatefulSets create in slow-start batches"),
    pytest.param(("1.29",), id="1.29: the taint-eviction-controller"),
    pytest.param(("1.30",), id="1.30: DefaultEvictionHard with imagefs.inodesFree"),
    pytest.param(("1.31",), id="1.31: immediateEvictionGracePeriodSeconds, overridden"),
    pytest.param(("1.32",), id="1.32: nodeMonitorGracePeriod 50 s, soft grace capped"),
    pytest.param(("1.33", "1.34"), id="1.33-1.34: the queue forgets fired work"),
    pytest.param(("1.35", "1.36"), id="1.35-1.36: image GC's reworded FreeDiskSpaceFailed"),
]


@pytest.mark.parametrize("group", GROUPS)
def test_releases_that_simulate_identically(group: tuple[str, ...]) -> None:
    for release in group:
        assert PROFILES[release].releases == group


@pytest.mark.parametrize(
    ("control_plane", "kubelet", "ok_or_why"),
    [
        pytest.param("1.36", "1.33", "1.33", id="three minors older: allowed"),
        pytest.param("1.36", "v1.36.1", "1.36", id="the same release"),
        pytest.param("1.36", "1.32", "too old", id="four minors older: refused"),
        pytest.param("1.33", "1.34", "newer than the control plane", id="newer: refused"),
        pytest.param("1.29", "1.27", "1.27", id="two older under 1.29"),
        pytest.param("1.27", "1.27", "1.27", id="1.27 with its own kubelet"),
        pytest.param("1.29", "1.26", "1.26 is not simulated", id="in policy, not simulated"),
        pytest.param("1.18", "1.18", "1.18", id="1.18 with its own kubelet"),
        pytest.param("1.36", "1.3", "1.3 is too old", id="1.3 is not 1.30"),
    ],
)
def test_kubelet_version_skew(control_plane: str, kubelet: str, ok_or_why: str) -> None:
    cp = profile_for(control_plane)
    path = "spec.nodes[2].kubeletVersion"
    if ok_or_why[0].isdigit() and " " not in ok_or_why:
        assert kubelet_profile_for(kubelet, cp, path).version == ok_or_why
        return
    with pytest.raises(ScenarioError) as exc:
        kubelet_profile_for(kubelet, cp, path)
    assert exc.value.path == path
    assert ok_or_why in exc.value.why
    if "not simulated" not in ok_or_why:
        assert "version skew policy" in exc.value.why
