"""What a scenario file becomes: Scenario, NodeSpec, Fault, ScenarioError (the path-precise
refusal) and the limits on a scenario's size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config import (
    ClusterConfig,
    KubeletConfig,
)
from ..versions import (
    Profile,
)

MAX_SCENARIO_BYTES = (
    32 * 1024 * 1024
)  # the parser's hard cap; servers set PLAYGROUND_MAX_SCENARIO_BYTES
DEFAULT_CAPACITY = {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi", "pods": "110"}
RESOURCE_NAMES = ("cpu", "memory", "ephemeral-storage", "pods")
USAGE_NAMES = ("memory", "ephemeral-storage", "pids")


class ScenarioError(ValueError):
    """A scenario refused: ``path`` names the first wrong field."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}" if path else why)
        self.path = path
        self.why = why


@dataclass(slots=True)
class NodeSpec:
    name: str
    labels: dict[str, str]
    capacity: dict[str, int]  # cpu milli, bytes, pods count
    usage: dict[str, int] = field(default_factory=dict)
    pid_max: int = 4_194_304
    inodes: int = 0
    imagefs: int | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    dead_containers: int = 0
    kubelet_offset_ms: int = 0
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    kubelet_mode: str = "Running"
    unschedulable: bool = False
    # spec.nodes[].kubeletVersion: this node's kubelet release (version skew), None = the
    # control plane's (spec.kubernetesVersion).
    kubelet_profile: Profile | None = None


@dataclass(slots=True)
class Fault:
    at_ms: int
    type: str
    args: dict[str, Any]  # the fault as written, without at/type
    path: str = ""  # where it was written ("spec.faults[3]", "action"), for errors at its time


@dataclass(slots=True)
class Scenario:
    name: str
    duration_ms: int
    config: ClusterConfig
    nodes: list[NodeSpec]
    objects: list[dict[str, Any]]
    faults: list[Fault]
    expect: list[dict[str, Any]]
    description: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    lesson: Any = None  # lesson.Lesson (spec.lesson), or None
    # Where each ``expect`` item was written: "spec.expect[3]", or a lesson checkpoint's
    # "spec.lesson.steps[1].checkpoint.expect[0]" (compiled after spec.expect's own).
    expect_paths: list[str] = field(default_factory=list)

    @property
    def profile(self) -> Profile:
        return self.config.profile

    @property
    def kubelet_raw(self) -> dict[str, Any]:
        """The scenario's kubelet section as written: a node's or an AddNode's own
        ``kubelet:`` settings merge over it."""
        return (self.raw.get("spec") or {}).get("kubelet") or {}
