"""One rule, checked on the wire: nothing a viewer, a learner alone or the projector receives
answers an open question (issue #38).

Every built-in lesson is walked question by question, in a class's room (a viewer and the
presenter view, the projector) and in a room learning alone (its learner). While each
question is open, everything those pages receive is searched for that question's answer:
every websocket message from the one that opens the question on (the pausing delta, the held
snapshot, the replies to an answer, a snapshot asked for again), and every HTTP answer their
credentials reach (the page, snapshot.json, events.json, timeline.csv, events.yaml,
manifests.yaml, export.yaml, series.json), and what the room's Kubernetes API serves their
kubectl (the viewer's kubeconfig; a learner alone's operator one too): nodes, pods, events
(core/v1 and events.k8s.io/v1, each Event also as the timeline event it stores), leases,
deployments, node metrics, as JSON and as Tables. Searched for, in any key: the ``why``, the
expectations' notes, an expectation itself (a copy of it, a timeline event it names in its
window, a view row that states it ahead of time), the answer under an ``answer`` key, and for
a time question its value as a number in any field and as a time in any text.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import yaml
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from controller.engine.expect import CONTROL_KEYS, matches
from controller.engine.holdback import _in_window
from controller.engine.lesson import Checkpoint
from controller.engine.scenario import load_scenario
from controller.kubeapi import auth
from controller.lessons import classroom, definition
from controller.models import LessonState, Room
from controller.rooms import catalog, create, runtime
from controller.rooms import tick as rooms_tick
from controller.timeline_store import last as last_events

LESSONS = catalog.builtin_lessons()
DOWNLOADS = (
    "snapshot.json",
    "events.json",
    "timeline.csv",
    "events.yaml",
    "manifests.yaml",
    "export.yaml",
    "series.json",
)


# -- what is searched ------------------------------------------------------------------------
def _walk(obj: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value of a decoded body with its path (dicts, lists, leaves)."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _time_texts(seconds: float) -> list[re.Pattern[str]]:
    """A time as a text may write it: "115 s", "115s", "115 seconds", "1m55s", "01:55"."""
    whole = f"{seconds:g}"
    out = [re.compile(rf"(?<![\d.:]){re.escape(whole)}\s*(?:s\b|sec|second)")]
    if float(seconds).is_integer() and seconds >= 60:
        m, s = divmod(int(seconds), 60)
        out.append(re.compile(rf"(?<![\d.:])0?{m}:{s:02d}(?![\d:])"))
        out.append(re.compile(rf"(?<![\d.]){m}\s*m\s*0?{s}\s*s\b"))
    return out


def _identity(e: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in e.items() if k not in CONTROL_KEYS}


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, int | float) and isinstance(got, int | float):
        return not isinstance(want, bool) and abs(float(want) - float(got)) < 1e-9
    return str(want) == str(got)


def leaks(cp: Checkpoint, pause_s: float, where: str, body: Any, mine: Any) -> list[str]:
    """What in ``body`` answers ``cp`` (``mine``: the answer this page gave, which it may get
    back)."""
    found: list[str] = []
    texts = [cp.why, *(e["note"] for e in cp.expect if e.get("note"))]
    secrets = [_squash(t) for t in texts if t]
    times = _time_texts(float(cp.answer)) if cp.kind == "time" else []
    for path, v in _walk(body):
        if isinstance(v, str):
            s = _squash(v)
            for secret in secrets:
                if secret[:60] in s or secret[-60:] in s:
                    found.append(f"{where}{path}: the why/note {secret[:40]!r}...")
            for pattern in times:
                if pattern.search(v):
                    found.append(f"{where}{path}: the answer {cp.answer:g} s in {v[:120]!r}")
        elif isinstance(v, int | float) and not isinstance(v, bool) and cp.kind == "time":
            counter = path.endswith((".idx", ".seq"))  # an event's index, the room's version
            if abs(float(v) - float(cp.answer)) < 1e-9 and not _same(mine, v) and not counter:
                found.append(f"{where}{path}: the answer {cp.answer:g} s as a number")
        elif isinstance(v, dict):
            if v.get("answer") is not None and _same(cp.answer, v["answer"]):
                if not _same(mine, v["answer"]) or path.endswith("checkpoint"):
                    found.append(f"{where}{path}: answer {v['answer']!r}")
            for key in ("why", "expect", "right"):
                if v.get(key):
                    found.append(f"{where}{path}.{key}: {str(v[key])[:80]!r}")
            found += _expectation_leaks(cp, pause_s, f"{where}{path}", v)
    return found


def _expectation_leaks(cp: Checkpoint, pause_s: float, where: str, d: dict[str, Any]) -> list[str]:
    out = []
    for e in cp.expect:
        ident = _identity(e)
        # A copy of the expectation (in any key: held, expect, a download's spec).
        if all(k in d and _same(v, d[k]) for k, v in e.items() if k != "note"):
            out.append(f"{where}: the expectation {e}")
            continue
        if e.get("absent"):
            continue
        # A timeline event it names, in its window (the one the question waited for is the
        # question's own premise).
        if d.get("type") == e["type"] and matches(e, d) and _in_window(e, d.get("t")):
            if not (cp.when_event is not None and matches(cp.when_event, d)):
                out.append(f"{where}: the event {e} ({d})")
            continue
        # A view row that states it ahead of time (a zone's rate of 0 before its ZoneRate).
        start = e.get("at", e.get("from", (e.get("between") or [None])[0]))
        premise = cp.when_event is not None and matches(cp.when_event, {**ident, "type": e["type"]})
        if "type" not in d and start is not None and float(start) >= pause_s and not premise:
            named = {k: v for k, v in ident.items() if k in ("node", "pod", "zone")}
            rest = {k: v for k, v in ident.items() if k not in named}
            if named and rest and all(k in d and _same(v, d[k]) for k, v in ident.items()):
                out.append(f"{where}: the row {d} states {e}")
    return out


def _decoded(name: str, body: str) -> Any:
    """A download decoded (JSON, YAML documents, CSV rows as events), or its text."""
    if name.endswith(".json"):
        return json.loads(body)
    if name.endswith(".yaml"):
        return [body, *yaml.load_all(body, Loader=yaml.CSafeLoader)]  # libyaml: the same data
    if name.endswith(".csv"):
        rows = []
        for row in csv.DictReader(io.StringIO(body)):
            fields = json.loads(row.get("fields") or row.get(list(row)[-1]) or "{}")
            rows.append({**fields, "t": float(row[list(row)[0]]), "type": row["type"]})
        return [body, rows]
    return body


# -- driving the lesson ----------------------------------------------------------------------
def _tick(room: Room, wall_s: float) -> Room:
    r = Room.objects.get(pk=room.pk)
    rooms_tick.room_advance(r.pk, r.wall_anchor + timedelta(seconds=wall_s))
    return Room.objects.get(pk=room.pk)


def _wrong(cp: Checkpoint) -> float | int:
    if cp.kind == "choice":
        return (int(cp.answer) + 1) % len(cp.choices)
    return float(cp.answer) + 37


async def _connect(room: Room, token: str, client: str, present: bool) -> WebsocketCommunicator:
    from playground.asgi import application

    comm = WebsocketCommunicator(
        application,
        f"/ws/rooms/{room.slug}/?token={token}&name={client}&client={client}"
        f"&present={1 if present else 0}",
        headers=[(b"origin", b"http://localhost")],
    )
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _drain(comm: WebsocketCommunicator, until=None) -> list[dict[str, Any]]:
    """Messages until ``until`` matched one (if given), then until none comes for 0.5 s."""
    got: list[dict[str, Any]] = []
    if until is not None:
        for _ in range(200):
            got.append(await comm.receive_json_from(timeout=20))
            if until(got[-1]):
                break
        else:
            raise AssertionError("the awaited message never came")
    while not await comm.receive_nothing(timeout=0.5):
        got.append(await comm.receive_json_from(timeout=5))
    return got


def _downloads(room: Room, token: str) -> list[tuple[str, Any]]:
    client = Client()
    q = f"?token={token}" if token else ""
    base = f"/rooms/{room.slug}/"
    out = [("page", client.get(base + q).content.decode())]
    for name in DOWNLOADS:
        resp = client.get(base + name + q)
        assert resp.status_code == 200, (name, resp.status_code)
        out.append((name, _decoded(name, resp.content.decode())))
    return out


JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
KUBEAPI = (
    ("api/v1/nodes", JSON),
    ("api/v1/nodes", TABLE),
    ("api/v1/pods", JSON),
    ("api/v1/pods", TABLE),
    ("api/v1/events", JSON),
    ("api/v1/events", TABLE),
    ("apis/events.k8s.io/v1/events", JSON),
    ("apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", JSON),
    ("apis/apps/v1/deployments", JSON),
    ("apis/metrics.k8s.io/v1beta1/nodes", JSON),
)


def _kubeapi(room: Room, bearer: str) -> list[tuple[str, Any]]:
    """What the room's Kubernetes API answers a kubectl with this token: the bodies, and each
    Event it lists as the timeline event it stores (its resourceVersion is one past the index
    of the row that last wrote it), so that an Event the question's expect names is found."""
    client = Client()
    rows = {idx: (t, typ, data) for idx, t, typ, data in last_events(room, 100_000)}
    out: list[tuple[str, Any]] = []
    for path, accept in KUBEAPI:
        resp = client.get(
            f"/k8s/rooms/{room.slug}/{path}",
            HTTP_ACCEPT=accept,
            HTTP_AUTHORIZATION=f"Bearer {bearer}",
        )
        assert resp.status_code == 200, (path, resp.status_code, resp.content[:300])
        body = resp.json()
        out.append((f"kubeapi {path}", body))
        if path.endswith("events") and accept == JSON:
            for item in body["items"]:
                t, typ, data = rows[int(item["metadata"]["resourceVersion"]) - 1]
                out.append(
                    (
                        f"kubeapi {path} {item['metadata']['name']}",
                        {**data, "t": t / 1000, "type": typ},
                    )
                )
    return out


