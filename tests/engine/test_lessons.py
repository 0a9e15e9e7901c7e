"""spec.lesson (controller/engine/lesson.py): parsing with field paths, step faults and
checkpoint expectations compiled into the scenario, run-until-checkpoint stop times, and every
built-in lesson passing ``simulate --check``."""

from __future__ import annotations

import copy
import io
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.engine.cli import run
from controller.engine.lesson import LessonRuntime, checkpoint_times, parse_lesson
from controller.engine.scenario import ScenarioError, load_scenario, parse_scenario
from controller.engine.simulation import Simulation

from .conftest import REPO

BUILTIN = REPO / "controller" / "scenarios"
LESSONS = sorted(BUILTIN.glob("2?-lesson-*.yaml"))

BASE = textwrap.dedent(
    """
    apiVersion: playground/v1alpha1
    kind: Scenario
    metadata: {name: t}
    spec:
      kubernetesVersion: "1.34"
      duration: 600s
      nodes:
        - generate: {count: 3, namePrefix: a-, zone: zone-a}
      objects:
        - apiVersion: v1
          kind: Pod
          metadata: {name: web-1, namespace: default}
          spec:
            nodeName: a-2
            containers: [{name: app}]
      lesson:
        title: Heartbeats
        summary: What a heartbeat is for.
        steps:
          - id: healthy
            title: Healthy
            text: Every kubelet renews its Lease.
            checkpoint:
              when: {at: 30s}
              question: Is a-2 Ready?
              kind: choice
              choices: ["yes", "no"]
              answer: 0
              expect: [{type: NodeReady, node: a-2, status: Unknown, absent: true, until: 30}]
              why: Its kubelet renews the Lease.
          - id: stop
            title: Stop a-2
            faults: [{type: StopKubelet, node: a-2}]
            focus: {nodes: [a-2], zones: [zone-a]}
            checkpoint:
              when: {event: {type: NodeReady, node: a-2, status: Unknown}}
              question: When does a-2 go Unknown?
              kind: time
              answer: 75
              tolerance: 5
              expect: [{type: NodeReady, node: a-2, status: Unknown, at: 75}]
              why: nodeMonitorGracePeriod 50 s after the last renewal the monitor pass saw.
          - id: taint
            title: The NoExecute taint
            checkpoint:
              when: {event: {type: TaintAdded, node: a-2, effect: NoExecute}}
              question: When is web-1 deleted?
              kind: time
              answer: 380
              expect: [{type: PodDeleted, pod: default/web-1, at: 380}]
              why: tolerationSeconds 300 after the taint at 80 s.
    """
)


def base() -> dict[str, Any]:
    return yaml.safe_load(BASE)


def load(doc: dict[str, Any]):
    return parse_scenario(copy.deepcopy(doc))


def test_parse_good_lesson() -> None:
    s = load(base())
    lesson = s.lesson
    assert lesson is not None
    assert [st.id for st in lesson.steps] == ["healthy", "stop", "taint"]
    # healthy begins at 0; stop at the 30 s pause; taint when a-2 goes Unknown (at run time).
    assert [st.at_ms for st in lesson.steps] == [0, 30_000, None]
    cp = lesson.steps[1].checkpoint
    assert cp is not None and cp.id == "stop" and cp.kind == "time" and cp.answer == 75
    assert cp.when_event == {"type": "NodeReady", "node": "a-2", "status": "Unknown"}
    assert cp.is_right(79) and cp.is_right(70) and not cp.is_right(81)
    assert lesson.steps[0].checkpoint.is_right(0) and not lesson.steps[0].checkpoint.is_right(1)
    assert lesson.steps[1].focus == {"nodes": ["a-2"], "zones": ["zone-a"]}
    d = lesson.to_dict(reveal=False)
    assert "answer" not in d["steps"][1]["checkpoint"]
    assert "why" not in d["steps"][1]["checkpoint"]
    assert d["steps"][1]["at"] == 30 and d["steps"][2]["at"] is None
    full = lesson.to_dict()
    assert full["steps"][0]["checkpoint"]["answer"] == 0
    assert full["steps"][0]["checkpoint"]["choices"] == ["yes", "no"]


