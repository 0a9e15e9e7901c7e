"""Building a Scenario from a parsed document: its spec fields, with nodes and faults read by
their modules."""

from __future__ import annotations

from typing import Any

from ..config import (
    ApiServerConfig,
    ClusterConfig,
    ControllerManagerConfig,
    FeatureGates,
    KubeletConfig,
)
from ..versions import (
    check_fields,
    default_config,
    profile_for,
)
from .components import (
    API_FIELDS,
    CM_FIELDS,
    GATE_FIELDS,
    KUBELET_FIELDS,
    apply_fields,
    parse_scheduler,
)
from .fault_specs import (
    parse_faults,
)
from .fields import (
    _dur,
    _list,
    _map,
    _no_unknown,
    _show,
    _str,
)
from .model import (
    Scenario,
    ScenarioError,
)
from .nodes import (
    parse_nodes,
)


def parse_scenario(root: dict[str, Any], extra_objects: list[Any] | None = None) -> Scenario:
    _no_unknown(root, {"apiVersion", "kind", "metadata", "spec", "description"}, "")
    api = root.get("apiVersion", "playground/v1alpha1")
    if api != "playground/v1alpha1":
        raise ScenarioError("apiVersion", f'must be "playground/v1alpha1", got {_show(api)}')
    meta = _map(root.get("metadata"), "metadata")
    name = _str(meta.get("name", "scenario"), "metadata.name")
    spec = _map(root.get("spec"), "spec")
    _no_unknown(
        spec,
        {
            "duration",
            "controllerManager",
            "kubelet",
            "apiServer",
            "scheduler",
            "featureGates",
            "nodes",
            "objects",
            "faults",
            "expect",
            "seed",
            "kubernetesVersion",
            "lesson",
        },
        "spec",
    )
    profile = profile_for(spec.get("kubernetesVersion"), "spec.kubernetesVersion")
    check_fields(profile, spec)
    duration_ms = _dur(spec.get("duration", "600s"), "spec.duration", minimum_ms=1)
    config = ClusterConfig(
        controller_manager=apply_fields(
            default_config(ControllerManagerConfig, profile),
            spec.get("controllerManager"),
            CM_FIELDS,
            "spec.controllerManager",
        ),
        kubelet=apply_fields(
            default_config(KubeletConfig, profile),
            spec.get("kubelet"),
            KUBELET_FIELDS,
            "spec.kubelet",
        ),
        api_server=apply_fields(
            ApiServerConfig(), spec.get("apiServer"), API_FIELDS, "spec.apiServer"
        ),
        scheduler=parse_scheduler(spec.get("scheduler"), "spec.scheduler"),
        feature_gates=apply_fields(
            FeatureGates(), spec.get("featureGates"), GATE_FIELDS, "spec.featureGates"
        ),
        profile=profile,
    )
    kubelet_raw = spec.get("kubelet") or {}
    nodes = parse_nodes(spec.get("nodes"), config.kubelet, kubelet_raw, "spec.nodes", profile)
    objects = _list(spec.get("objects"), "spec.objects") + list(extra_objects or [])
    from ..manifests import validate_manifest

    for i, obj in enumerate(objects):
        validate_manifest(obj, f"spec.objects[{i}]")
    node_names = {n.name for n in nodes}
    from ..lesson import check_focus, compiled_expectations, compiled_faults, parse_lesson

    lesson = parse_lesson(spec)
    faults = parse_faults(
        spec.get("faults"),
        node_names,
        config.kubelet,
        kubelet_raw,
        "spec.faults",
        profile,
        extra=compiled_faults(lesson) if lesson else (),
    )
    expect = [
        _map(e, f"spec.expect[{i}]") for i, e in enumerate(_list(spec.get("expect"), "spec.expect"))
    ]
    from ..expect import validate_expectation

    for i, e in enumerate(expect):
        validate_expectation(e, f"spec.expect[{i}]")
    expect_paths = [f"spec.expect[{i}]" for i in range(len(expect))]
    if lesson is not None:
        all_nodes = node_names | {f.args["spec"].name for f in faults if f.type == "AddNode"}
        zones = {
            n.labels.get("topology.kubernetes.io/zone", "")
            for n in [*nodes, *(f.args["spec"] for f in faults if f.type == "AddNode")]
        }
        check_focus(lesson, all_nodes, zones)
        for e, path in compiled_expectations(lesson):
            expect.append(e)
            expect_paths.append(path)
    return Scenario(
        name=name,
        duration_ms=duration_ms,
        config=config,
        nodes=nodes,
        objects=objects,
        faults=faults,
        expect=expect,
        description=_str(root["description"], "description") if root.get("description") else "",
        raw=root,
        lesson=lesson,
        expect_paths=expect_paths,
    )
