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
kube-controller-manager (or kube-apiserver) command-line flags.

Owners follow workloads.py: a Deployment's ReplicaSet is created by the simulated Deployment
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
import json
import re
import shlex
import sys
from typing import Any

import yaml

from .engine import safe_yaml
from .engine.config import ControllerManagerConfig, KubeletConfig
from .engine.manifests import validate_manifest
from .engine.objects import PRIORITY_CLASSES
from .engine.quantity import QuantityError, milli_value, quantity_to_int
from .engine.scenario import (
    API_FIELDS,
    CM_FIELDS,
    GATE_FIELDS,
    KUBELET_FIELDS,
    RESOURCE_NAMES,
    ScenarioError,
    _convert,
    _list,
    _map,
    _show,
    _str,
    apply_fields,
    check_labels,
    check_name,
    parse_scenario,
)
from .engine.validation import dns1123_subdomain, label_value, qualified_name
from .engine.versions import PROFILES
from .engine.workloads import POD_TEMPLATE_HASH, compute_hash

Report = list[dict[str, str]]
IMPORTED_PREFIX = "Imported from kubectl output:"
IMPORT_REPORT_HEADER = "# Import report (what the simulation cannot represent):"

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
IMPORTED_KINDS = ("Node", "Pod", *WORKLOAD_KINDS)
SILENT_KINDS = ("Event",)  # the past: nothing a simulation starts from
DEFAULT_DURATION = "900s"

# Taints the control plane sets from a node's conditions or spec: the simulation sets its own.
CONTROLLER_TAINTS = {
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.kubernetes.io/out-of-service",
}
NOISY_ANNOTATIONS = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/",
    "deprecated.daemonset.template.generation",
    "kubernetes.io/config.",  # a static pod's mirror annotations
)

# Pod spec fields: kept (the engine reads them), dropped without a word (they change nothing
# the simulation shows: images, commands, ports, service accounts, DNS), or reported.
POD_KEPT = (
    "nodeName",
    "nodeSelector",
    "priority",
    "priorityClassName",
    "tolerations",
    "terminationGracePeriodSeconds",
    "hostNetwork",
    "initContainers",
    "containers",
)
POD_SILENT = {
    "dnsPolicy",
    "dnsConfig",
    "restartPolicy",
    "schedulerName",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "preemptionPolicy",
    "hostname",
    "subdomain",
    "imagePullSecrets",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "setHostnameAsFQDN",
    "os",
    "hostAliases",
}
CONTAINER_KEPT = ("name", "image", "resources")
CONTAINER_SILENT = {
    "command",
    "args",
    "env",
    "envFrom",
    "ports",
    "imagePullPolicy",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "securityContext",
    "volumeMounts",
    "volumeDevices",
    "workingDir",
    "stdin",
    "stdinOnce",
    "tty",
    "resizePolicy",
}
SILENT_VOLUMES = {"projected", "configMap", "secret", "emptyDir", "downwardAPI", "hostPath"}
WHY_FIELDS = {
    "affinity": "affinity is not simulated (only nodeSelector and taints steer scheduling)",
    "topologySpreadConstraints": "topologySpreadConstraints are not simulated",
    "volumes": "persistent volumes are not simulated: a pod may come back in any zone",
    "readinessProbe": "probes are not simulated: a pod is Ready as soon as it runs",
    "livenessProbe": "probes are not simulated: a pod is Ready as soon as it runs",
    "startupProbe": "probes are not simulated: a pod is Ready as soon as it runs",
    "overhead": "pod overhead is not simulated",
    "runtimeClassName": "runtime classes are not simulated",
}


def _note(report: Report, kind: str, name: str, why: str) -> None:
    report.append({"kind": kind, "name": name, "why": why})


def _key(ns: str, name: str) -> str:
    return f"{ns}/{name}" if ns else name


# -- reading the List -----------------------------------------------------------------------------
def read_documents(text: str) -> list[Any]:
    """The documents of a YAML or JSON text (a JSON text is read by the faster json module)."""
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            return [json.loads(text)]
        except (ValueError, RecursionError):
            pass  # YAML in flow style, or broken JSON: YAML says where
    try:
        return safe_yaml.load_all(text, max_bytes=0, error=ScenarioError)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError("", f"malformed YAML{where}: {problem}") from None


def _items(docs: list[Any]) -> list[tuple[str, Any]]:
    """(path, item) of every object: the items of a List (``items[3]``), or a document."""
    out: list[tuple[str, Any]] = []
    many = len(docs) > 1
    for d, doc in enumerate(docs):
        prefix = f"documents[{d}]." if many else ""
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List"):
            items = doc.get("items")
            if items is None:
                continue
            if not isinstance(items, list):
                raise ScenarioError(f"{prefix}items", f"must be a list, got {_show(items)}")
            out.extend((f"{prefix}items[{i}]", item) for i, item in enumerate(items))
        else:
            out.append((f"documents[{d}]" if many else "document", doc))
    return out


