"""``spec.lesson``: a scenario taught in steps, with checkpoints that pause and ask
(/work/briefs/LESSON-CONTRACT.md; README "Lessons").

A lesson never changes the simulation: the loader compiles each step's ``faults`` into the
scenario's faults (at the step's begin) and each checkpoint's ``expect`` into the scenario's
expectations, so ``simulate`` of a lesson is an ordinary scenario run and ``simulate --check``
checks every answer. Step begins and checkpoints are not timeline events.

Parsing: ``parse_lesson(spec, path="spec.lesson") -> Lesson | None`` (``ScenarioError`` naming
the field path). ``Lesson``, ``Step`` and ``Checkpoint`` have ``to_dict(reveal=True)``: the
page's JSON (``reveal=False`` leaves out ``answer``, ``why`` and ``expect``).

Live pausing (the room's clock stops at each checkpoint until the operator goes on):

- ``Simulation.run_until(target_ms, stop=None) -> int``: runs like ``run(target_ms)``, except
  that once ``stop(event)`` is true for an event emitted at instant ``t`` it finishes every
  event of instant ``t`` and stops there: returns ``t`` (the clock is at ``t``), or
  ``target_ms`` when nothing stopped it. Chunking a run this way never changes the timeline.
- ``LessonRuntime(lesson)``: which checkpoint is pending (checkpoints are reached in step
  order; one at a time). ``rt.advance(sim, target_ms) -> (Checkpoint, t_ms) | None`` runs the
  simulation up to ``target_ms`` or up to the instant the pending checkpoint is reached,
  whichever is first, and marks it reached (the next ``advance`` waits for the one after it).
  ``rt.pause_reached(events, now_ms=None) -> (Checkpoint, t_ms) | None`` is the same test on
  events already run (``now_ms``: how far the clock has gone, for ``when: {at: ...}``).
  ``rt.stop`` is the ``stop`` callable for ``run_until``; ``rt.step_begin_ms(i)`` a step's
  begin once known; ``rt.to_dict()`` / ``LessonRuntime.from_dict(lesson, d)`` persist it.
- ``checkpoint_times(lesson, events)``: every checkpoint's pause time in a whole timeline
  (what ``LessonRuntime`` gives live); ``check_lesson(lesson, events)``: the lesson's own
  consistency problems there (a checkpoint never reached, a step whose faults came before the
  previous pause), reported by ``simulate --check``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .expect import CONTROL_KEYS, matches, validate_expectation
from .scenario import ScenarioError, _dur, _list, _map, _no_unknown, _num, _show, _str
from .timeline import EVENT_FIELDS, Event

if TYPE_CHECKING:
    from .simulation import Simulation

STEP_ID_RE = re.compile(r"^[a-z0-9-]+$")
LESSON_FIELDS = {"title", "summary", "steps"}
STEP_FIELDS = {"id", "title", "text", "at", "faults", "focus", "kubectl", "checkpoint"}
# ``kubectl:`` on a step: commands the class runs against the room's Kubernetes API (the page
# shows them, copyable, beside the room's kubeconfig). Bounded where the scenario is loaded:
# at most MAX_KUBECTL per step, each one line of at most MAX_KUBECTL_CHARS printable
# characters that starts with "kubectl ".
MAX_KUBECTL = 6
MAX_KUBECTL_CHARS = 120
KUBECTL_RE = re.compile(r"kubectl [\x20-\x7e]+")
CHECKPOINT_FIELDS = {
    "when",
    "question",
    "kind",
    "choices",
    "answer",
    "tolerance",
    "expect",
    "why",
    "wrong",
    "hide",
}
KINDS = ("choice", "time")
# What a page held back from viewers while a checkpoint is open and not revealed may leave out
# (``hide:``): "predictions" (the engine's times of what happens next: a silent node's
# Unknown, a pod's taint-manager deletion, a zone queue's next tokens) and "zoneRate" (a
# zone's rate and token bucket). The default, per kind of question: every question hides the
# predictions (they answer "when" and "what happens next" alike); a question about zones (its
# when or expect names a ZoneState, ZoneRate or NoExecute TaintAdded) hides the zone's rate too.
HIDE = ("predictions", "zoneRate")
ZONE_EVENTS = {"ZoneState", "ZoneRate", "TaintAdded"}


@dataclass(slots=True)
class Checkpoint:
    id: str  # the step's id
    question: str
    kind: str  # "choice" | "time"
    answer: int | float  # choice: index into choices; time: simulated seconds
    why: str
    expect: list[dict[str, Any]]
    choices: list[str] = field(default_factory=list)
    tolerance: float = 0.0
    when_at_ms: int | None = None
    when_event: dict[str, Any] | None = None
    path: str = ""  # "spec.lesson.steps[2].checkpoint"
    # Answers a class may give that must be marked wrong (time questions: checked against the
    # tolerance by ``check_lesson``); and what viewers do not get before the reveal (HIDE).
    wrong: list[float] = field(default_factory=list)
    hide: list[str] = field(default_factory=list)

    def matches(self, event: Event) -> bool:
        """The event this checkpoint waits for (``when: {event: ...}``)."""
        return self.when_event is not None and matches(self.when_event, event)

    def is_right(self, answer: Any) -> bool:
        """A viewer's answer: the right choice, or a time within ``tolerance`` seconds."""
        if isinstance(answer, bool) or not isinstance(answer, int | float):
            return False
        if self.kind == "choice":
            return answer == self.answer
        return abs(float(answer) - float(self.answer)) <= self.tolerance + 1e-9

    def to_dict(self, reveal: bool = True) -> dict[str, Any]:
        when: dict[str, Any] = {"at": self.when_at_ms / 1000} if self.when_at_ms is not None else {}
        if self.when_event is not None:
            when = {"event": dict(self.when_event)}
        out: dict[str, Any] = {
            "id": self.id,
            "when": when,
            "question": self.question,
            "kind": self.kind,
        }
        if self.kind == "choice":
            out["choices"] = list(self.choices)
        else:
            out["tolerance"] = self.tolerance
        out["hide"] = list(self.hide)
        if reveal:
            out["answer"] = self.answer
            out["why"] = self.why
            out["expect"] = [dict(e) for e in self.expect]
            if self.wrong:
                out["wrong"] = list(self.wrong)
        return out


