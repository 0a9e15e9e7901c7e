// The time scrubber under the cluster: the room's time from 0 to now, the timeline's events as
// marks in lanes (faults, nodes, taints, pods, zones), the lesson's checkpoints as flags, and
// the clock as a handle. An operator drags the handle to rewind the room there; a viewer sees
// it read-only. The marks' arithmetic is pure (exported, tests/js/scrubber.test.mjs).
import { h, setStyle, setText } from "./dom.js";
import { timed } from "./perf.js";
import { fmtShort, fmtTime } from "./state.js";

export const LANES = [
  { kind: "fault", label: "faults", one: "fault", color: "#2e7dd7" },
  { kind: "node", label: "nodes", one: "node", color: "#7f8c8d" },
  { kind: "taint", label: "taints", one: "taint", color: "#d9a400" },
  { kind: "pod", label: "pods deleted", one: "pod deleted", color: "#c0392b" },
  { kind: "zone", label: "zones", one: "zone", color: "#8e44ad" },
];

// Which lane an event is marked in; null: not marked (pods created, scheduled, ready, ...).
export function markKind(e) {
  switch (e.type) {
    case "Fault": case "FaultRefused": return "fault";
    case "NodeReady": case "NodePoweredOff": return "node";
    case "TaintAdded": case "TaintRemoved": return e.effect === "NoExecute" || e.key === "node.kubernetes.io/out-of-service" ? "taint" : null;
    case "PodDeleted": case "PodEvicted": return "pod";
    case "ZoneState": return "zone";
    default: return null;
  }
}

// Events -> one mark per (pixel column, lane): [{x, kind, count, t}] over `width` pixels for
// the times [0, end]. Events past `until` (an open question's pause) are left out.
export function scrubMarks(events, end, width, until = Infinity) {
  const cols = new Map();
  if (!(end > 0) || !(width > 0)) return [];
  for (const e of events) {
    const kind = markKind(e);
    if (!kind || e.t > until || e.t < 0) continue;
    const x = Math.min(width - 1, Math.floor((e.t / end) * width));
    const key = `${x}|${kind}`;
    const m = cols.get(key);
    if (m) m.count++; else cols.set(key, { x, kind, count: 1, t: e.t });
  }
  return [...cols.values()].sort((a, b) => a.x - b.x || a.kind.localeCompare(b.kind));
}

// What the marks near pixel column `x` (within `radius`) stand for, for a hover readout:
// "3 nodes, 1 taint" (lanes in their order), or "" where there is none.
export function marksNear(marks, x, radius = 3) {
  const counts = new Map();
  for (const m of marks) if (Math.abs(m.x - x) <= radius) counts.set(m.kind, (counts.get(m.kind) || 0) + m.count);
  return LANES.filter((l) => counts.has(l.kind)).map((l) => `${counts.get(l.kind)} ${counts.get(l.kind) === 1 ? l.one : l.label}`).join(", ");
}

// Where the lesson's checkpoints are: [{id, n, at, status}] with status "reached" (the room
// paused there) or "open" (paused there now, its question open and not revealed). One not
// yet reached has no mark: the page is never told a pause time in advance (it could hint at
// an answer). Positions only: nothing of the question's answer.
export function checkpointMarks(def, ls, t) {
  if (!def || !def.steps) return [];
  const reached = (ls && ls.reached) || {};
  const out = [];
  let n = 0;
  for (const step of def.steps) {
    const cp = step.checkpoint;
    if (!cp) continue;
    n++;
    if (ls && ls.checkpoint === cp.id) out.push({ id: cp.id, n, at: reached[cp.id] ?? t, status: ls.revealed ? "reached" : "open" });
    else if (reached[cp.id] !== undefined) out.push({ id: cp.id, n, at: reached[cp.id], status: "reached" });
  }
  return out;
}

// The span the scrubber shows: from 0 to now (and to a checkpoint's mark, were it later).
export function scrubEnd(t, cps) {
  return Math.max(1, t, ...cps.map((c) => c.at));
}

