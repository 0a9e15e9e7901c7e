// The lesson panel of the room page: renders static/js/lesson.js's view (the step, the
// question, the class's answers, the reveal) and sends the page's messages. room.js gives it
// the websocket's send and is told which nodes and zones the step focuses on.
import { h } from "./dom.js";
import { TIME_HINT, answer, applyLessonMessage, applyLessonSnapshot, emptyLesson, focusSet, lessonView, press } from "./lesson.js";

// A lead press not yet answered by the server (its lesson message) for this long is
// forgotten: the next press is sent again.
const INFLIGHT_MS = 3000;

export class LessonPanel {
  constructor(el, { operator, send, onFocus, slug }) {
    this.el = el;
    this.slug = slug || "";
    this.role = operator ? "operator" : "viewer";
    this.send = send;
    this.onFocus = onFocus || (() => {});
    this.ls = emptyLesson();
    // What is typed in the time box survives re-renders (counts arrive) of its own question;
    // each question starts with an empty box (an answer left in it was sent again unread).
    this.timeText = "";
    this.timeFor = null;
    this.lastFocusKey = null;
    this.name = localStorage.getItem("playground-lesson-name") || "";
    // The keys (N, P, Space...) are room.js's (static/js/keys.js): it calls press() and play().
    this.inflight = 0;  // when the last lead press was sent (0: answered)
    // The room's Play and Step buttons (room.js) at an open question: the lesson's rule first
    // (reveal before the clock goes on). Capture: this runs before the room's own handler.
    document.addEventListener("click", (ev) => {
      const b = ev.target.closest && ev.target.closest("button[data-ctl]");
      if (!b || !this.ls.def || !["resume", "step"].includes(b.dataset.ctl)) return;
      const r = press(this.ls, b.dataset.ctl === "resume" ? "play" : "step", this.role);
      if (r.kind === "pass") return;
      ev.stopImmediatePropagation();
      ev.preventDefault();
      this.lead(r.message);
    }, true);
  }

  // A lead message sent, stamped with the state this page shows (the step, the open question,
  // revealed or not): the server ignores a press made on a state it has left (a key pressed
  // twice before the first was answered), quietly, and tells this page where it is. While a
  // press is unanswered, another one here is absorbed (issue #38: never a red error for it).
  lead(message) {
    if (!message) return false;
    if (this.inflight && performance.now() - this.inflight < INFLIGHT_MS) return true;
    this.inflight = performance.now();
    this.send({ ...message, at: this.stamp() });
    return true;
  }

  // The lesson state this page shows, for a press to carry (null: no lesson). The room's Play
  // and Step carry it too: pressed on a state the lesson has left (a second Step after the
  // first reached the next question), they do nothing rather than reveal a question that
  // this page never showed (issue #38).
  stamp() {
    if (!this.ls.def) return null;
    return { step: this.ls.step, checkpoint: this.ls.checkpoint, revealed: this.ls.revealed };
  }

  // The room's clock, paused or running (room.js): learning alone, the clock stops at each
  // step's text, and Next goes on from there.
  clock(paused) {
    if (Boolean(this.ls.clockPaused) === Boolean(paused)) return;
    this.ls = { ...this.ls, clockPaused: Boolean(paused) };
    if (this.ls.def) this.render();
  }

  // Space's Play at an open question: the lesson's rule first (reveal). True when the lesson
  // took the press (the room's Play is not sent).
  play() {
    if (!this.ls.def) return false;
    const r = press(this.ls, "play", this.role);
    if (r.kind === "pass") return false;
    this.lead(r.message);
    return true;
  }

  presenter() { return document.body.classList.contains("presenter"); }

  // A press of the lesson's leader (a key or a button): what lesson.js's flow says it does.
  press(input) {
    if (!this.ls.def) return null;
    const r = press(this.ls, input, this.role);
    this.lead(r.message);
    return r;
  }

  snapshot(lesson) {
    this.inflight = 0;
    const paused = this.ls.clockPaused;
    this.ls = lesson ? applyLessonSnapshot(emptyLesson(), lesson.def, lesson.state) : emptyLesson();
    this.ls.clockPaused = paused;
    this.reached = (lesson && lesson.state && lesson.state.reached) || {};
    this.render();
  }

  message(m) {
    this.inflight = 0;
    this.ls = applyLessonMessage(this.ls, m);
    if (m.reached) this.reached = m.reached;
    this.render();
  }

  // This page answers an open question not yet revealed (a viewer, or a learner alone): it
  // shows no predictions (countdowns) that would answer it. A class's operator sees them.
  holdsPredictions() {
    // A viewer, a learner alone, and the projector (the class reads the presenter view).
    return Boolean(this.ls.def && this.ls.checkpoint && !this.ls.revealed) && (this.role !== "operator" || Boolean(this.ls.solo) || this.presenter());
  }

