"""The engine's shortcuts for idle loops (issue #27) against the straightforward loops they
stand for: seeded random clusters and faults (random_clusters.py), run with
``Simulation.shortcuts`` on and off, give the same timeline byte for byte and the same
cluster state (with each node's probe timestamp) at two instants of the run.

Shortcuts covered: the monitor pass's parked nodes (nodelifecycle/lazy_health.py); PodGC's
indexes (podgc.gc_indexed against gc_listed; half the seeds lower terminatedPodThreshold); the
eviction loop's kept sum of the pods' declared usage (EvictionLoop.pods_usage); the kubelet
admission's kept sums of the admitted pods (kubelet/predicate.AdmittedIndex); the eviction loop's
kept signals view (EvictionLoop.signals)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from controller.engine.kubelet import predicate
from controller.engine.kubelet.eviction.api import get_threshold_quantity
from controller.engine.scenario.model import Fault
from controller.engine.simulation import Simulation
from controller.engine.timeline import to_json

from .random_clusters import make_sim, random_scenario, run

SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed {s}")
def test_shortcuts_give_the_timeline_and_states_of_the_straightforward_loops(seed: int) -> None:
    duration = random_scenario(seed).duration_ms
    checkpoints = [duration // 3, duration // 2 + 777]
    assert run(seed, True, checkpoints) == run(seed, False, checkpoints)


def test_the_random_runs_reach_what_the_shortcuts_skip() -> None:
    """The seeds above make nodes Unknown and Ready again, taint and untaint them, change
    zone states: the comparison is not between two idle runs."""
    types: set[str] = set()
    for seed in SEEDS[::4]:
        lines, _states = run(seed, True, [])
        types |= {line.split('"type":"')[1].split('"')[0] for line in lines}
    assert {"NodeReady", "TaintAdded", "TaintRemoved", "ZoneState", "PodDeleted"} <= types


@pytest.mark.parametrize("seed", [37, 49], ids=lambda s: f"seed {s}")
def test_switching_the_shortcuts_off_mid_run_keeps_the_timeline(seed: int) -> None:
    """The parked nodes' health is brought up to date when the shortcut is switched off, so
    the straightforward loop goes on from where the shortcut was (these seeds' timelines
    differ when it is not)."""
    checkpoints = [random_scenario(seed).duration_ms // 2]
    straight = run(seed, False, checkpoints)
    sim = make_sim(seed, True)
    sim.run(checkpoints[0])
    sim.shortcuts = False
    sim.run(sim.scenario.duration_ms)
    assert [to_json(e) for e in sim.timeline.events] == straight[0]


def test_the_kept_admitted_pods_sum_what_the_kubelet_s_loop_sums(monkeypatch) -> None:
    """Every kubelet admission on the random clusters: the kept sums of the admitted pods
    (kubelet/predicate.AdmittedIndex) are what admitted_usage gets by going over every pod
    of the node, at that admission (not only in the end: a wrong sum that admits or rejects
    the same pods would not show in the timeline)."""
    checked: list[bool] = []
    waited: list[bool] = []
    real = predicate.AdmittedIndex.usage

    def usage(self, bound, pod, waiting, phase_of):  # type: ignore[no-untyped-def]
        kept = real(self, bound, pod, waiting, phase_of)
        assert kept == predicate.admitted_usage(bound.values(), pod, waiting, phase_of)
        checked.append(kept[0] > 0)
        waited.append(bool(waiting))
        return kept

    monkeypatch.setattr(predicate.AdmittedIndex, "usage", usage)
    for seed in SEEDS:
        run(seed, True, [])
    # (and some while a critical pod's admission waits for its preemption kills)
    assert len(checked) > 400 and sum(checked) > 250 and sum(waited) >= 5


def _signals_straightforward(loop: Any) -> list[dict[str, object]]:
    """What EvictionLoop.signals returned before it was kept: each observed signal (sorted)
    with a threshold, and its thresholds resolved against the observed capacity."""
    out: list[dict[str, object]] = []
    for signal in sorted(loop.observed):
        thresholds = [t for t in loop.manager.config.thresholds if t.signal == signal]
        if not thresholds:
            continue
        o = loop.observed[signal]
        out.append(
            {
                "signal": signal,
                "available": o.available,
                "capacity": o.capacity,
                "at": o.time_ms / 1000,
                "thresholds": [
                    {
                        "value": get_threshold_quantity(t.value, o.capacity),
                        "gracePeriod": t.grace_period_ms / 1000,
                    }
                    for t in thresholds
                ],
            }
        )
    return out


def test_the_kept_signals_view_is_the_straightforward_one_at_every_instant() -> None:
    """Each kubelet's signals every 3 s of the random runs (memory leaks move them, kubelets
    restart): the kept view is what the straightforward computation gives then, it is used
    again while nothing moved and made anew when a sync observed new figures."""
    kept = moved = 0
    for seed in SEEDS[::3]:
        sim = make_sim(seed, True)
        last: dict[str, list[dict[str, object]]] = {}
        for t in range(0, sim.scenario.duration_ms + 1, 3000):
            sim.run(t)
            for name, kubelet in sim.kubelets.items():
                view = kubelet.eviction.signals()
                assert view == _signals_straightforward(kubelet.eviction), (seed, t, name)
                before = last.get(name)
                kept += view is before
                moved += before is not None and view != before
                last[name] = view
    assert kept > 1000 and moved > 50


def test_the_kept_signals_view_follows_new_thresholds() -> None:
    """A SetParameters of the kubelets' evictionHard replaces the thresholds with no new
    observations: the view shows the new thresholds at once."""
    sim = make_sim(3, True)
    sim.run(20_000)
    loop = next(iter(sim.kubelets.values())).eviction
    before = loop.signals()
    assert loop.signals() is before
    sim.apply_action(
        Fault(
            sim.now_ms, "SetParameters", {"kubelet": {"evictionHard": {"memory.available": "1Gi"}}}
        ),
        1,
    )
    assert not sim.refused_actions
    after = loop.signals()
    assert after == _signals_straightforward(loop) != before
    values = {s["signal"]: [t["value"] for t in s["thresholds"]] for s in after}
    assert values["memory.available"] == [1 << 30]


def test_the_signals_view_is_not_pickled() -> None:
    """An engine is pickled between ticks: without its kept views (made again when asked)."""
    sim = Simulation(random_scenario(5))
    sim.run(10_000)
    name = next(iter(sim.kubelets))
    view = sim.kubelets[name].eviction.signals()
    again = pickle.loads(pickle.dumps(sim)).kubelets[name].eviction
    assert "signals_view" in sim.kubelets[name].eviction.__dict__
    assert "signals_view" not in again.__dict__
    assert again.signals() == view
