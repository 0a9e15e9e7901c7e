// node --test tests/js: the lesson panel's state machine (static/js/lesson.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  answer, applyLessonMessage, applyLessonSnapshot, askedCheckpoint, bars, emptyLesson, flowState, focusSet, inFocus,
  isRight, keyAction, lessonView, parseTimeGuess, press, questionStep, TIME_ERROR, TIME_HINT,
} from "../../static/js/lesson.js";

// As the server sends it: no answer, why or expect in the definition.
const def = {
  title: "Heartbeats and the grace period",
  summary: "Why a silent node goes Unknown, and when its pods go.",
  steps: [
    { id: "healthy", title: "A healthy cluster", text: "Every kubelet renews its Lease.\n\nWatch the bars.", at: 0, focus: null, checkpoint: null },
    { id: "stop", title: "a-2 goes silent", text: "Its kubelet stops at 62 s.", at: 62, focus: { nodes: ["a-2"], zones: [] },
      checkpoint: { id: "stop", question: "When will a-2 be Unknown?", kind: "choice", choices: ["62 s", "102 s", "105 s", "never"] } },
    { id: "pods", title: "Its pods", text: "Taints.", at: 105, focus: { nodes: [], zones: ["a"] },
      checkpoint: { id: "pods", question: "When are a-2's pods deleted?", kind: "time", tolerance: 5 } },
  ],
};
const running = { type: "lesson", step: 0, checkpoint: null, paused: false, counts: {}, answered: 0, revealed: false };
const atStop = { type: "lesson", step: 1, checkpoint: "stop", paused: true, counts: {}, answered: 0, revealed: false };

test("no lesson: the panel has nothing to show", () => {
  assert.equal(lessonView(emptyLesson(), "viewer").phase, "none");
  assert.equal(lessonView(applyLessonSnapshot(emptyLesson(), null, running), "operator").phase, "none");
});

test("a step while the clock runs: title, paragraphs, progress; the operator may go on, a viewer may not", () => {
  const ls = applyLessonSnapshot(emptyLesson(), def, running);
  const v = lessonView(ls, "viewer");
  assert.equal(v.phase, "step");
  assert.equal(v.step.title, "A healthy cluster");
  assert.deepEqual(v.paragraphs, ["Every kubelet renews its Lease.", "Watch the bars."]);
  assert.equal(v.progress, "step 1 of 3");
  assert.deepEqual([v.canAnswer, v.canNext, v.canPrev, v.canReveal], [false, false, false, false]);
  const o = lessonView(ls, "operator");
  // The clock leads: the next step's text waits until the clock reaches it.
  assert.deepEqual([o.canNext, o.canPrev, o.canReveal, o.nextLabel], [false, false, false, "Next step"]);
  assert.match(o.waiting, /clock leads/);
  const ahead = lessonView(applyLessonSnapshot(emptyLesson(), def, { ...running, latest: 1 }), "operator");
  assert.deepEqual([ahead.canNext, ahead.flow], [true, "back"]);
});

test("paused at a checkpoint: a viewer is asked, answers, and the message names the checkpoint", () => {
  let ls = applyLessonSnapshot(emptyLesson(), def, atStop);
  assert.equal(askedCheckpoint(ls).id, "stop");
  assert.equal(lessonView(ls, "viewer").phase, "question");
  assert.equal(lessonView(ls, "viewer").canAnswer, true);
  assert.equal(lessonView(ls, "operator").phase, "asking");
  assert.equal(lessonView(ls, "operator").canAnswer, false);
  const r = answer(ls, 2, "  Ada ");
  assert.deepEqual(r.message, { type: "lesson.answer", checkpoint: "stop", answer: 2, name: "Ada" });
  ls = r.state;
  const v = lessonView(ls, "viewer");
  assert.equal(v.phase, "answered");
  assert.equal(v.mine, 2);
  // Before the reveal a viewer sees how many answered, not what they chose.
  ls = applyLessonMessage(ls, { ...atStop, counts: { 2: 1, 1: 1 }, answered: 2 });
  assert.equal(lessonView(ls, "viewer").showCounts, false);
  assert.equal(lessonView(ls, "viewer").answeredText, "2 answers");
  assert.equal(lessonView(ls, "viewer").phase, "answered", "our answer survives a broadcast of the same checkpoint");
  assert.equal(lessonView(ls, "operator").showCounts, true);
});

