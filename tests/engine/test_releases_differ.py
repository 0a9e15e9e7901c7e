"""The same failure (tests/engine/releases/same-failure.yaml) under 1.27, 1.29, 1.31, 1.32,
1.33 and 1.36: each timeline is a golden (tests/engine/golden/releases/), and each one is
predicted from the one before by applying, and only applying, the differences the behaviour
reference (docs/behavior-current.md) lists for the releases in between:

- 1.27 -> 1.29: the taint-eviction-controller deletes, not the NoExecuteTaintManager inside the
  node lifecycle controller (SeparateTaintEvictionController, beta and on in 1.29): ``by``.
- 1.29 -> 1.31: a hard eviction's kill takes 1 s (immediateEvictionGracePeriodSeconds, #124063,
  1.31) instead of the pod's own 30 s (the override 0 meant "none" to
  calculateEffectiveGracePeriod): gracePeriodSeconds 1, no ExceededGracePeriod warning (the
  10 s killPodNow timeout is not reached), the Failed status and its DisruptionTarget at the
  kill's end (251 s, not 280 s). 1.30 differs from 1.29 only in DefaultEvictionHard
  (imagefs.inodesFree, #121834), which this failure (its evictionHard is set) does not show.
- 1.31 -> 1.32: nodeMonitorGracePeriod 50 s (#126287): everything a-2's failure causes before
  the 450 s taint happens 10 s later.
- 1.32 -> 1.33: the taint eviction queue forgets a fired pod (#129577): the 450 s taint
  schedules api-1 again, marked for deletion at 510 s.
- 1.33 -> 1.36: no simulated rule of the controllers differs (1.35 and 1.36 changed nothing the
  engine ports on that side); the timelines are byte-identical. On the kubelet side 1.35
  rewords image GC's FreeDiskSpaceFailed (#132578), which this failure does not show.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from controller.engine.cli import run

TEMPLATE = Path(__file__).parent / "releases" / "same-failure.yaml"
GOLDEN = Path(__file__).parent / "golden" / "releases"
RELEASES = ["1.27", "1.29", "1.31", "1.32", "1.33", "1.36"]
FAULT_S = 62.0
RETAINT_S = 450.0
A2_PODS = {"default/web-1", "default/web-2", "default/api-1", "monitoring/node-exporter-a-2"}


def simulate(release: str, tmp_path: Path) -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    assert 'kubernetesVersion: "1.27"' in text
    path = tmp_path / f"same-failure-{release}.yaml"
    path.write_text(text.replace('kubernetesVersion: "1.27"', f'kubernetesVersion: "{release}"'))
    out, err = io.StringIO(), io.StringIO()
    assert run(str(path), None, "jsonl", None, False, out, err) == 0, err.getvalue()
    return out.getvalue()


def golden(release: str) -> list[dict[str, Any]]:
    path = GOLDEN / f"same-failure-{release}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("release", RELEASES)
def test_timeline_is_the_golden_one(release: str, tmp_path: Path) -> None:
    """Regenerate on purpose with UPDATE_GOLDEN=1 and say why in the commit."""
    got = simulate(release, tmp_path)
    path = GOLDEN / f"same-failure-{release}.jsonl"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    want = path.read_text(encoding="utf-8").splitlines()
    lines = got.splitlines()
    for i, (a, b) in enumerate(zip(lines, want, strict=False)):
        assert a == b, f"{release} line {i + 1} moved:\n got  {a}\n want {b}"
    assert len(lines) == len(want)


def about_a2(e: dict[str, Any]) -> bool:
    """An event a-2's failure causes (its node, its pods), not a fault as written."""
    if e["type"] == "Fault":
        return False
    obj = e.get("object", "")
    return (
        e.get("node") == "a-2"
        or e.get("pod") in A2_PODS
        or obj == "Node/a-2"
        or obj.removeprefix("Pod/") in A2_PODS
    )


def by_time(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: e["t"])  # stable: same-instant order kept


def separate_taint_eviction_controller(old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**e, "by": "TaintEvictionController"}
        if e["type"] == "PodDeleted" and e["by"] == "TaintManager"
        else e
        for e in old
    ]


