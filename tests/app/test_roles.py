"""Who may change a room: a role x action matrix over every websocket message type
(controller/live/consumers.py) and every HTTP endpoint (controller/urls.py).

Roles: the room's operator token; the room's owner and a staff user, signed in (roles.py:
the operator by design); a signed-in user who does not own the room; no token; a wrong
token; another room's operator token. Only the operator may change a room, and every refusal
leaves the room exactly as it was (its clock, speed, pause, sequence and action log). In a
lesson room only the operator leads (lesson.next/prev/reveal); anyone watching answers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from controller.lessons import definition
from controller.models import Action, LessonAnswer, LessonState, Room
from controller.rooms import catalog, compare, controls, create, tick
from playground.asgi import application
from tests.app.scenarios import pod, scenario

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_channel_layer"),
]

SCENARIO = scenario("roles", 2, (pod(),))

# role -> may it change the room?
ROLES = {
    "operator-token": True,
    "owner-signed-in": True,
    "staff-signed-in": True,
    "other-user-signed-in": False,
    "no-token": False,
    "wrong-token": False,
    "other-rooms-token": False,
}

# message type -> (message, the reply an operator gets, does it change the room?)
MESSAGES: dict[str, tuple[Any, str, bool]] = {
    "snapshot": ({"type": "snapshot"}, "snapshot", False),
    "ping": ({"type": "ping"}, "pong", False),
    "action": ({"type": "action", "action": {"type": "StopKubelet", "node": "n-1"}}, "ack", True),
    "params": (
        {"type": "params", "params": {"controllerManager": {"nodeEvictionRate": 0.2}}},
        "ack",
        True,
    ),
    "speed": ({"type": "speed", "value": 20}, "ack", True),
    "pause": ({"type": "pause"}, "ack", True),
    "resume": ({"type": "resume"}, "ack", True),
    "step": ({"type": "step", "value": 30}, "ack", True),
    "rewind": ({"type": "rewind", "t": 0}, "ack", True),
    "unknown-type": ({"type": "explode"}, "error", False),
    "not-an-object": (["pause"], "error", False),
}
CHANGES = {k for k, (_m, _r, changes) in MESSAGES.items() if changes}
VIEWER_REFUSAL = "Only operators can change this room; you are watching."


def fingerprint(room: Room) -> tuple:
    room = Room.objects.get(pk=room.pk)
    return (
        room.speed,
        room.paused,
        room.sim_ms,
        room.sim_anchor_ms,
        room.wall_anchor,
        room.seq,
        room.version,
        Action.objects.filter(room=room).count(),
    )


def credentials(role: str, room: Room, other: Room) -> tuple[str, str]:
    """(token for the query string, session cookie) of ``role`` for ``room``."""
    users = get_user_model()
    client = Client()
    if role == "owner-signed-in":
        user = users.objects.create_user("owner", password="x" * 12)
        Room.objects.filter(pk=room.pk).update(owner=user)
        client.force_login(user)
    elif role == "staff-signed-in":
        client.force_login(users.objects.create_user("staff", password="x" * 12, is_staff=True))
    elif role == "other-user-signed-in":
        user = users.objects.create_user("someone", password="x" * 12)
        Room.objects.filter(pk=other.pk).update(owner=user)  # owns another room, not this one
        client.force_login(user)
    cookie = client.cookies["sessionid"].value if "sessionid" in client.cookies else ""
    token = {
        "operator-token": room.operator_token,
        "wrong-token": "not-" + room.operator_token,
        "other-rooms-token": other.operator_token,
    }.get(role, "")
    return token, cookie


def rooms() -> tuple[Room, Room]:
    room = create.room_create("roles", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "setup")
    controls.room_control(room.pk, "step", 60, "setup")
    # The step is applied by the next tick: run it here (no worker needed), so that there is
    # simulated time to rewind over.
    tick.room_advance(room.pk, None)
    other = create.room_create("other", SCENARIO, None, 10.0)
    return Room.objects.get(pk=room.pk), other


async def _reply(comm: WebsocketCommunicator, kinds: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = await comm.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        if msg.get("type") in kinds:
            return msg
    raise AssertionError(f"no {kinds} reply")


@pytest.mark.parametrize("message", list(MESSAGES))
@pytest.mark.parametrize("role", list(ROLES))
def test_websocket_message_matrix(role: str, message: str) -> None:
    room, other = rooms()
    token, cookie = credentials(role, room, other)
    if message == "resume":
        pass  # the room is paused: resuming changes it
    elif message == "pause":
        controls.room_control(room.pk, "resume", None, "setup")
    before = fingerprint(room)
    content, operator_reply, changes = MESSAGES[message]
    may_operate = ROLES[role]

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        headers = [(b"origin", b"http://localhost")]
        if cookie:
            headers.append((b"cookie", f"sessionid={cookie}".encode()))
        comm = WebsocketCommunicator(
            application, f"/ws/rooms/{room.slug}/?token={token}&name=x", headers=headers
        )
        connected, _ = await comm.connect()
        assert connected
        first = await _reply(comm, {"snapshot"})
        await comm.send_json_to(content)
        reply = await _reply(comm, {"ack", "error", "snapshot", "pong"})
        await comm.disconnect()
        return first, reply

    first, reply = async_to_sync(run)()
    assert first["role"] == ("operator" if may_operate else "viewer")
    after = fingerprint(room)
    if may_operate:
        assert reply["type"] == operator_reply, reply
        assert (after != before) == changes
    else:
        assert after == before
        if message in CHANGES or message == "unknown-type":
            assert reply == {"type": "error", "message": VIEWER_REFUSAL}
        else:
            assert reply["type"] == operator_reply
        if reply["type"] == "snapshot":
            assert room.operator_token not in str(reply)


# HTTP: every url name of controller/urls.py -> what it is of (None, the room, the comparison)
# and its other arguments
ENDPOINTS: dict[str, tuple[str | None, list[str]]] = {
    "index": (None, []),
    "healthz": (None, []),
    "room": ("room", []),
    "room-export": ("room", []),
    "room-events": ("room", []),
    "room-timeline-csv": ("room", []),
    "room-events-yaml": ("room", []),
    "room-manifests": ("room", []),
    "room-whatif": ("room", []),
    "room-whatif-result": ("room", ["no-such-task"]),
    "room-snapshot": ("room", []),
    "room-build": ("room", []),
    "room-series": ("room", []),
    "compare": ("comparison", []),
    # A long kubectl output's Preview, by its secret id (kept in Redis an hour): an unknown
    # id is 404 for everyone, on every method, and shows nobody's token.
    "import-preview": (None, ["no-such-preview"]),
    "import-preview-json": (None, ["no-such-preview"]),
    # The room's kubeconfig: GET the viewer's, POST the operator's (to the operator only).
    "room-kubeconfig": ("room", []),
    # The room's Kubernetes API: a bearer token or nothing (the pages' ?token= is no credential).
    "kube-api": ("room", ["api/v1/nodes"]),
}
UNKNOWN_ID = {"import-preview", "import-preview-json", "room-whatif-result"}
GET_ONLY = {
    "import-preview-json",
    "healthz",
    "room-export",
    "room-events",
    "room-timeline-csv",
    "room-events-yaml",
    "room-manifests",
    "room-whatif-result",
    "room-snapshot",
    "room-build",
    "room-series",
}
# Operator only, and changes no room: a headless What-if run in the worker (CPU).
OPERATOR_ONLY = {"room-whatif"}


def test_the_http_matrix_covers_every_endpoint() -> None:
    from controller import urls

    assert {p.name for p in urls.urlpatterns} == set(ENDPOINTS)


def endpoints(room: Room, slug_cmp: str) -> list[tuple[str, str]]:
    slugs = {None: None, "room": room.slug, "comparison": slug_cmp}
    return [
        (name, reverse(name, args=([slugs[of]] if of else []) + extra))
        for name, (of, extra) in ENDPOINTS.items()
    ]


@pytest.mark.parametrize("role", list(ROLES))
def test_http_endpoint_matrix(role: str) -> None:
    """No HTTP endpoint changes a room, for anyone; a page shows the operator link and token
    only to the operator; a What-if run is the operator's only."""
    sides = [("a", {"apiServer": {}}), ("b", {"apiServer": {}})]
    comparison = compare.comparison_create("cmp", SCENARIO, sides, None, 10.0)
    room = Room.objects.get(pk=comparison.left_id)
    other = create.room_create("other", SCENARIO, None, 10.0)
    token, cookie = credentials(role, room, other)
    client = Client()
    if cookie:
        client.cookies["sessionid"] = cookie
    before = fingerprint(room)
    for name, url in endpoints(room, comparison.slug):
        for method in ("get", "post", "put", "delete"):
            data = {"token": token, "speed": 50, "zone": "z"}
            if method == "get":
                response = client.get(url, data)
            elif method == "post":  # the token in the query (pages) and the form (What-if)
                response = client.post(f"{url}?token={token}", data)
            else:
                response = getattr(client, method)(f"{url}?token={token}")
            body = response.content.decode(errors="replace")
            what = f"{method.upper()} {name} as {role}"
            if name in GET_ONLY and method != "get":
                assert response.status_code == 405, what
            elif name in OPERATOR_ONLY:
                if method != "post":
                    assert response.status_code == 405, what
                elif ROLES[role]:
                    assert response.status_code == 200 and "id" in response.json(), what
                else:
                    assert response.status_code == 403, what
                    assert response.json() == {
                        "error": "only the room's operator may run a What-if"
                    }, what
            elif name in UNKNOWN_ID:
                assert response.status_code == 404, what
            elif name == "kube-api":
                assert response.status_code == 401, what
                assert response.json()["kind"] == "Status", what
            elif name == "room-kubeconfig":
                if method == "get":
                    assert response.status_code == 200, what
                elif method == "post":
                    assert response.status_code == (200 if ROLES[role] else 403), what
                else:
                    assert response.status_code == 405, what
            else:
                assert response.status_code in (200, 503), what  # healthz: 503 without beat
            shows_token = room.operator_token in body
            if name in ("room", "compare") and response.status_code == 200:
                marker = f'data-operator="{"1" if ROLES[role] else "0"}"'
                assert marker in body, what
            if name == "room" and response.status_code == 200:
                assert shows_token == ROLES[role], what  # the operator link
            elif name == "compare" and response.status_code == 200:
                # The token only when it came with the request (owner and staff: their session).
                assert shows_token == (role == "operator-token"), what
            elif name == "room-kubeconfig" and method == "post" and ROLES[role]:
                assert shows_token, what  # the operator's own kubeconfig
            elif name != "index":
                assert not shows_token, what
    # The index page's POST is room creation (refused: not a valid form); nothing changed.
    assert fingerprint(room) == before
    assert Room.objects.count() == 3


