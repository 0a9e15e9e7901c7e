"""Fuzz: every websocket message type with random JSON values in every field, sent by the
operator of a lesson room through the real consumer (channels_redis on the test Redis): each
is answered (ack, error, pong or a snapshot) and the socket stays open; an error that is a
server error (an exception the consumer caught) counts as unhandled. After each accepted
action a tick runs: it must apply or refuse it (never "could not be applied", never pausing
the room for a failure). Lesson answers are also given straight to the classroom service."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from hypothesis import given
from hypothesis import strategies as st

from controller.engine.scenario import FAULT_TYPES
from controller.lessons import classroom
from controller.lessons.definition import LessonError
from controller.models import Action, LessonState, Room
from controller.rooms import create, runtime
from controller.rooms import tick as rooms_tick
from playground.asgi import application
from tests.app.test_lessons import LESSON
from tests.fuzz.harness import EDGE_TEXT, JSON, SETTINGS, Tally

pytestmark = pytest.mark.usefixtures("fresh_channel_layer")

TYPES = [
    "snapshot",
    "ping",
    "lesson.answer",
    "lesson.reveal",
    "lesson.next",
    "lesson.prev",
    "action",
    "params",
    "speed",
    "pause",
    "resume",
    "step",
    "rewind",
]
NODES = ["a-1", "a-2", "a-3", "n-9"]
FIELDS = [
    "node",
    "pod",
    "zone",
    "workload",
    "replicas",
    "rate",
    "until",
    "message",
    "condition",
    "status",
    "reason",
    "key",
    "value",
    "effect",
    "taints",
    "kubeletMode",
    "object",
    "memory",
    "gracePeriodSeconds",
    "force",
    "pass",
    "at",
]
PARAMS = {
    "controllerManager": [
        "nodeMonitorGracePeriod",
        "nodeEvictionRate",
        "podEvictionTimeout",
        "largeClusterSizeThreshold",
        "unhealthyZoneThreshold",
    ],
    "kubelet": ["evictionHard", "nodeLeaseDurationSeconds", "evictionSoft"],
    "apiServer": ["defaultUnreachableTolerationSeconds", "disableAdmissionPlugins"],
}
VALUE = st.one_of(JSON, st.sampled_from(NODES), EDGE_TEXT)
# Valid actions on the lesson room (nodes a-1, a-2, a-3 in zone a).
VALID: list[dict[str, Any]] = [
    {"type": "Cordon", "node": "a-1"},
    {"type": "StopKubelet", "node": "a-2"},
    {"type": "StartKubelet", "node": "a-2"},
    {"type": "SetNodeNotReady", "node": "a-3", "message": "runtime down"},
    {
        "type": "SetNodeCondition",
        "node": "a-1",
        "condition": "NetworkUnavailable",
        "status": "True",
    },
    {"type": "Taint", "node": "a-1", "key": "k", "value": "v", "effect": "NoSchedule"},
    {"type": "ZoneOutage", "zone": "a"},
    {"type": "AddNode", "node": {"name": "c-1", "zone": "c"}},
    {"type": "SetUsage", "node": "a-1", "memory": "1Gi"},
    {"type": "FillDisk", "node": "a-1", "rate": "50Mi", "until": "30s"},
    {"type": "RunEvictionSync", "node": "a-1"},
    {"type": "RestartControllerManager"},
    {"type": "SetParameters", "controllerManager": {"nodeEvictionRate": 0.5}},
    {"type": "SetParameters", "apiServer": {"defaultUnreachableTolerationSeconds": 30}},
]


@st.composite
def messages(draw: Any) -> dict[str, Any]:
    known = st.sampled_from(TYPES + ["action"] * 8 + ["params"] * 2)  # actions most often
    kind = draw(st.one_of(known, known, known, st.text(max_size=10), JSON), label="type")
    msg: dict[str, Any] = {"type": kind}
    if kind == "action" and draw(st.booleans(), label="from a valid action"):
        # A valid action with one field's value random (most get through to the tick).
        action = dict(draw(st.sampled_from(VALID), label="action"))
        field = draw(st.sampled_from(sorted(action)), label="field")
        if field != "type":
            action[field] = draw(VALUE, label="value")
        msg["action"] = action
    elif kind == "action":
        action = {"type": draw(st.one_of(st.sampled_from(sorted(FAULT_TYPES)), JSON))}
        for name in draw(st.lists(st.sampled_from(FIELDS), max_size=4, unique=True)):
            action[name] = draw(VALUE)
        msg["action"] = draw(st.one_of(st.just(action), JSON))
    elif kind == "params":
        params: dict[str, Any] = {}
        for section in draw(st.lists(st.sampled_from(sorted(PARAMS)), max_size=2, unique=True)):
            keys = draw(st.lists(st.sampled_from(PARAMS[section]), max_size=2, unique=True))
            params[section] = {k: draw(VALUE) for k in keys}
        msg["params"] = draw(st.one_of(st.just(params), JSON))
    elif kind == "lesson.answer":
        msg.update(
            checkpoint=draw(st.one_of(st.just("silent"), st.just("taint"), JSON)),
            answer=draw(JSON),
            name=draw(st.one_of(st.text(max_size=50), JSON)),
        )
    elif kind in ("speed", "step"):
        msg["value"] = draw(VALUE)
    elif kind == "rewind":
        msg["t"] = draw(VALUE)
    for extra in draw(st.lists(st.text(max_size=6), max_size=2)):
        msg.setdefault(extra, draw(JSON))
    return msg


class Refused(Exception):
    """An error reply: the consumer refused the message, saying why."""


class Loop:
    """An event loop in a thread of its own, for one communicator across all examples."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