def immediate_eviction_grace_period(old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in old:
        if e.get("pod", e.get("object", "").removeprefix("Pod/")) != "default/batch":
            out.append(e)
        elif e["type"] == "PodEvicted":
            evicted_at = e["t"]
            out.append({**e, "gracePeriodSeconds": 1})
        elif e["type"] == "K8sEvent" and e["reason"] == "ExceededGracePeriod":
            continue  # the 1 s kill ends before killPodNow's 10 s timeout
        elif e["type"] in ("PodDisruptionTarget", "PodPhase", "PodReady") and e["t"] > 0:
            out.append({**e, "t": evicted_at + 1})  # written when the containers stopped
        else:
            out.append(e)
    return by_time(out)


def grace_period_50s(old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def shift(e: dict[str, Any]) -> dict[str, Any]:
        if not about_a2(e):
            return e
        out = dict(e)
        for at in ("t", "first"):  # a patched Event's firstTimestamp: its first recording's
            if at in e and FAULT_S < e[at] < RETAINT_S:
                out[at] = e[at] + 10
        return out

    return by_time([shift(e) for e in old])


def forgets_fired_work(old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The same Event recorded again: the taint-eviction controller's EventCorrelator counts
    # it into the first one (count 2, that one's firstTimestamp).
    first = next(
        e["t"]
        for e in old
        if e["type"] == "K8sEvent"
        and e["object"] == "Pod/default/api-1"
        and e["reason"] == "TaintManagerEviction"
    )
    again = {
        "count": 2,
        "first": first,
        "eventType": "Normal",
        "message": "Marking for deletion Pod default/api-1",
        "object": "Pod/default/api-1",
        "reason": "TaintManagerEviction",
        "t": RETAINT_S + 60,  # api-1 tolerates unreachable 60 s, maintenance forever
        "type": "K8sEvent",
    }
    return by_time([*old, again])


def nothing(old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return old


STEPS = [
    pytest.param("1.27", "1.29", separate_taint_eviction_controller, id="1.27->1.29"),
    pytest.param("1.29", "1.31", immediate_eviction_grace_period, id="1.29->1.31"),
    pytest.param("1.31", "1.32", grace_period_50s, id="1.31->1.32"),
    pytest.param("1.32", "1.33", forgets_fired_work, id="1.32->1.33"),
    pytest.param("1.33", "1.36", nothing, id="1.33->1.36"),
]


@pytest.mark.parametrize(("old", "new", "rule"), STEPS)
def test_consecutive_releases_differ_exactly_where_the_reference_says(
    old: str, new: str, rule: Any
) -> None:
    assert rule(golden(old)) == golden(new)


@pytest.mark.parametrize(("old", "new", "rule"), STEPS)
def test_each_difference_is_really_there(old: str, new: str, rule: Any) -> None:
    """The predictions are not the identity (but for 1.33 -> 1.36, whose identity is the
    claim), and the startup instant is the same in every release."""
    before, after = golden(old), golden(new)
    assert (before == after) is (rule is nothing)
    start = [e for e in before if e["t"] == 0]
    assert after[: len(start)] == start


def test_the_differences_at_exact_times() -> None:
    def at(release: str, **fields: Any) -> list[float]:
        return [e["t"] for e in golden(release) if all(e.get(k) == v for k, v in fields.items())]

    unknown = {r: at(r, type="NodeReady", node="a-2", status="Unknown") for r in RELEASES}
    assert unknown == {r: [115.0] if r >= "1.32" else [105.0] for r in RELEASES}
    deleters = {r: {e["by"] for e in golden(r) if e["type"] == "PodDeleted"} for r in RELEASES}
    assert deleters == {
        r: {"TaintManager"} if r == "1.27" else {"TaintEvictionController"} for r in RELEASES
    }
    batch_failed = {
        r: at(r, type="PodPhase", pod="default/batch", phase="Failed") for r in RELEASES
    }
    assert batch_failed == {r: [251.0] if r >= "1.31" else [280.0] for r in RELEASES}
    api_marked = {
        r: at(r, type="K8sEvent", object="Pod/default/api-1", reason="TaintManagerEviction")
        for r in RELEASES
    }
    assert api_marked == {
        "1.27": [170.0],
        "1.29": [170.0],
        "1.31": [170.0],
        "1.32": [180.0],
        "1.33": [180.0, 510.0],
        "1.36": [180.0, 510.0],
    }
