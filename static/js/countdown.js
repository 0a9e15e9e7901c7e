// The room page's countdowns, worked out from the facts the engine's views carry (pure, no
// DOM: tests/js/countdown.test.mjs):
// - a silent node's grace period: its last heartbeat (leaseRenewTime), the controller's probe
//   (probeTimestamp) and nodeMonitorGracePeriod / nodeMonitorPeriod from the parameters;
// - a pod's NoExecute toleration: the node's NoExecute taints (timeAdded) and the pod's
//   tolerations (tolerationSeconds), as the taint manager sets its timer.
// Times are simulated seconds (the views' unit); they are compared in whole milliseconds, as
// the engine keeps them, so that 0.1 + 0.2 never moves a monitor pass.

const ms = (s) => Math.round(s * 1000);
const known = (v) => v !== null && v !== undefined;

// The first monitor pass (every period from t=0) strictly after `t`, in ms.
function passAfter(tMs, periodMs) { return (Math.floor(tMs / periodMs) + 1) * periodMs; }
// The first monitor pass at or after `t`: a heartbeat at a pass's own instant is seen by it
// (at one instant the kubelets run before the controller: design.md, "Time").
function passAtOrAfter(tMs, periodMs) { return Math.ceil(tMs / periodMs) * periodMs; }

// A node whose kubelet does not reach the API: when does the monitor pass mark it Unknown?
// Port of the rule in Controller.tryUpdateNodeHealth: Unknown at the first pass at which
// now > probeTimestamp + nodeMonitorGracePeriod, where probeTimestamp is the pass that last
// saw a new Lease renewal. -> {since, at, left, grace, elapsed} (seconds) or null when no
// grace period is running (the kubelet is heard from, or the node is Unknown already).
export function graceCountdown(node, params, t) {
  if (!node || node.ready === "Unknown" || !node.kubelet || node.kubelet.state === "Running") return null;
  const cm = (params && params.controllerManager) || {};
  const graceMs = ms(cm.nodeMonitorGracePeriod ?? 40), periodMs = ms(cm.nodeMonitorPeriod ?? 5);
  if (!(periodMs > 0)) return null;
  let probe = known(node.probeTimestamp) ? ms(node.probeTimestamp) : null;
  // The view may be older than the pass that saw the last renewal: that pass is the probe.
  if (known(node.leaseRenewTime)) {
    const seen = passAtOrAfter(ms(node.leaseRenewTime), periodMs);
    probe = probe === null ? seen : Math.max(probe, seen);
  }
  if (probe === null) return null;
  const at = passAfter(probe + graceMs, periodMs);
  const since = known(node.leaseRenewTime) ? ms(node.leaseRenewTime) : probe;
  const now = ms(t);
  return { since: since / 1000, at: at / 1000, left: Math.max(0, at - now) / 1000,
    grace: graceMs / 1000, elapsed: Math.max(0, now - since) / 1000 };
}

// Does toleration `tol` tolerate `taint`? Port of v1.Toleration.ToleratesTaint.
export function tolerates(tol, taint) {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (tol.key && tol.key !== taint.key) return false;
  if (tol.operator === "Exists") return true;
  return (tol.value || "") === (taint.value || "");
}

// Port of getMinTolerationTime: the least tolerationSeconds of the tolerations used; a
// toleration without it tolerates forever (null), 0 or less means at once.
function minTolerationSeconds(used) {
  let min = Infinity;
  for (const u of used) {
    if (!known(u.tolerationSeconds)) continue;
    if (u.tolerationSeconds <= 0) return 0;
    min = Math.min(min, u.tolerationSeconds);
  }
  return min === Infinity ? null : min;
}

// A pod on a node with NoExecute taints: when does the taint manager delete it?
// Port of processPodOnNode: each taint must be tolerated (else the pod goes at once); the
// timer runs for the least tolerationSeconds of the tolerations used, from the time it was
// set (the taint's timeAdded; a later taint keeps the earlier timer).
// -> {since, at, left, seconds, taint} or {untolerated: true, taint} or null.
export function tolerationCountdown(pod, node, t) {
  if (!pod || !node || pod.terminating) return null;
  const taints = (node.taints || []).filter((x) => x.effect === "NoExecute");
  if (!taints.length) return null;
  const used = [];
  for (const taint of taints) {
    const tol = (pod.tolerations || []).find((x) => tolerates(x, taint));
    if (!tol) return { untolerated: true, taint: taint.key };
    used.push(tol);
  }
  const seconds = minTolerationSeconds(used);
  if (seconds === null) return null;
  const added = taints.map((x) => x.timeAdded).filter(known);
  const since = known(pod.taintEvictionSince) ? pod.taintEvictionSince : added.length ? Math.min(...added) : null;
  if (since === null) return null;
  const at = ms(since) + ms(seconds);
  const byKey = taints.map((x) => x.key.replace("node.kubernetes.io/", "")).join(", ");
  return { since, at: at / 1000, left: Math.max(0, at - ms(t)) / 1000, seconds, taint: byKey };
}

// "4:59" above a minute, "42 s" below (whole seconds, rounded up: 0.2 s left reads 1 s).
export function fmtLeft(seconds) {
  const s = Math.ceil(seconds - 1e-9);
  if (s < 60) return `${Math.max(0, s)} s`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
