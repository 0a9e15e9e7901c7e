// A lesson on the room page: a small pure state machine (no DOM), so that it is unit tested
// (tests/js/lesson.test.mjs). The server is the truth: the step shown, the checkpoint the
// room is paused at, whether it is revealed, the class's counts; this module only folds its
// messages, remembers this browser's own answer, and says what the panel should show.
//
// Messages (LESSON-CONTRACT.md):
//   server -> page  {type: "lesson", step, latest, checkpoint, paused, counts, answered, revealed,
//                    solo?, answer?, why?, right?, names?, mine?, def?}   (answer/why only once revealed)
//                   def: the lesson up to step `latest` (later steps are {withheld: true}: a step's
//                   text comes only once the lesson reaches it), sent when `latest` changed
//   page -> server  {type: "lesson.answer", checkpoint, answer, name?}
//                   {type: "lesson.reveal"} {type: "lesson.next"} {type: "lesson.prev"} (operator)
//
// The flow has one rule: a checkpoint's question is never left unrevealed. Every press that
// would move on (Next, N, ->, PageDown, Play, Step) on an open, unrevealed question reveals it
// first; a second press moves on. Previous and Next only move the step shown: the open question
// stays open (and stays the question asked) while earlier steps are looked at, Next comes back
// to it, and Next never shows a step the clock has not reached (`latest`): a step's text may
// speak of what happens when it begins, never of what has not happened yet. `press` is that
// table (tests/js/lesson.test.mjs walks every input at every state); the server applies the
// same rule to the messages it gets (controller/lessons.py), so a page that is behind cannot
// break it either.

export function emptyLesson() {
  return { def: null, step: 0, latest: 0, checkpoint: null, paused: false, counts: {}, answered: 0, revealed: false,
    solo: false, answer: null, why: "", right: null, names: [], mine: null, error: "" };
}

// The lesson's definition (from the snapshot) and its state.
export function applyLessonSnapshot(ls, def, msg) {
  const out = applyLessonMessage({ ...emptyLesson(), def: def || null }, msg || {});
  return out;
}

// A "lesson" broadcast: the server's state replaces ours; our own answer is kept while the
// checkpoint is the same one (a broadcast carries "mine" only on the connection it is sent to).
export function applyLessonMessage(ls, m) {
  const checkpoint = m.checkpoint ?? null;
  let mine = ls.mine;
  if (m.mine !== undefined) mine = m.mine === null ? null : { checkpoint, value: m.mine };
  if (mine && mine.checkpoint !== checkpoint) mine = null;
  return {
    ...ls,
    def: m.def ? m.def : ls.def,
    step: Number.isInteger(m.step) ? m.step : ls.step,
    latest: Number.isInteger(m.latest) ? m.latest : Number.isInteger(m.step) ? m.step : ls.latest,
    checkpoint,
    solo: m.solo === undefined ? ls.solo : Boolean(m.solo),
    paused: Boolean(m.paused),
    counts: m.counts || {},
    answered: m.answered || 0,
    revealed: Boolean(m.revealed),
    answer: m.revealed ? m.answer ?? null : null,
    why: m.revealed ? m.why || "" : "",
    right: m.revealed ? m.right ?? null : null,
    names: m.names || [],
    mine,
    error: "",
  };
}

export function currentStep(ls) {
  if (!ls.def || !ls.def.steps || !ls.def.steps.length) return null;
  return ls.def.steps[Math.max(0, Math.min(ls.step, ls.def.steps.length - 1))];
}

// The checkpoint being asked (the room is paused at it), or null.
export function askedCheckpoint(ls) {
  if (!ls.def || !ls.checkpoint) return null;
  for (const s of ls.def.steps) if (s.checkpoint && s.checkpoint.id === ls.checkpoint) return s.checkpoint;
  return null;
}

