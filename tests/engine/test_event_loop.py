"""The engine's event loop (core.Scheduler): every way of running it tells a handler the phase
it runs in, as handlers judge "still to come at this instant" by it (StatusManager's
syncBatch). A stale phase in ``run_until`` (a lesson's run) made a live lesson room's timeline
differ from simulate's: a healed kubelet's pods turned Ready 10 s late."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from controller.engine.core import Phase, Scheduler


def _run(sched: Scheduler, until: int) -> None:
    sched.run(until)


def _run_until(sched: Scheduler, until: int) -> None:
    sched.run_until(until, lambda: None)


@pytest.mark.parametrize("runner", [_run, _run_until], ids=["run", "run_until"])
@pytest.mark.parametrize(
    "first, second",
    [
        (Phase.KUBELET_POD_STATUS, Phase.FAULT),
        (Phase.FAULT, Phase.KUBELET_POD_STATUS),
        (Phase.EVENT_SINK, Phase.CONTROLLER_MONITOR),
    ],
)
def test_each_handler_sees_its_own_phase(
    runner: Callable[[Scheduler, int], None], first: int, second: int
) -> None:
    sched = Scheduler()
    seen: list[tuple[int, int]] = []
    sched.schedule(1_000, first, lambda: seen.append((sched.now_ms, sched.phase)))
    runner(sched, 1_000)  # a run ends here, its last phase ``first``
    sched.schedule(2_000, second, lambda: seen.append((sched.now_ms, sched.phase)))
    runner(sched, 3_000)
    assert seen == [(1_000, first), (2_000, second)]
