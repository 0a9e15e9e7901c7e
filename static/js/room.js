// The topology page: a websocket client. Snapshot -> deltas; the DOM is patched per changed
// node (keyed elements), never rebuilt wholesale; past Config.compactAbove nodes a canvas
// draws one square per node instead.
import { Charts } from "./charts.js";
import { h } from "./dom.js";
import { inFocus } from "./lesson.js";
import { LessonPanel } from "./lesson-panel.js";
import { outlook } from "./outlook.js";
import { Config, applyDelta, applySnapshot, emptyState, eventMatches, fmtTime, nodesByZone, podsByNode, resyncReplay, why } from "./state.js";

const app = document.getElementById("app");
const slug = app.dataset.slug;
const token = app.dataset.token;
const operator = app.dataset.operator === "1";
let state = emptyState();
let ws = null;
let lastWall = performance.now();
const els = {
  zones: document.getElementById("zones"), compact: document.getElementById("compact"),
  clock: document.getElementById("clock"), speed: document.getElementById("speed"),
  conn: document.getElementById("conn"), timeline: document.getElementById("timeline"),
  filter: document.getElementById("filter"), detail: document.getElementById("detail"),
  error: document.getElementById("error"), presence: document.getElementById("presence"),
  workloads: document.getElementById("workloads"),
};
const charts = new Charts(document.getElementById("charts"), (t) => pickTime(t));
const nodeEls = new Map();
const zoneEls = new Map();
let selected = null;
// This page's id (one answer per page per lesson question, kept across reloads).
const clientId = localStorage.getItem("playground-client") || (() => {
  const id = `c-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  localStorage.setItem("playground-client", id);
  return id;
})();
const lessonPanel = new LessonPanel(document.getElementById("lesson"), { operator, send: (m) => send(m), onFocus: () => applyFocus() });


function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const name = encodeURIComponent(localStorage.getItem("playground-name") || (operator ? "operator" : "viewer"));
  ws = new WebSocket(`${proto}://${location.host}/ws/rooms/${slug}/?token=${encodeURIComponent(token)}&name=${name}&client=${encodeURIComponent(clientId)}`);
  ws.onopen = () => { els.conn.textContent = "live"; els.conn.className = "pill ok"; };
  ws.onclose = () => { els.conn.textContent = "reconnecting"; els.conn.className = "pill bad"; setTimeout(connect, 1000); };
  ws.onmessage = (msg) => handle(JSON.parse(msg.data));
}

function send(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }

// While a resync fetch is under way, the deltas that arrive wait here (then replay in order).
let resyncBuffer = null;

function resync(notice) {
  if (operator && notice.refused) showError(notice.refused.map((x) => `${x.action} by ${x.actor} refused: ${x.error}`).join("; "));
  if (resyncBuffer) return;  // one fetch at a time; its snapshot is at least as new
  resyncBuffer = [];
  fetch(`/rooms/${slug}/snapshot.json`)
    .then((r) => { if (!r.ok) throw new Error(`snapshot.json: ${r.status}`); return r.json(); })
    .then((snap) => {
      const buffered = resyncBuffer; resyncBuffer = null;
      const replay = resyncReplay(notice, snap, buffered);
      if (replay === null) { send({ type: "snapshot" }); return; }
      handle({ ...snap, role: state.role });
      for (const d of replay) handle(d);
    })
    .catch(() => { resyncBuffer = null; send({ type: "snapshot" }); });
}

function handle(m) {
  if (m.type === "resync") { resync(m); return; }
  if (resyncBuffer && (m.type === "delta" || m.type === "reset")) { resyncBuffer.push(m); return; }
  if (m.type === "snapshot") {
    state = applySnapshot(state, m); lastWall = performance.now(); explain(state.events);
    if (m.lesson !== undefined) lessonPanel.snapshot(m.lesson);  // not in snapshot.json
    renderAll();
    charts.reset(); charts.record(state, m.workloads); charts.recordNodes(state, state.nodes.keys());
    loadHistory();
    renderWorkloads(); renderParams(); return;
  }
  if (m.type === "delta" || m.type === "reset") {
    const r = applyDelta(state, m);
    if (r.gap) { send({ type: "snapshot" }); return; }
    // Valid when sent, but its node or pod was gone at its instant (another operator's action).
    if (operator && m.refused) showError(m.refused.map((x) => `${x.action} by ${x.actor} refused: ${x.error}`).join("; "));
    if (!r.changed) return;
    state = r.state; lastWall = performance.now();
    explain(m.events || []);
    if (r.changed.all) {
      renderAll(); charts.reset(); charts.recordNodes(state, state.nodes.keys()); renderWorkloads(); renderParams();
      loadHistory();
    } else {
      renderChanged(r.changed, m.events || []);
      charts.recordNodes(state, r.changed.nodes);
      if (r.changed.workloads) renderWorkloads();
      if (r.changed.params) renderParams();
    }
    charts.record(state, m.workloads);
    return;
  }
  if (m.type === "lesson") { lessonPanel.message(m); return; }
  if (m.type === "clock") { state.speed = m.speed; state.paused = m.paused; state.t = m.t; lastWall = performance.now(); return; }
  if (m.type === "presence") { els.presence.textContent = m.viewers.map((v) => `${v.name}${v.role === "operator" ? " (operator)" : ""}`).join(", "); return; }
  if (m.type === "error") { lessonPanel.error(m.message); showError(m.message); return; }
  // The server lost Redis: the socket stays open, the room's deltas wait until it is back.
  if (m.type === "live") {
    els.conn.textContent = m.paused ? "live updates paused" : "live";
    els.conn.className = m.paused ? "pill bad" : "pill ok";
    els.conn.title = m.paused ? m.message || "" : "";
  }
}

// The charts start at t=0 whenever the page is opened: the room's history as the engine kept it.
function loadHistory() {
  fetch(`/rooms/${slug}/series.json`).then((r) => (r.ok ? r.json() : null)).then((series) => {
    if (series) { charts.seed(series); charts.record(state, state.workloads); }
  }).catch(() => {});
}

// A time picked on a chart: the timeline scrolls to the last event at or before it.
function pickTime(t) {
  for (const el of els.timeline.querySelectorAll("li.picked")) el.classList.remove("picked");
  const items = [...els.timeline.querySelectorAll("li[data-t]")];
  const hit = items.find((li) => Number(li.dataset.t) <= t + 1e-9) || items[items.length - 1];
  if (!hit) return;
  hit.classList.add("picked");
  hit.scrollIntoView({ block: "center" });
}

// The "why" of each event is worked out when it arrives, while the objects it names are
// still in the state (a deleted pod's tolerations, the taint's time).
function explain(events) { for (const e of events) if (e.why === undefined) e.why = why(e, state); }

function showError(text) {
  els.error.textContent = text; els.error.hidden = false;
  clearTimeout(showError.timer); showError.timer = setTimeout(() => { els.error.hidden = true; }, 6000);
}

// -- rendering ---------------------------------------------------------------------------
function renderAll() {
  els.zones.replaceChildren(); nodeEls.clear(); zoneEls.clear();
  const compact = state.nodes.size > Config.compactAbove;
  els.compact.hidden = !compact;
  els.zones.classList.toggle("compact", compact);
  const byNode = podsByNode(state);
  for (const [zone, nodes] of nodesByZone(state)) {
    const col = zoneColumn(zone);
    for (const n of nodes) {
      if (compact) continue;
      const el = nodeCard(n, byNode.get(n.name) || []);
      nodeEls.set(n.name, el); col.body.append(el);
    }
  }
  renderZones();
  if (compact) drawCompact();
  renderTimeline(true);
  applyFocus();
}

// A lesson step's focus: its nodes and zones highlighted, the rest dimmed (presenter view).
function focusNode(el, n) {
  const f = lessonPanel.focus();
  el.classList.toggle("focused", Boolean(f) && inFocus(f, n.name, n.zone));
  el.classList.toggle("unfocused", Boolean(f) && !inFocus(f, n.name, n.zone));
}
function applyFocus() {
  const f = lessonPanel.focus();
  for (const [name, el] of nodeEls) { const n = state.nodes.get(name); if (n) focusNode(el, n); }
  for (const [zone, z] of zoneEls) {
    z.el.classList.toggle("focused", Boolean(f) && f.zones.has(zone));
    z.el.classList.toggle("unfocused", Boolean(f) && !f.zones.has(zone) && ![...f.nodes].some((x) => (state.nodes.get(x) || {}).zone === zone));
  }
}

function zoneColumn(zone) {
  let z = zoneEls.get(zone);
  if (z) return z;
  const head = h("header", { class: "zone-head", title: "click for why, and what happens next" });
  head.addEventListener("click", (ev) => { if (!ev.target.closest("button")) showDetail("zone", zone); });
  const queue = h("div", { class: "queue" });
  const body = h("div", { class: "zone-body" });
  const el = h("div", { class: "zone", "data-zone": zone }, head, queue, body);
  els.zones.append(el);
  z = { el, head, queue, body };
  zoneEls.set(zone, z);
  return z;
}

function renderZones() {
  // A zone whose last node was deleted leaves the list: drop its (empty) column.
  const listed = new Set(state.zones.map((z) => z.zone));
  for (const [zone, col] of zoneEls) {
    if (!listed.has(zone) && !col.body.childElementCount) { col.el.remove(); zoneEls.delete(zone); }
  }
  for (const z of state.zones) {
    const col = zoneColumn(z.zone);
    const buttons = operator ? h("span", { class: "zone-actions" },
      h("button", { class: "fault", "data-fault": "ZoneOutage", "data-zone": z.zone, text: "zone outage" }),
      h("button", { class: "fault", "data-fault": "ZoneRestore", "data-zone": z.zone, text: "restore" })) : null;
    col.head.replaceChildren(h("strong", { text: `zone ${z.zone || "(none)"}` }), " ",
      h("span", { class: `state s-${z.state}`, text: z.state }), " ",
      h("span", { class: "muted", title: "the rate the zone's queue is drained at (setLimiterInZone)", text: `${z.qps} node/s` }), ...(buttons ? [buttons] : []));
    const bucket = z.burst ? h("span", { class: "bucket", "data-zone": z.zone, title: "token bucket: one token per taint (or eviction); refills at the zone's rate, burst 1" },
      h("span", { class: "bucket-fill" }), h("span", { class: "bucket-text" })) : h("span", { class: "bucket stopped", text: "no tokens: evictions stopped" });
    col.queue.replaceChildren(bucket, " ",
      z.queue.length ? h("span", { class: "queue-list", title: z.queue.join(", "),
        text: `waiting (${z.queue.length}): ${z.queue.slice(0, 8).join(", ")}${z.queue.length > 8 ? `, … ${z.queue.length - 8} more` : ""}` })
        : h("span", { class: "muted", text: "queue empty" }));
    col.zoneData = z;
  }
  paintBuckets(simNow());
}

function simNow() {
  return state.paused ? state.simT : state.simT + ((performance.now() - lastWall) / 1000) * state.speed;
}

function paintBuckets(t) {
  for (const z of zoneEls.values()) {
    const b = z.queue.querySelector(".bucket-fill");
    if (!b || !z.zoneData) continue;
    const tokens = bucketTokens(z.zoneData, t);
    b.style.width = `${Math.min(100, (Math.max(0, tokens) / z.zoneData.burst) * 100)}%`;
    z.queue.querySelector(".bucket-text").textContent = `bucket ${Math.max(0, tokens).toFixed(2)}/${z.zoneData.burst} token`;
  }
}

// Tokens now, from the bucket as the server last saw it, refilled at qps up to burst.
function bucketTokens(z, t) {
  if (!z.burst) return 0;
  return Math.min(z.burst, z.tokens + Math.max(0, t - z.tokensAt) * z.qps);
}

function renderWorkloads() {
  if (!els.workloads) return;
  const rows = Object.entries(state.workloads || {}).map(([ref, [desired, ready]]) => {
    const kind = ref.split("/")[0];
    const scale = operator && kind !== "DaemonSet" ? h("span", {},
      h("button", { class: "scale", "data-workload": ref, "data-replicas": Math.max(0, desired - 1), text: "−", title: "scale down" }),
      h("button", { class: "scale", "data-workload": ref, "data-replicas": desired + 1, text: "+", title: "scale up" })) : null;
    return h("tr", { "data-workload": ref }, h("td", { text: ref }),
      h("td", { class: ready < desired ? "short" : "", text: `${ready} / ${desired} ready` }), h("td", {}, scale));
  });
  els.workloads.replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { class: "muted", text: "no workloads" }))]));
}

