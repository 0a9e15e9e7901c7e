"""Table tests of the kubelet eviction helpers, ported from pkg/kubelet/eviction/helpers_test.go
(v1.18) where the case applies, plus the simulator's own choices (deterministic ties)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.engine.kubelet.eviction.api import (
    ALLOCATABLE_MEMORY_AVAILABLE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_AVAILABLE,
    ContainerStats,
    FsStats,
    NodeStats,
    Observation,
    PodStats,
    Threshold,
    ThresholdValue,
    VolumeStats,
    get_threshold_quantity,
    is_critical_pod,
)
from controller.engine.kubelet.eviction.helpers import (
    ALL_FS_STATS,
    ThresholdConfigError,
    build_signal_to_node_reclaim_funcs,
    build_signal_to_rank_func,
    by_eviction_priority,
    disk,
    eviction_annotations,
    eviction_message,
    exceed_memory_requests,
    get_reclaimable_threshold,
    get_resource_request,
    make_signal_observations,
    memory,
    merge_thresholds,
    node_condition_message,
    node_conditions,
    node_conditions_last_observed_at,
    node_conditions_observed_since,
    ordered_by,
    parse_percentage,
    parse_threshold_config,
    priority,
    qos_comparator,
    rank_disk_pressure_func,
    rank_memory_pressure,
    rank_pid_pressure,
    thresholds_first_observed_at,
    thresholds_met,
    thresholds_met_grace_period,
    thresholds_updated_stats,
)
from controller.engine.kubelet.eviction.qos import qos_class

KI, MI, GI = 2**10, 2**20, 2**30
T0 = 1_000_000  # a fixed fake "now" (ms)


def pct(text: str) -> ThresholdValue:
    return ThresholdValue(percentage=parse_percentage(text))


def qty(n: int) -> ThresholdValue:
    return ThresholdValue(quantity=n)


def th(signal: str, value: ThresholdValue, grace_ms: int = 0, mr: ThresholdValue | None = None):
    return Threshold(signal, value, grace_ms, mr)


# -- ParseThresholdConfig ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "enforce, hard, soft, grace, reclaim, expected",
    [
        pytest.param([], {}, {}, {}, {}, [], id="no values give no thresholds"),
        pytest.param(
            ["pods"],
            {"memory.available": "150Mi"},
            {"memory.available": "300Mi"},
            {"memory.available": "30s"},
            {"memory.available": "0"},
            [
                th(MEMORY_AVAILABLE, qty(150 * MI), 0, qty(0)),
                th(MEMORY_AVAILABLE, qty(300 * MI), 30_000, qty(0)),
                th(ALLOCATABLE_MEMORY_AVAILABLE, qty(150 * MI), 0, qty(0)),
            ],
            id="all memory values: hard, soft, and the allocatable copy of the hard one",
        ),
        pytest.param(
            [],
            {"memory.available": "10%"},
            {"memory.available": "30%"},
            {"memory.available": "30s"},
            {"memory.available": "5%"},
            [
                th(MEMORY_AVAILABLE, pct("10%"), 0, pct("5%")),
                th(MEMORY_AVAILABLE, pct("30%"), 30_000, pct("5%")),
            ],
            id="all memory values in percentages, without enforceNodeAllocatable",
        ),
        pytest.param(
            [],
            {"imagefs.available": "150Mi", "nodefs.available": "100Mi"},
            {"imagefs.available": "300Mi", "nodefs.available": "200Mi"},
            {"imagefs.available": "30s", "nodefs.available": "30s"},
            {"imagefs.available": "2Gi", "nodefs.available": "1Gi"},
            [
                th(IMAGEFS_AVAILABLE, qty(150 * MI), 0, qty(2 * GI)),
                th(NODEFS_AVAILABLE, qty(100 * MI), 0, qty(1 * GI)),
                th(IMAGEFS_AVAILABLE, qty(300 * MI), 30_000, qty(2 * GI)),
                th(NODEFS_AVAILABLE, qty(200 * MI), 30_000, qty(1 * GI)),
            ],
            id="disk flag values",
        ),
        pytest.param(
            [],
            {"imagefs.available": "15%", "nodefs.available": "10.5%"},
            {"imagefs.available": "30%", "nodefs.available": "20.5%"},
            {"imagefs.available": "30s", "nodefs.available": "30s"},
            {"imagefs.available": "10%", "nodefs.available": "5%"},
            [
                th(IMAGEFS_AVAILABLE, pct("15%"), 0, pct("10%")),
                th(NODEFS_AVAILABLE, pct("10.5%"), 0, pct("5%")),
                th(IMAGEFS_AVAILABLE, pct("30%"), 30_000, pct("10%")),
                th(NODEFS_AVAILABLE, pct("20.5%"), 30_000, pct("5%")),
            ],
            id="disk flag values in percentages",
        ),
        pytest.param(
            [],
            {"imagefs.inodesFree": "150Mi", "nodefs.inodesFree": "100Mi"},
            {"imagefs.inodesFree": "300Mi", "nodefs.inodesFree": "200Mi"},
            {"imagefs.inodesFree": "30s", "nodefs.inodesFree": "30s"},
            {"imagefs.inodesFree": "2Gi", "nodefs.inodesFree": "1Gi"},
            [
                th(IMAGEFS_INODES_FREE, qty(150 * MI), 0, qty(2 * GI)),
                th(NODEFS_INODES_FREE, qty(100 * MI), 0, qty(1 * GI)),
                th(IMAGEFS_INODES_FREE, qty(300 * MI), 30_000, qty(2 * GI)),
                th(NODEFS_INODES_FREE, qty(200 * MI), 30_000, qty(1 * GI)),
            ],
            id="inode flag values",
        ),
        pytest.param(
            ["pods"],
            None,
            {},
            {},
            {},
            [
                th(MEMORY_AVAILABLE, qty(100 * MI)),
                th(NODEFS_AVAILABLE, pct("10%")),
                th(NODEFS_INODES_FREE, pct("5%")),
                th(IMAGEFS_AVAILABLE, pct("15%")),
                th(ALLOCATABLE_MEMORY_AVAILABLE, qty(100 * MI)),
            ],
            id="an unset evictionHard takes the four Linux defaults",
        ),
        pytest.param(
            ["pods"],
            {"nodefs.available": "5%"},
            {},
            {},
            {},
            [th(NODEFS_AVAILABLE, pct("5%"))],
            id="setting one evictionHard key drops the other defaults",
        ),
        pytest.param(
            ["pods"],
            {"memory.available": "0%", "nodefs.available": "100%"},
            {"imagefs.available": "0%"},
            {},
            {},
            [],
            id="0% and 100% are ignored, even for a soft threshold without grace period",
        ),
        pytest.param(
            ["pods", "system-reserved"],
            {"pid.available": "1k"},
            {"memory.available": "1Gi"},
            {"memory.available": "1m30s"},
            {},
            [th(PID_AVAILABLE, qty(1000)), th(MEMORY_AVAILABLE, qty(GI), 90_000)],
            id="a soft memory threshold gets no allocatable copy",
        ),
        pytest.param(
            [],
            {"memory.available": "0.5"},
            {},
            {},
            {"memory.available": "100m"},
            [th(MEMORY_AVAILABLE, qty(1), 0, qty(1))],
            id="fractional quantities round up to whole bytes",
        ),
    ],
)
def test_parse_threshold_config(enforce, hard, soft, grace, reclaim, expected) -> None:
    assert parse_threshold_config(enforce, hard, soft, grace, reclaim) == expected


@pytest.mark.parametrize(
    "hard, soft, grace, reclaim, message",
    [
        pytest.param(
            {"mem.available": "150Mi"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.mem.available: unsupported eviction signal mem.available",
            id="an invalid signal is refused",
        ),
        pytest.param(
            {"memory.available": "150Mi", "invalid.foo": "150Mi"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.invalid.foo: unsupported eviction signal invalid.foo",
            id="a valid and an invalid signal: the invalid one is named",
        ),
        pytest.param(
            {"memory.available": "-150Mi"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.memory.available: "
            "eviction threshold memory.available must be positive: -150Mi",
            id="a negative hard quantity is refused",
        ),
        pytest.param(
            {"memory.available": "0"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.memory.available: "
            "eviction threshold memory.available must be positive: 0",
            id="a zero quantity is refused",
        ),
        pytest.param(
            {"memory.available": "-15%"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.memory.available: "
            "eviction percentage threshold memory.available must be >= 0%: -15%",
            id="a negative hard percentage is refused",
        ),
        pytest.param(
            {"nodefs.available": "101%"},
            {},
            {},
            {},
            "spec.kubelet.evictionHard.nodefs.available: "
            "eviction percentage threshold nodefs.available must be <= 100%: 101%",
            # Deliberately the 1.21+ check (PR #97321): 1.18's parseThresholdStatement compared
            # the fraction with 100, so it took up to 10000% (permanent pressure), a bug.
            id="a percentage above 100 is refused",
        ),
        pytest.param(
            {},
            {"memory.available": "-150Mi"},
            {},
            {},
            "spec.kubelet.evictionSoft.memory.available: "
            "eviction threshold memory.available must be positive: -150Mi",
            id="a negative soft quantity is refused",
        ),
        pytest.param(
            {},
            {"memory.available": "150Mi"},
            {},
            {},
            "spec.kubelet.evictionSoftGracePeriod.memory.available: grace period must be "
            "specified for the soft eviction threshold memory.available",
            id="a soft threshold without grace period is refused",
        ),
        pytest.param(
            {},
            {"memory.available": "150Mi"},
            {"memory.available": "-30s"},
            {},
            "spec.kubelet.evictionSoftGracePeriod.memory.available: "
            "invalid eviction grace period specified: -30s, must be a positive value",
            id="a negative grace period is refused",
        ),
        pytest.param(
            {},
            {},
            {},
            {"memory.available": "-300Mi"},
            "spec.kubelet.evictionMinimumReclaim.memory.available: "
            "negative eviction minimum reclaim specified for memory.available",
            id="a negative minimum reclaim is refused",
        ),
        pytest.param(
            {},
            {},
            {},
            {"nodefs.available": "0%"},
            "spec.kubelet.evictionMinimumReclaim.nodefs.available: "
            "eviction percentage minimum reclaim nodefs.available must be positive: 0%",
            id="a zero percentage minimum reclaim is refused",
        ),
        pytest.param(
            {"memory.available": "abc%"},
            {},
            {},
            {},
            'spec.kubelet.evictionHard.memory.available: strconv.ParseFloat: parsing "abc": '
            "invalid syntax",
            id="a percentage that is not a number is refused as Go's ParseFloat does",
        ),
    ],
)
def test_parse_threshold_config_errors(hard, soft, grace, reclaim, message) -> None:
    with pytest.raises(ThresholdConfigError) as info:
        parse_threshold_config(["pods"], hard, soft, grace, reclaim)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "hard, grace, path",
    [
        pytest.param(
            {"memory.available": "1GB"},
            {},
            "spec.kubelet.evictionHard.memory.available: ",
            id="a bad quantity names the field",
        ),
        pytest.param(
            {},
            {"memory.available": "30 seconds"},
            "spec.kubelet.evictionSoftGracePeriod.memory.available: ",
            id="a bad duration names the field",
        ),
    ],
)
def test_parse_errors_from_the_quantity_parser_name_the_field(hard, grace, path) -> None:
    with pytest.raises(ThresholdConfigError) as info:
        parse_threshold_config([], hard, {}, grace, {})
    assert str(info.value).startswith(path)


def test_parse_error_paths_take_the_given_prefix() -> None:
    with pytest.raises(ThresholdConfigError) as info:
        parse_threshold_config(
            [], {"memory.free": "1Gi"}, {}, {}, {}, path_prefix="nodes[2].kubelet"
        )
    assert str(info.value).startswith("nodes[2].kubelet.evictionHard.memory.free: ")


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param("25.5%", 0.2549999952316284, id="25.5% is the float32 0.255"),
        pytest.param("10%", 0.10000000149011612, id="10% is the float32 0.1, not 1/10"),
        pytest.param("10%%", 0.10000000149011612, id="every trailing % is trimmed"),
    ],
)
def test_parse_percentage(text, expected) -> None:
    assert float(parse_percentage(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("blah", id="a word is not a percentage"),
        pytest.param("foo%", id="a word with % is not a percentage"),
        pytest.param("12%345", id="a % inside the number is not a percentage"),
        pytest.param("1e50%", id="a number beyond float32 is out of range"),
    ],
)
def test_parse_percentage_errors(text) -> None:
    with pytest.raises(ValueError):
        parse_percentage(text)


@pytest.mark.parametrize(
    "value, capacity, expected",
    [
        pytest.param(qty(100 * MI), 8 * GI, 100 * MI, id="a quantity is itself"),
        pytest.param(pct("10%"), 100 * GI, 10_737_418_400, id="10% of 100Gi carries float32 error"),
        pytest.param(pct("15%"), 100 * GI, 16_106_128_000, id="15% of 100Gi"),
        pytest.param(pct("5%"), 1000, 50, id="5% of 1000 inodes truncates to 50"),
    ],
)
def test_get_threshold_quantity(value, capacity, expected) -> None:
    assert get_threshold_quantity(value, capacity) == expected


# -- observations -----------------------------------------------------------------------------
def test_make_signal_observations_with_a_dedicated_imagefs() -> None:
    stats = NodeStats(
        time_ms=T0,
        memory_capacity=2 * GI,
        memory_working_set=1 * GI,
        allocatable_memory_capacity=GI + 512 * MI,
        pods_memory_working_set=512 * MI,
        nodefs_capacity=2 * KI,
        nodefs_used=1 * KI,
        nodefs_inodes=1 * MI,
        nodefs_inodes_used=1 * MI - 1024,
        imagefs=FsStats(capacity=2 * MI, used=1 * MI, inodes=1 * MI, inodes_used=1 * MI - 1024),
        pid_max=4_194_304,
        pids_used=1200,
    )
    assert make_signal_observations(stats) == {
        MEMORY_AVAILABLE: Observation(1 * GI, 2 * GI, T0),
        ALLOCATABLE_MEMORY_AVAILABLE: Observation(1 * GI, GI + 512 * MI, T0),
        NODEFS_AVAILABLE: Observation(1024, 2048, T0),
        NODEFS_INODES_FREE: Observation(1024, 1 * MI, T0),
        IMAGEFS_AVAILABLE: Observation(1 * MI, 2 * MI, T0),
        IMAGEFS_INODES_FREE: Observation(1024, 1 * MI, T0),
        PID_AVAILABLE: Observation(4_194_304 - 1200, 4_194_304, T0),
    }


def test_make_signal_observations_on_a_single_filesystem_imagefs_observes_nodefs() -> None:
    stats = NodeStats(T0, 8 * GI, 9 * GI, 0, 0, 100 * GI, 95 * GI, 1000, 10)
    assert make_signal_observations(stats) == {
        MEMORY_AVAILABLE: Observation(0, 9 * GI, T0),  # working set above capacity: 0 left
        NODEFS_AVAILABLE: Observation(5 * GI, 100 * GI, T0),
        NODEFS_INODES_FREE: Observation(990, 1000, T0),
        IMAGEFS_AVAILABLE: Observation(5 * GI, 100 * GI, T0),
        IMAGEFS_INODES_FREE: Observation(990, 1000, T0),
    }


# -- thresholds met ---------------------------------------------------------------------------
HARD_1GI = th(MEMORY_AVAILABLE, qty(GI), 0, qty(500 * MI))
MEM_20 = th(MEMORY_AVAILABLE, pct("20%"), 0, pct("5%"))
NODEFS_30 = th(NODEFS_AVAILABLE, pct("30%"))


def mem_obs(available: int, capacity: int = 0, time_ms: int = 0) -> dict[str, Observation]:
    return {MEMORY_AVAILABLE: Observation(available, capacity, time_ms)}


@pytest.mark.parametrize(
    "enforce, thresholds, observations, expected",
    [
        pytest.param(False, [], {}, [], id="empty"),
        pytest.param(False, [HARD_1GI], mem_obs(500 * MI), [HARD_1GI], id="threshold met"),
        pytest.param(False, [HARD_1GI], mem_obs(2 * GI), [], id="threshold not met"),
        pytest.param(
            False, [HARD_1GI], mem_obs(GI), [], id="available equal to the value is not met"
        ),
        pytest.param(
            True,
            [HARD_1GI],
            mem_obs(1075 * MI),
            [HARD_1GI],
            id="met with min-reclaim: 1075Mi < 1.5Gi",
        ),
        pytest.param(
            False, [HARD_1GI], mem_obs(1075 * MI), [], id="the same not met without min-reclaim"
        ),
        pytest.param(True, [HARD_1GI], mem_obs(2 * GI), [], id="not met with min-reclaim"),
        pytest.param(
            False,
            [HARD_1GI],
            {NODEFS_AVAILABLE: Observation(0, GI, 0)},
            [],
            id="a signal without observation is not met",
        ),
    ],
)
def test_thresholds_met(enforce, thresholds, observations, expected) -> None:
    assert thresholds_met(thresholds, observations, enforce) == expected


def _mem_and_disk(mem_available: int, disk_available: int) -> dict[str, Observation]:
    return {
        MEMORY_AVAILABLE: Observation(mem_available, 1000 * MI, 0),
        NODEFS_AVAILABLE: Observation(disk_available, 1000 * GI, 0),
    }


@pytest.mark.parametrize(
    "enforce, observations, expected",
    [
        pytest.param(False, _mem_and_disk(100 * MI, 100 * GI), [MEM_20, NODEFS_30], id="both met"),
        pytest.param(False, _mem_and_disk(300 * MI, 400 * GI), [], id="none met"),
        pytest.param(False, _mem_and_disk(300 * MI, 100 * GI), [NODEFS_30], id="disk met"),
        pytest.param(False, _mem_and_disk(100 * MI, 400 * GI), [MEM_20], id="memory met"),
        pytest.param(
            True,
            {MEMORY_AVAILABLE: Observation(225 * MI, 1000 * MI, 0)},
            [MEM_20],
            id="memory met with min-reclaim: 225Mi < 25% of 1000Mi",
        ),
        pytest.param(
            True,
            {MEMORY_AVAILABLE: Observation(300 * MI, 1000 * MI, 0)},
            [],
            id="memory not met with min-reclaim",
        ),
    ],
)
def test_percentage_thresholds_met(enforce, observations, expected) -> None:
    assert thresholds_met([MEM_20, NODEFS_30], observations, enforce) == expected


UPDATED = th(MEMORY_AVAILABLE, qty(GI))


@pytest.mark.parametrize(
    "thresholds, observations, last, expected",
    [
        pytest.param([], {}, {}, [], id="empty"),
        pytest.param(
            [UPDATED],
            mem_obs(0, 0, 0),
            {},
            [UPDATED],
            id="an observation without time counts as new",
        ),
        pytest.param([UPDATED], mem_obs(0, 0, T0), {}, [UPDATED], id="no last observation"),
        pytest.param(
            [UPDATED], mem_obs(0, 0, T0), mem_obs(0, 0, T0 + 60_000), [], id="time machine"
        ),
        pytest.param([UPDATED], mem_obs(0, 0, T0), mem_obs(0, 0, T0), [], id="same observation"),
        pytest.param(
            [UPDATED],
            mem_obs(0, 0, T0 + 60_000),
            mem_obs(0, 0, T0),
            [UPDATED],
            id="new observation",
        ),
        pytest.param(
            [UPDATED], {}, mem_obs(0, 0, T0), [], id="a threshold without observation is dropped"
        ),
    ],
)
def test_thresholds_updated_stats(thresholds, observations, last, expected) -> None:
    assert thresholds_updated_stats(thresholds, observations, last) == expected


HARD = th(MEMORY_AVAILABLE, qty(GI))
SOFT = th(MEMORY_AVAILABLE, qty(2 * GI), 60_000)


@pytest.mark.parametrize(
    "thresholds, last, expected",
    [
        pytest.param([], {}, {}, id="empty"),
        pytest.param([HARD], {}, {HARD: T0}, id="no previous observation: first seen now"),
        pytest.param(
            [HARD], {HARD: T0 - 60_000}, {HARD: T0 - 60_000}, id="previous observation is kept"
        ),
        pytest.param([], {HARD: T0 - 60_000}, {}, id="a threshold no longer met is forgotten"),
    ],
)
def test_thresholds_first_observed_at(thresholds, last, expected) -> None:
    assert thresholds_first_observed_at(thresholds, last, T0) == expected


@pytest.mark.parametrize(
    "observed_at, expected",
    [
        pytest.param({}, [], id="empty"),
        pytest.param({HARD: T0}, [HARD], id="a hard threshold is met at once"),
        pytest.param({SOFT: T0}, [], id="a soft threshold is not met before its grace period"),
        pytest.param({SOFT: T0 - 59_999}, [], id="a soft threshold 1 ms short of its grace period"),
        pytest.param(
            {SOFT: T0 - 60_000}, [SOFT], id="a soft threshold exactly at its grace period"
        ),
        pytest.param({SOFT: T0 - 120_000}, [SOFT], id="a soft threshold past its grace period"),
    ],
)
def test_thresholds_met_grace_period(observed_at, expected) -> None:
    assert thresholds_met_grace_period(observed_at, T0) == expected


@pytest.mark.parametrize(
    "thresholds, expected",
    [
        pytest.param([], [], id="empty list"),
        pytest.param([HARD], ["MemoryPressure"], id="memory.available"),
        pytest.param(
            [
                th(PID_AVAILABLE, qty(100)),
                th(IMAGEFS_AVAILABLE, qty(1)),
                HARD,
                th(NODEFS_INODES_FREE, qty(1)),
            ],
            ["PIDPressure", "DiskPressure", "MemoryPressure"],
            id="one condition per kind, in threshold order",
        ),
    ],
)
def test_node_conditions(thresholds, expected) -> None:
    assert node_conditions(thresholds) == expected


@pytest.mark.parametrize(
    "conditions, last, expected",
    [
        pytest.param(["MemoryPressure"], {}, {"MemoryPressure": T0}, id="no previous observation"),
        pytest.param(
            ["MemoryPressure"],
            {"MemoryPressure": T0 - 60_000},
            {"MemoryPressure": T0},
            id="previous observation is refreshed",
        ),
        pytest.param(
            [],
            {"MemoryPressure": T0 - 60_000},
            {"MemoryPressure": T0 - 60_000},
            id="an old observation keeps its time",
        ),
    ],
)
def test_node_conditions_last_observed_at(conditions, last, expected) -> None:
    assert node_conditions_last_observed_at(conditions, last, T0) == expected


@pytest.mark.parametrize(
    "observed_at, period_ms, expected",
    [
        pytest.param({"MemoryPressure": T0 - 60_000}, 120_000, ["MemoryPressure"], id="in period"),
        pytest.param({"MemoryPressure": T0 - 60_000}, 30_000, [], id="out of period"),
        pytest.param(
            {"MemoryPressure": T0 - 300_000}, 300_000, [], id="exactly one period ago is out"
        ),
        pytest.param(
            {"PIDPressure": T0, "DiskPressure": T0, "MemoryPressure": T0},
            1,
            ["MemoryPressure", "DiskPressure", "PIDPressure"],
            id="conditions come in a fixed order where Go iterates a map",
        ),
    ],
)
def test_node_conditions_observed_since(observed_at, period_ms, expected) -> None:
    assert node_conditions_observed_since(observed_at, period_ms, T0) == expected


def test_merge_thresholds_ignores_min_reclaim_when_comparing() -> None:
    a = th(MEMORY_AVAILABLE, qty(GI))
    same_but_min_reclaim = th(MEMORY_AVAILABLE, qty(GI), 0, qty(MI))
    soft = th(MEMORY_AVAILABLE, qty(GI), 30_000)
    assert merge_thresholds([a], [same_but_min_reclaim, soft, soft]) == [a, soft]


@pytest.mark.parametrize(
    "thresholds, expected",
    [
        pytest.param(
            [
                NODEFS_30,
                th(PID_AVAILABLE, qty(1)),
                SOFT,
                th(ALLOCATABLE_MEMORY_AVAILABLE, qty(1)),
                HARD,
            ],
            [
                SOFT,
                th(ALLOCATABLE_MEMORY_AVAILABLE, qty(1)),
                HARD,
                NODEFS_30,
                th(PID_AVAILABLE, qty(1)),
            ],
            id="memory signals first, others keep their order",
        ),
        pytest.param(
            [HARD, SOFT], [HARD, SOFT], id="hard before soft as configured (a stable sort)"
        ),
    ],
)
def test_by_eviction_priority(thresholds, expected) -> None:
    assert by_eviction_priority(thresholds) == expected


def test_get_reclaimable_threshold() -> None:
    unknown = th("swap.available", qty(1))
    assert get_reclaimable_threshold([unknown, NODEFS_30]) == (NODEFS_30, "ephemeral-storage")
    assert get_reclaimable_threshold([th(NODEFS_INODES_FREE, qty(1))])[1] == "inodes"
    assert get_reclaimable_threshold([unknown]) is None


# -- ranking ----------------------------------------------------------------------------------
def mem_pod(
    name: str, usage: int | None, request: int = 0, prio: int = 0, limit: int = 0
) -> PodStats:
    requests = {"memory": request} if request else {}
    limits = {"memory": limit} if limit else {}
    c = ContainerStats(name, requests, limits, memory_working_set=usage)
    return PodStats(f"ns/{name}", prio, [c], memory_working_set=usage)


def disk_pod(
    name: str,
    rootfs: int,
    logs: int,
    volume: int,
    request: int = 0,
    prio: int = 0,
    inodes: bool = False,
) -> PodStats:
    requests = {"ephemeral-storage": request} if request else {}
    if inodes:
        c = ContainerStats(name, requests, rootfs_inodes_used=rootfs, logs_inodes_used=logs)
        v = VolumeStats("local-volume", "emptyDir", inodes_used=volume)
    else:
        c = ContainerStats(name, requests, rootfs_used=rootfs, logs_used=logs)
        v = VolumeStats("local-volume", "emptyDir", used=volume)
    return PodStats(f"ns/{name}", prio, [c], volumes=[v])


def names(pods: list[PodStats]) -> list[str]:
    return [p.key.removeprefix("ns/") for p in pods]


def test_ordered_by_exceeds_request_memory() -> None:
    below = mem_pod("below-requests", 199 * MI, 200 * MI, prio=-1)
    exceeds = mem_pod("exceeds-requests", 101 * MI, 100 * MI, prio=1)
    assert names(ordered_by(exceed_memory_requests)([below, exceeds])) == [
        "exceeds-requests",
        "below-requests",
    ]


def test_ordered_by_priority() -> None:
    low, medium, high = (
        mem_pod("low", 0, prio=-134),
        mem_pod("medium", 0, prio=1),
        mem_pod("high", 0, prio=12534),
    )
    assert names(ordered_by(priority)([high, medium, low])) == ["low", "medium", "high"]


def _memory_pods() -> list[PodStats]:
    return [
        mem_pod("best-effort-high", 500 * MI),  # 500 above request
        mem_pod("best-effort-low", 300 * MI),  # 300
        mem_pod("burstable-high", 800 * MI, 100 * MI, limit=GI),  # 700
        mem_pod("burstable-low", 300 * MI, 100 * MI, limit=GI),  # 200
        mem_pod("guaranteed-high", 800 * MI, GI, limit=GI),  # -200
        mem_pod("guaranteed-low", 200 * MI, GI, limit=GI),  # -800
    ]


def test_ordered_by_memory() -> None:
    assert names(ordered_by(memory)(_memory_pods())) == [
        "burstable-high",
        "best-effort-high",
        "best-effort-low",
        "burstable-low",
        "guaranteed-high",
        "guaranteed-low",
    ]


def test_rank_memory_pressure_exceeders_then_priority_then_usage_above_request() -> None:
    low, high = 0, 1000
    pods = [
        mem_pod("below-requests-high-priority-low-usage", 200 * MI, GI, high),  # -824
        mem_pod("below-requests-high-priority-high-usage", 800 * MI, GI, high),  # -224
        mem_pod("below-requests-low-priority-low-usage", 200 * MI, GI, low),
        mem_pod("below-requests-low-priority-high-usage", 800 * MI, GI, low),
        mem_pod("above-requests-high-priority-low-usage", 150 * MI, 100 * MI, high),  # 50
        mem_pod("above-requests-high-priority-high-usage", 600 * MI, 100 * MI, high),  # 500
        mem_pod("above-requests-low-priority-low-usage", 50 * MI, 0, low),  # 50
        mem_pod("above-requests-low-priority-high-usage", 500 * MI, 0, low),  # 500
    ]
    assert names(rank_memory_pressure(pods)) == [
        "above-requests-low-priority-high-usage",
        "above-requests-low-priority-low-usage",
        "above-requests-high-priority-high-usage",
        "above-requests-high-priority-low-usage",
        "below-requests-low-priority-high-usage",
        "below-requests-low-priority-low-usage",
        "below-requests-high-priority-high-usage",
        "below-requests-high-priority-low-usage",
    ]


def test_rank_memory_pressure_puts_pods_without_stats_first() -> None:
    no_stats = mem_pod("no-stats", None, prio=5000)
    no_stats.stats_found = False
    hog = mem_pod("hog", 4 * GI)
    assert names(rank_memory_pressure([hog, no_stats])) == ["no-stats", "hog"]


def test_rank_memory_pressure_breaks_full_ties_by_pod_key() -> None:
    pods = [mem_pod(n, 100 * MI) for n in ("c", "a", "b")]
    assert names(rank_memory_pressure(pods)) == ["a", "b", "c"]


def test_init_container_requests_raise_the_pod_request() -> None:
    p = mem_pod("app", 300 * MI, 100 * MI)
    p.init_containers = [ContainerStats("init", {"memory": 400 * MI})]
    assert get_resource_request(p, "memory") == 400 * MI
    assert exceed_memory_requests(p, mem_pod("other", 1)) == 1  # 300Mi no longer exceeds


def _disk_pods(inodes: bool = False) -> list[PodStats]:
    return [
        disk_pod("best-effort-high", 50 * MI, 100 * MI, 150 * MI, inodes=inodes),  # 300Mi
        disk_pod("best-effort-low", 25 * MI, 25 * MI, 50 * MI, inodes=inodes),  # 100Mi
        disk_pod("burstable-high", 150 * MI, 150 * MI, 50 * MI, 100 * MI, inodes=inodes),  # 350-100
        disk_pod("burstable-low", 25 * MI, 35 * MI, 50 * MI, 100 * MI, inodes=inodes),  # 110-100
        disk_pod(
            "guaranteed-high", 225 * MI, 100 * MI, 50 * MI, 400 * MI, inodes=inodes
        ),  # 375-400
        disk_pod("guaranteed-low", 25 * MI, 45 * MI, 50 * MI, 400 * MI, inodes=inodes),  # 120-400
    ]


@pytest.mark.parametrize(
    "lsci, expected",
    [
        pytest.param(
            True,
            [
                "best-effort-high",
                "burstable-high",
                "best-effort-low",
                "burstable-low",
                "guaranteed-high",
                "guaranteed-low",
            ],
            id="disk usage above the ephemeral-storage request",
        ),
        pytest.param(
            False,
            [
                "guaranteed-high",
                "burstable-high",
                "best-effort-high",
                "guaranteed-low",
                "burstable-low",
                "best-effort-low",
            ],
            id="without LocalStorageCapacityIsolation requests count as 0",
        ),
    ],
)
def test_ordered_by_disk(lsci, expected) -> None:
    assert (
        names(ordered_by(disk(ALL_FS_STATS, "ephemeral-storage", lsci))(_disk_pods())) == expected
    )


def test_ordered_by_inodes() -> None:
    pods = [
        disk_pod("low", 50_000, 100_000, 50_000, inodes=True),  # 200000
        disk_pod("medium", 100_000, 150_000, 50_000, inodes=True),  # 300000
        disk_pod("high", 200_000, 150_000, 50_000, inodes=True),  # 400000
    ]
    assert names(ordered_by(disk(ALL_FS_STATS, "inodes"))(pods)) == ["high", "medium", "low"]


def test_ordered_by_inodes_subtracts_the_ephemeral_storage_request_as_go_does() -> None:
    small = disk_pod("small-request", 1000, 0, 0, request=10, inodes=True)  # 1000 - 10
    big = disk_pod("big-request", 2000, 0, 0, request=5000, inodes=True)  # 2000 - 5000
    assert names(ordered_by(disk(ALL_FS_STATS, "inodes"))([big, small])) == [
        "small-request",
        "big-request",
    ]


def test_rank_disk_pressure_exceeders_then_priority_then_usage_above_request() -> None:
    low, high = 0, 1000
    pods = [
        disk_pod("below-requests-high-priority-low-usage", 100 * MI, 60 * MI, 40 * MI, GI, high),
        disk_pod("below-requests-high-priority-high-usage", 250 * MI, 500 * MI, 50 * MI, GI, high),
        disk_pod("below-requests-low-priority-low-usage", 50 * MI, 100 * MI, 50 * MI, GI, low),
        disk_pod("below-requests-low-priority-high-usage", 500 * MI, 200 * MI, 100 * MI, GI, low),
        disk_pod(
            "above-requests-high-priority-low-usage", 90 * MI, 50 * MI, 10 * MI, 100 * MI, high
        ),
        disk_pod(
            "above-requests-high-priority-high-usage", 200 * MI, 150 * MI, 250 * MI, 100 * MI, high
        ),
        disk_pod("above-requests-low-priority-low-usage", 10 * MI, 10 * MI, 30 * MI, 0, low),
        disk_pod("above-requests-low-priority-high-usage", 200 * MI, 100 * MI, 200 * MI, 0, low),
    ]
    ranked = rank_disk_pressure_func(ALL_FS_STATS, "ephemeral-storage")(pods)
    assert names(ranked) == [
        "above-requests-low-priority-high-usage",
        "above-requests-low-priority-low-usage",
        "above-requests-high-priority-high-usage",
        "above-requests-high-priority-low-usage",
        "below-requests-low-priority-high-usage",
        "below-requests-low-priority-low-usage",
        "below-requests-high-priority-high-usage",
        "below-requests-high-priority-low-usage",
    ]


@pytest.mark.parametrize(
    "signal, with_imagefs, expected",
    [
        pytest.param(
            NODEFS_AVAILABLE,
            False,
            ["rootfs-heavy", "logs-heavy"],
            id="single filesystem: nodefs ranks by rootfs + logs + volumes",
        ),
        pytest.param(
            NODEFS_AVAILABLE,
            True,
            ["logs-heavy", "rootfs-heavy"],
            id="dedicated imagefs: nodefs ranks by logs + local volumes only",
        ),
        pytest.param(
            IMAGEFS_AVAILABLE,
            True,
            ["rootfs-heavy", "logs-heavy"],
            id="dedicated imagefs: imagefs ranks by the writable layer only",
        ),
    ],
)
def test_disk_rank_functions_measure_the_filesystem_of_the_signal(
    signal, with_imagefs, expected
) -> None:
    rootfs_heavy = disk_pod("rootfs-heavy", 900 * MI, 10 * MI, 0)
    logs_heavy = disk_pod("logs-heavy", 0, 500 * MI, 0)
    rank = build_signal_to_rank_func(with_imagefs)[signal]
    assert names(rank([logs_heavy, rootfs_heavy])) == expected


def test_rank_pid_pressure_is_priority_only_in_1_18() -> None:
    busy = mem_pod("busy", 0, prio=10)
    busy.process_count = 30_000
    idle = mem_pod("idle", 0, prio=0)
    idle.process_count = 1
    assert names(rank_pid_pressure([busy, idle])) == ["idle", "busy"]


def _qos_pods() -> list[PodStats]:
    best_effort = mem_pod("best-effort", 0)
    burstable = PodStats(
        "ns/burstable",
        0,
        [ContainerStats("b", {"cpu": 100, "memory": 100 * MI}, {"cpu": 200, "memory": 200 * MI})],
    )
    guaranteed = PodStats(
        "ns/guaranteed",
        0,
        [ContainerStats("g", {"cpu": 200, "memory": 200 * MI}, {"cpu": 200, "memory": 200 * MI})],
    )
    return [guaranteed, burstable, best_effort]


def test_ordered_by_qos() -> None:
    assert names(ordered_by(qos_comparator)(_qos_pods())) == [
        "best-effort",
        "burstable",
        "guaranteed",
    ]


def test_ordered_by_qos_then_memory() -> None:
    def pod(name: str, usage: int, request: int, limit: int, cpu: bool) -> PodStats:
        c = ContainerStats(
            name,
            {"memory": request, **({"cpu": 100} if cpu else {})},
            {"memory": limit, **({"cpu": 100} if cpu else {})},
            memory_working_set=usage,
        )
        if not request:
            c.requests, c.limits = {}, {}
        return PodStats(f"ns/{name}", 0, [c], memory_working_set=usage)

    pods = [
        pod("best-effort-high", 500 * MI, 0, 0, False),  # 500
        pod("best-effort-low", 50 * MI, 0, 0, False),  # 50
        pod("burstable-high", 50 * MI, 100 * MI, GI, False),  # -50
        pod("burstable-low", 300 * MI, 100 * MI, GI, False),  # 200
        pod("guaranteed-high", 800 * MI, GI, GI, True),  # -200
        pod("guaranteed-low", 200 * MI, GI, GI, True),  # -800
    ]
    ranked = ordered_by(qos_comparator, memory)(pods)
    assert names(ranked) == [
        "best-effort-high",
        "best-effort-low",
        "burstable-low",
        "burstable-high",
        "guaranteed-high",
        "guaranteed-low",
    ]
    assert names(build_signal_to_rank_func(False, "qos")[MEMORY_AVAILABLE](pods)) == names(ranked)


def test_an_unknown_ranking_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown eviction ranking policy 'lru'"):
        build_signal_to_rank_func(False, "lru")


# -- QoS --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "containers, expected",
    [
        pytest.param([({}, {})], "BestEffort", id="no requests or limits: BestEffort"),
        pytest.param(
            [({"ephemeral-storage": GI}, {})],
            "BestEffort",
            id="only non-compute resources: BestEffort",
        ),
        pytest.param(
            [({"memory": 256 * MI}, {})], "Burstable", id="a memory request only: Burstable"
        ),
        pytest.param(
            [({"cpu": 100, "memory": MI}, {"cpu": 100, "memory": MI})],
            "Guaranteed",
            id="requests equal limits for cpu and memory: Guaranteed",
        ),
        pytest.param(
            [({}, {"cpu": 100, "memory": MI})],
            "Guaranteed",
            id="limits only: requests default to limits, Guaranteed",
        ),
        pytest.param(
            [({}, {"memory": 2 * GI})], "Burstable", id="a memory limit without cpu: Burstable"
        ),
        pytest.param(
            [({"cpu": 50}, {"cpu": 100, "memory": MI})],
            "Burstable",
            id="a cpu request below its limit: Burstable",
        ),
        pytest.param(
            [({}, {"cpu": 100, "memory": MI}), ({}, {})],
            "Burstable",
            id="one container without limits makes the pod Burstable",
        ),
    ],
)
def test_qos_class(containers, expected) -> None:
    assert qos_class(containers) == expected


@pytest.mark.parametrize(
    "priority_, static, mirror, expected",
    [
        pytest.param(0, False, False, False, id="an ordinary pod is not critical"),
        pytest.param(
            2_000_000_000, False, False, True, id="system-cluster-critical priority is critical"
        ),
        pytest.param(1_999_999_999, False, False, False, id="one below the system priority is not"),
        pytest.param(0, True, False, True, id="a static pod is critical"),
        pytest.param(0, False, True, True, id="a mirror pod is critical"),
    ],
)
def test_is_critical_pod(priority_, static, mirror, expected) -> None:
    assert is_critical_pod(priority_, static, mirror) is expected


# -- messages ---------------------------------------------------------------------------------
def _two_containers() -> PodStats:
    return PodStats(
        "ns/web",
        0,
        [
            ContainerStats(
                "app",
                {"memory": 256 * MI, "ephemeral-storage": GI},
                memory_working_set=GI,
                rootfs_used=GI,
                logs_used=512 * MI,
            ),
            ContainerStats(
                "sidecar", {}, memory_working_set=100 * MI + 1, rootfs_used=0, logs_used=None
            ),
            ContainerStats("quiet", {"memory": GI}, memory_working_set=10 * MI),
        ],
    )


@pytest.mark.parametrize(
    "resource, pod, expected",
    [
        pytest.param(
            "memory",
            _two_containers(),
            "The node was low on resource: memory. "
            "Container app was using 1Gi, which exceeds its request of 256Mi. "
            "Container sidecar was using 104857601, which exceeds its request of 0. ",
            id="memory: every container above its request, in container order",
        ),
        pytest.param(
            "ephemeral-storage",
            _two_containers(),
            "The node was low on resource: ephemeral-storage. "
            "Container app was using 1536Mi, which exceeds its request of 1Gi. ",
            id="ephemeral-storage: rootfs + logs, only where both are reported",
        ),
        pytest.param(
            "inodes",
            _two_containers(),
            "The node was low on resource: inodes. ",
            id="inodes: no container details",
        ),
        pytest.param(
            "memory",
            PodStats("ns/x", stats_found=False),
            "The node was low on resource: memory. ",
            id="a pod without stats: no container details",
        ),
    ],
)
def test_eviction_message(resource, pod, expected) -> None:
    assert eviction_message(resource, pod) == expected


def test_eviction_annotations() -> None:
    assert eviction_annotations("memory", _two_containers()) == {
        "offending_containers": "app,sidecar",
        "offending_containers_usage": "1Gi,104857601",
        "starved_resource": "memory",
    }


@pytest.mark.parametrize(
    "conditions, expected",
    [
        pytest.param(
            ["DiskPressure"], "The node had condition: [DiskPressure]. ", id="one condition"
        ),
        pytest.param(
            ["MemoryPressure", "DiskPressure"],
            "The node had condition: [MemoryPressure DiskPressure]. ",
            id="two conditions, Go %v of a slice",
        ),
    ],
)
def test_node_condition_message(conditions, expected) -> None:
    assert node_condition_message(conditions) == expected


@pytest.mark.parametrize(
    "with_imagefs, expected",
    [
        pytest.param(
            False,
            dict.fromkeys(
                (NODEFS_AVAILABLE, NODEFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE),
                ("ContainerGC", "ImageGC"),
            ),
            id="single filesystem: container GC then image GC for every disk signal",
        ),
        pytest.param(
            True,
            {
                NODEFS_AVAILABLE: (),
                NODEFS_INODES_FREE: (),
                IMAGEFS_AVAILABLE: ("ContainerGC", "ImageGC"),
                IMAGEFS_INODES_FREE: ("ContainerGC", "ImageGC"),
            },
            id="dedicated imagefs: nodefs pressure has no node-level reclaim",
        ),
    ],
)
def test_build_signal_to_node_reclaim_funcs(with_imagefs, expected) -> None:
    assert build_signal_to_node_reclaim_funcs(with_imagefs) == expected


def test_threshold_round_trips_through_json_types() -> None:
    t = th(NODEFS_AVAILABLE, pct("10.5%"), 30_000, qty(GI))
    d = t.to_dict()
    assert d == {
        "signal": "nodefs.available",
        "value": {"percentage": [14092861, 134217728]},
        "gracePeriodMs": 30_000,
        "minReclaim": {"quantity": GI},
    }
    assert Threshold.from_dict(d) == t
    assert pct("10.5%").percentage == Fraction(14092861, 134217728)
