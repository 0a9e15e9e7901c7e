"""Kubernetes in and out (issue #15), pure Python, no Django: a real cluster's kubectl output
and component configuration read into a scenario, and a room's timeline and cluster written
out as Kubernetes objects.

- ``importer``: ``import_cluster``, the whole import (kubectl output + configuration ->
  scenario, report);
- ``documents``: reading the YAML/JSON documents and a List's items, and their shapes;
- ``nodes``: Nodes -> the scenario's nodes, and the release from the kubelets' versions;
- ``workloads``: Deployments, ReplicaSets, StatefulSets, DaemonSets and Pods -> manifests;
- ``components``: KubeletConfiguration, KubeControllerManagerConfiguration, flags;
- ``report``: the import report (merged, written as the scenario's leading comment);
- ``cli``: ``manage.py import_cluster``;
- ``exports``: a room's timeline (CSV, an EventList) and its cluster as manifests.
"""
