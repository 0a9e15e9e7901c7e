"""The ``manage.py bench`` rows on tiny sizes with real processes: they run end to end and
their figures add up (nothing about speed is asserted: the machine is shared)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from controller import affinity
from controller.bench import history, live, rooms, stack, stats, viewers
from controller.locks import redis_client
from controller.models import Room
from controller.rooms import broadcast, phases


@pytest.mark.parametrize(
    ("instants", "merged"),
    [
        ([], []),
        ([10.0, 10.01, 10.04, 11.0, 11.02, 12.5], [10.0, 11.0, 12.5]),
        ([1.0, 1.05, 1.1], [1.0, 1.05, 1.1]),
    ],
)
def test_cluster_merges_one_beat_seen_by_many_rooms(instants, merged) -> None:
    assert rooms._cluster(instants) == merged


def test_clock_watch_counts_a_beat_a_room_missed_and_a_beat_no_room_reached() -> None:
    # Beats every 1 s from 100 to 109 in the window [100, 111]; room 1 reached all of them,
    # room 2 missed 104, and no room reached 107 (a stalled worker: not seen at all).
    watch = rooms.ClockWatch([1, 2], period=1.0)
    beats = [100.0 + i for i in range(10) if i != 7]
    watch.reached = {1: set(beats), 2: {b + 0.01 for b in beats if b != 104.0}}
    r = watch.on_time(100.0, 111.0)
    assert (r["beats"], r["expected"]) == (9, 9)
    assert (r["pairs"], r["late"], r["on_time"]) == (17, 1, round(17 / 18, 3))
    # The window's expected beats count when fewer were seen (107 reached by no room).
    r = watch.on_time(100.0, 112.0)
    assert (r["beats"], r["expected"], r["late"]) == (9, 10, 3)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([3.0], 0.95, 3.0), ([1.0, 2.0, 3.0, 4.0], 0.5, 2.0), ([*range(1, 101)], 0.95, 95)],
)
def test_pct_is_the_nearest_rank(values, q, expected) -> None:
    assert stats.percentile([float(v) for v in values], q) == expected


@pytest.mark.django_db
def test_an_unknown_row_is_refused_naming_the_option() -> None:
    with pytest.raises(CommandError, match=r"--only: unknown row 'room' \(rows: engine, live"):
        call_command("bench", "--only", "room")


@pytest.mark.django_db(transaction=True)
def test_live_row_counts_raw_and_bounded_bytes(redis_server, settings) -> None:
    # A limit small enough that the zone outage's ticks go out as resync notices.
    settings.PLAYGROUND_DELTA_MAX_BYTES = 4000
    # 12 beats of 1 s at 10x: 120 simulated s, past the outage (60 s) and its nodes turning
    # Unknown (100 s).
    settings.PLAYGROUND_TICK_SECONDS = 1.0
    r = live.live_bench(nodes=30, ticks=12, pods_per_node=3)
    assert (r["nodes"], r["pods"], r["ticks"], r["beat_s"]) == (30, 90, 12, 1.0)
    assert r["resync_ticks"] >= 1
    assert r["max_raw_bytes"] > broadcast.max_bytes() >= r["max_bytes"]
    assert r["mean_raw_bytes"] >= r["mean_bytes"]
    # Each phase of the tick (rooms/phases.py) at p95 and max, printed under the row.
    assert list(r["phases"]) == list(phases.PHASES)
    for name in ("load", "advance", "persist", "commit", "broadcast"):
        f = r["phases"][name]
        assert f["wall_max"] >= f["wall_p95"] >= 0 and f["cpu_max"] > 0, name
    assert sum(f["cpu_max"] for f in r["phases"].values()) >= r["max_cpu_ms"] * 0.5
    assert "by phase" in live.format_live(r)
    assert not Room.objects.filter(slug__startswith="live-bench").exists()


@pytest.fixture
def no_announced_workers(redis_server) -> None:
    """Workers killed by earlier tests stay announced for WORKER_TTL_S."""
    redis_client().delete(affinity.WORKERS_KEY)


def test_rooms_row_runs_on_real_workers(no_announced_workers, stack_env, tmp_path) -> None:
    r = rooms.rooms_bench(rooms=3, nodes=6, workers=2, seconds=4, log_dir=tmp_path, env=stack_env)
    assert r["beats"] >= 2
    assert 0.0 <= r["on_time"] <= 1.0
    assert r["lag_p50_s"] <= r["lag_p95_s"] <= r["lag_max_s"]
    assert r["landing_p50_s"] is not None  # beats were seen landing
    assert 0.0 <= r["landing_p50_s"] <= r["landing_p95_s"] <= r["landing_max_s"]
    assert r["worker_cpu_s"] > 0
    assert r["min_sim_s"] > 0  # every room ticked
    assert not Room.objects.filter(slug__startswith="bench-rooms").exists()


def test_viewers_row_runs_through_two_daphnes(no_announced_workers, stack_env, tmp_path) -> None:
    r = viewers.viewers_bench(
        viewers=4, webs=2, actions=2, nodes=6, log_dir=tmp_path, env=stack_env
    )
    assert (r["viewers"], r["webs"], r["actions"]) == (4, 2, 2)
    assert 0 < r["p50_ms"] <= r["p95_ms"] <= r["max_ms"]
    assert r["last_max_ms"] == r["max_ms"]
    assert not Room.objects.filter(slug__startswith="bench-viewers").exists()


def test_process_rows_refuse_while_other_workers_are_announced(redis_server) -> None:
    redis_client().zadd(affinity.WORKERS_KEY, {"someone@else": __import__("time").time()})
    try:
        with pytest.raises(RuntimeError, match="other Celery workers are running .*someone@else"):
            stack.check_stack()
    finally:
        redis_client().zrem(affinity.WORKERS_KEY, "someone@else")


# -- the engine row's comparison with its previous run (.bench/last.json) ---------------------
ROW = {
    "nodes": 1000,
    "pods": 30000,
    "scenario": "zone outage at 10 min",
    "setup_s": 1.5,
    "run_s": 2.0,
    "run_cpu_s": 1.9,
    "sim_s_per_wall_s": 1800.0,
    "events": 128352,
    "peak_mib": 140.0,
}


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        pytest.param(
            None,
            "  1000 nodes, zone outage at 10 min: no previous run stored",
            id="first run of the row",
        ),
        pytest.param(
            {
                **ROW,
                "run_s": 4.0,
                "run_cpu_s": 3.8,
                "sim_s_per_wall_s": 900.0,
                "commit": "abc1234",
                "load": "load average 1.00 2.00 3.00",
            },
            "  1000 nodes, zone outage at 10 min vs last (abc1234, load average 1.00 2.00 3.00): "
            "run 4.0 -> 2.0 s (-50%) better; run CPU 3.8 -> 1.9 s (-50%) better; "
            "sim s/wall s 900.0 -> 1800.0 (+100%) better; setup 1.5 -> 1.5 s (+0%); "
            "peak 140.0 -> 140.0 MiB (+0%)",
            id="faster: better",
        ),
        pytest.param(
            {
                **ROW,
                "run_s": 1.0,
                "sim_s_per_wall_s": 3600.0,
                "peak_mib": 100.0,
                "commit": "def",
                "load": "load average 0.10 0.10 0.10",
            },
            "  1000 nodes, zone outage at 10 min vs last (def, load average 0.10 0.10 0.10): "
            "run 1.0 -> 2.0 s (+100%) worse; run CPU 1.9 -> 1.9 s (+0%); "
            "sim s/wall s 3600.0 -> 1800.0 (-50%) worse; setup 1.5 -> 1.5 s (+0%); "
            "peak 100.0 -> 140.0 MiB (+40%) worse",
            id="a regression shows as worse",
        ),
        pytest.param(
            {**ROW, "peak_mib": 139.9, "commit": "abc", "load": "load average 0.10 0.10 0.10"},
            "  1000 nodes, zone outage at 10 min vs last (abc, load average 0.10 0.10 0.10): "
            "run 2.0 -> 2.0 s (+0%); run CPU 1.9 -> 1.9 s (+0%); "
            "sim s/wall s 1800.0 -> 1800.0 (+0%); setup 1.5 -> 1.5 s (+0%); "
            "peak 139.9 -> 140.0 MiB (+0%)",
            id="a change under 1 % is neither better nor worse",
        ),
        pytest.param(
            {"run_s": 2.5},
            "  1000 nodes, zone outage at 10 min vs last (?, load average ?): "
            "run 2.5 -> 2.0 s (-20%) better",
            id="a row stored before a figure existed compares what it has",
        ),
    ],
)
def test_an_engine_row_is_compared_with_its_last_run(last, expected) -> None:
    assert history.compare(ROW, last) == expected


def test_the_last_run_of_each_row_is_stored_and_read_back(tmp_path) -> None:
    path = tmp_path / ".bench" / "last.json"
    assert history.load(path) == {}
    other = {**ROW, "nodes": 5000}
    history.store([ROW, other], "abc1234", "load average 1.00 1.00 1.00", path)
    history.store([{**ROW, "run_s": 9.0}], "def5678+", "load average 2.00 2.00 2.00", path)
    stored = history.load(path)
    assert stored[history.row_key(ROW)]["run_s"] == 9.0
    assert stored[history.row_key(ROW)]["commit"] == "def5678+"
    assert stored[history.row_key(other)]["commit"] == "abc1234"  # other rows stay
    path.write_text("{not json")
    assert history.load(path) == {}
