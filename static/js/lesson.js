// A lesson on the room page: a small pure state machine (no DOM), so that it is unit tested
// (tests/js/lesson.test.mjs). The server is the truth: the step shown, the checkpoint the
// room is paused at, whether it is revealed, the class's counts; this module only folds its
// messages, remembers this browser's own answer, and says what the panel should show.
//
// Messages (LESSON-CONTRACT.md):
//   server -> page  {type: "lesson", step, checkpoint, paused, counts, answered, revealed,
//                    answer?, why?, right?, names?, mine?}   (answer/why only once revealed)
//   page -> server  {type: "lesson.answer", checkpoint, answer, name?}
//                   {type: "lesson.reveal"} {type: "lesson.next"} {type: "lesson.prev"} (operator)

export function emptyLesson() {
  return { def: null, step: 0, checkpoint: null, paused: false, counts: {}, answered: 0, revealed: false,
    answer: null, why: "", right: null, names: [], mine: null, error: "" };
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
    step: Number.isInteger(m.step) ? m.step : ls.step,
    checkpoint,
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

// "410", "410s", "410 s", "6m50s", "06:50" -> seconds; null when it is none of these.
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
      return { state: { ...ls, error: "Give a time in seconds, e.g. 410, 410s, 6m50s or 06:50." }, message: null };
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

// What the panel shows, for a role ("operator" or "viewer"). phase: "none" (no lesson),
// "step" (reading; the clock runs), "question" (paused, not answered here), "answered"
// (paused, this browser answered), "revealed".
export function lessonView(ls, role) {
  const step = currentStep(ls);
  if (!step) return { phase: "none" };
  const steps = ls.def.steps;
  const cp = askedCheckpoint(ls);
  const operator = role === "operator";
  let phase = "step";
  if (cp) phase = ls.revealed ? "revealed" : ls.mine ? "answered" : "question";
  if (cp && operator && phase === "question") phase = "asking";
  const view = {
    phase,
    title: ls.def.title,
    summary: ls.def.summary || "",
    index: ls.step,
    total: steps.length,
    progress: `step ${ls.step + 1} of ${steps.length}`,
    step,
    paragraphs: String(step.text || "").split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean),
    focus: step.focus || null,
    checkpoint: cp,
    answered: ls.answered,
    answeredText: `${ls.answered} ${ls.answered === 1 ? "answer" : "answers"}`,
    // The class's counts: the operator sees them come in; viewers once revealed (so that
    // nobody copies the majority).
    showCounts: Boolean(cp) && (operator || ls.revealed),
    bars: cp ? bars(ls, cp) : [],
    canAnswer: Boolean(cp) && !operator && !ls.revealed,
    mine: ls.mine ? ls.mine.value : null,
    mineRight: ls.revealed && ls.mine && cp ? isRight({ ...cp, answer: ls.answer }, ls.mine.value) : null,
    answerText: "",
    why: ls.revealed ? ls.why : "",
    names: operator ? ls.names : [],
    canReveal: operator && Boolean(cp) && !ls.revealed,
    canNext: operator && (Boolean(cp) || ls.step < steps.length - 1),
    canPrev: operator && ls.step > 0,
    nextLabel: cp ? (ls.step < steps.length - 1 ? "Next step (resume the clock)" : "Resume the clock") : "Next step",
    error: ls.error,
  };
  if (cp && ls.revealed && ls.answer !== null) {
    view.answerText = cp.kind === "choice" ? cp.choices[ls.answer] : `${ls.answer} s (${mmss(ls.answer)})${cp.tolerance ? `, ± ${cp.tolerance} s` : ""}`;
  }
  return view;
}

// Keyboard in the presenter view: N or → next, ← or B previous (operators only).
export function keyAction(key, role, presenter) {
  if (role !== "operator" || !presenter) return null;
  if (key === "n" || key === "N" || key === "ArrowRight" || key === "PageDown") return "lesson.next";
  if (key === "ArrowLeft" || key === "b" || key === "B" || key === "PageUp") return "lesson.prev";
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