def test_no_lesson_is_none() -> None:
    doc = base()
    del doc["spec"]["lesson"]
    s = load(doc)
    assert s.lesson is None
    assert parse_lesson(doc["spec"]) is None
    assert s.expect_paths == []


def test_step_faults_and_checkpoint_expectations_are_compiled() -> None:
    doc = base()
    doc["spec"]["faults"] = [{"at": "30s", "type": "Cordon", "node": "a-1"}]
    doc["spec"]["expect"] = [{"type": "PodDeleted", "absent": True, "until": 100}]
    s = load(doc)
    # The file's own fault first at the same instant, then the step's (at = step begin).
    assert [(f.at_ms, f.type, f.args, f.path) for f in s.faults] == [
        (30_000, "Cordon", {"node": "a-1"}, "spec.faults[0]"),
        (30_000, "StopKubelet", {"node": "a-2"}, "spec.lesson.steps[1].faults[0]"),
    ]
    assert s.expect_paths == [
        "spec.expect[0]",
        "spec.lesson.steps[0].checkpoint.expect[0]",
        "spec.lesson.steps[1].checkpoint.expect[0]",
        "spec.lesson.steps[2].checkpoint.expect[0]",
    ]
    assert s.expect[3] == {"type": "PodDeleted", "pod": "default/web-1", "at": 380}


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set (or with value DELETE, remove) ``steps.1.checkpoint.answer`` under spec.lesson."""
    node: Any = doc["spec"]
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if value is DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


DELETE = object()
CP1 = "lesson.steps.1.checkpoint"

BAD = [
    ("lesson", [], "spec.lesson: must be a mapping, got a list"),
    ("lesson.colour", "red", "spec.lesson.colour: unknown field"),
    ("lesson.title", DELETE, "spec.lesson.title: must be a non-empty string, got nothing"),
    ("lesson.steps", [], "spec.lesson.steps: a lesson needs at least one step"),
    ("lesson.steps.1.id", "Stop", "spec.lesson.steps[1].id: must be lower case letters"),
    ("lesson.steps.1.id", "healthy", 'spec.lesson.steps[1].id: duplicate step id "healthy"'),
    ("lesson.steps.1.title", "  ", "spec.lesson.steps[1].title: must not be blank"),
    ("lesson.steps.1.at", "10s", "spec.lesson.steps[1].at: must not go back in time: 10s is"),
    ("lesson.steps.1.at", "ten", "spec.lesson.steps[1].at:"),
    (
        "lesson.steps.1.faults.0",
        {"type": "StopKubelet", "node": "a-9"},
        'spec.lesson.steps[1].faults[0].node: unknown node "a-9"',
    ),
    (
        "lesson.steps.1.faults.0",
        {"type": "StopKubelet", "node": "a-2", "at": 5},
        "spec.lesson.steps[1].faults[0].at: a step's faults happen when the step begins",
    ),
    (
        "lesson.steps.1.faults.0",
        {"type": "Explode", "node": "a-2"},
        'spec.lesson.steps[1].faults[0].type: unknown fault type "Explode"',
    ),
    (
        "lesson.steps.2.faults",
        [{"type": "StartKubelet", "node": "a-2"}],
        "spec.lesson.steps[2].at: is required for a step with faults after a checkpoint",
    ),
    (
        "lesson.steps.1.focus.nodes",
        ["a-7"],
        'spec.lesson.steps[1].focus.nodes[0]: unknown node "a-7"',
    ),
    ("lesson.steps.1.focus.zones", ["zone-b"], "spec.lesson.steps[1].focus.zones[0]: unknown zone"),
    ("lesson.steps.1.focus.pods", [], "spec.lesson.steps[1].focus.pods: unknown field"),
    (
        f"{CP1}.when",
        {},
        f"spec.{CP1.replace('.1.', '[1].')}.when: needs exactly one of at: or event:",
    ),
    (
        f"{CP1}.when",
        {"at": 10},
        "spec.lesson.steps[1].checkpoint.when.at: 10s is before the step begins (30s)",
    ),
    (
        f"{CP1}.when",
        {"event": {"type": "NodeGone"}},
        "spec.lesson.steps[1].checkpoint.when.event.type: unknown event type 'NodeGone'",
    ),
    (
        f"{CP1}.when",
        {"event": {"type": "NodeReady", "colour": "x"}},
        "spec.lesson.steps[1].checkpoint.when.event.colour: NodeReady events have no field",
    ),
    (
        f"{CP1}.when",
        {"event": {"type": "NodeReady", "at": 5}},
        "spec.lesson.steps[1].checkpoint.when.event.at: the first matching event",
    ),
    (
        f"{CP1}.kind",
        "essay",
        'spec.lesson.steps[1].checkpoint.kind: must be choice or time, got "essay"',
    ),
    (f"{CP1}.answer", DELETE, "spec.lesson.steps[1].checkpoint.answer: is required"),
    (f"{CP1}.answer", "75", 'spec.lesson.steps[1].checkpoint.answer: must be a number, got "75"'),
    (f"{CP1}.answer", -1, "spec.lesson.steps[1].checkpoint.answer: must be >= 0, got -1"),
    (f"{CP1}.tolerance", -1, "spec.lesson.steps[1].checkpoint.tolerance: must be >= 0"),
    (
        f"{CP1}.choices",
        ["a", "b"],
        "spec.lesson.steps[1].checkpoint.choices: a kind: time checkpoint",
    ),
    (f"{CP1}.question", DELETE, "spec.lesson.steps[1].checkpoint.question: must be a non-empty"),
    (f"{CP1}.why", DELETE, "spec.lesson.steps[1].checkpoint.why: must be a non-empty string"),
    (f"{CP1}.expect", [], "spec.lesson.steps[1].checkpoint.expect: needs at least one expectation"),
    (
        f"{CP1}.expect",
        [{"type": "PodDeleted", "zone": "a"}],
        "spec.lesson.steps[1].checkpoint.expect[0].zone: PodDeleted events have no field 'zone'",
    ),
    (f"{CP1}.hint", "x", "spec.lesson.steps[1].checkpoint.hint: unknown field"),
    (
        "lesson.steps.0.checkpoint.answer",
        2,
        "spec.lesson.steps[0].checkpoint.answer: must be an index into choices (0..1), got 2",
    ),
    (
        "lesson.steps.0.checkpoint.answer",
        True,
        "spec.lesson.steps[0].checkpoint.answer: must be an index into choices (0..1), got True",
    ),
    (
        "lesson.steps.0.checkpoint.choices",
        ["only"],
        "spec.lesson.steps[0].checkpoint.choices: a choice question needs at least 2 choices",
    ),
    (
        "lesson.steps.0.checkpoint.choices",
        ["x", "x"],
        "spec.lesson.steps[0].checkpoint.choices: choices must differ",
    ),
    (
        "lesson.steps.0.checkpoint.tolerance",
        3,
        "spec.lesson.steps[0].checkpoint.tolerance: only a kind: time checkpoint",
    ),
    (
        "lesson.steps.0.checkpoint.wrong",
        [1],
        "spec.lesson.steps[0].checkpoint.wrong: only a kind: time checkpoint lists wrong answers",
    ),
    (f"{CP1}.wrong", ["soon"], "spec.lesson.steps[1].checkpoint.wrong[0]: "),
    (f"{CP1}.wrong", 70, "spec.lesson.steps[1].checkpoint.wrong: must be a list"),
    (
        f"{CP1}.hide",
        ["answers"],
        "spec.lesson.steps[1].checkpoint.hide[0]: must be one of predictions, zoneRate, "
        'got "answers"',
    ),
    # A step's kubectl commands: a list of one-line kubectl commands, bounded.
    ("lesson.steps.1.kubectl", "kubectl get nodes", "spec.lesson.steps[1].kubectl: must be a list"),
    ("lesson.steps.1.kubectl", [7], "spec.lesson.steps[1].kubectl[0]: must be a non-empty string"),
    (
        "lesson.steps.1.kubectl",
        ["kubectl get nodes", "rm -rf /"],
        'spec.lesson.steps[1].kubectl[1]: must be one line of printable ASCII that starts with "kubectl "',
    ),
    (
        "lesson.steps.1.kubectl",
        ["kubectl get nodes\nkubectl get pods"],
        "spec.lesson.steps[1].kubectl[0]: must be one line of printable ASCII",
    ),
    (
        "lesson.steps.1.kubectl",
        ["kubectl get nodes \u2014 all of them"],
        "spec.lesson.steps[1].kubectl[0]: must be one line of printable ASCII",
    ),
    ("lesson.steps.1.kubectl", ["kubectl"], "spec.lesson.steps[1].kubectl[0]: must be one line"),
    (
        "lesson.steps.1.kubectl",
        ["kubectl get " + "x" * 120],
        "spec.lesson.steps[1].kubectl[0]: at most 120 characters, got 132",
    ),
    (
        "lesson.steps.1.kubectl",
        [f"kubectl get node a-{i}" for i in range(7)],
        "spec.lesson.steps[1].kubectl: at most 6 commands per step, got 7",
    ),
    (
        "lesson.steps.1.kubectl",
        ["kubectl get nodes", " kubectl get nodes "],
        'spec.lesson.steps[1].kubectl[1]: duplicate command "kubectl get nodes"',
    ),
]


def test_a_step_lists_kubectl_commands_as_written() -> None:
    """``kubectl:`` on a step: kept in order (trimmed), in the page's definition too; a step
    without it has none."""
    doc = _set(
        base(), "lesson.steps.1.kubectl", ["kubectl get nodes -w", " kubectl describe node a-2"]
    )
    lesson = load(doc).lesson
    assert lesson.steps[1].kubectl == ["kubectl get nodes -w", "kubectl describe node a-2"]
    assert lesson.steps[0].kubectl == []
    assert lesson.to_dict(reveal=False)["steps"][1]["kubectl"] == lesson.steps[1].kubectl


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
def test_bad_lesson_is_refused_with_its_path(path: str, value: Any, message: str) -> None:
    doc = _set(base(), path, value)
    with pytest.raises(ScenarioError) as exc:
        load(doc)
    assert str(exc.value).startswith(message), str(exc.value)


def test_bad_lesson_from_yaml_text_names_the_path() -> None:
    text = BASE.replace("answer: 0\n", "answer: 7\n")
    with pytest.raises(ScenarioError, match=r"^spec\.lesson\.steps\[0\]\.checkpoint\.answer: "):
        load_scenario(text)


# -- running ---------------------------------------------------------------------------------
def test_run_until_stops_after_the_instant_of_the_stop_event() -> None:
    s = load(base())
    sim = Simulation(s)
    hits: list[int] = []

    def stop(ev: dict[str, Any]) -> bool:
        if ev["type"] == "NodeReady" and ev["node"] == "a-2" and ev["status"] == "Unknown":
            hits.append(ev["t"])
            return True
        return False

    assert sim.run_until(600_000, stop) == 75_000
    assert sim.now_ms == 75_000 and hits == [75_000]
    # The rest of instant 75 s ran too (NoSchedule taint and the pod's Ready=False).
    last = [(e["type"], e.get("node") or e.get("pod")) for e in sim.timeline.events[-3:]]
    assert ("PodReady", "default/web-1") in last
    assert all(e["t"] <= 75_000 for e in sim.timeline.events)
    # Nothing stops it: the target.
    assert sim.run_until(100_000, lambda ev: False) == 100_000
    assert sim.run_until(100_000) == 100_000


def test_run_until_in_pieces_gives_the_one_run_timeline() -> None:
    s = load(base())
    whole = Simulation(s)
    whole.run(600_000)
    pieces = Simulation(load(base()))
    stops = iter([lambda e: e["type"] == "Fault", lambda e: e["type"] == "TaintAdded"])
    ends = [
        pieces.run_until(600_000, next(stops)),
        pieces.run_until(600_000, lambda e: e["type"] == "PodDeleted"),
    ]
    ends.append(pieces.run_until(600_000, lambda e: False))
    assert ends == [30_000, 380_000, 600_000]
    assert pieces.timeline.events == whole.timeline.events


def test_lesson_runtime_pauses_at_each_checkpoint() -> None:
    s = load(base())
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    got = []
    while True:
        r = rt.advance(sim, 600_000)
        if r is None:
            break
        got.append((r[0].id, r[1], sim.now_ms))
    # The time checkpoint at 30 s; a-2 Unknown at 75 s (stopped at 30 s, grace 50 s);
    # the unreachable:NoExecute taint one monitor pass later, at 80 s.
    assert got == [("healthy", 30_000, 30_000), ("stop", 75_000, 75_000), ("taint", 80_000, 80_000)]
    assert sim.now_ms == 600_000
    assert rt.step_begin_ms(2) == 75_000
    whole = Simulation(load(base()))
    whole.run(600_000)
    assert sim.timeline.events == whole.timeline.events
    assert checkpoint_times(s.lesson, whole.timeline.events, 600_000) == {
        "healthy": 30_000,
        "stop": 75_000,
        "taint": 80_000,
    }


def test_lesson_runtime_same_instant_checkpoints() -> None:
    """The next checkpoint's event may come in the very instant the previous one paused."""
    doc = base()
    doc["spec"]["lesson"]["steps"][2]["checkpoint"]["when"] = {
        "event": {"type": "TaintAdded", "node": "a-2", "effect": "NoSchedule"}
    }
    s = load(doc)
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    assert [rt.advance(sim, 600_000)[1] for _ in range(3)] == [30_000, 75_000, 75_000]
    assert sim.now_ms == 75_000
    rt2 = LessonRuntime.from_dict(s.lesson, rt.to_dict())
    assert rt2.reached == rt.reached and rt2.pending is None


