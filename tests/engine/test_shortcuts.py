"""The engine's shortcuts for idle loops (issue #27) against the straightforward loops they
stand for: seeded random clusters and faults (random_clusters.py), run with
``Simulation.shortcuts`` on and off, give the same timeline byte for byte and the same
cluster state (with each node's probe timestamp) at two instants of the run.

Shortcuts covered: the monitor pass's parked nodes (nodelifecycle/lazy_health.py); PodGC's
indexes (podgc.gc_indexed against gc_listed; half the seeds lower terminatedPodThreshold); the
eviction loop's kept sum of the pods' declared usage (EvictionLoop.pods_usage); the kubelet
admission's kept sums of the admitted pods (kubelet/predicate.AdmittedIndex)."""

from __future__ import annotations

import pytest

from controller.engine.kubelet import predicate
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
