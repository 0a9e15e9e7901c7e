// node --test tests/js: the room page's keys and the `?` overlay's list (static/js/keys.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { keyAction, keyRows, leads, ownButton, typing } from "../../static/js/keys.js";

const teacher = { operator: true, lesson: true, presenter: false };
const viewer = { operator: false, lesson: true, presenter: false };
const op = { operator: true, lesson: false, presenter: false };

test("a lesson's keys lead on the teacher's normal page too, not on a viewer's (issue #38)", () => {
  for (const [key, want] of [["n", "next"], ["ArrowRight", "next"], ["PageDown", "next"], ["p", "prev"], ["P", "prev"],
    ["ArrowLeft", "prev"], ["B", "prev"], ["PageUp", "prev"], [" ", "play-pause"], ["?", "help"], ["Escape", "close"], ["f", "presenter"]]) {
    assert.equal(keyAction(key, teacher), want, key);
    assert.equal(keyAction(key, { ...teacher, presenter: true }), want, `${key} presenter`);
  }
  for (const [key, want] of [["n", null], ["ArrowRight", null], [" ", null], ["p", "presenter"], ["?", "help"]]) {
    assert.equal(keyAction(key, viewer), want, `viewer ${key}`);
  }
  // A room without a lesson: Space plays and pauses; P is the presenter view, as it was.
  assert.equal(keyAction(" ", op), "play-pause");
  assert.equal(keyAction("p", op), "presenter");
  assert.equal(keyAction("n", op), null);
  assert.equal(leads(teacher), true);
  assert.equal(leads(op), false);
});

test("the ? overlay lists what the keys do on this page, and only that", () => {
  const text = (ctx) => keyRows(ctx).map((r) => `${r.keys.join(" ")}: ${r.what}`).join("\n");
  assert.match(text(teacher), /^N → PageDown: next step/m);
  assert.match(text(teacher), /^P ← B PageUp: previous step/m);
  assert.match(text(teacher), /^Space: play \/ pause/m);
  assert.match(text(teacher), /^F: presenter view on/m);
  assert.doesNotMatch(text(viewer), /next step|Space/);
  assert.match(text(viewer), /^F P: presenter view/m);
  assert.match(text({ ...teacher, presenter: true }), /presenter view off/);
  // Every key the overlay names does what it says here.
  const name = { "→": "ArrowRight", "←": "ArrowLeft", Space: " ", Esc: "Escape" };
  for (const ctx of [teacher, viewer, op]) {
    for (const r of keyRows(ctx)) for (const k of r.keys) assert.notEqual(keyAction(name[k] || k, ctx), null, `${k} in ${JSON.stringify(ctx)}`);
  }
});

test("typing in a box (a name, an answer, the rewind time) or choosing on the scrubber: the page's keys stay out", () => {
  const el = (tag) => ({ closest: (q) => (q.split(",").map((p) => p.trim()).includes(tag) ? {} : null) });
  assert.equal(typing(el("input")), true);
  assert.equal(typing(el("textarea")), true);
  assert.equal(typing(el("select")), true);
  assert.equal(typing(el("body")), false);
  assert.equal(typing(null), false);
  const button = (ctl) => ({ closest: () => ({ matches: () => ctl }) });
  assert.equal(ownButton(button(false)), true, "Space on Add node: that button's own press");
  assert.equal(ownButton(button(true)), false, "Space on Play or Step: play / pause");
});
