"""Workloads and pods of kubectl output -> manifests the engine runs: the pod spec fields it
reads, owners rewritten to the ReplicaSets the simulated Deployment controller creates, the
rest reported."""

from __future__ import annotations

import copy
from typing import Any

from ..engine.manifests import validate_manifest
from ..engine.objects import PRIORITY_CLASSES
from ..engine.scenario import _map
from ..engine.workloads import POD_TEMPLATE_HASH, compute_hash
from .documents import WORKLOAD_KINDS
from .report import Report, note, object_key

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
            note(
                report,
                kind,
                name,
                f"priority class {cls} is not imported (PriorityClasses are not in the List) "
                "and no pod shows its value: priority 0",
            )
            return
        spec["priority"] = priority
    note(
        report,
        kind,
        name,
        f"priority class {cls} is not imported (PriorityClasses are not in the List): "
        f"spec.priority {spec['priority']} kept",
    )


def convert_objects(
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
            note(
                report,
                "Deployment",
                object_key(ns, d),
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
            note(report, kind, object_key(ns, wname), why)
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
            note(
                report,
                kind,
                object_key(ns, wname),
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
    _priority_fix(tspec, kind, object_key(ns, wname), report, pod_priority.get((kind, ns, wname)))
    out_spec["template"] = {"metadata": clean_tmeta, "spec": tspec}
    manifest = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": meta,
        "spec": out_spec,
    }
    for why in dict.fromkeys(unsimulated):
        note(report, kind, object_key(ns, wname), why)
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
    key = object_key(ns, pname)
    status = item.get("status") if isinstance(item.get("status"), dict) else {}
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed"):
        note(report, "Pod", key, f"phase {phase}: a finished pod is not imported")
        return None
    if meta_in.get("deletionTimestamp"):
        note(report, "Pod", key, "being deleted (metadata.deletionTimestamp): not imported")
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
            note(report, "Pod", key, "a static (mirror) pod: imported as a bare pod")
        else:
            note(
                report,
                "Pod",
                key,
                f"its owner {okind}/{oname} is not imported: a bare pod, not recreated",
            )
    spec = _clean_pod_spec(spec_in, ref is not None and ref.get("kind") == "DaemonSet", unsimulated)
    node = spec.get("nodeName")
    if node and node not in node_names:
        note(report, "Pod", key, f"on node {node}, which is not in the List: left unscheduled")
        del spec["nodeName"]
    _priority_fix(spec, "Pod", key, report if not owned else [], None)
    if not owned:  # a workload's pods report what its template does
        for why in dict.fromkeys(unsimulated):
            note(report, "Pod", key, why)
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    validate_manifest(manifest, path)
    return manifest
