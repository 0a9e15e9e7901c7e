"""Import a real cluster: ``kubectl get nodes,pods,... -A -o yaml`` -> a scenario (WIP)."""

from __future__ import annotations

from typing import Any


def import_cluster(text: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
    raise NotImplementedError