@dataclass(slots=True)
class Step:
    id: str
    title: str
    text: str
    # When the step begins, if known before the run: its own ``at``, else the previous
    # checkpoint's ``when.at``, else the previous step's begin, else 0. None: it begins when
    # the previous checkpoint's event happens (known only as the simulation runs).
    at_ms: int | None
    faults: list[dict[str, Any]] = field(default_factory=list)  # as written, without at
    focus: dict[str, list[str]] = field(default_factory=dict)  # {"nodes": [...], "zones": [...]}
    checkpoint: Checkpoint | None = None
    kubectl: list[str] = field(default_factory=list)  # commands the class runs (MAX_KUBECTL)
    explicit_at: bool = False  # ``at`` written on the step
    path: str = ""

    def to_dict(self, reveal: bool = True) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "at": self.at_ms / 1000 if self.at_ms is not None else None,
            "faults": [dict(f) for f in self.faults],
            "focus": {k: list(v) for k, v in self.focus.items()},
            "kubectl": list(self.kubectl),
            "checkpoint": self.checkpoint.to_dict(reveal) if self.checkpoint else None,
        }


@dataclass(slots=True)
class Lesson:
    title: str
    summary: str
    steps: list[Step]

    @property
    def checkpoints(self) -> list[Checkpoint]:
        return [s.checkpoint for s in self.steps if s.checkpoint is not None]

    def step_index(self, step_id: str) -> int:
        for i, s in enumerate(self.steps):
            if s.id == step_id:
                return i
        raise KeyError(step_id)

    def to_dict(self, reveal: bool = True) -> dict[str, Any]:
        return {
            "title": self.title,
            "summary": self.summary,
            "steps": [s.to_dict(reveal) for s in self.steps],
        }