REPLIES = ("ack", "error", "pong", "snapshot")


async def _reply(comm: WebsocketCommunicator) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        out = await comm.receive_output(timeout=max(0.1, deadline - time.monotonic()))
        if out["type"] == "websocket.close":
            raise AssertionError(f"the consumer closed the socket: {out}")
        import json

        msg = json.loads(out["text"])
        if msg.get("type") in REPLIES:
            return msg


@pytest.mark.django_db(transaction=True)
def test_fuzz_websocket_messages(settings) -> None:
    settings.PLAYGROUND_MAX_ACTIONS_PER_SECOND = 0
    settings.PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS = 0
    settings.PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN = 0
    # A room may grow to the server's limits (150,000 pods: a ScaleWorkload to that many takes
    # seconds to schedule, by design); this target is about validation, with small limits.
    settings.PLAYGROUND_MAX_PODS_PER_ROOM = 1000
    settings.PLAYGROUND_MAX_NODES_PER_ROOM = 100
    room = create.room_create("fuzz", LESSON, None, 10.0)
    loop = Loop()
    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=fuzz&client=c1",
        headers=[(b"origin", b"http://localhost")],
    )
    assert loop.run(comm.connect())[0]
    loop.run(_reply(comm))

    def send(msg: dict[str, Any]) -> None:
        before = set(Action.objects.filter(room=room).values_list("pk", flat=True))
        loop.run(comm.send_json_to(msg))
        reply = loop.run(_reply(comm))
        if reply["type"] == "error" and "server error" in reply["message"]:
            raise AssertionError(f"the consumer caught an exception: {reply}")
        if reply["type"] == "error":
            raise Refused(reply["message"])
        if reply["type"] == "ack":
            rooms_tick.room_advance(room.pk)  # what the worker does next
            new = Action.objects.filter(room=room).exclude(pk__in=before)
            broken = new.filter(error__contains="could not be applied").first()
            paused = new.filter(actor="server").first()
            if broken is not None or paused is not None:
                raise AssertionError(f"the tick failed on it: {(broken or paused).error}")

    tally = Tally("websocket: every message type", send, Refused)

    @SETTINGS
    @given(messages())
    def one(msg: dict[str, Any]) -> None:
        tally.judge(msg)

    try:
        tally.fuzz(one)
    finally:
        loop.run(comm.disconnect())
        loop.stop()
        runtime.forget_cache()


@pytest.mark.django_db
def test_fuzz_lesson_answers() -> None:
    room = create.room_create("fuzz-lesson", LESSON, None, 10.0)
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=20))  # paused at "silent"
    assert LessonState.objects.get(room=room).checkpoint == "silent"
    tally = Tally(
        "lesson answers",
        lambda what: classroom.answer(room.pk, *what),
        LessonError,
        lambda exc: str(exc).startswith("lesson."),
    )

    @SETTINGS
    @given(
        st.text(max_size=90) | EDGE_TEXT,
        st.fixed_dictionaries(
            {"checkpoint": st.just("silent") | JSON, "answer": st.integers(-1, 4) | JSON},
            optional={"name": st.text(max_size=50) | EDGE_TEXT | JSON, "x": JSON},
        ),
    )
    def one(client: str, content: dict[str, Any]) -> None:
        tally.judge((client, content))

    try:
        tally.fuzz(one)
    finally:
        runtime.forget_cache()
