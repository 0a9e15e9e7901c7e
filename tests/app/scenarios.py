"""The scenario texts of the app tests: a few nodes ``n-1``... in one zone ``z`` and the objects
a test needs, as YAML (each test file names the texts it uses; they are what the tests wrote
out by hand before, byte for byte)."""

from __future__ import annotations


def pod(name: str = "web", node: str = "n-1", labels: str = "") -> str:
    """A bare pod bound to ``node`` (``labels``: a YAML flow mapping, e.g. ``{app: web}``)."""
    meta = f"{{name: {name}, namespace: default{f', labels: {labels}' if labels else ''}}}"
    return (
        "    - apiVersion: v1\n"
        "      kind: Pod\n"
        f"      metadata: {meta}\n"
        f"      spec: {{nodeName: {node}, containers: [{{name: {name}}}]}}\n"
    )


def workload(
    kind: str,
    name: str,
    replicas: int | None = None,
    container: str | None = None,
    namespace: str | None = "default",
) -> str:
    """A Deployment (or DaemonSet, no ``replicas``) whose pods are labelled ``app: <name>``."""
    meta = f"{{name: {name}, namespace: {namespace}}}" if namespace else f"{{name: {name}}}"
    out = f"    - apiVersion: apps/v1\n      kind: {kind}\n      metadata: {meta}\n      spec:\n"
    if replicas is not None:
        out += f"        replicas: {replicas}\n"
    return out + (
        f"        selector: {{matchLabels: {{app: {name}}}}}\n"
        "        template:\n"
        f"          metadata: {{labels: {{app: {name}}}}}\n"
        f"          spec: {{containers: [{{name: {container or name}}}]}}\n"
    )


def scenario(
    name: str,
    nodes: int = 2,
    objects: tuple[str, ...] = (),
    faults: tuple[str, ...] = (),
    comment: str = "",
    spec: str = "",
) -> str:
    """A scenario of ``nodes`` nodes in zone ``z``; ``faults`` are flow mappings
    (``{at: 62s, type: StopKubelet, node: n-1}``); ``comment`` the first line's
    ("What to watch for: ..."); ``spec``: more of spec, YAML indented by two, before the
    nodes."""
    text = f"# {comment}\n" if comment else "\n"
    text += f"apiVersion: playground/v1alpha1\nkind: Scenario\nmetadata: {{name: {name}}}\nspec:\n"
    text += spec + "  nodes:\n"
    text += "".join(f"    - {{name: n-{i}, zone: z}}\n" for i in range(1, nodes + 1))
    if objects:
        text += "  objects:\n" + "".join(objects)
    if faults:
        text += "  faults:\n" + "".join(f"    - {f}\n" for f in faults)
    return text