function renderParams() {
  const p = state.params;
  if (!p) return;
  const pill = document.getElementById("k8s-version");
  if (pill && p.kubernetesVersion) {
    const releases = p.kubernetesReleases || [p.kubernetesVersion];
    pill.textContent = `Kubernetes ${p.kubernetesVersion}`;
    pill.title = `this room simulates Kubernetes ${p.kubernetesVersion}` + (releases.length > 1 ? ` (the same for ${releases.join(", ")})` : "");
  }
  const form = document.getElementById("params");
  if (!form) return;
  const note = document.getElementById("params-version");
  if (note && p.kubernetesVersion) note.textContent = `Kubernetes ${p.kubernetesVersion}: fixed for the room (a cluster does not change release while it runs; create a room to try another).`;
  for (const input of form.querySelectorAll("input")) {
    const [group, field] = input.name.split(".");
    const v = p[group] && p[group][field];
    // A setting this release does not have (podEvictionTimeout after 1.27) is not offered.
    input.closest("label").style.display = p[group] && field in p[group] ? "" : "none";
    if (v !== undefined && v !== null) input.placeholder = typeof v === "number" && input.dataset.unit === "s" ? `${v}s` : String(v);
  }
}

// Fault types the room's Kubernetes release cannot show (ShutdownNode before 1.21): no button.
function refusedFaults() { return (state.params && state.params.faultsRefused) || []; }
const FAULT_TITLES = {
  ShutdownNode: "systemctl poweroff: the kubelet's graceful node shutdown (shutdownGracePeriod), then power off",
  OutOfService: "kubectl taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute (non-graceful node shutdown): PodGC force-deletes the node's Terminating pods at its next 20 s pass while the node is not Ready",
  RemoveOutOfService: "kubectl taint node.kubernetes.io/out-of-service-: take the mark off once the node is recovered",
};
// What a fault does differently in 1.18 (still offered there, to show the difference).
const FAULT_TITLES_1_18 = {
  OutOfService: "kubectl taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute: in 1.18 only a NoExecute taint (pods deleted by the taint manager stay Terminating; PodGC's out-of-service rule came in 1.24, GA 1.28)",
};
function faultTitle(type) {
  const v = (state.params && state.params.kubernetesVersion) || "1.18";
  return (v === "1.18" && FAULT_TITLES_1_18[type]) || FAULT_TITLES[type] || "";
}

