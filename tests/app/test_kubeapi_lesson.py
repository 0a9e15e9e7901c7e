"""A room's Kubernetes API during a lesson's open question (issue #36 with #38's rule): a page
that answers (a viewer; the learner of a room learning alone) gets through kubectl what it gets
on the page, and no more. The room is paused at the question, so the API serves the present;
and the Kubernetes Events the open question's expect names are left out until the reveal, as
the page leaves out those timeline events. A class's operator keeps everything.

The lesson here asks at a-2's Ready=Unknown instant which Event the node lifecycle controller
records for the node in that same instant (NodeNotReady): the Event is in the store at the
pause, and must not reach a viewer's ``kubectl get events`` or ``describe node``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from controller.kubeapi import auth
from controller.lessons import classroom
from controller.models import LessonState, Room
from controller.rooms import create, runtime
from controller.rooms import tick as rooms_tick

LESSON = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: held-events}
spec:
  kubernetesVersion: "1.34"
  duration: 200s
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
    title: Events
    steps:
      - id: stop
        title: a-2 stops
        at: 62s
        faults: [{type: StopKubelet, node: a-2}]
      - id: unknown
        title: a-2 is Unknown
        checkpoint:
          when: {event: {type: NodeReady, node: a-2, status: Unknown}}
          question: Which reason does the controller record for the node?
          kind: choice
          choices: [NodeStatusUnknown, NodeNotReady]
          answer: 1
          expect:
            - {type: K8sEvent, object: Node/a-2, reason: NodeNotReady, at: 115}
          why: RecordNodeStatusChange records NodeNotReady.
"""
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
def room(transactional_db: None) -> Iterator[Room]:
    room = create.room_create("held", LESSON, None, 100.0)
    yield room
    runtime.forget_cache()


def _paused(room: Room) -> Room:
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=5))
    r = Room.objects.get(pk=room.pk)
    assert (r.sim_ms, LessonState.objects.get(room=r).checkpoint) == (115_000, "unknown")
    return r


def _get(room: Room, token: str, path: str, accept: str = "application/json", **query) -> Any:
    resp = Client().get(
        f"/k8s/rooms/{room.slug}/{path}",
        query,
        HTTP_ACCEPT=accept,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert resp.status_code == 200, resp.content[:300]
    return resp.json()


def _node_reasons(room: Room, token: str) -> dict[str, list[str]]:
    """The reasons of a-2's Events, as each read of kubectl finds them: ``get events`` (JSON
    and Table), ``events.k8s.io``, ``describe node``'s field-selected list, and a watch's
    first list."""
    core = _get(room, token, "api/v1/events")["items"]
    table = _get(room, token, "api/v1/namespaces/default/events", TABLE)["rows"]
    v1 = _get(room, token, "apis/events.k8s.io/v1/events")["items"]
    uid = _get(room, token, "api/v1/nodes/a-2")["metadata"]["uid"]
    described = _get(
        room,
        token,
        "api/v1/events",
        fieldSelector="involvedObject.kind=Node,involvedObject.name=a-2,"
        f"involvedObject.namespace=,involvedObject.uid={uid}",
    )["items"]
    return {
        "core": [e["reason"] for e in core if e["involvedObject"]["name"] == "a-2"],
        "table": [r["cells"][2] for r in table if r["cells"][3] == "node/a-2"],
        "events.k8s.io": [e["reason"] for e in v1 if e["regarding"]["name"] == "a-2"],
        "describe": [e["reason"] for e in described],
    }


def test_a_viewers_kubectl_does_not_get_the_event_the_open_question_asks_about(
    room: Room,
) -> None:
    r = _paused(room)
    viewer = auth.viewer_token(r)
    # The present: a-2 is Ready=Unknown (the question's premise) and its pod's Events are
    # there (the question names only the node's).
    node = _get(r, viewer, "api/v1/nodes/a-2")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("Unknown", "NodeStatusUnknown")
    pod_reasons = [
        e["reason"]
        for e in _get(r, viewer, "api/v1/events")["items"]
        if e["involvedObject"]["name"] == "web-1"
    ]
    assert "NodeNotReady" in pod_reasons
    for where, reasons in _node_reasons(r, viewer).items():
        assert "NodeNotReady" not in reasons, (where, reasons)
        assert "RegisteredNode" in reasons, (where, reasons)
    # The class's operator keeps everything.
    for where, reasons in _node_reasons(r, r.operator_token).items():
        assert "NodeNotReady" in reasons, (where, reasons)
    classroom.reveal(r.pk)
    for where, reasons in _node_reasons(r, viewer).items():
        assert "NodeNotReady" in reasons, (where, reasons)


def test_a_learner_alones_kubectl_is_held_with_either_kubeconfig(room: Room) -> None:
    classroom.make_solo(room)
    # Alone, the clock first stops where the step "stop" begins (its text waits for the
    # learner, issue #38); the learner goes on, and it stops again at the question.
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=5))
    r = Room.objects.get(pk=room.pk)
    assert (r.sim_ms, r.paused) == (62_000, True)
    assert classroom.next_step(r.pk, "me")["lesson"] == "go"
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=5))
    r = Room.objects.get(pk=room.pk)
    assert (r.sim_ms, LessonState.objects.get(room=r).checkpoint) == (115_000, "unknown")
    for token in (auth.viewer_token(r), r.operator_token):
        for where, reasons in _node_reasons(r, token).items():
            assert "NodeNotReady" not in reasons, (where, reasons)
    classroom.reveal(r.pk)
    assert "NodeNotReady" in _node_reasons(r, r.operator_token)["core"]
