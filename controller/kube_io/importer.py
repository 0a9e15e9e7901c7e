"""Import a real cluster into a scenario (issue #15), pure Python, no Django.

``import_cluster(text)`` reads the output of ``kubectl get nodes,pods,deployments,replicasets,
statefulsets,daemonsets -A -o yaml`` (a ``v1`` ``List``; ``-o json`` too, or several YAML
documents) and returns ``(scenario, report)``: a scenario mapping that
``controller.engine.scenario.parse_scenario`` accepts, and the list of what could not be
represented, each ``{"kind", "name", "why"}``. Status, managedFields, uids, resourceVersions,
creation timestamps and events are dropped: a simulation starts every object afresh.

Component configuration in its own formats merges into the scenario's sections:
a ``KubeletConfiguration`` (kubelet.config.k8s.io/v1beta1), a
``KubeControllerManagerConfiguration`` (kubecontrollermanager.config.k8s.io/v1alpha1) and
kube-controller-manager (or kube-apiserver) command-line flags; kube-scheduler's client rate
limit (``--kube-api-qps``/``--kube-api-burst``) from its static pod's command.

Owners follow the engine's workload controllers (``controller/engine/workloads/``; here the
module ``workloads``): a Deployment's ReplicaSet is created by the simulated Deployment
controller as ``<deployment>-<pod-template-hash>`` from the engine's ComputeHash of the
template, so such ReplicaSets are not imported and their pods are owned by the ReplicaSet the
engine will create (their ``pod-template-hash`` label rewritten to its hash); the Deployment
controller then finds its pods and creates none. StatefulSet, DaemonSet and stand-alone
ReplicaSet pods keep their controller ownerReference (without uid).

Bad input is refused whole, naming the item and field
(``items[12].spec.containers[0].resources.requests.memory: "16GB" is not a Kubernetes
quantity``).
"""

from __future__ import annotations

import copy
from typing import Any

from ..engine.scenario import ScenarioError, _map, _show, _str, parse_scenario
from .components import (
    drop_refused_fields,
    merge_controller_manager_config,
    merge_flags,
    merge_kubelet_config,
    merge_scheduler_pods,
)
from .documents import (
    IMPORTED_KINDS,
    SILENT_KINDS,
    WORKLOAD_KINDS,
    check_item,
    list_items,
    read_documents,
)
from .nodes import convert_node, releases
from .report import IMPORTED_PREFIX, Report, merge_report, note, object_key
from .workloads import convert_objects

DEFAULT_DURATION = "900s"