# -- the import ---------------------------------------------------------------------------------
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
    for path, item in _items(docs):
        where = path
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
            _check_item(item, kind, path)
            ns = "" if kind == "Node" else str(meta.get("namespace") or "default")
            first = seen.setdefault((kind, ns, oname), path)
            if first != path:
                raise ScenarioError(
                    f"{path}.metadata.name",
                    f"duplicate {kind} {_key(ns, oname)} (first at {first})",
                )
        if kind not in IMPORTED_KINDS:
            _note(
                report,
                kind,
                _key(str(meta.get("namespace") or ""), oname),
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
        version, version_notes = _kubernetes_version(nodes)
        if version is not None:
            spec["kubernetesVersion"] = version
        report.extend(version_notes)
        spec["nodes"] = []
        taint_faults = []
        for path, item in nodes:
            entry, taints = _node(item, path, report)
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
    objects = _objects([(p, i) for p, i in items if i["kind"] != "Node"], node_names, report, spec)
    if base is None or objects:
        spec["objects"] = objects
    if not spec.get("nodes"):
        raise ScenarioError("items", "no Node: the List must hold the cluster's nodes")
    # Component configuration, in its own formats.
    if kubelet_config:
        merge_kubelet_config(spec, kubelet_config, report)
    if controller_manager_config:
        merge_controller_manager_config(spec, controller_manager_config, report)
    if flags:
        merge_flags(spec, flags, report)
    for section in ("kubelet", "controllerManager", "apiServer", "featureGates"):
        if section in spec and not spec[section]:
            del spec[section]
    _drop_refused_fields(spec, report)
    report[:] = merge_report(report)
    if base is None:
        scenario["description"] = _describe(spec, report)
    parse_scenario(copy.deepcopy(scenario))  # the engine's own validation, whole
    return scenario, report


def _check_meta(meta: dict[str, Any], path: str) -> None:
    if "namespace" in meta and meta["namespace"] is not None:
        _str(meta["namespace"], f"{path}.namespace")
    check_labels(meta.get("labels"), f"{path}.labels")
    _map(meta.get("annotations"), f"{path}.annotations")
    for i, ref in enumerate(_list(meta.get("ownerReferences"), f"{path}.ownerReferences")):
        rp = f"{path}.ownerReferences[{i}]"
        ref = _map(ref, rp)
        _str(ref.get("kind"), f"{rp}.kind")
        _str(ref.get("name"), f"{rp}.name")


def _check_pod_spec(spec: dict[str, Any], path: str) -> None:
    for key in ("nodeName", "priorityClassName"):
        if spec.get(key) not in (None, ""):
            _str(spec[key], f"{path}.{key}")
    for key in ("volumes", "containers", "initContainers", "tolerations"):
        for i, v in enumerate(_list(spec.get(key), f"{path}.{key}")):
            _map(v, f"{path}.{key}[{i}]")


def _check_item(item: dict[str, Any], kind: str, path: str) -> None:
    """The shapes the import reads (the engine's validation checks the values after)."""
    _check_meta(item["metadata"], f"{path}.metadata")
    spec = _map(item.get("spec"), f"{path}.spec")
    status = _map(item.get("status"), f"{path}.status")
    if kind == "Node":
        for i, t in enumerate(_list(spec.get("taints"), f"{path}.spec.taints")):
            _map(t, f"{path}.spec.taints[{i}]")
        for i, c in enumerate(_list(status.get("conditions"), f"{path}.status.conditions")):
            _map(c, f"{path}.status.conditions[{i}]")
        _map(status.get("nodeInfo"), f"{path}.status.nodeInfo")
    elif kind == "Pod":
        _check_pod_spec(spec, f"{path}.spec")
    else:
        template = _map(spec.get("template"), f"{path}.spec.template")
        tmeta = _map(template.get("metadata"), f"{path}.spec.template.metadata")
        check_labels(tmeta.get("labels"), f"{path}.spec.template.metadata.labels")
        _map(tmeta.get("annotations"), f"{path}.spec.template.metadata.annotations")
        tspec = _map(template.get("spec"), f"{path}.spec.template.spec")
        _check_pod_spec(tspec, f"{path}.spec.template.spec")


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


# -- version ------------------------------------------------------------------------------------
_KUBELET_VERSION = re.compile(r"^v?1\.(\d+)(?:\.\d+)?")


def nearest_profile(minor: int) -> tuple[str, bool]:
    """The simulated release nearest to ``1.<minor>`` and whether it was mapped (not one of
    the releases that profile stands for); on a tie the newer profile."""
    candidates = [
        (abs(int(release.split(".")[1]) - minor), -int(release.split(".")[1]), release)
        for release in PROFILES
    ]
    best = min(candidates)
    return best[2], best[0] != 0


def _kubernetes_version(nodes: list[tuple[str, dict[str, Any]]]) -> tuple[str | None, Report]:
    notes: Report = []
    minors: dict[int, list[str]] = {}
    raw: dict[int, str] = {}
    for path, item in nodes:
        info = (
            ((item.get("status") or {}).get("nodeInfo") or {})
            if isinstance(item.get("status"), dict)
            else {}
        )
        kv = info.get("kubeletVersion") if isinstance(info, dict) else None
        if not kv:
            continue
        m = _KUBELET_VERSION.match(str(kv))
        if not m:
            raise ScenarioError(
                f"{path}.status.nodeInfo.kubeletVersion",
                f"{_show(kv)} is not a Kubernetes release such as v1.34.1",
            )
        minor = int(m.group(1))
        minors.setdefault(minor, []).append(item["metadata"]["name"])
        raw.setdefault(minor, str(kv))
    if not minors:
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": "no status.nodeInfo.kubeletVersion: the scenario says no release "
                "(read as 1.18)",
            }
        )
        return None, notes
    # The release most nodes run (kubelets may lag the control plane by a few releases); on a
    # tie the newest.
    minor = max(minors, key=lambda m: (len(minors[m]), m))
    if len(minors) > 1:
        others = ", ".join(f"1.{m} on {len(v)}" for m, v in sorted(minors.items()))
        notes.append(
            {
                "kind": "Node",
                "name": "(all)",
                "why": f"nodes run several kubelet releases ({others}): simulated as 1.{minor}",
            }
        )
    version, mapped = nearest_profile(minor)
    profile = PROFILES[version]
    if mapped:
        why = (
            f"kubeletVersion {raw[minor]} (1.{minor}) is not simulated: mapped to the nearest "
            f"profile, Kubernetes {version}"
        )
    elif f"1.{minor}" != version:
        why = (
            f"kubeletVersion {raw[minor]}: simulated by the Kubernetes {version} profile "
            f"(1.{minor} behaves identically: {', '.join(profile.releases)})"
        )
    else:
        why = ""
    if why:
        notes.append({"kind": "Node", "name": "(all)", "why": why})
    return version, notes


