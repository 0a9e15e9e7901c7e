// Which node actions a node's menu offers, grouped: only those that apply to the node's state
// (a stopped kubelet can be started, not stopped again; a powered-off node can only be powered
// on). Pure, no DOM: tests/js/faultmenu.test.mjs.
//
// The view's kubelet.state is the first of PoweredOff, Stopped, Partitioned, Running that
// holds (controller/engine/state.py kubelet_state), so the menu offers the way back from what
// it shows; a fault under it (a stopped kubelet on a partitioned node) shows, and is offered,
// once the one above it is undone.

export const FAULT_LABELS = {
  StopKubelet: "stop kubelet", StartKubelet: "start kubelet",
  PartitionNode: "partition", HealNode: "heal partition",
  PowerOffNode: "power off", PowerOnNode: "power on", ShutdownNode: "shut down (graceful)",
  SetNodeNotReady: "runtime down (NotReady)", SetNodeReady: "runtime up (Ready)",
  Cordon: "cordon", Uncordon: "uncordon",
  OutOfService: "mark out-of-service", RemoveOutOfService: "back in service",
  LeakMemory: "memory leak", FillDisk: "fill disk", StopLeak: "stop leaks",
  DeleteNode: "delete node",
};

const OUT_OF_SERVICE = "node.kubernetes.io/out-of-service";

// The pod a node's "memory leak" leaks into: its first running pod that no DaemonSet owns.
export function leakTarget(pods) {
  const p = (pods || []).find((x) => !x.terminating && x.phase === "Running" && !(x.owner || "").startsWith("DaemonSet/"));
  return p ? p.key : null;
}

// The leaks running on this node and its pods, from the LeakMemory / FillDisk / StopLeak
// faults among the events the page has: {node: bool (its disk fills), pods: [keys]}. A
// StopLeak names one target (the node's disk, or one pod), so "stop leaks" sends one per leak.
export function leaks(nodeName, pods, events) {
  const keys = new Set((pods || []).map((p) => p.key));
  let node = false;
  const leakingPods = new Set();
  for (const e of events || []) {
    if (e.type !== "Fault") continue;
    if (e.pod && keys.has(e.pod)) {
      if (e.fault === "LeakMemory" || e.fault === "FillDisk") leakingPods.add(e.pod);
      else if (e.fault === "StopLeak") leakingPods.delete(e.pod);
    } else if (e.node === nodeName) {
      if (e.fault === "FillDisk" || e.fault === "LeakMemory") node = true;
      else if (e.fault === "StopLeak") node = false;
    }
  }
  return { node, pods: [...leakingPods].sort() };
}

// The actions "stop leaks" sends for a node.
export function stopLeakActions(nodeName, running) {
  return [...(running.node ? [{ type: "StopLeak", node: nodeName }] : []), ...running.pods.map((pod) => ({ type: "StopLeak", pod }))];
}

// -> [{group, items: [{type, label, disabled?, why?}]}], empty groups left out.
// opts: {refused: [fault types the release cannot show], leaks: leaks()'s answer}
export function nodeMenu(node, pods, opts = {}) {
  const refused = new Set(opts.refused || []);
  const k = node.kubelet || { state: "Running", runtimeReady: true, shuttingDown: false };
  const state = k.state || "Running";
  const tainted = (node.taints || []).some((t) => t.key === OUT_OF_SERVICE);
  const groups = [];
  const add = (group, ...items) => {
    const list = items.filter(Boolean).filter((i) => !refused.has(i.type))
      .map((i) => ({ ...i, label: i.label || FAULT_LABELS[i.type] }));
    if (list.length) groups.push({ group, items: list });
  };
  const it = (type, extra = {}) => ({ type, ...extra });

  if (state === "PoweredOff") {
    add("Power", it("PowerOnNode"));
  } else {
    add("Kubelet and power",
      state === "Stopped" ? it("StartKubelet") : it("StopKubelet"),
      state === "Partitioned" ? it("HealNode") : state === "Running" ? it("PartitionNode") : null,
      k.shuttingDown ? null : it("ShutdownNode"),
      it("PowerOffNode"));
    if (state === "Running") add("Container runtime", k.runtimeReady === false ? it("SetNodeReady") : it("SetNodeNotReady"));
  }
  add("Scheduling",
    node.unschedulable ? it("Uncordon") : it("Cordon"),
    // The non-graceful shutdown procedure: mark a node that is down; unmark it once recovered.
    tainted ? it("RemoveOutOfService") : node.ready !== "True" ? it("OutOfService") : null);
  if (state !== "PoweredOff") {
    const target = leakTarget(pods);
    add("Resources",
      it("LeakMemory", target ? {} : { disabled: true, why: "no running pod that a DaemonSet does not own" }),
      it("FillDisk"),
      opts.leaks && (opts.leaks.node || opts.leaks.pods.length) ? it("StopLeak") : null);
  }
  add("Remove", it("DeleteNode"));
  return groups;
}
