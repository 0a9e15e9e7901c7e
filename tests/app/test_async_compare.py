"""Comparisons built as rooms are (issue #14, "Fast big rooms"): each side by the room form's
rule (small: in the request; big: by a worker); the first side built waits, not ticked, for
the other; both go live together on one clock; a side that fails fails the comparison."""

from __future__ import annotations

import pytest

from controller.bench.build import big_room_text
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.models import Comparison, EngineSnapshot, ObjectView, Room
from controller.rooms import build, compare, controls, reading, tick

from .conftest import Worker
from .test_compare import FAST, SCENARIO
from .test_rooms import wait_for

# 30 nodes, 600 pods: over build.INLINE_MAX_OBJECTS on each side.
BIG = big_room_text(30, 600)


def _sides() -> list:
    return [("default", {}), ("30 s", FAST)]


def _built_by_a_worker(left: Room, right: Room, tmp_path, snapshots: bool = False) -> None:
    """A real Celery worker builds the two rooms until both are live (and, with
    ``snapshots``, each has its first engine snapshot); on a timeout the rooms' build states
    and the worker's log are the failure's message."""
    from django.db import connection

    worker = Worker(connection.settings_dict["NAME"], tmp_path / "worker.log", heavy=True)
    worker.start()
    try:
        wait_for(
            lambda: Room.objects.filter(pk__in=[left.pk, right.pk], build_state="live").count()
            == 2,
            120,
            "both rooms to be live",
        )
        for room in (left, right) if snapshots else ():
            wait_for(lambda r=room: EngineSnapshot.objects.filter(room=r).exists(), 30, "snaps")
    except AssertionError:
        states = list(Room.objects.values_list("build_state", "build_progress", "build_error"))
        log = worker.log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"{states}\n{log}") from None
    finally:
        worker.kill()


def _both_sides_live(client, c: Comparison, left: Room, right: Room) -> None:
    """Each side's timeline is the engine's run of its stored scenario, its 600 pods are
    stored, the right side has its 30 s toleration, and the page shows the comparison."""
    for room in (left, right):
        sim = Simulation(load_scenario(room.scenario_yaml))
        sim.run(room.sim_ms)
        assert reading.room_timeline(room) == [dict(e) for e in sim.timeline.events]
        assert ObjectView.objects.filter(room=room, kind="pod").count() == 600
    api = load_scenario(right.scenario_yaml).config.api_server
    assert api.default_unreachable_toleration_seconds == 30
    page = client.get(f"/compare/{c.slug}/?token={left.operator_token}").content.decode()
    assert 'id="compare"' in page and 'id="compare-building"' not in page


def test_a_big_comparison_returns_at_once_and_both_rooms_go_live_together(
    client, transactional_db, redis_server, tmp_path
) -> None:
    c = compare.comparison_create("", BIG, _sides(), None, 10.0)
    left, right = c.left, c.right
    # "At once": nothing of either room was built in the call (no timing assertion: the
    # house measures speed with manage.py bench, never in tests).
    for room in (left, right):
        assert (room.build_state, room.build_progress) == ("building", "queued")
        assert ObjectView.objects.filter(room=room).count() == 0
    assert left.operator_token == right.operator_token
    page = client.get(f"/compare/{c.slug}/?token={left.operator_token}").content.decode()
    assert 'id="compare-building"' in page and 'id="compare"' not in page
    assert page.count('<span class="build-progress">queued</span>') == 2

    _built_by_a_worker(left, right, tmp_path, snapshots=True)
    left, right = Room.objects.get(pk=left.pk), Room.objects.get(pk=right.pk)
    # One clock: both anchored at the same wall instant, at simulated 0.
    assert left.wall_anchor == right.wall_anchor
    assert (left.sim_anchor_ms, right.sim_anchor_ms) == (0, 0)
    assert left.operator_token == right.operator_token
    # Each side's timeline is the engine's, of its own stored scenario (with its changes).
    _both_sides_live(client, c, left, right)


