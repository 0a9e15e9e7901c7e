"""The kubectl lesson (27-lesson-kubectl-node-failure, issue #36) with real kubectl binaries
(every version found, tests/app/kubectl_clients.py) against a lesson room served by the real
stack (Daphne with the API's https port, a Celery worker and beat, Redis), as a class would
run it with the viewer's kubeconfig of the room page.

At each question the commands its step lists are run as written (a ``-w`` one is a watch
started when the step is shown and read on): while the question is open they print only the
present (nothing the reveal says kubectl will print), and once the room has run past what the
question asks they print what the reveal says. Content, never timing."""

from __future__ import annotations

import re
import shlex
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.bench.procs import Daphne
from controller.engine.lesson import Checkpoint, Step
from controller.engine.scenario import load_scenario
from controller.lessons import classroom
from controller.models import LessonState, Room
from controller.rooms import catalog, create
from tests.app.kubectl_clients import kubectls, run
from tests.app.test_kubeapi_kubectl import _kubeconfig, _wait

LESSON = "27-lesson-kubectl-node-failure"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
KUBECTLS, MISSING = kubectls()
# What the reveal of each question says kubectl prints (each is in its right choice or its
# why: checked below), as patterns on the output of the step's own commands; and the instant
# (simulated seconds) from which it is printed.
PRINTS: dict[str, tuple[list[str], float]] = {
    "connect": ([r"^a-2\s+NotReady\s"], 115),
    "silence": ([r"^a-2\s+NotReady\s"], 115),
    "describe": (
        [
            r"node\.kubernetes\.io/unreachable:NoExecute",
            r"node\.kubernetes\.io/unreachable:NoSchedule",
        ],
        120,
    ),
    "events": ([r"TaintManagerEviction\s+pod/web-1\s+Marking for deletion Pod default/web-1"], 420),
}
# What the reveal names that kubectl prints (the text the patterns above stand for).
SAID = {
    "connect": ["NotReady"],
    "silence": ["a-2 NotReady"],
    "describe": [
        "node.kubernetes.io/unreachable:NoExecute",
        "node.kubernetes.io/unreachable:NoSchedule",
    ],
    "events": ["TaintManagerEviction", "Marking for deletion Pod default/web-1"],
}


@pytest.fixture
def web(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Daphne]:
    tls_dir = tmp_path / "tls"
    proc = Daphne(stack_env, tmp_path / "daphne.log", tls_dir=tls_dir)
    proc.env = {**stack_env, "KUBEAPI_PORT": str(proc.tls_port), "KUBEAPI_TLS_DIR": str(tls_dir)}
    proc.start()
    yield proc
    proc.kill()


