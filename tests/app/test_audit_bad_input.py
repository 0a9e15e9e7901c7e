"""Audit: bad input to the live runtime (services, the room websocket, the admin form).

House rule: bad input gets a clear error naming the field, and changes nothing. Operator
actions and parameter changes are validated with the scenario loader's code
(actions.validate_action / parameters_submit -> parse_fault), so a refusal is an
``ActionError`` whose message starts with the field's path, and the room (its clock, version,
action log, timeline and parameters) is exactly as before.

The passing tests pin what is handled; the ``xfail`` ones encode the right behaviour for inputs
that today raise a raw exception (TypeError, ValueError, IntegrityError...), wedge the tick, or
are refused only after part of them was applied. Everything but the websocket test needs only
the test database.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.db import IntegrityError

from controller import timeline_store
from controller.engine.scenario import ScenarioError
from controller.models import Action, ClusterParameters, ObjectView, Room, TimelineEvent
from controller.rooms import actions, controls, create, errors, runtime, tick
from tests.app.scenarios import pod, scenario, workload

SCENARIO = scenario(
    "audit",
    2,
    (pod(), workload("Deployment", "d", 1, container="c", namespace=None)),
    spec="  kubelet:\n"
    "    evictionSoft: {memory.available: 1Gi}\n"
    "    evictionSoftGracePeriod: {memory.available: 1m}\n",
)


@pytest.fixture
def room(db: None) -> Iterator[Room]:
    room = create.room_create("audit", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    yield Room.objects.get(pk=room.pk)
    runtime.forget_cache()


def state(room: Room) -> tuple[Any, ...]:
    """Everything a refused input must leave as it was."""
    r = Room.objects.get(pk=room.pk)
    params = ClusterParameters.objects.get(room=r)
    return (
        r.version,
        r.seq,
        r.sim_ms,
        r.sim_anchor_ms,
        r.speed,
        r.paused,
        r.event_count,
        list(Action.objects.filter(room=r).values_list("kind", "status", "payload")),
        timeline_store.count(r),
        (params.controller_manager, params.kubelet, params.api_server),
    )


def refused(room: Room, call: Any, prefix: str) -> str:
    """``call()`` raises ActionError starting with ``prefix`` and changes nothing."""
    before = state(room)
    with pytest.raises(errors.ActionError) as info:
        call()
    message = str(info.value)
    assert message.startswith(prefix), message
    assert "\n" not in message
    assert state(room) == before
    return message


def xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


# -- operator actions -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "payload, prefix",
    [
        pytest.param(["StopKubelet"], "action: must be a mapping", id="list"),
        pytest.param("StopKubelet", "action: must be a mapping", id="string"),
        pytest.param({"type": "Explode"}, "action.type: unknown fault type", id="unknown type"),
        pytest.param({"type": 5}, "action.type: unknown fault type 5", id="type int"),
        pytest.param({"type": "StopKubelet"}, "action.node: StopKubelet needs node", id="no node"),
        pytest.param(
            {"type": "StopKubelet", "node": "zz"}, 'action.node: unknown node "zz"', id="node"
        ),
        pytest.param(
            {"type": "StopKubelet", "node": 5}, "action.node: must be a non-empty string", id="5"
        ),
        pytest.param(
            {"type": "StopKubelet", "node": "n-1", "bogus": 1},
            "action.bogus: unknown field",
            id="unknown field",
        ),
        pytest.param(
            {"type": "DeletePod", "pod": "default/zz"},
            'action.pod: unknown pod "default/zz"',
            id="pod",
        ),
        pytest.param(
            {"type": "DeletePod", "pod": {"a": 1}}, "action.pod: must be a non-empty", id="pod map"
        ),
        pytest.param(
            {"type": "DeletePod", "pod": "default/web", "gracePeriodSeconds": -1},
            "action.gracePeriodSeconds: must be >= 0",
            id="grace negative",
        ),
        pytest.param(
            {"type": "Taint", "node": "n-1", "key": "k", "effect": "Bogus"},
            "action.effect: must be NoSchedule",
            id="taint effect",
        ),
        pytest.param(
            {"type": "ScaleWorkload", "workload": "Deployment/d", "replicas": -1},
            "action.replicas: must be >= 0",
            id="replicas -1",
        ),
        pytest.param(
            {"type": "ScaleWorkload", "workload": "Deployment/d", "replicas": math.nan},
            "action.replicas: must be an integer",
            id="replicas nan",
        ),
        pytest.param(
            {"type": "AddNode", "node": {"name": "n-1"}},
            'action.node.name: node "n-1" already exists',
            id="AddNode existing",
        ),
        pytest.param(
            {"type": "AddNode", "node": {"name": "n-9", "capacity": {"memory": "1Zi"}}},
            'action.node.capacity.memory: "1Zi" is not a Kubernetes quantity',
            id="AddNode capacity",
        ),
        pytest.param(
            {"type": "Apply", "object": {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}},
            "action.object.spec.containers: a pod needs at least one container",
            id="Apply pod",
        ),
        pytest.param(
            {"type": "SetUsage", "node": "n-1", "memory": "-1Gi"},
            "action.memory: must not be negative",
            id="SetUsage",
        ),
        pytest.param(
            {"type": "LeakMemory", "pod": "default/web", "rate": "fast"},
            'action.rate: "fast" is not a Kubernetes quantity',
            id="leak rate",
        ),
        pytest.param(
            {"type": ["StopKubelet"], "node": "n-1"},
            "action.type",
            id="type list",
        ),
        pytest.param(
            {"type": {"a": 1}, "node": "n-1"},
            "action.type",
            id="type mapping",
        ),
        pytest.param(
            {
                "type": "Apply",
                "object": {
                    "kind": "Pod",
                    "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "c"}], "priorityClassName": ["x"]},
                },
            },
            "action.object.spec.priorityClassName",
            id="priorityClassName list",
        ),
    ],
)
def test_action_refused_with_the_field(room: Room, payload: Any, prefix: str) -> None:
    refused(room, lambda: actions.action_submit(room, payload, "test"), prefix)


def test_an_apply_with_a_bad_strategy_does_not_wedge_the_room(room: Room) -> None:
    payload = {
        "type": "Apply",
        "object": {
            "kind": "Deployment",
            "metadata": {"name": "x"},
            "spec": {"strategy": "abc", "template": {"spec": {"containers": [{"name": "c"}]}}},
        },
    }
    try:
        actions.action_submit(room, payload, "test")
    except errors.ActionError as exc:
        assert str(exc).startswith("action.object.spec.strategy")
        return
    tick.room_advance(room.pk, extra_ms=1000)
    action = Action.objects.get(room=room, kind="Apply")
    assert action.status == Action.REFUSED and "strategy" in action.error


def test_a_grace_period_given_as_a_string_is_applied_or_refused(room: Room) -> None:
    payload = {"type": "DeletePod", "pod": "default/web", "gracePeriodSeconds": "5"}
    try:
        actions.action_submit(room, payload, "test")
    except errors.ActionError as exc:
        assert str(exc).startswith("action.gracePeriodSeconds")
        return
    tick.room_advance(room.pk, extra_ms=1000)
    assert Action.objects.get(room=room, kind="DeletePod").status == Action.APPLIED


# -- parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, prefix",
    [
        pytest.param({}, "parameters: nothing to change", id="empty"),
        pytest.param(
            {"controllerManager": {"nodeEvictionRate": -1}},
            "action.controllerManager.nodeEvictionRate: must be >= 0, got -1",
            id="rate -1",
        ),
        pytest.param(
            {"controllerManager": {"nodeEvictionRate": "fast"}},
            'action.controllerManager.nodeEvictionRate: must be a number, got "fast"',
            id="rate string",
        ),
        pytest.param(
            {"controllerManager": [1]},
            "action.controllerManager: must be a mapping",
            id="section list",
        ),
        pytest.param(
            {"controllerManager": {"nodeMonitorPeriod": "0s"}},
            "action.controllerManager.nodeMonitorPeriod: must be at least 0.001s",
            id="period 0",
        ),
        pytest.param(
            {"kubelet": {"bogus": 1}}, "action.kubelet.bogus: unknown field", id="unknown field"
        ),
        pytest.param(
            {"kubelet": {"evictionHard": {"memory.available": "101%"}}},
            "action.kubelet.evictionHard.memory.available: eviction percentage threshold",
            id="threshold 101%",
        ),
        pytest.param(
            {"kubelet": {"nodeLeaseDurationSeconds": True}},
            "action.kubelet.nodeLeaseDurationSeconds: must be an integer",
            id="lease bool",
        ),
        pytest.param(
            {"apiServer": {"defaultNotReadyTolerationSeconds": "abc"}},
            "action.apiServer.defaultNotReadyTolerationSeconds: must be an integer",
            id="toleration seconds",
        ),
        pytest.param(
            ["controllerManager"],
            "parameters",
            id="params list",
        ),
        pytest.param(
            "nodeEvictionRate=1",
            "parameters",
            id="params string",
        ),
        pytest.param(
            {"controllerManager": {"nodeEvictionRate": 0.2}, "featureGates": {"X": True}},
            "parameters.featureGates",
            id="unknown section beside a valid one",
        ),
    ],
)
def test_parameters_refused_with_the_field(room: Room, params: Any, prefix: str) -> None:
    refused(room, lambda: actions.parameters_submit(room, params, "test"), prefix)


@pytest.mark.parametrize("value", [math.nan, math.inf], ids=["nan", "inf"])
def test_non_finite_parameters_are_refused_with_the_field(room: Room, value: float) -> None:
    params = {"controllerManager": {"nodeEvictionRate": value}}
    try:
        actions.parameters_submit(room, params, "test")
    except errors.ActionError as exc:
        assert str(exc).startswith("action.controllerManager.nodeEvictionRate")
        return
    except IntegrityError as exc:
        raise AssertionError(f"a database error instead of a message: {exc}") from None
    raise AssertionError("accepted")


def test_a_parameter_change_refused_at_the_tick_changes_nothing(room: Room) -> None:
    params = {
        "controllerManager": {"nodeEvictionRate": 0.5},
        "kubelet": {"evictionSoftGracePeriod": {}},  # the scenario has a soft threshold
    }
    try:
        actions.parameters_submit(room, params, "test")
    except errors.ActionError as exc:  # refused at once: the better outcome
        assert str(exc).startswith("action.kubelet.evictionSoftGracePeriod")
        return
    tick.room_advance(room.pk, extra_ms=1000)
    action = Action.objects.get(room=room, kind="SetParameters")
    assert action.status == Action.REFUSED
    assert not TimelineEvent.objects.filter(room=room, type="Fault").exists()
    view = ObjectView.objects.get(room=room, kind="params").data
    assert view["controllerManager"]["nodeEvictionRate"] == 0.1


# -- time controls ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind, value, prefix",
    [
        ("speed", "nan", "speed: must be between"),
        ("speed", math.nan, "speed: must be between"),
        ("speed", math.inf, "speed: must be between"),
        ("speed", "1e400", "speed: must be between"),
        ("speed", 0, "speed: must be between"),
        ("speed", 1000, "speed: must be between"),
        ("speed", None, "speed: None is not a number"),
        ("speed", [1], "speed: [1] is not a number"),
        ("speed", "fast", "speed: 'fast' is not a number"),
        ("step", math.nan, "step: must be between"),
        ("step", "inf", "step: must be between"),
        ("step", 0, "step: must be between"),
        ("step", -1, "step: must be between"),
        ("step", 10**9, "step: must be between"),
        ("step", None, "step: None is not a number"),
        ("step", "abc", "step: 'abc' is not a number"),
        ("explode", 1, "unknown control 'explode'"),
        pytest.param("speed", True, "speed", id="speed-true"),
        pytest.param("step", True, "step", id="step-true"),
    ],
)
def test_control_refused_with_the_field(room: Room, kind: str, value: Any, prefix: str) -> None:
    refused(room, lambda: controls.room_control(room.pk, kind, value, "test"), prefix)


@pytest.mark.parametrize(
    "t",
    [
        pytest.param(-1, id="negative"),
        pytest.param(10_000, id="in the future"),
        pytest.param("abc", id="word"),
        pytest.param(None, id="null"),
        pytest.param([1], id="list"),
        pytest.param(math.nan, id="nan"),
        pytest.param(math.inf, id="inf"),
    ],
)
def test_rewind_refused_with_the_field(room: Room, t: Any) -> None:
    refused(room, lambda: controls.room_rewind(room.pk, t, "test"), "rewind: ")


# -- rooms -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, speed, error, prefix",
    [
        pytest.param("", 10.0, ScenarioError, "the file holds no YAML document", id="empty"),
        pytest.param("[", 10.0, ScenarioError, "malformed YAML at line 1", id="malformed"),
        pytest.param(
            SCENARIO.replace("name: n-2", "name: N_2"),
            10.0,
            ScenarioError,
            "spec.nodes[1].name:",
            id="bad node name",
        ),
        pytest.param(SCENARIO, math.nan, errors.ActionError, "speed: must be", id="speed nan"),
        pytest.param(SCENARIO, "fast", errors.ActionError, "speed: 'fast'", id="speed word"),
    ],
)
def test_room_create_refuses_and_creates_nothing(
    db: None, text: str, speed: Any, error: type[Exception], prefix: str
) -> None:
    with pytest.raises(error) as info:
        create.room_create("bad", text, None, speed)
    assert str(info.value).startswith(prefix), str(info.value)
    assert (Room.objects.count(), ClusterParameters.objects.count(), Action.objects.count()) == (
        0,
        0,
        0,
    )


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_room_create_with_a_non_finite_rate(db: None, value: str) -> None:
    text = SCENARIO.replace(
        "spec:\n", f"spec:\n  controllerManager: {{nodeEvictionRate: {value}}}\n", 1
    )
    try:
        create.room_create("bad", text, None, 10.0)
    except ScenarioError as exc:
        assert str(exc).startswith("spec.controllerManager.nodeEvictionRate")
    except IntegrityError as exc:
        raise AssertionError(f"a database error instead of a message: {exc}") from None
    finally:
        runtime.forget_cache()


# -- admin -------------------------------------------------------------------------------------
# The room's parameters are a form with one field per setting (controller/admin.py): a wrong
# value is refused on its field, naming the setting, as a SetParameters action would be.
@pytest.mark.parametrize(
    "field, value, words",
    [
        pytest.param(
            "controllerManager__nodeEvictionRate",
            "[1]",
            "controllerManager.nodeEvictionRate: must be a number",
            id="list",
        ),
        pytest.param(
            "kubelet__evictionHard",
            '{"memory.available": "101%"}',
            "kubelet.evictionHard.memory.available: eviction percentage threshold",
            id="threshold",
        ),
        pytest.param("kubelet__evictionHard", "{not yaml", "not a YAML value", id="not YAML"),
        pytest.param(
            "controllerManager__nodeEvictionRate",
            ".nan",
            "controllerManager.nodeEvictionRate",
            id="NaN",
        ),
    ],
)
def test_admin_parameters_form_names_the_field(
    room: Room, field: str, value: str, words: str
) -> None:
    from controller.admin import ParametersForm

    blank = ParametersForm(instance=room.parameters)
    data = {name: blank.fields[name].initial for name in blank.setting_fields}
    form = ParametersForm(data={**data, field: value}, instance=room.parameters)
    assert not form.is_valid()
    assert words in form.errors[field][0], form.errors


def test_admin_parameters_form_has_no_field_the_release_lacks(room: Room) -> None:
    from controller.admin import ParametersForm

    form = ParametersForm(instance=room.parameters)
    assert "controllerManager__nodeEvictionRate" in form.fields
    assert "apiServer__bogus" not in form.fields


# -- the websocket ------------------------------------------------------------------------------
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "message, words",
    [
        pytest.param(
            {"type": "action", "action": {"type": "StopKubelet", "node": "zz"}},
            'action.node: unknown node "zz"',
            id="unknown node",
        ),
        pytest.param({"type": "explode"}, "unknown message type 'explode'", id="unknown message"),
        pytest.param(
            {"type": "action", "action": {"type": ["StopKubelet"], "node": "n-1"}},
            "action.type",
            id="type list",
        ),
        pytest.param(
            {"type": "rewind", "t": "abc"},
            "rewind",
            id="rewind word",
        ),
        pytest.param(
            {"type": "params", "params": [1]},
            "parameters",
            id="params list",
        ),
    ],
)
def test_websocket_replies_with_an_error_naming_the_field(
    message: dict[str, Any], words: str
) -> None:
    from playground.asgi import application

    room = create.room_create("audit-ws", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "test")
    before = state(room)

    async def scenario() -> dict[str, Any]:
        comm = WebsocketCommunicator(
            application,
            f"/ws/rooms/{room.slug}/?token={room.operator_token}&name=audit",
            headers=[(b"origin", b"http://localhost")],
        )
        connected, _ = await comm.connect()
        assert connected
        try:
            snapshot = await comm.receive_json_from(timeout=10)
            assert snapshot["type"] == "snapshot"
            await comm.send_json_to(message)
            while True:  # an error reply comes at once; a dead consumer sends nothing
                reply = await comm.receive_json_from(timeout=3)
                if reply["type"] not in ("presence", "delta", "clock"):
                    return reply
        finally:
            await comm.disconnect()

    try:
        reply = async_to_sync(scenario)()
    finally:
        runtime.forget_cache()
    assert reply["type"] == "error", reply
    assert words in reply["message"], reply
    assert state(room) == before