# -- nodes --------------------------------------------------------------------------------------
def _qty_at(v: Any, path: str, milli: bool) -> int:
    try:
        return milli_value(v) if milli else quantity_to_int(v)
    except (QuantityError, ValueError, TypeError):
        raise ScenarioError(path, f"{_show(v)} is not a Kubernetes quantity") from None


def _node(item: dict[str, Any], path: str, report: Report) -> tuple[dict[str, Any], list[Any]]:
    meta = item["metadata"]
    name = meta["name"]
    if dns1123_subdomain(name):
        raise ScenarioError(f"{path}.metadata.name", f"{_show(name)}: {dns1123_subdomain(name)}")
    labels = check_labels(meta.get("labels"), f"{path}.metadata.labels")
    spec = _map(item.get("spec"), f"{path}.spec")
    status = _map(item.get("status"), f"{path}.status")
    capacity_raw = _map(status.get("capacity"), f"{path}.status.capacity")
    capacity: dict[str, str] = {}
    ignored = []
    for k, v in capacity_raw.items():
        n = _qty_at(v, f"{path}.status.capacity.{k}", milli=(k == "cpu"))
        if k in RESOURCE_NAMES:
            capacity[k] = str(v)
        elif n:
            ignored.append(f"{k}: {v}")
    if ignored:
        _note(report, "Node", name, f"capacity not simulated: {', '.join(sorted(ignored))}")
    alloc_raw = _map(status.get("allocatable"), f"{path}.status.allocatable")
    for k, v in alloc_raw.items():
        _qty_at(v, f"{path}.status.allocatable.{k}", milli=(k == "cpu"))
    differs = [
        f"{k} {alloc_raw[k]} of {capacity[k]}"
        for k in ("cpu", "memory", "pods")
        if k in alloc_raw
        and k in capacity
        and _qty_at(alloc_raw[k], "", k == "cpu") != _qty_at(capacity[k], "", k == "cpu")
    ]
    if differs:
        _note(
            report,
            "Node",
            name,
            f"allocatable {', '.join(differs)}: kubeReserved and systemReserved are not "
            "simulated; the simulated kubelet keeps only evictionHard back from capacity",
        )
    entry: dict[str, Any] = {"name": name, "labels": labels}
    if capacity:
        entry["capacity"] = capacity
    if spec.get("unschedulable") is True:
        entry["unschedulable"] = True
    taints = []
    dropped = []
    for j, t in enumerate(spec.get("taints") or []):
        tp = f"{path}.spec.taints[{j}]"
        t = _map(t, tp)
        key = check_name(qualified_name, _str(t.get("key"), f"{tp}.key"), f"{tp}.key")
        effect = t.get("effect")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ScenarioError(f"{tp}.effect", "must be NoSchedule, PreferNoSchedule or NoExecute")
        if key in CONTROLLER_TAINTS:
            dropped.append(f"{key}:{effect}")
            continue
        out = {"key": key, "effect": effect}
        if t.get("value") not in (None, ""):
            out["value"] = check_name(label_value, str(t["value"]), f"{tp}.value")
        taints.append(out)
    if dropped:
        _note(
            report,
            "Node",
            name,
            f"taints {', '.join(dropped)} dropped: the control plane sets them from the node's "
            "conditions, and the simulation sets its own",
        )
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True":
            _note(
                report,
                "Node",
                name,
                f"was Ready={c.get('status')} when exported; imported as a healthy node "
                "(add a fault to fail it)",
            )
    return entry, taints


# -- workloads and pods --------------------------------------------------------------------------
def _clean_meta(meta: dict[str, Any], keep_namespace: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"name": meta.get("name")}
    if keep_namespace and meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    if meta.get("labels"):
        out["labels"] = dict(meta["labels"])
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not any(str(k).startswith(p) for p in NOISY_ANNOTATIONS)
    }
    if annotations:
        out["annotations"] = annotations
    return out