def test_check_reports_lesson_expectations_by_path(tmp_path: Path) -> None:
    doc = base()
    doc["spec"]["lesson"]["steps"][1]["checkpoint"]["expect"][0]["at"] = 85
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert run(str(f), None, "jsonl", None, True, out, err) == 1
    assert out.getvalue().splitlines() == [
        "FAIL spec.lesson.steps[1].checkpoint.expect[0]: type=NodeReady node=a-2 status=Unknown at=85",
        "     expected at 85, happened at 75",
        "t: 2 of 3 expectations hold",
        "t: lesson of 3 steps, 3 checkpoints, all reached",
    ]


def test_check_reports_a_checkpoint_never_reached(tmp_path: Path) -> None:
    doc = base()
    doc["spec"]["lesson"]["steps"][2]["checkpoint"]["when"] = {
        "event": {"type": "NodeReady", "node": "a-3", "status": "Unknown"}
    }
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert run(str(f), None, "jsonl", None, True, out, err) == 1
    assert "FAIL spec.lesson.steps[2].checkpoint.when: never reached in the run" in out.getvalue()


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_builtin_lesson_check_passes(path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run(str(path), None, "jsonl", None, True, out, err)
    assert code == 0, out.getvalue() + err.getvalue()
    s = load_scenario(path.read_text(encoding="utf-8"))
    assert s.lesson is not None and len(s.lesson.checkpoints) >= 2
    assert any(cp.kind == "time" for cp in s.lesson.checkpoints)


def test_nine_builtin_lessons() -> None:
    """The five topic lessons, the demo lesson (the tour a newcomer opens first), the
    upgrade lesson (a 1.32 control plane with 1.30 kubelets), the kubectl lesson and the
    --kube-api-qps lesson (issue #37)."""
    assert len(LESSONS) == 9, [p.name for p in LESSONS]


PAUSES = {
    # "unknown" asks what happens to web-1 before a-2 turns Unknown, "coming-back" when the
    # taints go before the kubelet is back (at the instant itself the answer, a not-Ready pod
    # or a node without its taints, would already be on every page).
    "20-lesson-heartbeats": {"healthy": 60, "silence": 62, "unknown": 62, "coming-back": 140},
    "21-lesson-taints-tolerations": {"pods": 10, "taints": 120, "web": 180, "daemonset": 420},
    # large-zone: the pass that finds 35 nodes late at 345 s waits 2.35 s for its requests'
    # tokens (--kube-api-qps 20) before handleDisruption sets PartialDisruption.
    "22-lesson-zones-rate-limits": {
        "one-node": 85,
        "partial": 145,
        "full": 245,
        "large-zone": 347.35,
    },
    "23-lesson-eviction-order": {"pressure": 42, "leak": 60, "guaranteed": 92, "recovery": 144},
    "24-lesson-statefulset-stuck": {"silence": 120, "stuck": 420, "rescue": 485},
    "25-lesson-node-failure-tour": {
        "heartbeats": 60,
        "taint": 105,
        "deployment": 110,  # asked at the NoExecute taint, before the replacement is made
        "statefulset": 410,
        "partial": 475,
        "full": 585,
    },
    "26-lesson-upgrade-surprises": {
        "mid-upgrade": 60,
        "silence": 62,
        "pressure": 150,
        "taint-eviction": 181,
    },
    # "describe" asks at the Ready=Unknown instant, before the next pass adds the NoExecute
    # taint; "events" at that taint, long before web-1's TaintManagerEviction.
    "27-lesson-kubectl-node-failure": {
        "connect": 60,
        "silence": 62,
        "describe": 115,
        "events": 120,
    },
    # Each question at its zone's first Ready=Unknown, while the pass that marks the zone's
    # 500 pods not ready has only begun (its last write is the answer).
    "28-lesson-api-qps": {"zone-a": 105, "zone-b": 405.1},
}


@pytest.mark.parametrize("stem", sorted(PAUSES))
def test_builtin_lesson_pauses_live_as_simulate_runs_it(stem: str) -> None:
    """A room run checkpoint by checkpoint pauses at these exact times and ends with the very
    timeline ``simulate`` prints."""
    text = (BUILTIN / f"{stem}.yaml").read_text(encoding="utf-8")
    s = load_scenario(text)
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    got = {}
    while (r := rt.advance(sim, s.duration_ms)) is not None:
        assert sim.now_ms == r[1]
        got[r[0].id] = r[1] / 1000
    assert got == PAUSES[stem]
    assert sim.now_ms == s.duration_ms
    whole = Simulation(load_scenario(text))
    whole.run(s.duration_ms)
    assert sim.timeline.events == whole.timeline.events
    times = checkpoint_times(s.lesson, whole.timeline.events, s.duration_ms)
    assert {k: v / 1000 for k, v in times.items()} == PAUSES[stem]


def test_advance_stops_at_the_target_before_a_checkpoint() -> None:
    s = load(base())
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    # A room ticks in small steps: nothing reached before 30 s, then the time checkpoint.
    assert rt.advance(sim, 20_000) is None and sim.now_ms == 20_000
    assert rt.advance(sim, 45_000)[1] == 30_000 and sim.now_ms == 30_000
    assert rt.pending.id == "stop"
    # The stop checkpoint waits for an event: ticks up to it return None.
    assert rt.advance(sim, 74_999) is None and sim.now_ms == 74_999
    cp, t = rt.advance(sim, 90_000)
    assert (cp.id, t, sim.now_ms) == ("stop", 75_000, 75_000)
    assert rt.step_begin_ms(2) == 75_000


def test_pause_reached_on_events_already_run() -> None:
    s = load(base())
    whole = Simulation(s)
    whole.run(600_000)
    rt = LessonRuntime(s.lesson)
    assert rt.pause_reached(whole.timeline.events) is None  # a time checkpoint needs now_ms
    assert rt.pause_reached((), now_ms=29_999) is None
    assert rt.pause_reached((), now_ms=30_000)[1] == 30_000
    assert rt.pause_reached(whole.timeline.events)[1] == 75_000
    assert rt.pause_reached(whole.timeline.events)[1] == 80_000
    assert rt.pause_reached(whole.timeline.events) is None and rt.pending is None


def test_defaults_step_ids_and_begins() -> None:
    doc = base()
    steps = doc["spec"]["lesson"]["steps"]
    for st in steps:
        del st["id"]
        st.pop("text", None)
    steps[0]["checkpoint"]["when"] = {"at": 40}
    steps.append({"title": "After", "at": "500s"})
    steps.append({"title": "Later"})
    lesson = load(doc).lesson
    assert [st.id for st in lesson.steps] == ["step-1", "step-2", "step-3", "step-4", "step-5"]
    assert [st.text for st in lesson.steps] == ["", "", "", "", ""]
    # step-2 begins where step-1's checkpoint paused (40 s); step-3 when step-2's event comes;
    # step-4 at its own 500 s; step-5 where step-4 began.
    assert [st.at_ms for st in lesson.steps] == [0, 40_000, None, 500_000, 500_000]


def test_check_reports_a_step_that_begins_before_the_previous_pause(tmp_path: Path) -> None:
    doc = base()
    # The 'stop' checkpoint waits for the NoExecute taint (80 s); the next step says it
    # begins at 76 s: only the run can tell that this goes back in time.
    doc["spec"]["lesson"]["steps"][1]["checkpoint"]["when"] = {
        "event": {"type": "TaintAdded", "node": "a-2", "effect": "NoExecute"}
    }
    doc["spec"]["lesson"]["steps"][2]["at"] = "76s"
    doc["spec"]["lesson"]["steps"][2]["checkpoint"]["when"] = {"at": "77s"}
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert run(str(f), None, "jsonl", None, True, out, err) == 1
    report = out.getvalue()
    assert (
        "FAIL spec.lesson.steps[2].at: the step begins at 76s, before the previous checkpoint "
        "paused (80s)"
    ) in report
    assert (
        "FAIL spec.lesson.steps[2].checkpoint.when.at: 77s had passed when the step began: it "
        "pauses at 80s"
    ) in report
    s = load(doc)
    whole = Simulation(s)
    whole.run(600_000)
    assert checkpoint_times(s.lesson, whole.timeline.events, 600_000) == {
        "healthy": 30_000,
        "stop": 80_000,
        "taint": 80_000,
    }
    # Live, the late time checkpoint is reached at once, where the clock already is.
    s = load(doc)
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    assert [rt.advance(sim, 600_000)[1] for _ in range(3)] == [30_000, 80_000, 80_000]


def test_run_until_can_stop_at_time_zero() -> None:
    sim = Simulation(load(base()))
    assert sim.run_until(600_000, lambda e: e["type"] == "NodeReady") == 0
    assert sim.now_ms == 0
    assert sim.timeline.events[-1]["t"] == 0
    ready = [e for e in sim.timeline.events if e["type"] == "NodeReady"]
    assert len(ready) == 3  # the whole instant ran: every node's first status


def test_an_event_before_the_last_pause_does_not_pause() -> None:
    """What the room has already run past cannot pause it: live and --check agree."""
    doc = base()
    doc["spec"]["lesson"]["steps"][2]["checkpoint"]["when"] = {
        "event": {"type": "Fault", "fault": "StopKubelet", "node": "a-2"}
    }
    s = load(doc)
    sim = Simulation(s)
    rt = LessonRuntime(s.lesson)
    assert [rt.advance(sim, 600_000) for _ in range(3)][2] is None
    assert sim.now_ms == 600_000 and rt.pending.id == "taint"
    # The event is there, at 30 s, before the 75 s pause.
    assert [e["t"] for e in sim.timeline.events if e["type"] == "Fault"] == [30_000]
    assert checkpoint_times(s.lesson, sim.timeline.events, 600_000) == {
        "healthy": 30_000,
        "stop": 75_000,
    }


def _check(tmp_path: Path, doc: dict[str, Any]) -> tuple[int, list[str]]:
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = run(str(f), None, "jsonl", None, True, out, err)
    return code, [line for line in out.getvalue().splitlines() if line.startswith("FAIL")]


# A step is shown from its begin (the first from 0), a question at its pause: a text that
# names a later time tells the class what has not happened yet. In base(): "healthy" is shown
# from 0 and asks at 30 s; "stop" is shown from 30 s and asks at 75 s; "taint" from 75 s, asks
# at 80 s.
AHEAD = [
    pytest.param(
        "lesson.steps.0.text",
        "At 62 s a-2 stops.",
        "spec.lesson.steps[0].text: names 62s, later than 0s when the step is shown",
        id="first step: 'at 62 s' shown from 0",
    ),
    pytest.param(
        "lesson.steps.1.text",
        "a-2 is Unknown from 75 s.",
        "spec.lesson.steps[1].text: names 75s, later than 30s",
        id="'from 75 s' shown from 30 s",
    ),
    pytest.param(
        "lesson.steps.1.title",
        "Until 01:15",
        "spec.lesson.steps[1].title: names 75s, later than 30s",
        id="the clock's 01:15 in a title",
    ),
    pytest.param(
        "lesson.steps.2.text",
        "Tainted at 80, 90 and 100 s.",
        "spec.lesson.steps[2].text: names 80s, later than 75s",
        id="a list after 'at': its first late time",
    ),
    pytest.param(
        "lesson.steps.2.text",
        "80 + 300 = 380 s.",
        "spec.lesson.steps[2].text: names 380s, later than 75s",
        id="a sum's result",
    ),
    pytest.param(
        "lesson.steps.2.text",
        "Deleted by 6m20s.",
        "spec.lesson.steps[2].text: names 380s, later than 75s",
        id="minutes and seconds",
    ),
    pytest.param(
        f"{CP1}.question",
        "a-2 turns Unknown at 75 s. When is it tainted?",
        None,
        id="a question naming its own pause instant: fine",
    ),
    pytest.param(
        f"{CP1}.question",
        "When is a-2 tainted, at 80 s?",
        "spec.lesson.steps[1].checkpoint.question: names 80s, later than 75s when the question is shown",
        id="a question naming a time after its pause",
    ),
    pytest.param(
        "lesson.steps.1.text",
        "Its Lease lasts 40 s; the controller waits for 50 s, every 5 s (30 s in).",
        None,
        id="durations are not times",
    ),
    pytest.param(
        "lesson.steps.1.text", "At 30 s a-2's kubelet stops.", None, id="the step's own begin: fine"
    ),
]


@pytest.mark.parametrize(("path", "text", "want"), AHEAD)
def test_check_flags_a_text_naming_a_time_not_yet_reached(
    tmp_path: Path, path: str, text: str, want: str | None
) -> None:
    code, fails = _check(tmp_path, _set(base(), path, text))
    if want is None:
        assert (code, fails) == (0, [])
    else:
        assert code == 1
        assert len(fails) == 1 and fails[0].startswith(f"FAIL {want}"), fails


WRONG = [
    pytest.param(
        5,
        [70, 80],
        [
            "FAIL spec.lesson.steps[1].checkpoint.tolerance: 5 s marks the wrong answer 70 right (answer 75, wrong[0])",
            "FAIL spec.lesson.steps[1].checkpoint.tolerance: 5 s marks the wrong answer 80 right (answer 75, wrong[1])",
        ],
        id="tolerance 5 around 75 takes the wrong 70 and 80",
    ),
    pytest.param(4, [70, 80], [], id="tolerance 4: both wrong answers stay wrong"),
    pytest.param(0, [74.9], [], id="no tolerance: 74.9 is wrong"),
    pytest.param(
        0.5,
        [75.5],
        [
            "FAIL spec.lesson.steps[1].checkpoint.tolerance: 0.5 s marks the wrong answer 75.5 right (answer 75, wrong[0])"
        ],
        id="the tolerance is inclusive",
    ),
]


@pytest.mark.parametrize(("tolerance", "wrong", "want"), WRONG)
def test_check_flags_a_tolerance_that_marks_a_listed_wrong_answer_right(
    tmp_path: Path, tolerance: float, wrong: list[float], want: list[str]
) -> None:
    doc = _set(base(), f"{CP1}.tolerance", tolerance)
    doc = _set(doc, f"{CP1}.wrong", wrong)
    code, fails = _check(tmp_path, doc)
    assert (code, fails) == (1 if want else 0, want)


def test_hide_defaults_per_question_and_as_written() -> None:
    s = load(base())
    cps = {cp.id: cp for cp in s.lesson.checkpoints}
    assert cps["healthy"].hide == ["predictions"]  # a question about a node
    assert cps["taint"].hide == ["predictions", "zoneRate"]  # waits for a NoExecute taint
    doc = _set(base(), f"{CP1}.hide", [])
    assert load(doc).lesson.checkpoints[1].hide == []
    doc = _set(base(), f"{CP1}.hide", ["zoneRate", "zoneRate"])
    assert load(doc).lesson.checkpoints[1].hide == ["zoneRate"]
    # Neither wrong answers nor the answer reach a page before the reveal.
    d = load(_set(base(), f"{CP1}.wrong", [70])).lesson.checkpoints[1].to_dict(reveal=False)
    assert "wrong" not in d and "answer" not in d and d["hide"] == ["predictions"]


def test_builtin_time_questions_list_wrong_answers_their_tolerance_keeps_wrong() -> None:
    """Every built-in time question names the answers a class gets wrong (the grace period's
    100 s pass, the taint's instant...), and --check (test_builtin_lesson_check_passes) keeps
    them wrong."""
    for path in LESSONS:
        for cp in load_scenario(path.read_text(encoding="utf-8")).lesson.checkpoints:
            if cp.kind == "time":
                assert cp.wrong, f"{path.stem}: {cp.path}"
                assert not any(cp.is_right(w) for w in cp.wrong)