# -- parsing ---------------------------------------------------------------------------------
def parse_lesson(spec: Mapping[str, Any], path: str = "spec.lesson") -> Lesson | None:
    """``spec.lesson`` validated (None when the scenario has none). Node and zone names in
    ``focus`` and step faults are checked by the scenario loader, which knows the nodes."""
    if "lesson" not in spec or spec.get("lesson") is None:
        return None
    d = _map(spec["lesson"], path)
    if not d:
        raise ScenarioError(path, "must have a title and steps")
    _no_unknown(d, LESSON_FIELDS, path)
    title = _text(d.get("title"), f"{path}.title")
    summary = _text(d["summary"], f"{path}.summary") if "summary" in d else ""
    raw_steps = _list(d.get("steps"), f"{path}.steps")
    if not raw_steps:
        raise ScenarioError(f"{path}.steps", "a lesson needs at least one step")
    steps: list[Step] = []
    seen: dict[str, str] = {}
    prev_begin: int | None = 0
    prev_pause: int | None = 0  # when the previous checkpoint paused (None: at an event)
    prev_has_checkpoint = False
    for i, raw in enumerate(raw_steps):
        p = f"{path}.steps[{i}]"
        s = _map(raw, p)
        _no_unknown(s, STEP_FIELDS, p)
        sid = s.get("id", f"step-{i + 1}")
        if not isinstance(sid, str) or not STEP_ID_RE.match(sid):
            raise ScenarioError(
                f"{p}.id", f"must be lower case letters, digits and '-', got {_show(sid)}"
            )
        if sid in seen:
            raise ScenarioError(f"{p}.id", f'duplicate step id "{sid}" (first at {seen[sid]})')
        seen[sid] = p
        stitle = _text(s.get("title"), f"{p}.title")
        text = _text(s["text"], f"{p}.text") if "text" in s else ""
        # The default begin: where the previous checkpoint paused, else the previous begin.
        default_begin = prev_pause if prev_has_checkpoint else prev_begin
        explicit = "at" in s
        if explicit:
            at_ms: int | None = _dur(s["at"], f"{p}.at")
            floor = prev_pause if prev_has_checkpoint else prev_begin
            if floor is not None and at_ms < floor:
                what = "the previous checkpoint" if prev_has_checkpoint else "the previous step"
                raise ScenarioError(
                    f"{p}.at",
                    f"must not go back in time: {at_ms / 1000:g}s is before {what} "
                    f"({floor / 1000:g}s)",
                )
            if floor is None and prev_begin is not None and at_ms < prev_begin:
                raise ScenarioError(
                    f"{p}.at",
                    f"must not go back in time: {at_ms / 1000:g}s is before the previous "
                    f"step ({prev_begin / 1000:g}s)",
                )
        else:
            at_ms = default_begin
        faults = []
        for j, f in enumerate(_list(s.get("faults"), f"{p}.faults")):
            fp = f"{p}.faults[{j}]"
            f = _map(f, fp)
            if "at" in f:
                raise ScenarioError(
                    f"{fp}.at",
                    "a step's faults happen when the step begins; give the step an at: instead",
                )
            faults.append(dict(f))
        if faults and at_ms is None:
            raise ScenarioError(
                f"{p}.at",
                "is required for a step with faults after a checkpoint that waits for an event "
                "(when that event happens is known only as the simulation runs)",
            )
        focus = _focus(s.get("focus"), f"{p}.focus")
        kubectl = _kubectl(s.get("kubectl"), f"{p}.kubectl")
        checkpoint = None
        if s.get("checkpoint") is not None:
            checkpoint = _checkpoint(s["checkpoint"], sid, at_ms, f"{p}.checkpoint")
        steps.append(
            Step(
                id=sid,
                title=stitle,
                text=text,
                at_ms=at_ms,
                faults=faults,
                focus=focus,
                checkpoint=checkpoint,
                kubectl=kubectl,
                explicit_at=explicit,
                path=p,
            )
        )
        prev_begin = at_ms
        if checkpoint is not None:
            prev_has_checkpoint = True
            prev_pause = checkpoint.when_at_ms  # None for an event
        else:
            prev_has_checkpoint = False
    return Lesson(title=title, summary=summary, steps=steps)