test("a bad answer is refused here with what is wrong, and nothing is sent", () => {
  const ls = applyLessonSnapshot(emptyLesson(), def, atStop);
  for (const bad of [4, -1, 1.5, "2", null]) {
    const r = answer(ls, bad);
    assert.equal(r.message, null, String(bad));
    assert.match(r.state.error, /Pick one of the 4 choices/);
    assert.equal(r.state.mine, null);
  }
  const none = answer(applyLessonSnapshot(emptyLesson(), def, running), 1);
  assert.equal(none.message, null);
  assert.match(none.state.error, /No question is open/);
  const timeQ = applyLessonSnapshot(emptyLesson(), def, { ...atStop, step: 2, checkpoint: "pods" });
  for (const bad of ["soon", "-3", "", Number.NaN, -1]) {
    const r = answer(timeQ, bad);
    assert.equal(r.message, null, String(bad));
    assert.match(r.state.error, /Give a time in seconds/);
  }
  assert.deepEqual(answer(timeQ, "6m50s").message, { type: "lesson.answer", checkpoint: "pods", answer: 410 });
});

test("time guesses: seconds, minutes and seconds, or the clock's mm:ss", () => {
  const cases = [["410", 410], ["410s", 410], ["410 s", 410], ["6m50s", 410], ["6m", 360], ["06:50", 410], ["1.5", 1.5],
    ["", null], ["abc", null], ["6:75", null], ["-5", null]];
  for (const [text, want] of cases) assert.equal(parseTimeGuess(text), want, text);
});

test("the reveal: the right answer, the class's bars with percentages, mine marked right or wrong, the why", () => {
  let ls = answer(applyLessonSnapshot(emptyLesson(), def, atStop), 1).state;
  ls = applyLessonMessage(ls, { ...atStop, counts: { 1: 1, 2: 3 }, answered: 4, revealed: true, answer: 2,
    why: "Unknown once strictly past 60 + 40 s: the 105 s pass." });
  const v = lessonView(ls, "viewer");
  assert.equal(v.phase, "revealed");
  assert.equal(v.answerText, "105 s");
  assert.equal(v.showCounts, true);
  assert.deepEqual(v.bars.map((b) => [b.label, b.count, b.pct, b.right, b.mine]),
    [["62 s", 0, 0, false, false], ["102 s", 1, 25, false, true], ["105 s", 3, 75, true, false], ["never", 0, 0, false, false]]);
  assert.equal(v.mineRight, false);
  assert.match(v.why, /strictly past/);
  assert.equal(v.canAnswer, false);
  assert.equal(answer(ls, 2).message, null, "no answer after the reveal");
  const o = lessonView(ls, "operator");
  assert.deepEqual([o.canReveal, o.canNext, o.nextLabel], [false, true, "Next step (resume the clock)"]);
  const asking = lessonView(applyLessonSnapshot(emptyLesson(), def, atStop), "operator");
  assert.deepEqual([asking.canReveal, asking.canNext, asking.nextLabel, asking.nextKind], [true, true, "Reveal the answer", "reveal"]);
});

test("time questions: bars per distinct guess, right within the tolerance", () => {
  const cp = def.steps[2].checkpoint;
  let ls = applyLessonSnapshot(emptyLesson(), def, { ...atStop, step: 2, checkpoint: "pods", counts: { 410: 2, 140: 1, 407: 1 }, answered: 4 });
  ls = answer(ls, 407).state;
  assert.deepEqual(bars(ls, cp).map((b) => [b.key, b.count, b.right, b.mine]), [["140", 1, null, false], ["407", 1, null, true], ["410", 2, null, false]]);
  ls = applyLessonMessage(ls, { ...atStop, step: 2, checkpoint: "pods", counts: { 410: 2, 140: 1, 407: 1 }, answered: 4, revealed: true, answer: 410, why: "300 s" });
  assert.deepEqual(bars(ls, cp).map((b) => [b.key, b.right]), [["140", false], ["407", true], ["410", true]]);
  const v = lessonView(ls, "viewer");
  assert.equal(v.answerText, "410 s (06:50), ± 5 s");
  assert.equal(v.mineRight, true);
  assert.equal(bars(ls, cp)[2].label, "410 s (06:50)");
});