function readyClass(n) { return n.ready === "True" ? "ready" : n.ready === "False" ? "notready" : "unknown"; }

// Node actions sit in a menu on each card (one click opens it). Cards are rebuilt on every
// change to their node, so which menu is open is kept here, not in the DOM.
let openMenu = null;
function actionMenu(name, list) {
  const menu = h("details", { class: "node-menu", open: openMenu === name },
    h("summary", { text: "actions", title: `actions on ${name}` }), list);
  menu.addEventListener("toggle", () => {
    if (menu.open) openMenu = name; else if (openMenu === name) openMenu = null;
  });
  return menu;
}

function nodeCard(n, pods) {
  const buttons = operator ? actionMenu(n.name, h("div", { class: "node-actions" },
    ...[["StopKubelet", "stop kubelet"], ["StartKubelet", "start kubelet"], ["PartitionNode", "partition"], ["HealNode", "heal"],
        ["PowerOffNode", "power off"], ["PowerOnNode", "power on"], ["SetNodeNotReady", "NotReady"], ["SetNodeReady", "Ready"],
        ["Cordon", "cordon"], ["Uncordon", "uncordon"], ["LeakMemory", "memory leak"], ["FillDisk", "fill disk"],
        ["StopLeak", "stop leaks"], ["DeleteNode", "delete"], ["ShutdownNode", "shut down"],
        ["OutOfService", "out-of-service"], ["RemoveOutOfService", "in service"]]
      .filter(([type]) => !refusedFaults().includes(type))
      .map(([type, label]) => h("button", { class: "fault", "data-fault": type, "data-node": n.name, text: label,
        title: faultTitle(type), disabled: type === "LeakMemory" && !leakTarget(pods) })))) : null;
  const taints = h("div", { class: "taints" }, ...n.taints.map((t) => h("span", { class: `chip ${t.effect}`, text: `${t.key.replace("node.kubernetes.io/", "")}:${t.effect}` })));
  const conds = n.conditions.filter((c) => c.type !== "Ready" && c.status !== "False").map((c) => `${c.type}=${c.status}`).join(" ");
  const hb = h("div", { class: "hb" }, h("div", { class: "hb-bar" }));
  const podBox = h("div", { class: "pods" }, ...pods.map(podTile));
  // Nothing to look at (Ready, untainted, its kubelet running, its pods fine): the presenter
  // view dims it so the nodes that matter stand out.
  const calm = n.ready === "True" && !n.taints.length && !n.unschedulable && (!n.kubelet || n.kubelet.state === "Running")
    && pods.every((p) => !p.terminating && p.phase === "Running" && p.ready !== false);
  const el = h("article", { class: `node ${readyClass(n)}${n.unschedulable ? " cordoned" : ""}${calm ? " calm" : ""}`, "data-node": n.name },
    h("header", {}, h("strong", { text: n.name }), " ", h("span", { class: "ready-label", text: `Ready=${n.ready}` }),
      n.kubelet && n.kubelet.state !== "Running" ? h("span", { class: "kstate", text: ` kubelet ${n.kubelet.state}` }) : null,
      n.kubelet && n.kubelet.shuttingDown ? h("span", { class: "kstate", text: " shutting down" }) : null,
      // Version skew: this node's kubelet is an older release than the control plane.
      n.kubeletVersion ? h("span", { class: "kver", text: ` kubelet ${n.kubeletVersion}`,
        title: `this node's kubelet runs Kubernetes ${n.kubeletVersion}: its rules are that release's` }) : null),
    h("div", { class: "conds muted", text: conds }), hb, taints, podBox, buttons);
  el.addEventListener("click", (ev) => { if (!ev.target.closest("button, details")) showDetail("node", n.name); });
  focusNode(el, n);
  el.tabIndex = 0;
  el.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && ev.target === el) showDetail("node", n.name); });
  return el;
}

