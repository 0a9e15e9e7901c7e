"""A pod's last phase (issue #37 part 3): from 1.27 (#115331) the kubelet writes Failed or
Succeeded, from its containers' exit codes, before a deleted pod is removed; kubelet
evictions and graceful node shutdown take the same exit codes (Succeeded for 0). The
containers' answer to SIGTERM is the playground's termination model
(controller/engine/kubelet/termination.py: the ``sigterm.playground/*`` annotations).

Every case at exact simulated times, for a 1.18, 1.27, 1.31 and 1.36 kubelet. One node "m"
(8 cpu, 8Gi), one pod "p" with terminationGracePeriodSeconds 30 (the default). The models:

- ``exit 0``: exit code 0, at the grace period's end (the default timing);
- ``exit 143 after 5 s``: exit code 143, 5 s after SIGTERM;
- ``SIGTERM ignored``: SIGKILLed when the grace period ends, 137.

Rows per pod after the trigger: (seconds, type, detail), detail the phase and reason of a
PodPhase, the status of a PodReady, "" for PodRemoved. Same-instant rows keep the timeline's
order: the status manager's PATCH (phase, then Ready=False in the same write), then its DELETE.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.engine.kubelet.termination import (
    DEFAULT_TERMINATION,
    Termination,
    TerminationError,
    container_stop,
    parse_termination,
    terminal_phase,
)
from controller.engine.scenario import ScenarioError, load_scenario
from controller.kube_io.importer import import_cluster

from .conftest import simulate
from .test_audit_eviction import at, node, node_usage, pod

EXIT_0 = {"sigterm.playground/exit-code": "0"}
EXIT_143_AFTER_5 = {
    "sigterm.playground/exit-code": "143",
    "sigterm.playground/exit-after-seconds": "5",
}
IGNORED = {"sigterm.playground/action": "ignore"}
MODELS = {"exit 0": EXIT_0, "exit 143 after 5 s": EXIT_143_AFTER_5, "SIGTERM ignored": IGNORED}
KUBELETS = ("1.18", "1.27", "1.31", "1.36")


def run(version: str, spec: dict[str, Any], kubelet_version: str | None = None):
    nodes = spec.pop("nodes", None) or [node()]
    if kubelet_version is not None:
        nodes = [{**n, "kubeletVersion": kubelet_version} for n in nodes]
    doc = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "spec": {"kubernetesVersion": version, "duration": "120s", "nodes": nodes, **spec},
    }
    return simulate(yaml.safe_dump(doc))


def rows(sim, name: str = "p", after_s: float = 0) -> list[tuple[float, str, str]]:
    out = []
    for e in sim.timeline.events:
        if e.get("pod") != f"default/{name}" or e["t"] < after_s * 1000:
            continue
        if e["type"] == "PodPhase":
            out.append((e["t"] / 1000, "PodPhase", f"{e['phase']} {e['reason']}".strip()))
        elif e["type"] == "PodReady":
            out.append((e["t"] / 1000, "PodReady", e["status"]))
        elif e["type"] == "PodRemoved":
            out.append((e["t"] / 1000, "PodRemoved", ""))
    return out


def ended(t: float, phase: str | None, ready: bool = True) -> list[tuple[float, str, str]]:
    """A deleted pod's end at ``t``: 1.27+ the phase PATCH (Ready=False with it, when the pod
    was Ready), then the DELETE; 1.18 (``phase`` None) the DELETE alone."""
    if phase is None:
        return [(t, "PodRemoved", "")]
    out = [(t, "PodPhase", phase)]
    if ready:
        out.append((t, "PodReady", "False"))
    return [*out, (t, "PodRemoved", "")]


def new_kubelet(version: str) -> bool:
    return version != "1.18"


# -- the model (pure) ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "grace_ms", "want"),
    [
        pytest.param({}, 30_000, (30_000, 143), id="default: 143 as the grace ends"),
        pytest.param(EXIT_0, 30_000, (30_000, 0), id="exit 0 as the grace ends"),
        pytest.param(EXIT_143_AFTER_5, 30_000, (5_000, 143), id="143 after 5 s"),
        pytest.param(EXIT_143_AFTER_5, 5_000, (5_000, 137), id="5 s of a 5 s grace: SIGKILL"),
        pytest.param(EXIT_143_AFTER_5, 1_000, (1_000, 137), id="a 1 s kill: SIGKILL"),
        pytest.param(IGNORED, 30_000, (30_000, 137), id="ignored: SIGKILL at the grace's end"),
        pytest.param(
            {"sigterm.playground/exit-after-seconds": "0"}, 30_000, (0, 143), id="at once"
        ),
        pytest.param(EXIT_0, 0, (0, 137), id="a kill of 0: SIGKILL at once"),
    ],
)
def test_container_stop(annotations, grace_ms, want) -> None:
    assert container_stop(annotations, grace_ms) == want


def test_terminal_phase_is_get_phases_pod_is_terminal_case() -> None:
    assert terminal_phase([0]) == "Succeeded"
    assert terminal_phase([0, 0]) == "Succeeded"
    assert terminal_phase([0, 143]) == "Failed"
    assert terminal_phase([137]) == "Failed"


def test_parse_termination() -> None:
    assert parse_termination({}) is DEFAULT_TERMINATION
    assert parse_termination({"other/x": "1"}) is DEFAULT_TERMINATION
    assert parse_termination(EXIT_143_AFTER_5) == Termination("exit", 143, 5)
    assert parse_termination(IGNORED) == Termination("ignore", 137, None)


@pytest.mark.parametrize(
    ("annotations", "key", "message"),
    [
        pytest.param(
            {"sigterm.playground/action": "stop"}, "sigterm.playground/action", '"exit" or'
        ),
        pytest.param(
            {"sigterm.playground/exit-code": "256"}, "sigterm.playground/exit-code", "0 to 255"
        ),
        pytest.param(
            {"sigterm.playground/exit-code": "-1"}, "sigterm.playground/exit-code", "0 to 255"
        ),
        pytest.param(
            {"sigterm.playground/exit-after-seconds": "5s"},
            "sigterm.playground/exit-after-seconds",
            "whole number",
        ),
        pytest.param(
            {"sigterm.playground/exit-after-seconds": "10000000000"},
            "sigterm.playground/exit-after-seconds",
            "0 to 1000000000",
        ),
        pytest.param(
            {**IGNORED, "sigterm.playground/exit-code": "0"},
            "sigterm.playground/exit-code",
            "only with action exit",
        ),
        pytest.param({"sigterm.playground/code": "0"}, "sigterm.playground/code", "unknown"),
    ],
)
def test_bad_termination_annotations_name_the_field(annotations, key, message) -> None:
    with pytest.raises(TerminationError) as exc:
        parse_termination(annotations)
    assert exc.value.key == key and message in exc.value.message
    spec = {"nodes": [node()], "objects": [pod("p", annotations=annotations)], "faults": []}
    doc = {"apiVersion": "playground/v1alpha1", "kind": "Scenario", "spec": spec}
    with pytest.raises(ScenarioError) as err:
        load_scenario(yaml.safe_dump(doc))
    assert str(err.value).startswith(f"spec.objects[0].metadata.annotations.{key}: ")


def test_a_workload_template_with_a_bad_annotation_is_refused() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {
                    "labels": {"app": "web"},
                    "annotations": {"sigterm.playground/exit-code": "x"},
                },
                "spec": {"containers": [{"name": "web"}]},
            },
        },
    }
    doc = {
        "apiVersion": "playground/v1alpha1",
        "kind": "Scenario",
        "spec": {"nodes": [node()], "objects": [deployment]},
    }
    with pytest.raises(ScenarioError) as err:
        load_scenario(yaml.safe_dump(doc))
    assert str(err.value).startswith(
        "spec.objects[0].spec.template.metadata.annotations.sigterm.playground/exit-code: "
    )


# -- user delete --------------------------------------------------------------------------------
# DeletePod at 10 s: SIGTERM at 10 s; exit 0 and ignored end at 40 s, 143-after-5 at 15 s.
USER_DELETE = {
    "exit 0": (40.0, "Succeeded"),
    "exit 143 after 5 s": (15.0, "Failed"),
    "SIGTERM ignored": (40.0, "Failed"),
}


@pytest.mark.parametrize("version", KUBELETS)
@pytest.mark.parametrize("model", list(MODELS))
def test_user_delete(version: str, model: str) -> None:
    spec = {
        "objects": [pod("p", annotations=MODELS[model])],
        "faults": [at(10, "DeletePod", pod="default/p")],
    }
    sim = run(version, spec)
    t, phase = USER_DELETE[model]
    assert rows(sim, after_s=10) == ended(t, phase if new_kubelet(version) else None)


def test_the_default_model_ends_failed_as_the_grace_ends() -> None:
    spec = {"objects": [pod("p")], "faults": [at(10, "DeletePod", pod="default/p")]}
    assert rows(run("1.34", spec), after_s=10) == ended(40.0, "Failed")
    assert rows(run("1.18", spec), after_s=10) == ended(40.0, None)


def test_the_kubelets_release_decides_not_the_control_planes() -> None:
    """A 1.36 control plane with a 1.33 kubelet: 1.33's rule (the phase is written)."""
    spec = {
        "objects": [pod("p", annotations=EXIT_0)],
        "faults": [at(10, "DeletePod", pod="default/p")],
    }
    sim = run("1.36", spec, kubelet_version="1.33")
    assert rows(sim, after_s=10) == ended(40.0, "Succeeded")


