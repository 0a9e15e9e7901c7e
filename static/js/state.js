// Client-side room state: snapshot, then ordered deltas. Pure (no DOM), so node's test
// runner can check it. A delta whose seq is not the next one means we missed something:
// the caller asks for a fresh snapshot.

export const Config = {
  maxEvents: 2000,       // timeline entries kept in the browser
  compactAbove: 300,     // nodes: switch to the canvas rendering past this
};

export function emptyState() {
  return { seq: -1, t: 0, simT: 0, speed: 1, paused: false, role: "viewer",
           nodes: new Map(), pods: new Map(), zones: [], events: [], room: null, params: null, workloads: {} };
}

export function applySnapshot(state, snap) {
  const b = new SnapshotBuilder(state, snap);
  b.nodes(snap.nodes); b.pods(snap.pods); b.events(snap.events || []);
  return b.finish();
}

// A snapshot applied a piece at a time, to the state applySnapshot makes of the whole: a big
// room's resync comes from a worker that fetched and parsed snapshot.json, its nodes, pods
// and events in chunks, each handled in a task of its own (snapshot-fetch.js). head: the
// snapshot without its nodes, pods and events.
export class SnapshotBuilder {
  constructor(state, head) {
    const s = this.s = emptyState();
    s.seq = head.seq; s.t = head.simT ?? head.t; s.simT = s.t;
    s.speed = head.speed; s.paused = head.paused; s.role = head.role || state.role;
    s.room = head.room;
    s.zones = head.zones || [];
    s.params = head.params || state.params || null;
    s.workloads = head.workloads || {};
  }
  nodes(list) { for (const n of list) this.s.nodes.set(n.name, n); }
  pods(list) { for (const p of list) this.s.pods.set(p.key, p); }
  events(list) { for (const e of list) this.s.events.push(e); }
  finish() {
    if (this.s.events.length > Config.maxEvents) this.s.events = this.s.events.slice(-Config.maxEvents);
    return this.s;
  }
}

// Returns {state, changed: {nodes:Set, pods:Set, zones:bool}} or {gap: true}.
export function applyDelta(state, delta) {
  if (delta.type === "reset") {
    return { state: applySnapshot(state, { ...delta, nodes: Object.values(delta.nodes).filter(Boolean),
      pods: Object.values(delta.pods).filter(Boolean), zones: delta.zones || [], events: delta.events, simT: delta.t }),
      changed: { all: true } };
  }
  if (delta.seq <= state.seq) return { state, changed: null };       // old news
  if (delta.seq !== state.seq + 1) return { gap: true };
  const changed = { nodes: new Set(), pods: new Set(), zones: false };
  state.seq = delta.seq; state.t = delta.t; state.simT = delta.t;
  state.speed = delta.speed; state.paused = delta.paused;
  for (const [name, n] of Object.entries(delta.nodes || {})) {
    if (n === null) state.nodes.delete(name); else state.nodes.set(name, n);
    changed.nodes.add(name);
  }
  for (const [key, p] of Object.entries(delta.pods || {})) {
    const old = state.pods.get(key);
    if (old && old.node) changed.nodes.add(old.node);
    if (p === null) state.pods.delete(key); else { state.pods.set(key, p); if (p.node) changed.nodes.add(p.node); }
    changed.pods.add(key);
  }
  if (delta.zones) { state.zones = delta.zones; changed.zones = true; }
  if (delta.params) { state.params = delta.params; changed.params = true; }
  if (delta.workloads) { state.workloads = delta.workloads; changed.workloads = true; }
  if (delta.events && delta.events.length) {
    state.events.push(...delta.events);
    if (state.events.length > Config.maxEvents) state.events.splice(0, state.events.length - Config.maxEvents);
  }
  return { state, changed };
}

// A "resync" notice stands for a tick too large to broadcast (controller/rooms/broadcast.py): the page
// fetches snapshot.json and keeps the deltas that arrive meanwhile. What to apply after the
// fetched snapshot, in order: the buffered deltas newer than it (older ones are in it). A
// snapshot older than the notice itself is stale: null (ask again).
export function resyncReplay(notice, snap, buffered) {
  if (snap.seq < notice.seq) return null;
  return buffered.filter((d) => d.seq > snap.seq).sort((a, b) => a.seq - b.seq);
}