def _clean_pod_spec(spec: dict[str, Any], daemon: bool, unsimulated: list[str]) -> dict[str, Any]:
    """The pod spec fields the engine reads; ``unsimulated`` collects the reasons for what it
    cannot show (a DaemonSet pod's required node affinity is the controller's own)."""
    out: dict[str, Any] = {}
    for k in POD_KEPT:
        if k in spec and spec[k] not in (None, [], {}, ""):
            out[k] = copy.deepcopy(spec[k])
    for k, v in spec.items():
        if k in POD_KEPT or k in POD_SILENT or v in (None, [], {}, "", False):
            continue
        if k == "affinity" and daemon and _is_daemon_affinity(v):
            continue
        if k == "volumes":
            if all(
                isinstance(vol, dict) and not (set(vol) - {"name"} - SILENT_VOLUMES) for vol in v
            ):
                continue
            unsimulated.append(WHY_FIELDS["volumes"])
            continue
        if k == "schedulerName" and v == "default-scheduler":
            continue
        unsimulated.append(WHY_FIELDS.get(k, f"spec.{k} is not simulated"))
    for key in ("containers", "initContainers"):
        if key in out and isinstance(out[key], list):
            out[key] = [_clean_container(c, unsimulated) for c in out[key]]
    return out


def _clean_container(c: Any, unsimulated: list[str]) -> Any:
    if not isinstance(c, dict):
        return c  # validation names it
    out = {k: c[k] for k in CONTAINER_KEPT if k in c}
    for k, v in c.items():
        if k in CONTAINER_KEPT or k in CONTAINER_SILENT or v in (None, [], {}):
            continue
        unsimulated.append(WHY_FIELDS.get(k, f"containers[].{k} is not simulated"))
    return out


