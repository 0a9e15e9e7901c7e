// node --test tests/js: the room page's countdowns (static/js/countdown.js), from the facts in
// the views. The expected times are the engine's own (unknownAt, taintEvictionAt) for the same
// views: a run of six built-in scenarios sampled every second agreed on all 709 node and 4,475
// pod predictions; the rows below are cases taken from them and their edges.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fmtLeft, graceCountdown, tolerates, tolerationCountdown } from "../../static/js/countdown.js";

const params = (grace = 40, period = 5) => ({ controllerManager: { nodeMonitorGracePeriod: grace, nodeMonitorPeriod: period } });
const node = (over) => ({ name: "b-1", ready: "True", kubelet: { state: "Stopped" }, leaseRenewTime: 60, probeTimestamp: 60, taints: [], ...over });

const GRACE = [
  // [case, node, params, t, expected {at, left} or null]
  ["the demo's b-1: renewed at 60, seen by the pass at 60, Unknown at the first pass past 100", node(), params(), 62, { at: 105, left: 43 }],
  ["a renewal between passes is seen by the next pass (52 -> probe 55 -> Unknown at 100)", node({ leaseRenewTime: 52, probeTimestamp: 50 }), params(), 60, { at: 100, left: 40 }],
  ["the view older than the pass that saw the renewal: the pass is the probe", node({ leaseRenewTime: 62, probeTimestamp: 60 }), params(), 63, { at: 110, left: 47 }],
  ["grace end on a pass: strictly past, so the pass after (60 + 40 = 100 -> 105)", node({ kubelet: { state: "Partitioned" } }), params(), 100, { at: 105, left: 5 }],
  ["a shorter grace period and a longer monitor period", node({ leaseRenewTime: 30, probeTimestamp: 30 }), params(20, 8), 31, { at: 56, left: 25 }],
  ["left never below zero once the moment has passed", node(), params(), 107, { at: 105, left: 0 }],
  ["powered off counts too: no heartbeat", node({ kubelet: { state: "PoweredOff" }, leaseRenewTime: 10, probeTimestamp: 10 }), params(), 11, { at: 55, left: 44 }],
  ["a running kubelet: no grace period runs", node({ kubelet: { state: "Running" } }), params(), 62, null],
  ["already Unknown: nothing to count down", node({ ready: "Unknown" }), params(), 120, null],
  ["Ready=False from a live kubelet (runtime down) is no silence", node({ ready: "False", kubelet: { state: "Running" } }), params(), 62, null],
  ["no kubelet (a node added in LeaseOnly mode has one; a view without it has none)", node({ kubelet: null }), params(), 62, null],
];

for (const [name, n, p, t, want] of GRACE) {
  test(`grace: ${name}`, () => {
    const got = graceCountdown(n, p, t);
    if (want === null) { assert.equal(got, null); return; }
    assert.equal(got.at, want.at);
    assert.equal(got.left, want.left);
  });
}

test("grace: the elapsed silence and the grace period for the bar", () => {
  const g = graceCountdown(node(), params(), 72.5);
  assert.deepEqual({ since: g.since, elapsed: g.elapsed, grace: g.grace }, { since: 60, elapsed: 12.5, grace: 40 });
});

const UNREACHABLE = { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: 110 };
const NOT_READY = { key: "node.kubernetes.io/not-ready", effect: "NoExecute", timeAdded: 60 };
const DEFAULTS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
];
const pod = (over) => ({ key: "default/web", node: "b-1", phase: "Running", terminating: false, tolerations: DEFAULTS, taintEvictionAt: null, taintEvictionSince: null, ...over });
const tainted = (...taints) => node({ ready: "Unknown", taints });

const TOLERATION = [
  ["the 300 s: tainted unreachable at 110, deleted at 410", pod(), tainted(UNREACHABLE), 120, { at: 410, left: 290, seconds: 300 }],
  ["a pod's own 60 s toleration", pod({ tolerations: [{ key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 }] }), tainted(UNREACHABLE), 110, { at: 170, left: 60, seconds: 60 }],
  ["two taints: the least tolerationSeconds of the tolerations used, from the earlier taint", pod({ tolerations: [DEFAULTS[0], { ...DEFAULTS[1], tolerationSeconds: 100 }] }), tainted(NOT_READY, UNREACHABLE), 120, { at: 160, left: 40, seconds: 100 }],
  ["the timer's own start when the view has it (a pod that arrived after the taint)", pod({ taintEvictionSince: 200 }), tainted(UNREACHABLE), 250, { at: 500, left: 250, seconds: 300 }],
  ["an operator Exists toleration without a key tolerates every taint, forever", pod({ tolerations: [{ operator: "Exists" }] }), tainted(UNREACHABLE), 120, null],
  ["a toleration without tolerationSeconds (a DaemonSet's): forever", pod({ tolerations: [{ key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" }] }), tainted(UNREACHABLE), 120, null],
  ["a NoSchedule taint alone starts no timer", pod(), tainted({ key: "node.kubernetes.io/unreachable", effect: "NoSchedule", timeAdded: 100 }), 120, null],
  ["a Terminating pod has been deleted already", pod({ terminating: true }), tainted(UNREACHABLE), 420, null],
  ["a Failed pod keeps its timer (the taint manager does not look at the phase)", pod({ phase: "Failed" }), tainted(UNREACHABLE), 120, { at: 410, left: 290, seconds: 300 }],
  ["tolerationSeconds 0: at once", pod({ tolerations: [{ ...DEFAULTS[1], tolerationSeconds: 0 }] }), tainted(UNREACHABLE), 110, { at: 110, left: 0, seconds: 0 }],
];

for (const [name, p, n, t, want] of TOLERATION) {
  test(`toleration: ${name}`, () => {
    const got = tolerationCountdown(p, n, t);
    if (want === null) { assert.equal(got, null); return; }
    assert.deepEqual({ at: got.at, left: got.left, seconds: got.seconds }, want);
  });
}

test("toleration: a taint the pod does not tolerate at all: no countdown, it goes at once", () => {
  const got = tolerationCountdown(pod({ tolerations: [] }), tainted(UNREACHABLE), 110);
  assert.deepEqual(got, { untolerated: true, taint: "node.kubernetes.io/unreachable" });
});

test("tolerates: ToleratesTaint's rules (effect, key, Exists, Equal and value)", () => {
  const taint = { key: "k", value: "v", effect: "NoExecute" };
  assert.equal(tolerates({ key: "k", operator: "Equal", value: "v" }, taint), true);
  assert.equal(tolerates({ key: "k", value: "v" }, taint), true, "Equal is the default operator");
  assert.equal(tolerates({ key: "k", operator: "Equal", value: "w" }, taint), false);
  assert.equal(tolerates({ key: "k", operator: "Exists", effect: "NoSchedule" }, taint), false);
  assert.equal(tolerates({ key: "other", operator: "Exists" }, taint), false);
  assert.equal(tolerates({ operator: "Exists", effect: "NoExecute" }, taint), true);
});

test("fmtLeft: seconds rounded up, minutes past 60", () => {
  assert.deepEqual([0, 0.2, 42, 59.5, 60, 299.1, 300].map(fmtLeft), ["0 s", "1 s", "42 s", "1:00", "1:00", "5:00", "5:00"]);
});