// How the time box says what it takes: no number in it, so never a lesson's answer (an example
// time would be one, as the demo lesson's second answer once was).
export const TIME_HINT = "seconds, or XmYs, or mm:ss";
export const TIME_ERROR = "Give a time in seconds (with or without s), or in minutes and seconds as XmYs or mm:ss.";

// "N", "Ns", "N s", "XmYs", "mm:ss" -> seconds; null when it is none of these.
export function parseTimeGuess(text) {
  const s = String(text ?? "").trim().toLowerCase();
  if (!s) return null;
  let m = s.match(/^(\d+(?:\.\d+)?)\s*s?$/);
  if (m) return Number(m[1]);
  m = s.match(/^(\d+)\s*m\s*(?:(\d+(?:\.\d+)?)\s*s)?$/);
  if (m) return Number(m[1]) * 60 + Number(m[2] || 0);
  m = s.match(/^(\d+):([0-5]\d(?:\.\d+)?)$/);
  if (m) return Number(m[1]) * 60 + Number(m[2]);
  return null;
}

// This browser answers: the message to send, or an error that says what is wrong (nothing sent).
export function answer(ls, value, name = "") {
  const cp = askedCheckpoint(ls);
  if (!cp) return { state: { ...ls, error: "No question is open right now." }, message: null };
  if (ls.revealed) return { state: { ...ls, error: "The answer has been revealed." }, message: null };
  let v = value;
  if (cp.kind === "choice") {
    if (!Number.isInteger(v) || v < 0 || v >= cp.choices.length) {
      return { state: { ...ls, error: `Pick one of the ${cp.choices.length} choices.` }, message: null };
    }
  } else {
    if (typeof v !== "number") v = parseTimeGuess(v);
    if (v === null || !Number.isFinite(v) || v < 0) {
      return { state: { ...ls, error: TIME_ERROR }, message: null };
    }
  }
  const message = { type: "lesson.answer", checkpoint: cp.id, answer: v };
  if (name && String(name).trim()) message.name = String(name).trim().slice(0, 40);
  return { state: { ...ls, mine: { checkpoint: cp.id, value: v }, error: "" }, message };
}

export function isRight(cp, value) {
  if (!cp || value === null || value === undefined) return false;
  if (cp.kind === "choice") return value === cp.answer;
  return Math.abs(value - cp.answer) <= (cp.tolerance || 0);
}

// Seconds as the page's clock shows them (mm:ss), for time questions.
function mmss(s) {
  const m = Math.floor(s / 60), r = s - m * 60;
  return `${String(m).padStart(2, "0")}:${String(Math.round(r)).padStart(2, "0")}`;
}

// Bars of the class's answers. Choice: one per choice, in order. Time: one per distinct
// guess (whole seconds), in time order, the right ones marked once revealed.
export function bars(ls, cp) {
  const total = Object.values(ls.counts).reduce((a, b) => a + b, 0);
  const pct = (n) => (total ? Math.round((n / total) * 100) : 0);
  if (cp.kind === "choice") {
    return cp.choices.map((label, i) => {
      const n = ls.counts[String(i)] || 0;
      return { key: String(i), label, count: n, pct: pct(n), right: ls.revealed ? i === ls.answer : null,
        mine: ls.mine !== null && ls.mine.value === i };
    });
  }
  const keys = Object.keys(ls.counts).map(Number).sort((a, b) => a - b);
  const answer = ls.revealed ? { ...cp, answer: ls.answer } : null;
  return keys.map((k) => {
    const n = ls.counts[String(k)] || 0;
    return { key: String(k), label: `${k} s (${mmss(k)})`, count: n, pct: pct(n),
      right: answer ? isRight(answer, k) : null, mine: ls.mine !== null && Math.round(ls.mine.value) === k };
  });
}

// The index of the step whose checkpoint is open (-1: no question is open).
export function questionStep(ls) {
  if (!ls.def || !ls.checkpoint) return -1;
  return ls.def.steps.findIndex((s) => s.checkpoint && s.checkpoint.id === ls.checkpoint);
}