def _is_daemon_affinity(v: Any) -> bool:
    try:
        terms = v["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
        return (
            set(v) == {"nodeAffinity"}
            and len(terms) == 1
            and terms[0]["matchFields"][0]["key"] == "metadata.name"
        )
    except (KeyError, IndexError, TypeError):
        return False


def _priority_fix(
    spec: dict[str, Any], kind: str, name: str, report: Report, priority: int | None
) -> None:
    """A PriorityClass of the cluster's own is not in the List: keep the pod's resolved
    ``spec.priority`` (the Priority admission plugin's), drop the class name."""
    cls = spec.get("priorityClassName")
    if not cls or cls in PRIORITY_CLASSES:
        return
    del spec["priorityClassName"]
    if "priority" not in spec:
        if priority is None:
            _note(
                report,
                kind,
                name,
                f"priority class {cls} is not imported (PriorityClasses are not in the List) "
                "and no pod shows its value: priority 0",
            )
            return
        spec["priority"] = priority
    _note(
        report,
        kind,
        name,
        f"priority class {cls} is not imported (PriorityClasses are not in the List): "
        f"spec.priority {spec['priority']} kept",
    )


def _objects(
    items: list[tuple[str, dict[str, Any]]],
    node_names: set[str],
    report: Report,
    spec: dict[str, Any],
) -> list[dict[str, Any]]:
    workloads: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for path, item in items:
        if item["kind"] == "Pod":
            continue
        meta = item["metadata"]
        ns = str(meta.get("namespace") or "default")
        workloads[(item["kind"], ns, meta["name"])] = (path, item)
    # A ReplicaSet controlled by a Deployment of the List is the Deployment controller's own.
    rs_of_deployment: dict[tuple[str, str], str] = {}
    for (kind, ns, wname), (_path, item) in workloads.items():
        if kind != "ReplicaSet":
            continue
        ref = _controller_ref(item["metadata"])
        if (
            ref
            and ref.get("kind") == "Deployment"
            and ("Deployment", ns, ref.get("name")) in workloads
        ):
            rs_of_deployment[(ns, wname)] = str(ref["name"])
    # A rollout in progress: several ReplicaSets of one Deployment still have replicas.
    active: dict[tuple[str, str], list[str]] = {}
    for (ns, rs), d in rs_of_deployment.items():
        replicas = (workloads[("ReplicaSet", ns, rs)][1].get("spec") or {}).get("replicas")
        if replicas:
            active.setdefault((ns, d), []).append(rs)
    for (ns, d), names in active.items():
        if len(names) > 1:
            _note(
                report,
                "Deployment",
                _key(ns, d),
                f"a rollout in progress ({', '.join(names)} have replicas): all their pods are "
                "counted in the ReplicaSet of the current template",
            )
    # The priority a workload's pods resolved (for a template naming an unknown class).
    pod_priority: dict[tuple[str, str, str], int] = {}
    for _path, item in items:
        if item["kind"] != "Pod":
            continue
        meta = item["metadata"]
        ns = str(meta.get("namespace") or "default")
        ref = _controller_ref(meta)
        prio = (
            (item.get("spec") or {}).get("priority") if isinstance(item.get("spec"), dict) else None
        )
        if ref and isinstance(prio, int) and not isinstance(prio, bool):
            okind, oname = str(ref.get("kind")), str(ref.get("name"))
            d = _deployment_of(okind, ns, oname, meta, workloads, rs_of_deployment)
            if d is not None:
                okind, oname = "Deployment", d
            pod_priority.setdefault((okind, ns, oname), prio)

    out_workloads: list[dict[str, Any]] = []
    engine_rs: dict[tuple[str, str], str] = {}  # (ns, deployment) -> engine's RS name
    hashes: dict[tuple[str, str], str] = {}  # (ns, deployment) -> its pod-template-hash
    for (kind, ns, wname), (path, item) in workloads.items():
        if kind == "ReplicaSet" and (ns, wname) in rs_of_deployment:
            d = rs_of_deployment[(ns, wname)]
            replicas = (item.get("spec") or {}).get("replicas")
            if replicas == 0:
                why = f"an old ReplicaSet of Deployment {d} (0 replicas): not imported"
            else:
                why = (
                    f"ReplicaSet of Deployment {d}: the simulated Deployment controller creates "
                    f"its own ({d}-<hash>) and adopts its pods"
                )
            _note(report, kind, _key(ns, wname), why)
            continue
        manifest, hash_ = _workload(item, path, kind, ns, wname, report, pod_priority)
        if kind == "Deployment":
            engine_rs[(ns, wname)] = f"{wname}-{hash_}"
            hashes[(ns, wname)] = hash_
        out_workloads.append(manifest)

    out_pods: list[dict[str, Any]] = []
    for path, item in items:
        if item["kind"] != "Pod":
            continue
        pod = _pod(item, path, workloads, rs_of_deployment, engine_rs, hashes, node_names, report)
        if pod is not None:
            out_pods.append(pod)
    return out_workloads + out_pods


def _deployment_of(
    okind: str,
    ns: str,
    oname: str,
    meta: dict[str, Any],
    workloads: dict[tuple[str, str, str], tuple[str, dict[str, Any]]],
    rs_of_deployment: dict[tuple[str, str], str],
) -> str | None:
    """The Deployment of the List whose pod this is, through its ReplicaSet: the listed
    ReplicaSet's owner, or (ReplicaSets not listed) ``<deployment>-<pod-template-hash>``."""
    if okind != "ReplicaSet":
        return None
    if (ns, oname) in rs_of_deployment:
        return rs_of_deployment[(ns, oname)]
    if ("ReplicaSet", ns, oname) in workloads:
        return None  # a stand-alone ReplicaSet
    suffix = f"-{(meta.get('labels') or {}).get(POD_TEMPLATE_HASH, '')}"
    if oname.endswith(suffix) and suffix != "-":
        d = oname[: -len(suffix)]
        if ("Deployment", ns, d) in workloads:
            return d
    return None


def _controller_ref(meta: dict[str, Any]) -> dict[str, Any] | None:
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _workload(
    item: dict[str, Any],
    path: str,
    kind: str,
    ns: str,
    wname: str,
    report: Report,
    pod_priority: dict[tuple[str, str, str], int],
) -> tuple[dict[str, Any], str]:
    spec = _map(item.get("spec"), f"{path}.spec")
    meta = _clean_meta(item["metadata"])
    meta.setdefault("namespace", ns)
    out_spec: dict[str, Any] = {}
    unsimulated: list[str] = []
    if kind != "DaemonSet" and "replicas" in spec:
        out_spec["replicas"] = spec["replicas"]
    selector = _map(spec.get("selector"), f"{path}.spec.selector")
    if selector.get("matchExpressions"):
        unsimulated.append(
            "selector.matchExpressions are not simulated (a controller owns the pods it created)"
        )
    if "matchLabels" in selector:
        out_spec["selector"] = {"matchLabels": selector["matchLabels"]}
    if kind == "Deployment" and spec.get("strategy"):
        strategy = _map(spec["strategy"], f"{path}.spec.strategy")
        out_spec["strategy"] = {k: strategy[k] for k in ("type", "rollingUpdate") if k in strategy}
        if out_spec["strategy"].get("type") == "Recreate":
            out_spec["strategy"].pop("rollingUpdate", None)
    if kind == "StatefulSet" and "podManagementPolicy" in spec:
        out_spec["podManagementPolicy"] = spec["podManagementPolicy"]
    if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
        unsimulated.append(
            "volumeClaimTemplates: persistent volumes are not simulated, a pod may come back in "
            "any zone (a real zonal volume holds it to its zone)"
        )
    if spec.get("minReadySeconds"):
        unsimulated.append("minReadySeconds is not simulated")
    if spec.get("paused"):
        unsimulated.append("paused: the simulated Deployment is not paused")
    if kind == "ReplicaSet":
        ref = _controller_ref(item["metadata"])
        if ref and ref.get("kind") == "Deployment":
            _note(
                report,
                kind,
                _key(ns, wname),
                f"its Deployment {ref.get('name')} is not in the List: imported as a stand-alone "
                "ReplicaSet",
            )
    template = _map(spec.get("template"), f"{path}.spec.template")
    tmeta = _map(template.get("metadata"), f"{path}.spec.template.metadata")
    clean_tmeta: dict[str, Any] = {}
    if tmeta.get("labels"):
        clean_tmeta["labels"] = dict(tmeta["labels"])
    annotations = _clean_meta({"annotations": tmeta.get("annotations") or {}}).get("annotations")
    if annotations:
        clean_tmeta["annotations"] = annotations
    tspec = _clean_pod_spec(
        _map(template.get("spec"), f"{path}.spec.template.spec"), kind == "DaemonSet", unsimulated
    )
    _priority_fix(tspec, kind, _key(ns, wname), report, pod_priority.get((kind, ns, wname)))
    out_spec["template"] = {"metadata": clean_tmeta, "spec": tspec}
    manifest = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": meta,
        "spec": out_spec,
    }
    for why in dict.fromkeys(unsimulated):
        _note(report, kind, _key(ns, wname), why)
    validate_manifest(manifest, path)
    hash_ = compute_hash(copy.deepcopy(out_spec["template"])) if kind == "Deployment" else ""
    return manifest, hash_


