// node --test tests/js: the time scrubber's marks (static/js/scrubber.js): which events are
// marked in which lane, where, and where a lesson's checkpoints stand, giving nothing away.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkpointMarks, markKind, marksNear, scrubEnd, scrubMarks } from "../../static/js/scrubber.js";

test("markKind: faults, nodes, NoExecute taints, pods deleted, zone states; the rest unmarked", () => {
  const kinds = [
    { type: "Fault", fault: "StopKubelet" }, { type: "NodeReady", status: "Unknown" },
    { type: "TaintAdded", effect: "NoExecute", key: "node.kubernetes.io/unreachable" },
    { type: "TaintAdded", effect: "NoSchedule", key: "node.kubernetes.io/unreachable" },
    { type: "TaintAdded", effect: "NoExecute", key: "node.kubernetes.io/out-of-service" },
    { type: "PodDeleted" }, { type: "PodEvicted" }, { type: "ZoneState" },
    { type: "PodCreated" }, { type: "PodScheduled" }, { type: "K8sEvent" },
    { type: "FaultRefused", fault: "StopKubelet" },
  ].map(markKind);
  assert.deepEqual(kinds, ["fault", "node", "taint", null, "taint", "pod", "pod", "zone", null, null, null, "fault"]);
});

test("scrubMarks: one mark per pixel column and lane, counted; nothing past an open question", () => {
  const ev = (t, type, extra = {}) => ({ t, type, ...extra });
  const events = [ev(0, "ZoneState"), ev(62, "Fault"), ev(105, "NodeReady"), ev(105.4, "NodeReady"),
    ev(110, "TaintAdded", { effect: "NoExecute" }), ev(200, "PodCreated"), ev(410, "PodDeleted")];
  assert.deepEqual(scrubMarks(events, 500, 100), [
    { x: 0, kind: "zone", count: 1, t: 0 }, { x: 12, kind: "fault", count: 1, t: 62 },
    { x: 21, kind: "node", count: 2, t: 105 }, { x: 22, kind: "taint", count: 1, t: 110 },
    { x: 82, kind: "pod", count: 1, t: 410 },
  ]);
  // The last instant falls in the last column, not past it.
  assert.deepEqual(scrubMarks([ev(500, "Fault")], 500, 100).map((m) => m.x), [99]);
  // An open question paused at 70 s: the marks stop there.
  assert.deepEqual(scrubMarks(events, 500, 100, 70).map((m) => m.t), [0, 62]);
  assert.deepEqual(scrubMarks(events, 0, 100), []);
});

const def = { steps: [
  { id: "healthy", checkpoint: null },
  { id: "silent", checkpoint: { id: "silent", question: "When will a-2 be Unknown?" } },
  { id: "taint", checkpoint: { id: "taint", question: "When will web-1 be deleted?" } },
  { id: "gone", checkpoint: null },
] };

test("checkpointMarks: reached ones where the room paused, the open one too, none not reached", () => {
  assert.deepEqual(checkpointMarks(def, { checkpoint: null, revealed: false, reached: {} }, 30), []);
  assert.deepEqual(checkpointMarks(def, { checkpoint: "silent", revealed: false, reached: {} }, 70),
    [{ id: "silent", n: 1, at: 70, status: "open" }]);
  assert.deepEqual(checkpointMarks(def, { checkpoint: "taint", revealed: true, reached: { silent: 70, taint: 110 } }, 110),
    [{ id: "silent", n: 1, at: 70, status: "reached" }, { id: "taint", n: 2, at: 110, status: "reached" }]);
  // Nothing of the question or its answer rides on a mark.
  for (const m of checkpointMarks(def, { checkpoint: "silent", revealed: false, reached: { silent: 70 } }, 70)) {
    assert.deepEqual(Object.keys(m).sort(), ["at", "id", "n", "status"]);
  }
  assert.deepEqual(checkpointMarks(null, null, 10), []);
});

test("scrubEnd: from 0 to now (at least 1 s), or to a checkpoint's mark if later", () => {
  assert.equal(scrubEnd(0, []), 1);
  assert.equal(scrubEnd(250, [{ at: 70 }]), 250);
  assert.equal(scrubEnd(50, [{ at: 70 }]), 70);
});

test("marksNear: what the marks within a few pixels stand for, lanes in order", () => {
  const marks = [{ x: 20, kind: "taint", count: 1 }, { x: 21, kind: "node", count: 2 }, { x: 22, kind: "node", count: 1 }, { x: 40, kind: "fault", count: 1 }];
  assert.equal(marksNear(marks, 21), "3 nodes, 1 taint");
  assert.equal(marksNear(marks, 41), "1 fault");
  assert.equal(marksNear(marks, 30), "");
});
