"""Component configuration in its own formats, merged into the scenario's sections: a
``KubeletConfiguration``, a ``KubeControllerManagerConfiguration`` and kube-controller-manager
(or kube-apiserver) command-line flags; fields the chosen release does not have are dropped and
reported."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..engine.client import DEFAULT_BURST, DEFAULT_QPS
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
        elif top.lower() == "generic":
            # GenericControllerManagerConfiguration.ClientConnection: --kube-api-qps/-burst
            for k, v in block.items():
                if str(k).lower() != "clientconnection":
                    note(report, what, f"{top}.{k}", "not simulated")
                    continue
                for ck, cv in _map(v, f"{tp}.{k}").items():
                    field_ = {"qps": "kubeAPIQPS", "burst": "kubeAPIBurst"}.get(str(ck).lower())
                    if field_ is None:
                        note(report, what, f"{top}.{k}.{ck}", "not simulated")
                        continue
                    _convert(CM_FIELDS[field_][1], cv, f"{tp}.{k}.{ck}")
                    section[field_] = cv
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
    "kube-api-qps": ("controllerManager", "kubeAPIQPS"),
    "kube-api-burst": ("controllerManager", "kubeAPIBurst"),
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
    return flag_words(words)


def flag_words(words: list[str], where: str = "flags") -> list[tuple[str, str]]:
    """A command line's words (the program name first, or not) -> [(name, value)]."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-"):
            if i == 0 or out:  # the program name, or a stray word
                if i == 0:
                    i += 1
                    continue
                raise ScenarioError(where, f"{_show(w)} is not a flag (--name=value)")
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
    if kind in ("rate", "fraction", "client qps"):
        try:
            return float(value)
        except ValueError:
            return value
    if kind in (
        "int",
        "int+",
        "int32",
        "int32+",
        "seconds",
        "client burst",
    ):  # 31+ digits: refused as text
        return int(value) if re.fullmatch(r"-?\d{1,30}", value) else value
    if kind == "bool":
        return {"true": True, "false": False}.get(value.lower(), value)
    return value


def merge_flags(spec: dict[str, Any], text: str, report: Report) -> None:
    """kube-controller-manager and kube-apiserver flags; a command line that starts with
    kube-scheduler is kube-scheduler's (its --kube-api-qps/-burst are clientConnection's)."""
    flags = parse_flags(text)
    program = shlex.split(text)[:1]
    if program and program[0].rsplit("/", 1)[-1] == "kube-scheduler":
        cc = scheduler_client_flags(dict(flags), "", report)
        for name, _value in flags:
            if name not in ("kube-api-qps", "kube-api-burst", "config"):
                note(report, "flag", f"--{name}", "not simulated")
        _merge_client(spec, cc)
        return
    for name, value in flags:
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


def _is_scheduler_pod(item: dict[str, Any]) -> bool:
    meta = item.get("metadata") or {}
    labels = meta.get("labels") or {}
    return meta.get("namespace") == "kube-system" and (
        labels.get("component") == "kube-scheduler"
        or str(meta.get("name", "")).startswith("kube-scheduler")
    )


def _scheduler_flags(path: str, item: dict[str, Any], report: Report) -> dict[str, Any]:
    """clientConnection {qps, burst} from one kube-scheduler pod's command and args: the
    deprecated ``--kube-api-qps`` / ``--kube-api-burst`` (Options.ApplyDeprecated), which
    kube-scheduler honours only without ``--config`` (Options.ApplyTo). A flag of 0 is not
    the scheduler's default: it overwrites the defaulted 50 / 100 and client-go gives 5 / 10
    (rest.DefaultQPS / DefaultBurst, rest.RESTClientFor)."""
    spec = item.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not containers:
        return {}
    named = [isinstance(c, dict) and c.get("name") == "kube-scheduler" for c in containers]
    j = named.index(True) if True in named else 0
    where = f"{path}.spec.containers[{j}]"
    c = _map(containers[j], where)
    words: list[str] = []
    for key in ("command", "args"):
        part = c.get(key)
        if part is None:
            continue
        if not isinstance(part, list) or not all(isinstance(w, str) for w in part):
            raise ScenarioError(f"{where}.{key}", "must be a list of strings")
        words += part
    return scheduler_client_flags(dict(flag_words(words, f"{where}.command")), f"{where} ", report)


def scheduler_client_flags(flags: dict[str, str], where: str, report: Report) -> dict[str, Any]:
    """clientConnection {qps, burst} from kube-scheduler's flags (see _scheduler_flags); an
    error's path is ``where`` and the flag."""
    out: dict[str, Any] = {}
    for flag, key, kind, zero in (
        ("kube-api-qps", "qps", "client qps", DEFAULT_QPS),
        ("kube-api-burst", "burst", "client burst", DEFAULT_BURST),
    ):
        if flag not in flags:
            continue
        fpath = f"{where}--{flag}"
        if "config" in flags:
            note(
                report,
                "kube-scheduler",
                f"--{flag}",
                "ignored: with --config kube-scheduler does not apply its deprecated flags",
            )
            continue
        v = _flag_value(kind, flags[flag])
        v = _convert(kind, v, fpath)
        if key == "burst" and v < 0:
            raise ScenarioError(fpath, f"Invalid value: {v}: must be non-negative")
        if v == 0:
            note(report, "kube-scheduler", f"--{flag}=0", f"client-go's default {zero:g}")
            v = zero
        out[key] = v
    if "config" in flags:
        note(
            report,
            "kube-scheduler",
            "--config",
            "not read: clientConnection from its configuration file is not imported",
        )
    return out


def merge_scheduler_pods(
    spec: dict[str, Any], pods: list[tuple[str, dict[str, Any]]], report: Report
) -> None:
    """kube-scheduler's client rate limit from its static pod (kube-system, ``component:
    kube-scheduler``) into ``spec.scheduler.clientConnection``; with several (an HA control
    plane) the first one's, a disagreement reported."""
    found = [
        (path, _scheduler_flags(path, item, report))
        for path, item in pods
        if isinstance(item, dict) and _is_scheduler_pod(item)
    ]
    given = [(path, cc) for path, cc in found if cc]
    if not given:
        return
    first_path, first = given[0]
    for path, cc in given[1:]:
        if cc != first:
            note(
                report, "kube-scheduler", path, f"flags differ from {first_path}'s, which are taken"
            )
    _merge_client(spec, first)


def _merge_client(spec: dict[str, Any], cc: dict[str, Any]) -> None:
    """{qps, burst} into spec.scheduler.clientConnection, field by field."""
    if cc:
        section = dict(spec.get("scheduler") or {})
        section["clientConnection"] = {**dict(section.get("clientConnection") or {}), **cc}
        spec["scheduler"] = section
