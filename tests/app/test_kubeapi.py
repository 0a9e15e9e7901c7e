"""A room's Kubernetes API in process (issue #36): the ported printers and duration, the
selectors, discovery's negotiation, the protobuf SelfSubjectAccessReview, the time mapping,
and the HTTP answers (Status codes, tokens, limit/continue, watch after a rewind) through
Django's ASGI app. kubectl itself: test_kubeapi_kubectl.py."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import orjson
import pytest
from django.test import AsyncClient, Client

from controller.kubeapi import auth, discovery, printers, protobuf, selectors
from controller.kubeapi.errors import ApiError
from controller.kubeapi.objects import Clock, pod
from controller.models import Room
from controller.rooms import controls, create
from tests.app.test_kubeapi_kubectl import SCENARIO

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
AGG = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (10799, "179m"),
        (3 * 3600, "3h"),
        (7 * 3600 + 59 * 60, "7h59m"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (2 * 365 * 86400, "2y"),
        (2 * 365 * 86400 + 86400, "2y1d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_is_kubernetes_own(seconds: int, shown: str) -> None:
    assert printers.human_duration(seconds) == shown


def test_ages_read_in_simulated_time_at_any_speed() -> None:
    """A pod created 300 simulated seconds ago reads 5m, whatever the speed: its timestamp
    is the wall instant ``now - 300 s`` at answer time."""
    clock = Clock(1000.0, datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC))
    obj = pod({"key": "default/web-1", "created": 700.0, "phase": "Pending"}, clock, 1)
    assert obj["metadata"]["creationTimestamp"] == "2026-12-07T11:55:00Z"
    assert printers.print_pod(obj, clock)[4] == "5m"


def test_a_pod_row_made_from_its_view_is_the_printed_pod() -> None:
    """printers.pod_view_row (the fast Table of pods) equals printPod over objects.pod,
    for every state a view can be in."""
    clock = Clock(1000.0, datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC))
    base = {"key": "default/web-1", "created": 700.0, "uid": "u1", "labels": {"app": "web"}}
    variants = [
        {"phase": "Pending"},
        {"phase": "Pending", "node": "a-1"},
        {
            "phase": "Running",
            "node": "a-1",
            "started": True,
            "ready": True,
            "owner": "ReplicaSet/web-x",
        },
        {"phase": "Running", "node": "a-1", "started": True, "ready": False},
        {"phase": "Running", "node": "a-1", "started": False},
        {
            "phase": "Running",
            "node": "a-1",
            "started": True,
            "ready": True,
            "deletionTimestamp": 990.0,
        },
        {
            "phase": "Running",
            "node": "a-1",
            "started": True,
            "reason": "NodeLost",
            "deletionTimestamp": 900.0,
        },
        {"phase": "Failed", "node": "a-1", "reason": "Evicted", "message": "m"},
        {"phase": "Succeeded", "node": "a-1"},
        {
            "phase": "Running",
            "node": "a-1",
            "started": True,
            "ready": True,
            "reason": "Completed",
            "containers": [{"name": "a", "requests": {}}, {"name": "b", "requests": {"cpu": 100}}],
        },
    ]
    for variant in variants:
        view = {**base, **variant}
        for include in ("Metadata", "None"):
            want = printers.row("Pod", pod(view, clock, 7), clock, include)
            assert printers.pod_view_row(view, clock, 7, include) == want, variant


def test_label_selectors() -> None:
    match = selectors.parse_labels("app in (web,api),tier notin (db),!canary,zone")
    assert match({"app": "web", "zone": "a"})
    assert not match({"app": "web", "zone": "a", "canary": "1"})
    assert not match({"app": "db", "zone": "a"})
    assert not match({"app": "api", "tier": "db", "zone": "a"})
    assert not match({"app": "web"})
    assert selectors.parse_labels("app=web,env!=prod")({"app": "web"})
    assert selectors.parse_labels("")({})
    with pytest.raises(ApiError) as bad:
        selectors.parse_labels("app in (web")
    assert bad.value.code == 400


def test_field_selectors_are_a_set_in_any_order() -> None:
    obj = {
        "metadata": {"name": "db-0", "namespace": "default"},
        "spec": {"nodeName": "a-1"},
        "status": {"phase": "Running"},
    }
    for text in (
        "spec.nodeName=a-1,status.phase!=Failed,status.phase!=Succeeded",
        "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName=a-1",
    ):
        assert selectors.parse_fields(text, "Pod")(obj)
    assert not selectors.parse_fields("spec.nodeName==a-2", "Pod")(obj)
    event = {
        "metadata": {"name": "x"},
        "involvedObject": {"kind": "Node", "name": "a-1", "namespace": "", "uid": "a-1"},
    }
    assert selectors.parse_fields(
        "involvedObject.uid=a-1,involvedObject.name=a-1,involvedObject.namespace=,involvedObject.kind=Node",
        "Event",
    )(event)
    with pytest.raises(ApiError) as bad:
        selectors.parse_fields("spec.bogus=1", "Pod")
    assert bad.value.code == 400 and "field label not supported: spec.bogus" in bad.value.message


def test_discovery_answers_the_form_the_client_understands() -> None:
    v2b1 = AGG.format(v="v2beta1") + ",application/json"  # kubectl 1.27-1.29
    v2 = f"{AGG.format(v='v2')},{AGG.format(v='v2beta1')},application/json"  # 1.30+
    assert discovery.negotiate_discovery(v2b1) == "v2beta1"
    assert discovery.negotiate_discovery(v2) == "v2"
    assert discovery.negotiate_discovery("application/json, */*") == "legacy"
    assert discovery.negotiate_discovery("application/vnd.kubernetes.protobuf") is None
    core = discovery.resource_list("", "v1")
    eviction = next(r for r in core["resources"] if r["name"] == "pods/eviction")
    assert (eviction["group"], eviction["version"], eviction["kind"]) == (
        "policy",
        "v1",
        "Eviction",
    )


def _field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_a_protobuf_access_review_is_read() -> None:
    """kubectl 1.32+ posts ``auth can-i`` as protobuf: the k8s envelope, then the review."""
    attrs = _field(1, b"default") + _field(2, b"delete") + _field(5, b"pods")
    review = _field(1, b"") + _field(2, _field(1, attrs))
    body = protobuf.MAGIC + _field(1, _field(1, b"authorization.k8s.io/v1")) + _field(2, review)
    assert protobuf.access_review_spec(body) == {
        "resourceAttributes": {"namespace": "default", "verb": "delete", "resource": "pods"}
    }
    with pytest.raises(ApiError):
        protobuf.access_review_spec(b"k8s\x00\x12\x7f")


# -- through the app -------------------------------------------------------------------------
@pytest.fixture
def room(transactional_db: None) -> Room:
    return create.room_create("api", SCENARIO, None, 10.0)


def _get(
    client: Client,
    room: Room,
    path: str,
    token: str | None = None,
    accept: str = "application/json",
    **query,
):
    headers = {"HTTP_ACCEPT": accept}
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client.get(f"/k8s/rooms/{room.slug}/{path}", query, **headers)


def test_tokens_and_status_errors(room: Room) -> None:
    client = Client()
    other = create.room_create("other", SCENARIO, None, 10.0)
    viewer = auth.viewer_token(room)
    assert _get(client, room, "version").json()["gitVersion"] == "v1.34.0"
    for token in (None, "nope", other.operator_token, auth.viewer_token(other)):
        answer = _get(client, room, "api/v1/nodes", token)
        assert answer.status_code == 401 and answer.json()["reason"] == "Unauthorized", token
    answer = _get(client, room, "api/v1/nodes/nope", viewer)
    assert answer.status_code == 404
    assert answer.json()["message"] == 'nodes "nope" not found'
    assert _get(client, room, "api/v1/widgets", viewer).status_code == 404
    assert _get(client, room, "api/v1/nodes", viewer, labelSelector="a in (b").status_code == 400
    answer = client.patch(
        f"/k8s/rooms/{room.slug}/api/v1/nodes/a-1",
        b'{"spec":{"unschedulable":true}}',
        content_type="application/strategic-merge-patch+json",
        HTTP_AUTHORIZATION=f"Bearer {viewer}",
    )
    assert answer.status_code == 403 and answer.json()["reason"] == "Forbidden"
    operator = {"HTTP_AUTHORIZATION": f"Bearer {room.operator_token}"}
    url = f"/k8s/rooms/{room.slug}/api/v1/nodes/a-1"
    answer = client.patch(url, b"{}", content_type="application/apply-patch+yaml", **operator)
    assert answer.status_code == 415
    # A JSON patch (patches.py) that is not a list of operations, or not JSON: 400; one of a
    # field the room has no action for, or that does not apply: 422 naming what.
    for body, code in (
        (b"{}", 400),
        (b"[{not json", 400),
        (b'[{"op": "bogus", "path": "/spec"}]', 400),
        (b'[{"op": "add", "path": "/metadata/annotations/x", "value": "y"}]', 422),
        (b'[{"op": "remove", "path": "/metadata/labels/absent"}]', 422),
        (b'[{"op": "test", "path": "/spec/unschedulable", "value": true}]', 422),
    ):
        answer = client.patch(url, body, content_type="application/json-patch+json", **operator)
        assert answer.status_code == code and answer.json()["kind"] == "Status", body
    assert (
        "metadata.annotations.x"
        in client.patch(
            url,
            b'[{"op": "add", "path": "/metadata/annotations/x", "value": "y"}]',
            content_type="application/json-patch+json",
            **operator,
        ).json()["message"]
    )
    answer = client.patch(
        url, b"{not json", content_type="application/merge-patch+json", **operator
    )
    assert answer.status_code == 400
    # A field the room has no action for (labels are kubectl label's: test_kubeapi_label.py),
    # and a label kube-apiserver refuses.
    for body in (b'{"metadata":{"annotations":{"x":"y"}}}', b'{"metadata":{"labels":{"x/":"y"}}}'):
        answer = client.patch(url, body, content_type="application/merge-patch+json", **operator)
        assert answer.status_code == 422 and answer.json()["reason"] == "Invalid", body
    huge = b'{"spec":{"taints":[' + b'{"key":"k","effect":"NoSchedule"},' * 40000 + b"{}]}}"
    answer = client.patch(url, huge, content_type="application/merge-patch+json", **operator)
    assert answer.status_code == 413
    assert client.post(f"/k8s/rooms/{room.slug}/api", **operator).status_code == 405
    assert room.actions.count() == 0  # nothing refused changed anything


def test_tables_selectors_and_pages(room: Room) -> None:
    client = Client()
    viewer = auth.viewer_token(room)
    table = _get(client, room, "api/v1/nodes", viewer, TABLE).json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0] == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
    ]
    assert [r["cells"][:3] for r in table["rows"]][0] == ["a-1", "Ready", "<none>"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    full = _get(client, room, "api/v1/nodes", viewer, TABLE, includeObject="Object").json()
    assert full["rows"][0]["object"]["kind"] == "Node"
    first = _get(client, room, "api/v1/pods", viewer, limit="2").json()
    assert len(first["items"]) == 2 and first["metadata"]["continue"]
    rest = _get(
        client,
        room,
        "api/v1/pods",
        viewer,
        limit="100",
        **{"continue": first["metadata"]["continue"]},
    ).json()
    every = _get(client, room, "api/v1/pods", viewer).json()
    names = [p["metadata"]["name"] for p in first["items"] + rest["items"]]
    assert names == [p["metadata"]["name"] for p in every["items"]] and len(set(names)) == len(
        names
    )
    on_a1 = _get(
        client, room, "api/v1/pods", viewer, fieldSelector="status.phase!=Failed,spec.nodeName=a-1"
    ).json()
    assert on_a1["items"] and {p["spec"]["nodeName"] for p in on_a1["items"]} == {"a-1"}
    web = _get(client, room, "apis/apps/v1/namespaces/default/pods", viewer)
    assert web.status_code == 404
    web = _get(
        client, room, "api/v1/namespaces/default/pods", viewer, labelSelector="app in (web)"
    ).json()
    assert len(web["items"]) == 3
    leases = _get(
        client, room, "apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", viewer, TABLE
    ).json()
    assert [c["name"] for c in leases["columnDefinitions"]] == ["Name", "Holder", "Age"]
    agg = _get(client, room, "apis", viewer, AGG.format(v="v2beta1") + ",application/json")
    assert agg["Content-Type"] == AGG.format(v="v2beta1").replace(",", "")
    assert {i["metadata"]["name"] for i in agg.json()["items"]} >= {
        "apps",
        "coordination.k8s.io",
        "policy",
    }


def test_a_page_reads_its_rows_not_the_whole_room(room: Room) -> None:
    """limit/continue pages of pods, nodes and leases read at most limit + 1 view rows each
    (kubectl lists 500 at a time: 300 pages of a 150,000-pod room must not read it 300
    times), in the same order as a whole list, with the count of the rest."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from controller.models import ObjectView

    client = Client()
    viewer = auth.viewer_token(room)
    pods = ObjectView.objects.filter(room=room, kind="pod").count()
    every = [
        p["metadata"]["name"] for p in _get(client, room, "api/v1/pods", viewer).json()["items"]
    ]
    names: list[str] = []
    token = ""
    pages = 0
    while True:
        extra = {"continue": token} if token else {}
        with CaptureQueriesContext(connection) as queries:
            page = _get(client, room, "api/v1/pods", viewer, TABLE, limit="2", **extra).json()
        views = [
            q["sql"]
            for q in queries
            if "controller_objectview" in q["sql"] and '"pod"' in q["sql"].replace("'", '"')
        ]
        assert views and all("LIMIT 3" in sql for sql in views if "COUNT" not in sql), views
        names += [r["cells"][0] for r in page["rows"]]
        pages += 1
        token = page["metadata"].get("continue", "")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == pods - len(names)
    assert names == every and pages == (pods + 1) // 2
    leases = _get(
        client,
        room,
        "apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
        viewer,
        limit="3",
    ).json()
    assert len(leases["items"]) == 3 and leases["metadata"]["remainingItemCount"] == 1
    web = _get(
        client,
        room,
        "api/v1/namespaces/default/pods",
        viewer,
        limit="1",
        labelSelector="app in (web)",
    ).json()
    assert len(web["items"]) == 1 and web["metadata"]["continue"]


