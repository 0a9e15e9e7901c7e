// node --test tests/js: a node's action menu offers only the faults that apply to its state,
// grouped (static/js/faultmenu.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { faultActionsFor, faultBadges, fmtRate, leaks, nodeMenu, podLeakText, stopLeakActions } from "../../static/js/faultmenu.js";

const OOS = { key: "node.kubernetes.io/out-of-service", value: "nodeshutdown", effect: "NoExecute" };
const base = { name: "a-1", ready: "True", unschedulable: false, taints: [], kubelet: { state: "Running", runtimeReady: true, shuttingDown: false } };
const node = (over = {}, kubelet = {}) => ({ ...base, ...over, kubelet: { ...base.kubelet, ...kubelet } });
const web = { key: "default/web", phase: "Running", terminating: false, owner: "ReplicaSet/web" };
const ds = { key: "kube-system/proxy", phase: "Running", terminating: false, owner: "DaemonSet/proxy" };
// The menu as "Group: type type; Group: type".
const shape = (groups) => groups.map((g) => `${g.group}: ${g.items.map((i) => i.type).join(" ")}`).join("; ");

const CASES = [
  ["a healthy node: every way to break it, and nothing that undoes what did not happen",
    node(), [web], {},
    "Kubelet and power: StopKubelet PartitionNode ShutdownNode PowerOffNode; Container runtime: SetNodeNotReady; Scheduling: Cordon; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a stopped kubelet: start it (not stop it again); not yet out-of-service while still Ready",
    node({}, { state: "Stopped" }), [web], {},
    "Kubelet and power: StartKubelet ShutdownNode PowerOffNode; Scheduling: Cordon; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a partitioned node: heal it; its kubelet still runs and can be stopped; once Unknown it can be marked out-of-service",
    node({ ready: "Unknown" }, { state: "Partitioned" }), [web], {},
    "Kubelet and power: StopKubelet HealNode ShutdownNode PowerOffNode; Scheduling: Cordon OutOfService; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a powered-off node: power on, scheduling and delete only",
    node({ ready: "Unknown" }, { state: "PoweredOff" }), [web], {},
    "Power: PowerOnNode; Scheduling: Cordon OutOfService; Remove: DeleteNode"],
  ["a runtime that is down: bring it up; cordoned: uncordon",
    node({ ready: "False", unschedulable: true }, { runtimeReady: false }), [web], {},
    "Kubelet and power: StopKubelet PartitionNode ShutdownNode PowerOffNode; Container runtime: SetNodeReady; Scheduling: Uncordon OutOfService; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a node out of service: back in service, not marked again",
    node({ ready: "Unknown", taints: [OOS] }, { state: "PoweredOff" }), [], {},
    "Power: PowerOnNode; Scheduling: Cordon RemoveOutOfService; Remove: DeleteNode"],
  ["shutting down: no second shutdown",
    node({ ready: "False" }, { shuttingDown: true }), [web], {},
    "Kubelet and power: StopKubelet PartitionNode PowerOffNode; Container runtime: SetNodeNotReady; Scheduling: Cordon OutOfService; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a release without graceful shutdown or out-of-service refuses them: not offered",
    node({ ready: "Unknown" }, { state: "Partitioned" }), [web], { refused: ["ShutdownNode", "OutOfService", "RemoveOutOfService"] },
    "Kubelet and power: StopKubelet HealNode PowerOffNode; Scheduling: Cordon; Resources: LeakMemory FillDisk; Remove: DeleteNode"],
  ["a leak running: stop leaks is offered",
    node(), [web], { leaks: { node: false, pods: ["default/web"] } },
    "Kubelet and power: StopKubelet PartitionNode ShutdownNode PowerOffNode; Container runtime: SetNodeNotReady; Scheduling: Cordon; Resources: LeakMemory FillDisk StopLeak; Remove: DeleteNode"],
];

for (const [name, n, pods, opts, want] of CASES) {
  test(`menu: ${name}`, () => assert.equal(shape(nodeMenu(n, pods, opts)), want));
}

test("menu: never both halves of a pair, in any kubelet state", () => {
  for (const state of ["Running", "Stopped", "Partitioned", "PoweredOff"]) {
    for (const unschedulable of [false, true]) {
      const types = nodeMenu(node({ unschedulable }, { state }), [web]).flatMap((g) => g.items.map((i) => i.type));
      for (const [a, b] of [["StopKubelet", "StartKubelet"], ["PartitionNode", "HealNode"], ["PowerOffNode", "PowerOnNode"], ["Cordon", "Uncordon"], ["SetNodeNotReady", "SetNodeReady"], ["OutOfService", "RemoveOutOfService"]]) {
        assert.ok(!(types.includes(a) && types.includes(b)), `${state}: ${a} and ${b}`);
      }
    }
  }
});

