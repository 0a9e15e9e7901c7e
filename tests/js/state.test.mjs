// node --test tests/js: the delta-apply logic of the page (static/js/state.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyDelta, applySnapshot, emptyState, eventMatches, fmtSpeed, fmtTime, resyncReplay, signalValues, speedNote, why } from "../../static/js/state.js";

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

test("a refused scenario fault says why: what it named is gone, and the room goes on", () => {
  const e = { t: 62, type: "FaultRefused", fault: "StopKubelet", node: "a-2", error: 'spec.faults[0].node: unknown node "a-2"' };
  assert.equal(why(e), `fault not applied: the scenario's StopKubelet names what no longer exists (spec.faults[0].node: unknown node "a-2"); the room goes on without it`);
  assert.ok(eventMatches(e, "a-2"));
});

const params = { controllerManager: { nodeMonitorGracePeriod: 40, nodeMonitorPeriod: 5, nodeEvictionRate: 0.1 },
  apiServer: { defaultUnreachableTolerationSeconds: 300, defaultNotReadyTolerationSeconds: 300 } };
const tainted = { name: "a-1", zone: "a", ready: "Unknown", conditions: [],
  taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: 150 }] };
const defaultTols = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }];

test("a taint-manager deletion names the taint, its time, the toleration and the parameter behind it", () => {
  const s = applySnapshot(emptyState(), { ...snap, params, nodes: [tainted],
    pods: [{ key: "default/web-1", node: "a-1", phase: "Running", ready: false, terminating: true, tolerations: defaultTols }] });
  const e = { t: 450, type: "PodDeleted", pod: "default/web-1", node: "a-1", by: "TaintManager" };
  assert.equal(why(e, s), "taint manager deleted default/web-1: node a-1 tainted unreachable:NoExecute at 02:30, pod tolerates it 300 s (defaultUnreachableTolerationSeconds)");
  const own = [{ key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 20 }];
  s.pods.set("default/web-1", { ...s.pods.get("default/web-1"), tolerations: own });
  assert.match(why(e, s), /pod tolerates it 20 s \(the pod's tolerationSeconds\)$/);
  s.pods.set("default/web-1", { ...s.pods.get("default/web-1"), tolerations: [] });
  assert.match(why(e, s), /tainted unreachable:NoExecute at 02:30, pod does not tolerate it$/);
});

test("1.34: the taint-eviction-controller deletes, marks DisruptionTarget first, and MarkPodsNotReady warns the pod", () => {
  const s = applySnapshot(emptyState(), { ...snap, params, nodes: [tainted],
    pods: [{ key: "default/web-1", node: "a-1", phase: "Running", ready: false, terminating: true, tolerations: defaultTols }] });
  const e = { t: 450, type: "PodDeleted", pod: "default/web-1", node: "a-1", by: "TaintEvictionController" };
  assert.equal(why(e, s), "taint-eviction-controller (its own controller since 1.29) deleted default/web-1: node a-1 tainted unreachable:NoExecute at 02:30, pod tolerates it 300 s (defaultUnreachableTolerationSeconds)");
  const dt = { t: 450, type: "PodDisruptionTarget", pod: "default/web-1", node: "a-1", reason: "DeletionByTaintManager", message: "Taint manager: deleting due to NoExecute taint" };
  assert.match(why(dt, s), /^taint-eviction-controller \(addConditionAndDeletePod, 1\.26\+\): .* right before its DELETE$/);
  const warn = { t: 105, type: "K8sEvent", object: "Pod/default/web-1", reason: "NodeNotReady", message: "Node is not ready", eventType: "Warning" };
  assert.match(why(warn, s), /^MarkPodsNotReady \(every release after 1\.18\)/);
  const nodeEvent = { t: 105, type: "K8sEvent", object: "Node/a-1", reason: "NodeNotReady", message: "Node a-1 status is now: NodeNotReady", eventType: "Normal" };
  assert.equal(why(nodeEvent, s), "Normal event NodeNotReady: Node a-1 status is now: NodeNotReady");
});

test("the Unknown explanation quotes the room's grace period; params and workloads ride on deltas", () => {
  const s = applySnapshot(emptyState(), { ...snap, params });
  assert.match(why({ t: 105, type: "NodeReady", node: "a-1", status: "Unknown" }, s), /nodeMonitorGracePeriod \(40 s\)/);
  const faster = { ...params, controllerManager: { ...params.controllerManager, nodeMonitorGracePeriod: 20 } };
  const r = applyDelta(s, { type: "delta", seq: 6, t: 12, nodes: {}, pods: {}, params: faster, workloads: { "Deployment/default/web": [3, 2] } });
  assert.ok(r.changed.params && r.changed.workloads);
  assert.deepEqual(r.state.workloads, { "Deployment/default/web": [3, 2] });
  assert.match(why({ t: 105, type: "NodeReady", node: "a-1", status: "Unknown" }, r.state), /nodeMonitorGracePeriod \(20 s\)/);
});

test("eviction signals chart as percent available against the highest threshold", () => {
  const v = signalValues([
    { signal: "memory.available", available: 1073741824, capacity: 8589934592, at: 20,
      thresholds: [{ value: 104857600, gracePeriod: 0 }, { value: 2147483648, gracePeriod: 30 }] },
    { signal: "nodefs.available", available: 0, capacity: 0, at: 20, thresholds: [{ value: 0, gracePeriod: 0 }] }]);
  assert.deepEqual(v, { "memory.available": 12.5, "memory.available threshold": 25 });
});

test("the timeline filter combines words and matches an event by its node's zone", () => {
  const s = applySnapshot(emptyState(), { ...snap, nodes: [tainted] });
  const e = { t: 450, type: "PodDeleted", pod: "default/web-1", node: "a-1", by: "TaintManager" };
  const zoneB = { name: "b-1", zone: "zone-b", ready: "True", taints: [], conditions: [] };
  s.nodes.set("a-1", { ...tainted, zone: "zone-a" }); s.nodes.set("b-1", zoneB);
  assert.ok(eventMatches(e, "zone-a", s));
  assert.ok(!eventMatches(e, "zone-b", s));
  assert.ok(eventMatches(e, "poddeleted a-1", s));
  assert.ok(!eventMatches(e, "poddeleted zone-b", s));
});

test("graceful node shutdown: why names the shutdown manager's rule and the grace split", () => {
  const s = applySnapshot(emptyState(), { ...snap,
    nodes: [{ name: "a-1", zone: "a", ready: "False", taints: [], conditions: [], kubelet: { state: "Running", shuttingDown: true } }],
    pods: [{ key: "default/web", node: "a-1", phase: "Failed", priority: 0 },
      { key: "kube-system/agent", node: "a-1", phase: "Failed", priority: 2000001000 }],
    params: { kubelet: { shutdownGracePeriod: 30, shutdownGracePeriodCriticalPods: 10 }, faultsRefused: [] } });
  const web = why({ type: "PodPhase", pod: "default/web", phase: "Failed", reason: "Terminated" }, s);
  assert.match(web, /GracefulNodeShutdown, 1\.21\+\): non-critical pods killed first within shutdownGracePeriod − shutdownGracePeriodCriticalPods \(20 s\)/);
  const agent = why({ type: "PodDisruptionTarget", pod: "kube-system/agent", reason: "TerminationByKubelet" }, s);
  assert.match(agent, /critical pods .* killed last, within shutdownGracePeriodCriticalPods \(10 s\)/);
  assert.match(why({ type: "NodeReady", node: "a-1", status: "False" }, s), /node is shutting down/);
  assert.match(why({ type: "NodePoweredOff", node: "a-1", reason: "GracefulShutdownDone" }, s), /inhibitor lock released/);
  s.pods.get("default/web").reason = "Terminated";
  assert.match(why({ type: "PodReady", pod: "default/web", status: "False" }, s), /shutdown manager: the pod's containers stopped/);
});

test("kubelet admission, eviction and preemption: why names the kubelet's rule, not the shutdown manager's", () => {
  const s = applySnapshot(emptyState(), { ...snap,
    pods: [{ key: "default/b", node: "a-1", phase: "Failed", reason: "OutOfcpu", priority: 0 },
      { key: "default/guar", node: "a-1", phase: "Failed", reason: "Preempting", priority: 0 },
      { key: "default/burst", node: "a-1", phase: "Failed", reason: "Evicted", priority: 0 }],
    params: { kubernetesVersion: "1.34", faultsRefused: [] } });
  assert.match(why({ type: "PodRejected", pod: "default/b", node: "a-1", reason: "OutOfcpu" }, s), /^kubelet resource-fit admission \(lifecycle\.NewPredicateAdmitHandler\): the pod's cpu request/);
  assert.match(why({ type: "PodPhase", pod: "default/b", phase: "Failed", reason: "OutOfmemory" }, s), /the pod's memory request/);
  assert.match(why({ type: "PodRejected", pod: "default/c", node: "a-1", reason: "UnexpectedAdmissionError" }, s), /^kubelet critical pod admission/);
  const preempted = why({ type: "PodDisruptionTarget", pod: "default/guar", reason: "TerminationByKubelet", message: "Pod was preempted by Kubelet to accommodate a critical pod." }, s);
  assert.match(preempted, /^kubelet critical pod admission \(CriticalPodAdmissionHandler\) \(DisruptionTarget, 1\.26\+\)/);
  const evicted = why({ type: "PodDisruptionTarget", pod: "default/burst", reason: "TerminationByKubelet", message: "The node was low on resource: memory. " }, s);
  assert.match(evicted, /^kubelet eviction manager \(evictPod/);
  assert.match(why({ type: "PodPhase", pod: "default/burst", phase: "Failed", reason: "Evicted" }, s), /its status written once its containers stopped \(1\.27\+\)/);
  assert.match(why({ type: "PodPhase", pod: "default/guar", phase: "Failed", reason: "Preempting" }, s), /preempted to make room for a critical pod/);
  assert.match(why({ type: "PodReady", pod: "default/burst", status: "False" }, s), /^kubelet eviction manager: the pod was evicted/);
  s.params.kubernetesVersion = "1.18";
  assert.match(why({ type: "PodPhase", pod: "default/burst", phase: "Failed", reason: "Evicted" }, s), /its status written before the kill \(1\.18\)/);
});

test("why: Ready put back by the kubelet's status manager, an eviction's Failed phase", () => {
  const s = applySnapshot(emptyState(), { ...snap, events: [{ t: 105, type: "PodReady", pod: "default/web", status: "False" }] });
  assert.match(why({ t: 140, type: "PodReady", pod: "default/web", status: "True" }, s), /^kubelet status manager: its syncBatch/);
  assert.equal(why({ t: 0, type: "PodReady", pod: "default/other", status: "True" }, s), "kubelet started the pod");
  assert.match(why({ t: 140, type: "PodPhase", pod: "default/web", phase: "Failed", reason: "Evicted" }, s), /first syncBatch \(every 10 s\) after the heal$/);
  assert.match(why({ t: 50, type: "NodeReady", node: "a-1", status: "True" }, s), /the controller's Unknown\)$/);
});

test("after a resync notice, the deltas newer than the fetched snapshot replay in order", () => {
  const notice = { type: "resync", seq: 7 };
  const buffered = [{ type: "delta", seq: 9 }, { type: "delta", seq: 7 }, { type: "delta", seq: 8 }];
  assert.deepEqual(resyncReplay(notice, { seq: 7 }, buffered).map((d) => d.seq), [8, 9]);
  assert.deepEqual(resyncReplay(notice, { seq: 9 }, buffered), []);
  // A snapshot older than the notice does not hold its state: ask again.
  assert.equal(resyncReplay(notice, { seq: 6 }, buffered), null);
});

test("out-of-service and PodGC: why names the release's rule", () => {
  const current = applySnapshot(emptyState(), { ...snap, params: { kubernetesVersion: "1.34" } });
  const old = applySnapshot(emptyState(), { ...snap, params: { kubernetesVersion: "1.18" } });
  const added = { type: "TaintAdded", node: "a-1", key: "node.kubernetes.io/out-of-service", effect: "NoExecute" };
  assert.match(why(added, current), /PodGC's next 20 s pass force-deletes every Terminating pod .* not Ready \(gcTerminating, GA 1\.28\)$/);
  assert.match(why(added, old), /in 1\.18 it is only a NoExecute taint: .* PodGC does not react/);
  const removed = { type: "TaintRemoved", node: "a-1", key: "node.kubernetes.io/out-of-service", effect: "NoExecute" };
  assert.match(why(removed, current), /^the operator removed node\.kubernetes\.io\/out-of-service from a-1 \(RemoveOutOfService/);
  const gc = { type: "PodDeleted", pod: "default/db-0", node: "a-1", by: "PodGC", reason: "TerminatingOutOfService" };
  assert.match(why(gc, current), /^PodGC gcTerminating \(NodeOutOfServiceVolumeDetach, GA 1\.28\): the pod was Terminating on a-1/);
  const orphan = { type: "PodDeleted", pod: "default/web", node: "gone", by: "PodGC", reason: "OrphanedPod" };
  assert.match(why(orphan, old), /^PodGC gcOrphaned: gone no longer exists; its name waited 40 s in quarantine/);
  const dt = { type: "PodDisruptionTarget", pod: "default/web", node: "gone", reason: "DeletionByPodGC", message: "PodGC: node no longer exists" };
  assert.match(why(dt, current), /^PodGC gcOrphaned \(markFailedAndDeletePodWithCondition, 1\.26\+\)/);
  assert.match(why({ type: "PodPhase", pod: "default/db-0", phase: "Failed", reason: "" }, current), /^PodGC \(markFailedAndDeletePod, 1\.26\+\)/);
  assert.match(why({ type: "PodPhase", pod: "default/db-0", phase: "Failed", reason: "" }, current), /or, for a pod being deleted on a live node, the kubelet's last phase \(1\.27\+/);
  assert.match(why({ type: "PodPhase", pod: "default/web", phase: "Succeeded", reason: "" }, current), /^the kubelet's last phase \(1\.27\+.*every container exited 0/);
  // Other taints keep their controller's why.
  assert.match(why({ type: "TaintAdded", node: "a-1", key: "node.kubernetes.io/unreachable", effect: "NoExecute" }, current), /^doNoExecuteTaintingPass/);
});

test("SnapshotBuilder: a snapshot built from chunks is the state applySnapshot makes of the whole", async () => {
  const { SnapshotBuilder, Config } = await import("../../static/js/state.js");
  const nodes = Array.from({ length: 7 }, (_, i) => ({ name: `n-${i}`, zone: "z", ready: "True", taints: [], conditions: [] }));
  const pods = Array.from({ length: 11 }, (_, i) => ({ key: `default/p-${i}`, node: `n-${i % 7}`, phase: "Running" }));
  const events = Array.from({ length: Config.maxEvents + 5 }, (_, i) => ({ idx: i, t: i, type: "PodCreated" }));
  const snap = { seq: 9, simT: 42.5, speed: 10, paused: false, room: { slug: "r" }, zones: [{ zone: "z" }],
    params: null, workloads: { "Deployment/default/web": [3, 2] }, nodes, pods, events };
  const before = { ...emptyState(), role: "operator", params: { kubernetesVersion: "1.34" } };
  const whole = applySnapshot(before, snap);
  const { nodes: _n, pods: _p, events: _e, ...head } = snap;
  const b = new SnapshotBuilder(before, head);
  for (let i = 0; i < nodes.length; i += 3) b.nodes(nodes.slice(i, i + 3));
  for (let i = 0; i < pods.length; i += 4) b.pods(pods.slice(i, i + 4));
  for (let i = 0; i < events.length; i += 500) b.events(events.slice(i, i + 500));
  const built = b.finish();
  assert.deepEqual(built, whole);
  assert.equal(built.events.length, Config.maxEvents);
  assert.equal(built.events[0].idx, 5, "the newest maxEvents kept");
  assert.equal(built.role, "operator");
  assert.deepEqual(built.params, { kubernetesVersion: "1.34" }, "parameters carry over when the snapshot has none");
  assert.equal(built.nodes.size, 7); assert.equal(built.pods.size, 11);
});

test("a room slower than asked says how fast it really runs; one that keeps up says nothing", () => {
  assert.equal(speedNote(10, false, 3.2), "running at 3.2× of the 10× asked: too big for this server");
  assert.equal(speedNote(100, false, 12.345), "running at 12× of the 100× asked: too big for this server");
  assert.equal(speedNote(10, false, 0.001), "running at 0.001× of the 10× asked: too big for this server");
  assert.equal(speedNote(0.5, false, 0.123), "running at 0.12× of the 0.5× asked: too big for this server");
  assert.equal(speedNote(10, false, null), "");
  assert.equal(speedNote(10, false, undefined), "");  // a message from before the field
  assert.equal(speedNote(10, true, 3.2), "");  // paused: the speed shows "paused"
  assert.equal(speedNote(10, false, 10), "");
  assert.equal(fmtSpeed(2), "2");
});

test("a kubectl label says which labels it set and removed", () => {
  const e = { type: "Fault", fault: "Label", node: "a-1", labels: { "node.kubernetes.io/exclude-disruption": "", tier: "gold", old: null } };
  assert.equal(why(e), "labels changed (kubectl label): node.kubernetes.io/exclude-disruption= tier=gold old-");
});
