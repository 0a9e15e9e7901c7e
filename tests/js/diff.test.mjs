// node --test tests/js: the compare page's merged timeline (static/js/diff.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { markDifferences } from "../../static/js/diff.js";

const same = { t: 105, type: "NodeReady", node: "a-1", status: "Unknown", idx: 7 };
test("events both sides have show once; the others name their side, in time order", () => {
  const left = [same, { t: 410, type: "PodDeleted", pod: "default/web", by: "TaintManager", idx: 9 }];
  const right = [{ ...same, idx: 3 }, { t: 140, type: "PodDeleted", pod: "default/web", by: "TaintManager", idx: 4 }];
  const m = markDifferences(left, right);
  assert.deepEqual(m.map((x) => [x.event.t, x.side]), [[105, "both"], [140, "right"], [410, "left"]]);
});

test("identical events are matched one for one", () => {
  const e = { t: 0, type: "PodCreated", pod: "default/x", owner: null };
  const m = markDifferences([e, e, e], [e, e]);
  assert.deepEqual(m.map((x) => x.side), ["both", "both", "left"]);
});
