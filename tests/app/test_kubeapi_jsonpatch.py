"""A JSON patch (RFC 6902, ``application/json-patch+json``: ``kubectl patch --type=json``,
the Python client's ``patch_node`` with a list) of a node (issue #36): what it changes of
metadata.labels, spec.unschedulable and spec.taints becomes the room's own actions with the
strategic merge patch's checks; a patch that does not apply (a failed ``test``, a missing
path) is a 422, one that is not a list of operations a 400, a change of any other field a
422 naming it; nothing refused changes anything. Real kubectl binaries (every version found)
and the official Python client against the real stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client, config

from controller.bench.procs import Daphne
from controller.models import Action, ObjectView, Room
from controller.rooms import create
from tests.app import test_kubeapi_kubectl as base
from tests.app.kubectl_clients import kubectls, run
from tests.app.test_kubeapi_kubectl import SCENARIO, _kubeconfig, _ok, _row, _wait

web = base.web  # the fixture: Daphne with the https port of the rooms' API
KUBECTLS, MISSING = kubectls()


def _view(room: Room, node: str) -> dict:
    return ObjectView.objects.get(room=room, kind="node", key=node).data


def _patch(binary: str, cfg: Path, node: str, ops: list[dict]) -> tuple[int, str]:
    return run(binary, cfg, "patch", "node", node, "--type=json", "-p", json.dumps(ops))


def _patched(binary: str, cfg: Path, node: str, ops: list[dict]) -> str:
    """``_patch`` that must succeed (``_ok``'s check)."""
    code, out = _patch(binary, cfg, node, ops)
    assert code == 0, f"kubectl patch node {node} {ops} exited {code}: {out}"
    return out


def test_every_kubectl_json_patches_a_node_as_the_rooms_own_actions(
    web: Daphne, celery_worker_proc, celery_beat_proc, tmp_path: Path
) -> None:
    assert KUBECTLS, f"no kubectl found (missing: {', '.join(MISSING)})"
    room = create.room_create("jsonpatch", SCENARIO, None, 10.0)
    op = _kubeconfig(web, room, tmp_path / "op.kubeconfig", True)
    viewer = _kubeconfig(web, room, tmp_path / "viewer.kubeconfig", False)
    newest = KUBECTLS[-1][1]
    _wait("the nodes listed", lambda: "a-1" in _ok(newest, op, "get", "nodes"))
    for name, binary in KUBECTLS:
        code, out = _patch(
            binary, op, "a-1", [{"op": "add", "path": "/metadata/labels/tier", "value": name}]
        )
        assert code == 0 and "node/a-1 patched" in out, (name, out)
        assert _view(room, "a-1")["labels"]["tier"] == name, name
        code, out = _patch(
            binary,
            op,
            "a-1",
            [
                {"op": "test", "path": "/metadata/labels/tier", "value": name},
                {"op": "remove", "path": "/metadata/labels/tier"},
            ],
        )
        assert code == 0 and "node/a-1 patched" in out, (name, out)
        assert "tier" not in _view(room, "a-1")["labels"], name
    # Cordon, taint, uncordon and untaint.
    _patched(newest, op, "a-2", [{"op": "add", "path": "/spec/unschedulable", "value": True}])
    assert _view(room, "a-2")["unschedulable"] is True
    assert "SchedulingDisabled" in _row(_ok(newest, op, "get", "nodes"), "a-2")[1]
    taint = {"key": "lesson", "value": "json", "effect": "NoSchedule"}
    _patched(newest, op, "a-2", [{"op": "add", "path": "/spec/taints", "value": [taint]}])
    assert [t["key"] for t in _view(room, "a-2")["taints"]] == ["lesson"]
    _patched(
        newest,
        op,
        "a-2",
        [
            {"op": "replace", "path": "/spec/unschedulable", "value": False},
            {"op": "remove", "path": "/spec/taints/0"},
        ],
    )
    assert not _view(room, "a-2")["unschedulable"] and not _view(room, "a-2")["taints"]
    kinds = list(Action.objects.filter(room=room, actor="kubectl").values_list("kind", flat=True))
    assert {"Label", "Cordon", "Taint", "Uncordon", "Untaint"} <= set(kinds), kinds
    done = Action.objects.filter(room=room).count()
    # Refused, nothing changed: a failed test, a missing path, another field, a zone label,
    # a bad label value, a bad type, a viewer's patch.
    for ops, why in (
        (
            [
                {"op": "test", "path": "/metadata/labels/kubernetes.io~1hostname", "value": "x"},
                {"op": "add", "path": "/metadata/labels/never", "value": "set"},
            ],
            "the JSON patch does not apply",
        ),
        ([{"op": "remove", "path": "/metadata/labels/absent"}], "the JSON patch does not apply"),
        (
            [{"op": "add", "path": "/metadata/annotations/x", "value": "y"}],
            'The Node "a-3" is invalid: metadata.annotations.x: ',
        ),
        (
            [{"op": "replace", "path": "/status/capacity/cpu", "value": "64"}],
            'The Node "a-3" is invalid: status.capacity.cpu: ',
        ),
        (
            [
                {
                    "op": "replace",
                    "path": "/metadata/labels/topology.kubernetes.io~1zone",
                    "value": "zone-b",
                }
            ],
            "metadata.labels.topology.kubernetes.io/zone: ",
        ),
        (
            [{"op": "add", "path": "/metadata/labels/x", "value": "-bad"}],
            "a valid label must be an empty string",
        ),
        (
            [{"op": "add", "path": "/spec/unschedulable", "value": "yes"}],
            "spec.unschedulable: ",
        ),
    ):
        code, out = _patch(newest, op, "a-3", ops)
        assert code != 0 and why in out, (ops, out)
    code, out = _patch(newest, op, "a-3", [{"op": "move", "from": "/nope", "path": "/x"}])
    assert code != 0 and "The request is invalid: the JSON patch does not apply" in out, out
    code, out = _patch(
        newest, viewer, "a-3", [{"op": "add", "path": "/metadata/labels/v", "value": "w"}]
    )
    assert code != 0 and "Error from server (Forbidden)" in out, out
    assert Action.objects.filter(room=room).count() == done
    assert _view(room, "a-3")["labels"]["topology.kubernetes.io/zone"] == "zone-a"
    assert not {"never", "x", "v"} & set(_view(room, "a-3")["labels"])
    assert (
        not MISSING or print(f"kubectl versions not found (skipped): {', '.join(MISSING)}") is None
    )


def test_the_python_client_json_patches_a_node(
    web: Daphne, celery_worker_proc, celery_beat_proc, tmp_path: Path
) -> None:
    room = create.room_create("pyjsonpatch", SCENARIO, None, 10.0)
    op = _kubeconfig(web, room, tmp_path / "op.kubeconfig", True)
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(op)))
    _wait("the nodes listed", lambda: len(api.list_node().items) == 4)
    # patch_node with a list body sends application/json-patch+json.
    node = api.patch_node(
        "a-1",
        [
            {"op": "add", "path": "/metadata/labels/disk", "value": "ssd"},
            {"op": "add", "path": "/spec/unschedulable", "value": True},
        ],
    )
    assert node.metadata.labels["disk"] == "ssd" and node.spec.unschedulable is True
    node = api.patch_node("a-1", [{"op": "remove", "path": "/metadata/labels/disk"}])
    assert "disk" not in node.metadata.labels and node.spec.unschedulable is True
    with pytest.raises(client.ApiException) as exc:
        api.patch_node("a-1", [{"op": "test", "path": "/spec/unschedulable", "value": False}])
    assert exc.value.status == 422, exc.value.body
    with pytest.raises(client.ApiException) as exc:
        api.patch_node("a-1", [{"op": "add", "path": "/spec/podCIDR", "value": "10.0.0.0/24"}])
    assert exc.value.status == 422 and "spec.podCIDR" in exc.value.body, exc.value.body
