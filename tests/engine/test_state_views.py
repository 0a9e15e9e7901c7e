"""The views' shared parts (issue #27, a new room's store): with ``shared``, pod_state gives
pods that hold the same list or the same Toleration objects one list of their dicts; its JSON
is the one the fresh computation (each toleration's to_dict, for each pod) gives, pod by pod,
on random clusters and the built-in scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.engine.objects import Toleration
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import SharedTolerations, pod_state, tolerations_view
from tests.engine import random_clusters

SCENARIOS = sorted((Path(__file__).parents[2] / "controller" / "scenarios").glob("*.yaml"))
NOT_READY = Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300)
UNREACHABLE = Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300)


def _fresh(tolerations: list[Toleration]) -> list[dict]:
    return [t.to_dict() for t in tolerations]


@pytest.mark.parametrize(
    ("first", "second", "one_list"),
    [
        pytest.param(
            [NOT_READY, UNREACHABLE],
            [NOT_READY, UNREACHABLE],
            True,
            id="two pods holding the same objects share one list",
        ),
        pytest.param(
            [NOT_READY, UNREACHABLE],
            [UNREACHABLE, NOT_READY],
            False,
            id="the same objects in another order: a list of their own",
        ),
        pytest.param(
            [NOT_READY],
            [NOT_READY, UNREACHABLE],
            False,
            id="one more toleration: a list of its own",
        ),
        pytest.param(
            [UNREACHABLE],
            [Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 30)],
            False,
            id="another tolerationSeconds: a list of its own",
        ),
        pytest.param(
            [NOT_READY],
            [Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300)],
            False,
            id="equal values in other objects: not shared (kept by identity), same JSON",
        ),
        pytest.param([], [], True, id="no tolerations: one empty list"),
    ],
)
def test_shared_tolerations_are_the_fresh_dicts(first, second, one_list) -> None:
    shared: SharedTolerations = {}
    a, b = tolerations_view(list(first), shared), tolerations_view(list(second), shared)
    assert json.dumps(a) == json.dumps(_fresh(first))
    assert json.dumps(b) == json.dumps(_fresh(second))
    assert (a is b) is one_list
    assert tolerations_view(list(first)) is not tolerations_view(list(first))  # no memo: fresh


def test_pods_holding_one_list_share_its_view_and_the_entries_hold_what_they_name() -> None:
    """A ReplicaSet's burst gives its pods one list: the same list again is found by its own
    identity; another list of the same objects by theirs. Each entry keeps what its key is the
    id of (so no id is reused while the pass keeps it)."""
    shared: SharedTolerations = {}
    one = [NOT_READY, UNREACHABLE]
    other = [NOT_READY, UNREACHABLE]
    view = tolerations_view(one, shared)
    assert tolerations_view(one, shared) is view
    assert tolerations_view(other, shared) is view
    assert json.dumps(view) == json.dumps(_fresh(one))
    assert shared[id(one)][0] is one and shared[id(other)][0] is other
    assert list(shared[(id(NOT_READY), id(UNREACHABLE))][0]) == one


def _views_alike(sim: Simulation) -> int:
    """Every pod's view made with one ``shared`` over the pass has the fresh view's JSON;
    returns how many pods shared a list made for another pod."""
    shared: SharedTolerations = {}
    made = []
    for key in sorted(sim.cluster.pods):
        pod = sim.cluster.pods[key]
        view = pod_state(sim, pod, shared)
        assert json.dumps(view) == json.dumps(pod_state(sim, pod)), key
        made.append(view["tolerations"])
    return len(made) - len({id(x) for x in made})


@pytest.mark.parametrize("seed", range(8))
def test_shared_views_are_the_fresh_views_on_random_clusters(seed) -> None:
    sim = random_clusters.make_sim(seed, shortcuts=True)
    sharing = 0
    for t in (0, 45_000, sim.scenario.duration_ms):
        sim.run(t)
        sharing += _views_alike(sim)
    assert sharing > 0  # the admission plugin's tolerations are shared


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_shared_views_are_the_fresh_views_in_the_built_in_scenarios(path) -> None:
    sim = Simulation(load_scenario(path.read_text()))
    for t in (0, 120_000):
        sim.run(min(t, sim.scenario.duration_ms))
        _views_alike(sim)
