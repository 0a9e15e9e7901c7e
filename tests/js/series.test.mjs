// node --test tests/js: the charts from t=0 (static/js/series.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { chartStreams, mergeStreams } from "../../static/js/series.js";

const series = {
  t: 240,
  zones: [[0, { a: 3, b: 1 }], [105, { a: 0, b: 1 }], [300, { b: 1 }]],
  queue: { a: [[0, 0], [110, 2], [120, 1], [130, 0]], b: [[0, 0]] },
  workloads: { "Deployment/default/web": [[0, 3, 3], [105, 3, 1], [130, 3, 2], [140, 3, 3]] },
};

test("ready nodes per zone step at the engine's instants; a zone gone later counts 0", () => {
  const { ready } = chartStreams(series);
  const m = mergeStreams(ready);
  assert.deepEqual(m.t, [0, 105, 300]);
  assert.deepEqual(m.cols.get("a"), [3, 0, 0]);
  assert.deepEqual(m.cols.get("b"), [1, 1, 1]);
});

test("queues of several zones share one time axis, each carried forward", () => {
  const m = mergeStreams(chartStreams(series).queue);
  assert.deepEqual(m.t, [0, 110, 120, 130]);
  assert.deepEqual(m.cols.get("a"), [0, 2, 1, 0]);
  assert.deepEqual(m.cols.get("b"), [0, 0, 0, 0]);
});

test("replicas: ready and desired per workload", () => {
  const m = mergeStreams(chartStreams(series).replicas);
  assert.deepEqual(m.cols.get("Deployment/default/web ready"), [3, 1, 2, 3]);
  assert.deepEqual(m.cols.get("Deployment/default/web desired"), [3, 3, 3, 3]);
});

test("a stream that starts later is empty (null) before its first point", () => {
  const m = mergeStreams({ x: [[0, 1]], y: [[5, 2]] });
  assert.deepEqual(m.cols.get("y"), [null, 2]);
});
