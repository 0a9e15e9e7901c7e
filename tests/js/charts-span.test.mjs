// node --test tests/js: the chart groups' shared time range (static/js/charts.js spanOf and
// spanRange): zones sampled to 3,000 s and workloads to 750 s draw on one x range.
import { test } from "node:test";
import assert from "node:assert/strict";

// charts.js imports the vendored uPlot (a browser module): only the two pure functions are
// read here, from the source, so that the test runs under node without a DOM.
import { readFileSync } from "node:fs";
const src = readFileSync(new URL("../../static/js/charts.js", import.meta.url), "utf8");
const body = src.slice(src.indexOf("export function spanRange"), src.indexOf("const replicaStyle"));
const { spanRange, spanOf } = await import(`data:text/javascript,${encodeURIComponent(body)}`);

test("every group shares the range from the first sample of any group to the latest time", () => {
  const zones = [0, 100, 3000], workloads = [0, 750];
  const span = spanOf([zones, zones, workloads], 2990);
  assert.deepEqual(span, { min: 0, max: 3000 });
  assert.deepEqual(spanRange(span, 0, 750), [0, 3000], "the workloads' charts run to 3,000 s too");
});

test("the page's clock past the last sample stretches the range; no samples keep the data's", () => {
  assert.deepEqual(spanOf([[10, 20]], 50), { min: 10, max: 50 });
  assert.deepEqual(spanRange(spanOf([[]], null), 3, 9), [3, 9]);
  assert.deepEqual(spanRange({ min: 5, max: 5 }, 5, 5), [5, 6]);
});