// The simulated time the page shows. The clock, the countdowns and the picture must agree on
// it, so it is the time of the data the page holds (the last delta's), not the room's clock
// run on between deltas: a delta comes once per beat (0.75 wall seconds: 37.5 simulated seconds
// at 50x), and a clock interpolated past the data showed 04:09 over zone-c's header still
// "Normal" while its FullDisruption at 245 s waited in the next delta, and stepped back when
// that delta came. At 1x it moves 0.75 s at a time (a second a second); at 50x 37.5 s at a time.
export function shownTime(state) {
  return state.simT;
}

// A room too big for its worker's tick budget runs slower than asked (controller/rooms/tick.py):
// its deltas and clock messages carry the speed it really runs at ("effective", null when it
// keeps up). The note the page shows beside the speed, or "" (none).
export function speedNote(speed, paused, effective) {
  if (paused || effective === null || effective === undefined || !(effective < speed)) return "";
  return `running at ${fmtSpeed(effective)}× of the ${fmtSpeed(speed)}× asked: too big for this server`;
}

// 10 and over as whole numbers, from 1 with one decimal, under 1 with two significant digits.
export function fmtSpeed(x) {
  if (x >= 10) return String(Math.round(x));
  if (x >= 1) return String(Math.round(x * 10) / 10);
  return String(Number(x.toPrecision(2)));
}

export function podsByNode(state) {
  const out = new Map();
  for (const p of state.pods.values()) {
    const k = p.node || "";
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(p);
  }
  for (const list of out.values()) list.sort((a, b) => a.key.localeCompare(b.key));
  return out;
}

