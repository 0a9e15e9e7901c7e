// node --test tests/js: the room page's What-if table (static/js/whatif-rows.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { secs, whatIfEmpty, whatIfRows, whatIfTitle } from "../../static/js/whatif-rows.js";

const result = {
  zone: "eu-west-1b", nodes: [], at_ms: 60000, duration_ms: 1800000,
  rows: [
    { workload: "Deployment/api", namespace: "shop", desired: 2, down_at_ms: 105000, lowest_ready: 1, back_at_ms: 140000 },
    { workload: "StatefulSet/db", namespace: "shop", desired: 3, down_at_ms: 105000, lowest_ready: 2, back_at_ms: null },
    { workload: "Deployment/batch", namespace: "ops", desired: 1, down_at_ms: null, lowest_ready: null, back_at_ms: null },
  ],
};

test("a workload back, one not back by the end, one never short", () => {
  const rows = whatIfRows(result);
  assert.deepEqual(rows.map((r) => r.cells), [
    ["Deployment/api (shop)", "2", "105 s", "1", "140 s", "80 s"],
    ["StatefulSet/db (shop)", "3", "105 s", "2", "not back by 1800 s", ""],
    ["Deployment/batch (ops)", "1", "", "", "never short", ""],
  ]);
  assert.deepEqual(rows.map((r) => r.cls), ["short", "never", ""]);
});

test("times keep a tenth of a second when there is one", () => {
  assert.equal(secs(140500), "140.5 s");
  assert.equal(secs(0), "0 s");
  assert.equal(secs(null), "");
});

test("the title names the zone, or the nodes", () => {
  assert.equal(whatIfTitle(result), "zone eu-west-1b failed at 60 s:");
  assert.equal(whatIfTitle({ ...result, zone: "", nodes: ["a-1", "a-2"], at_ms: 0 }), "a-1, a-2 failed at 0 s:");
});

// Issue #38: an import of bare pods showed an empty table with no word why.
test("an empty result says why; a result with rows needs no note", () => {
  assert.equal(whatIfEmpty(result), "");
  assert.equal(whatIfEmpty({ ...result, rows: [], note: "No workload to show: ..." }), "No workload to show: ...");
  assert.match(whatIfEmpty({ ...result, rows: [] }), /^No workload to show/);
});
