// node --test tests/js: the charts' small multiples (static/js/multiples.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { COUNT_INCRS, countAxis, panelsOf } from "../../static/js/multiples.js";

const table = (obj) => new Map(Object.entries(obj));

test("replicas: one panel per workload (desired, ready), the one that fell furthest short first", () => {
  const cols = table({
    "Deployment/default/web ready": [6, 6, 4], "Deployment/default/web desired": [6, 6, 6],
    "StatefulSet/default/db ready": [3, 2, 2], "StatefulSet/default/db desired": [3, 3, 3],
    "Deployment/default/api ready": [3, 0, 3], "Deployment/default/api desired": [3, 3, 3],
    "DaemonSet/monitoring/node-exporter ready": [9, 9, 9], "DaemonSet/monitoring/node-exporter desired": [9, 9, 9],
  });
  const { panels, max, hidden } = panelsOf("replicas", [0, 1, 2], cols);
  assert.deepEqual(panels.map((p) => p.key), ["Deployment/default/api", "Deployment/default/web", "StatefulSet/default/db", "DaemonSet/monitoring/node-exporter"]);
  assert.deepEqual(panels[0].cols, ["Deployment/default/api desired", "Deployment/default/api ready"]);
  assert.equal(max, 9, "one count axis for the group: the largest value");
  assert.equal(hidden, 0);
});

test("zones: a panel per zone in name order; past the limit the rest are counted, not drawn", () => {
  const cols = table({ "zone-c": [3, 0], "zone-a": [3, 3], "zone-b": [2, 3] });
  const r = panelsOf("zones", [0, 1], cols, 2);
  assert.deepEqual(r.panels.map((p) => p.key), ["zone-a", "zone-b"]);
  assert.equal(r.hidden, 1);
  assert.equal(r.max, 3);
});

test("an empty or all-zero group still has an axis up to 1", () => {
  assert.equal(panelsOf("zones", [0], table({ "zone-a": [0] })).max, 1);
  assert.equal(panelsOf("zones", [], table({})).max, 1);
});

test("count axis: from 0 to the whole number at or above the max, ticks only on whole numbers", () => {
  const axis = countAxis(() => 2.5);
  assert.deepEqual(axis.range(), [0, 3]);
  assert.ok(COUNT_INCRS.every(Number.isInteger));
  assert.deepEqual(axis.values(null, [0, 0.5, 1, 2.5, 3]), ["0", "", "1", "", "3"]);
});
