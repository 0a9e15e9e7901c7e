"""Component configuration in its own formats, merged into the scenario's sections: a
``KubeletConfiguration``, a ``KubeControllerManagerConfiguration`` and kube-controller-manager
(or kube-apiserver) command-line flags; fields the chosen release does not have are dropped and
reported."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..engine.config import ControllerManagerConfig, KubeletConfig
from ..engine.scenario import (
    API_FIELDS,
    CM_FIELDS,
    GATE_FIELDS,
    KUBELET_FIELDS,
    ScenarioError,
    _convert,
    _map,
    _show,
    apply_fields,
)
from .documents import read_documents
from .report import Report, note


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
            note(report, what, k, why)
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
                    note(report, what, f"{top}.{k}", "not simulated")
                    continue
                _convert(CM_FIELDS[field_][1], v, f"{tp}.{k}")
                section[field_] = v
        elif top.lower() == "kubecloudshared":
            for k, v in block.items():
                if str(k).lower() == "nodemonitorperiod":
                    _convert("duration+", v, f"{tp}.{k}")
                    section["nodeMonitorPeriod"] = v
                else:
                    note(report, what, f"{top}.{k}", "not simulated")
        elif block:
            note(report, what, top, "not simulated")
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
    if kind in ("int", "int+", "int32", "int32+", "seconds"):  # 31+ digits: refused as text
        return int(value) if re.fullmatch(r"-?\d{1,30}", value) else value
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
            note(report, "flag", path, "not simulated")
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
            note(report, "featureGate", gate, "not simulated")


def drop_refused_fields(spec: dict[str, Any], report: Report) -> None:
    """A field the chosen release does not have (the release came from the kubelets): dropped
    and reported rather than refused, since the snapshot decided the release."""
    from ..engine.versions import profile_for

    profile = profile_for(spec.get("kubernetesVersion"))
    for section in ("controllerManager", "kubelet", "apiServer", "featureGates"):
        block = spec.get(section)
        if not isinstance(block, dict):
            continue
        for key in list(block):
            why = profile.fields_refused.get(f"{section}.{key}")
            if why is not None:
                del block[key]
                note(report, section, key, f"not in Kubernetes {profile.version}: {why}")
        if not block:
            del spec[section]