# -- taint eviction -----------------------------------------------------------------------------
# A NoExecute taint the pod does not tolerate at 10 s: the taint manager (taint-eviction-
# controller from 1.29) deletes it at once, with the pod's grace.
@pytest.mark.parametrize("version", KUBELETS)
@pytest.mark.parametrize("model", list(MODELS))
def test_taint_eviction(version: str, model: str) -> None:
    spec = {
        "objects": [pod("p", annotations=MODELS[model])],
        "faults": [at(10, "Taint", node="m", key="example.com/drain", effect="NoExecute")],
    }
    sim = run(version, spec)
    deleted = [e["t"] / 1000 for e in sim.timeline.events if e["type"] == "PodDeleted"]
    assert deleted == [10.0]
    t, phase = USER_DELETE[model]
    assert rows(sim, after_s=10) == ended(t, phase if new_kubelet(version) else None)


# -- kubelet eviction ---------------------------------------------------------------------------
# Hard threshold memory.available < 4608Mi; the node's own usage 3000Mi from 15 s and the
# pod's 1Gi leave 4168Mi: the 20 s sync evicts p (override 0). Its kill's grace: 1.18 uses the
# override as given (0: a SIGKILL at once, the status Failed written before the kill); 1.27
# to 1.30 the pod's own 30 s; 1.31+ immediateEvictionGracePeriodSeconds, 1 s.
HARD = {"evictionHard": {"memory.available": "4608Mi"}}
KUBELET_EVICTION = {
    # version -> model -> (time of the kill's end, phase)
    "1.27": {
        "exit 0": (50.0, "Succeeded"),
        "exit 143 after 5 s": (25.0, "Failed Evicted"),
        "SIGTERM ignored": (50.0, "Failed Evicted"),
    },
    "1.31": {
        "exit 0": (21.0, "Succeeded"),  # exits as the 1 s grace ends
        "exit 143 after 5 s": (21.0, "Failed Evicted"),  # SIGKILL at 1 s: 137
        "SIGTERM ignored": (21.0, "Failed Evicted"),
    },
}
KUBELET_EVICTION["1.36"] = KUBELET_EVICTION["1.31"]