  // For the time scrubber: the lesson's steps, the open checkpoint and where the room paused.
  timeline() {
    if (!this.ls.def) return null;
    return { def: this.ls.def, state: { checkpoint: this.ls.checkpoint, revealed: this.ls.revealed, reached: this.reached || {} } };
  }

  // An error from the server about this page's answer: the answer did not count.
  error(text) {
    if (/^lesson\./.test(text || "")) this.inflight = 0;
    if (!/^lesson\.answer/.test(text || "")) return;
    this.ls = { ...this.ls, mine: null, error: text };
    this.render();
  }

  focus() { return document.body.classList.contains("lesson-focus") ? focusSet(this.ls) : null; }

  answer(value) {
    const r = answer(this.ls, value, this.name);
    this.ls = r.state;
    if (r.message) this.send(r.message);
    this.render();
  }

  render() {
    const v = lessonView(this.ls, this.role, { presenter: this.presenter() });
    document.body.classList.toggle("lesson-room", v.phase !== "none");
    document.body.classList.toggle("lesson-solo", Boolean(v.solo));
    const focus = focusSet(this.ls);
    document.body.classList.toggle("lesson-focus", Boolean(focus));
    const key = JSON.stringify(focus ? [[...focus.nodes], [...focus.zones]] : null);
    if (key !== this.lastFocusKey) { this.lastFocusKey = key; this.onFocus(focus); }
    if (v.phase === "none") { this.el.hidden = true; return; }
    this.el.hidden = false;
    this.el.dataset.phase = v.phase;
    this.el.dataset.step = v.step.id;
    this.el.dataset.flow = v.flow;
    this.el.dataset.next = v.nextKind;
    const kids = [
      h("p", { class: "lesson-head muted" }, h("strong", { text: v.title }), ` · ${v.progress}`),
      h("h2", { class: "lesson-title", text: v.step.title }),
      ...v.paragraphs.map((p) => h("p", { class: "lesson-text", text: p })),
    ];
    if (v.kubectl.length) kids.push(this.commands(v.kubectl));
    if (v.checkpoint) kids.push(this.question(v));
    if (v.waiting) kids.push(h("p", { class: "lesson-waiting muted", text: v.waiting }));
    if (v.error) kids.push(h("p", { class: "lesson-error", role: "alert", text: v.error }));
    if (this.role === "operator") kids.push(this.controls(v));
    // Someone else's answer re-renders the panel: whoever is typing keeps the box and caret.
    const active = this.el.contains(document.activeElement) ? document.activeElement : null;
    const keep = active && active.tagName === "INPUT" ? { cls: active.className, at: active.selectionStart } : null;
    this.el.replaceChildren(...kids);
    if (keep) {
      const again = this.el.querySelector(`input.${keep.cls.split(" ")[0]}`);
      if (again) { again.focus(); if (keep.at !== null) again.setSelectionRange(keep.at, keep.at); }
    }
  }

