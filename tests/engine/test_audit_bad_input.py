"""Audit: bad input to the scenario loader and the headless CLI.

House rule: bad input gets a clear error naming the field, and changes nothing. For the CLI
(design.md, "The headless CLI") that means exit 2, one line on stderr that starts with the
path of the first wrong field, no traceback, and no half-printed timeline on stdout.

``test_refused_with_the_path`` pins the inputs handled correctly; its ``xfail`` rows and the
``xfail`` tests further down encode the right behaviour for inputs that are mishandled today
(traceback, hang, crash, vague path, or silently accepted). Everything runs in-process through
``cli.run`` except two subprocess tests (``manage.py simulate`` itself, and a crash that takes
the interpreter down).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from controller.engine import cli
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation

REPO = Path(__file__).resolve().parents[2]

HEAD = "apiVersion: playground/v1alpha1\nkind: Scenario\nmetadata: {name: audit}\nspec:\n"
NODES = ("{name: n-1, zone: z}", "{name: n-2, zone: z}")
T = "template: {metadata: {labels: {app: d}}, spec: {containers: [{name: c}]}}"


def pod(meta: str = "{name: p}", spec: str = "{containers: [{name: c}]}") -> str:
    return f"{{apiVersion: v1, kind: Pod, metadata: {meta}, spec: {spec}}}"


def workload(spec: str, kind: str = "Deployment", meta: str = "{name: d}") -> str:
    return f"{{apiVersion: apps/v1, kind: {kind}, metadata: {meta}, spec: {{{spec}}}}}"


WEB = pod("{name: web, namespace: default}", "{nodeName: n-1, containers: [{name: web}]}")
DEPLOY = workload(f"replicas: 2, selector: {{matchLabels: {{app: d}}}}, {T}")


def scenario(
    *,
    nodes: tuple[str, ...] = NODES,
    objects: tuple[str, ...] = (WEB, DEPLOY),
    faults: tuple[str, ...] = (),
    expect: tuple[str, ...] = (),
    extra: str = "",
    duration: str = "30s",
) -> str:
    """A small valid scenario; each list item is one flow-style YAML mapping."""
    text = HEAD + f"  duration: {duration}\n"
    for key, items in (("nodes", nodes), ("objects", objects), ("faults", faults)):
        if items:
            text += f"  {key}:\n" + "".join(f"    - {i}\n" for i in items)
    if expect:
        text += "  expect:\n" + "".join(f"    - {e}\n" for e in expect)
    return text + "".join(f"  {line}\n" for line in extra.splitlines())


def spec(extra: str) -> str:
    return scenario(extra=extra)


def node(entry: str) -> str:
    return scenario(nodes=(entry,), objects=())


def objects(*items: str) -> str:
    return scenario(objects=items)


def faults(*items: str) -> str:
    return scenario(faults=items)


def run_cli(
    text: str | bytes,
    tmp_path: Path,
    until: float | None = None,
    final_state: str | None = None,
) -> tuple[int, str, str]:
    path = tmp_path / "scenario.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(str(path), until, "jsonl", final_state, False, out, err)
    return code, out.getvalue(), err.getvalue()


def assert_refused(code: int, out: str, err: str, path: str, why: str) -> None:
    """Exit 2, nothing on stdout, one stderr line ``error: <path>: ...<why>...``."""
    assert code == 2, (code, err)
    assert out == "", "a refused scenario printed part of a timeline"
    lines = err.splitlines()
    assert len(lines) == 1, err
    prefix = f"error: {path}: " if path else "error: "
    assert lines[0].startswith(prefix), lines[0]
    assert why in lines[0], lines[0]


def xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


# (scenario text, path of the first wrong field ("" = the document), words of the why)
CASES = [
    # -- the document ------------------------------------------------------------------------
    pytest.param("", "", "no YAML document", id="empty file"),
    pytest.param("# nothing\n---\n", "", "no YAML document", id="only comments"),
    pytest.param("- a\n- b\n", "kind", 'no document has kind "Scenario"', id="top-level list"),
    pytest.param("42\n", "kind", 'no document has kind "Scenario"', id="top-level scalar"),
    pytest.param(
        HEAD + "\tduration: 1s\n", "", "malformed YAML at line 5, column 1", id="tab indent"
    ),
    pytest.param(HEAD + "  nodes: [\n", "", "malformed YAML at line", id="unclosed flow list"),
    pytest.param(
        HEAD + "  spec: !!python/object/apply:os.system ['true']\n",
        "",
        "could not determine a constructor",
        id="python tag is not executed",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Scenario\n", "apiVersion", "playground/v1alpha1", id="apiVersion"
    ),
    pytest.param(HEAD.replace("{name: audit}", "[1]"), "metadata", "mapping", id="metadata list"),
    pytest.param(HEAD.replace("audit}", "5}"), "metadata.name", "non-empty string", id="name int"),
    pytest.param(HEAD + "  - 1\n", "spec", "must be a mapping, got a list", id="spec list"),
    pytest.param(
        HEAD.replace("spec:\n", "spec: hello\n"), "spec", "mapping", id="spec is a string"
    ),
    pytest.param(HEAD + "  1: 2\n", "spec", "keys must be strings", id="integer key"),
    pytest.param(spec("bogus: 1"), "spec.bogus", "unknown field", id="unknown spec field"),
    pytest.param(
        scenario() + "---\nfoo\n", "spec.objects[2]", "must be a mapping", id="extra document"
    ),
    pytest.param(
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
        "apiVersion: playground/v1alpha1\nkind: Scenario\nspec: {objects: *d}\n",
        "spec.objects",
        "aliases expand to 14030 of its 14055 nodes (an alias bomb?) at line 7",
        id="alias bomb is refused before it is expanded (safe_yaml's alias ratio)",
    ),
    pytest.param(
        HEAD + "  objects: " + "[" * 2000 + "]" * 2000 + "\n",
        "",
        "nested deeper than 64 levels at line",
        id="2000-deep flow list",
    ),
    pytest.param(
        scenario(extra="duration: 20s"),
        "spec.duration",
        "duplicate",
        id="duplicate key",
    ),
    pytest.param(
        HEAD + "  duration: 30s\ndescription: {a: 1}\n",
        "description",
        "string",
        id="description mapping",
    ),
    # -- spec.duration ---------------------------------------------------------------------------
    pytest.param(scenario(duration="abc"), "spec.duration", "not a duration", id="duration word"),
    pytest.param(scenario(duration="-1s"), "spec.duration", "negative", id="duration negative"),
    pytest.param(scenario(duration="0"), "spec.duration", "at least 0.001s", id="duration 0"),
    pytest.param(scenario(duration=".nan"), "spec.duration", "nan", id="duration nan"),
    pytest.param(scenario(duration=".inf"), "spec.duration", "inf", id="duration inf"),
    pytest.param(scenario(duration="null"), "spec.duration", "None", id="duration null"),
    pytest.param(scenario(duration="true"), "spec.duration", "True", id="duration bool"),
    pytest.param(scenario(duration="[1]"), "spec.duration", "[1]", id="duration list"),
    pytest.param(scenario(duration="1e400"), "spec.duration", "1e400", id="duration 1e400"),
    pytest.param(scenario(duration="1.5.5s"), "spec.duration", "1.5.5s", id="duration 1.5.5s"),
    pytest.param(scenario(duration="0.0001"), "spec.duration", "milliseconds", id="duration 0.1ms"),
    pytest.param(
        scenario(duration="'\uff15s'"), "spec.duration", "not a duration", id="fullwidth 5"
    ),
    pytest.param(
        scenario(duration="'10s '"), "spec.duration", "not a duration", id="trailing space"
    ),
    # -- component configuration -----------------------------------------------------------------
    pytest.param(
        spec("controllerManager: abc"), "spec.controllerManager", "mapping", id="cm string"
    ),
    pytest.param(spec("kubelet: [1]"), "spec.kubelet", "mapping", id="kubelet list"),
    pytest.param(
        spec("controllerManager: {nodeMonitorPeriod: 0}"),
        "spec.controllerManager.nodeMonitorPeriod",
        "at least 0.001s",
        id="nodeMonitorPeriod 0",
    ),
    pytest.param(
        spec("controllerManager: {nodeEvictionRate: -1}"),
        "spec.controllerManager.nodeEvictionRate",
        "must be >= 0",
        id="rate negative",
    ),
    pytest.param(
        spec("controllerManager: {nodeEvictionRate: '0.1'}"),
        "spec.controllerManager.nodeEvictionRate",
        "must be a number",
        id="rate string",
    ),
    pytest.param(
        spec("controllerManager: {unhealthyZoneThreshold: 1.5}"),
        "spec.controllerManager.unhealthyZoneThreshold",
        "must be <= 1",
        id="threshold above 1",
    ),
    pytest.param(
        spec("controllerManager: {largeClusterSizeThreshold: .inf}"),
        "spec.controllerManager.largeClusterSizeThreshold",
        "integer",
        id="int inf",
    ),
    pytest.param(
        spec("controllerManager: {enableTaintManager: 'true'}"),
        "spec.controllerManager.enableTaintManager",
        "true or false",
        id="bool as string",
    ),
    pytest.param(
        spec("controllerManager: {nodeEvictionRate: .nan}"),
        "spec.controllerManager.nodeEvictionRate",
        "",
        id="rate nan",
    ),
    pytest.param(
        spec("controllerManager: {secondaryNodeEvictionRate: .nan}"),
        "spec.controllerManager.secondaryNodeEvictionRate",
        "",
        id="secondary rate nan",
    ),
    pytest.param(
        spec("controllerManager: {unhealthyZoneThreshold: .nan}"),
        "spec.controllerManager.unhealthyZoneThreshold",
        "",
        id="zone threshold nan",
    ),
    pytest.param(
        spec("kubelet: {nodeStatusUpdateFrequency: 1ms}"),
        "spec.kubelet.nodeStatusUpdateFrequency",
        'must be at least 100ms, got "1ms" (the playground\'s floor',
        id="status update every millisecond: a minute of CPU per second of a big room",
    ),
    pytest.param(
        spec("kubelet: {nodeStatusUpdateFrequency: 0.099}"),
        "spec.kubelet.nodeStatusUpdateFrequency",
        "must be at least 100ms, got 0.099",
        id="status update period just under the floor, in seconds",
    ),
    pytest.param(
        scenario(
            faults=("{at: 5s, type: SetParameters, kubelet: {nodeStatusUpdateFrequency: 50ms}}",)
        ),
        "spec.faults[0].kubelet.nodeStatusUpdateFrequency",
        "must be at least 100ms",
        id="status update period under the floor, set by SetParameters",
    ),
    pytest.param(
        spec("kubelet: {nodeLeaseDurationSeconds: 0}"),
        "spec.kubelet.nodeLeaseDurationSeconds",
        "must be >= 1",
        id="lease 0",
    ),
    pytest.param(
        spec("kubelet: {evictionMaxPodGracePeriod: -1}"),
        "spec.kubelet.evictionMaxPodGracePeriod",
        "must be >= 0",
        id="max grace negative",
    ),
    pytest.param(
        spec("kubelet: {imageGCHighThresholdPercent: 101}"),
        "spec.kubelet.imageGCHighThresholdPercent",
        "between 0 and 100",
        id="gc percent 101",
    ),
    pytest.param(
        spec("kubelet: {imageGCHighThresholdPercent: 50%}"),
        "spec.kubelet.imageGCHighThresholdPercent",
        "integer",
        id="gc percent with %",
    ),
    pytest.param(
        spec("kubelet: {evictionRankingPolicy: fifo}"),
        "spec.kubelet.evictionRankingPolicy",
        '"priority"',
        id="ranking policy",
    ),
    pytest.param(
        spec("kubelet: {enforceNodeAllocatable: pods}"),
        "spec.kubelet.enforceNodeAllocatable",
        "must be a list",
        id="enforceNodeAllocatable string",
    ),
    pytest.param(
        spec("apiServer: {disableAdmissionPlugins: [1]}"),
        "spec.apiServer.disableAdmissionPlugins[0]",
        "non-empty string",
        id="admission plugin int",
    ),
    pytest.param(
        spec("featureGates: {Bogus: true}"), "spec.featureGates.Bogus", "unknown field", id="gate"
    ),
    pytest.param(
        spec("kubelet: {imageGCHighThresholdPercent: 10, imageGCLowThresholdPercent: 80}"),
        "spec.kubelet.imageGCLowThresholdPercent",
        "",
        id="gc low above high",
    ),
    pytest.param(
        spec("kubelet: {enforceNodeAllocatable: [bogus]}"),
        "spec.kubelet.enforceNodeAllocatable[0]",
        "",
        id="enforceNodeAllocatable bogus",
    ),
    # -- eviction thresholds ----------------------------------------------------------------------
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: 101%}}"),
        "spec.kubelet.evictionHard.memory.available",
        "<= 100%",
        id="hard 101%",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {nodefs.available: -5%}}"),
        "spec.kubelet.evictionHard.nodefs.available",
        ">= 0%",
        id="hard -5%",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: 1Zi}}"),
        "spec.kubelet.evictionHard.memory.available",
        'unknown suffix "Zi"',
        id="hard 1Zi",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: -1Gi}}"),
        "spec.kubelet.evictionHard.memory.available",
        "must be positive",
        id="hard -1Gi",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: 1.5.5}}"),
        "spec.kubelet.evictionHard.memory.available",
        '"1.5.5" is not a Kubernetes quantity',
        id="hard 1.5.5",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: '%'}}"),
        "spec.kubelet.evictionHard.memory.available",
        "invalid syntax",
        id="hard bare %",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: nan%}}"),
        "spec.kubelet.evictionHard.memory.available",
        "nan",
        id="hard nan%",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: 1e1001}}"),
        "spec.kubelet.evictionHard.memory.available",
        "exponent",
        id="hard 1e1001",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: [1]}}"),
        "spec.kubelet.evictionHard.memory.available",
        "got a list",
        id="hard list",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: null}}"),
        "spec.kubelet.evictionHard.memory.available",
        "got nothing",
        id="hard null",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {memory.available: 0}}"),
        "spec.kubelet.evictionHard.memory.available",
        "must be positive",
        id="hard 0",
    ),
    pytest.param(
        spec("kubelet: {evictionHard: {cpu.available: 1}}"),
        "spec.kubelet.evictionHard.cpu.available",
        "unsupported eviction signal",
        id="unknown signal",
    ),
    pytest.param(
        spec("kubelet: {evictionSoft: {memory.available: 1Gi}}"),
        "spec.kubelet.evictionSoftGracePeriod.memory.available",
        "grace period must be specified",
        id="soft without grace",
    ),
    pytest.param(
        spec(
            "kubelet: {evictionSoft: {memory.available: 1Gi}, "
            "evictionSoftGracePeriod: {memory.available: -1s}}"
        ),
        "spec.kubelet.evictionSoftGracePeriod.memory.available",
        "negative",
        id="soft grace negative",
    ),
    pytest.param(
        spec("kubelet: {evictionMinimumReclaim: {memory.available: -1Gi}}"),
        "spec.kubelet.evictionMinimumReclaim.memory.available",
        "negative",
        id="minimum reclaim negative",
    ),
    pytest.param(
        spec("kubelet: {evictionMinimumReclaim: {bogus: 1Gi}}"),
        "spec.kubelet.evictionMinimumReclaim.bogus",
        "unsupported eviction signal",
        id="minimum reclaim signal",
    ),
    # -- nodes --------------------------------------------------------------------------------
    pytest.param(HEAD + "  nodes: {a: 1}\n", "spec.nodes", "must be a list", id="nodes mapping"),
    pytest.param(node("abc"), "spec.nodes[0]", "must be a mapping", id="node string"),
    pytest.param(node("null"), "spec.nodes[0].name", "got nothing", id="node null"),
    pytest.param(node("{zone: z}"), "spec.nodes[0].name", "non-empty string", id="no name"),
    pytest.param(node("{name: Node1}"), "spec.nodes[0].name", "DNS-1123", id="name uppercase"),
    pytest.param(node("{name: n\u00f6de}"), "spec.nodes[0].name", "DNS-1123", id="name unicode"),
    pytest.param(node("{name: " + "a" * 254 + "}"), "spec.nodes[0].name", "DNS-1123", id="254"),
    pytest.param(node("{name: a, zone: 5}"), "spec.nodes[0].zone", "non-empty", id="zone int"),
    pytest.param(node("{name: a, zone: ''}"), "spec.nodes[0].zone", "non-empty", id="zone empty"),
    pytest.param(node("{name: a, labels: [1]}"), "spec.nodes[0].labels", "mapping", id="labels"),
    pytest.param(
        node("{name: a, labels: {x: true}}"), "spec.nodes[0].labels.x", "quote", id="label bool"
    ),
    pytest.param(
        node("{name: a, labels: {5: x}}"), "spec.nodes[0].labels", "keys must be strings", id="5"
    ),
    pytest.param(
        node("{name: a, capacity: {memory: 1Zi}}"),
        "spec.nodes[0].capacity.memory",
        '"1Zi" is not a Kubernetes quantity',
        id="capacity 1Zi",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: -1Gi}}"),
        "spec.nodes[0].capacity.memory",
        "must not be negative",
        id="capacity -1Gi",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: 1.5.5}}"),
        "spec.nodes[0].capacity.memory",
        '"1.5.5" is not a Kubernetes quantity',
        id="capacity 1.5.5",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: 16GB}}"),
        "spec.nodes[0].capacity.memory",
        '"16GB" is not a Kubernetes quantity',
        id="capacity 16GB",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: .nan}}"),
        "spec.nodes[0].capacity.memory",
        "not a Kubernetes quantity",
        id="capacity nan",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: .inf}}"),
        "spec.nodes[0].capacity.memory",
        "not a Kubernetes quantity",
        id="capacity inf",
    ),
    pytest.param(
        node("{name: a, capacity: {memory: true}}"),
        "spec.nodes[0].capacity.memory",
        "not a Kubernetes quantity",
        id="capacity bool",
    ),
    pytest.param(
        node("{name: a, capacity: {gpu: 1}}"),
        "spec.nodes[0].capacity.gpu",
        "unknown field",
        id="capacity gpu",
    ),
    pytest.param(
        node("{name: a, usage: {cpu: 1}}"), "spec.nodes[0].usage.cpu", "unknown field", id="cpu"
    ),
    pytest.param(
        node("{name: a, usage: {memory: -1}}"),
        "spec.nodes[0].usage.memory",
        "must not be negative",
        id="usage negative",
    ),
    pytest.param(node("{name: a, pidMax: 0}"), "spec.nodes[0].pidMax", ">= 1", id="pidMax 0"),
    pytest.param(
        node("{name: a, pidMax: 1.5}"), "spec.nodes[0].pidMax", "integer", id="pidMax float"
    ),
    pytest.param(node("{name: a, inodes: -1}"), "spec.nodes[0].inodes", ">= 0", id="inodes -1"),
    pytest.param(
        node("{name: a, imagefs: {capacity: 1Gi}}"),
        "spec.nodes[0].imagefs",
        "a mapping is not a Kubernetes quantity",
        id="imagefs mapping",
    ),
    pytest.param(
        node("{name: a, images: [{size: 1Gi}]}"),
        "spec.nodes[0].images[0].name",
        "non-empty string",
        id="image without name",
    ),
    pytest.param(
        node("{name: a, images: [{name: x, size: 1Gi, inUse: 'yes'}]}"),
        "spec.nodes[0].images[0].inUse",
        "true or false",
        id="image inUse string",
    ),
    pytest.param(
        node("{name: a, images: [{name: x, size: 1Gi, tag: v1}]}"),
        "spec.nodes[0].images[0].tag",
        "unknown field",
        id="image unknown field",
    ),
    pytest.param(
        node("{name: a, deadContainers: -1Gi}"),
        "spec.nodes[0].deadContainers",
        "must not be negative",
        id="deadContainers negative",
    ),
    pytest.param(
        node("{name: a, kubeletOffset: -1s}"),
        "spec.nodes[0].kubeletOffset",
        "negative",
        id="kubeletOffset negative",
    ),
    pytest.param(
        node("{name: a, kubelet: {nodeLeaseDurationSeconds: x}}"),
        "spec.nodes[0].kubelet.nodeLeaseDurationSeconds",
        "integer",
        id="node kubelet override",
    ),
    pytest.param(
        node("{name: a, kubelet: {evictionHard: {memory.available: 101%}}}"),
        "spec.nodes[0].kubelet.evictionHard.memory.available",
        "<= 100%",
        id="node kubelet threshold",
    ),
    pytest.param(
        node("{name: a, unschedulable: 1}"),
        "spec.nodes[0].unschedulable",
        "true or false",
        id="unschedulable int",
    ),
    pytest.param(
        node("{name: a, kubeletMode: Stopped}"),
        "spec.nodes[0].kubeletMode",
        "unknown field",
        id="kubeletMode in spec.nodes",
    ),
    pytest.param(
        scenario(nodes=("{name: a}", "{name: a}"), objects=()),
        "spec.nodes[1].name",
        'duplicate node name "a"',
        id="duplicate node",
    ),
    pytest.param(
        node("{name: a..b}"),
        "spec.nodes[0].name",
        "DNS-1123",
        id="name a..b",
    ),
    pytest.param(
        node("{name: a, labels: {'bad key!': x}}"),
        "spec.nodes[0].labels",
        "",
        id="label key invalid",
    ),
    pytest.param(
        node("{name: a, labels: {x: 'bad value!'}}"),
        "spec.nodes[0].labels.x",
        "",
        id="label value invalid",
    ),
    # -- nodes: generate ------------------------------------------------------------------------
    pytest.param(node("{generate: {count: 0}}"), "spec.nodes[0].generate.count", ">= 1", id="0"),
    pytest.param(node("{generate: {count: -1}}"), "spec.nodes[0].generate.count", ">= 1", id="-1"),
    pytest.param(
        node("{generate: {count: abc}}"), "spec.nodes[0].generate.count", "integer", id="count str"
    ),
    pytest.param(
        node("{generate: {count: 2.5}}"), "spec.nodes[0].generate.count", "integer", id="2.5"
    ),
    pytest.param(
        node("{generate: {count: true}}"), "spec.nodes[0].generate.count", "integer", id="bool"
    ),
    pytest.param(
        node("{generate: {namePrefix: x-}}"),
        "spec.nodes[0].generate.count",
        "got nothing",
        id="count missing",
    ),
    pytest.param(
        node("{generate: {count: 99999999999999999999}}"),
        "spec.nodes[0].generate.count",
        "at most 20000",
        id="count huge",
    ),
    pytest.param(
        node("{generate: abc}"), "spec.nodes[0].generate", "mapping", id="generate string"
    ),
    pytest.param(
        node("{generate: {count: 2}, zone: z}"),
        "spec.nodes[0].zone",
        "unknown field",
        id="generate sibling",
    ),
    pytest.param(
        node("{generate: {count: 2, name: x}}"),
        "spec.nodes[0].generate.name",
        "unknown field",
        id="generate name",
    ),
    pytest.param(
        node("{generate: {count: 2, namePrefix: ''}}"),
        "spec.nodes[0].generate.namePrefix",
        "non-empty",
        id="prefix empty",
    ),
    pytest.param(
        node("{generate: {count: 3, capacity: {memory: 16GB}}}"),
        "spec.nodes[0].generate.capacity.memory",
        '"16GB"',
        id="generate capacity",
    ),
    pytest.param(
        scenario(nodes=("{generate: {count: 2, namePrefix: n-}}", "{name: n-1}"), objects=()),
        "spec.nodes[1].name",
        'duplicate node name "n-1"',
        id="generated duplicate",
    ),
    pytest.param(
        node("{generate: {count: 2, namePrefix: B_}}"),
        "spec.nodes[0].generate.namePrefix",
        "",
        id="prefix invalid",
    ),
    # -- faults ------------------------------------------------------------------------------
    pytest.param(HEAD + "  faults: {a: 1}\n", "spec.faults", "must be a list", id="faults mapping"),
    pytest.param(faults("StopKubelet"), "spec.faults[0]", "mapping", id="fault string"),
    pytest.param(
        faults("{at: 1s, node: n-1}"), "spec.faults[0].type", "unknown fault type", id="no type"
    ),
    pytest.param(
        faults("{at: 1s, type: 5, node: n-1}"), "spec.faults[0].type", "unknown", id="type int"
    ),
    pytest.param(
        faults("{at: 1s, type: stopkubelet, node: n-1}"),
        "spec.faults[0].type",
        'unknown fault type "stopkubelet"',
        id="type lowercase",
    ),
    pytest.param(
        faults("{at: 1s, type: [StopKubelet], node: n-1}"),
        "spec.faults[0].type",
        "",
        id="type list",
    ),
    pytest.param(
        faults("{at: -1, type: StopKubelet, node: n-1}"),
        "spec.faults[0].at",
        "negative",
        id="at negative",
    ),
    pytest.param(
        faults("{at: .nan, type: StopKubelet, node: n-1}"), "spec.faults[0].at", "nan", id="nan"
    ),
    pytest.param(
        faults("{at: null, type: StopKubelet, node: n-1}"), "spec.faults[0].at", "None", id="null"
    ),
    pytest.param(
        faults("{at: soon, type: StopKubelet, node: n-1}"),
        "spec.faults[0].at",
        "not a duration",
        id="at word",
    ),
    pytest.param(
        faults("{at: 1s, type: StopKubelet}"),
        "spec.faults[0].node",
        "StopKubelet needs node",
        id="node missing",
    ),
    pytest.param(
        faults("{at: 1s, type: StopKubelet, node: [n-1]}"),
        "spec.faults[0].node",
        "got a list",
        id="node list",
    ),
    pytest.param(
        faults("{at: 1s, type: StopKubelet, node: zz}"),
        "spec.faults[0].node",
        'unknown node "zz"',
        id="node unknown",
    ),
    pytest.param(
        faults("{at: 1s, type: StopKubelet, node: n-1, zone: z}"),
        "spec.faults[0].zone",
        "unknown field",
        id="extra arg",
    ),
    pytest.param(
        faults("{at: 1s, type: RestartControllerManager, node: n-1}"),
        "spec.faults[0].node",
        "unknown field",
        id="arg on a no-arg fault",
    ),
    pytest.param(
        faults("{at: 1s, type: ZoneOutage}"),
        "spec.faults[0].zone",
        "ZoneOutage needs zone",
        id="zone missing",
    ),
    pytest.param(
        faults("{at: 1s, type: ZoneOutage, zone: 5}"), "spec.faults[0].zone", "non-empty", id="z5"
    ),
    pytest.param(
        faults("{at: 1s, type: SetNodeCondition, node: n-1, condition: Foo, status: 'True'}"),
        "spec.faults[0].condition",
        "must be one of",
        id="condition unknown",
    ),
    pytest.param(
        faults(
            "{at: 1s, type: SetNodeCondition, node: n-1, condition: NetworkUnavailable, status: true}"
        ),
        "spec.faults[0].status",
        '"True", "False" or "Unknown"',
        id="condition status bool",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, effect: NoSchedule}"),
        "spec.faults[0].key",
        "non-empty string",
        id="taint without key",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, key: k}"),
        "spec.faults[0].effect",
        "NoSchedule, PreferNoSchedule or NoExecute",
        id="taint without effect",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, key: k, effect: Bogus}"),
        "spec.faults[0].effect",
        "NoSchedule",
        id="taint effect",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, taints: [abc]}"),
        "spec.faults[0].taints[0]",
        "mapping",
        id="taints item string",
    ),
    pytest.param(
        faults("{at: 1s, type: Untaint, node: n-1, key: k, effect: Bogus}"),
        "spec.faults[0].effect",
        "NoSchedule",
        id="untaint effect",
    ),
    pytest.param(
        faults("{at: 1s, type: AddNode, node: n-3}"),
        "spec.faults[0].node",
        "must be a mapping",
        id="AddNode name only",
    ),
    pytest.param(
        faults("{at: 1s, type: AddNode, node: {name: n-1}}"),
        "spec.faults[0].node.name",
        'node "n-1" already exists',
        id="AddNode existing",
    ),
    pytest.param(
        faults("{at: 1s, type: AddNode, node: {name: n-3}, kubeletMode: Sleeping}"),
        "spec.faults[0].kubeletMode",
        "Running, Stopped or LeaseOnly",
        id="AddNode mode",
    ),
    pytest.param(
        faults("{at: 1s, type: AddNode, node: {name: n-3, capacity: {memory: 1Zi}}}"),
        "spec.faults[0].node.capacity.memory",
        '"1Zi"',
        id="AddNode capacity",
    ),
    pytest.param(
        faults("{at: 1s, type: AddNode, node: {generate: {count: 2}}}"),
        "spec.faults[0].node.generate",
        "unknown field",
        id="AddNode generate",
    ),
    pytest.param(
        faults(
            "{at: 1s, type: StopKubelet, node: n-3}", "{at: 2s, type: AddNode, node: {name: n-3}}"
        ),
        "spec.faults[0].node",
        'unknown node "n-3"',
        id="node used before AddNode",
    ),
    pytest.param(
        faults("{at: 1s, type: Apply}"), "spec.faults[0].object", "Apply needs object", id="Apply"
    ),
    pytest.param(
        faults("{at: 1s, type: Apply, object: {kind: Service, metadata: {name: s}}}"),
        "spec.faults[0].object.kind",
        "must be one of Pod",
        id="Apply Service",
    ),
    pytest.param(
        faults("{at: 1s, type: Apply, object: {kind: Pod, metadata: {name: p}, spec: {}}}"),
        "spec.faults[0].object.spec.containers",
        "at least one container",
        id="Apply pod without containers",
    ),
    pytest.param(
        faults("{at: 1s, type: SetUsage, node: n-1, memory: 1Zi}"),
        "spec.faults[0].memory",
        '"1Zi"',
        id="SetUsage 1Zi",
    ),
    pytest.param(
        faults("{at: 1s, type: SetUsage, node: n-1, memory: -1Gi}"),
        "spec.faults[0].memory",
        "must not be negative",
        id="SetUsage -1Gi",
    ),
    pytest.param(
        faults("{at: 1s, type: SetUsage, node: n-1, cpu: 1}"),
        "spec.faults[0].cpu",
        "unknown field",
        id="SetUsage cpu",
    ),
    pytest.param(
        faults("{at: 1s, type: SetUsage, pod: web, memory: 1Gi}"),
        "spec.faults[0].pod",
        '"namespace/name"',
        id="pod without namespace",
    ),
    pytest.param(
        faults("{at: 1s, type: DeletePod, pod: a/b/c}"),
        "spec.faults[0].pod",
        '"namespace/name"',
        id="pod a/b/c",
    ),
    pytest.param(
        faults("{at: 1s, type: LeakMemory, pod: default/web}"),
        "spec.faults[0].rate",
        "not a Kubernetes quantity",
        id="leak without rate",
    ),
    pytest.param(
        faults("{at: 1s, type: LeakMemory, pod: default/web, rate: 0}"),
        "spec.faults[0].rate",
        "must be positive",
        id="leak rate 0",
    ),
    pytest.param(
        faults("{at: 1s, type: LeakMemory, pod: default/web, rate: -1Mi}"),
        "spec.faults[0].rate",
        "must not be negative",
        id="leak rate negative",
    ),
    pytest.param(
        faults("{at: 1s, type: LeakMemory, pod: default/web, rate: 1Mi, until: never}"),
        "spec.faults[0].until",
        "not a duration",
        id="leak until",
    ),
    pytest.param(
        faults("{at: 1s, type: LeakMemory, node: n-1, rate: 1Mi}"),
        "spec.faults[0].node",
        "unknown field",
        id="leak on a node",
    ),
    pytest.param(
        faults("{at: 1s, type: DeletePod, pod: default/web, gracePeriodSeconds: -1}"),
        "spec.faults[0].gracePeriodSeconds",
        "must be >= 0",
        id="delete grace negative",
    ),
    pytest.param(
        faults("{at: 1s, type: DeletePod, pod: default/web, force: 'yes'}"),
        "spec.faults[0].force",
        "true or false",
        id="delete force string",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: Deployment/d}"),
        "spec.faults[0].replicas",
        "integer",
        id="scale without replicas",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: Deployment/d, replicas: -1}"),
        "spec.faults[0].replicas",
        "must be >= 0",
        id="scale -1",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: Deployment/d, replicas: 2.5}"),
        "spec.faults[0].replicas",
        "integer",
        id="scale 2.5",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: Pod/web, replicas: 1}"),
        "spec.faults[0].workload",
        '"Kind/name"',
        id="scale a pod",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: d, replicas: 1}"),
        "spec.faults[0].workload",
        '"Kind/name"',
        id="scale bare name",
    ),
    pytest.param(
        faults("{at: 1s, type: RunControllerPass, pass: [monitor]}"),
        "spec.faults[0].pass",
        '"monitor" or "tainting"',
        id="controller pass list",
    ),
    pytest.param(
        faults("{at: 1s, type: SetParameters, controllerManager: {nodeEvictionRate: -1}}"),
        "spec.faults[0].controllerManager.nodeEvictionRate",
        "must be >= 0",
        id="SetParameters rate",
    ),
    pytest.param(
        faults("{at: 1s, type: SetParameters, controllerManager: abc}"),
        "spec.faults[0].controllerManager",
        "mapping",
        id="SetParameters string",
    ),
    pytest.param(
        faults("{at: 1s, type: SetParameters, featureGates: {NodeDisruptionExclusion: true}}"),
        "spec.faults[0].featureGates",
        "unknown field",
        id="SetParameters gates",
    ),
    pytest.param(
        faults("{at: 1s, type: SetParameters, kubelet: {evictionSoft: {memory.available: 1Gi}}}"),
        "spec.faults[0].kubelet.evictionSoftGracePeriod.memory.available",
        "grace period must be specified",
        id="SetParameters soft without grace",
    ),
    # The engine finds these when the fault fires; the CLI still exits 2 with nothing printed.
    # (A fault naming a pod or node that existed and is gone is refused in the timeline, and
    # the run goes on: test_a_fault_naming_a_pod_gone_is_refused_in_the_timeline.)
    pytest.param(
        faults("{at: 1s, type: DeleteNode, node: n-1}", "{at: 2s, type: DeleteNode, node: n-1}"),
        "spec.faults[1].node",
        'unknown node "n-1"',
        id="node deleted earlier",
    ),
    pytest.param(
        faults("{at: 1s, type: ZoneOutage, zone: nope}"),
        "spec.faults[0].zone",
        'no node is in zone "nope"',
        id="zone unknown",
    ),
    pytest.param(
        faults("{at: 1s, type: ScaleWorkload, workload: Deployment/zz, replicas: 1}"),
        "spec.faults[0].workload",
        'unknown workload "Deployment/zz"',
        id="workload unknown",
    ),
    pytest.param(
        faults("{at: 1s, type: DeletePod, pod: default/zz}"),
        "spec.faults[0].pod",
        'unknown pod "default/zz"',
        id="pod unknown",
    ),
    pytest.param(
        scenario(
            extra="kubelet: {evictionSoft: {memory.available: 1Gi}, "
            "evictionSoftGracePeriod: {memory.available: 1m}}",
            faults=("{at: 1s, type: SetParameters, kubelet: {evictionSoftGracePeriod: {}}}",),
        ),
        "spec.faults[0].kubelet.evictionSoftGracePeriod.memory.available",
        "grace period must be specified",
        id="SetParameters conflicts with the scenario's kubelet",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, key: k, value: {a: 1}, effect: NoSchedule}"),
        "spec.faults[0].value",
        "",
        id="taint value mapping",
    ),
    pytest.param(
        faults("{at: 1s, type: Taint, node: n-1, key: 'bad key!', effect: NoSchedule}"),
        "spec.faults[0].key",
        "",
        id="taint key invalid",
    ),
    pytest.param(
        faults(
            "{at: 1s, type: Taint, node: n-1, key: a, effect: NoSchedule, "
            "taints: [{key: b, effect: NoSchedule}]}"
        ),
        "spec.faults[0]",
        "",
        id="taint key and taints",
    ),
    pytest.param(
        faults(
            "{at: 1s, type: Taint, node: n-1, taints: [{key: b, effect: NoSchedule, efect: x}]}"
        ),
        "spec.faults[0].taints[0].efect",
        "unknown field",
        id="taints item typo",
    ),
    pytest.param(
        faults("{at: 1s, type: SetNodeNotReady, node: n-1, message: {a: 1}}"),
        "spec.faults[0].message",
        "",
        id="not-ready message mapping",
    ),
    pytest.param(
        faults(
            "{at: 1s, type: SetNodeCondition, node: n-1, condition: NetworkUnavailable, "
            "status: 'True', reason: [x]}"
        ),
        "spec.faults[0].reason",
        "",
        id="condition reason list",
    ),
    pytest.param(
        faults("{at: 1s, type: SetUsage, node: n-1, pod: default/web, memory: 1Gi}"),
        "spec.faults[0]",
        "",
        id="SetUsage node and pod",
    ),
    pytest.param(
        faults("{at: 1s, type: FillDisk, node: n-1, pod: default/web, rate: 1Gi}"),
        "spec.faults[0]",
        "",
        id="FillDisk node and pod",
    ),
    # -- objects ------------------------------------------------------------------------------
    pytest.param(
        HEAD + "  objects: {a: 1}\n", "spec.objects", "must be a list", id="objects mapping"
    ),
    pytest.param(objects("abc"), "spec.objects[0]", "mapping", id="object string"),
    pytest.param(
        objects("{metadata: {name: x}}"), "spec.objects[0].kind", "got nothing", id="no kind"
    ),
    pytest.param(
        objects("{kind: [Pod], metadata: {name: x}}"),
        "spec.objects[0].kind",
        "got a list",
        id="kind list",
    ),
    pytest.param(
        objects(pod("{name: x}", "{priorityClassName: {}, containers: [{name: c}]}")),
        "spec.objects[0].spec.priorityClassName",
        "non-empty string, got a mapping",
        id="priorityClassName an empty mapping (found by make fuzz: unhashable)",
    ),
    pytest.param(
        objects(pod("{name: x}", "{nodeName: [], containers: [{name: c}]}")),
        "spec.objects[0].spec.nodeName",
        "non-empty string, got a list",
        id="nodeName an empty list (found by make fuzz: unhashable)",
    ),
    pytest.param(
        objects("{kind: Service, metadata: {name: x}}"),
        "spec.objects[0].kind",
        "must be one of Pod",
        id="kind Service",
    ),
    pytest.param(
        objects("{kind: Pod, spec: {containers: [{name: c}]}}"),
        "spec.objects[0].metadata.name",
        "got nothing",
        id="no metadata",
    ),
    pytest.param(
        objects(pod("{name: p, namespace: 5}")),
        "spec.objects[0].metadata.namespace",
        "non-empty string",
        id="namespace int",
    ),
    pytest.param(
        objects(pod("{name: p, labels: [1]}")),
        "spec.objects[0].metadata.labels",
        "mapping",
        id="labels list",
    ),
    pytest.param(
        objects(pod("{name: p, annotations: {usage.playground/memory: 1Zi}}")),
        "spec.objects[0].metadata.annotations.usage.playground/memory",
        '"1Zi" is not a Kubernetes quantity',
        id="usage 1Zi",
    ),
    pytest.param(
        objects(pod("{name: p, annotations: {usage.playground/memory: -1Gi}}")),
        "spec.objects[0].metadata.annotations.usage.playground/memory",
        "must not be negative",
        id="usage -1Gi",
    ),
    pytest.param(
        objects(pod("{name: p, annotations: {usage.playground/pids: 1.5.5}}")),
        "spec.objects[0].metadata.annotations.usage.playground/pids",
        '"1.5.5"',
        id="usage 1.5.5",
    ),
    pytest.param(
        objects(pod("{name: p, ownerReferences: [{name: x, controller: true}]}")),
        "spec.objects[0].metadata.ownerReferences[0].kind",
        "non-empty string",
        id="ownerReference without kind",
    ),
    pytest.param(objects(pod(spec="abc")), "spec.objects[0].spec", "mapping", id="spec string"),
    pytest.param(
        objects(pod(spec="{}")),
        "spec.objects[0].spec.containers",
        "at least one container",
        id="no containers",
    ),
    pytest.param(
        objects(pod(spec="{containers: {name: c}}")),
        "spec.objects[0].spec.containers",
        "must be a list",
        id="containers mapping",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{image: x}]}")),
        "spec.objects[0].spec.containers[0].name",
        "non-empty string",
        id="container without name",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c, resources: {requests: {memory: 1Zi}}}]}")),
        "spec.objects[0].spec.containers[0].resources.requests.memory",
        '"1Zi"',
        id="requests 1Zi",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c, resources: {requests: {cpu: -1}}}]}")),
        "spec.objects[0].spec.containers[0].resources.requests.cpu",
        "must not be negative",
        id="requests cpu -1",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c, resources: {requests: {cpu: .nan}}}]}")),
        "spec.objects[0].spec.containers[0].resources.requests.cpu",
        "not a Kubernetes quantity",
        id="requests nan",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c, resources: "
                "{requests: {memory: 2Gi}, limits: {memory: 1Gi}}}]}"
            )
        ),
        "spec.objects[0].spec.containers[0].resources.requests.memory",
        "less than or equal to the limit",
        id="requests above limits",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], tolerations: [{key: a, operator: In}]}")),
        "spec.objects[0].spec.tolerations[0].operator",
        '"Equal" or "Exists"',
        id="toleration operator",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], tolerations: [{key: a, effect: Bogus}]}")),
        "spec.objects[0].spec.tolerations[0].effect",
        "must be one of",
        id="toleration effect",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c}], tolerations: "
                "[{key: a, effect: NoExecute, tolerationSeconds: 30s}]}"
            )
        ),
        "spec.objects[0].spec.tolerations[0].tolerationSeconds",
        'must be an integer, got "30s"',
        id="tolerationSeconds 30s",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c}], tolerations: "
                "[{key: a, effect: NoExecute, tolerationSeconds: 1.5}]}"
            )
        ),
        "spec.objects[0].spec.tolerations[0].tolerationSeconds",
        "integer",
        id="tolerationSeconds float",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c}], tolerations: "
                "[{key: a, effect: NoSchedule, tolerationSeconds: 30}]}"
            )
        ),
        "spec.objects[0].spec.tolerations[0].tolerationSeconds",
        "only NoExecute",
        id="tolerationSeconds on NoSchedule",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c}], tolerations: [{key: a, operator: Exists, value: x}]}"
            )
        ),
        "spec.objects[0].spec.tolerations[0].value",
        "must be empty",
        id="Exists with value",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], tolerations: [{operator: Equal}]}")),
        "spec.objects[0].spec.tolerations[0].operator",
        "must be Exists when key is empty",
        id="Equal without key",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], priorityClassName: bogus}")),
        "spec.objects[0].spec.priorityClassName",
        'unknown priority class "bogus"',
        id="priority class unknown",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], priority: high}")),
        "spec.objects[0].spec.priority",
        "integer",
        id="priority string",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], nodeName: [n-1]}")),
        "spec.objects[0].spec.nodeName",
        "got a list",
        id="nodeName list",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], terminationGracePeriodSeconds: -1}")),
        "spec.objects[0].spec.terminationGracePeriodSeconds",
        "must be >= 0",
        id="termination grace negative",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], hostNetwork: 'yes'}")),
        "spec.objects[0].spec.hostNetwork",
        "true or false",
        id="hostNetwork string",
    ),
    pytest.param(
        objects(workload(f"replicas: -1, selector: {{matchLabels: {{app: d}}}}, {T}")),
        "spec.objects[0].spec.replicas",
        "must be >= 0",
        id="replicas -1",
    ),
    pytest.param(
        objects(workload(f"replicas: many, selector: {{matchLabels: {{app: d}}}}, {T}")),
        "spec.objects[0].spec.replicas",
        'integer, got "many"',
        id="replicas string",
    ),
    pytest.param(
        objects(workload(f"replicas: null, selector: {{matchLabels: {{app: d}}}}, {T}")),
        "spec.objects[0].spec.replicas",
        "got nothing",
        id="replicas null",
    ),
    pytest.param(
        objects(workload(f"replicas: true, selector: {{matchLabels: {{app: d}}}}, {T}")),
        "spec.objects[0].spec.replicas",
        "integer",
        id="replicas bool",
    ),
    pytest.param(
        objects(
            workload(f"replicas: -1, selector: {{matchLabels: {{app: d}}}}, {T}", "StatefulSet")
        ),
        "spec.objects[0].spec.replicas",
        "must be >= 0",
        id="StatefulSet replicas -1",
    ),
    pytest.param(
        objects(workload("replicas: 1, selector: {matchLabels: {app: d}}")),
        "spec.objects[0].spec.template",
        "needs a pod template",
        id="no template",
    ),
    pytest.param(
        objects(workload(f"replicas: 1, selector: {{matchLabels: {{app: x}}}}, {T}")),
        "spec.objects[0].spec.selector.matchLabels.app",
        "does not match the template's labels",
        id="selector mismatch",
    ),
    pytest.param(
        objects(
            workload(
                "replicas: 1, selector: {matchLabels: {app: d}}, template: {metadata: "
                "{labels: {app: d}}, spec: {containers: [{name: c}], tolerations: "
                "[{key: a, effect: NoExecute, tolerationSeconds: x}]}}",
                "DaemonSet",
            )
        ),
        "spec.objects[0].spec.template.spec.tolerations[0].tolerationSeconds",
        "integer",
        id="DaemonSet template toleration",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}], priorityClassName: [a]}")),
        "spec.objects[0].spec.priorityClassName",
        "",
        id="priority class list",
    ),
    pytest.param(
        objects(
            workload(f"replicas: 1, strategy: abc, selector: {{matchLabels: {{app: d}}}}, {T}")
        ),
        "spec.objects[0].spec.strategy",
        "",
        id="strategy string",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, strategy: {{rollingUpdate: abc}}, "
                f"selector: {{matchLabels: {{app: d}}}}, {T}"
            )
        ),
        "spec.objects[0].spec.strategy.rollingUpdate",
        "",
        id="rollingUpdate string",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, strategy: {{type: Bogus}}, selector: {{matchLabels: {{app: d}}}}, {T}"
            )
        ),
        "spec.objects[0].spec.strategy.type",
        "RollingUpdate or Recreate",
        id="strategy type",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, podManagementPolicy: Bogus, selector: {{matchLabels: {{app: d}}}}, {T}",
                "StatefulSet",
            )
        ),
        "spec.objects[0].spec.podManagementPolicy",
        "OrderedReady or Parallel",
        id="podManagementPolicy",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, strategy: {{rollingUpdate: {{maxUnavailable: 150%}}}}, "
                f"selector: {{matchLabels: {{app: d}}}}, {T}"
            )
        ),
        "spec.objects[0].spec.strategy.rollingUpdate.maxUnavailable",
        "",
        id="maxUnavailable 150%",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, strategy: {{rollingUpdate: {{maxSurge: 0, maxUnavailable: 0}}}}, "
                f"selector: {{matchLabels: {{app: d}}}}, {T}"
            )
        ),
        "spec.objects[0].spec.strategy.rollingUpdate.maxUnavailable",
        "",
        id="maxSurge and maxUnavailable 0",
    ),
    pytest.param(
        objects(pod("{name: 'a/b'}")),
        "spec.objects[0].metadata.name",
        "",
        id="pod name with slash",
    ),
    pytest.param(
        objects(pod("{name: p, namespace: 'a/b'}")),
        "spec.objects[0].metadata.namespace",
        "",
        id="namespace with slash",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, selector: {{matchLabels: {{app: d}}}}, {T}", meta="{name: 'Bad!'}"
            )
        ),
        "spec.objects[0].metadata.name",
        "",
        id="deployment name invalid",
    ),
    pytest.param(
        objects(
            workload(
                f"replicas: 1, selector: {{matchLabels: {{app: d}}}}, {T}",
                meta="{name: d, namespace: 5}",
            )
        ),
        "spec.objects[0].metadata.namespace",
        "non-empty string",
        id="deployment namespace int",
    ),
    pytest.param(
        objects(pod("{name: p, labels: {a: true}}")),
        "spec.objects[0].metadata.labels.a",
        "",
        id="pod label bool",
    ),
    pytest.param(
        objects(pod("{name: p, annotations: {usage.playground/memroy: 1Gi}}")),
        "spec.objects[0].metadata.annotations.usage.playground/memroy",
        "",
        id="usage annotation typo",
    ),
    pytest.param(
        objects(
            pod(
                "{name: p, ownerReferences: [{kind: DaemonSet, name: x, controller: true}, "
                "{kind: ReplicaSet, name: y, controller: true}]}"
            )
        ),
        "spec.objects[0].metadata.ownerReferences",
        "",
        id="two controllers",
    ),
    pytest.param(
        objects(pod("{name: p, ownerReferences: [{kind: DaemonSet, name: x, controller: 'yes'}]}")),
        "spec.objects[0].metadata.ownerReferences[0].controller",
        "",
        id="ownerReference controller string",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c}, {name: c}]}")),
        "spec.objects[0].spec.containers[1].name",
        "",
        id="duplicate container names",
    ),
    pytest.param(
        objects(pod(spec="{containers: [{name: c, resources: {request: {memory: 1Gi}}}]}")),
        "spec.objects[0].spec.containers[0].resources.request",
        "unknown field",
        id="resources typo",
    ),
    pytest.param(
        objects(
            pod(
                spec="{containers: [{name: c}], tolerations: [{key: a, operator: Exists, effects: NoExecute}]}"
            )
        ),
        "spec.objects[0].spec.tolerations[0].effects",
        "unknown field",
        id="toleration typo",
    ),
    pytest.param(
        objects(
            pod(spec="{containers: [{name: c}], tolerations: [{key: {a: 1}, operator: Exists}]}")
        ),
        "spec.objects[0].spec.tolerations[0].key",
        "",
        id="toleration key mapping",
    ),
    # -- spec.expect -----------------------------------------------------------------------------
    pytest.param(
        scenario(expect=("{type: Bogus, at: 1}",)),
        "spec.expect[0].type",
        "unknown event type",
        id="expect type",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, bogus: 1, at: 1}",)),
        "spec.expect[0].bogus",
        "no field",
        id="expect field",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, between: [1, 2, 3]}",)),
        "spec.expect[0].between",
        "[from, to]",
        id="expect between",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, nth: 0, at: 1}",)),
        "spec.expect[0].nth",
        ">= 1",
        id="expect nth 0",
    ),
    pytest.param(
        scenario(expect=("{type: [NodeReady], at: 1}",)),
        "spec.expect[0].type",
        "",
        id="expect type list",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, at: .nan}",)),
        "spec.expect[0].at",
        "",
        id="expect at nan",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, between: [5, 1]}",)),
        "spec.expect[0].between",
        "",
        id="expect between reversed",
    ),
    pytest.param(
        scenario(expect=("{type: NodeReady, absent: 'yes'}",)),
        "spec.expect[0].absent",
        "",
        id="expect absent string",
    ),
]


@pytest.mark.parametrize("text, path, why", CASES)
def test_refused_with_the_path(text: str, path: str, why: str, tmp_path: Path) -> None:
    assert_refused(*run_cli(text, tmp_path), path, why)


def test_a_fault_naming_a_pod_gone_is_refused_in_the_timeline(tmp_path: Path) -> None:
    """Issue #35: a fault whose pod existed and is gone at its instant (deleted by an earlier
    fault here; by an operator's action in a room, whose export replays it so) is refused in
    the timeline with its path and reason, and the run goes on (before: exit 2, nothing
    printed; the same error bricked a room)."""
    text = scenario(
        objects=(pod(spec="{nodeName: n-1, containers: [{name: c}]}"),),
        faults=(
            "{at: 1s, type: DeletePod, pod: default/p, force: true}",
            "{at: 2s, type: SetUsage, pod: default/p, memory: 1Gi}",
            "{at: 3s, type: StopKubelet, node: n-2}",
        ),
    )
    code, out, err = run_cli(text, tmp_path)
    assert (code, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    refused = [e for e in lines if e["type"] == "FaultRefused"]
    assert refused == [
        {
            "t": 2.0,
            "type": "FaultRefused",
            "fault": "SetUsage",
            "pod": "default/p",
            "memory": "1Gi",
            "error": 'spec.faults[1].pod: unknown pod "default/p"',
        }
    ]
    assert [(e["t"], e["fault"]) for e in lines if e["type"] == "Fault"] == [
        (1.0, "DeletePod"),
        (3.0, "StopKubelet"),
    ]


def test_the_base_scenario_is_valid(tmp_path: Path) -> None:
    """The cases above are one wrong field away from this."""
    code, out, err = run_cli(scenario(faults=("{at: 1s, type: StopKubelet, node: n-1}",)), tmp_path)
    assert (code, err) == (0, "")
    assert '"type":"Fault"' in out.replace(" ", "")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(b"\xff\xfe\x00\x01garbage", id="binary"),
        pytest.param("apiVersion: playground/v1alpha1\nkind: Scenario\nspec:\n  \x00\n", id="NUL"),
    ],
)
def test_binary_files_are_refused_in_one_line(text: str | bytes, tmp_path: Path) -> None:
    code, out, err = run_cli(text, tmp_path)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: malformed YAML at line"), err


@pytest.mark.parametrize("until", [-1.0, -math.inf])
def test_negative_until_is_refused(until: float, tmp_path: Path) -> None:
    assert_refused(*run_cli(scenario(), tmp_path, until=until), "--until", "must be between 0 and")


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(str(tmp_path / "nope.yaml"), None, "jsonl", None, False, out, err) == 2
    assert (
        err.getvalue()
        == f"error: cannot read {tmp_path / 'nope.yaml'}: No such file or directory\n"
    )


def test_manage_py_simulate_exits_2_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(node("{name: a, capacity: {memory: 16GB}}"))
    proc = subprocess.run(
        [sys.executable, "manage.py", "simulate", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == (
        'error: spec.nodes[0].capacity.memory: "16GB" is not a Kubernetes quantity\n'
    )


def test_manage_py_simulate_piped_into_head_ends_quietly() -> None:
    """`simulate x.yaml | head -1`: the reader closes the pipe; no BrokenPipeError traceback."""
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "simulate", "controller/scenarios/09-large-zone-outage.yaml"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline().startswith(b"{")
    proc.stdout.close()  # what head does after its line
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (141, b"")


@pytest.mark.parametrize(
    "args, words",
    [
        pytest.param(["--until", "abc"], "argument --until: invalid float value", id="until"),
        pytest.param(["--format", "xml"], "argument --format: invalid choice", id="format"),
        pytest.param(["--bogus"], "unrecognized arguments: --bogus", id="unknown option"),
    ],
)
def test_bad_arguments_exit_2_with_usage(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(scenario())
    with pytest.raises(SystemExit) as info:
        cli.main([str(path), *args])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and words in captured.err


# -- mishandled today -----------------------------------------------------------------------------
def test_very_deep_nesting_is_refused_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(HEAD + "  objects: " + "[" * 200_000 + "]" * 200_000 + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "controller.engine.cli", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-300:])
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_deep_malformed_yaml_is_refused(tmp_path: Path) -> None:
    # Refused for its depth before anything recurses (it is malformed too).
    text = HEAD + "  objects: " + "[" * 1000 + "]" * 999 + "\n"
    assert_refused(*run_cli(text, tmp_path), "", "nested deeper than 64 levels at line 5")


def test_deeply_nested_pod_template_is_refused(tmp_path: Path) -> None:
    deep = "{a: " * 1500 + "1" + "}" * 1500
    text = objects(
        workload(
            "replicas: 1, selector: {matchLabels: {app: d}}, template: {metadata: "
            f"{{labels: {{app: d}}}}, spec: {{containers: [{{name: c}}], affinity: {deep}}}}}"
        )
    )
    assert_refused(*run_cli(text, tmp_path), "", "nested deeper than 64 levels")


@pytest.mark.parametrize("duration", ["9999999999999999999h", "99999999999999999999999"])
def test_durations_beyond_int64_nanoseconds_are_refused(duration: str) -> None:
    # Only loaded: running it would not end.
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario(duration=duration))
    assert str(info.value).startswith("spec.duration: ")


@pytest.mark.parametrize(
    "text, path",
    [
        pytest.param(
            objects(
                workload(f"replicas: 100000000000, selector: {{matchLabels: {{app: d}}}}, {T}")
            ),
            "spec.objects[0].spec.replicas",
            id="manifest",
        ),
        pytest.param(
            faults("{at: 1s, type: ScaleWorkload, workload: Deployment/d, replicas: 100000000000}"),
            "spec.faults[0].replicas",
            id="ScaleWorkload",
        ),
    ],
)
def test_replicas_beyond_int32_are_refused(text: str, path: str) -> None:
    # Only loaded: running it would not end.
    with pytest.raises(ScenarioError) as info:
        load_scenario(text)
    assert str(info.value).startswith(f"{path}: ")


def test_delete_pod_grace_period_as_a_string(tmp_path: Path) -> None:
    # The loader accepts "5" for an integer (as for replicas: "3"); it must then work.
    text = faults("{at: 1s, type: DeletePod, pod: default/web, gracePeriodSeconds: '5'}")
    code, out, err = run_cli(text, tmp_path)
    assert code == 0, err
    assert '"by":"User"' in out.replace(" ", "")


def test_a_deleted_node_can_be_added_again(tmp_path: Path) -> None:
    text = faults(
        "{at: 1s, type: DeleteNode, node: n-2}", "{at: 2s, type: AddNode, node: {name: n-2}}"
    )
    code, _, err = run_cli(text, tmp_path)
    assert (code, err) == (0, "")


def test_applying_a_changed_selector_is_refused(tmp_path: Path) -> None:
    changed = workload(
        "replicas: 2, selector: {matchLabels: {app: e}}, "
        "template: {metadata: {labels: {app: e}}, spec: {containers: [{name: c}]}}"
    )
    code, out, err = run_cli(faults(f"{{at: 1s, type: Apply, object: {changed}}}"), tmp_path)
    assert code == 2 and err.startswith("error: spec.faults[0].object.spec.selector"), err


def test_applying_a_pod_on_another_node_is_refused(tmp_path: Path) -> None:
    moved = pod(
        "{name: web, namespace: default, labels: {x: y}}",
        "{nodeName: n-2, containers: [{name: web}]}",
    )
    code, out, err = run_cli(faults(f"{{at: 1s, type: Apply, object: {moved}}}"), tmp_path)
    assert code == 2 and err.startswith("error: spec.faults[0].object.spec.nodeName"), err


def test_until_nan_is_refused(tmp_path: Path) -> None:
    assert_refused(*run_cli(scenario(), tmp_path, until=math.nan), "--until", "")


def test_until_inf_is_refused(tmp_path: Path) -> None:
    assert_refused(*run_cli(scenario(), tmp_path, until=math.inf), "--until", "")


def test_until_beyond_any_duration_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NeverRun:
        def __init__(self, *args: object) -> None:
            raise AssertionError("--until 1e30 reached the simulation")

    monkeypatch.setattr(cli, "Simulation", NeverRun)
    assert_refused(*run_cli(scenario(), tmp_path, until=1e30), "--until", "")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(str(tmp_path), None, "jsonl", None, False, out, err) == 2
    assert err.getvalue().startswith("error: ") and out.getvalue() == ""


def test_an_unwritable_final_state_is_refused(tmp_path: Path) -> None:
    target = str(tmp_path / "no" / "such" / "dir" / "state.json")
    code, out, err = run_cli(scenario(), tmp_path, final_state=target)
    assert code == 2 and err.startswith("error: --final-state"), err


def test_a_null_label_value_is_the_empty_string_as_in_kubernetes() -> None:
    # JSON null decodes to "" in a Go map[string]string: the API server stores a:"".
    sim = Simulation(load_scenario(objects(pod("{name: p, labels: {a: null}}"))))
    sim.run(0)
    assert sim.cluster.pods["default/p"].labels["a"] == ""