def test_the_first_side_built_waits_for_the_other(db, redis_server, monkeypatch) -> None:
    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    c = compare.comparison_create("", SCENARIO, _sides(), None, 10.0, inline_max=0)
    left, right = c.left, c.right
    assert (left.build_state, right.build_state) == ("building", "building")
    build.room_build(right.pk)
    right = Room.objects.get(pk=right.pk)
    assert (right.build_state, right.build_progress) == ("building", build.WAITING)
    assert ObjectView.objects.filter(room=right).exists()  # built and stored
    assert tick.room_advance(right.pk) is None  # not ticked alone
    assert build.requeue_lost_builds() == [left.pk]  # the waiting room is not lost
    build.room_build(right.pk)  # a duplicate task: nothing changes
    assert Room.objects.get(pk=right.pk).build_progress == build.WAITING
    build.room_build(left.pk)
    left, right = Room.objects.get(pk=left.pk), Room.objects.get(pk=right.pk)
    assert (left.build_state, right.build_state) == ("live", "live")
    assert (left.build_progress, right.build_progress) == ("", "")
    assert left.wall_anchor == right.wall_anchor
    # Then they run as a comparison built in the request does: deleted 300 s vs 30 s later.
    controls.room_control(left.pk, "pause", None, "op")
    controls.room_control(left.pk, "step", 500, "op")
    for room in (left, right):
        tick.room_advance(room.pk)
    deleted = {
        r.pk: [e.t_ms for e in r.events.filter(type="PodDeleted").order_by("idx")]
        for r in (left, right)
    }
    assert deleted[left.pk] and deleted[right.pk]
    assert deleted[left.pk][0] - deleted[right.pk][0] == 270_000


@pytest.mark.parametrize("broken", ["left", "right"])
def test_a_side_that_fails_fails_the_comparison(db, redis_server, monkeypatch, broken) -> None:
    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    c = compare.comparison_create("", SCENARIO, _sides(), None, 10.0, inline_max=0)
    good, bad = (c.right, c.left) if broken == "left" else (c.left, c.right)
    build.room_build(good.pk)  # waits for the other

    class Broken(build.Simulation):
        def run(self, until_ms: int) -> None:
            raise RuntimeError("the engine broke at t=0")

    monkeypatch.setattr(build, "Simulation", Broken)
    build.room_build(bad.pk)
    good, bad = Room.objects.get(pk=good.pk), Room.objects.get(pk=bad.pk)
    assert (bad.build_state, bad.build_error) == ("failed", "RuntimeError: the engine broke at t=0")
    assert (good.build_state, good.build_error) == (
        "failed",
        "the other room of the comparison could not be built: "
        "RuntimeError: the engine broke at t=0",
    )
    assert tick.room_advance(good.pk) is None


def test_a_side_built_after_the_other_failed_fails_too(db, redis_server, monkeypatch) -> None:
    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    c = compare.comparison_create("", SCENARIO, _sides(), None, 10.0, inline_max=0)
    # The left side failed while the right one was being built (another worker).
    Room.objects.filter(pk=c.left.pk).update(build_state="failed", build_error="boom")
    sim = Simulation(load_scenario(c.right.scenario_yaml))
    monkeypatch.setattr(build, "Simulation", lambda scenario: sim)
    build._build(Room.objects.get(pk=c.right.pk), load_scenario(c.right.scenario_yaml))
    right = Room.objects.get(pk=c.right.pk)
    assert (right.build_state, right.build_error) == (
        "failed",
        "the other room of the comparison could not be built: boom",
    )
    assert ObjectView.objects.filter(room=right).count() == 0  # nothing stored


def test_a_small_comparison_is_live_when_it_returns(db) -> None:
    c = compare.comparison_create("", SCENARIO, _sides(), None, 10.0)
    c = Comparison.objects.get(pk=c.pk)
    assert (c.left.build_state, c.right.build_state) == ("live", "live")
    assert c.left.wall_anchor == c.right.wall_anchor


def test_a_json_scenario_gets_its_changes_as_json() -> None:
    """A big generated scenario is JSON: its sides are read and written as JSON (the fast
    path of load_scenario), the same scenario as written through YAML."""
    import json

    import yaml

    text = compare.with_changes(BIG, FAST, "right")
    assert text.startswith("{") and "\n" not in text
    as_yaml = compare.with_changes(yaml.safe_dump(json.loads(BIG)), FAST, "right")
    assert json.loads(text) == yaml.safe_load(as_yaml)
    api = load_scenario(text).config.api_server
    assert api.default_unreachable_toleration_seconds == 30
    # A value JSON cannot hold (a date) is written as YAML instead.
    dated = compare.with_changes(
        BIG, {"featureGates": {"Since": yaml.safe_load("2020-01-01")}}, "x"
    )
    assert not dated.startswith("{") and "Since: 2020-01-01" in dated