test("right or wrong: choice by index, time within tolerance (inclusive)", () => {
  const table = [
    [{ kind: "choice", answer: 2 }, 2, true], [{ kind: "choice", answer: 2 }, 1, false],
    [{ kind: "time", answer: 410, tolerance: 5 }, 415, true], [{ kind: "time", answer: 410, tolerance: 5 }, 415.5, false],
    [{ kind: "time", answer: 410 }, 410, true], [{ kind: "time", answer: 410 }, 411, false], [{ kind: "choice", answer: 0 }, null, false],
  ];
  for (const [cp, v, want] of table) assert.equal(isRight(cp, v), want, JSON.stringify([cp, v]));
});

test("next: the checkpoint closes, my answer is forgotten, the step moves on; counts of the old question go", () => {
  let ls = answer(applyLessonSnapshot(emptyLesson(), def, atStop), 1).state;
  ls = applyLessonMessage(ls, { type: "lesson", step: 2, checkpoint: null, paused: false, counts: {}, answered: 0, revealed: false });
  const v = lessonView(ls, "viewer");
  assert.equal(v.phase, "step");
  assert.equal(v.step.id, "pods");
  assert.equal(ls.mine, null);
  assert.deepEqual(v.bars, []);
  // A reconnect: the server says what this browser had answered.
  ls = applyLessonMessage(ls, { ...atStop, step: 2, checkpoint: "pods", mine: 400 });
  assert.equal(lessonView(ls, "viewer").phase, "answered");
  assert.equal(lessonView(ls, "viewer").mine, 400);
});

test("revealed answer and why never come before the reveal, even if a message carried them", () => {
  const ls = applyLessonMessage(applyLessonSnapshot(emptyLesson(), def, atStop), { ...atStop, answer: 2, why: "x" });
  const v = lessonView(ls, "viewer");
  assert.equal(v.answerText, "");
  assert.equal(v.why, "");
  assert.ok(v.bars.every((b) => b.right === null));
});

test("the projector shows how many answered, not how, until the reveal", () => {
  let ls = applyLessonMessage(applyLessonSnapshot(emptyLesson(), def, atStop), { ...atStop, counts: { 1: 2, 2: 1 }, answered: 3 });
  const p = lessonView(ls, "operator", { presenter: true });
  assert.deepEqual([p.showCounts, p.answeredText], [false, "3 answers"]);
  assert.equal(lessonView(ls, "operator").showCounts, true, "the operator's own page sees them come in");
  ls = applyLessonMessage(ls, { ...atStop, counts: { 1: 2, 2: 1 }, answered: 3, revealed: true, answer: 2, why: "w" });
  assert.equal(lessonView(ls, "operator", { presenter: true }).showCounts, true);
});

test("the time box's hint and error name no time (an example would be some lesson's answer)", () => {
  assert.doesNotMatch(TIME_HINT, /\d/);
  assert.doesNotMatch(TIME_ERROR, /\d/);
  const timeQ = applyLessonSnapshot(emptyLesson(), def, { ...atStop, step: 2, checkpoint: "pods" });
  assert.equal(answer(timeQ, "soon").state.error, TIME_ERROR);
});

test("names only to the operator's own view, never on the projector", () => {
  const ls = applyLessonMessage(applyLessonSnapshot(emptyLesson(), def, atStop), { ...atStop, names: [{ name: "Ada", answer: 2 }] });
  assert.deepEqual(lessonView(ls, "operator").names, [{ name: "Ada", answer: 2 }]);
  assert.deepEqual(lessonView(ls, "operator", { presenter: true }).names, []);
  assert.deepEqual(lessonView(ls, "viewer").names, []);
});

