"""What a room's API serves, and the discovery documents that say so: ``/version``,
``/api``, ``/apis``, each group-version's APIResourceList (legacy discovery) and the
aggregated APIGroupDiscoveryList in the form the client's Accept asks for
(apidiscovery.k8s.io v2, or v2beta1: kubectl 1.27-1.29 understand only that one). Ports of
k8s.io/apiserver/pkg/endpoints/discovery (legacy) and .../discovery/aggregated."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

READ = ("get", "list", "watch")


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    name: str  # plural, as in the URL
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = READ
    short: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # subresource name -> (group, version, kind, verbs)
    subresources: dict[str, tuple[str, str, str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


SCALE = ("autoscaling", "v1", "Scale", ("get", "patch", "update"))
RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "Namespace", False, short=("ns",)),
    Resource(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        ("delete", "get", "list", "patch", "watch"),
        ("no",),
        subresources={"status": ("", "v1", "Node", ("get",))},
    ),
    Resource(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        ("delete", "get", "list", "watch"),
        ("po",),
        ("all",),
        {
            "eviction": ("policy", "v1", "Eviction", ("create",)),
            "status": ("", "v1", "Pod", ("get",)),
        },
    ),
    Resource("", "v1", "events", "Event", True, short=("ev",)),
    Resource("", "v1", "services", "Service", True, short=("svc",), categories=("all",)),
    Resource(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        ("get", "list", "patch", "watch"),
        ("deploy",),
        ("all",),
        {"scale": SCALE},
    ),
    Resource(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        True,
        ("get", "list", "patch", "watch"),
        ("rs",),
        ("all",),
        {"scale": SCALE},
    ),
    Resource(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        True,
        ("get", "list", "patch", "watch"),
        ("sts",),
        ("all",),
        {"scale": SCALE},
    ),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, short=("ds",), categories=("all",)),
    Resource("events.k8s.io", "v1", "events", "Event", True, short=("ev",)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, short=("pdb",)),
    Resource("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, ("get", "list")),
    Resource("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, ("get", "list")),
    Resource(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        ("create",),
    ),
)
GROUPS: tuple[str, ...] = (
    "apps",
    "events.k8s.io",
    "authorization.k8s.io",
    "policy",
    "coordination.k8s.io",
    "metrics.k8s.io",
)
# A group's one version (v1 but for metrics-server's).
VERSION_OF = {"metrics.k8s.io": "v1beta1"}


def find(group: str, version: str, name: str) -> Resource | None:
    for r in RESOURCES:
        if (r.group, r.version, r.name) == (group, version, name):
            return r
    return None


def served_group_versions() -> set[tuple[str, str]]:
    return {(r.group, r.version) for r in RESOURCES}


def version_info(release: str) -> dict[str, str]:
    """/version (version.Info) of the room's release: ``1.34`` -> v1.34.0."""
    major, _, minor = release.partition(".")
    return {
        "major": major,
        "minor": minor,
        "gitVersion": f"v{release}.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


# -- legacy discovery -----------------------------------------------------------------------
def api_versions() -> dict[str, Any]:
    """/api: metav1.APIVersions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def _group(name: str) -> dict[str, Any]:
    version = VERSION_OF.get(name, "v1")
    gv = {"groupVersion": f"{name}/{version}", "version": version}
    return {"name": name, "versions": [gv], "preferredVersion": gv}


def api_group_list() -> dict[str, Any]:
    """/apis: metav1.APIGroupList."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g) for g in GROUPS]}


def api_group(name: str) -> dict[str, Any]:
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name)}


def resource_list(group: str, version: str) -> dict[str, Any]:
    """/api/v1, /apis/<group>/<version>: metav1.APIResourceList, subresources as
    ``pods/eviction`` entries (kubectl drain finds the Eviction API there)."""
    out = []
    for r in RESOURCES:
        if (r.group, r.version) != (group, version):
            continue
        entry: dict[str, Any] = {
            "name": r.name,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short:
            entry["shortNames"] = list(r.short)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for sub, (sg, sv, skind, sverbs) in r.subresources.items():
            item: dict[str, Any] = {
                "name": f"{r.name}/{sub}",
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": skind,
                "verbs": list(sverbs),
            }
            if (sg, sv) != (group, version):
                item["group"], item["version"] = sg, sv
            out.append(item)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


# -- aggregated discovery -------------------------------------------------------------------
AGGREGATED = "APIGroupDiscoveryList"


def _discovery_resource(r: Resource) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": r.name,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": list(r.verbs),
    }
    if r.short:
        out["shortNames"] = list(r.short)
    if r.categories:
        out["categories"] = list(r.categories)
    subs = [
        {
            "subresource": sub,
            "responseKind": {"group": sg, "version": sv, "kind": skind},
            "verbs": list(sverbs),
        }
        for sub, (sg, sv, skind, sverbs) in r.subresources.items()
    ]
    if subs:
        out["subresources"] = subs
    return out


def aggregated(core: bool, version: str) -> dict[str, Any]:
    """The APIGroupDiscoveryList of ``/api`` (core) or ``/apis`` in apidiscovery.k8s.io
    ``version`` (v2 and v2beta1 have the same fields)."""
    names = [""] if core else list(GROUPS)
    items = []
    for name in names:
        resources = [_discovery_resource(r) for r in RESOURCES if r.group == name]
        meta: dict[str, Any] = {"creationTimestamp": None}
        if name:
            meta["name"] = name
        items.append(
            {
                "metadata": meta,
                "versions": [
                    {
                        "version": VERSION_OF.get(name, "v1"),
                        "resources": resources,
                        "freshness": "Current",
                    }
                ],
            }
        )
    return {
        "kind": AGGREGATED,
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def negotiate_discovery(accept: str) -> str | None:
    """The form of ``/api`` and ``/apis`` to answer: ``v2`` or ``v2beta1`` (aggregated) when
    the Accept lists it before plain JSON, ``legacy`` for application/json or */*, None when
    nothing acceptable is offered. Order of the Accept's entries decides (client-go lists its
    preference first; q values are not sent)."""
    if not accept.strip():
        return "legacy"
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        p = dict(x.split("=", 1) for x in params if "=" in x)
        if media in ("application/json", "*/*", "application/*"):
            if p.get("as") == AGGREGATED and p.get("g") == "apidiscovery.k8s.io":
                if p.get("v") in ("v2", "v2beta1"):
                    return p["v"]
                continue
            if "as" in p:
                continue
            return "legacy"
    return None