def test_a_watch_reads_what_the_ticks_changed(room: Room) -> None:
    """While a watch is open, each stored tick notes the nodes and pods it changed
    (controller/rooms/changes.py); a watch reads those views only, and sees a node whose
    kubelet stopped go NotReady. Without a note (nobody watched), it reads everything."""
    from datetime import timedelta

    from django.utils import timezone

    from controller.kubeapi import fanout, store
    from controller.rooms import actions, changes, tick

    room.refresh_from_db()
    before = room.seq
    tick.room_advance(room.pk, timezone.now() + timedelta(seconds=1))
    room.refresh_from_db()
    assert changes.changed(room.pk, before, room.seq) is None  # nobody watched: no note
    changes.mark_watching(room.pk)
    read = store.Read.of(room)
    previous = {k: (read.view_rv("nodes", k, t), t) for k, t in read.texts("node").items()}
    before = room.seq
    actions.action_submit(room, {"type": "StopKubelet", "node": "a-2"}, "test")
    tick.room_advance(room.pk, timezone.now() + timedelta(seconds=12))
    room.refresh_from_db()
    noted = changes.changed(room.pk, before, room.seq)
    assert noted is not None and "a-2" in noted["node"], noted
    assert len(noted["node"]) < len(previous) and len(noted["pod"]) < 9
    current = dict(previous)
    _read = store.Read.of(room)
    events = fanout.noted_events(_read, "nodes", current, sorted(noted["node"]))
    by_name = {e.obj["metadata"]["name"]: (e.type, e.obj) for e in events if e.obj}
    assert set(by_name) <= noted["node"] and "a-2" in by_name
    kind, node = by_name["a-2"]
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert kind == "MODIFIED" and ready["status"] == "Unknown"
    assert printers.print_node(node, _read.clock)[1] == "NotReady"
    assert set(current) == set(previous) and current["a-2"] != previous["a-2"]


