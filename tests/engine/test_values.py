"""Issue #24, items 2 and 13 (the scenario side): one validation of every value that is stored
or sent (controller/engine/values.py), at the scenario loader: text with no NUL and no lone
surrogate, integers within their Kubernetes type (int32, int64, seconds a time.Duration holds),
quantities within resource.Quantity's 2^63-1, eviction rates as kube-controller-manager reads
its float32 flags. Each refused with the field's path; each accepted value can be stored as
JSON (orjson, as bulk.py stores it)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from controller.engine import values
from controller.engine.scenario import ScenarioError, load_scenario
from controller.engine.simulation import Simulation
from controller.engine.state import node_state, pod_state

HEAD = (
    "apiVersion: playground/v1alpha1\nkind: Scenario\nmetadata: {name: v}\nspec:\n"
    '  kubernetesVersion: "1.34"\n  duration: 30s\n'
)
NODES = "  nodes: [{name: n-1, zone: z}, {name: n-2, zone: z}]\n"
POD = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {nodeName: n-1, containers: [{name: c}]}}"


def with_(section: str) -> str:
    return HEAD + section + ("" if "  nodes:" in section else NODES)


def fault(f: str) -> str:
    return with_(f"  objects: [{POD}]\n  faults:\n    - {f}\n")


@pytest.mark.parametrize(
    ("text", "path", "why"),
    [
        pytest.param(
            fault(r'{at: 5s, type: SetNodeNotReady, node: n-1, message: "\ud800"}'),
            "spec.faults[0].message",
            "lone surrogate (\\ud800)",
            id="a lone surrogate in a fault's message (the issue's frozen room)",
        ),
        pytest.param(
            with_('  nodes: [{name: n-1, labels: {"a\\udc00": x}}]\n'),
            "spec.nodes[0].labels.a\\udc00",
            "lone surrogate (\\udc00)",
            id="a lone surrogate in a mapping key, shown escaped",
        ),
        pytest.param(
            fault(r'{at: 5s, type: SetNodeNotReady, node: n-1, message: "a\0b"}'),
            "spec.faults[0].message",
            "NUL character",
            id="a NUL in a fault's message",
        ),
        pytest.param(
            with_(
                "  apiServer: {defaultUnreachableTolerationSeconds: 1000000000000000000000000000000}\n"
            ),
            "spec.apiServer.defaultUnreachableTolerationSeconds",
            "outside the 64-bit integer range",
            id="toleration seconds 10^30 (the issue's frozen room)",
        ),
        pytest.param(
            with_("  apiServer: {defaultUnreachableTolerationSeconds: 9223372037}\n"),
            "spec.apiServer.defaultUnreachableTolerationSeconds",
            "must be <= 9223372036",
            id="toleration seconds past what a time.Duration holds",
        ),
        pytest.param(
            with_(
                "  objects:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                "{containers: [{name: c}], tolerations: [{key: k, operator: Exists, "
                "effect: NoExecute, tolerationSeconds: 99999999999}]}}\n"
            ),
            "spec.objects[0].spec.tolerations[0].tolerationSeconds",
            "must be <= 9223372036",
            id="a pod's tolerationSeconds past a time.Duration",
        ),
        pytest.param(
            with_("  controllerManager: {nodeEvictionRate: 1.0e+308}\n"),
            "spec.controllerManager.nodeEvictionRate",
            "out of range for --node-eviction-rate (a float32",
            id="nodeEvictionRate 1e308: past float32",
        ),
        pytest.param(
            with_("  controllerManager: {secondaryNodeEvictionRate: 1.0e-320}\n"),
            "spec.controllerManager.secondaryNodeEvictionRate",
            "longer between two evictions than a Go time.Duration holds",
            id="secondaryNodeEvictionRate 1e-320: an interval past time.Duration",
        ),
        pytest.param(
            with_("  controllerManager: {largeClusterSizeThreshold: 2147483648}\n"),
            "spec.controllerManager.largeClusterSizeThreshold",
            "must be <= 2147483647",
            id="largeClusterSizeThreshold: an int32",
        ),
        pytest.param(
            with_("  kubelet: {nodeLeaseDurationSeconds: 2147483648}\n"),
            "spec.kubelet.nodeLeaseDurationSeconds",
            "must be <= 2147483647",
            id="nodeLeaseDurationSeconds: an int32",
        ),
        pytest.param(
            with_('  nodes: [{name: n-1, capacity: {memory: "1e308"}}]\n'),
            "spec.nodes[0].capacity.memory",
            "larger than a Kubernetes quantity holds",
            id='capacity memory "1e308" (the issue\'s AddNode)',
        ),
        pytest.param(
            with_(
                "  objects:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                "{containers: [{name: c}], priority: 2147483648}}\n"
            ),
            "spec.objects[0].spec.priority",
            "must be <= 2147483647",
            id="a pod's priority: an int32",
        ),
        pytest.param(
            HEAD.replace("duration: 30s", "duration: 1" + "0" * 300) + NODES,
            "spec.duration",
            "",
            id="a duration of 10^300 seconds (found by make fuzz: OverflowError)",
        ),
        pytest.param(
            fault("{at: 5s, type: SetNodeCondition, node: n-1, condition: [1], status: 'True'}"),
            "spec.faults[0].condition",
            "must be one of",
            id="a condition that is a list (found by make fuzz: unhashable)",
        ),
        pytest.param(
            fault("{at: 5s, type: DeletePod, pod: default/p, gracePeriodSeconds: 1e400}"),
            "spec.faults[0].gracePeriodSeconds",
            "must be an integer",
            id="gracePeriodSeconds 1e400 (YAML: a string)",
        ),
    ],
)
def test_a_value_that_cannot_be_stored_or_is_out_of_its_kubernetes_range_is_refused(
    text: str, path: str, why: str
) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert (err.value.path, why in err.value.why) == (path, True), err.value


def test_a_lesson_choice_too_large_for_a_number_is_refused_with_its_path() -> None:
    # Found by make fuzz (a mutation of a built-in lesson): f"{10**400:g}" raised OverflowError.
    lesson = Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml"
    text = lesson.read_text().replace("choices: [", "choices: [1" + "0" * 400 + ", ", 1)
    with pytest.raises(ScenarioError) as err:
        load_scenario(text)
    assert err.value.why == "a number too large" and err.value.path.endswith(".choices[0]")


@pytest.mark.parametrize(
    "section",
    [
        pytest.param("  controllerManager: {nodeEvictionRate: 0}\n", id="rate 0 (stops evictions)"),
        pytest.param(
            "  controllerManager: {nodeEvictionRate: 3.0e+38}\n", id="rate at float32's top"
        ),
        pytest.param(
            "  apiServer: {defaultUnreachableTolerationSeconds: 9223372036}\n",
            id="the longest toleration a time.Duration holds",
        ),
        pytest.param(
            '  nodes: [{name: n-1, capacity: {memory: "8Ei", pods: "110"}}]\n',
            id="8Ei of memory (within 2^63-1)",
        ),
        pytest.param(
            '  nodes: [{name: n-1, capacity: {memory: "8Ei", ephemeral-storage: "8Ei"}}]\n'
            f"  objects: [{POD}]\n  faults:\n"
            "    - {at: 1s, type: LeakMemory, pod: default/p, rate: 99999999999999999999999Ei}\n"
            "    - {at: 1s, type: FillDisk, node: n-1, rate: 99999999999999999999999Ei}\n",
            id="leaks of 99999999999999999999999Ei/s (ParseQuantity caps it at 2^63-1) on 8Ei",
        ),
    ],
)
def test_the_largest_values_kubernetes_takes_run_and_store(section: str) -> None:
    sim = Simulation(load_scenario(with_(section)))
    sim.run(30_000)
    # Every event, node and pod view can be stored (orjson refuses integers past 64 bits).
    orjson.dumps(list(sim.timeline.events))
    orjson.dumps([node_state(sim, n) for n in sim.cluster.nodes.values()])
    orjson.dumps([pod_state(sim, p) for p in sim.cluster.pods.values()])


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param("ok", None, id="text"),
        pytest.param({"a": ["b", 1, 2.5, True, None]}, None, id="nested"),
        pytest.param(float("nan"), ("p", "not a finite number"), id="NaN"),
        pytest.param(2**63, ("p", "outside the 64-bit integer range"), id="2^63"),
        pytest.param(-(2**63), None, id="-2^63"),
        pytest.param({"k": "\udfff"}, ("p.k", "lone surrogate (\\udfff)"), id="surrogate"),
        pytest.param(["\x00"], ("p[0]", "NUL character"), id="NUL"),
    ],
)
def test_first_problem(value: object, problem: tuple[str, str] | None) -> None:
    got = values.first_problem(value, "p")
    assert (got and (got[0], problem[1] in got[1])) == (problem and (problem[0], True))
