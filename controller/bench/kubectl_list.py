"""A big cluster's ``kubectl get nodes,pods,deployments,replicasets,... -A -o yaml`` (or
``-o json``) output, item for item as kubectl writes it (managedFields, status, probes: about
2.4 KB an item), for the import's measurements and tests (issue #14, "Fast big rooms")."""

from __future__ import annotations

import json
from typing import Any

import yaml

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
_MANAGED = [
    {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
        "manager": "kube-controller-manager",
        "operation": "Update",
        "time": "2025-09-14T08:12:31Z",
    }
]


def _node(i: int) -> dict[str, Any]:
    zone = ZONES[i % len(ZONES)]
    name = f"ip-10-0-{i // 250}-{i % 250}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": "2025-09-14T08:12:31Z",
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": "m6i.xlarge",
                "beta.kubernetes.io/os": "linux",
                "failure-domain.beta.kubernetes.io/region": "eu-west-1",
                "failure-domain.beta.kubernetes.io/zone": zone,
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.xlarge",
                "topology.kubernetes.io/region": "eu-west-1",
                "topology.kubernetes.io/zone": zone,
            },
            "managedFields": _MANAGED,
            "name": name,
            "resourceVersion": str(48000 + i),
            "uid": f"6f1c3224-{i:04x}-4c3d-9e8f-151280831879",
        },
        "spec": {
            "podCIDR": f"10.244.{i % 250}.0/24",
            "podCIDRs": [f"10.244.{i % 250}.0/24"],
            "providerID": f"aws:///{zone}/i-{i:017x}",
        },
        "status": {
            "addresses": [
                {"address": f"10.0.{i // 250}.{i % 250}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {
                "cpu": "3920m",
                "ephemeral-storage": "76224326324",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": "15219948Ki",
                "pods": "58",
            },
            "capacity": {
                "cpu": "4",
                "ephemeral-storage": "83873772Ki",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": "16086764Ki",
                "pods": "58",
            },
            "conditions": [
                {
                    "lastHeartbeatTime": "2025-10-02T11:41:07Z",
                    "lastTransitionTime": "2025-09-14T08:13:02Z",
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                }
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.141-155.222.amzn2023.x86_64",
                "kubeProxyVersion": "v1.33.4-eks-1d4e8f0",
                "kubeletVersion": "v1.33.4-eks-1d4e8f0",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.8.20250818",
            },
        },
    }


def _pod_spec(app: str) -> dict[str, Any]:
    return {
        "containers": [
            {
                "image": f"ghcr.io/acme/{app}:2.14.1",
                "imagePullPolicy": "IfNotPresent",
                "name": "app",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "readinessProbe": {
                    "failureThreshold": 3,
                    "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "timeoutSeconds": 1,
                },
                "resources": {
                    "limits": {"memory": "128Mi"},
                    "requests": {"cpu": "50m", "memory": "64Mi"},
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }


def _owner(kind: str, name: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "apps/v1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": kind,
            "name": name,
            "uid": f"0a300726-{abs(hash(name)) % 65536:04x}-4bb1-8c2d-3e4f5a6b7c8d",
        }
    ]


def big_kubectl_items(nodes: int, pods_per_node: int) -> list[dict[str, Any]]:
    """``nodes`` Nodes over three zones, and ``pods_per_node`` pods on each, from Deployments
    of 100 replicas (each with its ReplicaSet; the pods bound, spread over the nodes)."""
    node_items = [_node(i) for i in range(nodes)]
    names = [n["metadata"]["name"] for n in node_items]
    items: list[dict[str, Any]] = list(node_items)
    total = nodes * pods_per_node
    d = 0
    made = 0
    while made < total:
        d += 1
        n = min(100, total - made)
        app, rs = f"app-{d}", f"app-{d}-7c5ddbdf54"
        labels = {"app": app}
        meta = {"creationTimestamp": "2025-09-14T08:12:31Z", "managedFields": _MANAGED}
        items.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {**meta, "labels": labels, "name": app, "namespace": "shop"},
                "spec": {
                    "replicas": n,
                    "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels}, "spec": _pod_spec(app)},
                },
                "status": {"availableReplicas": n, "readyReplicas": n, "replicas": n},
            }
        )
        rs_labels = {**labels, "pod-template-hash": "7c5ddbdf54"}
        items.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    **meta,
                    "labels": rs_labels,
                    "name": rs,
                    "namespace": "shop",
                    "ownerReferences": _owner("Deployment", app),
                },
                "spec": {
                    "replicas": n,
                    "selector": {"matchLabels": rs_labels},
                    "template": {"metadata": {"labels": rs_labels}, "spec": _pod_spec(app)},
                },
                "status": {"replicas": n},
            }
        )
        for k in range(n):
            node = names[(made + k) % nodes]
            items.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        **meta,
                        "labels": rs_labels,
                        "name": f"{rs}-{k:05d}",
                        "namespace": "shop",
                        "ownerReferences": _owner("ReplicaSet", rs),
                    },
                    "spec": {**_pod_spec(app), "nodeName": node},
                    "status": {
                        "conditions": [{"status": "True", "type": "Ready"}],
                        "hostIP": "10.0.1.11",
                        "phase": "Running",
                        "qosClass": "Burstable",
                        "startTime": "2025-09-14T08:14:02Z",
                    },
                }
            )
        made += n
    return items


def big_kubectl_list(nodes: int, pods_per_node: int, fmt: str = "yaml") -> str:
    """The List as ``kubectl ... -o yaml`` (or ``-o json``) prints it."""
    doc = {
        "apiVersion": "v1",
        "items": big_kubectl_items(nodes, pods_per_node),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    if fmt == "json":
        return json.dumps(doc, indent=4)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(doc, Dumper=dumper, sort_keys=False)
