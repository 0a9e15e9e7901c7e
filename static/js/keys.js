// The room page's keys, one table for the key handler (room.js) and the `?` overlay that lists
// them, so that the overlay says exactly what the keys do on this page (issue #38). Pure (no
// DOM), unit tested in tests/js/keys.test.mjs.
//
// ctx: {operator: this page may operate the room (a class's teacher, a learner alone),
//       lesson: the room has a lesson, presenter: the presenter view is on}.
//   N, → or PageDown   next (a lesson's leader: at an open question, the reveal first)
//   P, ←, B or PageUp  previous (a lesson's leader)
//   Space              play / pause (an operator; at an open question Play reveals first)
//   F                  the presenter view on and off (P too, where P is not "previous")
//   ?                  this list; Escape closes it

import { keyAction as lessonKey } from "./lesson.js";

// Whether the lesson's keys lead here: the operator's page of a lesson room (the class's
// teacher on the normal page or the presenter view, a learner alone).
export function leads(ctx) { return Boolean(ctx.operator && ctx.lesson); }

// The action of a key on this page, or null (the key is the browser's).
export function keyAction(key, ctx) {
  if (key === "?") return "help";
  if (key === "Escape") return "close";
  const lesson = leads(ctx) ? lessonKey(key, "operator") : null;
  if (lesson) return lesson;
  if (key === " " || key === "Spacebar") return ctx.operator ? "play-pause" : null;
  if (key === "f" || key === "F" || key === "p" || key === "P") return "presenter";
  return null;
}

// Where a key press is someone typing (a name, an answer, the rewind box, the filter) or
// choosing (the time scrubber's arrows, a select): the page's keys leave it alone.
export function typing(target) {
  if (!target || !target.closest) return false;
  return Boolean(target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']"));
}

// Space on a focused button other than the clock's and the lesson's: that button's own press
// (the browser's), not play/pause.
export function ownButton(target) {
  if (!target || !target.closest) return false;
  const b = target.closest("button, summary, a[href]");
  return Boolean(b) && !b.matches("button[data-ctl], .lesson-controls button");
}

// The `?` overlay's rows for this page: [{keys: [...], what}], only what works here.
export function keyRows(ctx) {
  const rows = [];
  if (leads(ctx)) {
    rows.push({ keys: ["N", "→", "PageDown"], what: "next step (at an open question: reveal the answer first, then the next press goes on)" });
    rows.push({ keys: ["P", "←", "B", "PageUp"], what: "previous step (an open question stays open)" });
  }
  if (ctx.operator) rows.push({ keys: ["Space"], what: ctx.lesson ? "play / pause the clock (at an open question Play reveals the answer first)" : "play / pause the clock" });
  rows.push({ keys: leads(ctx) ? ["F"] : ["F", "P"], what: `presenter view ${ctx.presenter ? "off" : "on"} (large type for a projector)` });
  rows.push({ keys: ["?"], what: "this list of keys" });
  rows.push({ keys: ["Esc"], what: "close this list" });
  return rows;
}

// Said under the rows: where the keys do nothing.
export const KEYS_NOTE = "Keys do nothing while you type in a box (a name, an answer, the rewind time, the filter). A key pressed again before the room has answered the first press is ignored.";
