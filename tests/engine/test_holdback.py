"""engine/holdback.py: what a page that answers does not get while a question is open.
Run each built-in lesson to each of its pauses, as a room does, and look at what a held page
would get: no prediction, no zone rate where the checkpoint hides it, no event its expect
names (but the one it waited for)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.engine.holdback import Hold
from controller.engine.lesson import LessonRuntime
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state, pod_state, zone_states

from .conftest import REPO

TOUR = REPO / "controller" / "scenarios" / "25-lesson-node-failure-tour.yaml"
LESSONS = sorted((REPO / "controller" / "scenarios").glob("2?-lesson-*.yaml"))


def pauses(path: Path):
    """(checkpoint, the page's snapshot at its pause) for each checkpoint, in order."""
    s = load_scenario(path.read_text(encoding="utf-8"))
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    while (r := rt.advance(sim, s.duration_ms)) is not None:
        snap = {
            "nodes": [node_state(sim, n) for _k, n in sorted(sim.cluster.nodes.items())],
            "pods": [pod_state(sim, p) for _k, p in sorted(sim.cluster.pods.items())],
            "zones": zone_states(sim),
            "events": [{**e, "t": e["t"] / 1000} for e in sim.timeline.events],
        }
        yield r[0], r[1] / 1000, snap


def test_tour_question_1_b1_unknown_time_is_not_sent() -> None:
    cp, t, snap = next(pauses(TOUR))
    assert (cp.id, t) == ("heartbeats", 60)
    b1 = next(n for n in snap["nodes"] if n["name"] == "b-1")
    assert b1["unknownAt"] == 105  # what the engine knows: the answer
    held = Hold.of(cp, 60_000).snapshot(snap)
    hb1 = next(n for n in held["nodes"] if n["name"] == "b-1")
    assert hb1["unknownAt"] is None and hb1["held"] == ["unknownAt"]
    assert "105" not in repr([n.get("unknownAt") for n in held["nodes"]])
    # Nothing else of the row changes: its Ready, taints and last heartbeat stay.
    assert {k: v for k, v in hb1.items() if k not in ("unknownAt", "held")} == {
        k: v for k, v in b1.items() if k != "unknownAt"
    }


@pytest.mark.parametrize(
    ("checkpoint", "qps"),
    [
        pytest.param("partial", 0, id="PartialDisruption in a 5-node zone: rate 0 held"),
        pytest.param("full", 0.1, id="FullDisruption among Normal zones: rate 0.1 held"),
    ],
)
def test_tour_zone_questions_hold_the_rate_and_its_event(checkpoint: str, qps: float) -> None:
    cp, t, snap = next(x for x in pauses(TOUR) if x[0].id == checkpoint)
    zc = next(z for z in snap["zones"] if z["zone"] == "zone-c")
    assert zc["qps"] == qps
    rate_events = [e for e in snap["events"] if e["type"] == "ZoneRate" and e["t"] == t]
    assert rate_events, "the rate changed at the pause instant"
    held = Hold.of(cp, int(t * 1000)).snapshot(snap)
    hzc = next(z for z in held["zones"] if z["zone"] == "zone-c")
    assert [hzc[k] for k in ("qps", "tokens", "burst", "nextTokenAt")] == [None] * 4
    assert hzc["state"] == zc["state"]  # the state is what the question says
    assert not [e for e in held["events"] if e["type"] == "ZoneRate" and e["t"] >= t]
    # The rates set before the question stay (the page had them before it was asked).
    assert [e for e in held["events"] if e["type"] == "ZoneRate"] == [
        e for e in snap["events"] if e["type"] == "ZoneRate" and e["t"] < t
    ]
    # The event it waited for stays: the question names it.
    assert [e for e in held["events"] if e["type"] == "ZoneState" and e["t"] == t]


def test_a_hold_without_zone_rate_keeps_the_rate() -> None:
    h = Hold.make("x", ["predictions"])
    z = {"zone": "a", "state": "Normal", "qps": 0.1, "tokens": 1, "burst": 1, "nextTokenAt": 9}
    assert h.row("zone", z) == {**z, "nextTokenAt": None, "held": ["nextTokenAt"]}
    assert h.keeps({"type": "ZoneRate", "zone": "a", "qps": 0.1, "t": 3})
    assert Hold.make("x", []).row("node", {"unknownAt": 5}) == {"unknownAt": 5}


EVENTS = [
    pytest.param(
        {"type": "PodCreated", "pod": "d/api-2", "owner": "ReplicaSet/api", "t": 410},
        False,
        id="named by expect, in its window: held",
    ),
    pytest.param(
        {"type": "PodCreated", "pod": "d/api-1", "owner": "ReplicaSet/api", "t": 0},
        True,
        id="named by expect, before its from: kept",
    ),
    pytest.param(
        {"type": "PodDeleted", "pod": "d/db-2", "t": 410},
        True,
        id="the event the checkpoint waited for: kept",
    ),
    pytest.param(
        {"type": "PodCreated", "pod": "d/db-2", "owner": "StatefulSet/db", "t": 410},
        True,
        id="named only by an absent expectation: kept",
    ),
    pytest.param(
        {"type": "ZoneRate", "zone": "c", "qps": 0.1, "t": 1},
        False,
        id="ZoneRate with zoneRate hidden",
    ),
]


@pytest.mark.parametrize(("event", "kept"), EVENTS)
def test_events_a_held_page_gets(event: dict[str, Any], kept: bool) -> None:
    h = Hold.make(
        "q",
        ["predictions", "zoneRate"],
        [
            {"type": "PodCreated", "owner": "ReplicaSet/api", "from": 1, "at": 410},
            {"type": "PodCreated", "pod": "d/db-2", "absent": True},
            {"type": "PodDeleted", "pod": "d/db-2", "at": 410},
        ],
        {"type": "PodDeleted", "pod": "d/db-2"},
    )
    assert h.keeps(event) is kept
    assert Hold.from_dict(h.to_dict()) == h


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_no_held_page_gets_a_prediction_or_an_expected_event_of_its_question(path: Path) -> None:
    from controller.engine.expect import matches

    for cp, t, snap in pauses(path):
        held = Hold.of(cp, int(t * 1000)).snapshot(snap)
        assert all(n["unknownAt"] is None for n in held["nodes"]), cp.id
        assert all(p["taintEvictionAt"] is None for p in held["pods"]), cp.id
        # The events of the pause instant that an expect item names (the answer happening
        # as the question is asked) are not sent; the one the checkpoint waited for is.
        answers = [
            e
            for e in snap["events"]
            if e["t"] == t
            and any(not x.get("absent") and matches(x, e) for x in cp.expect)
            and not (cp.when_event and matches(cp.when_event, e))
        ]
        assert not [e for e in answers if e in held["events"]], cp.id
        if cp.when_event:
            assert any(matches(cp.when_event, e) for e in held["events"]), cp.id
        if "zoneRate" in cp.hide:
            assert not [e for e in held["events"] if e["type"] == "ZoneRate" and e["t"] >= t]
        if "zoneRate" in cp.hide:
            assert all(z["qps"] is None for z in held["zones"]), cp.id


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_compiled_out_runs_the_same_timeline_without_its_answers(path: Path) -> None:
    import yaml

    from controller.engine.holdback import without_lesson

    text = path.read_text(encoding="utf-8")
    s = load_scenario(text)
    out = yaml.safe_dump(without_lesson(yaml.safe_load(text), s.lesson), sort_keys=False)
    for cp in s.lesson.checkpoints:
        assert cp.why not in out and cp.question not in out
    assert "lesson:" not in out and "expect:" not in out
    plain = load_scenario(out)
    assert plain.lesson is None
    a, b = Simulation(s), Simulation(plain)
    a.run(s.duration_ms)
    b.run(plain.duration_ms)
    assert a.timeline.events == b.timeline.events


def test_a_lesson_compiled_out_until_now_leaves_out_the_faults_still_to_come() -> None:
    """A download during the tour's first question (60 s): b-1's StopKubelet (60 s) is in it;
    the 430 s partitions and the 540 s zone outage (what later steps do) are not, and the
    timeline to 60 s is the lesson's."""
    import yaml

    from controller.engine.holdback import without_lesson

    text = (REPO / "controller" / "scenarios" / "25-lesson-node-failure-tour.yaml").read_text()
    s = load_scenario(text)
    root = without_lesson(yaml.safe_load(text), s.lesson, until_ms=60_000)
    assert [(f["at"], f["type"]) for f in root["spec"]["faults"]] == [("60000ms", "StopKubelet")]
    out = yaml.safe_dump(root, sort_keys=False)
    assert "PartitionNode" not in out and "ZoneOutage" not in out
    a, b = Simulation(s), Simulation(load_scenario(out))
    a.run(60_000)
    b.run(60_000)
    assert a.timeline.events == b.timeline.events
    # Before any step's fault: no fault list at all.
    assert "faults" not in without_lesson(yaml.safe_load(text), s.lesson, until_ms=0)["spec"]
