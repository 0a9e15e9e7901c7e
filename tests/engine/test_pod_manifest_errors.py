"""pod_from_manifest refuses a bad pod with the path of its first wrong field and the same
words whether the path is built at every field or only on a refusal (issue #27): one case per
refusal, exact messages."""

from __future__ import annotations

import pytest

from controller.engine.manifests import pod_from_manifest
from controller.engine.scenario import ScenarioError

C = {"name": "app", "resources": {"requests": {"cpu": "100m"}}}


def pod_manifest(meta=None, spec=None, c=None):
    m = {"name": "p", "namespace": "default"} | (meta or {})
    s = {"containers": [c or C]} | (spec or {})
    return {"kind": "Pod", "metadata": m, "spec": s}


CASES = [
    {"kind": "Pod", "metadata": [], "spec": {}},
    {"kind": "Pod", "metadata": {"name": "p"}, "spec": 3},
    {"kind": "Pod", "metadata": {1: "p"}, "spec": {}},
    pod_manifest({"name": ""}),
    pod_manifest({"name": 5}),
    pod_manifest({"name": "Bad_Name"}),
    pod_manifest({"namespace": "Bad.NS"}),
    pod_manifest({"namespace": None}),
    pod_manifest({"namespace": ""}),
    pod_manifest({"labels": {"a b": "x"}}),
    pod_manifest({"labels": {"a": True}}),
    pod_manifest({"labels": []}),
    pod_manifest({"annotations": "x"}),
    pod_manifest({"annotations": {"usage.playground/cpu": "1"}}),
    pod_manifest({"annotations": {"usage.playground/memory": "lots"}}),
    pod_manifest({"ownerReferences": {}}),
    pod_manifest({"ownerReferences": [3]}),
    pod_manifest({"ownerReferences": [{"controller": "yes"}]}),
    pod_manifest({"ownerReferences": [{"controller": True, "kind": "", "name": "x"}]}),
    pod_manifest({"ownerReferences": [{"controller": True, "kind": "ReplicaSet", "name": 1}]}),
    pod_manifest(
        {
            "ownerReferences": [
                {"controller": True, "kind": "A", "name": "a"},
                {"controller": True, "kind": "B", "name": "b"},
            ]
        }
    ),
    pod_manifest(spec={"containers": []}),
    pod_manifest(spec={"containers": {}}),
    pod_manifest(spec={"containers": None}),
    pod_manifest(spec={"containers": [C, C]}),
    pod_manifest(spec={"containers": ["x"]}),
    pod_manifest(c={"name": ""}),
    pod_manifest(c={"name": "a", "resources": []}),
    pod_manifest(c={"name": "a", "resources": {"request": {}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"cpu": "1x"}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"cpu": "-1"}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"memory": "99999999999999999999"}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"cpu": "99999999999999999"}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"memory": True}}}),
    pod_manifest(c={"name": "a", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}),
    pod_manifest(c={"name": "a", "resources": {"limits": "x"}}),
    pod_manifest(spec={"initContainers": [{"name": 3}]}),
    pod_manifest(spec={"initContainers": "x"}),
    pod_manifest(spec={"tolerations": [{"operator": "Maybe"}]}),
    pod_manifest(spec={"tolerations": [{"key": "k", "effect": "Boom"}]}),
    pod_manifest(spec={"tolerations": [{"key": "k", "tolerationSeconds": 5}]}),
    pod_manifest(
        spec={"tolerations": [{"key": "k", "effect": "NoExecute", "tolerationSeconds": "x"}]}
    ),
    pod_manifest(spec={"tolerations": [{"key": "a b"}]}),
    pod_manifest(spec={"tolerations": [{"operator": "Exists", "key": "k", "value": "v"}]}),
    pod_manifest(spec={"tolerations": [{}]}),
    pod_manifest(spec={"tolerations": [{"key": "k", "bogus": 1}]}),
    pod_manifest(spec={"tolerations": 1}),
    pod_manifest(spec={"priorityClassName": 3}),
    pod_manifest(spec={"priorityClassName": "gold"}),
    pod_manifest(spec={"priority": "high"}),
    pod_manifest(spec={"priority": 2**40}),
    pod_manifest(spec={"nodeSelector": []}),
    pod_manifest(spec={"nodeName": 5}),
    pod_manifest(spec={"nodeName": []}),
    pod_manifest(spec={"terminationGracePeriodSeconds": -1}),
    pod_manifest(spec={"terminationGracePeriodSeconds": "x"}),
    pod_manifest(spec={"hostNetwork": "yes"}),
]