test("keys: N, → and PageDown next, P, ←, B and PageUp back, for the operator on any page (issue #38)", () => {
  const table = [["n", "operator", "next"], ["N", "operator", "next"], ["ArrowRight", "operator", "next"],
    ["PageDown", "operator", "next"], ["ArrowLeft", "operator", "prev"], ["b", "operator", "prev"],
    ["B", "operator", "prev"], ["PageUp", "operator", "prev"], ["p", "operator", "prev"], ["P", "operator", "prev"],
    ["n", "viewer", null], ["ArrowLeft", "viewer", null], ["p", "viewer", null], ["x", "operator", null], [" ", "operator", null]];
  for (const [key, role, want] of table) assert.equal(keyAction(key, role), want, `${key} ${role}`);
});

// The flow's one rule, at every state and for every input: a question is never left
// unrevealed. def has a checkpoint on step 1 ("stop") and step 2 ("pods").
const at = (m) => applyLessonSnapshot(emptyLesson(), def, { type: "lesson", paused: false, counts: {}, answered: 0, revealed: false, checkpoint: null, ...m });
const STATES = {
  // name: [lesson message, flow state]
  "reading the first step": [{ step: 0, latest: 0 }, "reading"],
  "looking back while the clock runs": [{ step: 0, latest: 2 }, "back"],
  "asking question 2": [{ step: 2, latest: 2, checkpoint: "pods", paused: true }, "asking"],
  "asking question 2, step 1 looked at": [{ step: 1, latest: 2, checkpoint: "pods", paused: true }, "asking-back"],
  "asking question 2, step 0 looked at": [{ step: 0, latest: 2, checkpoint: "pods", paused: true }, "asking-back"],
  "question 2 revealed": [{ step: 2, latest: 2, checkpoint: "pods", paused: true, revealed: true, answer: 410 }, "revealed"],
  "question 2 revealed, step 1 looked at": [{ step: 1, latest: 2, checkpoint: "pods", paused: true, revealed: true, answer: 410 }, "revealed-back"],
  "asking question 1 (the first step with one)": [{ step: 1, latest: 1, checkpoint: "stop", paused: true }, "asking"],
  "reading the last step": [{ step: 2, latest: 2 }, "reading"],
};
// input -> [kind, message type] per state; inputs: next (N, →, PageDown, the Next button),
// prev (←, B, PageUp, Previous), reveal (the Reveal button), play (the room's Play), step.
const R = "lesson.reveal", N = "lesson.next", P = "lesson.prev";
const FLOW = {
  "reading the first step": { next: ["none"], prev: ["none"], reveal: ["none"], play: ["pass"], step: ["pass"] },
  "looking back while the clock runs": { next: ["forward", N], prev: ["none"], reveal: ["none"], play: ["pass"], step: ["pass"] },
  "asking question 2": { next: ["reveal", R], prev: ["back", P], reveal: ["reveal", R], play: ["reveal", R], step: ["reveal", R] },
  "asking question 2, step 1 looked at": { next: ["forward", N], prev: ["back", P], reveal: ["reveal", R], play: ["reveal", R], step: ["reveal", R] },
  "asking question 2, step 0 looked at": { next: ["forward", N], prev: ["none"], reveal: ["reveal", R], play: ["reveal", R], step: ["reveal", R] },
  "question 2 revealed": { next: ["close", N], prev: ["back", P], reveal: ["none"], play: ["pass"], step: ["pass"] },
  "question 2 revealed, step 1 looked at": { next: ["forward", N], prev: ["back", P], reveal: ["none"], play: ["pass"], step: ["pass"] },
  "asking question 1 (the first step with one)": { next: ["reveal", R], prev: ["back", P], reveal: ["reveal", R], play: ["reveal", R], step: ["reveal", R] },
  "reading the last step": { next: ["none"], prev: ["back", P], reveal: ["none"], play: ["pass"], step: ["pass"] },
};

test("the flow: what each input does in each state (the operator)", () => {
  for (const [name, [msg, state]] of Object.entries(STATES)) {
    const ls = at(msg);
    assert.equal(flowState(ls), state, name);
    for (const [input, [kind, type]] of Object.entries(FLOW[name])) {
      const r = press(ls, input, "operator");
      assert.equal(r.kind, kind, `${name}: ${input}`);
      assert.equal(r.message ? r.message.type : undefined, type, `${name}: ${input}`);
    }
  }
});