// The pod a node's "memory leak" button leaks into: its first running pod that no DaemonSet owns.
function leakTarget(pods) {
  const p = pods.find((x) => !x.terminating && x.phase === "Running" && !(x.owner || "").startsWith("DaemonSet/"));
  return p ? p.key : null;
}

const POD_MARKS = { terminating: "↓", failed: "×", pending: "…", notready: "!" };

function podTile(p) {
  const cls = p.terminating ? "terminating" : p.phase === "Failed" ? "failed" : p.phase === "Pending" ? "pending" : p.ready ? "ok" : "notready";
  // State by shape and text too, not colour alone.
  const mark = POD_MARKS[cls];
  const el = h("span", { class: `pod ${cls} q-${p.qosClass}`, "data-pod": p.key, tabIndex: 0, role: "button",
    title: `${p.key} ${p.terminating ? "Terminating" : p.phase}${p.reason ? " (" + p.reason + ")" : ""}${p.ready === false ? ", not Ready" : ""}` },
    mark ? h("span", { class: "pod-mark", "aria-hidden": "true", text: mark }) : null,
    h("span", { class: "pod-name", text: p.key.split("/")[1] }), h("span", { class: "countdown" }));
  el.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.stopPropagation(); showDetail("pod", p.key); } });
  if (p.taintEvictionAt !== null && p.taintEvictionAt !== undefined) el.dataset.evictAt = p.taintEvictionAt;
  el.addEventListener("click", (ev) => { ev.stopPropagation(); showDetail("pod", p.key); });
  return el;
}

