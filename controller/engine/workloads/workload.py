"""The Workload object (a Deployment, ReplicaSet, StatefulSet or DaemonSet: spec, status and
controller state) and its parsing from a manifest."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..objects import OwnerRef, Pod
from ..scenario import INT32_MAX, ScenarioError, _int, _map, _show, _str
from .common import (
    ORDERED_READY,
    PARALLEL,
    RECREATE,
    ROLLING_UPDATE,
)


def parse_workload(manifest: dict[str, Any], path: str = "object") -> dict[str, Any]:
    """The workload fields the controllers use, with their Kubernetes defaults; bad values are
    refused with their path (ScenarioError)."""
    kind = manifest["kind"]
    meta = _map(manifest.get("metadata"), f"{path}.metadata")
    spec = _map(manifest.get("spec"), f"{path}.spec")
    template = copy.deepcopy(_map(spec.get("template"), f"{path}.spec.template"))  # private
    tmeta = template.setdefault("metadata", {})
    selector = _map(spec.get("selector"), f"{path}.spec.selector")
    match = dict(_map(selector.get("matchLabels"), f"{path}.spec.selector.matchLabels"))
    if not match:
        match = dict(tmeta.get("labels") or {})
    out: dict[str, Any] = {
        "namespace": _str(meta.get("namespace", "default"), f"{path}.metadata.namespace"),
        "name": str(meta["name"]),
        "replicas": _int(spec.get("replicas", 1), f"{path}.spec.replicas", maximum=INT32_MAX)
        if kind != "DaemonSet"
        else 0,
        "template": template,
        "selector": {str(k): str(v) for k, v in match.items()},
    }
    if kind == "Deployment":
        strategy = _map(spec.get("strategy"), f"{path}.spec.strategy")
        stype = strategy.get("type", ROLLING_UPDATE)
        if stype not in (ROLLING_UPDATE, RECREATE):
            raise ScenarioError(
                f"{path}.spec.strategy.type",
                f"must be RollingUpdate or Recreate, got {_show(stype)}",
            )
        rolling = _map(strategy.get("rollingUpdate"), f"{path}.spec.strategy.rollingUpdate")
        out["strategy"] = stype
        for key in ("maxSurge", "maxUnavailable"):
            value = rolling.get(key, "25%")
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            ok = ok or (isinstance(value, str) and value.endswith("%") and value[:-1].isdigit())
            if not ok:
                raise ScenarioError(
                    f"{path}.spec.strategy.rollingUpdate.{key}",
                    f"must be a count or a percentage, got {value!r}",
                )
            out[key] = value
        # ValidateRollingUpdateDeployment
        rp = f"{path}.spec.strategy.rollingUpdate"
        amounts = {k: int(str(out[k]).rstrip("%")) for k in ("maxSurge", "maxUnavailable")}
        if amounts["maxSurge"] == 0 and amounts["maxUnavailable"] == 0:
            raise ScenarioError(f"{rp}.maxUnavailable", "may not be 0 when `maxSurge` is 0")
        if str(out["maxUnavailable"]).endswith("%") and amounts["maxUnavailable"] > 100:
            raise ScenarioError(f"{rp}.maxUnavailable", "must not be greater than 100%")
    if kind == "StatefulSet":
        policy = spec.get("podManagementPolicy", ORDERED_READY)
        if policy not in (ORDERED_READY, PARALLEL):
            raise ScenarioError(
                f"{path}.spec.podManagementPolicy",
                f"must be OrderedReady or Parallel, got {_show(policy)}",
            )
        out["policy"] = policy
    return out


@dataclass(slots=True)
class Workload:
    """A Deployment, ReplicaSet, StatefulSet or DaemonSet: spec, status and controller state."""

    kind: str
    namespace: str
    name: str
    uid: str
    creation_ms: int
    replicas: int
    template: dict[str, Any]
    selector: dict[str, str]
    owner: OwnerRef | None = None  # a ReplicaSet's Deployment
    names_generated: int = 0
    # status
    status_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    # Deployment
    strategy: str = ROLLING_UPDATE
    max_surge: int | str = "25%"
    max_unavailable: int | str = "25%"
    template_hash: str = ""  # Deployment: of its template; ReplicaSet: its pod-template-hash
    collision_count: int = 0
    updated_replicas: int = 0
    # ReplicaSet of a Deployment: revision and the deployment.kubernetes.io/* annotations
    revision: int = 0
    desired_annotation: int | None = None
    max_annotation: int | None = None
    # StatefulSet
    policy: str = ORDERED_READY
    # DaemonSet
    proto: Pod | None = None  # the parsed pod template (DaemonSet: with daemon tolerations)
    dirty_nodes: set[str] | None = None  # None: every node
    should_run: set[str] = field(default_factory=set)
    ready_nodes: set[str] = field(default_factory=set)
    backoff: dict[str, tuple[int, int]] = field(default_factory=dict)  # node -> (delay, last)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    def desired_and_ready(self) -> tuple[int, int]:
        if self.kind == "DaemonSet":
            return len(self.should_run), len(self.ready_nodes)
        return self.replicas, self.ready_replicas