test("menu: a memory leak needs a running pod no DaemonSet owns (shown, disabled, with why)", () => {
  const item = nodeMenu(node(), [ds]).find((g) => g.group === "Resources").items.find((i) => i.type === "LeakMemory");
  assert.equal(item.disabled, true);
  assert.match(item.why, /DaemonSet/);
  assert.equal(nodeMenu(node(), [ds, web]).find((g) => g.group === "Resources").items[0].disabled, undefined);
});

test("leaks: from the faults in the timeline; StopLeak names one target each", () => {
  const pods = [web];
  const ev = (fault, target) => ({ type: "Fault", fault, ...target });
  assert.deepEqual(leaks("a-1", pods, []), { node: false, pods: [] });
  const events = [ev("LeakMemory", { pod: "default/web", rate: "50Mi" }), ev("FillDisk", { node: "a-1", rate: "500Mi" }), ev("FillDisk", { node: "a-2", rate: "500Mi" })];
  const running = leaks("a-1", pods, events);
  assert.deepEqual(running, { node: true, pods: ["default/web"] });
  assert.deepEqual(stopLeakActions("a-1", running), [{ type: "StopLeak", node: "a-1" }, { type: "StopLeak", pod: "default/web" }]);
  assert.deepEqual(leaks("a-1", pods, [...events, ev("StopLeak", { node: "a-1" })]), { node: false, pods: ["default/web"] });
  assert.deepEqual(leaks("a-1", pods, [...events, ev("StopLeak", { pod: "default/web" })]), { node: true, pods: [] });
});

// Issue #38: "Memory leak" and "runtime down" showed nothing on the node until its next status.
test("badges: runtime down and leaking show from the views at once", () => {
  assert.deepEqual(faultBadges(node(), [web]), []);
  const down = faultBadges(node({}, { runtimeReady: false }), [web]);
  assert.deepEqual(down.map((b) => b.text), ["runtime down"]);
  assert.match(down[0].title, /SetNodeNotReady/);
  // A powered-off node's runtime is moot: "PoweredOff" says it all.
  assert.deepEqual(faultBadges(node({}, { runtimeReady: false, state: "PoweredOff" }), []), []);
  const leaky = { ...web, leaking: [{ resource: "memory", rate: 50 * 2 ** 20, until: null }] };
  const badges = faultBadges(node(), [leaky, ds]);
  assert.deepEqual(badges.map((b) => b.text), ["leaking"]);
  assert.equal(badges[0].title, "leaking: memory 50Mi/s into default/web");
  const disk = faultBadges(node({ leaking: [{ resource: "ephemeral-storage", rate: 500 * 2 ** 20, until: 90 }] }), [], 60);
  assert.equal(disk[0].title, "leaking: disk 500Mi/s into the node");
  // A leak with an end stops showing at it.
  assert.deepEqual(faultBadges(node({ leaking: [{ resource: "ephemeral-storage", rate: 1, until: 90 }] }), [], 90), []);
  assert.equal(podLeakText(leaky), "leaking memory 50Mi/s");
  assert.equal(podLeakText(web), "");
  assert.equal(fmtRate(1536), "1.5Ki/s");
  assert.equal(fmtRate(3 * 2 ** 30), "3Gi/s");
});

test("leaks: the views' own leaking counts (the page keeps only recent events)", () => {
  const leaky = { ...web, leaking: [{ resource: "memory", rate: 1, until: null }] };
  assert.deepEqual(leaks("a-1", [leaky], []), { node: false, pods: ["default/web"] });
  assert.deepEqual(leaks("a-1", [web], [], node({ leaking: [{ resource: "ephemeral-storage", rate: 1, until: null }] })), { node: true, pods: [] });
});

test("fault actions: the same for the room page and each side of a comparison", () => {
  assert.deepEqual(faultActionsFor({ fault: "LeakMemory", node: "a-1" }, [ds, web], []), [{ type: "LeakMemory", pod: "default/web", rate: "50Mi" }]);
  assert.deepEqual(faultActionsFor({ fault: "FillDisk", node: "a-1" }, [], []), [{ type: "FillDisk", node: "a-1", rate: "500Mi" }]);
  assert.deepEqual(faultActionsFor({ fault: "ZoneOutage", zone: "z" }, [], []), [{ type: "ZoneOutage", zone: "z" }]);
  assert.deepEqual(faultActionsFor({ fault: "StopKubelet", node: "a-1" }, [web], []), [{ type: "StopKubelet", node: "a-1" }]);
  const leaky = { ...web, leaking: [{ resource: "memory", rate: 1, until: null }] };
  assert.deepEqual(faultActionsFor({ fault: "StopLeak", node: "a-1" }, [leaky], []), [{ type: "StopLeak", pod: "default/web" }]);
  assert.deepEqual(faultActionsFor({ fault: "StopLeak", node: "a-1" }, [web], []), [{ type: "StopLeak", node: "a-1" }]);
});