function renderChanged(changed, newEvents) {
  if (state.nodes.size > Config.compactAbove) { renderZones(); drawCompact(); renderTimeline(false, newEvents); return; }
  const byNode = podsByNode(state);
  for (const name of changed.nodes) {
    const old = nodeEls.get(name);
    const n = state.nodes.get(name);
    if (!n) { if (old) old.remove(); nodeEls.delete(name); continue; }
    const fresh = nodeCard(n, byNode.get(name) || []);
    if (old) old.replaceWith(fresh); else zoneColumn(n.zone).body.append(fresh);
    nodeEls.set(name, fresh);
  }
  if (changed.zones) renderZones();
  renderTimeline(false, newEvents);
  if (selected) showDetail(selected.kind, selected.key, true);
}

let compactHits = [];
els.compact.addEventListener("click", (ev) => {
  const r = els.compact.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top - 5;
  for (const z of compactHits) {
    const col = Math.floor((x - z.x0) / (z.size + z.gap)), row = Math.floor(y / (z.size + z.gap));
    if (col < 0 || col >= z.perRow || row < 0) continue;
    const n = z.nodes[row * z.perRow + col];
    if (n) { showDetail("node", n.name); return; }
  }
});

function drawCompact() {
  const c = els.compact, zones = nodesByZone(state);
  const width = els.zones.clientWidth || 1200, size = 6, gap = 1, perRow = Math.floor((width / Math.max(zones.size, 1) - 20) / (size + gap));
  const rows = Math.max(...[...zones.values()].map((l) => Math.ceil(l.length / perRow)), 1);
  c.width = width; c.height = rows * (size + gap) + 10;
  const ctx = c.getContext("2d"); ctx.clearRect(0, 0, c.width, c.height);
  let zi = 0;
  compactHits = [];
  for (const [, nodes] of zones) {
    const x0 = zi * (width / zones.size);
    compactHits.push({ x0, nodes, perRow, size, gap });
    nodes.forEach((n, i) => {
      ctx.fillStyle = n.ready === "True" ? (n.taints.length ? "#d9a400" : "#2e9d4f") : n.ready === "False" ? "#c0392b" : "#7f8c8d";
      ctx.fillRect(x0 + (i % perRow) * (size + gap), 5 + Math.floor(i / perRow) * (size + gap), size, size);
    });
    zi++;
  }
}

