"""What the scheduler's big-cluster shortcut (schedwindow.py) remembers equals what it stands
for, computed afresh, on random inputs: a window's SelectorSpread scores per group
(window_spread, its columns remembered per layout) are those of
DefaultPodTopologySpread.NormalizeScore over the window's feasible nodes
(scheduler.selector_spread_scores)."""

from __future__ import annotations

import random

import pytest

from controller.engine import schedwindow
from controller.engine.scheduler import selector_spread_scores


def layout(rng: random.Random, zones: int, unzoned: int) -> schedwindow._Layout:
    """A layout over ``zones`` zones of random sizes and ``unzoned`` nodes without zone."""
    nodes = []
    for z in range(zones):
        nodes += [
            (None, f"z{z}-{i}", 4000, 1 << 34, 0, 110, f"zone-{z}")
            for i in range(rng.randint(1, 120))
        ]
    nodes += [(None, f"plain-{i}", 4000, 1 << 34, 0, 110, "") for i in range(unzoned)]
    rng.shuffle(nodes)
    return schedwindow._Layout(nodes, rng.choice([12, 17, 22]))


@pytest.mark.parametrize("seed", range(8))
def test_a_windows_spread_scores_are_normalize_scores_of_its_feasible_nodes(seed: int) -> None:
    rng = random.Random(seed)
    lay = layout(rng, rng.randint(1, 7), rng.choice([0, 0, 5]))
    # A second layout over the same nodes, its columns never remembered: every call fresh.
    fresh = schedwindow._Layout(lay.nodes, lay.bits)
    for _ in range(300):
        # A window: some of the nodes feasible, each holding a random count of matching pods
        # (mostly few: the usual case, where windows repeat their counts and columns).
        top = rng.choice([1, 2, 3, 40])
        feasible = [x for x in range(lay.n) if rng.random() < 0.6]
        counts = [min(rng.randint(0, top), rng.randint(0, top)) for _ in feasible]
        zones = [lay.nodes[x][6] for x in feasible]
        zp = zn = 0
        for x, c in zip(feasible, counts):
            zn += lay.one[x]
            zp += lay.one[x] * c
        maxc = max(counts, default=0)
        fresh.columns.clear()
        got = schedwindow.window_spread(lay, zp, zn, maxc)
        assert got == schedwindow.window_spread(fresh, zp, zn, maxc)
        want = selector_spread_scores(counts, zones)
        for x, c, score in zip(feasible, counts, want):
            assert got[c * lay.z1 + lay.zg[x]] == score << lay.k, (x, c)