Check = Callable[[Checkpoint, float, str, Any, Any], list[str]]


def walk_lesson(builtin: dict[str, Any], solo: bool, check: Check | None = None) -> list[str]:
    """The lesson's every question: what the pages (viewer and projector, or the learner)
    got while it was open that answers it (``check``: ``leaks`` unless given); and where a
    page that answers saw the class's counts before the reveal. Each page is also opened
    again while the question is open: its first snapshot is searched too."""
    check = check or leaks
    room = create.room_create("wire", builtin["yaml"], None, 100.0)
    if solo:
        classroom.make_solo(room)
    lesson = definition.lesson_of(room)
    assert lesson is not None
    end = load_scenario(builtin["yaml"]).duration_ms
    problems: list[str] = []
    pages = (
        [("learner", room.operator_token, False)]
        if solo
        else [("viewer", "", False), ("projector", room.operator_token, True)]
    )

    async def scenario() -> None:
        comms = {n: await _connect(room, tok, n, present) for n, tok, present in pages}
        try:
            for comm in comms.values():
                await _drain(comm, lambda m: m["type"] == "snapshot")
            asked = 0
            while True:
                r = await database_sync_to_async(Room.objects.get)(pk=room.pk)
                # To the scenario's end at 100x (+5 us: timedelta rounding); a question stops it.
                r = await database_sync_to_async(_tick)(r, (end - r.sim_ms) / 100 / 1000 + 5e-6)
                if not r.paused:
                    break
                ls = await database_sync_to_async(LessonState.objects.get)(room=r)
                if solo and not ls.checkpoint:  # stopped at a step's text: the learner goes on
                    await database_sync_to_async(classroom.next_step)(r.pk, "t")
                    continue
                cp = next(c for c in lesson.checkpoints if c.id == ls.checkpoint)
                asked += 1
                pause_s = r.sim_ms / 1000
                for name, token, present in pages:
                    comm = comms[name]
                    got = await _drain(
                        comm, lambda m, cp=cp: m["type"] == "lesson" and m["checkpoint"] == cp.id
                    )
                    got = got[next(i for i, m in enumerate(got) if m["type"] == "lesson") :]
                    mine = None
                    if name != "projector":  # the page that answers answers (wrong)
                        mine = _wrong(cp)
                        await comm.send_json_to(
                            {"type": "lesson.answer", "checkpoint": cp.id, "answer": mine}
                        )
                        got += await _drain(comm, lambda m: m["type"] in ("ack", "error"))
                        assert got[-1]["type"] != "error" or got[-1], got[-1]
                    await comm.send_json_to({"type": "snapshot", "inline": True})
                    got += await _drain(comm, lambda m: m["type"] == "snapshot")
                    # The same page opened again (a reload, a reconnect): its first snapshot.
                    again = await _connect(room, token, f"{name}-again", present)
                    try:
                        got += await _drain(again, lambda m: m["type"] == "snapshot")
                    finally:
                        await again.disconnect()
                    for m in got:
                        problems.extend(check(cp, pause_s, f"{name} ws {m['type']}", m, mine))
                        if m["type"] == "lesson" and not m.get("revealed") and m.get("counts"):
                            problems.append(
                                f"{name} ws lesson: counts {m['counts']} before the reveal"
                            )
                    # The projector's page and downloads are its operator's (the class sees
                    # only what the presenter view shows: its websocket).
                    http = (
                        []
                        if name == "projector"
                        else await database_sync_to_async(_downloads)(r, token)
                    )
                    # Its kubectl: the viewer's kubeconfig (the lesson's link), and a learner
                    # alone may use the operator's of their own room too.
                    bearers = [auth.viewer_token(r)] + ([token] if solo else [])
                    for bearer in [] if name == "projector" else bearers:
                        http += await database_sync_to_async(_kubeapi)(r, bearer)
                    for where, body in http:
                        problems.extend(check(cp, pause_s, f"{name} {where}", body, mine))
                await database_sync_to_async(classroom.reveal)(r.pk)
                await database_sync_to_async(classroom.next_step)(r.pk, "t")
                for comm in comms.values():
                    await _drain(comm)
            assert asked == len(lesson.checkpoints)
        finally:
            for comm in comms.values():
                await comm.disconnect()

    try:
        async_to_sync(scenario)()
    finally:
        runtime.forget_cache()
    return problems


