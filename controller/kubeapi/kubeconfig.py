"""A room's kubeconfig: the https server of its API (its path prefix included, so every
request kubectl makes, discovery too, goes to the room), the CA of ``tls``, and the viewer's
or the operator's bearer token."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml


def kubeconfig(server: str, slug: str, role: str, token: str, ca_pem: bytes) -> str:
    name = f"playground-{slug}"
    user = f"{name}-{role}"
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {
                    "server": f"{server.rstrip('/')}/k8s/rooms/{slug}",
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": name, "user": user}}],
        "current-context": user,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def ca_of(directory: Path) -> bytes:
    return (directory / "ca.pem").read_bytes()
