"""Compare: two rooms of one scenario with different settings, one clock."""

from __future__ import annotations

import pytest

from controller.engine.scenario import ScenarioError, load_scenario
from controller.models import Comparison, Room
from controller.rooms import compare, controls, errors, tick
from tests.app.scenarios import pod, scenario

SCENARIO = scenario(
    "cmp",
    2,
    (pod(),),
    faults=("{at: 62s, type: StopKubelet, node: n-1}",),
    comment="Watch for: one node stops.",
)
FAST = {"apiServer": {"defaultUnreachableTolerationSeconds": 30}}


def make(right=FAST, left=None) -> Comparison:
    return compare.comparison_create(
        "", SCENARIO, [("default", left or {}), ("30 s", right)], None, 10.0
    )


def test_two_rooms_one_token_and_their_own_settings(db) -> None:
    c = make()
    assert c.left.operator_token == c.right.operator_token
    assert c.left.wall_anchor == c.right.wall_anchor
    right = load_scenario(c.right.scenario_yaml).config.api_server
    left = load_scenario(c.left.scenario_yaml).config.api_server
    assert (
        left.default_unreachable_toleration_seconds,
        right.default_unreachable_toleration_seconds,
    ) == (300, 30)


def test_a_control_on_one_side_moves_both_at_one_instant(db) -> None:
    c = make()
    controls.room_control(c.right.pk, "pause", None, "op")
    controls.room_control(c.left.pk, "step", 500, "op")
    left, right = Room.objects.get(pk=c.left.pk), Room.objects.get(pk=c.right.pk)
    assert left.paused and right.paused
    assert left.sim_anchor_ms == right.sim_anchor_ms
    for room in (left, right):
        tick.room_advance(room.pk)
    times = {}
    for room in (left, right):
        times[room.pk] = [e.t_ms for e in room.events.filter(type="PodDeleted").order_by("idx")]
    # Unknown at 105 s, unreachable:NoExecute at 110 s: deleted 300 s vs 30 s later.
    assert times == {c.left.pk: [410_000], c.right.pk: [140_000]}


def test_a_rewind_on_one_side_rewinds_both(db) -> None:
    c = make()
    controls.room_control(c.left.pk, "pause", None, "op")
    controls.room_control(c.left.pk, "step", 200, "op")
    for pk in (c.left.pk, c.right.pk):
        tick.room_advance(pk)
    controls.room_rewind(c.right.pk, 100, "op")
    assert {Room.objects.get(pk=pk).sim_ms for pk in (c.left.pk, c.right.pk)} == {100_000}


@pytest.mark.parametrize(
    ("right", "message"),
    [
        pytest.param(
            {"nodes": []}, "right.nodes: only kubernetesVersion", id="only settings may differ"
        ),
        pytest.param(
            {"apiServer": {"defaultUnreachableTolerationSeconds": "soon"}},
            "right: spec.apiServer.defaultUnreachableTolerationSeconds",
            id="a bad value names the side and the field",
        ),
        pytest.param(
            {"kubernetesVersion": "1.25"}, "right.kubernetesVersion", id="an unsimulated release"
        ),
    ],
)
def test_bad_changes_name_the_side_and_create_nothing(db, right, message) -> None:
    before = (Room.objects.count(), Comparison.objects.count())
    with pytest.raises((errors.ActionError, ScenarioError)) as exc:
        make(right=right)
    assert message in str(exc.value)
    assert (Room.objects.count(), Comparison.objects.count()) == before


def test_the_compare_form_makes_a_comparison_and_its_page_shows_both(client, db) -> None:
    response = client.post(
        "/",
        {
            "cmp-scenario": "01-single-node-failure",
            "cmp-left_label": "default",
            "cmp-left_changes": "",
            "cmp-right_label": "30 s",
            "cmp-right_changes": "apiServer: {defaultUnreachableTolerationSeconds: 30}",
            "cmp-speed": "10",
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    c = Comparison.objects.latest("id")
    page = client.get(response["Location"]).content.decode()
    assert c.left.slug in page and c.right.slug in page and "Merged timeline" in page


# -- issue #37: kube-scheduler's clientConnection may differ ---------------------------------------
def test_the_schedulers_client_may_differ_field_by_field(db) -> None:
    """Its changes merge into the scenario's clientConnection: a side that changes the QPS
    keeps the scenario's burst."""
    text = scenario(
        "cmp-sched", 2, (pod(),), spec="  scheduler: {clientConnection: {qps: 10, burst: 5}}\n"
    )
    c = compare.comparison_create(
        "",
        text,
        [("as written", {}), ("qps 200", {"scheduler": {"clientConnection": {"qps": 200}}})],
        None,
        10.0,
    )
    left = load_scenario(c.left.scenario_yaml).config.scheduler
    right = load_scenario(c.right.scenario_yaml).config.scheduler
    assert (left.client_qps, left.client_burst) == (10, 5)
    assert (right.client_qps, right.client_burst) == (200, 5)


def test_a_bad_scheduler_change_names_the_side_and_the_field(db) -> None:
    before = (Room.objects.count(), Comparison.objects.count())
    with pytest.raises((errors.ActionError, ScenarioError)) as exc:
        make(right={"scheduler": {"clientConnection": {"burst": -1}}})
    assert "right: spec.scheduler.clientConnection.burst" in str(exc.value)
    assert "must be non-negative" in str(exc.value)
    assert (Room.objects.count(), Comparison.objects.count()) == before


def test_the_compare_form_takes_the_scheduler_section(client, db) -> None:
    response = client.post(
        "/",
        {
            "cmp-scenario": "01-single-node-failure",
            "cmp-left_label": "default",
            "cmp-left_changes": "",
            "cmp-right_label": "scheduler qps 200",
            "cmp-right_changes": "scheduler: {clientConnection: {qps: 200, burst: 300}}",
            "cmp-speed": "10",
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    c = Comparison.objects.latest("id")
    right = load_scenario(c.right.scenario_yaml).config.scheduler
    assert (right.client_qps, right.client_burst) == (200, 300)
