"""Each object's resourceVersion changes only when the object the API serves does, and a
watch sends MODIFIED only then (controller/kubeapi/versions.py): a kubelet that stops
changes its node's stored view (the kubelet's state), not the Node, until the node
lifecycle controller marks it. The store's contract, in process; kubectl's lines:
test_kubeapi_watch_kubectl.py."""

from __future__ import annotations

import copy
from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from controller.kubeapi import fanout, objects, store, versions
from controller.models import Room
from controller.rooms import actions, changes, create, tick
from tests.app.test_kubeapi_kubectl import SCENARIO


@pytest.fixture
def room(transactional_db: None) -> Room:
    return create.room_create("versions", SCENARIO, None, 10.0)


def _served(read: store.Read, resource: str, text: bytes) -> bytes:
    """The object as served, on the fixed clock and without its resourceVersion."""
    view = orjson.loads(text)
    clock = versions.content_clock(read.clock.sim_now_s)
    if resource == "nodes":
        obj = objects.node(view, read.release, clock, 0)
    elif resource == "leases":
        obj = objects.lease(view, read.lease_duration, clock, 0)
    else:
        obj = objects.pod(view, clock, 0)
    return orjson.dumps(obj)


def _mutated(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + "-x"
    if isinstance(value, dict):
        return {**value, "mutated": 1}
    if isinstance(value, list):
        return [*value, {"mutated": 1}]
    return "mutated"


def test_a_view_field_left_out_of_the_content_is_not_served(room: Room) -> None:
    """Every field of a node's or pod's stored view that versions.py leaves out of the
    object's content changes nothing the API serves (so a version kept over it is right)."""
    read = store.Read.of(room)
    for resource, kind, fields in (
        ("nodes", "node", versions.NODE_FIELDS),
        ("pods", "pod", versions.POD_FIELDS),
    ):
        for text in list(read.texts(kind).values())[:3]:
            view = orjson.loads(text)
            view.setdefault("leaking", {"kind": "memory"})
            for name in view:
                if name in fields:
                    continue
                changed = copy.deepcopy(view)
                changed[name] = _mutated(view[name])
                assert _served(read, resource, orjson.dumps(changed)) == _served(
                    read, resource, orjson.dumps(view)
                ), (resource, name)


def _versions(read: store.Read, resource: str) -> dict[str, tuple[int, bytes]]:
    out = {}
    for key, state, _make in read.items(
        resource, "coordination.k8s.io" if resource == "leases" else "", None
    ):
        out[key] = (state[0], _served(read, resource, state[1]))
    return out


def test_a_version_changes_only_when_the_served_object_does(room: Room) -> None:
    """Across ticks (a kubelet stopped, its node marked Unknown and tainted later), each
    node's, lease's and pod's resourceVersion stays as long as its served object is the same,
    and changes when it is not, to one no older than the read's."""
    reads = []
    actions.action_submit(room, {"type": "StopKubelet", "node": "a-2"}, "test")
    for step in range(8):
        tick.room_advance(room.pk, timezone.now() + timedelta(seconds=2 * (step + 1)))
        room.refresh_from_db()
        read = store.Read.of(room)
        reads.append((read.rv, {r: _versions(read, r) for r in ("nodes", "leases", "pods")}))
    kept = changed = 0
    for (rv0, before), (rv1, after) in zip(reads, reads[1:], strict=False):
        assert rv1 > rv0
        for resource, objs in after.items():
            for key, (version, served) in objs.items():
                if key not in before[resource]:
                    continue
                old_version, old_served = before[resource][key]
                if served == old_served:
                    assert version == old_version, (resource, key)
                    kept += 1
                else:
                    assert old_version < version <= rv1, (resource, key)
                    changed += 1
    assert kept and changed
    # a-2's Node changed (NotReady, then its taints) fewer times than its view did.
    node_versions = {versions_[1]["nodes"]["a-2"][0] for versions_ in reads}
    assert 1 < len(node_versions) < len(reads)


def test_a_stopped_kubelet_alone_sends_no_modified_node(room: Room) -> None:
    """The tick that stops a-2's kubelet changes its view (the kubelet's state), not its Node:
    a node watch sends nothing for it (before: a MODIFIED with the same Node, one more
    unchanged line in ``kubectl get nodes -w``)."""
    changes.mark_watching(room.pk)
    room.refresh_from_db()
    read = store.Read.of(room)
    previous = {k: s for k, s, _m in read.items("nodes", "", None)}
    before = room.seq
    actions.action_submit(room, {"type": "StopKubelet", "node": "a-2"}, "test")
    tick.room_advance(room.pk, timezone.now() + timedelta(milliseconds=300))
    room.refresh_from_db()
    noted = changes.changed(room.pk, before, room.seq)
    assert noted is not None and "a-2" in noted["node"], noted
    after = store.Read.of(room).texts("node")
    assert after["a-2"] != previous["a-2"][1]  # the view changed (the kubelet stopped)
    current = dict(previous)
    events = fanout.noted_events(store.Read.of(room), "nodes", current, sorted(noted["node"]))
    assert [e.key for e in events] == [], events
    assert current["a-2"][0] == previous["a-2"][0]


def test_a_cached_pod_row_is_the_printed_row(room: Room) -> None:
    """A pod's Table row or list item serialised once (rowcache.py) and filled with an
    answer's clock is pod_view_row's row (objects.pod's Pod) byte for byte: running, pending, terminating, failed pods, at two
    instants and speeds (the holes move, the rest stays)."""
    from datetime import UTC, datetime

    from controller.kubeapi import printers, rowcache

    read = store.Read.of(room)
    views = [orjson.loads(t) for t in read.texts("pod").values()]
    running = views[0]
    views += [
        {**running, "key": "default/pending", "node": None, "phase": "Pending", "started": False},
        {**running, "key": "default/going", "deletionTimestamp": 75.5, "reason": "NodeLost"},
        {**running, "key": "default/ending", "deletionTimestamp": 80.0},
        {**running, "key": "default/failed", "phase": "Failed", "reason": "Evicted"},
        {**running, "key": "default/done", "phase": "Succeeded", "reason": "Completed"},
    ]
    for include in ("Metadata", "None", rowcache.ITEM):
        for view in views:
            made = rowcache.template(view, 42, include, 0)
            assert len(made[4]) >= 1 + (include != "None"), made  # the age; the timestamp
            for sim_now, wall in ((90.0, datetime(2026, 1, 1, tzinfo=UTC)), (7265.5, None)):
                clock = objects.Clock(sim_now, wall or datetime.now(UTC))
                if include == rowcache.ITEM:  # a PodList's item
                    item = objects.pod(view, clock, 42)
                    del item["kind"], item["apiVersion"]
                    expected = orjson.dumps(item)
                else:
                    expected = orjson.dumps(printers.pod_view_row(view, clock, 42, include))
                assert rowcache.render(made, objects.Clock(sim_now, clock.wall_now)) == expected