def _text(v: Any, path: str) -> str:
    s = _str(v, path)
    if not s.strip():
        raise ScenarioError(path, "must not be blank")
    return s.strip()


def _focus(v: Any, path: str) -> dict[str, list[str]]:
    d = _map(v, path)
    _no_unknown(d, {"nodes", "zones"}, path)
    out: dict[str, list[str]] = {}
    for key in ("nodes", "zones"):
        if key in d:
            out[key] = [
                _str(x, f"{path}.{key}[{i}]") for i, x in enumerate(_list(d[key], f"{path}.{key}"))
            ]
    return out


def _kubectl(v: Any, path: str) -> list[str]:
    """A step's ``kubectl:`` commands (see MAX_KUBECTL): shown as written, never run here."""
    items = _list(v, path)
    if len(items) > MAX_KUBECTL:
        raise ScenarioError(path, f"at most {MAX_KUBECTL} commands per step, got {len(items)}")
    out: list[str] = []
    for i, x in enumerate(items):
        ip = f"{path}[{i}]"
        cmd = _str(x, ip).strip()
        if len(cmd) > MAX_KUBECTL_CHARS:
            raise ScenarioError(ip, f"at most {MAX_KUBECTL_CHARS} characters, got {len(cmd)}")
        if not KUBECTL_RE.fullmatch(cmd):
            raise ScenarioError(
                ip,
                'must be one line of printable ASCII that starts with "kubectl ", got '
                f"{cmd[:40]!r}",
            )
        if cmd in out:
            raise ScenarioError(ip, f'duplicate command "{cmd}"')
        out.append(cmd)
    return out


def _checkpoint(v: Any, step_id: str, begin_ms: int | None, p: str) -> Checkpoint:
    d = _map(v, p)
    _no_unknown(d, CHECKPOINT_FIELDS, p)
    when = _map(d.get("when"), f"{p}.when")
    _no_unknown(when, {"at", "event"}, f"{p}.when")
    if ("at" in when) == ("event" in when):
        raise ScenarioError(f"{p}.when", "needs exactly one of at: or event:")
    when_at_ms = None
    when_event = None
    if "at" in when:
        when_at_ms = _dur(when["at"], f"{p}.when.at")
        if begin_ms is not None and when_at_ms < begin_ms:
            raise ScenarioError(
                f"{p}.when.at",
                f"{when_at_ms / 1000:g}s is before the step begins ({begin_ms / 1000:g}s)",
            )
    else:
        ep = f"{p}.when.event"
        when_event = dict(_map(when["event"], ep))
        etype = when_event.get("type")
        if not isinstance(etype, str) or etype not in EVENT_FIELDS:
            raise ScenarioError(f"{ep}.type", f"unknown event type {etype!r}")
        for k in when_event:
            if k in CONTROL_KEYS and k != "type":
                raise ScenarioError(
                    f"{ep}.{k}",
                    "the first matching event at or after the step begins is taken; "
                    "give event fields only",
                )
        validate_expectation(when_event, ep)
    question = _text(d.get("question"), f"{p}.question")
    kind = d.get("kind")
    if kind not in KINDS:
        raise ScenarioError(f"{p}.kind", f"must be choice or time, got {_show(kind)}")
    if "answer" not in d:
        raise ScenarioError(f"{p}.answer", "is required")
    choices: list[str] = []
    tolerance = 0.0
    answer: int | float
    if kind == "choice":
        if "tolerance" in d:
            raise ScenarioError(f"{p}.tolerance", "only a kind: time checkpoint has a tolerance")
        raw_choices = _list(d.get("choices"), f"{p}.choices")
        for i, c in enumerate(raw_choices):
            if isinstance(c, int | float) and not isinstance(c, bool):
                try:
                    c = f"{c:g}"
                except OverflowError:  # an int past float's range (found by make fuzz)
                    raise ScenarioError(f"{p}.choices[{i}]", "a number too large") from None
            choices.append(_text(c, f"{p}.choices[{i}]"))
        if len(choices) < 2:
            raise ScenarioError(f"{p}.choices", "a choice question needs at least 2 choices")
        if len(set(choices)) != len(choices):
            raise ScenarioError(f"{p}.choices", "choices must differ")
        a = d["answer"]
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < len(choices):
            raise ScenarioError(
                f"{p}.answer",
                f"must be an index into choices (0..{len(choices) - 1}), got {_show(a)}",
            )
        answer = a
    else:
        if "choices" in d:
            raise ScenarioError(f"{p}.choices", "a kind: time checkpoint has no choices")
        answer = _num(d["answer"], f"{p}.answer")
        if answer == int(answer):
            answer = int(answer)
        if "tolerance" in d:
            tolerance = _num(d["tolerance"], f"{p}.tolerance")
    wrong: list[float] = []
    if "wrong" in d:
        if kind != "time":
            raise ScenarioError(
                f"{p}.wrong",
                "only a kind: time checkpoint lists wrong answers (a choice's are "
                "the other choices)",
            )
        for i, w in enumerate(_list(d["wrong"], f"{p}.wrong")):
            wv = _num(w, f"{p}.wrong[{i}]")
            wrong.append(int(wv) if wv == int(wv) else wv)
    raw_expect = _list(d.get("expect"), f"{p}.expect")
    if not raw_expect:
        raise ScenarioError(
            f"{p}.expect", "needs at least one expectation (it is what makes the answer true)"
        )
    expect = []
    for i, e in enumerate(raw_expect):
        e = dict(_map(e, f"{p}.expect[{i}]"))
        validate_expectation(e, f"{p}.expect[{i}]")
        expect.append(e)
    why = _text(d.get("why"), f"{p}.why")
    if "hide" in d:
        hide = []
        for i, x in enumerate(_list(d["hide"], f"{p}.hide")):
            if x not in HIDE:
                raise ScenarioError(
                    f"{p}.hide[{i}]", f"must be one of {', '.join(HIDE)}, got {_show(x)}"
                )
            if x not in hide:
                hide.append(x)
    else:
        hide = default_hide(when_event, expect)
    return Checkpoint(
        id=step_id,
        question=question,
        kind=kind,
        answer=answer,
        why=why,
        expect=expect,
        choices=choices,
        tolerance=tolerance,
        when_at_ms=when_at_ms,
        when_event=when_event,
        path=p,
        wrong=wrong,
        hide=hide,
    )


