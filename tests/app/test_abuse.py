"""Issue #35's acceptance: the abuse suite (controller/bench/abuse.py, attacks.py) against the
real stack (Daphne, two Celery workers, beat, the test Redis and database: SQLite, and
PostgreSQL in make test's second pass), each attack of the issue from one address while 20
rooms of 100 nodes run at 10x. The suite runs once (the first test of this module that needs
it) and prints its table; then each attack is judged on its own window: the rooms keep >= 99 %
of their ticks on time, another room's snapshot.json answers in under 1 s at p95 and never
5xx, Daphne grows less than 100 MiB, and the attack is refused or contained with a clear
message (abuse.py's docstring). These are the issue's acceptance criteria, not the product's
speed; they are not loosened. An attack that is not contained on main yet is marked xfail
(strict: the mark must go when its fix lands)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from controller import affinity
from controller.bench import abuse
from controller.locks import redis_client

# Opt-in (`make abuse`, PLAYGROUND_ABUSE=1), not part of `make test`: its verdicts are the
# issue's wall-clock thresholds (ticks on time, snapshot p95, Daphne's memory), and timing
# assertions stay out of the test suite (house rules); like a bench row it is judged on a quiet
# machine: under a load of 10-24 even the attack-free window misses them ("BASELINE BAD"). Its
# thresholds are the issue's, not loosened.
pytestmark = [
    pytest.mark.abuse,
    pytest.mark.skipif(
        os.environ.get("PLAYGROUND_ABUSE") != "1",
        reason="the abuse suite is opt-in: make abuse (PLAYGROUND_ABUSE=1, ~25 min per database)",
    ),
]

_RUN: dict[str, Any] = {}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"  # the table, per database

# Not contained on main yet (the fix is on its way on another branch): strict xfail.
NOT_YET: dict[str, str] = {}


# ABUSE_ONLY=1,5 runs those attacks alone (the others' tests are skipped); ABUSE_SCALE=0.5
# halves every window (for trying the harness, not for judging).
ONLY = [n for n in os.environ.get("ABUSE_ONLY", "").split(",") if n]
SCALE = float(os.environ.get("ABUSE_SCALE", "1"))


def _suite(env: dict[str, str], tmp_path, capsys) -> dict[str, Any]:
    """The suite's run, once for the module (a harness error is kept and raised again)."""
    if not _RUN:
        redis_client().delete(affinity.WORKERS_KEY)  # workers killed by earlier tests
        try:
            _RUN.update(abuse.abuse_run(env=env, log_dir=tmp_path, only=ONLY, scale=SCALE))
        except Exception as exc:
            _RUN["error"] = exc
            raise
        table = abuse.format_abuse(_RUN)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"abuse-{_RUN['database']}.txt").write_text(table + "\n")
        with capsys.disabled():
            print("\n" + table)
    if "error" in _RUN:
        raise _RUN["error"]
    return _RUN


def _marked(number: str) -> Any:
    if number in NOT_YET:
        return pytest.param(number, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[number]))
    return number


@pytest.mark.parametrize("number", [_marked(a.number) for a in abuse.ATTACKS])
def test_attack_is_refused_or_contained(number, stack_env, tmp_path, capsys) -> None:
    if ONLY and number not in ONLY:
        pytest.skip(f"ABUSE_ONLY={','.join(ONLY)}")
    run = _suite(stack_env, tmp_path, capsys)
    found = next(a for a in run["attacks"] if a["number"] == number)
    assert found["contained"], (
        f"attack {number} ({found['title']}): {'; '.join(found['broke'] + found['check'])}; "
        f"outcome {found['outcome']}, said {found['said']!r}"
    )


@pytest.mark.xfail(
    "whole" in NOT_YET, strict=True, reason=NOT_YET.get("whole", "contained on main")
)
def test_the_rooms_keep_their_ticks_through_the_whole_run(stack_env, tmp_path, capsys) -> None:
    run = _suite(stack_env, tmp_path, capsys)
    quiet = run["attacks"][0]
    assert not quiet["broke"], f"before any attack: {quiet['broke']}"
    assert not run["whole_broke"], run["whole_broke"]