def _pod(
    item: dict[str, Any],
    path: str,
    workloads: dict[tuple[str, str, str], tuple[str, dict[str, Any]]],
    rs_of_deployment: dict[tuple[str, str], str],
    engine_rs: dict[tuple[str, str], str],
    hashes: dict[tuple[str, str], str],
    node_names: set[str],
    report: Report,
) -> dict[str, Any] | None:
    meta_in = item["metadata"]
    ns = str(meta_in.get("namespace") or "default")
    pname = str(meta_in["name"])
    key = _key(ns, pname)
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed"):
        _note(report, "Pod", key, f"phase {phase}: a finished pod is not imported")
        return None
    if meta_in.get("deletionTimestamp"):
        _note(report, "Pod", key, "being deleted (metadata.deletionTimestamp): not imported")
        return None
    spec_in = _map(item.get("spec"), f"{path}.spec")
    meta = _clean_meta(meta_in)
    meta.setdefault("namespace", ns)
    ref = _controller_ref(meta_in)
    owned = False
    unsimulated: list[str] = []
    if ref is not None:
        okind, oname = str(ref.get("kind")), str(ref.get("name"))
        d = _deployment_of(okind, ns, oname, meta_in, workloads, rs_of_deployment)
        if d is not None and (ns, d) in engine_rs:
            meta["ownerReferences"] = [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": engine_rs[(ns, d)],
                    "controller": True,
                }
            ]
            meta.setdefault("labels", {})[POD_TEMPLATE_HASH] = hashes[(ns, d)]
            owned = True
        elif okind in WORKLOAD_KINDS and (okind, ns, oname) in workloads:
            meta["ownerReferences"] = [
                {"apiVersion": "apps/v1", "kind": okind, "name": oname, "controller": True}
            ]
            owned = True
        elif okind == "Node":
            _note(report, "Pod", key, "a static (mirror) pod: imported as a bare pod")
        else:
            _note(
                report,
                "Pod",
                key,
                f"its owner {okind}/{oname} is not imported: a bare pod, not recreated",
            )
    spec = _clean_pod_spec(spec_in, ref is not None and ref.get("kind") == "DaemonSet", unsimulated)
    node = spec.get("nodeName")
    if node and node not in node_names:
        _note(report, "Pod", key, f"on node {node}, which is not in the List: left unscheduled")
        del spec["nodeName"]
    _priority_fix(spec, "Pod", key, report if not owned else [], None)
    if not owned:  # a workload's pods report what its template does
        for why in dict.fromkeys(unsimulated):
            _note(report, "Pod", key, why)
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    validate_manifest(manifest, path)
    return manifest


# -- component configuration ---------------------------------------------------------------------
def _load_one(text: str, what: str) -> dict[str, Any]:
    docs = read_documents(text)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise ScenarioError(what, "must be one YAML mapping")
    return docs[0]


def _check_type(doc: dict[str, Any], what: str, api: str, kind: str) -> None:
    if doc.get("kind") != kind:
        raise ScenarioError(f"{what}.kind", f"must be {kind}, got {_show(doc.get('kind'))}")
    if doc.get("apiVersion") != api:
        raise ScenarioError(
            f"{what}.apiVersion", f"must be {api}, got {_show(doc.get('apiVersion'))}"
        )


# KubeletConfiguration fields with no effect on anything simulated are dropped without a word.
KUBELET_SILENT = {
    "apiVersion",
    "kind",
    "authentication",
    "authorization",
    "clusterDNS",
    "clusterDomain",
    "staticPodPath",
    "tlsCertFile",
    "tlsPrivateKeyFile",
    "rotateCertificates",
    "serverTLSBootstrap",
    "address",
    "port",
    "readOnlyPort",
    "healthzBindAddress",
    "healthzPort",
    "logging",
    "containerRuntimeEndpoint",
    "resolvConf",
    "runtimeRequestTimeout",
    "streamingConnectionIdleTimeout",
    "syncFrequency",
    "fileCheckFrequency",
    "httpCheckFrequency",
    "volumeStatsAggPeriod",
    "cgroupDriver",
    "cgroupRoot",
    "cgroupsPerQOS",
    "cpuManagerReconcilePeriod",
    "containerLogMaxSize",
    "containerLogMaxFiles",
    "registerNode",
    "providerID",
    "hairpinMode",
    "serializeImagePulls",
}