def default_hide(when_event: Mapping[str, Any] | None, expect: list[dict[str, Any]]) -> list[str]:
    """What a checkpoint without ``hide:`` holds back from viewers (see HIDE)."""
    named = [when_event or {}, *expect]
    zones = any(
        e.get("type") in ZONE_EVENTS
        and (e.get("type") != "TaintAdded" or e.get("effect") == "NoExecute")
        for e in named
    )
    return ["predictions", "zoneRate"] if zones else ["predictions"]


def compiled_faults(lesson: Lesson) -> list[tuple[int, dict[str, Any], str]]:
    """(at_ms, raw fault, path) of every step fault, for the scenario's fault list."""
    out = []
    for s in lesson.steps:
        for j, f in enumerate(s.faults):
            assert s.at_ms is not None  # parse_lesson refuses faults on an unknown begin
            out.append((s.at_ms, f, f"{s.path}.faults[{j}]"))
    return out


def compiled_expectations(lesson: Lesson) -> list[tuple[dict[str, Any], str]]:
    """(expectation, path) of every checkpoint's expect item, for spec.expect."""
    return [
        (e, f"{cp.path}.expect[{i}]") for cp in lesson.checkpoints for i, e in enumerate(cp.expect)
    ]


def check_focus(lesson: Lesson, nodes: set[str], zones: set[str]) -> None:
    """Focus names must be nodes / zones the scenario has (at some time)."""
    for s in lesson.steps:
        for i, n in enumerate(s.focus.get("nodes", [])):
            if n not in nodes:
                raise ScenarioError(f"{s.path}.focus.nodes[{i}]", f'unknown node "{n}"')
        for i, z in enumerate(s.focus.get("zones", [])):
            if z not in zones:
                raise ScenarioError(f"{s.path}.focus.zones[{i}]", f'unknown zone "{z}"')


