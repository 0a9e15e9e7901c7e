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
// The views' own "leaking" (the node's, given as `nodeView`, and its pods') count too: the page
// keeps only its recent events.
export function leaks(nodeName, pods, events, nodeView = null) {
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
  for (const p of pods || []) if (p.leaking && p.leaking.length) leakingPods.add(p.key);
  if (nodeView && nodeView.leaking && nodeView.leaking.length) node = true;
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

// A rate of bytes per second as a leak's fault writes it ("50Mi/s").
export function fmtRate(bytes) {
  for (const [unit, size] of [["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]]) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))}${unit}/s`;
  }
  return `${bytes}B/s`;
}

const LEAK_WHAT = { memory: "memory", "ephemeral-storage": "disk", pids: "pids" };

// The faults a node's tile shows at once, from its view and its pods' (issue #38: "Memory
// leak" and "runtime down" showed nothing until the kubelet's next status update):
// [{kind, text, title}]. The runtime's state and the running leaks are in the views the
// fault's delta carries (controller/engine/state.py: kubelet.runtimeReady, leaking); a leak
// with an end stops showing at it (t: the page's time, s).
export function faultBadges(node, pods, t = 0) {
  const out = [];
  const k = node.kubelet;
  if (k && k.runtimeReady === false && k.state !== "PoweredOff") {
    out.push({ kind: "runtime-down", text: "runtime down",
      title: "the container runtime is down (SetNodeNotReady): the kubelet starts and stops no container, and reports Ready=False (KubeletNotReady) at its next status update" });
  }
  const running = (list) => (list || []).filter((l) => l.until === null || l.until === undefined || t < l.until);
  const parts = running(node.leaking).map((l) => `${LEAK_WHAT[l.resource] || l.resource} ${fmtRate(l.rate)} into the node`);
  for (const p of pods || []) for (const l of running(p.leaking)) parts.push(`${LEAK_WHAT[l.resource] || l.resource} ${fmtRate(l.rate)} into ${p.key}`);
  if (parts.length) out.push({ kind: "leaking", text: "leaking", title: `leaking: ${parts.join("; ")}` });
  return out;
}

// A pod's running leaks, as its mark's title says them ("" when none).
export function podLeakText(pod, t = 0) {
  const list = (pod.leaking || []).filter((l) => l.until === null || l.until === undefined || t < l.until);
  return list.map((l) => `leaking ${LEAK_WHAT[l.resource] || l.resource} ${fmtRate(l.rate)}`).join(", ");
}

// A fault button's dataset (data-fault, data-node / data-pod / data-zone) -> the actions it
// sends, in the scenario format (design.md, faults): a node's "memory leak" leaks into its
// leakTarget, "stop leaks" stops each leak running (stopLeakActions). pods: the node's;
// events and nodeView: for the leaks running. The room page and the comparison (each side
// its own pods) send the same.
export function faultActionsFor(d, pods, events, nodeView = null) {
  const type = d.fault;
  if (d.zone !== undefined) return [{ type, zone: d.zone }];
  if (d.pod) return [type === "LeakMemory" ? { type, pod: d.pod, rate: "50Mi" } : { type, pod: d.pod }];
  if (type === "LeakMemory") return [{ type, pod: leakTarget(pods), rate: "50Mi" }];
  if (type === "FillDisk") return [{ type, node: d.node, rate: "500Mi" }];
  if (type === "StopLeak") {
    const list = stopLeakActions(d.node, leaks(d.node, pods, events, nodeView));
    if (list.length) return list;
  }
  return [{ type, node: d.node }];
}
