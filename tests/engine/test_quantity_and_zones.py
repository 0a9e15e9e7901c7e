"""Quantities, durations and the pure zone math, table-driven."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.engine.nodelifecycle.zones import (
    ZoneState,
    compute_zone_state,
    get_zone_key,
    reduced_qps,
    zone_display,
)
from controller.engine.quantity import (
    DurationError,
    QuantityError,
    format_bytes,
    milli_value,
    parse_duration_ms,
    parse_quantity,
    quantity_to_int,
)


@pytest.mark.parametrize(
    "text, value",
    [
        ("100m", Fraction(1, 10)),
        ("16Gi", 16 * 2**30),
        ("1.5Gi", 3 * 2**29),
        ("129e6", 129_000_000),
        ("128974848", 128974848),
        ("123Mi", 123 * 2**20),
        ("1k", 1000),
        (4, 4),
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["16GB", "", "1 Gi", "Gi", "1.2.3", "--1"])
def test_bad_quantity_is_refused(bad: str) -> None:
    with pytest.raises(QuantityError, match="is not a Kubernetes quantity"):
        parse_quantity(bad)


def test_value_rounds_up_like_kubernetes() -> None:
    assert quantity_to_int("100m") == 1
    assert milli_value("0.5") == 500
    assert milli_value("4") == 4000


@pytest.mark.parametrize("n, text", [(2**30, "1Gi"), (1536 * 2**20, "1536Mi"), (1500, "1500"), (0, "0")])
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    "text, ms",
    [("5s", 5000), ("1m30s", 90_000), ("300ms", 300), ("2h", 7_200_000), ("1.5s", 1500), (100, 100_000), (100.5, 100_500), ("0", 0), ("40", 40_000)],
)
def test_parse_duration(text: str | int | float, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("bad", ["5 minutes", "5x", "1.0001ms", -3, "s"])
def test_bad_duration_is_refused(bad: str | int) -> None:
    with pytest.raises(DurationError):
        parse_duration_ms(bad)


@pytest.mark.parametrize(
    "statuses, state",
    [
        pytest.param(["True"] * 5, ZoneState.NORMAL, id="all ready: Normal"),
        pytest.param(["Unknown"] * 3, ZoneState.FULL_DISRUPTION, id="none ready: FullDisruption"),
        pytest.param([None], ZoneState.FULL_DISRUPTION, id="a node with no Ready condition counts as not ready"),
        pytest.param(["True"] * 2 + ["Unknown"] * 3, ZoneState.PARTIAL_DISRUPTION, id="partial: 3 of 5 NotReady >= 0.55"),
        pytest.param(["True"] * 1 + ["False"] * 2, ZoneState.NORMAL, id="2 not ready is never partial (needs > 2)"),
        pytest.param(["True"] * 9 + ["Unknown"] * 11, ZoneState.PARTIAL_DISRUPTION, id="11 of 20 = 0.55 >= 0.55"),
        pytest.param(["True"] * 10 + ["Unknown"] * 10, ZoneState.NORMAL, id="10 of 20 = 0.5 < 0.55"),
    ],
)
def test_compute_zone_state(statuses: list[str | None], state: ZoneState) -> None:
    assert compute_zone_state(statuses, 0.55)[1] == state


@pytest.mark.parametrize(
    "size, qps", [pytest.param(50, 0.0, id="50 is not > 50: small zone stops"), pytest.param(51, 0.01, id="51 > 50: secondary rate")]
)
def test_reduced_qps(size: int, qps: float) -> None:
    assert reduced_qps(size, 0.01, 50) == qps


@pytest.mark.parametrize(
    "labels, key, shown",
    [
        ({}, "", ""),
        ({"topology.kubernetes.io/zone": "a"}, ":\x00:a", "a"),
        ({"topology.kubernetes.io/zone": "a", "topology.kubernetes.io/region": "r"}, "r:\x00:a", "r/a"),
        ({"failure-domain.beta.kubernetes.io/zone": "beta", "topology.kubernetes.io/zone": "ga"}, ":\x00:beta", "beta"),
    ],
)
def test_zone_key(labels: dict[str, str], key: str, shown: str) -> None:
    assert get_zone_key(labels) == key
    assert zone_display(key) == shown