MESSAGES = [
    "spec.objects[0].metadata: must be a mapping, got a list",
    "spec.objects[1].spec: must be a mapping, got 3",
    "spec.objects[2].metadata: keys must be strings, got 1",
    'spec.objects[3].metadata.name: must be a non-empty string, got ""',
    "spec.objects[4].metadata.name: must be a non-empty string, got 5",
    "spec.objects[5].metadata.name: \"Bad_Name\": a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    "spec.objects[6].metadata.namespace: \"Bad.NS\": a DNS-1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
    "spec.objects[7].metadata.namespace: must be a non-empty string, got nothing",
    'spec.objects[8].metadata.namespace: must be a non-empty string, got ""',
    "spec.objects[9].metadata.labels: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    "spec.objects[10].metadata.labels.a: label values must be strings (quote true/false)",
    "spec.objects[11].metadata.labels: must be a mapping, got a list",
    'spec.objects[12].metadata.annotations: must be a mapping, got "x"',
    "spec.objects[13].metadata.annotations.usage.playground/cpu: unknown usage annotation (known: usage.playground/memory, usage.playground/ephemeral-storage, usage.playground/pids)",
    'spec.objects[14].metadata.annotations.usage.playground/memory: "lots" is not a Kubernetes quantity',
    "spec.objects[15].metadata.ownerReferences: must be a list, got a mapping",
    "spec.objects[16].metadata.ownerReferences[0]: must be a mapping, got 3",
    'spec.objects[17].metadata.ownerReferences[0].controller: must be true or false, got "yes"',
    'spec.objects[18].metadata.ownerReferences[0].kind: must be a non-empty string, got ""',
    "spec.objects[19].metadata.ownerReferences[0].name: must be a non-empty string, got 1",
    "spec.objects[20].metadata.ownerReferences: only one reference can have controller set",
    "spec.objects[21].spec.containers: a pod needs at least one container",
    "spec.objects[22].spec.containers: must be a list, got a mapping",
    "spec.objects[23].spec.containers: a pod needs at least one container",
    'spec.objects[24].spec.containers[1].name: duplicate name "app"',
    'spec.objects[25].spec.containers[0]: must be a mapping, got "x"',
    'spec.objects[26].spec.containers[0].name: must be a non-empty string, got ""',
    "spec.objects[27].spec.containers[0].resources: must be a mapping, got a list",
    "spec.objects[28].spec.containers[0].resources.request: unknown field",
    'spec.objects[29].spec.containers[0].resources.requests.cpu: "1x" is not a Kubernetes quantity',
    'spec.objects[30].spec.containers[0].resources.requests.cpu: must not be negative, got "-1"',
    'spec.objects[31].spec.containers[0].resources.requests.memory: "99999999999999999999" is larger than a Kubernetes quantity holds (2^63-1)',
    'spec.objects[32].spec.containers[0].resources.requests.cpu: "99999999999999999" is larger than a Kubernetes quantity holds (2^63-1 milli-units)',
    "spec.objects[33].spec.containers[0].resources.requests.memory: True is not a Kubernetes quantity",
    "spec.objects[34].spec.containers[0].resources.requests.cpu: must be less than or equal to the limit",
    'spec.objects[35].spec.containers[0].resources.limits: must be a mapping, got "x"',
    "spec.objects[36].spec.initContainers[0].name: must be a non-empty string, got 3",
    'spec.objects[37].spec.initContainers: must be a list, got "x"',
    'spec.objects[38].spec.tolerations[0].operator: must be "Equal" or "Exists", got "Maybe"',
    'spec.objects[39].spec.tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, got "Boom"',
    "spec.objects[40].spec.tolerations[0].tolerationSeconds: only NoExecute tolerations may set it",
    'spec.objects[41].spec.tolerations[0].tolerationSeconds: must be an integer, got "x"',
    "spec.objects[42].spec.tolerations[0].key: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    "spec.objects[43].spec.tolerations[0].value: must be empty when operator is Exists",
    "spec.objects[44].spec.tolerations[0].operator: must be Exists when key is empty",
    "spec.objects[45].spec.tolerations[0].bogus: unknown field",
    "spec.objects[46].spec.tolerations: must be a list, got 1",
    "spec.objects[47].spec.priorityClassName: must be a non-empty string, got 3",
    'spec.objects[48].spec.priorityClassName: unknown priority class "gold" (built in: system-cluster-critical, system-node-critical; or set spec.priority)',
    'spec.objects[49].spec.priority: must be an integer, got "high"',
    "spec.objects[50].spec.priority: must be <= 2147483647, got 1099511627776",
    "spec.objects[51].spec.nodeSelector: must be a mapping, got a list",
    "spec.objects[52].spec.nodeName: must be a non-empty string, got 5",
    "spec.objects[53].spec.nodeName: must be a non-empty string, got a list",
    "spec.objects[54].spec.terminationGracePeriodSeconds: must be >= 0, got -1",
    'spec.objects[55].spec.terminationGracePeriodSeconds: must be an integer, got "x"',
    'spec.objects[56].spec.hostNetwork: must be true or false, got "yes"',
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_bad_pod_manifest_message(i: int) -> None:
    with pytest.raises(ScenarioError) as exc:
        pod_from_manifest(CASES[i], f"spec.objects[{i}]", 0, "u")
    assert str(exc.value) == MESSAGES[i]
    assert exc.value.path == MESSAGES[i].split(": ", 1)[0]


def test_cases_and_messages_pair_up() -> None:
    assert len(CASES) == len(MESSAGES)


def test_a_good_pod_passes() -> None:
    pod = pod_from_manifest(pod_manifest(), "spec.objects[0]", 0, "u")
    assert (pod.key, pod.containers[0].requests) == ("default/p", {"cpu": 100})