LESSON = (catalog.BUILTIN_DIR / "20-lesson-heartbeats.yaml").read_text()
# lesson message -> may a viewer send it?
LESSON_MESSAGES = {"lesson.next": False, "lesson.prev": False, "lesson.reveal": False}
LESSON_MESSAGES["lesson.answer"] = True  # every watcher answers the class's question


def lesson_state(room: Room) -> tuple:
    ls = LessonState.objects.get(room=room)
    return (ls.step, ls.checkpoint, ls.revealed, LessonAnswer.objects.filter(room=room).count())


@pytest.mark.parametrize("message", list(LESSON_MESSAGES))
@pytest.mark.parametrize("role", list(ROLES))
def test_lesson_message_matrix(role: str, message: str) -> None:
    """The lesson's messages on a lesson room paused at its first question (step 1 shown):
    only the operator leads (next, prev, reveal); anyone answers; no answer changes the room."""
    room = create.room_create("lesson", LESSON, None, 10.0)
    other = create.room_create("other", SCENARIO, None, 10.0)
    controls.room_control(room.pk, "pause", None, "setup")
    cp = definition._checkpoints(definition.lesson_of(room))[0][1]
    LessonState.objects.filter(room=room).update(step=1, checkpoint=cp.id)
    token, cookie = credentials(role, room, other)
    before, lesson_before = fingerprint(room), lesson_state(room)
    content = {"type": message}
    if message == "lesson.answer":
        content.update(checkpoint=cp.id, answer=1, name="Ann\x00" if role == "no-token" else "Ann")

    async def run() -> dict[str, Any]:
        headers = [(b"origin", b"http://localhost")]
        if cookie:
            headers.append((b"cookie", f"sessionid={cookie}".encode()))
        comm = WebsocketCommunicator(
            application, f"/ws/rooms/{room.slug}/?token={token}&client=c1", headers=headers
        )
        assert (await comm.connect())[0]
        await _reply(comm, {"snapshot"})
        await comm.send_json_to(content)
        reply = await _reply(comm, {"ack", "error"})
        await comm.disconnect()
        return reply

    reply = async_to_sync(run)()
    after = lesson_state(room)
    if message == "lesson.answer" and role == "no-token":  # a NUL in the name: refused
        assert reply["message"].startswith("lesson.answer.name: contains a NUL character")
        assert after == lesson_before
    elif ROLES[role] or LESSON_MESSAGES[message]:
        assert reply["type"] == "ack", reply
        assert after != lesson_before
    else:
        assert reply == {
            "type": "error",
            "message": f"{message}: only the operator leads the lesson.",
        }
        assert after == lesson_before
    # Next at a question not yet revealed reveals it: the clock stays where it is.
    assert fingerprint(room) == before


def test_the_websocket_matrix_covers_every_message_type() -> None:
    """Every message type consumers.py handles (``kind == "..."``, ``kind in (...)``) is in
    one of the matrices above: a new one fails here until it is added."""
    import re
    from pathlib import Path

    from controller.live import consumers

    source = Path(consumers.__file__).read_text()
    handled = set()
    for test in re.findall(r'\bkind (?:==|in) (\("[^)]*\)|"[^"]+")', source):
        handled |= set(re.findall(r'"([^"]+)"', test))
    covered = {m["type"] for m, _reply, _changes in MESSAGES.values() if isinstance(m, dict)}
    covered |= set(LESSON_MESSAGES)
    assert handled <= covered, sorted(handled - covered)
    assert len(handled) >= 13  # the pattern still finds them