@pytest.mark.parametrize("version", KUBELETS)
@pytest.mark.parametrize("model", list(MODELS))
def test_kubelet_eviction(version: str, model: str) -> None:
    spec = {
        "kubelet": HARD,
        "objects": [
            pod(
                "p",
                annotations=MODELS[model],
                usage={"memory": "1Gi"},
                requests={"memory": "512Mi"},
            )
        ],
        "faults": [node_usage(15, memory="3000Mi")],
    }
    sim = run(version, spec)
    evicted = [e["t"] / 1000 for e in sim.timeline.events if e["type"] == "PodEvicted"]
    assert evicted == [20.0]
    if version == "1.18":  # Failed before the kill, whatever the containers do
        assert rows(sim, after_s=20) == [
            (20.0, "PodPhase", "Failed Evicted"),
            (20.0, "PodReady", "False"),
        ]
        return
    t, phase = KUBELET_EVICTION[version][model]
    assert rows(sim, after_s=20) == [(t, "PodPhase", phase), (t, "PodReady", "False")]


# -- graceful node shutdown ---------------------------------------------------------------------
# shutdownGracePeriod 30 s, 10 s of it for critical pods: p (priority 0) is killed with
# min(20 s, its 30 s) from the shutdown at 10 s; the machine powers off when the groups are
# done (after the critical group's wait, which has no pods: at once).
SHUTDOWN = {"shutdownGracePeriod": "30s", "shutdownGracePeriodCriticalPods": "10s"}
NODE_SHUTDOWN = {
    "exit 0": (30.0, "Succeeded"),
    "exit 143 after 5 s": (15.0, "Failed Terminated"),
    "SIGTERM ignored": (30.0, "Failed Terminated"),
}


