// "Explain this": why a node, pod or zone is in its state now and what happens next, and when.
// The times are the engine's own (unknownAt from the monitor pass's rule, the taint manager's
// timers, the zone queue's token bucket), carried in the view rows; this only words them.
import { fmtShort, podsByNode } from "./state.js";

const KUBELET_WORDS = {
  Stopped: "its kubelet is stopped",
  PoweredOff: "the node is powered off",
  Partitioned: "the node is cut off from the control plane",
};

// -> { now: [sentences], next: [{ at, text }] sorted by time (at null = no set time) }
export function outlook(kind, key, state) {
  if (kind === "node") return nodeOutlook(state.nodes.get(key), state);
  if (kind === "pod") return podOutlook(state.pods.get(key), state);
  if (kind === "zone") return zoneOutlook((state.zones || []).find((z) => z.zone === key), state);
  return { now: [], next: [] };
}

function cm(state) { return (state.params && state.params.controllerManager) || {}; }
function release(state) { return (state.params && state.params.kubernetesVersion) || "1.18"; }
// PodGC's gcTerminating (1.28+): a Terminating pod on a node that is not Ready and has the
// out-of-service taint is force-deleted at its next pass (gcCheckPeriod 20 s, from the
// controller manager's start: about the next multiple of 20 s).
function outOfServiceGC(p, node, state) {
  if (!p.terminating || !node || release(state) === "1.18" || node.ready === "True") return null;
  if (p.held && p.held.length) return null;  // a lesson's open question: no prediction
  if (!node.taints.some((t) => t.key === "node.kubernetes.io/out-of-service")) return null;
  return { at: (Math.floor(state.t / 20) + 1) * 20, text: `${p.key} force-deleted by PodGC at its next 20 s pass, about then: Terminating on ${p.node}, which is not Ready and tainted out-of-service (gcTerminating); its controller recreates it elsewhere.` };
}
function sorted(next) { return next.sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity)); }
// A row held back while a lesson's question is open (engine/holdback.py): its times of what
// happens next come with the answer, so say that rather than "nothing is scheduled".
const HELD_NEXT = { at: null, text: "What happens next is shown once the open question's answer is revealed." };
function held(row, next) { if (row.held && row.held.length) next.push(HELD_NEXT); }

function nodeOutlook(n, state) {
  if (!n) return { now: ["This node is gone."], next: [] };
  const now = [], next = [];
  held(n, next);
  const kstate = n.kubelet ? n.kubelet.state : "Running";
  if (kstate !== "Running") {
    const since = n.leaseRenewTime !== null && n.leaseRenewTime !== undefined ? ` (its last Lease renewal: ${fmtShort(n.leaseRenewTime)})` : "";
    now.push(`Ready=${n.ready}: ${KUBELET_WORDS[kstate] || "its kubelet is silent"}, so no heartbeat reaches the API${since}.`);
  } else if (n.ready === "False") {
    now.push("Ready=False: the kubelet reports it is not ready (its container runtime is down).");
  } else {
    now.push(`Ready=${n.ready}: the kubelet renews its Lease and posts status.`);
  }
  if (n.unknownAt !== null && n.unknownAt !== undefined) {
    const grace = cm(state).nodeMonitorGracePeriod;
    next.push({ at: n.unknownAt, text: `Ready=Unknown, unless the node is heard from: the first monitor pass (every ${cm(state).nodeMonitorPeriod ?? 5} s) more than nodeMonitorGracePeriod${grace ? ` ${grace} s` : ""} after the last heartbeat it saw.` });
  }
  const noExecute = n.taints.filter((t) => t.effect === "NoExecute");
  for (const t of noExecute) now.push(`Tainted ${t.key.replace("node.kubernetes.io/", "")}:NoExecute${t.timeAdded !== undefined ? ` since ${fmtShort(t.timeAdded)}` : ""}.`);
  const zone = (state.zones || []).find((z) => z.zone === n.zone);
  if (n.ready !== "True" && !noExecute.length && zone) {
    const pos = zone.queue.indexOf(n.name);
    if (pos >= 0 && (zone.qps === null || zone.qps === undefined)) {
      next.push({ at: null, text: `NoExecute taint waits in zone ${zone.zone}'s queue (position ${pos + 1}); its rate comes with the answer to the open question.` });
    } else if (pos >= 0) {
      if (!zone.qps) next.push({ at: null, text: `NoExecute taint waits: zone ${zone.zone} is ${zone.state} and its queue rate is 0 (no node is tainted until that changes).` });
      else {
        const first = zone.nextTokenAt ?? state.t;
        const at = first + pos / zone.qps;
        next.push({ at, text: `NoExecute taint, about then: position ${pos + 1} in zone ${zone.zone}'s queue, drained at ${zone.qps} node/s (${zone.state}).` });
      }
    }
  }
  const pods = podsByNode(state).get(n.name) || [];
  for (const p of pods) {
    const gc = outOfServiceGC(p, n, state);
    if (gc) next.push(gc);
    else if (p.taintEvictionAt !== null && p.taintEvictionAt !== undefined) {
      next.push({ at: p.taintEvictionAt, text: `${p.key} deleted by the taint manager (its toleration runs out).` });
    } else if (p.terminating && kstate !== "Running") {
      next.push({ at: null, text: `${p.key} stays Terminating: the kubelet cannot confirm its end until the node is back${release(state) === "1.18" ? "" : " (or PodGC force-deletes it once the node is tainted out-of-service)"}.` });
    }
  }
  return { now, next: sorted(next) };
}