function renderTimeline(full, newEvents = []) {
  const filter = els.filter.value.trim();
  const list = full ? state.events : newEvents;
  const items = [];
  for (let i = list.length - 1; i >= 0; i--) {
    const e = list[i];
    if (!eventMatches(e, filter, state)) continue;
    items.push(h("li", { class: `ev t-${e.type}`, "data-t": e.t }, h("span", { class: "ev-t", text: fmtTime(e.t) }), " ",
      h("span", { class: "ev-type", text: e.type }), " ", h("span", { class: "ev-subj", text: e.pod || e.node || e.zone || e.object || e.fault || "" }),
      operator ? h("button", { class: "rewind-here", "data-t": e.t, title: `rewind the room to ${fmtTime(e.t)}, just after this event`, text: "⟲" }) : null,
      h("div", { class: "why", text: e.why ?? why(e, state) })));
    if (items.length >= 400) break;
  }
  if (full) els.timeline.replaceChildren(...items);
  else { els.timeline.prepend(...items); while (els.timeline.childElementCount > 600) els.timeline.lastElementChild.remove(); }
}

function showDetail(kind, key, quiet = false) {
  selected = { kind, key };
  if (kind === "node") charts.selectNode(key);
  const obj = kind === "node" ? state.nodes.get(key) : kind === "zone" ? state.zones.find((z) => z.zone === key) : state.pods.get(key);
  const history = state.events.filter((e) => (kind === "node" ? e.node === key || e.object === `Node/${key}` : kind === "zone" ? e.zone === key : e.pod === key || e.object === `Pod/${key}`));
  const podButtons = operator && kind === "pod" && obj ? h("div", { class: "node-actions" },
    h("button", { class: "fault", "data-fault": "LeakMemory", "data-pod": key, text: "leak memory (50Mi/s)" }),
    h("button", { class: "fault", "data-fault": "StopLeak", "data-pod": key, text: "stop leak" }),
    h("button", { class: "fault", "data-fault": "DeletePod", "data-pod": key, text: "delete pod" })) : null;
  const o = outlook(kind, key, state);
  const explainBox = h("section", { class: "outlook" }, h("h3", { text: "why, and what happens next" }),
    ...o.now.map((s) => h("p", { text: s })),
    o.next.length ? h("ul", {}, ...o.next.map((x) => h("li", {}, h("strong", { text: x.at === null ? "no set time" : fmtTime(x.at) }), " ", x.text)))
      : h("p", { class: "muted", text: "Nothing is scheduled for it." }));
  els.detail.replaceChildren(h("h3", { text: `${kind} ${key}` }), explainBox, ...(podButtons ? [podButtons] : []), h("pre", { class: "yaml", text: obj ? toYaml(obj) : "(gone)" }),
    h("h3", { text: "history" }), h("ol", { class: "timeline small" }, ...history.slice(-50).reverse().map((e) => h("li", { text: `${fmtTime(e.t)} ${e.type} ${e.status || e.reason || e.key || ""} ${e.message || ""}` }))));
  if (!quiet) els.detail.scrollIntoView({ block: "nearest" });
}