@pytest.mark.parametrize("version", KUBELETS[1:])
@pytest.mark.parametrize("model", list(MODELS))
def test_node_shutdown(version: str, model: str) -> None:
    spec = {
        "kubelet": SHUTDOWN,
        "objects": [pod("p", annotations=MODELS[model])],
        "faults": [at(10, "ShutdownNode", node="m")],
    }
    sim = run(version, spec)
    t, phase = NODE_SHUTDOWN[model]
    assert rows(sim, after_s=10) == [(t, "PodPhase", phase), (t, "PodReady", "False")]
    powered_off = [e["t"] / 1000 for e in sim.timeline.events if e["type"] == "NodePoweredOff"]
    assert powered_off == [t]


def test_node_shutdown_is_not_a_1_18_fault() -> None:
    spec = {
        "kubernetesVersion": "1.18",
        "nodes": [node()],
        "objects": [pod("p", annotations=EXIT_0)],
        "faults": [at(10, "ShutdownNode", node="m")],
    }
    doc = {"apiVersion": "playground/v1alpha1", "kind": "Scenario", "spec": spec}
    with pytest.raises(ScenarioError):
        load_scenario(yaml.safe_dump(doc))


# -- after a partition heals, and when a powered-off node comes back ---------------------------
@pytest.mark.parametrize(
    ("version", "heal", "want"),
    [
        *[
            pytest.param(v, heal, heal, id=f"{v}, healed at {heal:g} s")
            for v in KUBELETS[1:]
            for heal in (30.0, 70.0)
        ],
        pytest.param("1.18", 70.0, 70.0, id="1.18, healed at 70 s"),
    ],
)
def test_a_kill_that_ends_during_a_partition_is_written_after_the_heal(version, heal, want):
    """Deleted at 10 s, partitioned at 12 s, the containers exit (0) at 15 s: the API cannot be
    told. 1.27+: the status and the DELETE wait in the status manager; its first syncBatch after
    the heal (kubelet start + k x 10 s: the heal's own instant, after the node status post)
    PATCHes Succeeded, then DELETEs, whether or not the node had turned Unknown meanwhile (at
    70 s it had: lease last renewed at 10 s). 1.18: the engine's kubelet removes the pod at the
    pod resync of its first node status post after the heal (70 s: Unknown is put right)."""
    spec = {
        "objects": [
            pod(
                "p",
                annotations={
                    "sigterm.playground/exit-code": "0",
                    "sigterm.playground/exit-after-seconds": "5",
                },
            )
        ],
        "faults": [
            at(10, "DeletePod", pod="default/p"),
            at(12, "PartitionNode", node="m"),
            at(heal, "HealNode", node="m"),
        ],
    }
    sim = run(version, spec)
    got = [r for r in rows(sim, after_s=10) if r[1] != "PodReady"]
    if new_kubelet(version):
        assert got == [(want, "PodPhase", "Succeeded"), (want, "PodRemoved", "")]
    else:
        assert got == [(want, "PodRemoved", "")]


