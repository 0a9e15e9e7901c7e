"""Name and label checks the API server makes, ported from
k8s.io/apimachinery/pkg/util/validation (IsDNS1123Subdomain, IsDNS1123Label,
IsQualifiedName, IsValidLabelValue). Each returns the Kubernetes error text, or "" when valid."""

from __future__ import annotations

import re

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL}$")
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_LABEL}(\\.{_DNS1123_LABEL})*$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def dns1123_subdomain(value: str) -> str:
    """IsDNS1123Subdomain: node, pod and workload names."""
    if len(value) > 253:
        return "must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        return (
            "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return ""


def dns1123_label(value: str) -> str:
    """IsDNS1123Label: namespaces."""
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _DNS1123_LABEL_RE.match(value):
        return (
            "a DNS-1123 label must consist of lower case alphanumeric characters or '-', and "
            "must start and end with an alphanumeric character"
        )
    return ""


def qualified_name(value: str) -> str:
    """IsQualifiedName: label keys and taint keys (``[prefix/]name``)."""
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return "prefix part must be non-empty"
    if prefix and dns1123_subdomain(prefix):
        return "prefix part " + dns1123_subdomain(prefix)
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME_RE.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return ""


def label_value(value: str) -> str:
    """IsValidLabelValue: label values and taint values."""
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE_RE.match(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return ""