// Where the flow is:
//   "none"           no lesson
//   "reading"        no question open; the step shown is the latest the clock has reached
//   "back"           no question open; an earlier step is shown (Next goes forward)
//   "asking"         a question open, not revealed, its step shown
//   "asking-back"    a question open, not revealed, an earlier step shown
//   "revealed"       a question open and revealed, its step shown
//   "revealed-back"  a question open and revealed, an earlier step shown
export function flowState(ls) {
  if (!currentStep(ls)) return "none";
  const q = questionStep(ls);
  if (q < 0) return ls.step < ls.latest ? "back" : "reading";
  const back = ls.step < q ? "-back" : "";
  return (ls.revealed ? "revealed" : "asking") + back;
}

const NEXT = { type: "lesson.next" };
const PREV = { type: "lesson.prev" };
const REVEAL = { type: "lesson.reveal" };

// What a press of the lesson's leader does. input: "next" (Next, N, ->, PageDown), "prev"
// (Previous, <-, B, PageUp), "reveal" (Reveal), "play" (the room's Play), "step" (the room's
// Step). Returns {kind, message}: kind "reveal" | "next" | "forward" | "back" | "close" |
// "none" (nothing happens) | "pass" (not the lesson's business: the room's control goes
// ahead; at a revealed question the server's resume closes it and shows the next step).
export function press(ls, input, role) {
  const none = { kind: "none", message: null };
  if (role !== "operator") return input === "play" || input === "step" ? { kind: "pass", message: null } : none;
  const state = flowState(ls);
  if (state === "none") return input === "play" || input === "step" ? { kind: "pass", message: null } : none;
  if (input === "prev") return ls.step > 0 ? { kind: "back", message: PREV } : none;
  const asking = state.startsWith("asking");
  if (input === "reveal") return asking ? { kind: "reveal", message: REVEAL } : none;
  if (input === "play" || input === "step") return asking ? { kind: "reveal", message: REVEAL } : { kind: "pass", message: null };
  if (input !== "next") return none;
  switch (state) {
    // The clock leads: the next step begins when it gets there. Learning alone, the clock
    // stops at each step's text (controller/lessons/progress.py): Next goes on from there.
    case "reading": return ls.solo && ls.clockPaused ? { kind: "go", message: NEXT } : none;
    case "back": case "asking-back": case "revealed-back": return { kind: "forward", message: NEXT };
    case "asking": return { kind: "reveal", message: REVEAL };
    case "revealed": return { kind: "close", message: NEXT };
    default: return none;
  }
}

const NEXT_LABELS = {
  reveal: "Reveal the answer",
  forward: "Next step",
  close: "Next step (resume the clock)",
  go: "Go on (resume the clock)",
  none: "Next step",
};