def _watch(room: Room, token: str, query: str) -> list[dict]:
    async def go() -> list[dict]:
        client = AsyncClient()
        response = await client.get(
            f"/k8s/rooms/{room.slug}/api/v1/nodes?watch=true&{query}",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response
        lines = []
        async for chunk in response.streaming_content:
            lines += [orjson.loads(x) for x in chunk.splitlines() if x.strip()]
        return lines

    return asyncio.run(go())


def test_a_watch_from_before_a_rewind_is_gone_and_watch_list_is_refused(room: Room) -> None:
    client = Client()
    viewer = auth.viewer_token(room)
    rv = _get(client, room, "api/v1/nodes", viewer).json()["metadata"]["resourceVersion"]
    answer = _get(
        client,
        room,
        "api/v1/nodes",
        viewer,
        watch="true",
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
    )
    assert answer.status_code == 422
    events = _watch(room, viewer, "timeoutSeconds=1")
    assert {e["type"] for e in events} == {"ADDED"} and len(events) == 4
    controls.room_control(room.pk, "pause", None, "t")
    controls.room_rewind(room.pk, 0, "t")
    events = _watch(room, viewer, f"resourceVersion={rv}&timeoutSeconds=1")
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410, events
    now = _get(client, room, "api/v1/nodes", viewer).json()["metadata"]["resourceVersion"]
    assert int(now) > int(rv)
    events = _watch(
        room, viewer, f"resourceVersion={now}&timeoutSeconds=1&allowWatchBookmarks=true"
    )
    assert [e["type"] for e in events] == ["BOOKMARK"], events
    assert json.dumps(events).count(room.operator_token) == 0


def test_watchers_with_other_selectors_share_one_watch_and_get_their_own_events(
    room: Room,
) -> None:
    """Three node watches of one room at once (fanout.py: one hub computes the events, each
    watcher filters them): a-1 labelled tier=gold is ADDED for the tier=gold watch, MODIFIED
    for the one without selectors, DELETED (at the labelling tick's resourceVersion) for the
    tier!=gold one, as kube-apiserver's cacheWatcher turns one event into each's."""
    from datetime import timedelta

    from asgiref.sync import sync_to_async
    from django.utils import timezone

    from controller.kubeapi import fanout
    from controller.rooms import actions, tick

    viewer = auth.viewer_token(room)
    queries = ("labelSelector=tier%3Dgold", "", "labelSelector=tier%21%3Dgold")

    async def one(query: str) -> list[dict]:
        client = AsyncClient()
        response = await client.get(
            f"/k8s/rooms/{room.slug}/api/v1/nodes?watch=true&timeoutSeconds=4&{query}",
            headers={"Authorization": f"Bearer {viewer}"},
        )
        assert response.status_code == 200, response
        lines = []
        async for chunk in response.streaming_content:
            lines += [orjson.loads(x) for x in chunk.splitlines() if x.strip()]
        return lines

    def label() -> int:
        actions.action_submit(
            room, {"type": "Label", "node": "a-1", "labels": {"tier": "gold"}}, "test"
        )
        tick.room_advance(room.pk, timezone.now() + timedelta(seconds=1))
        return Room.objects.get(pk=room.pk).seq

    async def go() -> tuple[list[list[dict]], int, int]:
        watches = [asyncio.ensure_future(one(q)) for q in queries]
        hubs = 0
        for _ in range(100):
            await asyncio.sleep(0.05)
            hubs = [h for h in fanout._HUBS.values() if h.room_id == room.pk]
            if hubs and hubs[0].watchers == 3 and hubs[0].tail is not None:
                break
        shared = len(hubs)
        seq = await sync_to_async(label, thread_sensitive=False)()
        return list(await asyncio.gather(*watches)), seq, shared

    (gold, every, other), seq, shared = asyncio.run(go())
    assert shared == 1

    def of_a1(events: list[dict]) -> list[tuple[str, dict]]:
        return [
            (e["type"], e["object"]) for e in events if e["object"]["metadata"]["name"] == "a-1"
        ]

    assert [t for t, _o in of_a1(gold)] == ["ADDED"], gold
    assert {e["object"]["metadata"]["name"] for e in gold} == {"a-1"}
    assert of_a1(gold)[0][1]["metadata"]["labels"]["tier"] == "gold"
    assert [t for t, _o in of_a1(every)] == ["ADDED", "MODIFIED"], every
    assert len([e for e in every if e["type"] == "ADDED"]) == 4
    assert [t for t, _o in of_a1(other)] == ["ADDED", "DELETED"], other
    deleted = of_a1(other)[1][1]
    assert deleted["metadata"]["labels"]["tier"] == "gold"
    assert deleted["metadata"]["resourceVersion"] == str(seq)
    assert of_a1(every)[1][1]["metadata"]["resourceVersion"] == str(seq)
    assert not [h for h in fanout._HUBS.values() if h.room_id == room.pk]  # dropped at the end


def test_a_watch_starts_from_a_list_of_the_same_selection_only(room: Room) -> None:
    """``kubectl describe node`` lists the node's pods (a spec.nodeName field selector) at the
    room's resourceVersion; a watch of every pod from that resourceVersion does not take that
    list for its own and send the other pods as ADDED: nothing changed, nothing is sent."""
    client = Client()
    viewer = auth.viewer_token(room)
    pods = _get(client, room, "api/v1/pods", viewer).json()["items"]
    node = next(p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName"))
    one = _get(client, room, "api/v1/pods", viewer, fieldSelector=f"spec.nodeName={node}").json()
    assert 0 < len(one["items"]) < len(pods)
    rv = one["metadata"]["resourceVersion"]

    async def go() -> list[dict]:
        response = await AsyncClient().get(
            f"/k8s/rooms/{room.slug}/api/v1/pods?watch=true&resourceVersion={rv}&timeoutSeconds=1",
            headers={"Authorization": f"Bearer {viewer}"},
        )
        assert response.status_code == 200, response
        return [
            orjson.loads(x)
            async for chunk in response.streaming_content
            for x in chunk.splitlines()
            if x.strip()
        ]

    assert asyncio.run(go()) == []
