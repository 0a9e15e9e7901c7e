"""Scenario files (design.md, "Scenario file"): YAML -> a validated ``Scenario``.

Bad input is refused whole with the path of the first wrong field and why
(``spec.nodes[3].capacity.memory: "16GB" is not a Kubernetes quantity``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from . import safe_yaml
from .clock import SECOND
from .config import (
    ApiServerConfig,
    ClusterConfig,
    ControllerManagerConfig,
    FeatureGates,
    KubeletConfig,
    copy_config,
)
from .quantity import DurationError, QuantityError, milli_value, parse_duration_ms, quantity_to_int
from .validation import dns1123_subdomain, label_value, qualified_name
from .versions import (
    Profile,
    check_fault_type,
    check_fields,
    check_section,
    default_config,
    profile_for,
)

MAX_SCENARIO_BYTES = (
    32 * 1024 * 1024
)  # the parser's hard cap; servers set PLAYGROUND_MAX_SCENARIO_BYTES
DEFAULT_CAPACITY = {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi", "pods": "110"}
RESOURCE_NAMES = ("cpu", "memory", "ephemeral-storage", "pods")
USAGE_NAMES = ("memory", "ephemeral-storage", "pids")


class ScenarioError(ValueError):
    """A scenario refused: ``path`` names the first wrong field."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}" if path else why)
        self.path = path
        self.why = why


@dataclass(slots=True)
class NodeSpec:
    name: str
    labels: dict[str, str]
    capacity: dict[str, int]  # cpu milli, bytes, pods count
    usage: dict[str, int] = field(default_factory=dict)
    pid_max: int = 4_194_304
    inodes: int = 0
    imagefs: int | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    dead_containers: int = 0
    kubelet_offset_ms: int = 0
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    kubelet_mode: str = "Running"
    unschedulable: bool = False


@dataclass(slots=True)
class Fault:
    at_ms: int
    type: str
    args: dict[str, Any]  # the fault as written, without at/type
    path: str = ""  # where it was written ("spec.faults[3]", "action"), for errors at its time


@dataclass(slots=True)
class Scenario:
    name: str
    duration_ms: int
    config: ClusterConfig
    nodes: list[NodeSpec]
    objects: list[dict[str, Any]]
    faults: list[Fault]
    expect: list[dict[str, Any]]
    description: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    lesson: Any = None  # lesson.Lesson (spec.lesson), or None
    # Where each ``expect`` item was written: "spec.expect[3]", or a lesson checkpoint's
    # "spec.lesson.steps[1].checkpoint.expect[0]" (compiled after spec.expect's own).
    expect_paths: list[str] = field(default_factory=list)

    @property
    def profile(self) -> Profile:
        return self.config.profile

    @property
    def kubelet_raw(self) -> dict[str, Any]:
        """The scenario's kubelet section as written: a node's or an AddNode's own
        ``kubelet:`` settings merge over it."""
        return (self.raw.get("spec") or {}).get("kubelet") or {}


