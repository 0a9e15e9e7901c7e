"""apps/v1 Deployments, ReplicaSets, StatefulSets and DaemonSets from the room's views: the
workloads' desired and ready replicas (the ``metrics`` view the page's chart reads) and their
pods (owner, labels, containers). What the views do not keep is derived: the selector is the
labels the pods share (without the controllers' own hash labels), every workload is at
generation 1 and observed, updated replicas are its live pods; a Deployment's ReplicaSets are
its pods' owners."""

from __future__ import annotations

from typing import Any

from .objects import IMAGE, Clock, quantities

HASH_LABELS = (
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
    "pod-template-generation",
    "apps.kubernetes.io/pod-index",
)


def _selector(pods: list[dict[str, Any]]) -> dict[str, str]:
    common: dict[str, str] | None = None
    for p in pods:
        labels = {k: v for k, v in (p.get("labels") or {}).items() if k not in HASH_LABELS}
        common = (
            labels if common is None else {k: v for k, v in common.items() if labels.get(k) == v}
        )
    return dict(sorted((common or {}).items()))


def _template(pods: list[dict[str, Any]], selector: dict[str, str]) -> dict[str, Any]:
    containers = (pods[0].get("containers") if pods else None) or [{"name": "main", "requests": {}}]
    return {
        "metadata": {"labels": selector},
        "spec": {
            "containers": [
                {
                    "name": c["name"],
                    "image": IMAGE,
                    "resources": {"requests": quantities(c.get("requests") or {})}
                    if c.get("requests")
                    else {},
                }
                for c in containers
            ]
        },
    }


def collect(
    metrics: dict[str, list[int]], pods: list[dict[str, Any]]
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Every workload as (kind, namespace, name, facts): desired, ready, live (pods not
    terminating), pods, owner (a ReplicaSet's Deployment)."""
    by_owner: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for p in pods:
        if p.get("owner"):
            kind, _, name = p["owner"].partition("/")
            ns = p["key"].partition("/")[0]
            by_owner.setdefault((kind, ns, name), []).append(p)
    out = []
    deployments = set()
    for key, value in sorted(metrics.items()):
        kind, ns, name = (key.split("/") + ["", ""])[:3]
        desired, ready = (list(value) + [0, 0])[:2]
        owned = by_owner.get((kind, ns, name), [])
        if kind == "Deployment":
            deployments.add((ns, name))
            owned = [
                p
                for (k, n, o), ps in by_owner.items()
                if k == "ReplicaSet" and n == ns and o.rsplit("-", 1)[0] == name
                for p in ps
            ]
        out.append(
            (kind, ns, name, {"desired": desired, "ready": ready, "pods": owned, "owner": None})
        )
    for (kind, ns, name), owned in sorted(by_owner.items()):
        if kind != "ReplicaSet":
            continue
        parent = name.rsplit("-", 1)[0]
        live = [p for p in owned if not p.get("terminating")]
        facts = {
            "desired": len(live),
            "ready": sum(1 for p in live if p.get("ready")),
            "pods": owned,
            "owner": parent if (ns, parent) in deployments else None,
        }
        out.append((kind, ns, name, facts))
    return out


def workload(
    kind: str, ns: str, name: str, facts: dict[str, Any], clock: Clock, rv: int
) -> dict[str, Any]:
    pods = facts["pods"]
    live = [p for p in pods if not p.get("terminating")]
    selector = _selector(pods)
    created = min((p.get("created", 0) for p in pods), default=0) if kind == "ReplicaSet" else 0
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": f"{kind.lower()}-{ns}-{name}",
        "resourceVersion": str(rv),
        "generation": 1,
        "creationTimestamp": clock.time(min(created, clock.sim_now_s)),
        "labels": selector,
    }
    if facts.get("owner"):
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": facts["owner"],
                "uid": f"deployment-{ns}-{facts['owner']}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    desired, ready = int(facts["desired"]), int(facts["ready"])
    spec: dict[str, Any] = {
        "selector": {"matchLabels": selector},
        "template": _template(pods, selector),
    }
    status: dict[str, Any] = {"observedGeneration": 1}
    if kind == "DaemonSet":
        status.update(
            {
                "currentNumberScheduled": len(live),
                "desiredNumberScheduled": desired,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "updatedNumberScheduled": len(live),
                "numberAvailable": ready,
            }
        )
        if ready < desired:
            status["numberUnavailable"] = desired - ready
    else:
        spec["replicas"] = desired
        status.update(
            {
                "replicas": len(live),
                "readyReplicas": ready,
                "availableReplicas": ready,
            }
        )
        if kind in ("Deployment", "StatefulSet"):
            status["updatedReplicas"] = len(live)
        if kind == "StatefulSet":
            status["currentReplicas"] = len(live)
            spec["serviceName"] = name
        if kind == "Deployment":
            available = "True" if ready >= desired else "False"
            status["conditions"] = [
                {
                    "type": "Available",
                    "status": available,
                    "reason": "MinimumReplicasAvailable"
                    if available == "True"
                    else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if available == "True"
                    else "Deployment does not have minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable",
                    "message": f'ReplicaSet "{name}" has successfully progressed.',
                },
            ]
            spec["strategy"] = {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            }
    return {"kind": kind, "apiVersion": "apps/v1", "metadata": meta, "spec": spec, "status": status}


def scale(obj: dict[str, Any]) -> dict[str, Any]:
    """autoscaling/v1 Scale of a workload."""
    labels = obj["spec"]["selector"]["matchLabels"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: obj["metadata"][k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        },
        "spec": {"replicas": obj["spec"].get("replicas", 0)},
        "status": {
            "replicas": obj["status"].get("replicas", 0),
            "selector": ",".join(f"{k}={v}" for k, v in labels.items()),
        },
    }
