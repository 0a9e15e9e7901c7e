// node --test tests/js: the delta-apply logic of the page (static/js/state.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyDelta, applySnapshot, emptyState, eventMatches, fmtTime, why } from "../../static/js/state.js";

const snap = { type: "snapshot", seq: 5, t: 10, speed: 10, paused: false, role: "viewer",
  nodes: [{ name: "a-1", zone: "a", ready: "True", taints: [], conditions: [] }],
  pods: [{ key: "default/web", node: "a-1", phase: "Running", ready: true }], zones: [], events: [] };

test("consecutive deltas apply; node and pod changes are reported", () => {
  let s = applySnapshot(emptyState(), snap);
  const r = applyDelta(s, { type: "delta", seq: 6, t: 11, speed: 10, paused: false,
    nodes: { "a-1": { name: "a-1", zone: "a", ready: "Unknown", taints: [], conditions: [] } },
    pods: { "default/web": null }, zones: null, events: [{ t: 11, type: "NodeReady", node: "a-1", status: "Unknown" }] });
  assert.equal(r.state.seq, 6);
  assert.equal(r.state.nodes.get("a-1").ready, "Unknown");
  assert.equal(r.state.pods.has("default/web"), false);
  assert.deepEqual([...r.changed.nodes], ["a-1"]);
  assert.equal(r.state.events.length, 1);
});

test("a gap in sequence numbers asks for a snapshot; old deltas are ignored", () => {
  const s = applySnapshot(emptyState(), snap);
  assert.deepEqual(applyDelta(s, { type: "delta", seq: 8, nodes: {}, pods: {} }), { gap: true });
  assert.equal(applyDelta(s, { type: "delta", seq: 5, nodes: {}, pods: {} }).changed, null);
});

test("times print as mm:ss.mmm and the timeline filter matches names", () => {
  assert.equal(fmtTime(145), "02:25.000");
  assert.ok(eventMatches({ type: "TaintAdded", node: "a-1" }, "a-1"));
  assert.ok(!eventMatches({ type: "TaintAdded", node: "a-1" }, "b-2"));
  assert.match(why({ type: "NodeReady", node: "a-1", status: "Unknown" }), /nodeMonitorGracePeriod/);
});
