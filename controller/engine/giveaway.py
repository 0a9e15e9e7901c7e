"""A lesson text that gives its own question's answer away (``simulate --check``, issue #38).

While a question is open the class reads its step (title, text, kubectl commands) and the
question itself; none of them may answer it. Three rules, each a plain reading of the text:

- a phrase from :data:`PHRASES`: wording that tells what the answer is or which way it goes
  ("the answer is", "evicting everything would then do harm" before "what happens to the
  zone's nodes?");
- a time question whose answer (within its tolerance) the text names as a time: "115 s",
  "115s", "1m55s", "01:55", "= 115" (not its pause instant: the page's clock shows it);
- a choice question whose right choice the text says in its own words: four words in a row
  of the right choice (ignoring case and punctuation) that no wrong choice also has.

And a time question's answer named in a later step (its title, text, kubectl commands,
question or choices): every page gets the whole lesson's text when it connects, so that text is on the page while
the earlier question is open (:func:`answered_ahead`).

Pure: text in, (key, why) out; no Django, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lesson import Checkpoint, Step

# (pattern, what it gives away). Each is wording that came up (the first) or that says the
# answer outright; a lesson states facts and leaves the conclusion to the class.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), why)
    for p, why in (
        (r"\bwould (?:then )?do (?:more )?harm\b", "says the controller holds back"),
        (r"\b(?:the|your) (?:right |correct )?answer (?:is|will be)\b", "states the answer"),
        (r"\bspoiler\b", "states the answer"),
        (r"\b(?:so|therefore|hence),? nothing happens\b", "says nothing happens"),
        (r"\bas you (?:will|'ll) see\b", "tells what the run will show"),
        (r"\bturns out\b", "tells what the run will show"),
    )
)

_WORD = re.compile(r"[a-z0-9][a-z0-9.:/_-]*")
_NUM = r"\d+(?:\.\d+)?"
_SECONDS = re.compile(rf"(?<![\w.:])({_NUM})\s*(?:s\b|sec\b|secs\b|seconds?\b)", re.IGNORECASE)
_MIN_SEC = re.compile(rf"(?<![\w.:])(\d+)\s*m\s*({_NUM})\s*s\b", re.IGNORECASE)
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,3}):([0-5]\d)(?![\d:])")
_SUM = re.compile(rf"=\s*({_NUM})(?![\d.])")


def _words(text: str) -> list[str]:
    return [w.strip(".:") for w in _WORD.findall(text.lower()) if w.strip(".:")]


def _grams(words: list[str], n: int = 4) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def times_written(text: str) -> list[float]:
    """Every time or duration a text writes with a unit or as a sum's result (seconds)."""
    out = [float(m.group(1)) for m in _SECONDS.finditer(text)]
    out += [int(m.group(1)) * 60 + float(m.group(2)) for m in _MIN_SEC.finditer(text)]
    out += [int(m.group(1)) * 60 + float(m.group(2)) for m in _CLOCK.finditer(text)]
    out += [float(m.group(1)) for m in _SUM.finditer(text)]
    return out


def giveaways(
    texts: Mapping[str, str], cp: Checkpoint, ignore: Mapping[str, Iterable[float]] | None = None
) -> list[tuple[str, str]]:
    """(key of ``texts``, why) for each text that gives ``cp``'s answer away. ``ignore``: per
    key, times not to report (the pause instant, which the page's clock shows anyway, and
    times already reported as not reached yet)."""
    out: list[tuple[str, str]] = []
    right = _grams(_words(cp.choices[int(cp.answer)])) if cp.kind == "choice" else set()
    for j, choice in enumerate(cp.choices):
        if j != cp.answer:
            right -= _grams(_words(choice))
    for key, text in texts.items():
        for pattern, what in PHRASES:
            m = pattern.search(text)
            if m:
                out.append((key, f'"{m.group(0)}" {what}: it gives the question\'s answer away'))
        if cp.kind == "time":
            skip = {round(t * 1000) for t in (ignore or {}).get(key, ())}
            named = [
                t
                for t in times_written(text)
                if abs(t - float(cp.answer)) <= cp.tolerance + 1e-9 and round(t * 1000) not in skip
            ]
            if named:
                out.append(
                    (
                        key,
                        f"names {named[0]:g} s, the answer to its question "
                        f"({float(cp.answer):g} ± {cp.tolerance:g} s)",
                    )
                )
        else:
            said = right & _grams(_words(text))
            if said:
                out.append(
                    (
                        key,
                        f'says "{" ".join(sorted(said)[0])}" of the right choice '
                        f"({cp.choices[int(cp.answer)]!r}): it gives the answer away",
                    )
                )
    return out


def answered_ahead(steps: list[Step]) -> list[tuple[str, str]]:
    """(path, why) for each text of a later step (its kubectl commands included) that names
    an earlier time question's answer (the page has every step's text from the start)."""
    from .lesson import step_texts

    out: list[tuple[str, str]] = []
    for i, s in enumerate(steps):
        cp = s.checkpoint
        if cp is None or cp.kind != "time":
            continue
        for later in steps[i + 1 :]:
            texts = {f"{later.path}.{k}": v for k, v in step_texts(later).items()}
            lc = later.checkpoint
            if lc is not None:
                texts[f"{lc.path}.question"] = lc.question
                texts.update({f"{lc.path}.choices[{k}]": c for k, c in enumerate(lc.choices)})
            for path, text in texts.items():
                named = [
                    t
                    for t in times_written(text)
                    if abs(t - float(cp.answer)) <= cp.tolerance + 1e-9
                ]
                if named:
                    out.append(
                        (
                            path,
                            f"names {named[0]:g} s, the answer to {cp.path}.question "
                            f"({float(cp.answer):g} s): a page has every step's text from the "
                            "start, so it is there while that question is open",
                        )
                    )
    return out
