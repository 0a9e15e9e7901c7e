"""ComputeZoneState, the zone QPS functions and GetZoneKey, table-driven."""

from __future__ import annotations

import pytest

from controller.engine.nodelifecycle.zones import (
    ZoneState,
    compute_zone_state,
    get_zone_key,
    healthy_qps,
    reduced_qps,
    zone_display,
)

T, F, U = "True", "False", "Unknown"


@pytest.mark.parametrize(
    "statuses, threshold, not_ready, state",
    [
        pytest.param([], 0.55, 0, ZoneState.NORMAL, id="an empty zone is Normal"),
        pytest.param([T] * 5, 0.55, 0, ZoneState.NORMAL, id="all ready: Normal"),
        pytest.param([U] * 3, 0.55, 3, ZoneState.FULL_DISRUPTION, id="none ready: FullDisruption"),
        pytest.param(
            [F], 0.55, 1, ZoneState.FULL_DISRUPTION, id="one node, NotReady: FullDisruption"
        ),
        pytest.param(
            [None], 0.55, 1, ZoneState.FULL_DISRUPTION, id="no Ready condition counts as not ready"
        ),
        pytest.param(
            [T, T, U, F, None],
            0.55,
            3,
            ZoneState.PARTIAL_DISRUPTION,
            id="partial: 3 of 5 NotReady >= 0.55",
        ),
        pytest.param(
            [T, F, U],
            0.55,
            2,
            ZoneState.NORMAL,
            id="2 of 3 NotReady is Normal: partial needs more than 2",
        ),
        pytest.param(
            [T] * 9 + [U] * 11,
            0.55,
            11,
            ZoneState.PARTIAL_DISRUPTION,
            id="11 of 20 = 0.55 >= 0.55: partial",
        ),
        pytest.param(
            [T] * 10 + [U] * 10, 0.55, 10, ZoneState.NORMAL, id="10 of 20 = 0.5 < 0.55: Normal"
        ),
        pytest.param(
            [T] * 6 + [U] * 3,
            0.33333334,
            3,
            ZoneState.PARTIAL_DISRUPTION,
            id="3 of 9 vs 0.33333334: equal in float32 as in Go (below it in float64)",
        ),
        pytest.param(
            [T] * 97 + [U] * 3,
            0.0,
            3,
            ZoneState.PARTIAL_DISRUPTION,
            id="threshold 0: any 3 NotReady is partial",
        ),
        pytest.param(
            [T] + [U] * 50, 1.01, 50, ZoneState.NORMAL, id="threshold above 1: never partial"
        ),
        pytest.param(
            ["true", "TRUE"],
            0.55,
            2,
            ZoneState.FULL_DISRUPTION,
            id="only the exact string True is ready",
        ),
    ],
)
def test_compute_zone_state(
    statuses: list[str | None], threshold: float, not_ready: int, state: ZoneState
) -> None:
    assert compute_zone_state(statuses, threshold) == (not_ready, state)


def test_compute_zone_state_takes_any_iterable() -> None:
    assert compute_zone_state((s for s in [T, U]), 0.55) == (1, ZoneState.NORMAL)


def test_zone_states_are_kubernetes_strings() -> None:
    assert [str(s) for s in ZoneState] == [
        "Initial",
        "Normal",
        "FullDisruption",
        "PartialDisruption",
    ]
    assert ZoneState("PartialDisruption") is ZoneState.PARTIAL_DISRUPTION


@pytest.mark.parametrize(
    "size, qps",
    [
        pytest.param(0, 0.0, id="empty zone: evictions stop"),
        pytest.param(50, 0.0, id="50 is not > 50: small zone stops"),
        pytest.param(51, 0.01, id="51 > 50: secondary rate"),
        pytest.param(5_000, 0.01, id="large zone: secondary rate"),
    ],
)
def test_reduced_qps(size: int, qps: float) -> None:
    assert reduced_qps(size, 0.01, 50) == qps


@pytest.mark.parametrize(
    "size", [pytest.param(0, id="empty zone"), pytest.param(1_000, id="large zone")]
)
def test_healthy_qps_ignores_the_size(size: int) -> None:
    assert healthy_qps(size, 0.1) == 0.1


BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


@pytest.mark.parametrize(
    "labels, key, shown",
    [
        pytest.param({}, "", "", id="unlabelled nodes share the zone ''"),
        pytest.param({"kubernetes.io/hostname": "n1"}, "", "", id="unrelated labels: ''"),
        pytest.param({ZONE: "a"}, ":\x00:a", "a", id="stable zone without region"),
        pytest.param({ZONE: "a", REGION: "r"}, "r:\x00:a", "r/a", id="stable zone and region"),
        pytest.param(
            {BETA_ZONE: "a", BETA_REGION: "r"}, "r:\x00:a", "r/a", id="beta zone and region"
        ),
        pytest.param(
            {BETA_ZONE: "beta", ZONE: "ga"}, ":\x00:beta", "beta", id="beta zone wins over stable"
        ),
        pytest.param(
            {BETA_REGION: "rb", REGION: "rg", ZONE: "a"},
            "rb:\x00:a",
            "rb/a",
            id="beta region wins, stable zone used",
        ),
        pytest.param(
            {BETA_ZONE: "", ZONE: "ga"},
            "",
            "",
            id="an empty beta zone label still wins (Go checks presence)",
        ),
        pytest.param({REGION: "r"}, "r:\x00:", "r/", id="region without zone"),
        pytest.param(
            {ZONE: "a:b"}, ":\x00:a:b", "a:b", id="colons in the zone survive the separator"
        ),
    ],
)
def test_zone_key_and_display(labels: dict[str, str], key: str, shown: str) -> None:
    assert get_zone_key(labels) == key
    assert zone_display(key) == shown