def test_downloads_during_a_lesson_leave_out_the_faults_still_to_come(client, db: None) -> None:
    """The tour at its first question (60 s): a viewer's and the learner's export.yaml has
    b-1's StopKubelet (60 s), not the 430 s partitions nor the 540 s zone outage that later
    steps bring (nor does manifests.yaml); the class's operator keeps the whole lesson."""
    tour = next(s for s in LESSONS if s["id"] == catalog.DEMO_LESSON)
    room = create.room_create("tour", tour["yaml"], None, 10.0)
    alone = create.room_create("alone", tour["yaml"], None, 10.0)
    classroom.make_solo(alone)
    try:
        for r, token in ((room, ""), (alone, alone.operator_token)):
            r = _tick(r, 10)
            assert (r.sim_ms, LessonState.objects.get(room=r).checkpoint) == (60_000, "heartbeats")
            for name in ("export.yaml", "manifests.yaml"):
                body = client.get(f"/rooms/{r.slug}/{name}?token={token}").content.decode()
                if name == "export.yaml":  # (manifests: the cluster now, no faults)
                    assert "type: StopKubelet" in body, name
                assert "PartitionNode" not in body and "ZoneOutage" not in body, name
        operator = client.get(f"/rooms/{room.slug}/export.yaml?token={room.operator_token}")
        assert b"PartitionNode" in operator.content and b"ZoneOutage" in operator.content
    finally:
        runtime.forget_cache()