@pytest.mark.parametrize("version", KUBELETS)
def test_a_pod_deleted_while_its_machine_is_off_fails_when_it_comes_back(version: str) -> None:
    """Powered off at 10 s (its containers die with the machine), deleted at 20 s (the kubelet
    cannot see it), powered on at 60 s: the new kubelet finds nothing running, so its
    containers are missing (TerminatePod: exit code 137) whatever their model: 1.27+ Failed,
    then the DELETE; 1.18 the DELETE alone."""
    spec = {
        "objects": [pod("p", annotations=EXIT_0)],
        "faults": [
            at(10, "PowerOffNode", node="m"),
            at(20, "DeletePod", pod="default/p"),
            at(60, "PowerOnNode", node="m"),
        ],
    }
    sim = run(version, spec)
    got = [r for r in rows(sim, after_s=20) if r[1] != "PodReady"]
    if new_kubelet(version):
        assert got == [(60.0, "PodPhase", "Failed"), (60.0, "PodRemoved", "")]
    else:
        assert got == [(60.0, "PodRemoved", "")]


# -- the kubectl import -------------------------------------------------------------------------
THREE_ZONES = Path(__file__).resolve().parents[1] / "fixtures" / "kubectl" / "three-zones.yaml"


def _three_zones(change) -> str:
    doc = yaml.safe_load(THREE_ZONES.read_text())
    change(doc["items"])
    return yaml.safe_dump(doc, sort_keys=False)


def test_the_import_keeps_the_termination_annotations() -> None:
    """A pod's and a template's ``sigterm.playground/*`` annotations go into the scenario as
    written (items[12] a Pod, items[21] the node-exporter DaemonSet)."""

    def change(items) -> None:
        items[12]["metadata"].setdefault("annotations", {}).update(EXIT_143_AFTER_5)
        items[21]["spec"]["template"]["metadata"]["annotations"] = dict(IGNORED)

    scenario, _report = import_cluster(_three_zones(change))
    by_name = {o["metadata"]["name"]: o for o in scenario["spec"]["objects"]}
    pod_annotations = by_name["web-7c5ddbdf54-tn5rv"]["metadata"]["annotations"]
    assert {k: v for k, v in pod_annotations.items() if k.startswith("sigterm.")} == (
        EXIT_143_AFTER_5
    )
    template = by_name["node-exporter"]["spec"]["template"]["metadata"]
    assert template["annotations"] == IGNORED


@pytest.mark.parametrize(
    ("where", "message"),
    [
        pytest.param(
            lambda items: items[12]["metadata"]
            .setdefault("annotations", {})
            .update({"sigterm.playground/exit-code": "300"}),
            "items[12].metadata.annotations.sigterm.playground/exit-code: must be a whole "
            "number from 0 to 255, got 300",
            id="a pod",
        ),
        pytest.param(
            lambda items: items[21]["spec"]["template"]["metadata"].update(
                {"annotations": {"sigterm.playground/action": "wait"}}
            ),
            'items[21].spec.template.metadata.annotations.sigterm.playground/action: must be "exit"'
            ' or "ignore", got "wait"',
            id="a template",
        ),
    ],
)
def test_the_import_refuses_a_bad_termination_annotation(where, message) -> None:
    with pytest.raises(ScenarioError) as exc:
        import_cluster(_three_zones(where))
    assert str(exc.value) == message