def import_cluster(
    text: str,
    *,
    name: str = "imported-cluster",
    kubelet_config: str | None = None,
    controller_manager_config: str | None = None,
    flags: str | None = None,
) -> tuple[dict[str, Any], Report]:
    """kubectl output (and optional component configuration) -> (scenario, report)."""
    report: Report = []
    docs = read_documents(text)
    if not docs:
        raise ScenarioError("", "the text holds no YAML or JSON document")
    base: dict[str, Any] | None = None
    items: list[tuple[str, dict[str, Any]]] = []
    seen: dict[tuple[str, str, str], str] = {}
    server_version: tuple[str, str] | None = None
    for path, item in list_items(docs):
        where = path
        if isinstance(item, dict) and "serverVersion" in item and "kind" not in item:
            # `kubectl version -o yaml` (or json) given with the List: kube-apiserver's version.
            server = _map(item["serverVersion"], f"{path}.serverVersion")
            server_version = (
                _str(server.get("gitVersion"), f"{path}.serverVersion.gitVersion"),
                f"{path}.serverVersion.gitVersion",
            )
            continue
        if not isinstance(item, dict):
            raise ScenarioError(
                where, f"must be a Kubernetes object (a mapping), got {_show(item)}"
            )
        kind = item.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ScenarioError(f"{path}.kind", "is required")
        if kind == "Scenario":  # an export of this playground: nodes and settings from it
            if base is not None:
                raise ScenarioError(where, "more than one Scenario document")
            base = item
            continue
        if kind in SILENT_KINDS:
            continue
        meta = _map(item.get("metadata"), f"{path}.metadata")
        oname = _str(meta.get("name"), f"{path}.metadata.name")
        if kind in IMPORTED_KINDS:
            check_item(item, kind, path)
            ns = "" if kind == "Node" else str(meta.get("namespace") or "default")
            first = seen.setdefault((kind, ns, oname), path)
            if first != path:
                raise ScenarioError(
                    f"{path}.metadata.name",
                    f"duplicate {kind} {object_key(ns, oname)} (first at {first})",
                )
        if kind not in IMPORTED_KINDS:
            note(
                report,
                kind,
                object_key(str(meta.get("namespace") or ""), oname),
                f"kind {kind} is not simulated (the playground runs Nodes, Pods and "
                f"{', '.join(WORKLOAD_KINDS)})",
            )
            continue
        items.append((path, item))
    if base is not None:
        scenario = _from_exported_scenario(base)
    else:
        scenario = {
            "apiVersion": "playground/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": name},
            "spec": {"duration": DEFAULT_DURATION},
        }
    spec = scenario["spec"]
    nodes = [(p, i) for p, i in items if i["kind"] == "Node"]
    if nodes:
        pods = [(p, i) for p, i in items if i["kind"] == "Pod"]
        version, kubelet_releases, version_notes = releases(nodes, pods, server_version)
        if version is not None:
            spec["kubernetesVersion"] = version
        report.extend(version_notes)
        spec["nodes"] = []
        taint_faults = []
        for path, item in nodes:
            entry, taints = convert_node(item, path, report)
            if entry["name"] in kubelet_releases:  # version skew: an older kubelet
                entry["kubeletVersion"] = kubelet_releases[entry["name"]]
            spec["nodes"].append(entry)
            if taints:
                taint_faults.append(
                    {"at": "0s", "type": "Taint", "node": entry["name"], "taints": taints}
                )
        spec["faults"] = taint_faults + [
            f for f in spec.get("faults") or [] if not _is_initial_taint(f)
        ]
    if nodes or not spec.get("nodes"):
        node_names = {n["name"] for n in spec.get("nodes") or []}
    else:  # the nodes of an exported scenario (``generate:`` entries among them)
        node_names = {n.name for n in parse_scenario(copy.deepcopy(scenario)).nodes}
    objects = convert_objects(
        [(p, i) for p, i in items if i["kind"] != "Node"], node_names, report, spec
    )
    if base is None or objects:
        spec["objects"] = objects
    if not spec.get("nodes"):
        raise ScenarioError("items", "no Node: the List must hold the cluster's nodes")
    # Component configuration, in its own formats.
    merge_scheduler_pods(spec, [(p, i) for p, i in items if i["kind"] == "Pod"], report)
    if kubelet_config:
        merge_kubelet_config(spec, kubelet_config, report)
    if controller_manager_config:
        merge_controller_manager_config(spec, controller_manager_config, report)
    if flags:
        merge_flags(spec, flags, report)
    for section in ("kubelet", "controllerManager", "apiServer", "featureGates"):
        if section in spec and not spec[section]:
            del spec[section]
    drop_refused_fields(spec, report)
    report[:] = merge_report(report)
    if base is None:
        scenario["description"] = _describe(spec, report)
    parse_scenario(copy.deepcopy(scenario))  # the engine's own validation, whole
    return scenario, report


def _is_initial_taint(fault: Any) -> bool:
    return (
        isinstance(fault, dict)
        and fault.get("type") == "Taint"
        and fault.get("at")
        in (
            "0s",
            0,
            "0",
        )
    )


def _from_exported_scenario(base: dict[str, Any]) -> dict[str, Any]:
    """A scenario from manifests.yaml: its nodes and settings, objects from the manifests."""
    out = copy.deepcopy(base)
    spec = _map(out.get("spec"), "spec")
    out["spec"] = spec
    spec.pop("objects", None)
    return out


def _describe(spec: dict[str, Any], report: Report) -> str:
    nodes = spec.get("nodes") or []
    zones = {
        (n.get("labels") or {}).get("topology.kubernetes.io/zone")
        or (n.get("labels") or {}).get("failure-domain.beta.kubernetes.io/zone")
        for n in nodes
    } - {None}
    objects = spec.get("objects") or []
    workloads = [o for o in objects if o["kind"] != "Pod"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    return (
        f"{IMPORTED_PREFIX} {len(nodes)} nodes in {len(zones)} zones, "
        f"{len(workloads)} workloads, {len(pods)} pods; {len(report)} notes in the import report."
    )