# -- running ---------------------------------------------------------------------------------
class LessonRuntime:
    """Which checkpoint the room waits for next, and when each one was reached."""

    def __init__(self, lesson: Lesson) -> None:
        self.lesson = lesson
        self._cp_steps = [i for i, s in enumerate(lesson.steps) if s.checkpoint is not None]
        self.reached: dict[str, int] = {}  # checkpoint id -> pause time (ms)
        # The events of the instant last run (a pause finishes its instant: the next
        # checkpoint may wait for an event of that same instant).
        self._instant: list[Event] = []
        self._instant_t: int | None = None
        self._pb: tuple[Checkpoint, int] | None | bool = False  # _pending_begin, cached
        self._waits = [cp.when_event for cp in lesson.checkpoints if cp.when_event is not None]

    # -- state ---------------------------------------------------------------------------
    @property
    def pending(self) -> Checkpoint | None:
        """The checkpoint not yet reached that comes first (None: all reached)."""
        for i in self._cp_steps:
            cp = self.lesson.steps[i].checkpoint
            assert cp is not None
            if cp.id not in self.reached:
                return cp
        return None

    def step_begin_ms(self, index: int) -> int | None:
        """When step ``index`` begins, once known (it may wait for an earlier checkpoint)."""
        steps = self.lesson.steps
        s = steps[index]
        if s.at_ms is not None:
            return s.at_ms
        # Not explicit, after an event checkpoint: that checkpoint's pause (or, if the step
        # before has no checkpoint, its begin).
        prev = steps[index - 1]
        if prev.checkpoint is not None:
            return self.reached.get(prev.checkpoint.id)
        return self.step_begin_ms(index - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reached": dict(self.reached),
            "instant_t": self._instant_t,
            "instant": [dict(e) for e in self._instant],
        }

    @classmethod
    def from_dict(cls, lesson: Lesson, d: Mapping[str, Any]) -> LessonRuntime:
        rt = cls(lesson)
        rt.reached = {str(k): int(v) for k, v in (d.get("reached") or {}).items()}
        rt._pb = False
        rt._instant_t = d.get("instant_t")
        rt._instant = [dict(e) for e in d.get("instant") or []]
        return rt

    # -- the test ------------------------------------------------------------------------
    def _pending_begin(self) -> tuple[Checkpoint, int] | None:
        if self._pb is not False:
            return self._pb  # type: ignore[return-value]
        cp = self.pending
        if cp is None:
            self._pb = None
            return None
        begin = self.step_begin_ms(self.lesson.step_index(cp.id))
        assert begin is not None  # every earlier checkpoint is reached
        # A checkpoint is looked for from its step's begin, and never before the clock
        # stopped last (what a room has already run past cannot pause it).
        self._pb = (cp, max(begin, max(self.reached.values(), default=0)))
        return self._pb

    def _reach(self, cp: Checkpoint, t_ms: int) -> tuple[Checkpoint, int]:
        self.reached[cp.id] = t_ms
        self._pb = False
        return cp, t_ms

    def _matches(self, event: Event) -> bool:
        pb = self._pending_begin()
        if pb is None:
            return False
        cp, begin = pb
        return cp.when_event is not None and event["t"] >= begin and cp.matches(event)

    def stop(self, event: Event) -> bool:
        """``stop`` for ``Simulation.run_until``: the pending checkpoint's event."""
        if event["t"] != self._instant_t:
            self._instant_t = event["t"]
            self._instant = []
        if any(matches(w, event) for w in self._waits):  # only what a checkpoint waits for
            self._instant.append(event)
        return self._matches(event)

    def pause_reached(
        self, events: Iterable[Event], now_ms: int | None = None
    ) -> tuple[Checkpoint, int] | None:
        """Whether the pending checkpoint is reached in ``events`` (run so far up to
        ``now_ms``): (checkpoint, the instant it is reached); marks it reached."""
        pb = self._pending_begin()
        if pb is None:
            return None
        cp, begin = pb
        hit: int | None = None
        if cp.when_event is not None:
            for ev in events:
                if ev["t"] >= begin and cp.matches(ev):
                    hit = ev["t"]
                    break
        elif cp.when_at_ms is not None and now_ms is not None and now_ms >= cp.when_at_ms:
            hit = max(cp.when_at_ms, begin)
        if hit is None:
            return None
        return self._reach(cp, hit)

    def advance(self, sim: Simulation, target_ms: int) -> tuple[Checkpoint, int] | None:
        """Run ``sim`` to ``target_ms``, or to the instant the pending checkpoint is reached
        (finishing that instant): then (checkpoint, t_ms) with the clock at t_ms."""
        pb = self._pending_begin()
        if pb is None:
            sim.run_until(target_ms)
            return None
        cp, begin = pb
        # The last instant run may already hold the event (the previous pause's instant).
        if cp.when_event is not None and self._instant_t is not None:
            reached = self.pause_reached(self._instant)
            if reached is not None:
                return reached
        if cp.when_at_ms is not None:
            at = max(cp.when_at_ms, begin)
            if sim.started and sim.now_ms >= at:
                return self._reach(cp, sim.now_ms)
            end = sim.run_until(min(target_ms, at), self.stop)
            if end >= at:
                return self._reach(cp, at)
            return None
        end = sim.run_until(target_ms, self.stop)
        if self._instant_t == end:
            reached = self.pause_reached(self._instant)
            if reached is not None:
                return reached
        return None