export function nodesByZone(state) {
  const out = new Map();
  for (const n of state.nodes.values()) {
    if (!out.has(n.zone)) out.set(n.zone, []);
    out.get(n.zone).push(n);
  }
  for (const list of out.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  return new Map([...out.entries()].sort((a, b) => a[0].localeCompare(b[0])));
}

export function fmtTime(t) {
  const ms = Math.round(t * 1000);
  const m = Math.floor(ms / 60000), s = Math.floor((ms % 60000) / 1000), r = ms % 1000;
  return `${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}.${String(r).padStart(3, "0")}`;
}

// One line saying which rule made an event happen, and which parameter governs it.
export function why(e, state) {
  const pod = e.pod && state ? state.pods.get(e.pod) : null;
  const cm = (state && state.params && state.params.controllerManager) || {};
  const zone = e.node && state ? (state.nodes.get(e.node) || {}).zone : undefined;
  const zoneState = zone !== undefined ? (state.zones || []).find((z) => z.zone === zone) : null;
  switch (e.type) {
    case "NodeReady":
      if (e.status === "Unknown") return `controller: no Lease renewal or status from ${e.node} for longer than nodeMonitorGracePeriod${cm.nodeMonitorGracePeriod ? ` (${cm.nodeMonitorGracePeriod} s)` : ""}, strictly past, checked every nodeMonitorPeriod${cm.nodeMonitorPeriod ? ` (${cm.nodeMonitorPeriod} s)` : ""}`;
      if (e.status === "False") {
        const n = state ? state.nodes.get(e.node) : null;
        if (n && n.kubelet && n.kubelet.shuttingDown) return `kubelet node shutdown manager on ${e.node}: logind announced a shutdown, Ready=False "node is shutting down" posted at once (syncNodeStatus)`;
        return `kubelet on ${e.node} reports its runtime is down (KubeletNotReady)`;
      }
      return `kubelet on ${e.node} posted Ready (tryUpdateNodeStatus: at every nodeStatusUpdateFrequency check it compares its status with the API's copy and patches a difference, such as the controller's Unknown)`;
    case "TaintAdded":
      if (e.key === OUT_OF_SERVICE) return outOfServiceWhy(state);
      if (e.effect === "NoSchedule") return `doNoScheduleTaintingPass: condition -> ${e.key} taint, at once (no rate limit)`;
      return `doNoExecuteTaintingPass: ${e.node} reached the head of zone ${zone || "(none)"}'s rate-limited queue and got a token (${zoneState ? zoneState.qps + " node/s, " : ""}nodeEvictionRate${cm.nodeEvictionRate !== undefined ? " " + cm.nodeEvictionRate : ""}, secondaryNodeEvictionRate for a partially disrupted large zone)`;
    case "TaintRemoved":
      if (e.key === OUT_OF_SERVICE) return `the operator removed node.kubernetes.io/out-of-service from ${e.node} (RemoveOutOfService, kubectl taint ... out-of-service-): what the non-graceful shutdown procedure asks once the node is recovered; pods may be scheduled there again`;
      return e.effect === "NoExecute" ? `markNodeAsReachable: ${e.node} observed Ready again (or all zones fully disrupted)` : `doNoScheduleTaintingPass: the condition behind ${e.key} cleared`;
    case "ZoneState":
      return `ComputeZoneState: share of not-ready nodes vs unhealthyZoneThreshold (${e.state})`;
    case "ZoneRate":
      return e.qps === 0 ? `setLimiterInZone: evictions stopped in ${e.zone} (small partially disrupted zone, or every zone down)` : `setLimiterInZone: ${e.zone} tainted at ${e.qps} node/s`;
    case "PodDeleted":
      if (e.by === "TaintManager" || e.by === "TaintEvictionController") return taintManagerWhy(e, pod, state);
      if (e.by === "PodGC") return podGCWhy(e, state);
      if (e.by === "NodeLifecycleController") return `legacy eviction (taint manager off): ${e.node} not Ready for podEvictionTimeout${cm.podEvictionTimeout ? ` (${cm.podEvictionTimeout} s)` : ""} and its zone's queue gave it a token; every non-DaemonSet pod deleted`;
      return `deleted by ${e.by}`;
    case "PodEvicted":
      return `kubelet eviction manager on ${e.node}: ${e.signal} below its ${e.soft ? "soft" : "hard"} threshold; ranked first (exceeds requests, then priority, then usage)`;
    case "PodPhase":
      if (e.reason === "Terminated") return shutdownWhy(e, pod, state);
      if (e.reason === "Evicted") return `kubelet eviction manager on the pod's node evicted it: Failed (Evicted)${statusWhenStopped(state)}, sent by the kubelet's status manager at once, or, from a partitioned kubelet, at its first syncBatch (every 10 s) after the heal`;
      if (e.reason === "Preempting") return `${PREEMPTION_RULE}: the pod was preempted to make room for a critical pod${statusWhenStopped(state)}`;
      if (e.reason && e.reason.startsWith("OutOf")) return admissionWhy(e.reason);
      if (e.phase === "Failed" && !e.reason) return `PodGC (markFailedAndDeletePod, 1.26+): a pod it force-deletes is patched to phase Failed first, so it does not stay Running forever without a kubelet; or, for a pod being deleted on a live node, ${LAST_PHASE_RULE}: not every container exited 0 (SIGTERM's 143, SIGKILL's 137 at the grace period's end, or containers lost with the machine)`;
      if (e.phase === "Succeeded" && !e.reason) return `${LAST_PHASE_RULE}: every container exited 0 on SIGTERM (sigterm.playground/exit-code: 0), so Succeeded; a kill's Evicted or Terminated reason is dropped with the new phase`;
      return "";
    case "PodRejected":
      if (e.reason && e.reason.startsWith("OutOf")) return admissionWhy(e.reason);
      if (e.reason === "UnexpectedAdmissionError") return `${PREEMPTION_RULE}: a critical pod short of resources, but no set of lower-priority pods frees enough, so it is rejected`;
      if (e.reason === "Evicted") return "kubelet eviction manager's Admit: the node reports pressure, and only critical pods (and, with MemoryPressure alone, non-BestEffort or memory-pressure-tolerating pods) are admitted";
      if (e.reason === "NodeShutdown") return "kubelet node shutdown manager's Admit: the node is shutting down, every new pod is rejected";
      return `kubelet admission: rejected (${e.reason})`;
    case "PodDisruptionTarget":
      if (e.reason === "TerminationByKubelet" && e.message === PREEMPTION_DISRUPTION) return `${PREEMPTION_RULE} (DisruptionTarget, 1.26+): the pod's containers stopped, so it is Failed (Preempting) with this condition`;
      if (e.reason === "TerminationByKubelet" && e.message && e.message.startsWith("The node was low on resource")) return "kubelet eviction manager (evictPod, DisruptionTarget 1.26+): the evicted pod's containers stopped, so its Failed (Evicted) status is written with this condition";
      if (e.reason === "TerminationByKubelet") return shutdownWhy(e, pod, state);
      if (e.reason === "DeletionByTaintManager") return `taint-eviction-controller (addConditionAndDeletePod, 1.26+): ${e.node} has a NoExecute taint the pod does not tolerate, or no longer does (its tolerationSeconds ran out), so it is marked DisruptionTarget "${e.message}" right before its DELETE`;
      if (e.reason === "DeletionByPodGC") return `PodGC gcOrphaned (markFailedAndDeletePodWithCondition, 1.26+): ${e.node} no longer exists (confirmed after its 40 s quarantine), so the pod is marked DisruptionTarget "${e.message}" and Failed right before its force delete`;
      return `DisruptionTarget (${e.reason}): ${e.message}`;
    case "NodePoweredOff":
      return e.reason === "GracefulShutdownDone"
        ? `kubelet node shutdown manager on ${e.node}: every priority group done, inhibitor lock released, the machine powers off`
        : `${e.node} powered off at once: no shutdownGracePeriod (the shutdown manager is off) or no kubelet to delay it`;
    case "PodReady":
      if (e.status === "False" && pod && pod.phase === "Failed" && pod.reason === "Terminated") return "kubelet node shutdown manager: the pod's containers stopped, so it is Failed and not Ready";
      if (e.status === "False" && pod && pod.phase === "Failed" && pod.reason === "Evicted") return "kubelet eviction manager: the pod was evicted, so it is Failed and not Ready";
      if (e.status === "False" && pod && pod.phase === "Failed" && pod.reason === "Preempting") return `${PREEMPTION_RULE}: the pod was preempted for a critical pod, so it is Failed and not Ready`;
      if (e.status === "False") return "MarkPodsNotReady: the node stopped being Ready";
      if (state && (state.events || []).some((x) => x.type === "PodReady" && x.pod === e.pod && x.status === "False" && x.t <= e.t)) return "kubelet status manager: its syncBatch (every 10 s) found the API's Ready=False differs from the kubelet's own status (needsReconcile) and patched Ready=True back";
      return "kubelet started the pod";
    case "K8sEvent":
      if (e.reason === "NodeNotReady" && e.object && e.object.startsWith("Pod/")) return `MarkPodsNotReady (every release after 1.18): the pod's node stopped being Ready, so its Ready condition went False and node-controller records this Warning on the pod`;
      return `${e.eventType} event ${e.reason}: ${e.message}`;
    case "NodeCondition":
      if (e.status === "Unknown") return `controller: kubelet stopped posting status, so ${e.condition} is Unknown too`;
      return `kubelet eviction manager reports ${e.condition}=${e.status} (held for evictionPressureTransitionPeriod after the last breach)`;
    case "Fault":
      // SetParameters says what it changed: "controllerManager.nodeEvictionRate: 0.1 -> 0.5".
      if (e.fault === "SetParameters" && Array.isArray(e.changes)) return `SetParameters: ${e.changes.join("; ") || "nothing"}`;
      // kubectl label node X key=value key2-: the node's labels (exclude-disruption counts).
      if (e.fault === "Label" && e.labels && typeof e.labels === "object") return `labels changed (kubectl label): ${Object.entries(e.labels).map(([k, v]) => (v === null ? `${k}-` : `${k}=${v}`)).join(" ")}`;
      return `fault injected: ${e.fault}`;
    case "FaultRefused":
      // A scenario's fault whose node, pod, zone or workload a live action removed before its
      // instant: not applied, and the room goes on (as a live action whose target is gone).
      return `fault not applied: the scenario's ${e.fault} names what no longer exists (${e.error}); the room goes on without it`;
    default:
      return "";
  }
}

const OUT_OF_SERVICE = "node.kubernetes.io/out-of-service";

function releaseOf(state) { return (state && state.params && state.params.kubernetesVersion) || "1.18"; }

// The operator's OutOfService fault: what the taint does in the room's release.
function outOfServiceWhy(state) {
  const start = "the operator marked the node out-of-service (OutOfService: node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, non-graceful node shutdown)";
  if (releaseOf(state) === "1.18") return `${start}; in 1.18 it is only a NoExecute taint: the taint manager deletes the pods that do not tolerate it, PodGC does not react (gcTerminating came in 1.24, GA 1.28), so they stay Terminating while the node is down`;
  return `${start}: the taint-eviction-controller deletes the pods that do not tolerate it at once, and PodGC's next 20 s pass force-deletes every Terminating pod on it while the node is not Ready (gcTerminating, GA 1.28)`;
}

// PodDeleted by PodGC, by the part of gc() that found it.
function podGCWhy(e, state) {
  switch (e.reason) {
    case "OrphanedPod":
      return `PodGC gcOrphaned: ${e.node} no longer exists; its name waited 40 s in quarantine (quarantineTime) and the next 20 s pass (gcCheckPeriod) confirmed it gone, so the pod is force-deleted (grace 0)`;
    case "TerminatingOutOfService":
      return `PodGC gcTerminating (NodeOutOfServiceVolumeDetach, GA 1.28): the pod was Terminating on ${e.node}, which is not Ready and has the node.kubernetes.io/out-of-service taint, so its 20 s pass (gcCheckPeriod) force-deletes it (grace 0) and its controller can recreate it elsewhere`;
    case "TerminatedPodThreshold":
      return "PodGC gcTerminated: more Failed/Succeeded pods than terminatedPodThreshold (12500); the oldest (evicted first) are deleted";
    default:
      return `PodGC force-deleted the pod (${e.reason})`;
  }
}

// "kubelet node shutdown manager (GracefulNodeShutdown, 1.21+): non-critical pods killed first
// within shutdownGracePeriod − shutdownGracePeriodCriticalPods (20 s), ..."
const PREEMPTION_RULE = "kubelet critical pod admission (CriticalPodAdmissionHandler)";
// A pod's last phase (#115331): the kubelet PATCHes it before its status manager DELETEs the pod.
const LAST_PHASE_RULE = "the kubelet's last phase (1.27+, SyncTerminatingPod and getPhase with podIsTerminal), written once the containers stopped and before the pod is deleted";
const PREEMPTION_DISRUPTION = "Pod was preempted by Kubelet to accommodate a critical pod.";

// 1.18 writes a killed pod's Failed status before the kill; later releases once its containers stopped.
function statusWhenStopped(state) {
  const v = state && state.params && state.params.kubernetesVersion;
  if (!v) return "";
  return v !== "1.18" ? ", its status written once its containers stopped (1.27+)" : ", its status written before the kill (1.18)";
}

function admissionWhy(reason) {
  const resource = reason.slice("OutOf".length);
  return `kubelet resource-fit admission (lifecycle.NewPredicateAdmitHandler): the pod's ${resource} request does not fit the node's allocatable minus what the pods it already admitted request`;
}

function shutdownWhy(e, pod, state) {
  const k = (state && state.params && state.params.kubelet) || {};
  const grace = k.shutdownGracePeriod, critical = k.shutdownGracePeriodCriticalPods;
  const isCritical = pod && pod.priority >= 2000000000;
  const rule = "kubelet node shutdown manager (GracefulNodeShutdown, 1.21+)";
  const status = "status Failed (Terminated) with DisruptionTarget once its containers stopped";
  if (isCritical) return `${rule}: critical pods (priority >= 2000000000) killed last, within shutdownGracePeriodCriticalPods${critical !== undefined ? ` (${critical} s)` : ""}; ${status}`;
  const share = grace !== undefined && critical !== undefined ? ` (${grace - critical} s)` : "";
  return `${rule}: non-critical pods killed first within shutdownGracePeriod − shutdownGracePeriodCriticalPods${share} or their own terminationGracePeriodSeconds if shorter; ${status}`;
}

const DEFAULT_TOLERATION_PARAM = {
  "node.kubernetes.io/unreachable": "defaultUnreachableTolerationSeconds",
  "node.kubernetes.io/not-ready": "defaultNotReadyTolerationSeconds",
};

// 1.18: the NoExecuteTaintManager inside the node lifecycle controller; 1.29+: its own controller.
function taintDeleter(e) {
  return e.by === "TaintEvictionController" ? "taint-eviction-controller (its own controller since 1.29)" : "taint manager";
}

// "taint manager deleted default/web-1: node a-1 tainted unreachable:NoExecute at 02:30,
// pod tolerates it 300 s (defaultUnreachableTolerationSeconds)"
function taintManagerWhy(e, pod, state) {
  const node = state ? state.nodes.get(e.node) : null;
  const taints = node ? node.taints.filter((t) => t.effect === "NoExecute") : [];
  if (!taints.length) return `${taintDeleter(e)} deleted ${e.pod}: ${e.node} carried a NoExecute taint the pod does not tolerate long enough`;
  const tols = pod ? pod.tolerations || [] : [];
  const matching = (t) => tols.filter((x) => (x.effect === "NoExecute" || !x.effect) && (x.operator === "Exists" ? !x.key || x.key === t.key : x.key === t.key && (x.value || "") === (t.value || "")));
  const parts = taints.map((t) => {
    const short = `${t.key.replace("node.kubernetes.io/", "")}:NoExecute`;
    const at = t.timeAdded !== undefined && t.timeAdded !== null ? ` at ${fmtShort(t.timeAdded)}` : "";
    const m = matching(t);
    if (!pod) return `node ${e.node} tainted ${short}${at}`;
    if (!m.length) return `node ${e.node} tainted ${short}${at}, pod does not tolerate it`;
    const secs = Math.min(...m.map((x) => (x.tolerationSeconds === undefined ? Infinity : x.tolerationSeconds)));
    if (secs === Infinity) return `node ${e.node} tainted ${short}${at}, pod tolerates it forever`;
    const param = DEFAULT_TOLERATION_PARAM[t.key];
    const api = state && state.params ? state.params.apiServer : null;
    const source = param && api && api[param] === secs ? param : "the pod's tolerationSeconds";
    return `node ${e.node} tainted ${short}${at}, pod tolerates it ${secs} s (${source})`;
  });
  return `${taintDeleter(e)} deleted ${e.pod}: ${parts.join("; ")}`;
}

export function fmtShort(t) {
  const s = fmtTime(t);
  return s.endsWith(".000") ? s.slice(0, -4) : s;
}

// The timeline filter: every word must match the event's type, node, pod, zone (an event on a
// node matches its node's zone), object, fault or reason; "zone-a PodDeleted" narrows to both.
export function eventMatches(e, filter, state) {
  if (!filter) return true;
  const node = e.node && state ? state.nodes.get(e.node) : null;
  // A parameter change is found by what its entry reads ("parameters changed", its fields).
  const changes = Array.isArray(e.changes) ? `parameters changed ${e.changes.join(" ")}` : null;
  const fields = [e.type, e.node, e.pod, e.zone, e.object, e.fault, e.reason, node ? node.zone : null, changes]
    .filter((v) => v !== null && v !== undefined).map((v) => String(v).toLowerCase());
  return filter.toLowerCase().split(/\s+/).filter(Boolean).every((w) => fields.some((v) => v.includes(w)));
}

// {"memory.available": 37.2, "memory.available threshold": 1.2, ...} in percent of capacity;
// with several thresholds on a signal (hard and soft) the highest one is drawn.
export function signalValues(signals) {
  const out = {};
  for (const s of signals) {
    if (!s.capacity) continue;
    out[s.signal] = Math.round((s.available / s.capacity) * 10000) / 100;
    const top = Math.max(...s.thresholds.map((x) => x.value));
    out[`${s.signal} threshold`] = Math.round((top / s.capacity) * 10000) / 100;
  }
  return out;
}
