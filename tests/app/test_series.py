"""The room's charts from t=0: a page opened late or reloaded gets the whole history, as the
engine kept it, and a rewind cuts it back."""

from __future__ import annotations

from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.models import Room
from controller.rooms import controls, create, reading, tick

SCENARIO = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: charts}
spec:
  nodes:
    - {name: a-1, zone: a}
    - {name: a-2, zone: a}
    - {name: a-3, zone: a}
    - {name: b-1, zone: b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 3
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}]
            containers: [{name: web}]
  faults:
    - {at: 62s, type: ZoneOutage, zone: a}
"""


def stepped_room(seconds: int) -> Room:
    room = create.room_create("charts", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "t")
    for _ in range(seconds // 30):  # several ticks, as a live room has
        controls.room_control(room.pk, "step", 30, "t")
        tick.room_advance(room.pk)
    return Room.objects.get(pk=room.pk)


def engine_series(until_ms: int) -> Simulation:
    sim = Simulation(load_scenario(SCENARIO))
    sim.run(until_ms)
    return sim


def test_a_page_opened_at_four_minutes_gets_the_charts_from_zero(db) -> None:
    room = stepped_room(240)
    series = reading.room_series(room)
    sim = engine_series(240_000)
    # Ready nodes per zone: every change since t=0, at the engine's instants: zone a is cut
    # off at 62 s, its nodes go Unknown at 105 s (last renewal 60 s + 40 s, first pass after).
    assert series["zones"][0] == [0.0, {"a": 3, "b": 1}]
    assert [105.0, {"a": 0, "b": 1}] in series["zones"]
    assert [p[0] for p in series["zones"]] == [t / 1000 for t, *_ in sim.workloads.cluster_series]
    # The Deployment: 3 desired all along; ready drops when zone a's pods are marked NotReady
    # and comes back as their replacements run on b-1.
    web = series["workloads"]["Deployment/default/web"]
    assert web == [
        [t / 1000, d, r] for t, d, r in sim.workloads.workload_series["Deployment/default/web"]
    ]
    assert web[0][1:] == [3, 3] and any(r < 3 for _t, _d, r in web) and web[-1][1:] == [3, 3]
    # Zone a's queue: all three wait from the 110 s pass, which taints the first at once; the
    # others follow at nodeEvictionRate 0.1 (a fully disrupted zone among healthy ones).
    assert series["queue"]["a"] == [[0.0, 0], [110.0, 2], [120.0, 1], [130.0, 0]]


def test_a_rewind_cuts_the_charts_back(db) -> None:
    room = stepped_room(240)
    controls.room_rewind(room.pk, 100, "t")
    room = Room.objects.get(pk=room.pk)
    series = reading.room_series(room)
    assert max(p[0] for p in series["zones"]) < 100
    assert series["queue"]["a"] == [[0.0, 0]]


def test_the_series_endpoint_answers_viewers(client, db) -> None:
    room = stepped_room(120)
    response = client.get(f"/rooms/{room.slug}/series.json")
    assert response.status_code == 200
    assert response.json()["queue"]["a"] == [[0.0, 0], [110.0, 2], [120.0, 1]]