def checkpoint_times(lesson: Lesson, events: list[Event], end_ms: int) -> dict[str, int]:
    """Every checkpoint's pause time in a whole timeline run to ``end_ms`` (those reached)."""
    rt = LessonRuntime(lesson)
    while True:
        pb = rt._pending_begin()
        if pb is None:
            break
        cp, begin = pb
        if cp.when_event is not None:
            if rt.pause_reached(_from(events, begin)) is None:
                break
        elif rt.pause_reached((), end_ms) is None:
            break
    return dict(rt.reached)


def _from(events: list[Event], t_ms: int) -> Iterable[Event]:
    import bisect

    i = bisect.bisect_left([e["t"] for e in events], t_ms)
    return events[i:]


def check_lesson(lesson: Lesson, events: list[Event], end_ms: int) -> list[tuple[str, str]]:
    """The lesson's own problems in a run: (path, why) for a checkpoint never reached, for a
    step that begins (its ``at``) before the previous checkpoint paused, for a
    ``when: {at: ...}`` already past when its step began (it pauses later than it says), for a
    step or question whose text names a time later than the instant it is shown (a step is
    shown from its begin, the first from 0; a question at its pause), for a time question's
    tolerance that marks one of its listed ``wrong`` answers right, and for a step or
    question whose text gives the question's own answer away (engine/giveaway.py)."""
    times = checkpoint_times(lesson, events, end_ms)
    problems: list[tuple[str, str]] = []
    prev_pause: int | None = None
    rt = LessonRuntime.from_dict(lesson, {"reached": times})
    for i, s in enumerate(lesson.steps):
        if s.explicit_at and prev_pause is not None and s.at_ms is not None:
            if s.at_ms < prev_pause:
                problems.append(
                    (
                        f"{s.path}.at",
                        f"the step begins at {s.at_ms / 1000:g}s, before the previous "
                        f"checkpoint paused ({prev_pause / 1000:g}s)",
                    )
                )
        shown = 0 if i == 0 else rt.step_begin_ms(i)
        if shown is not None:
            problems += _ahead_of_clock(s.path, step_texts(s), shown, "step")
        prev_pause = None
        if s.checkpoint is not None:
            cp = s.checkpoint
            problems += _wrong_marked_right(cp)
            if cp.id not in times:
                problems.append((f"{cp.path}.when", "never reached in the run"))
                break
            prev_pause = times[cp.id]
            asked = {"question": cp.question}
            asked.update({f"choices[{j}]": c for j, c in enumerate(cp.choices)})
            problems += _ahead_of_clock(cp.path, asked, prev_pause, "question")
            problems += _giveaways(s, cp, shown, prev_pause)
            if cp.when_at_ms is not None and prev_pause > cp.when_at_ms:
                problems.append(
                    (
                        f"{cp.path}.when.at",
                        f"{cp.when_at_ms / 1000:g}s had passed when the step began: it pauses "
                        f"at {prev_pause / 1000:g}s",
                    )
                )
    from .giveaway import answered_ahead

    return problems + answered_ahead(lesson.steps)