  question(v) {
    const cp = v.checkpoint;
    const box = h("div", { class: `lesson-question${v.questionOf ? " elsewhere" : ""}`, "data-checkpoint": cp.id },
      v.questionOf ? h("p", { class: "question-of muted", text: `Still open: ${v.questionOf.label}.` }) : null,
      h("p", { class: "q" }, h("span", { class: "q-mark", "aria-hidden": "true", text: "?" }), " ", h("strong", { text: cp.question })));
    if (v.canAnswer) {
      if (cp.kind === "choice") {
        box.append(h("div", { class: "choices", role: "group", "aria-label": "choices" }, ...cp.choices.map((label, i) => {
          const chosen = v.mine === i;
          const b = h("button", { class: `choice${chosen ? " chosen" : ""}`, "data-index": String(i), text: `${chosen ? "✔ " : ""}${label}` });
          b.setAttribute("aria-pressed", chosen ? "true" : "false");
          b.addEventListener("click", () => this.answer(i));
          return b;
        })));
      } else {
        if (this.timeFor !== cp.id) { this.timeFor = cp.id; this.timeText = ""; }
        const input = h("input", { class: "time-guess", type: "text", inputMode: "numeric", placeholder: TIME_HINT, value: this.timeText, size: 22 });
        input.setAttribute("aria-label", "your guess, in simulated seconds");
        input.addEventListener("input", () => { this.timeText = input.value; });
        const form = h("form", { class: "time-form" }, h("label", {}, "Your guess ", input, " (simulated time)"), " ", h("button", { type: "submit", text: "Answer" }));
        form.addEventListener("submit", (ev) => { ev.preventDefault(); this.answer(input.value); });
        box.append(form);
      }
      if (v.askName) {
        const name = h("input", { class: "answer-name", type: "text", value: this.name, maxLength: 40, placeholder: "optional", size: 14 });
        name.addEventListener("input", () => { this.name = name.value; localStorage.setItem("playground-lesson-name", name.value); });
        box.append(h("p", { class: "muted small" }, h("label", {}, "Your name ", name), " (only the operator sees it, and only if you give it)"));
      }
    }
    if (v.phase === "answered") {
      const mine = cp.kind === "choice" ? cp.choices[v.mine] : `${v.mine} s`;
      box.append(h("p", { class: "answered-note", text: `✔ Your answer: ${mine}. You can change it until the reveal.` }));
    }
    if (v.showAnswered) box.append(h("p", { class: "answer-count", text: `${v.answeredText} so far` }));
    if (v.showCounts) box.append(this.bars(v));
    if (v.phase === "revealed") {
      box.append(h("div", { class: "reveal" },
        h("p", { class: "right-answer" }, h("span", { "aria-hidden": "true", text: "✔ " }), "Answer: ", h("strong", { text: v.answerText })),
        v.mineRight === null ? null : h("p", { class: v.mineRight ? "mine-right" : "mine-wrong", text: v.mineRight ? "You got it right." : "Not quite: see why below." }),
        h("p", { class: "why-text" }, h("strong", { text: "Why: " }), v.why)));
    }
    if (v.names.length) {
      box.append(h("p", { class: "names muted", text: `Named answers: ${v.names.map((n) => `${n.name} (${cp.kind === "choice" ? cp.choices[n.answer] : n.answer + " s"})`).join(", ")}` }));
    }
    return box;
  }

  // The step's kubectl commands: each copyable, with the room's kubeconfig (the viewer's: it
  // reads, which is all a lesson asks) at hand, also on a page without the "Use kubectl" card.
  commands(list) {
    const file = `${this.slug}-viewer.kubeconfig`;
    const href = `/rooms/${encodeURIComponent(this.slug)}/kubeconfig`;
    const box = h("div", { class: "lesson-kubectl" },
      h("p", { class: "kubectl-head" }, "Run in a terminal, with this room's ",
        h("a", { class: "kubectl-config", href, download: file, text: "kubeconfig" }), ": ",
        h("code", { class: "kubectl-export", text: `export KUBECONFIG=~/Downloads/${file}` })),
      h("ul", { class: "kubectl-commands" }, ...list.map((cmd) => {
        const code = h("code", { class: "cmd", text: cmd });
        const copy = h("button", { class: "copy-cmd", type: "button", text: "Copy", title: "copy the command" });
        copy.addEventListener("click", () => copyText(code, copy));
        return h("li", {}, code, " ", copy);
      })));
    box.setAttribute("aria-label", "kubectl commands");
    return box;
  }

  bars(v) {
    if (!v.bars.length) return h("p", { class: "muted", text: "No answers yet." });
    return h("ul", { class: "bars", "aria-label": "how the class answered" }, ...v.bars.map((b) =>
      h("li", { class: `bar-row${b.right ? " right" : ""}${b.mine ? " mine" : ""}`, "data-key": b.key },
        h("span", { class: "bar-label", text: `${b.right ? "✔ " : ""}${b.label}` }),
        h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: `width:${b.pct}%` })),
        h("span", { class: "bar-count", text: `${b.count} (${b.pct}%)${b.mine ? " · you" : ""}` }))));
  }

  controls(v) {
    const mk = (kind, label, enabled, title) => {
      const b = h("button", { class: `lesson-${kind}`, text: label, disabled: !enabled, title });
      b.addEventListener("click", () => this.press(kind));
      return b;
    };
    // Next reveals when the question's step is shown: then one button does both jobs (it is
    // the Reveal button too), not two saying the same.
    const next = mk("next", `${v.nextLabel} ▶`, v.canNext, v.nextKind === "reveal" ? "the answer first, then the next step (key N or →)" : "key N or →");
    if (v.nextKind === "reveal") next.classList.add("lesson-reveal");
    return h("div", { class: "lesson-controls" },
      mk("prev", "◀ Previous", v.canPrev, "show the previous step (key ←)"),
      v.canReveal && v.nextKind !== "reveal" ? mk("reveal", "Reveal the answer", true, "show the right answer, how the class answered, and why") : null,
      next);
  }
}

// Copies a command (the clipboard needs a secure page: on plain http the text is selected
// instead, for Ctrl+C).
function copyText(code, button) {
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = "Selected";
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(code.textContent).then(() => { button.textContent = "Copied"; }, select);
  } else select();
}