test("the flow: a viewer's presses never lead (Play and Step are the room's, refused by the server)", () => {
  for (const [name, [msg]] of Object.entries(STATES)) {
    for (const input of ["next", "prev", "reveal"]) assert.equal(press(at(msg), input, "viewer").message, null, `${name}: ${input}`);
    for (const input of ["play", "step"]) assert.equal(press(at(msg), input, "viewer").kind, "pass", `${name}: ${input}`);
  }
});

test("the rule: from any open question, no sequence of presses gets past it without a reveal", () => {
  // A little server that trusts the page: next looking back moves the step shown forward,
  // next at the question's step closes it (revealed or not) and shows the step after; reveal
  // shows the question's step. (The real one, controller/lessons.py, also reveals first.)
  const server = (ls, m) => {
    const q = questionStep(ls);
    if (m.type === "lesson.prev") return { step: Math.max(0, ls.step - 1), checkpoint: ls.checkpoint, revealed: ls.revealed };
    if (m.type === "lesson.reveal") return { step: q, checkpoint: ls.checkpoint, revealed: true };
    if (q >= 0 && ls.step < q) return { step: ls.step + 1, checkpoint: ls.checkpoint, revealed: ls.revealed };
    return { step: q + 1, checkpoint: null, revealed: false, closed: ls.checkpoint, wasRevealed: ls.revealed };
  };
  const inputs = ["next", "prev", "reveal", "play", "step"];
  // Every sequence of 5 presses from "asking question 2".
  const walk = (ls, depth, trail) => {
    if (depth === 0) return;
    for (const input of inputs) {
      const r = press(ls, input, "operator");
      if (!r.message) continue;
      const s = server(ls, r.message);
      if (s.closed) assert.ok(s.wasRevealed, `closed unrevealed after ${[...trail, input].join(", ")}`);
      if (s.closed) continue;
      walk(at({ step: s.step, latest: 2, checkpoint: s.checkpoint, paused: true, revealed: s.revealed, answer: 410 }), depth - 1, [...trail, input]);
    }
  };
  walk(at({ step: 2, latest: 2, checkpoint: "pods", paused: true }), 5, []);
  walk(at({ step: 0, latest: 2, checkpoint: "pods", paused: true }), 5, []);
});

test("looking back at an open question: the earlier step's text, the question named as its own step's", () => {
  const ls = at({ step: 1, latest: 2, checkpoint: "pods", paused: true });
  const v = lessonView(ls, "operator");
  assert.equal(v.step.id, "stop");
  assert.equal(v.checkpoint.id, "pods", "the open question stays the one asked");
  assert.equal(v.questionOf.index, 2);
  assert.match(v.questionOf.label, /question of step 3, "Its pods"/);
  assert.equal(v.nextLabel, "Back to the question");
  assert.equal(questionStep(ls), 2);
  assert.equal(lessonView(at({ step: 2, latest: 2, checkpoint: "pods", paused: true }), "operator").questionOf, null);
});

test("learning alone: the learner leads and answers; no counts before the reveal; keys work without the presenter view", () => {
  const ls = at({ step: 1, latest: 1, checkpoint: "stop", paused: true, solo: true });
  let v = lessonView(ls, "operator");
  assert.deepEqual([v.phase, v.canAnswer, v.canReveal, v.showCounts, v.solo], ["question", true, true, false, true]);
  const r = answer(ls, 2);
  assert.deepEqual(r.message, { type: "lesson.answer", checkpoint: "stop", answer: 2 });
  v = lessonView(r.state, "operator");
  assert.equal(v.phase, "answered");
  assert.equal(press(r.state, "next", "operator").kind, "reveal");
  assert.equal(keyAction("n", "operator"), "next");
  // A page for one: no class counts, no name asked, not even once revealed (issue #38).
  assert.deepEqual([v.showAnswered, v.askName], [false, false]);
  const shown = lessonView({ ...r.state, revealed: true, answer: 2 }, "operator");
  assert.deepEqual([shown.showCounts, shown.showAnswered], [false, false]);
  const viewer = lessonView(at({ step: 1, latest: 1, checkpoint: "stop", paused: true }), "viewer");
  assert.deepEqual([viewer.showAnswered, viewer.askName], [true, true]);
});