function podOutlook(p, state) {
  if (!p) return { now: ["This pod is gone."], next: [] };
  const now = [], next = [];
  held(p, next);
  const node = p.node ? state.nodes.get(p.node) : null;
  if (p.terminating) now.push(`Terminating since ${fmtShort(p.deletionTimestamp)}.`);
  else now.push(`${p.phase}${p.reason ? ` (${p.reason})` : ""}${p.node ? ` on ${p.node}` : ", not scheduled"}${p.ready === false ? ", not Ready" : ""}.`);
  if (p.unschedulableReason) now.push(`The scheduler cannot place it: ${p.unschedulableReason}`);
  if (p.taintEvictionAt !== null && p.taintEvictionAt !== undefined) {
    const secs = p.taintEvictionSince !== null && p.taintEvictionSince !== undefined ? Math.round(p.taintEvictionAt - p.taintEvictionSince) : null;
    const taints = node ? node.taints.filter((t) => t.effect === "NoExecute").map((t) => t.key.replace("node.kubernetes.io/", "")) : [];
    next.push({ at: p.taintEvictionAt, text: `Deleted by the taint manager unless ${p.node} loses its NoExecute taint${taints.length ? ` (${taints.join(", ")}:NoExecute)` : ""}: timer set at ${fmtShort(p.taintEvictionSince)}${secs !== null ? `, the pod tolerates it ${secs} s` : ""}.` });
  }
  const gc = outOfServiceGC(p, node, state);
  if (gc) next.push(gc);
  else if (p.terminating && node && node.kubelet && node.kubelet.state !== "Running") {
    next.push({ at: null, text: `Stays Terminating while ${p.node}'s kubelet cannot confirm; removed after its grace period once the node is back, or at once by a force delete${release(state) === "1.18" ? "" : " or PodGC (out-of-service taint)"}.` });
  }
  return { now, next: sorted(next) };
}

function zoneOutlook(z, state) {
  if (!z) return { now: ["This zone is gone."], next: [] };
  const nodes = [...state.nodes.values()].filter((n) => n.zone === z.zone);
  const notReady = nodes.filter((n) => n.ready !== "True").length;
  const rateHeld = z.qps === null || z.qps === undefined;  // a lesson's open question
  const now = [`${z.state}: ${notReady} of ${nodes.length} nodes not Ready (unhealthyZoneThreshold ${cm(state).unhealthyZoneThreshold ?? 0.55}); ${rateHeld ? "its NoExecute rate comes with the answer" : `NoExecute taints at ${z.qps} node/s`}.`];
  const next = [];
  if (rateHeld) return { now, next: [HELD_NEXT, ...z.queue.map((name, i) => ({ at: null, text: `${name} waits in the queue (position ${i + 1}).` }))] };
  z.queue.forEach((name, i) => {
    if (!z.qps) next.push({ at: null, text: `${name} waits in the queue (rate 0).` });
    else next.push({ at: (z.nextTokenAt ?? state.t) + i / z.qps, text: `${name} tainted NoExecute, about then (position ${i + 1}).` });
  });
  return { now, next: sorted(next) };
}
