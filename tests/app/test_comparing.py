"""Comparing, as issue #38 found it: releases named as they are ("Kubernetes 1.34 — same
rules as 1.33"), comparison side labels that follow the choice, and a What-if of bare pods
that says why its table is empty."""

from __future__ import annotations

from controller.forms import CompareForm, version_choices
from controller.models import Comparison
from controller.rooms import create, imports, runtime, whatif
from controller.whatif import empty_note


def test_releases_are_named_as_they_are() -> None:
    """Each release has its own profile of rules (engine/versions.py); one whose rules equal
    another's says "same rules as", not "simulates as" (which sounded like a substitution)."""
    names = dict(version_choices())
    assert names["1.34"] == "Kubernetes 1.34 — same rules as 1.33; the built-in scenarios' release"
    assert names["1.33"] == "Kubernetes 1.33 — same rules as 1.34"
    assert names["1.32"] == "Kubernetes 1.32"
    assert names["1.36"] == "Kubernetes 1.36 — same rules as 1.35"
    assert not any("simulates as" in text for text in names.values())


def _labels(**fields: str) -> tuple[str, str]:
    form = CompareForm(
        {
            "cmp-scenario": "14-same-failure-1.34",
            "cmp-left_label": "default tolerations",
            "cmp-left_changes": "",
            "cmp-right_label": "tolerations 30 s",
            "cmp-right_changes": CompareForm.base_fields["right_changes"].initial,
            "cmp-speed": "10",
            **{f"cmp-{k}": v for k, v in fields.items()},
        },
        prefix="cmp",
    )
    assert form.is_valid(), form.errors
    return form.cleaned_data["left_label"], form.cleaned_data["right_label"]


def test_side_labels_follow_the_choice() -> None:
    # The form as it comes: its labels say what its sides are.
    assert _labels() == ("default tolerations", "tolerations 30 s")
    # Only releases chosen: the default labels gave "default tolerations" / "tolerations 30 s".
    assert _labels(left_version="1.30", right_version="1.36") == (
        "Kubernetes 1.30",
        "Kubernetes 1.36, tolerations 30 s",
    )
    assert _labels(left_version="1.30", right_version="1.36", right_changes="") == (
        "Kubernetes 1.30",
        "Kubernetes 1.36",
    )
    assert _labels(right_changes="controllerManager: {nodeMonitorGracePeriod: 20s}")[1] == (
        "nodeMonitorGracePeriod 20s"
    )
    assert _labels(right_changes="")[1] == "defaults"
    # A label written by hand stays.
    assert _labels(left_label="before", left_version="1.30") == ("before", "tolerations 30 s")


def test_the_compare_form_with_only_releases_names_the_sides_by_them(client, db) -> None:
    response = client.post(
        "/",
        {
            "cmp-scenario": "14-same-failure-1.34",
            "cmp-left_label": "default tolerations",
            "cmp-left_version": "1.30",
            "cmp-left_changes": "",
            "cmp-right_label": "tolerations 30 s",
            "cmp-right_version": "1.36",
            "cmp-right_changes": "",
            "cmp-speed": "10",
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    c = Comparison.objects.latest("id")
    assert (c.left_label, c.right_label) == ("Kubernetes 1.30", "Kubernetes 1.36")


BARE_PODS = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: w-1
    labels: {topology.kubernetes.io/zone: zone-a, kubernetes.io/hostname: w-1}
  status:
    capacity: {cpu: "4", memory: 16Gi, pods: "110"}
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
    nodeInfo: {kubeletVersion: v1.34.1}
- apiVersion: v1
  kind: Node
  metadata:
    name: w-2
    labels: {topology.kubernetes.io/zone: zone-b, kubernetes.io/hostname: w-2}
  status:
    capacity: {cpu: "4", memory: 16Gi, pods: "110"}
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
    nodeInfo: {kubeletVersion: v1.34.1}
- apiVersion: v1
  kind: Pod
  metadata: {name: one, namespace: default}
  spec: {nodeName: w-1, containers: [{name: app, image: nginx}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: two, namespace: default}
  spec: {nodeName: w-1, containers: [{name: app, image: nginx}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: three, namespace: default}
  spec: {nodeName: w-2, containers: [{name: app, image: nginx}]}
  status: {phase: Running}
"""


def test_what_if_on_bare_pods_explains_its_empty_result(db) -> None:
    text, _report = imports.import_scenario(BARE_PODS)
    room = create.room_create("bare", text, None, 10.0)
    result = whatif.room_what_if(room, "zone-a", [], 60)
    assert result["rows"] == []
    assert result["bare"]["pods"] == 3
    assert result["bare"]["deleted"] == 2
    note = result["note"]
    assert note.startswith("No workload to show")
    assert "its 3 pods are bare (no controller owns them)" in note
    assert "2 of them were deleted after the failure and never came back" in note
    assert "default/one" in note
    # With workloads there is a table, and no note.
    assert empty_note({**result, "rows": [{"workload": "Deployment/web"}]}) == ""
    runtime.forget_cache()