test("a viewer waiting at an open question is told who goes on", () => {
  assert.match(lessonView(at({ step: 1, latest: 1, checkpoint: "stop", paused: true }), "viewer").waiting, /presenter reveals/);
  assert.equal(lessonView(at({ step: 1, latest: 1, checkpoint: "stop", paused: true, revealed: true, answer: 2 }), "viewer").waiting, "");
});

test("focus: the step's nodes and zones; everything when the step names none", () => {
  const at = (step) => applyLessonSnapshot(emptyLesson(), def, { ...running, step });
  assert.equal(focusSet(at(0)), null);
  const f1 = focusSet(at(1));
  assert.deepEqual([inFocus(f1, "a-2", "a"), inFocus(f1, "a-1", "a")], [true, false]);
  const f2 = focusSet(at(2));
  assert.deepEqual([inFocus(f2, "a-1", "a"), inFocus(f2, "b-1", "b")], [true, false]);
  assert.equal(inFocus(null, "x", "y"), true);
});

test("learning alone, the clock stops at each step's text: Next goes on from there, not while it runs (issue #38)", () => {
  const reading = at({ step: 0, latest: 0, solo: true });
  assert.equal(press(reading, "next", "operator").kind, "none", "the clock runs: nothing to go on from");
  const stopped = { ...reading, clockPaused: true };
  assert.deepEqual(press(stopped, "next", "operator"), { kind: "go", message: { type: "lesson.next" } });
  const v = lessonView(stopped, "operator");
  assert.equal(v.nextLabel, "Go on (resume the clock)");
  assert.equal(v.canNext, true);
  assert.match(v.waiting, /waits while you read/);
  // A class's teacher: the clock leads, as before.
  assert.equal(press({ ...at({ step: 0, latest: 0 }), clockPaused: true }, "next", "operator").kind, "none");
  // A message keeps the clock's state (it is the page's, not the lesson's).
  assert.equal(applyLessonMessage(stopped, { type: "lesson", step: 0, latest: 0, solo: true }).clockPaused, true);
});

test("a step's kubectl commands: shown as written, in order; none when the step has none or they are not text", () => {
  const withCmds = { ...def, steps: def.steps.map((s, i) => (i === 1 ? { ...s, kubectl: ["kubectl get nodes -w", 7, "kubectl describe node a-2"] } : s)) };
  const ls = applyLessonSnapshot(emptyLesson(), withCmds, atStop);
  assert.deepEqual(lessonView(ls, "viewer").kubectl, ["kubectl get nodes -w", "kubectl describe node a-2"]);
  assert.deepEqual(lessonView(applyLessonSnapshot(emptyLesson(), def, running), "viewer").kubectl, []);
});

test("a step's text comes when the lesson reaches it: the message's def replaces the page's; without one it stays", () => {
  const withheld = { ...def, steps: [def.steps[0], { withheld: true }, { withheld: true }] };
  let ls = applyLessonSnapshot(emptyLesson(), withheld, { ...running, latest: 0 });
  let v = lessonView(ls, "viewer");
  assert.equal(v.progress, "step 1 of 3", "the step list still counts every step");
  assert.equal(ls.def.steps[1].text, undefined);
  ls = applyLessonMessage(ls, { ...atStop, latest: 1, def: { ...def, steps: [def.steps[0], def.steps[1], { withheld: true }] } });
  v = lessonView(ls, "viewer");
  assert.deepEqual([v.phase, v.step.title, v.checkpoint.id], ["question", "a-2 goes silent", "stop"]);
  // A message without def (an answer counted) keeps the steps the page has; Previous shows step 1.
  ls = applyLessonMessage(ls, { ...atStop, latest: 1, step: 0, answered: 2 });
  assert.equal(lessonView(ls, "viewer").step.title, "A healthy cluster");
  assert.equal(ls.def.steps[1].title, "a-2 goes silent");
  assert.equal(ls.def.steps[2].withheld, true);
});