export class Scrubber {
  // opts: {operator, slug, onRewind(t), lesson: () => ({def, state}) or null, compactAbove}
  constructor(el, opts) {
    this.el = el; this.opts = opts;
    this.history = new Map();   // idx -> {t, type, ...} (the marked events only)
    this.dragging = false;
    this.end = 1;
    this.canvas = h("canvas", { class: "scrub-marks", height: 6 * LANES.length + 4 });
    this.flags = h("div", { class: "scrub-flags" });
    this.played = h("div", { class: "scrub-played" });
    this.range = h("input", { type: "range", class: "scrub-range", min: 0, max: 1, step: "any", value: 0, disabled: !opts.operator });
    this.range.setAttribute("aria-label", opts.operator ? "time: drag to rewind the room" : "time (only an operator can rewind)");
    this.label = h("span", { class: "scrub-label" });
    this.endLabel = h("span", { class: "scrub-end muted" });
    const legend = h("span", { class: "scrub-legend muted" }, ...LANES.map((l) => h("span", { class: "lane-key" }, h("i", { style: `background:${l.color}` }), ` ${l.label}`)),
      h("span", { class: "lane-key" }, h("i", { class: "cp-key", text: "?" }), " checkpoints"));
    el.replaceChildren(
      h("div", { class: "scrub-head" }, h("strong", { text: "Time" }), " ", this.label, " ", legend),
      h("div", { class: "scrub-track" }, this.played, this.canvas, this.flags, this.range),
      h("div", { class: "scrub-foot muted" }, h("span", { text: "00:00" }), opts.operator ? h("span", { text: "drag the handle to rewind" }) : h("span", { text: "read-only: the operator rewinds" }), this.endLabel));
    if (opts.operator) {
      // A drag rewinds where it is let go; the arrow keys only choose (Enter rewinds, Escape
      // cancels), so that a stray key press does not rewind the room.
      const commit = () => {
        const t = Number(this.range.value);
        this.stop();
        if (t < this.now - 1e-6) opts.onRewind(t);
      };
      // Dragging begins when the handle moves (input), not at a press: a click on the handle
      // that moved nothing left the scrubber "dragging", its time stuck where it was clicked
      // while the clock went on (06:44 beside the header's 06:50; issue #38).
      this.range.addEventListener("pointerdown", () => { this.viaKeys = false; });
      this.range.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && this.dragging) { ev.preventDefault(); commit(); }
        else if (ev.key === "Escape") { this.stop(); this.paint(this.now); }
        else this.viaKeys = true;
      });
      this.range.addEventListener("input", () => {
        this.dragging = true; this.el.classList.add("dragging");
        this.label.textContent = `rewind to ${fmtShort(Number(this.range.value))}?${this.viaKeys ? " (Enter)" : ""}`;
      });
      this.range.addEventListener("change", () => { if (!this.viaKeys) commit(); });
      this.range.addEventListener("blur", () => { this.stop(); this.paint(this.now); });
    }
    this.state = null; this.now = 0; this.pending = false; this.marks = [];
    // Hovering the track says when, and what the marks there are.
    const track = this.range.parentElement;
    track.addEventListener("pointermove", (ev) => {
      const r = this.canvas.getBoundingClientRect();
      const x = ev.clientX - r.left;
      const t = Math.max(0, Math.min(this.end, (x / r.width) * this.end));
      const what = marksNear(this.marks, Math.round(x * (this.canvas.width / r.width)));
      track.title = `${fmtShort(Math.round(t))}${what ? `: ${what}` : ""}`;
    });
  }

  stop() { this.dragging = false; this.viaKeys = false; this.el.classList.remove("dragging"); }

  // The room's marked events from t=0 (a small room's whole timeline; a big one's page keeps
  // only its recent events, and those are what it marks).
  load(nodes) {
    this.history.clear();
    if (nodes > this.opts.compactAbove) return;
    const page = (since, left) => fetch(`/rooms/${this.opts.slug}/events.json?since=${since}`).then((r) => (r.ok ? r.json() : null)).then((body) => {
      if (!body) return;
      for (const e of body.events) if (markKind(e)) this.history.set(e.idx, e);
      if (body.events.length >= 5000 && left > 0) page(body.events[body.events.length - 1].idx, left - 1);
      else this.schedule();
    }).catch(() => {});
    page(-1, 8);
  }

  render(state) { this.state = state; this.schedule(); }
  schedule() {
    if (this.pending) return;
    this.pending = true;
    setTimeout(() => { this.pending = false; timed("room:scrubber", () => this.draw()); }, 250);
  }

  lessonMarks(t) {
    const l = this.opts.lesson();
    return l ? checkpointMarks(l.def, l.state, t) : [];
  }

  draw() {
    const state = this.state;
    if (!state) return;
    const t = this.now || state.simT;
    const cps = this.lessonMarks(t);
    const open = cps.find((c) => c.status === "open");
    this.end = scrubEnd(t, cps);
    const width = Math.max(100, Math.round(this.canvas.clientWidth || 800));
    const events = new Map(this.history);
    for (const e of state.events) if (markKind(e)) events.set(e.idx ?? `${e.t}|${e.type}|${events.size}`, e);
    // An open question: nothing past its pause is marked (there is nothing yet, unless a
    // rewind left it; the marks must not tell).
    const marks = scrubMarks(events.values(), this.end, width, open ? open.at : Infinity);
    this.marks = marks;
    if (this.canvas.width !== width) this.canvas.width = width;  // a resize reallocates the canvas
    const ctx = this.canvas.getContext("2d");
    ctx.clearRect(0, 0, width, this.canvas.height);
    LANES.forEach((lane, i) => {
      ctx.fillStyle = lane.color;
      for (const m of marks) if (m.kind === lane.kind) ctx.fillRect(m.x, 2 + i * 6, m.count > 3 ? 3 : 2, 5);
    });
    this.canvas.dataset.marks = marks.length;
    if (cps.length || this.flags.childElementCount) this.flags.replaceChildren(...cps.map((c) => {
      const f = h("span", { class: `cp-flag cp-${c.status}`, "data-checkpoint": c.id, text: "?",
        title: `question ${c.n}: ${c.status === "open" ? "open now, the room paused here" : "the room paused here"} (${fmtShort(c.at)})` });
      f.style.left = `${(c.at / this.end) * 100}%`;
      return f;
    }));
    setText(this.endLabel, fmtShort(this.end));
    if (this.range.max !== String(this.end)) this.range.max = String(this.end);
    this.paint(t);
  }

  // Four times a second: writes only what changed (between deltas nothing does).
  paint(t) {
    this.now = t;
    const end = Math.max(this.end, t);
    setStyle(this.played, "width", `${Math.min(100, (t / end) * 100)}%`);
    if (this.dragging) return;
    if (t > this.end) { this.end = t; this.range.max = String(t); setText(this.endLabel, fmtShort(t)); }
    if (this.range.value !== String(t)) this.range.value = String(t);
    setText(this.label, fmtTime(Math.max(0, t)).slice(0, -4));  // the header's mm:ss, cut the same way
  }
}