class Watch:
    """``kubectl get ... -w`` running in the background; its lines collected as they come."""

    def __init__(self, binary: str, cfg: Path, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [binary, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={"KUBECONFIG": str(cfg), "HOME": str(cfg.parent)},
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def text(self) -> str:
        return "".join(self.lines)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def _paused_at(room: Room, cp_id: str) -> Room:
    _wait(
        f"the pause at {cp_id}",
        lambda: LessonState.objects.get(room=room).checkpoint == cp_id,
        timeout=120,
    )
    return Room.objects.get(pk=room.pk)


def _outputs(
    step: Step, cfg: Path, watches: dict[tuple[str, str], Watch]
) -> dict[tuple[str, str], str]:
    """(kubectl version, command) -> what it printed: each command of the step with every
    kubectl; a watch (``-w``) started the first time a step lists it, read so far."""
    out: dict[tuple[str, str], str] = {}
    for cmd in step.kubectl:
        args = shlex.split(cmd)[1:]
        for name, binary in KUBECTLS:
            if "-w" in args or "--watch" in args:
                key = (name, cmd)
                if key not in watches:
                    watches[key] = Watch(binary, cfg, args)
                    _wait(f"{name} {cmd}: its list", lambda w=watches[key]: "NAME" in w.text())
                out[key] = watches[key].text()
            else:
                code, text = run(binary, cfg, *args)
                assert code == 0, (name, cmd, text)
                out[(name, cmd)] = text
    return out


def _printed(outputs: dict[tuple[str, str], str], pattern: str) -> set[str]:
    """The kubectl versions whose output of some command of the step has ``pattern``."""
    return {name for (name, _cmd), text in outputs.items() if re.search(pattern, text, re.M)}


def _keep(name: str, outputs: dict[tuple[str, str], str]) -> None:
    """What the newest kubectl printed, for a look: test-artifacts/kubectl-lesson-<name>.txt."""
    newest = KUBECTLS[-1][0]
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"kubectl-lesson-{name}.txt").write_text(
        "".join(f"$ {cmd}\n{text}\n" for (v, cmd), text in outputs.items() if v == newest)
    )


def _prints(
    step: Step,
    cfg: Path,
    watches: dict[tuple[str, str], Watch],
    patterns: list[str],
    names: set[str],
) -> None:
    """Every kubectl prints each pattern in the output of some command of the step (a watch
    prints a change a moment after the room stored it)."""
    for pattern in patterns:
        _wait(
            f"{step.id}: {pattern!r} from every kubectl",
            lambda p=pattern: _printed(_outputs(step, cfg, watches), p) == names,
            timeout=30,
        )


def test_the_kubectl_lessons_commands_print_what_its_reveals_say(
    web: Daphne, celery_worker_proc, celery_beat_proc, tmp_path: Path
) -> None:
    assert KUBECTLS, f"no kubectl found (missing: {', '.join(MISSING)})"
    text = next(s["yaml"] for s in catalog.builtin_lessons() if s["id"] == LESSON)
    lesson = load_scenario(text).lesson
    steps = {s.id: s for s in lesson.steps}
    checkpoints: dict[str, Checkpoint] = {cp.id: cp for cp in lesson.checkpoints}
    assert sorted(checkpoints) == sorted(PRINTS)
    for cp_id, said in SAID.items():  # the patterns stand for what the reveal says
        cp = checkpoints[cp_id]
        revealed = cp.why + (cp.choices[int(cp.answer)] if cp.kind == "choice" else "")
        for words in said:
            assert words in revealed, (cp_id, words)
    room = create.room_create("kubectl-lesson", text, None, 20.0)
    cfg = _kubeconfig(web, room, tmp_path / "viewer.kubeconfig", False)
    watches: dict[tuple[str, str], Watch] = {}
    # The commands of each question's step, checked once the room has run past its answer.
    due: list[str] = []
    names = {name for name, _ in KUBECTLS}
    try:
        for cp in lesson.checkpoints:
            room = _paused_at(room, cp.id)
            now = room.sim_ms / 1000
            for done in [d for d in due if PRINTS[d][1] <= now]:
                _prints(steps[done], cfg, watches, PRINTS[done][0], names)
                due.remove(done)
            # While it is open: the present only, nothing the reveal will say.
            outputs = _outputs(steps[cp.id], cfg, watches)
            assert len(outputs) == len(steps[cp.id].kubectl) * len(KUBECTLS)
            for pattern in PRINTS[cp.id][0]:
                if cp.id == "describe" and "NoSchedule" in pattern:
                    # Ready=Unknown is the question's premise; its NoSchedule taint comes with it.
                    assert _printed(outputs, pattern) == names, (cp.id, outputs)
                    continue
                assert not _printed(outputs, pattern), (cp.id, pattern, outputs)
            _keep(f"{cp.id}-asked", outputs)
            due.append(cp.id)
            classroom.reveal(room.pk)
            classroom.next_step(room.pk, "test")
        _wait(
            "the last step",
            lambda: Room.objects.get(pk=room.pk).sim_ms >= 425_000,
            timeout=120,
        )
        for done in due:
            _prints(steps[done], cfg, watches, PRINTS[done][0], names)
        # The last step's commands: the whole story, in order.
        outputs = _outputs(steps["compare"], cfg, watches)
        _keep("compare", outputs)
        for name, _binary in KUBECTLS:
            events = outputs[(name, "kubectl get events --sort-by=.lastTimestamp")]
            order = [
                m.group(1)
                for m in re.finditer(
                    r"(NodeNotReady|TaintManagerEviction)\s+(?:node/a-2|pod/web-1)", events
                )
            ]
            assert order and order[-1] == "TaintManagerEviction", (name, events)
            assert "NodeNotReady" in order, (name, events)
            described = outputs[(name, "kubectl describe node a-2")]
            assert re.search(r"Ready\s+Unknown\s.*NodeStatusUnknown", described), (name, described)
    finally:
        for w in watches.values():
            w.stop()
    assert (
        not MISSING or print(f"kubectl versions not found (skipped): {', '.join(MISSING)}") is None
    )