def merge_kubelet_config(spec: dict[str, Any], text: str, report: Report) -> None:
    """A KubeletConfiguration's simulated fields into ``spec.kubelet``."""
    what = "KubeletConfiguration"
    doc = _load_one(text, what)
    _check_type(doc, what, "kubelet.config.k8s.io/v1beta1", "KubeletConfiguration")
    section = dict(spec.get("kubelet") or {})
    for k, v in doc.items():
        if k in KUBELET_FIELDS:
            section[k] = v
        elif k == "featureGates":
            _merge_gates(spec, _map(v, f"{what}.featureGates"), f"{what}.featureGates", report)
        elif k not in KUBELET_SILENT:
            why = (
                "not simulated: the simulated kubelet keeps only evictionHard back from capacity"
                if k in ("kubeReserved", "systemReserved", "kubeReservedCgroup")
                else "not simulated"
            )
            _note(report, what, k, why)
    apply_fields(KubeletConfig(), section, KUBELET_FIELDS, what)  # its own paths
    spec["kubelet"] = section


def _ci(d: dict[str, Any], key: str) -> tuple[str, Any] | None:
    """Go's encoding/json matches field names case-insensitively."""
    for k, v in d.items():
        if isinstance(k, str) and k.lower() == key.lower():
            return k, v
    return None


def merge_controller_manager_config(spec: dict[str, Any], text: str, report: Report) -> None:
    """A KubeControllerManagerConfiguration's node lifecycle settings into
    ``spec.controllerManager`` (NodeLifecycleController, KubeCloudShared.NodeMonitorPeriod)."""
    what = "KubeControllerManagerConfiguration"
    doc = _load_one(text, what)
    _check_type(
        doc,
        what,
        "kubecontrollermanager.config.k8s.io/v1alpha1",
        "KubeControllerManagerConfiguration",
    )
    section = dict(spec.get("controllerManager") or {})
    for top, value in doc.items():
        if top in ("apiVersion", "kind"):
            continue
        tp = f"{what}.{top}"
        block = _map(value, tp)
        if top.lower() == "nodelifecyclecontroller":
            for k, v in block.items():
                field_ = next((f for f in CM_FIELDS if f.lower() == str(k).lower()), None)
                if field_ is None or field_ == "nodeMonitorPeriod":
                    _note(report, what, f"{top}.{k}", "not simulated")
                    continue
                _convert(CM_FIELDS[field_][1], v, f"{tp}.{k}")
                section[field_] = v
        elif top.lower() == "kubecloudshared":
            for k, v in block.items():
                if str(k).lower() == "nodemonitorperiod":
                    _convert("duration+", v, f"{tp}.{k}")
                    section["nodeMonitorPeriod"] = v
                else:
                    _note(report, what, f"{top}.{k}", "not simulated")
        elif block:
            _note(report, what, top, "not simulated")
    apply_fields(
        ControllerManagerConfig(), section, CM_FIELDS, f"{what} (as spec.controllerManager)"
    )
    spec["controllerManager"] = section


# kube-controller-manager and kube-apiserver flags -> (section, field)
FLAGS: dict[str, tuple[str, str]] = {
    "node-monitor-period": ("controllerManager", "nodeMonitorPeriod"),
    "node-monitor-grace-period": ("controllerManager", "nodeMonitorGracePeriod"),
    "node-startup-grace-period": ("controllerManager", "nodeStartupGracePeriod"),
    "pod-eviction-timeout": ("controllerManager", "podEvictionTimeout"),
    "node-eviction-rate": ("controllerManager", "nodeEvictionRate"),
    "secondary-node-eviction-rate": ("controllerManager", "secondaryNodeEvictionRate"),
    "large-cluster-size-threshold": ("controllerManager", "largeClusterSizeThreshold"),
    "unhealthy-zone-threshold": ("controllerManager", "unhealthyZoneThreshold"),
    "enable-taint-manager": ("controllerManager", "enableTaintManager"),
    "default-not-ready-toleration-seconds": ("apiServer", "defaultNotReadyTolerationSeconds"),
    "default-unreachable-toleration-seconds": ("apiServer", "defaultUnreachableTolerationSeconds"),
}
SECTION_TABLES = {"controllerManager": CM_FIELDS, "apiServer": API_FIELDS}