// What the panel shows, for a role ("operator" or "viewer"). phase: "none" (no lesson),
// "step" (reading; the clock runs), "question" (paused, not answered here), "answered"
// (paused, this browser answered), "asking" (the operator of a class, before the reveal),
// "revealed". opts.presenter: the page is on the projector (no names of who answered).
export function lessonView(ls, role, opts = {}) {
  const step = currentStep(ls);
  if (!step) return { phase: "none", flow: "none" };
  const steps = ls.def.steps;
  const cp = askedCheckpoint(ls);
  const operator = role === "operator";
  // Learning alone: the learner leads the lesson and answers it too.
  const answers = !operator || ls.solo;
  let phase = "step";
  if (cp) phase = ls.revealed ? "revealed" : ls.mine ? "answered" : "question";
  if (cp && !answers && phase === "question") phase = "asking";
  const flow = flowState(ls);
  const q = questionStep(ls);
  const next = press(ls, "next", role);
  const last = ls.step >= steps.length - 1;
  let nextLabel = NEXT_LABELS[next.kind];
  if (next.kind === "close" && last) nextLabel = "Resume the clock";
  if (next.kind === "forward" && q >= 0 && ls.step + 1 === q) nextLabel = "Back to the question";
  const view = {
    phase,
    flow,
    title: ls.def.title,
    summary: ls.def.summary || "",
    index: ls.step,
    total: steps.length,
    progress: `step ${ls.step + 1} of ${steps.length}`,
    step,
    paragraphs: String(step.text || "").split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean),
    // The kubectl commands the step asks the class to run against the room's API (shown as
    // written, copyable, beside the room's kubeconfig).
    kubectl: Array.isArray(step.kubectl) ? step.kubectl.filter((c) => typeof c === "string") : [],
    focus: step.focus || null,
    checkpoint: cp,
    // An earlier step is shown while a question is open: the question says whose it is.
    questionOf: cp && q !== ls.step ? { index: q, title: steps[q].title, label: `the question of step ${q + 1}, "${steps[q].title}"` } : null,
    solo: Boolean(ls.solo),
    answered: ls.answered,
    answeredText: `${ls.answered} ${ls.answered === 1 ? "answer" : "answers"}`,
    // The class's counts: the operator's own page sees them come in; viewers and the
    // projector (the class reads it) once revealed, so that nobody follows the majority.
    // Learning alone there is no class: no counts, no bars, no name (issue #38).
    showCounts: Boolean(cp) && !ls.solo && ((operator && !opts.presenter) || ls.revealed),
    showAnswered: Boolean(cp) && !ls.solo,
    askName: !ls.solo,
    bars: cp ? bars(ls, cp) : [],
    canAnswer: Boolean(cp) && answers && !ls.revealed,
    mine: ls.mine ? ls.mine.value : null,
    mineRight: ls.revealed && ls.mine && cp ? isRight({ ...cp, answer: ls.answer }, ls.mine.value) : null,
    answerText: "",
    why: ls.revealed ? ls.why : "",
    names: operator && !opts.presenter ? ls.names : [],
    canReveal: press(ls, "reveal", role).kind === "reveal",
    canNext: next.kind !== "none",
    nextKind: next.kind,
    canPrev: press(ls, "prev", role).kind !== "none",
    nextLabel,
    // Nothing to press: say who goes on.
    waiting: "",
    error: ls.error,
  };
  if (operator && flow === "reading" && !last) {
    view.waiting = !ls.solo ? "The clock leads: the next step begins when it gets there."
      : ls.clockPaused ? "The clock waits while you read. Next (N) goes on."
      : "The clock runs; it stops at the next step for you to read it.";
  }
  if (!operator && cp && !ls.revealed) view.waiting = "The presenter reveals the answer when the class has answered.";
  if (cp && ls.revealed && ls.answer !== null) {
    view.answerText = cp.kind === "choice" ? cp.choices[ls.answer] : `${ls.answer} s (${mmss(ls.answer)})${cp.tolerance ? `, ± ${cp.tolerance} s` : ""}`;
  }
  return view;
}

// Keyboard of the lesson's leader (the operator: a class's teacher, on the normal page or the
// presenter view, or a learner alone; issue #38): N, -> or PageDown next; P, <-, B or PageUp
// previous. static/js/keys.js adds the page's other keys and lists them all under `?`.
export function keyAction(key, role) {
  if (role !== "operator") return null;
  if (key === "n" || key === "N" || key === "ArrowRight" || key === "PageDown") return "next";
  if (key === "p" || key === "P" || key === "ArrowLeft" || key === "b" || key === "B" || key === "PageUp") return "prev";
  return null;
}

// Which nodes and zones the step points at: the presenter view dims the others. null = all.
export function focusSet(ls) {
  const step = currentStep(ls);
  const f = step && step.focus;
  if (!f || (!(f.nodes || []).length && !(f.zones || []).length)) return null;
  return { nodes: new Set(f.nodes || []), zones: new Set(f.zones || []) };
}

export function inFocus(focus, node, zone) {
  if (!focus) return true;
  return focus.nodes.has(node) || focus.zones.has(zone);
}