# -- typed field readers ---------------------------------------------------------------------
def _map(v: Any, path: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ScenarioError(path, f"must be a mapping, got {_show(v)}")
    for k in v:
        if not isinstance(k, str):
            raise ScenarioError(path, f"keys must be strings, got {_show(k)}")
    return v


def _list(v: Any, path: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ScenarioError(path, f"must be a list, got {_show(v)}")
    return v


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str) or not v:
        raise ScenarioError(path, f"must be a non-empty string, got {_show(v)}")
    return v


INT32_MAX = 2**31 - 1  # Kubernetes int32 fields (replicas)


def _int(v: Any, path: str, minimum: int | None = 0, maximum: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
            v = int(v)
        else:
            raise ScenarioError(path, f"must be an integer, got {_show(v)}")
    if minimum is not None and v < minimum:
        raise ScenarioError(path, f"must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ScenarioError(path, f"must be <= {maximum}, got {v}")
    return v


def _num(v: Any, path: str, minimum: float | None = 0.0, maximum: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ScenarioError(path, f"must be a number, got {_show(v)}")
    if not math.isfinite(v):
        raise ScenarioError(path, f"must be a finite number, got {v}")
    if minimum is not None and v < minimum:
        raise ScenarioError(path, f"must be >= {minimum:g}, got {v:g}")
    if maximum is not None and v > maximum:
        raise ScenarioError(path, f"must be <= {maximum:g}, got {v:g}")
    return float(v)


def _bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        raise ScenarioError(path, f"must be true or false, got {_show(v)}")
    return v


def _dur(v: Any, path: str, minimum_ms: int = 0) -> int:
    try:
        ms = parse_duration_ms(v)
    except (DurationError, ValueError, TypeError) as exc:
        raise ScenarioError(path, str(exc)) from None
    if ms < minimum_ms:
        raise ScenarioError(path, f"must be at least {minimum_ms / 1000:g}s")
    return ms


def _qty(v: Any, path: str, milli: bool = False) -> int:
    try:
        n = milli_value(v) if milli else quantity_to_int(v)
    except (QuantityError, ValueError, TypeError):
        raise ScenarioError(path, f"{_show(v)} is not a Kubernetes quantity") from None
    if n < 0:
        raise ScenarioError(path, f"must not be negative, got {_show(v)}")
    return n


def _show(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if v is None:
        return "nothing"
    return repr(v)


def _no_unknown(d: dict[str, Any], allowed: set[str], path: str) -> None:
    for k in d:
        if k not in allowed:
            raise ScenarioError(f"{path}.{k}" if path else k, "unknown field")


def resources(d: Any, path: str) -> dict[str, int]:
    """A resource list (cpu in millicores, the rest as integers)."""
    out: dict[str, int] = {}
    for k, v in _map(d, path).items():
        out[k] = _qty(v, f"{path}.{k}", milli=(k == "cpu"))
    return out


# -- component configuration ------------------------------------------------------------------
CM_FIELDS: dict[str, tuple[str, str]] = {
    "nodeMonitorPeriod": ("node_monitor_period_ms", "duration+"),
    "nodeMonitorGracePeriod": ("node_monitor_grace_period_ms", "duration+"),
    "nodeStartupGracePeriod": ("node_startup_grace_period_ms", "duration"),
    "podEvictionTimeout": ("pod_eviction_timeout_ms", "duration"),
    "nodeEvictionRate": ("node_eviction_rate", "rate"),
    "secondaryNodeEvictionRate": ("secondary_node_eviction_rate", "rate"),
    "largeClusterSizeThreshold": ("large_cluster_size_threshold", "int"),
    "unhealthyZoneThreshold": ("unhealthy_zone_threshold", "fraction"),
    "enableTaintManager": ("enable_taint_manager", "bool"),
}
KUBELET_FIELDS: dict[str, tuple[str, str]] = {
    "nodeLeaseDurationSeconds": ("node_lease_duration_seconds", "int+"),
    "nodeStatusUpdateFrequency": ("node_status_update_frequency_ms", "duration+"),
    "nodeStatusReportFrequency": ("node_status_report_frequency_ms", "duration+"),
    "evictionHard": ("eviction_hard", "thresholds"),
    "evictionSoft": ("eviction_soft", "thresholds"),
    "evictionSoftGracePeriod": ("eviction_soft_grace_period", "durations"),
    "evictionMinimumReclaim": ("eviction_minimum_reclaim", "thresholds"),
    "evictionPressureTransitionPeriod": ("eviction_pressure_transition_period_ms", "duration"),
    "evictionMaxPodGracePeriod": ("eviction_max_pod_grace_period", "int"),
    "enforceNodeAllocatable": ("enforce_node_allocatable", "strings"),
    "imageGCHighThresholdPercent": ("image_gc_high_threshold_percent", "percent"),
    "imageGCLowThresholdPercent": ("image_gc_low_threshold_percent", "percent"),
    "imageMinimumGCAge": ("image_minimum_gc_age_ms", "duration"),
    "evictionRankingPolicy": ("eviction_ranking_policy", "ranking"),
    "shutdownGracePeriod": ("shutdown_grace_period_ms", "duration"),
    "shutdownGracePeriodCriticalPods": ("shutdown_grace_period_critical_pods_ms", "duration"),
    "shutdownGracePeriodByPodPriority": ("shutdown_grace_period_by_pod_priority", "shutdown"),
}
API_FIELDS: dict[str, tuple[str, str]] = {
    "defaultNotReadyTolerationSeconds": ("default_not_ready_toleration_seconds", "int"),
    "defaultUnreachableTolerationSeconds": ("default_unreachable_toleration_seconds", "int"),
    "disableAdmissionPlugins": ("disable_admission_plugins", "strings"),
}
GATE_FIELDS: dict[str, tuple[str, str]] = {
    "NodeDisruptionExclusion": ("node_disruption_exclusion", "bool"),
    "LegacyNodeRoleBehavior": ("legacy_node_role_behavior", "bool"),
}


def _convert(kind: str, v: Any, path: str) -> Any:
    if kind == "duration":
        return _dur(v, path)
    if kind == "duration+":
        return _dur(v, path, minimum_ms=1)
    if kind == "rate":
        return _num(v, path, minimum=0.0)
    if kind == "int":
        return _int(v, path)
    if kind == "int+":
        return _int(v, path, minimum=1)
    if kind == "fraction":
        return _num(v, path, minimum=0.0, maximum=1.0)
    if kind == "percent":
        return _int(v, path, minimum=0) if _int(v, path) <= 100 else _too_big(path, v)
    if kind == "bool":
        return _bool(v, path)
    if kind == "strings":
        return [_str(x, f"{path}[{i}]") for i, x in enumerate(_list(v, path))]
    if kind == "thresholds":
        out = {}
        for k, x in _map(v, path).items():
            if isinstance(x, int | float) and not isinstance(x, bool):
                x = str(x)
            out[k] = _str(x, f"{path}.{k}")
        return out
    if kind == "durations":
        out2 = {}
        for k, x in _map(v, path).items():
            _dur(x, f"{path}.{k}")
            out2[k] = x if isinstance(x, str) else f"{x}s"
        return out2
    if kind == "shutdown":
        return _shutdown_priorities(v, path)
    if kind == "ranking":
        if v not in ("priority", "qos"):
            raise ScenarioError(path, f'must be "priority" (v1.18) or "qos", got {_show(v)}')
        return v
    raise AssertionError(kind)


def _shutdown_priorities(v: Any, path: str) -> list[tuple[int, int]]:
    """ShutdownGracePeriodByPodPriority: a list of {priority, shutdownGracePeriodSeconds}."""
    out = []
    for i, item in enumerate(_list(v, path)):
        p = f"{path}[{i}]"
        d = _map(item, p)
        _no_unknown(d, {"priority", "shutdownGracePeriodSeconds"}, p)
        for key in ("priority", "shutdownGracePeriodSeconds"):
            if key not in d:
                raise ScenarioError(f"{p}.{key}", "is required")
        out.append(
            (
                _int(d["priority"], f"{p}.priority", minimum=-(2**31), maximum=2**31 - 1),
                _int(d["shutdownGracePeriodSeconds"], f"{p}.shutdownGracePeriodSeconds"),
            )
        )
    return out


def _go_seconds(ms: int) -> str:
    """A duration as Go prints it, for the seconds this field takes ("30s", "1.5s")."""
    return f"{ms / 1000:g}s"


def _check_shutdown(cfg: KubeletConfig, path: str) -> None:
    """The graceful node shutdown part of ValidateKubeletConfiguration."""
    grace, critical = cfg.shutdown_grace_period_ms, cfg.shutdown_grace_period_critical_pods_ms
    if critical > grace:
        raise ScenarioError(
            f"{path}.shutdownGracePeriodCriticalPods",
            f"{_go_seconds(critical)} must be <= shutdownGracePeriod {_go_seconds(grace)}",
        )
    for key, ms in (("shutdownGracePeriod", grace), ("shutdownGracePeriodCriticalPods", critical)):
        if 0 < ms < 1000:
            raise ScenarioError(
                f"{path}.{key}", f"{_go_seconds(ms)} must be either zero or otherwise >= 1 sec"
            )
    if cfg.shutdown_grace_period_by_pod_priority and (grace > 0 or critical > 0):
        raise ScenarioError(
            f"{path}.shutdownGracePeriodByPodPriority",
            "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at "
            "the same time",
        )


def _too_big(path: str, v: Any) -> int:
    raise ScenarioError(path, f"must be between 0 and 100, got {v}")


def apply_fields(obj: Any, data: Any, table: dict[str, tuple[str, str]], path: str) -> Any:
    """A copy of config dataclass ``obj`` with the camelCase fields of ``data`` applied."""
    d = _map(data, path)
    _no_unknown(d, set(table), path)
    changes = {}
    for key, value in d.items():
        attr, kind = table[key]
        changes[attr] = _convert(kind, value, f"{path}.{key}")
    out = copy_config(obj, **changes)
    if isinstance(out, KubeletConfig):
        _check_kubelet(out, data if isinstance(data, dict) else {}, path)
    return out


def _check_kubelet(cfg: KubeletConfig, data: dict[str, Any], path: str) -> None:
    from .kubelet.eviction.helpers import parse_threshold_config

    if "nodeStatusUpdateFrequency" in data and "nodeStatusReportFrequency" not in data:
        # Since 1.17 the report frequency follows an explicitly set update frequency.
        cfg.node_status_report_frequency_ms = cfg.node_status_update_frequency_ms
    try:
        parse_threshold_config(
            cfg.enforce_node_allocatable,
            cfg.eviction_hard,
            cfg.eviction_soft,
            cfg.eviction_soft_grace_period,
            cfg.eviction_minimum_reclaim,
            path_prefix=path,
        )
    except ValueError as exc:
        msg = str(exc)
        raise ScenarioError("", msg if msg.startswith(path) else f"{path}: {msg}") from None
    # ValidateKubeletConfiguration (pkg/kubelet/apis/config/validation)
    if cfg.image_gc_low_threshold_percent >= cfg.image_gc_high_threshold_percent:
        raise ScenarioError(
            f"{path}.imageGCLowThresholdPercent",
            f"{cfg.image_gc_low_threshold_percent} must be less than "
            f"imageGCHighThresholdPercent {cfg.image_gc_high_threshold_percent}",
        )
    for i, value in enumerate(cfg.enforce_node_allocatable):
        if value not in ("pods", "system-reserved", "kube-reserved", "none"):
            raise ScenarioError(
                f"{path}.enforceNodeAllocatable[{i}]",
                f"must be pods, system-reserved, kube-reserved or none, got {_show(value)}",
            )
    if "none" in cfg.enforce_node_allocatable and len(cfg.enforce_node_allocatable) > 1:
        raise ScenarioError(
            f"{path}.enforceNodeAllocatable", '"none" cannot be combined with other values'
        )
    _check_shutdown(cfg, path)


# -- loading ------------------------------------------------------------------------------------
def load_scenario_file(filename: str) -> Scenario:
    import os

    try:
        size = os.path.getsize(filename)
    except OSError as exc:
        raise ScenarioError("", f"cannot read {filename}: {exc.strerror}") from None
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            "",
            f"{filename} is {size / 1e6:.1f} MB; a scenario may be at most "
            f"{MAX_SCENARIO_BYTES // (1024 * 1024)} MiB",
        )
    try:
        with open(filename, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise ScenarioError("", f"cannot read {filename}: {exc.strerror}") from None
    return load_scenario(text)


def load_scenario(text: str) -> Scenario:
    """Parse and validate a scenario document (or several: extra documents are objects)."""
    if len(text.encode("utf-8", errors="replace")) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            "", f"scenario is larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB"
        )
    docs = _json_documents(text)
    if docs is None:
        try:
            docs = safe_yaml.load_all(text, **_YAML_LIMITS)
        except yaml.YAMLError:
            docs = _slow_parse_for_the_error(text)
    if not docs:
        raise ScenarioError("", "the file holds no YAML document")
    scen_docs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Scenario"]
    if not scen_docs:
        raise ScenarioError("kind", 'no document has kind "Scenario"')
    root = scen_docs[0]
    extra_objects = [d for d in docs if d is not root]
    return parse_scenario(root, extra_objects)


# libyaml's loader parses a 1,000-node scenario four times faster than the pure-Python one (the
# same YAML 1.1 safe schema); the pure-Python loader's error messages name the offending
# character, so a document libyaml refuses is parsed again by it (for the message, or for the
# documents should it accept what libyaml did not).
FAST_LOADER = safe_yaml.FAST_LOADER
# Before anything is built: size (checked above with the scenario's own message), nesting (the
# composers recurse per level: a few hundred KB of ``[`` would crash the process), aliases
# (safe_yaml: an alias bomb), and duplicate mapping keys (the last would silently win; the API
# server's strict decoding refuses them).
_YAML_LIMITS: dict[str, Any] = {"max_bytes": 0, "unique_keys": True, "error": ScenarioError}


def _slow_parse_for_the_error(text: str) -> list[Any]:
    try:
        return safe_yaml.load_all(text, loader=yaml.SafeLoader, **_YAML_LIMITS)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (binary, NUL)
        line = text.count("\n", 0, exc.position) + 1
        raise ScenarioError(
            "", f"malformed YAML at line {line}: {exc.reason} character {exc.character!r}"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError("", f"malformed YAML{where}: {problem}") from None
    except RecursionError:
        raise ScenarioError("", "malformed YAML, nested too deeply") from None


# PyYAML's implicit float (YAML 1.1): a JSON number is a float only if YAML reads it so
# (``1e3`` and ``1.5e3`` are strings there), so a JSON file means the same either way.
_YAML_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _NotPlainJson(Exception):
    pass


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotPlainJson  # a duplicate key: the YAML path names it, with its line
    return out


def _json_constant(name: str) -> Any:
    raise _NotPlainJson  # NaN / Infinity: not JSON, and a plain string in YAML


def _json_documents(text: str) -> list[Any] | None:
    """A scenario written as one JSON object (JSON is YAML; a generated big scenario often
    is JSON) read by the json module, ten times faster than libyaml, into the same values;
    None when the text is not such a document, or holds anything the YAML path must judge
    (a duplicate key, nesting over MAX_NESTING, a number YAML reads differently)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_json_pairs,
            parse_float=lambda v: float(v) if _YAML_FLOAT.match(v) else v,
            parse_constant=_json_constant,
        )
        check_nesting(doc, "")
    except (ValueError, RecursionError, _NotPlainJson, ScenarioError):
        return None
    return [doc]


MAX_NESTING = safe_yaml.MAX_DEPTH


def check_nesting(value: Any, path: str) -> None:
    """The same limit for data that arrives already parsed (a live action's JSON)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_NESTING:
                raise ScenarioError(path, f"nested deeper than {MAX_NESTING} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, depth + 1) for c in children)


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
        feature_gates=apply_fields(
            FeatureGates(), spec.get("featureGates"), GATE_FIELDS, "spec.featureGates"
        ),
        profile=profile,
    )
    kubelet_raw = spec.get("kubelet") or {}
    nodes = parse_nodes(spec.get("nodes"), config.kubelet, kubelet_raw, "spec.nodes", profile)
    objects = _list(spec.get("objects"), "spec.objects") + list(extra_objects or [])
    from .manifests import validate_manifest

    for i, obj in enumerate(objects):
        validate_manifest(obj, f"spec.objects[{i}]")
    node_names = {n.name for n in nodes}
    from .lesson import check_focus, compiled_expectations, compiled_faults, parse_lesson

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
    from .expect import validate_expectation

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


NODE_FIELDS = {
    "name",
    "zone",
    "region",
    "labels",
    "capacity",
    "usage",
    "pidMax",
    "inodes",
    "imagefs",
    "images",
    "deadContainers",
    "kubeletOffset",
    "kubelet",
    "unschedulable",
}


def parse_nodes(
    data: Any, kubelet: KubeletConfig, kubelet_raw: dict[str, Any], path: str, profile: Profile
) -> list[NodeSpec]:
    out: list[NodeSpec] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(_list(data, path)):
        p = f"{path}[{i}]"
        entry = _map(entry, p)
        if "generate" in entry:
            _no_unknown(entry, {"generate"}, p)
            gen = _map(entry["generate"], f"{p}.generate")
            count = _int(gen.get("count"), f"{p}.generate.count", minimum=1)
            if count > 20000:
                raise ScenarioError(f"{p}.generate.count", f"at most 20000 nodes, got {count}")
            prefix = gen.get("namePrefix", "node-")
            _str(prefix, f"{p}.generate.namePrefix")
            check_name(dns1123_subdomain, f"{prefix}1", f"{p}.generate.namePrefix")
            template = {k: v for k, v in gen.items() if k not in ("count", "namePrefix")}
            _no_unknown(template, NODE_FIELDS - {"name"}, f"{p}.generate")
            for n in range(1, count + 1):
                spec = parse_node(
                    {**template, "name": f"{prefix}{n}"},
                    kubelet,
                    kubelet_raw,
                    f"{p}.generate",
                    profile,
                )
                _add_unique(out, seen, spec, p)
        else:
            spec = parse_node(entry, kubelet, kubelet_raw, p, profile)
            _add_unique(out, seen, spec, p)
    return out


def _add_unique(out: list[NodeSpec], seen: dict[str, str], spec: NodeSpec, path: str) -> None:
    if spec.name in seen:
        raise ScenarioError(
            f"{path}.name",
            f'duplicate node name "{spec.name}" (first defined at {seen[spec.name]})',
        )
    seen[spec.name] = path
    out.append(spec)


def parse_node(
    entry: dict[str, Any],
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    p: str,
    profile: Profile,
) -> NodeSpec:
    _no_unknown(entry, NODE_FIELDS, p)
    name = _str(entry.get("name"), f"{p}.name")
    if dns1123_subdomain(name):
        raise ScenarioError(
            f"{p}.name",
            f"{_show(name)} is not a valid node name (DNS-1123 subdomain): "
            + dns1123_subdomain(name),
        )
    labels = check_labels(entry.get("labels"), f"{p}.labels")
    labels.setdefault("kubernetes.io/hostname", name)
    labels.setdefault("kubernetes.io/os", "linux")
    labels.setdefault("kubernetes.io/arch", "amd64")
    if "zone" in entry:
        labels["topology.kubernetes.io/zone"] = _str(entry["zone"], f"{p}.zone")
    if "region" in entry:
        labels["topology.kubernetes.io/region"] = _str(entry["region"], f"{p}.region")
    cap_raw = {**DEFAULT_CAPACITY, **_map(entry.get("capacity"), f"{p}.capacity")}
    _no_unknown(cap_raw, set(RESOURCE_NAMES), f"{p}.capacity")
    capacity = resources(cap_raw, f"{p}.capacity")
    usage_raw = _map(entry.get("usage"), f"{p}.usage")
    _no_unknown(usage_raw, set(USAGE_NAMES), f"{p}.usage")
    usage = resources(usage_raw, f"{p}.usage")
    images = []
    for j, img in enumerate(_list(entry.get("images"), f"{p}.images")):
        ip = f"{p}.images[{j}]"
        img = _map(img, ip)
        _no_unknown(img, {"name", "size", "inUse"}, ip)
        images.append(
            {
                "name": _str(img.get("name"), f"{ip}.name"),
                "size": _qty(img.get("size"), f"{ip}.size"),
                "inUse": _bool(img.get("inUse", False), f"{ip}.inUse"),
            }
        )
    node_kubelet = kubelet
    if "kubelet" in entry:
        own = _map(entry["kubelet"], f"{p}.kubelet")
        check_section(profile, "kubelet", own, f"{p}.kubelet")
        node_kubelet = apply_fields(
            default_config(KubeletConfig, profile),
            {**kubelet_raw, **own},
            KUBELET_FIELDS,
            f"{p}.kubelet",
        )
    return NodeSpec(
        name=name,
        labels=labels,
        capacity=capacity,
        usage=usage,
        pid_max=_int(entry.get("pidMax", 4_194_304), f"{p}.pidMax", minimum=1),
        inodes=_int(entry.get("inodes", 0), f"{p}.inodes"),
        imagefs=_qty(entry["imagefs"], f"{p}.imagefs") if "imagefs" in entry else None,
        images=images,
        dead_containers=_qty(entry.get("deadContainers", 0), f"{p}.deadContainers"),
        kubelet_offset_ms=_dur(entry.get("kubeletOffset", 0), f"{p}.kubeletOffset"),
        kubelet=node_kubelet,
        unschedulable=_bool(entry.get("unschedulable", False), f"{p}.unschedulable"),
    )


def check_name(check: Any, value: str, path: str) -> str:
    """Run one of validation.py's checks: the value, or the API server's refusal."""
    why = check(value)
    if why:
        raise ScenarioError(path, f"{_show(value)}: {why}")
    return value


def check_labels(raw: Any, path: str) -> dict[str, str]:
    """metadata.labels / a node's labels: qualified-name keys, valid label values."""
    out = {}
    for k, v in _map(raw, path).items():
        check_name(qualified_name, k, path)
        out[k] = check_name(label_value, _label_value(v, f"{path}.{k}"), f"{path}.{k}")
    return out


def _label_value(v: Any, path: str) -> str:
    if isinstance(v, bool):
        raise ScenarioError(path, "label values must be strings (quote true/false)")
    if isinstance(v, int | float):
        return str(v)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ScenarioError(path, f"label values must be strings, got {_show(v)}")
    return v


# -- faults -----------------------------------------------------------------------------------
# type -> (required target field(s), allowed extra fields)
FAULT_TYPES: dict[str, tuple[tuple[str, ...], set[str]]] = {
    "StopKubelet": (("node",), set()),
    "StartKubelet": (("node",), set()),
    "PartitionNode": (("node",), set()),
    "HealNode": (("node",), set()),
    "PowerOffNode": (("node",), set()),
    "PowerOnNode": (("node",), set()),
    "SetNodeNotReady": (("node",), {"message"}),
    "SetNodeReady": (("node",), set()),
    "SetNodeCondition": (("node",), {"condition", "status", "reason", "message"}),
    "ZoneOutage": (("zone",), set()),
    "ZoneRestore": (("zone",), set()),
    "Cordon": (("node",), set()),
    "Uncordon": (("node",), set()),
    "Taint": (("node",), {"key", "value", "effect", "taints"}),
    "Untaint": (("node",), {"key", "value", "effect", "taints"}),
    "AddNode": (("node",), {"kubeletMode"}),
    "DeleteNode": (("node",), set()),
    "Apply": (("object",), set()),
    "RestartControllerManager": ((), set()),
    "SetUsage": (("node|pod",), {"memory", "ephemeral-storage", "pids"}),
    "LeakMemory": (("pod",), {"rate", "until"}),
    "FillDisk": (("node|pod",), {"rate", "until"}),
    "StopLeak": (("node|pod",), set()),
    "DeletePod": (("pod",), {"gracePeriodSeconds", "force"}),
    "ScaleWorkload": (("workload",), {"replicas"}),
    "RunControllerPass": ((), {"pass"}),
    "RunEvictionSync": (("node",), set()),
    "ShutdownNode": (("node",), set()),
    "OutOfService": (("node",), set()),
    "RemoveOutOfService": (("node",), set()),
    "SetParameters": ((), {"controllerManager", "kubelet", "apiServer"}),
}
NODE_CONDITIONS_SETTABLE = {
    "Ready",
    "MemoryPressure",
    "DiskPressure",
    "PIDPressure",
    "NetworkUnavailable",
}


def parse_faults(
    data: Any,
    node_names: set[str],
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    path: str,
    profile: Profile,
    extra: Any = (),
) -> list[Fault]:
    """``extra``: (at_ms, fault without at, path) written elsewhere (a lesson step's faults),
    after the file's own at the same instant."""
    raws = _list(data, path)
    # In time order (same instant: file order), so that the nodes a fault may name are those
    # that exist by then: added by an earlier AddNode, not yet gone by a DeleteNode.
    times = [
        _dur(_map(raw, f"{path}[{i}]").get("at", 0), f"{path}[{i}].at")
        for i, raw in enumerate(raws)
    ]
    paths = [f"{path}[{i}]" for i in range(len(raws))]
    raws = list(raws)
    for at_ms, raw, where in extra:
        raws.append(raw)
        times.append(at_ms)
        paths.append(where)
    known = set(node_names)
    out: list[Fault] = []
    for i in sorted(range(len(raws)), key=lambda i: times[i]):
        fault = parse_fault(raws[i], known, kubelet, kubelet_raw, paths[i], profile)
        fault.at_ms = times[i]
        if fault.type == "AddNode":
            known.add(fault.args["node"]["name"])
        elif fault.type == "DeleteNode":
            known.discard(fault.args["node"])
        out.append(fault)
    return out


def parse_fault(
    raw: Any,
    known_nodes: set[str] | None,
    kubelet: KubeletConfig,
    kubelet_raw: dict[str, Any],
    p: str,
    profile: Profile,
) -> Fault:
    """Validate one fault (also used for live actions, with ``at`` = now) against the
    scenario's Kubernetes release."""
    d = _map(raw, p)
    ftype = d.get("type")
    if not isinstance(ftype, str) or ftype not in FAULT_TYPES:
        raise ScenarioError(
            f"{p}.type",
            f"unknown fault type {_show(ftype)} (known: {', '.join(sorted(FAULT_TYPES))})",
        )
    check_fault_type(profile, ftype, p)
    targets, extras = FAULT_TYPES[ftype]
    allowed = {"at", "type", "note"} | extras
    for t in targets:
        allowed |= set(t.split("|"))
    _no_unknown(d, allowed, p)
    at_ms = _dur(d.get("at", 0), f"{p}.at")
    args = {k: v for k, v in d.items() if k not in ("at", "type", "note")}
    for t in targets:
        options = t.split("|")
        present = [o for o in options if o in d]
        if not present:
            raise ScenarioError(f"{p}.{options[0]}", f"{ftype} needs {' or '.join(options)}")
        if len(present) > 1:
            raise ScenarioError(f"{p}", f"{ftype} takes {' or '.join(options)}, not both")
    if ftype == "AddNode":
        spec = parse_node(
            _map(d.get("node"), f"{p}.node"), kubelet, kubelet_raw, f"{p}.node", profile
        )
        mode = d.get("kubeletMode", "Running")
        if mode not in ("Running", "Stopped", "LeaseOnly"):
            raise ScenarioError(
                f"{p}.kubeletMode", f"must be Running, Stopped or LeaseOnly, got {_show(mode)}"
            )
        if known_nodes is not None and spec.name in known_nodes:
            raise ScenarioError(f"{p}.node.name", f'node "{spec.name}" already exists')
        spec.kubelet_mode = mode
        args = {"node": d["node"], "kubeletMode": mode, "spec": spec}
    elif "node" in d:
        name = _str(d["node"], f"{p}.node")
        if known_nodes is not None and name not in known_nodes:
            raise ScenarioError(f"{p}.node", f'unknown node "{name}"')
    if "pod" in d:
        pod = _str(d["pod"], f"{p}.pod")
        if pod.count("/") != 1:
            raise ScenarioError(f"{p}.pod", f'must be "namespace/name", got {_show(pod)}')
    if "zone" in d:
        _str(d["zone"], f"{p}.zone")
    for key in ("message", "reason"):
        if key in d:
            _str(d[key], f"{p}.{key}")
    if ftype == "SetNodeCondition":
        cond = d.get("condition")
        if cond not in NODE_CONDITIONS_SETTABLE:
            raise ScenarioError(
                f"{p}.condition", f"must be one of {sorted(NODE_CONDITIONS_SETTABLE)}"
            )
        if d.get("status") not in ("True", "False", "Unknown"):
            raise ScenarioError(f"{p}.status", 'must be "True", "False" or "Unknown"')
    if ftype in ("Taint", "Untaint"):
        taints = d.get("taints")
        if taints is None:
            taints = [{k: d[k] for k in ("key", "value", "effect") if k in d}]
        elif any(k in d for k in ("key", "value", "effect")):
            raise ScenarioError(p, "give key/value/effect or taints, not both")
        for j, t in enumerate(_list(taints, f"{p}.taints")):
            tp = f"{p}.taints[{j}]" if "taints" in d else p
            t = _map(t, tp)
            if "taints" in d:
                _no_unknown(t, {"key", "value", "effect"}, tp)
            check_name(qualified_name, _str(t.get("key"), f"{tp}.key"), f"{tp}.key")
            if t.get("value") is not None:
                check_name(label_value, _label_value(t["value"], f"{tp}.value"), f"{tp}.value")
            if ftype == "Taint" or "effect" in t:
                if t.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                    raise ScenarioError(
                        f"{tp}.effect", "must be NoSchedule, PreferNoSchedule or NoExecute"
                    )
        args["taints"] = taints
    if ftype == "SetUsage":
        for k in ("memory", "ephemeral-storage", "pids"):
            if k in d:
                _qty(d[k], f"{p}.{k}")
    if ftype in ("LeakMemory", "FillDisk"):
        rate = _qty(d.get("rate"), f"{p}.rate")
        if rate <= 0:
            raise ScenarioError(f"{p}.rate", "must be positive")
        if "until" in d:
            _dur(d["until"], f"{p}.until")
    if ftype == "DeletePod":
        # The handlers get the checked values, not the text ("5" is 5).
        if "gracePeriodSeconds" in d:
            args["gracePeriodSeconds"] = _int(d["gracePeriodSeconds"], f"{p}.gracePeriodSeconds")
        if "force" in d:
            args["force"] = _bool(d["force"], f"{p}.force")
    if ftype == "ScaleWorkload":
        wl = _str(d.get("workload"), f"{p}.workload")
        if wl.count("/") not in (1, 2) or wl.split("/")[0] not in (
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
        ):
            raise ScenarioError(
                f"{p}.workload",
                f'must be "Kind/name" (Deployment, ReplicaSet, StatefulSet), got {_show(wl)}',
            )
        args["replicas"] = _int(d.get("replicas"), f"{p}.replicas", maximum=INT32_MAX)
    if ftype == "Apply":
        from .manifests import validate_manifest

        validate_manifest(d.get("object"), f"{p}.object")
    if ftype == "SetParameters":
        check_fields(profile, d, p)
        apply_fields(
            default_config(ControllerManagerConfig, profile),
            d.get("controllerManager"),
            CM_FIELDS,
            f"{p}.controllerManager",
        )
        # Against the scenario's kubelet settings, which it changes (a node's own settings are
        # checked when it applies).
        apply_fields(kubelet, d.get("kubelet"), KUBELET_FIELDS, f"{p}.kubelet")
        apply_fields(ApiServerConfig(), d.get("apiServer"), API_FIELDS, f"{p}.apiServer")
    if ftype == "RunControllerPass" and d.get("pass", "monitor") not in ("monitor", "tainting"):
        raise ScenarioError(f"{p}.pass", 'must be "monitor" or "tainting"')
    return Fault(at_ms=at_ms, type=ftype, args=args, path=p)


SECONDS = SECOND
