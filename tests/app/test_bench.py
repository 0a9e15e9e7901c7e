"""The ``manage.py bench`` rows on tiny sizes with real processes: they run end to end and
their figures add up (nothing about speed is asserted: the machine is shared)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from controller import affinity
from controller.bench import live, rooms, stack, stats, viewers
from controller.locks import redis_client
from controller.models import Room
from controller.rooms import broadcast


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
    r = live.live_bench(nodes=30, ticks=12, pods_per_node=3)
    assert (r["nodes"], r["pods"], r["ticks"]) == (30, 90, 12)
    assert r["resync_ticks"] >= 1
    assert r["max_raw_bytes"] > broadcast.max_bytes() >= r["max_bytes"]
    assert r["mean_raw_bytes"] >= r["mean_bytes"]
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