def parse_flags(text: str) -> list[tuple[str, str]]:
    """``--a=1 --b 2 --c`` (a command line, or one flag per line) -> [(name, value)]."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ScenarioError("flags", f"cannot split the command line: {exc}") from None
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-"):
            if i == 0 or out:  # the program name, or a stray word
                if i == 0:
                    i += 1
                    continue
                raise ScenarioError("flags", f"{_show(w)} is not a flag (--name=value)")
        name = w.lstrip("-")
        if "=" in name:
            name, value = name.split("=", 1)
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            value = words[i + 1]
            i += 1
        else:
            value = "true"
        out.append((name, value))
        i += 1
    return out


def _flag_value(kind: str, value: str) -> Any:
    if kind in ("rate", "fraction"):
        try:
            return float(value)
        except ValueError:
            return value
    if kind in ("int", "int+"):
        return int(value) if re.fullmatch(r"-?\d+", value) else value
    if kind == "bool":
        return {"true": True, "false": False}.get(value.lower(), value)
    return value


def merge_flags(spec: dict[str, Any], text: str, report: Report) -> None:
    for name, value in parse_flags(text):
        path = f"--{name}"
        if name == "feature-gates":
            gates = {}
            for part in value.split(","):
                if not part.strip():
                    continue
                gate, _, v = part.partition("=")
                gates[gate.strip()] = _flag_value("bool", v.strip())
            _merge_gates(spec, gates, path, report)
            continue
        target = FLAGS.get(name)
        if target is None:
            _note(report, "flag", path, "not simulated")
            continue
        section, field_ = target
        table = SECTION_TABLES[section]
        v = _flag_value(table[field_][1], value)
        _convert(table[field_][1], v, path)
        spec.setdefault(section, {})[field_] = v


def _merge_gates(spec: dict[str, Any], gates: dict[str, Any], path: str, report: Report) -> None:
    for gate, v in gates.items():
        if gate in GATE_FIELDS:
            _convert("bool", v, f"{path}.{gate}")
            spec.setdefault("featureGates", {})[gate] = v
        else:
            _note(report, "featureGate", gate, "not simulated")


def _drop_refused_fields(spec: dict[str, Any], report: Report) -> None:
    """A field the chosen release does not have (the release came from the kubelets): dropped
    and reported rather than refused, since the snapshot decided the release."""
    from .engine.versions import profile_for

    profile = profile_for(spec.get("kubernetesVersion"))
    for section in ("controllerManager", "kubelet", "apiServer", "featureGates"):
        block = spec.get(section)
        if not isinstance(block, dict):
            continue
        for key in list(block):
            why = profile.fields_refused.get(f"{section}.{key}")
            if why is not None:
                del block[key]
                _note(report, section, key, f"not in Kubernetes {profile.version}: {why}")
        if not block:
            del spec[section]


def merge_report(report: Report) -> Report:
    """One entry per (kind, why): the names joined (six at most, then how many more)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in report:
        groups.setdefault((r["kind"], r["why"]), []).append(r["name"])
    out = []
    for (kind, why), names in groups.items():
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        out.append({"kind": kind, "name": shown, "why": why})
    return out


def dump_scenario(scenario: dict[str, Any], report: Report) -> str:
    """The scenario as YAML, the report as a leading comment."""
    lines = [f"# {scenario.get('description', '')}".rstrip()]
    if report:
        lines.append(IMPORT_REPORT_HEADER)
        lines.extend(f"#   {r['kind']} {r['name']}: {r['why']}" for r in report)
    header = "\n".join(lines) + "\n"
    # Collections of scalars in flow style ({cpu: 250m, memory: 256Mi}): a third smaller, and
    # a big cluster stays within the scenario size limit.
    # libyaml's emitter: the same text as yaml.safe_dump, three times faster (a 300-node,
    # 2,400-pod cluster: 0.6 s instead of 2 s).
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return header + yaml.dump(
        scenario, Dumper=dumper, sort_keys=False, width=120, default_flow_style=None
    )


def is_imported(scenario_yaml: str) -> bool:
    """Whether a scenario was written by the import (its first line says so)."""
    return scenario_yaml.startswith(f"# {IMPORTED_PREFIX}")


def import_report_of(scenario_yaml: str) -> Report:
    """The import report an imported scenario carries in its leading comment (dump_scenario),
    or [] for any other scenario."""
    out: Report = []
    inside = False
    for line in scenario_yaml.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(IMPORT_REPORT_HEADER):
            inside = True
            continue
        if inside and line.startswith("#   "):
            kind, _, rest = line[4:].partition(" ")
            name, _, why = rest.partition(": ")
            out.append({"kind": kind, "name": name, "why": why})
    return out


def format_report(report: Report) -> str:
    return "".join(f"{r['kind']} {r['name']}: {r['why']}\n" for r in report)


# -- command line (manage.py import_cluster) ---------------------------------------------------
def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        raise ScenarioError(what, f"cannot read {path}: {exc.strerror}") from None


def run_cli(
    path: str,
    kubelet_config: str | None,
    controller_manager_config: str | None,
    flags: str | None,
    name: str | None,
    out: Any,
    err: Any,
) -> int:
    """The scenario to ``out``, the report to ``err``; exit 2 on bad input (with its path)."""
    try:
        scenario, report = import_cluster(
            _read(path, "FILE") if path != "-" else sys.stdin.read(),
            name=name or "imported-cluster",
            kubelet_config=_read(kubelet_config, "--kubelet-config") if kubelet_config else None,
            controller_manager_config=_read(
                controller_manager_config, "--controller-manager-config"
            )
            if controller_manager_config
            else None,
            flags=flags,
        )
    except ScenarioError as exc:
        err.write(f"error: {exc}\n")
        return 2
    out.write(dump_scenario(scenario, report))
    if report:
        err.write(f"import report: {len(report)} notes (also at the top of the scenario)\n")
        err.write(format_report(report))
    return 0