function toYaml(v, indent = "") {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return v.length ? v.map((x) => `\n${indent}- ${toYaml(x, indent + "  ").trimStart()}`).join("") : "[]";
  const keys = Object.keys(v);
  return keys.length ? keys.map((k) => `\n${indent}${k}: ${toYaml(v[k], indent + "  ")}`).join("") : "{}";
}

// -- the clock and countdowns (interpolated between deltas) ---------------------------------
// The clock moves every frame; countdowns, heartbeat bars and buckets four times a second
// (walking every node card each frame costs frames on a 300-card page).
let lastSlow = 0;
function tick() {
  const now = performance.now();
  const t = simNow();
  els.clock.textContent = fmtTime(Math.max(0, t));
  els.speed.textContent = state.paused ? "paused" : `${state.speed}×`;
  if (now - lastSlow < 250) { requestAnimationFrame(tick); return; }
  lastSlow = now;
  for (const el of document.querySelectorAll(".pod[data-evict-at]")) {
    const left = Number(el.dataset.evictAt) - t;
    el.querySelector(".countdown").textContent = left > 0 ? ` ${Math.ceil(left)}s` : "";
  }
  const grace = (state.params && state.params.controllerManager.nodeMonitorGracePeriod) || 40;
  for (const el of nodeEls.values()) {
    const n = state.nodes.get(el.dataset.node);
    if (!n || n.leaseRenewTime === null) continue;
    const age = Math.max(0, (n.kubelet && n.kubelet.state === "Running" ? 0 : t - n.leaseRenewTime));
    const bar = el.querySelector(".hb-bar");
    bar.style.width = `${Math.min(100, (age / grace) * 100)}%`;
    bar.title = `last heartbeat ${age.toFixed(1)} s ago (nodeMonitorGracePeriod ${grace} s)`;
  }
  paintBuckets(t);
  requestAnimationFrame(tick);
}

