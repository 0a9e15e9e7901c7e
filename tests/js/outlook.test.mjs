// node --test tests/js: "explain this" words the engine's times (static/js/outlook.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { outlook } from "../../static/js/outlook.js";
import { applySnapshot, emptyState } from "../../static/js/state.js";

const params = { kubernetesVersion: "1.34", controllerManager: { nodeMonitorGracePeriod: 50, nodeMonitorPeriod: 5, unhealthyZoneThreshold: 0.55 } };
function snap(nodes, pods, zones) {
  return applySnapshot(emptyState(), { type: "snapshot", seq: 1, t: 120, speed: 1, paused: true, role: "viewer", nodes, pods, zones, events: [], params });
}

test("a stopped kubelet's node: Unknown at the engine's time, then its pods' deletions in order", () => {
  const s = snap(
    [{ name: "a-2", zone: "a", ready: "Unknown", conditions: [], kubelet: { state: "Stopped" }, leaseRenewTime: 50, unknownAt: null,
      taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: 110 }] }],
    [{ key: "default/web", node: "a-2", phase: "Running", ready: false, taintEvictionAt: 410, taintEvictionSince: 110 },
     { key: "default/api", node: "a-2", phase: "Running", ready: false, taintEvictionAt: 170, taintEvictionSince: 110 }],
    [{ zone: "a", state: "Normal", qps: 0.1, queue: [] }]);
  const o = outlook("node", "a-2", s);
  assert.match(o.now[0], /kubelet is stopped/);
  assert.match(o.now[0], /00:50/);
  assert.deepEqual(o.next.map((x) => [x.at, x.text.split(" ")[0]]), [[170, "default/api"], [410, "default/web"]]);
  const p = outlook("pod", "default/web", s);
  assert.match(p.next[0].text, /timer set at 01:50, the pod tolerates it 300 s/);
});

test("a silent node not yet Unknown says when, with the grace period in force", () => {
  const s = snap([{ name: "c-1", zone: "c", ready: "True", conditions: [], taints: [], kubelet: { state: "Partitioned" }, leaseRenewTime: 190, unknownAt: 245 }], [], []);
  const o = outlook("node", "c-1", s);
  assert.equal(o.next[0].at, 245);
  assert.match(o.next[0].text, /nodeMonitorGracePeriod 50 s/);
});

test("a not-ready node waiting in its zone's queue, and a zone at rate 0", () => {
  const nodes = [1, 2, 3].map((i) => ({ name: `c-${i}`, zone: "c", ready: "Unknown", conditions: [], taints: [], kubelet: { state: "Partitioned" }, unknownAt: null }));
  let s = snap(nodes, [], [{ zone: "c", state: "FullDisruption", qps: 0.1, queue: ["c-2", "c-3"], nextTokenAt: 250 }]);
  assert.deepEqual(outlook("node", "c-3", s).next.map((x) => x.at), [260]);
  assert.deepEqual(outlook("zone", "c", s).next.map((x) => x.at), [250, 260]);
  assert.match(outlook("zone", "c", s).now[0], /3 of 3 nodes not Ready/);
  s = snap(nodes, [], [{ zone: "c", state: "PartialDisruption", qps: 0, queue: ["c-2"] }]);
  assert.match(outlook("node", "c-2", s).next[0].text, /rate is 0/);
});

test("a pod stuck Terminating on a cut-off node: the current release names PodGC, 1.18 does not", () => {
  const nodes = [{ name: "c-1", zone: "c", ready: "Unknown", conditions: [], taints: [], kubelet: { state: "Partitioned" } }];
  const pods = [{ key: "default/db-2", node: "c-1", phase: "Running", terminating: true, deletionTimestamp: 550 }];
  let s = snap(nodes, pods, []);
  assert.match(outlook("pod", "default/db-2", s).next[0].text, /PodGC/);
  s.params = { ...params, kubernetesVersion: "1.18" };
  assert.doesNotMatch(outlook("pod", "default/db-2", s).next[0].text, /PodGC/);
});

test("a Terminating pod on a not-Ready out-of-service node: PodGC's next 20 s pass (not in 1.18)", () => {
  const taints = [{ key: "node.kubernetes.io/out-of-service", effect: "NoExecute", timeAdded: 450 }];
  const nodes = [{ name: "c-1", zone: "c", ready: "Unknown", conditions: [], taints, kubelet: { state: "PoweredOff" } }];
  const pods = [{ key: "default/db-0", node: "c-1", phase: "Running", terminating: true, deletionTimestamp: 420 }];
  let s = snap(nodes, pods, []);
  s.t = 451;
  for (const [kind, key] of [["pod", "default/db-0"], ["node", "c-1"]]) {
    const first = outlook(kind, key, s).next[0];
    assert.equal(first.at, 460);
    assert.match(first.text, /^default\/db-0 force-deleted by PodGC at its next 20 s pass/);
  }
  s.params = { ...s.params, kubernetesVersion: "1.18" };
  assert.doesNotMatch(outlook("pod", "default/db-0", s).next[0].text, /PodGC/);
  s.params = { ...s.params, kubernetesVersion: "1.34" };
  s.nodes.get("c-1").ready = "True";
  assert.equal(outlook("pod", "default/db-0", s).next.length, 1);
  assert.doesNotMatch(outlook("pod", "default/db-0", s).next[0].text, /force-deleted by PodGC/);
});

test("a lesson's open question holds the times back: the outlook says they come with the answer, never 'rate 0'", () => {
  // As engine/holdback.py sends them to a viewer: the predictions and the zone's rate null.
  const nodes = [{ name: "c-1", zone: "c", ready: "Unknown", conditions: [], taints: [], kubelet: { state: "Partitioned" }, unknownAt: null, held: ["unknownAt"] },
    { name: "b-1", zone: "c", ready: "True", conditions: [], taints: [], kubelet: { state: "Stopped" }, leaseRenewTime: 50, unknownAt: null, held: ["unknownAt"] }];
  const zone = { zone: "c", state: "PartialDisruption", qps: null, tokens: null, burst: null, nextTokenAt: null, queue: ["c-1"], held: ["nextTokenAt", "qps", "tokens", "burst"] };
  const s = snap(nodes, [{ key: "d/web", node: "c-1", phase: "Running", ready: false, taintEvictionAt: null, held: ["taintEvictionAt"] }], [zone]);
  const z = outlook("zone", "c", s);
  assert.match(z.now[0], /its NoExecute rate comes with the answer/);
  assert.doesNotMatch(z.now[0] + z.next.map((x) => x.text).join(" "), /rate 0|node\/s|stopped/);
  assert.match(z.next[0].text, /once the open question's answer is revealed/);
  const n = outlook("node", "c-1", s);
  assert.ok(n.next.every((x) => x.at === null));
  assert.doesNotMatch(n.next.map((x) => x.text).join(" "), /rate is 0|node\/s/);
  assert.match(outlook("node", "b-1", s).next[0].text, /once the open question's answer is revealed/);
  assert.match(outlook("pod", "d/web", s).next[0].text, /once the open question's answer is revealed/);
});
