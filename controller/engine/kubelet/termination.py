"""How a pod's containers answer SIGTERM (the playground's termination model), and the
terminal phase the kubelet derives from their exit codes.

Kubernetes has no field for what a container does on SIGTERM: it is the program's own
behaviour. The playground models it per pod with annotations (kept by the kubectl import
like any other annotation, and copied from a workload's template to its pods):

- ``sigterm.playground/action``: ``exit`` (the default) or ``ignore``.
- ``sigterm.playground/exit-code``: the code the containers exit with on SIGTERM, 0 to 255;
  default 143 (128 + SIGTERM): what a process without its own SIGTERM handler reports (Go,
  Python, Node.js), and what a JVM (Spring Boot and the like) exits with after its shutdown
  hooks. Well-behaved servers that catch SIGTERM and return normally (nginx, many Go
  services) exit 0: set it to 0 for them.
- ``sigterm.playground/exit-after-seconds``: how long after SIGTERM they exit (a drain); by
  default they take the whole grace period and exit as it ends (the engine's timing before
  this model existed, so a scenario that does not say keeps its instants).

A container still running when the grace period ends (``ignore``, or an exit after it) is
SIGKILLed: exit code 137. The kill's end (the containers stopped) is
``min(exit-after, grace)``; ``container_stop`` computes it.

From 1.27 (#115331) the kubelet turns the exit codes into the pod's terminal phase: getPhase
with podIsTerminal (pkg/kubelet/kubelet_pods.go) gives Succeeded when every container exited
0, else Failed; ``terminal_phase`` ports that case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SIGTERM_PREFIX = "sigterm.playground/"
ACTION, EXIT_CODE, EXIT_AFTER = (
    SIGTERM_PREFIX + "action",
    SIGTERM_PREFIX + "exit-code",
    SIGTERM_PREFIX + "exit-after-seconds",
)
KEYS = (ACTION, EXIT_CODE, EXIT_AFTER)
ACTIONS = ("exit", "ignore")
DEFAULT_EXIT_CODE = 143  # 128 + SIGTERM (15)
SIGKILL_EXIT_CODE = 137  # 128 + SIGKILL (9); also TerminatePod's code for a missing container
MAX_EXIT_AFTER_S = 10**9  # bounded like every number that enters (about 31 years)


@dataclass(frozen=True, slots=True)
class Termination:
    """One pod's answer to SIGTERM."""

    action: str = "exit"
    exit_code: int = DEFAULT_EXIT_CODE
    exit_after_s: int | None = None  # None: as the grace period ends


DEFAULT_TERMINATION = Termination()


class TerminationError(ValueError):
    """A bad ``sigterm.playground/*`` annotation: ``key`` and what is wrong."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _integer(key: str, text: str, maximum: int) -> int:
    s = text.strip()
    if not s.isdigit() or not s.isascii():
        raise TerminationError(key, f'must be a whole number from 0 to {maximum}, got "{text}"')
    value = int(s)
    if value > maximum:
        raise TerminationError(key, f"must be a whole number from 0 to {maximum}, got {value}")
    return value


def parse_termination(annotations: Mapping[str, str]) -> Termination:
    """The pod's termination model from its annotations; TerminationError naming the
    annotation for a bad one (an unknown ``sigterm.playground/`` key, an unknown action, an
    exit code outside 0-255, exit fields with ``ignore``)."""
    if not any(k.startswith(SIGTERM_PREFIX) for k in annotations):
        return DEFAULT_TERMINATION
    for key in annotations:
        if key.startswith(SIGTERM_PREFIX) and key not in KEYS:
            raise TerminationError(
                key, f"unknown termination annotation (known: {', '.join(KEYS)})"
            )
    action = annotations.get(ACTION, "exit")
    if action not in ACTIONS:
        raise TerminationError(ACTION, f'must be "exit" or "ignore", got "{action}"')
    if action == "ignore":
        for key in (EXIT_CODE, EXIT_AFTER):
            if key in annotations:
                raise TerminationError(
                    key,
                    "only with action exit (a container that ignores SIGTERM is SIGKILLed: 137)",
                )
        return Termination("ignore", SIGKILL_EXIT_CODE, None)
    code = DEFAULT_EXIT_CODE
    if EXIT_CODE in annotations:
        code = _integer(EXIT_CODE, annotations[EXIT_CODE], 255)
    after = None
    if EXIT_AFTER in annotations:
        after = _integer(EXIT_AFTER, annotations[EXIT_AFTER], MAX_EXIT_AFTER_S)
    return Termination("exit", code, after)


def termination_of(annotations: Mapping[str, str]) -> Termination:
    """The model of a pod already admitted (its annotations were checked when it entered)."""
    try:
        return parse_termination(annotations)
    except TerminationError:  # (cannot happen: checked at load and on every update)
        return DEFAULT_TERMINATION


def container_stop(annotations: Mapping[str, str], grace_ms: int) -> tuple[int, int]:
    """How long a kill with ``grace_ms`` takes, and the containers' exit code: the runtime's
    StopContainer sends SIGTERM, waits up to the grace period, then SIGKILLs (137). A kill
    of 0 ms is a SIGKILL at once."""
    model = termination_of(annotations)
    if grace_ms <= 0:
        return 0, SIGKILL_EXIT_CODE
    if model.action == "ignore":
        return grace_ms, SIGKILL_EXIT_CODE
    if model.exit_after_s is None:
        return grace_ms, model.exit_code
    after_ms = model.exit_after_s * 1000
    if after_ms >= grace_ms:
        return grace_ms, SIGKILL_EXIT_CODE
    return after_ms, model.exit_code


def terminal_phase(exit_codes: list[int]) -> str:
    """Port of getPhase's ``podIsTerminal`` case (pkg/kubelet/kubelet_pods.go, #115331, 1.27;
    the same in 1.31 and 1.36, where restartable init containers are left out of the count):
    every regular container stopped, so Succeeded when all exited 0, else Failed, whatever the
    restart policy."""
    return "Succeeded" if all(code == 0 for code in exit_codes) else "Failed"