# A time (not a duration) a text names: "at 410 s", "from 475 s", "until 60s", "by 6m50s",
# a list after one of those ("at 595, 605 and 615 s"), a sum's result ("= 410 s"), or the
# page clock's "06:50". Durations ("for 300 s", "every 10 s", "(50 s)") are not times.
_NUM = r"\d+(?:\.\d+)?"
_SEP = r"\s*s?\s*(?:,|and|or|to|\.\.\.|…)\s*"
_TIMES = re.compile(
    rf"\b(?:at|from|until|till|by)\s+((?:{_NUM}{_SEP})*{_NUM})\s*s\b", re.IGNORECASE
)
_MIN_SEC = re.compile(rf"\b(?:at|from|until|till|by)\s+(\d+)\s*m\s*({_NUM})\s*s\b", re.IGNORECASE)
_SUM = re.compile(rf"=\s*({_NUM})\s*s\b")
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,3}):([0-5]\d)(?![\d:])")


def named_times(text: str) -> list[float]:
    """The simulated times (seconds) a lesson text names, in the order written."""
    found: list[tuple[int, float]] = []
    for m in _TIMES.finditer(text):
        found += [(m.start(), float(x)) for x in re.findall(_NUM, m.group(1))]
    for m in _MIN_SEC.finditer(text):
        found.append((m.start(), int(m.group(1)) * 60 + float(m.group(2))))
    for m in _SUM.finditer(text):
        found.append((m.start(), float(m.group(1))))
    for m in _CLOCK.finditer(text):
        found.append((m.start(), int(m.group(1)) * 60 + float(m.group(2))))
    return [t for _at, t in sorted(found)]


def _ahead_of_clock(
    path: str, texts: Mapping[str, str], shown_ms: int, what: str
) -> list[tuple[str, str]]:
    out = []
    for key, text in texts.items():
        late = [t for t in named_times(text) if t * 1000 > shown_ms]
        if late:
            out.append(
                (
                    f"{path}.{key}",
                    f"names {late[0]:g}s, later than {shown_ms / 1000:g}s when the {what} is "
                    "shown: it would tell the class what has not happened yet",
                )
            )
    return out


def _giveaways(
    s: Step, cp: Checkpoint, shown_ms: int | None, pause_ms: int
) -> list[tuple[str, str]]:
    """What the class reads while the question is open (its step and the question) must not
    answer it (engine/giveaway.py). A time named after the text is shown is reported once,
    as not reached yet (_ahead_of_clock); the pause instant is on the page's clock."""
    from .giveaway import giveaways

    def known(texts: dict[str, str], from_ms: int | None) -> dict[str, list[float]]:
        return {
            k: [pause_ms / 1000]
            + [t for t in named_times(v) if from_ms is not None and t * 1000 > from_ms]
            for k, v in texts.items()
        }

    texts = step_texts(s)
    step = giveaways(texts, cp, known(texts, shown_ms))
    question = {"question": cp.question}
    asked = giveaways(question, cp, known(question, pause_ms))
    return [(f"{s.path}.{k}", why) for k, why in step] + [
        (f"{cp.path}.{k}", why) for k, why in asked
    ]


def step_texts(s: Step) -> dict[str, str]:
    """What the class reads of a step (by key under its path): its title, text and the
    kubectl commands it lists."""
    texts = {"title": s.title, "text": s.text}
    texts.update({f"kubectl[{i}]": c for i, c in enumerate(s.kubectl)})
    return texts


def _wrong_marked_right(cp: Checkpoint) -> list[tuple[str, str]]:
    return [
        (
            f"{cp.path}.tolerance",
            f"{cp.tolerance:g} s marks the wrong answer {w:g} right (answer {cp.answer:g}, "
            f"wrong[{j}])",
        )
        for j, w in enumerate(cp.wrong)
        if cp.is_right(w)
    ]


StopFn = Callable[[Event], bool]