// -- operator controls -------------------------------------------------------------------------
// A fault button's dataset -> the action, in the scenario format (design.md, faults).
function faultAction(d) {
  const type = d.fault;
  if (d.zone !== undefined) return { type, zone: d.zone };
  if (d.pod) return type === "LeakMemory" ? { type, pod: d.pod, rate: "50Mi" } : { type, pod: d.pod };
  if (type === "LeakMemory") {
    const pod = leakTarget(podsByNode(state).get(d.node) || []);
    return { type, pod, rate: "50Mi" };
  }
  if (type === "FillDisk") return { type, node: d.node, rate: "500Mi" };
  return { type, node: d.node };
}
if (operator) {
  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("button.fault");
    if (b) {
      send({ type: "action", action: faultAction(b.dataset) });
      const menu = b.closest("details.node-menu");
      if (menu) { menu.open = false; openMenu = null; }
    }
    const rw = ev.target.closest("button.rewind-here");
    if (rw) send({ type: "rewind", t: Number(rw.dataset.t) });
    const sc = ev.target.closest("button.scale");
    if (sc) send({ type: "action", action: { type: "ScaleWorkload", workload: sc.dataset.workload, replicas: Number(sc.dataset.replicas) } });
    const c = ev.target.closest("button[data-ctl]");
    if (c) {
      const kind = c.dataset.ctl;
      if (kind === "rewind") send({ type: "rewind", t: Number(document.getElementById("rewind-t").value || 0) });
      else send({ type: kind, value: c.dataset.value ? Number(c.dataset.value) : undefined });
    }
  });
  document.getElementById("speed-select").addEventListener("change", (ev) => send({ type: "speed", value: Number(ev.target.value) }));
  document.getElementById("add-node").addEventListener("click", () => {
    const zone = state.zones.length ? state.zones[0].zone : "zone-a";
    send({ type: "action", action: { type: "AddNode", node: { name: `added-${Date.now() % 100000}`, zone } } });
  });
  document.getElementById("params").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const params = {};
    for (const input of ev.target.querySelectorAll("input")) {
      if (!input.value.trim()) continue;
      const [group, field] = input.name.split(".");
      params[group] = params[group] || {};
      const num = Number(input.value);
      params[group][field] = input.value.match(/^[0-9.]+$/) && !field.endsWith("Period") ? num : input.value.trim();
    }
    send({ type: "params", params });
  });
}
els.filter.addEventListener("input", () => renderTimeline(true));
// For measurements and tests: the applied state (read-only use).
window.playgroundRoom = { state: () => state };
connect();
requestAnimationFrame(tick);

// -- presenter view: large type for a projector, what matters highlighted, the rest dimmed ------
function setPresenter(on) {
  document.body.classList.toggle("presenter", on);
  const b = document.getElementById("presenter");
  if (b) b.setAttribute("aria-pressed", on ? "true" : "false");
  const url = new URL(location.href);
  if (on) url.searchParams.set("present", "1"); else url.searchParams.delete("present");
  history.replaceState(null, "", url);
}
document.getElementById("presenter").addEventListener("click", () => setPresenter(!document.body.classList.contains("presenter")));
document.addEventListener("keydown", (ev) => {
  if (ev.target.closest("input, select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "p" || ev.key === "P") setPresenter(!document.body.classList.contains("presenter"));
});
if (new URL(location.href).searchParams.get("present") === "1") setPresenter(true);
