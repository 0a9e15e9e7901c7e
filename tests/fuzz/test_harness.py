"""The harness saves an unhandled or slow input whole and gives it back as it was, so anyone
can replay it (FUZZ_REPLAY); the report names the file."""

from __future__ import annotations

import gc
import math
import time
from pathlib import Path

import pytest

from tests.fuzz import harness

AWKWARD = (
    "a\ud800b\x00\n" + "x" * 5000,
    {"k": [10**400, -(2**63) - 1, 1e308, -1e308, 1e-320, math.inf, -math.inf, None, True]},
    {"\udfff": {"": []}},
)


def test_a_saved_input_loads_back_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FUZZ_INPUTS", str(tmp_path))
    path = harness.save_input("scenario: x", "over 1 s: 1.20 s CPU\nsecond line", AWKWARD)
    assert path.parent == tmp_path
    assert path.read_text(errors="surrogatepass").startswith(
        "# fuzz target: scenario: x\n# over 1 s: 1.20 s CPU\n# second line\n"
    )
    assert harness.load_input(path) == AWKWARD
    nan = harness.load_input(harness.save_input("scenario: x", "v", [math.nan]))
    assert math.isnan(nan[0])


def test_replay_gives_each_target_its_own_saved_inputs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FUZZ_INPUTS", str(tmp_path))
    harness.save_input("import: kubectl output", "v", ("text", None))
    harness.save_input("scenario: x", "v", "one")
    harness.save_input("scenario: x", "v", "two")
    monkeypatch.delenv("FUZZ_REPLAY", raising=False)
    assert harness.replayed("scenario: x") is None  # not replaying: Hypothesis runs
    monkeypatch.setenv("FUZZ_REPLAY", str(tmp_path))
    assert sorted(harness.replayed("scenario: x")) == ["one", "two"]
    assert harness.replayed("import: kubectl output") == [("text", None)]
    assert harness.replayed("lesson answers") == []


def test_a_slow_or_unhandled_input_is_saved_and_named_in_the_report(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FUZZ_INPUTS", str(tmp_path / "inputs"))
    monkeypatch.setenv("FUZZ_REPORT", str(tmp_path / "report"))
    monkeypatch.delenv("FUZZ_REPLAY", raising=False)
    monkeypatch.setattr(harness, "SLOW_S", 0.02)

    def run(what: int) -> None:
        if what == 1:
            raise ValueError("boom")
        if what == 2:  # 0.03 s of CPU
            end = time.process_time() + 0.03
            while time.process_time() < end:
                pass
        if what == 3:
            raise KeyError("refused")

    tally = harness.Tally("t: x", run, KeyError)
    with pytest.raises(AssertionError, match="boom"):
        tally.fuzz(lambda: [tally.judge(w) for w in (0, 1, 2, 3)])
    report = (tmp_path / "report").read_text().splitlines()
    assert report[0].startswith("fuzz t: x: 4 examples, 2 accepted, 1 refused, 1 unhandled, 1 over")
    assert report[1].startswith("  unhandled: ValueError: boom: ")
    assert report[2].startswith("  over 0.02 s: ")
    saved = [Path(line.rsplit(": ", 1)[1]) for line in report[1:]]
    assert [harness.load_input(p) for p in saved] == [1, 2]
    monkeypatch.setenv("FUZZ_REPLAY", str(tmp_path / "inputs"))
    assert sorted(harness.replayed("t: x")) == [1, 2]


def test_a_full_garbage_collection_is_not_charged_to_the_input(tmp_path: Path, monkeypatch) -> None:
    """A full collection walks the whole process (Hypothesis's record of every example): its
    CPU is reported apart; the input's own work is still counted."""
    monkeypatch.setenv("FUZZ_INPUTS", str(tmp_path))
    monkeypatch.delenv("FUZZ_REPLAY", raising=False)
    monkeypatch.setattr(harness, "SLOW_S", 0.01)
    heap = [(i,) for i in range(2_000_000)]  # what a long run holds: a collection walks it
    gc.collect()  # the garbage of whatever ran before, so that the one below only walks

    def run(what: str) -> None:
        if what == "collects":
            gc.collect()
        else:  # twice the threshold of CPU, spent by the input itself
            end = time.process_time() + 0.02
            while time.process_time() < end:
                pass

    tally = harness.Tally("t: gc", run, KeyError)
    tally.judge("collects")
    assert tally.full_gc > 0.02  # the collection cost more than the threshold...
    assert tally.slow == []  # ...and was not charged
    tally.judge("works")
    assert len(tally.slow) == 1 and "'works'" in tally.slow[0]
    del heap