def test_a_long_scenario_is_not_read_in_the_request(
    db, redis_server, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """Over compare.INLINE_MAX_CHARS the request stores the text and each side's changes and
    returns; reading, changing and validating it is the workers' (a 5,000-node scenario took
    the request 1.2 s as JSON, ten times that as YAML)."""
    from controller.models import PendingImport

    queued: list[int] = []
    monkeypatch.setattr(build, "queue_build", queued.append)
    text = big_room_text(30, 600) + " " * compare.INLINE_MAX_CHARS  # JSON: spaces are allowed
    with django_capture_on_commit_callbacks(execute=True):
        c = compare.comparison_create("", text, _sides(), None, 10.0)
    assert sorted(queued) == sorted([c.left.pk, c.right.pk])
    for room, (label, changes) in zip((c.left, c.right), _sides(), strict=True):
        assert (room.build_state, room.build_progress, room.scenario_yaml) == (
            "building",
            "queued",
            "",
        )
        assert room.name == f"comparison ({label})"
        assert PendingImport.objects.get(room=room).options["compare"]["changes"] == changes
    assert c.left.operator_token == c.right.operator_token


def test_a_long_scenario_compared_returns_at_once_and_the_workers_make_both_rooms_live(
    client, transactional_db, redis_server, tmp_path
) -> None:
    from controller.models import PendingImport

    c = compare.comparison_create("", BIG, _sides(), None, 10.0, inline_max_chars=0)
    left, right = c.left, c.right
    assert (left.scenario_yaml, right.scenario_yaml) == ("", "")  # not read in the request
    page = client.get(f"/compare/{c.slug}/?token={left.operator_token}").content.decode()
    assert 'id="compare-building"' in page
    assert client.get(f"/rooms/{left.slug}/export.yaml").status_code == 409

    _built_by_a_worker(left, right, tmp_path)
    left, right = Room.objects.get(pk=left.pk), Room.objects.get(pk=right.pk)
    name = load_scenario(BIG).name
    assert (left.name, right.name) == (f"{name} (default)", f"{name} (30 s)")
    assert Comparison.objects.get(pk=c.pk).name == name
    assert left.wall_anchor == right.wall_anchor and left.operator_token == right.operator_token
    assert not PendingImport.objects.filter(room__in=[left, right]).exists()
    # Each side is the scenario with its own changes, as one read in the request would be.
    for room, (_label, changes) in zip((left, right), _sides(), strict=True):
        assert room.scenario_yaml == compare.with_changes(BIG, changes, "x")
    _both_sides_live(client, c, left, right)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        pytest.param(
            {"apiServer": {"defaultUnreachableTolerationSeconds": "soon"}},
            "spec.apiServer.defaultUnreachableTolerationSeconds",
            id="a bad value in the side's changes",
        ),
        pytest.param(
            {"kubernetesVersion": "1.10"}, "kubernetesVersion", id="a release not simulated"
        ),
    ],
)
def test_a_long_scenarios_bad_side_fails_both_rooms_naming_the_side_and_the_field(
    db, redis_server, monkeypatch, client, changes, why
) -> None:
    from controller.models import PendingImport

    monkeypatch.setattr(build, "queue_build", lambda room_id: None)
    sides = [("default", {}), ("broken", changes)]
    c = compare.comparison_create("", BIG, sides, None, 10.0, inline_max_chars=0)
    build.room_build(c.left.pk)  # built; waits for the other
    assert Room.objects.get(pk=c.left.pk).build_progress == build.WAITING
    build.room_build(c.right.pk)
    left, right = Room.objects.get(pk=c.left.pk), Room.objects.get(pk=c.right.pk)
    assert right.build_state == "failed" and right.build_error.startswith("right: ")
    assert why in right.build_error
    assert (left.build_state, left.build_error) == (
        "failed",
        f"the other room of the comparison could not be built: {right.build_error}",
    )
    assert right.scenario_yaml == "" and not ObjectView.objects.filter(room=right).exists()
    assert not PendingImport.objects.filter(room__in=[left, right]).exists()
    page = client.get(f"/compare/{c.slug}/").content.decode()
    assert right.build_error.split(": ", 1)[1][:40] in page
