// The topology page: a websocket client. Snapshot -> deltas; the cluster's picture
// (topology.js) is patched per changed node (keyed elements), never rebuilt wholesale.
import { Charts } from "./charts.js";
import { h, setText } from "./dom.js";
import { faultActionsFor } from "./faultmenu.js";
import { KEYS_NOTE, keyAction, keyRows, ownButton, typing } from "./keys.js";
import { inFocus } from "./lesson.js";
import { LessonPanel } from "./lesson-panel.js";
import { outlook } from "./outlook.js";
import { paramAt, paramsFrom, placeholderFor } from "./params.js";
import { timed } from "./perf.js";
import { fetchSnapshot } from "./snapshot-fetch.js";
import { Scrubber } from "./scrubber.js";
import { Config, applyDelta, applySnapshot, emptyState, eventMatches, fmtShort, fmtTime, podsByNode, resyncReplay, shownTime, speedNote, why } from "./state.js";
import { TimelineList, entryElement, entryKey } from "./timeline.js";
import { bigTiles, Topology } from "./topology.js";

const app = document.getElementById("app");
const slug = app.dataset.slug;
const token = app.dataset.token;
const operator = app.dataset.operator === "1";
let state = emptyState();
let ws = null;
let lastWall = performance.now();
// The speed the room really runs at when it cannot keep up (null: it keeps up), from the last
// delta, resync notice or clock message that said (speedNote).
let effective = null;
// A rewind asked and not done yet (its t, s): the room's owner worker re-simulates it; the
// page says so until the reset (or the resync notice that stands for a big one) arrives.
let rewinding = null;
const els = {
  zones: document.getElementById("zones"), compact: document.getElementById("compact"),
  clock: document.getElementById("clock"), speed: document.getElementById("speed"),
  speedNote: document.getElementById("speed-note"),
  conn: document.getElementById("conn"), timeline: document.getElementById("timeline"),
  filter: document.getElementById("filter"), detail: document.getElementById("detail"),
  error: document.getElementById("error"), presence: document.getElementById("presence"),
  workloads: document.getElementById("workloads"),
  notStarted: document.getElementById("not-started"),
};
const timeline = new TimelineList(els.timeline);
const charts = new Charts(document.getElementById("charts"), (t) => pickTime(t));
let selected = null;
// Learning alone (data-solo): the learner leads the clock, but injects no faults (issue #38).
const solo = app.dataset.solo === "1";
const topology = new Topology({ zones: els.zones, compact: els.compact }, {
  operator: operator && !solo, state: () => state, showDetail: (kind, key, quiet, near) => showDetail(kind, key, quiet, near), focusNode: (el, n) => focusNode(el, n),
  // Countdowns are predictions: none while this page answers an open, unrevealed question.
  hideCountdowns: () => lessonPanel.holdsPredictions(),
});
// This page's id (one answer per page per lesson question, kept across reloads).
const clientId = localStorage.getItem("playground-client") || (() => {
  const id = `c-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  localStorage.setItem("playground-client", id);
  return id;
})();
const scrubber = new Scrubber(document.getElementById("scrubber"), {
  operator, slug, compactAbove: Config.compactAbove, onRewind: (t) => send({ type: "rewind", t, confirm: true }), lesson: () => lessonPanel.timeline(),
});
const lessonPanel = new LessonPanel(document.getElementById("lesson"), { operator, slug, send: (m) => send(m), onFocus: () => applyFocus() });


let wsPresent = false;
function presenting() {
  return document.body.classList.contains("presenter") || new URL(location.href).searchParams.get("present") === "1";
}

function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const name = encodeURIComponent(localStorage.getItem("playground-name") || (operator ? "operator" : "viewer"));
  // The presenter view is held back like a viewer's page while a lesson's question is open
  // (the class reads the projector): the server is told, and told again on a toggle.
  wsPresent = presenting();
  ws = new WebSocket(`${proto}://${location.host}/ws/rooms/${slug}/?token=${encodeURIComponent(token)}&name=${name}&client=${encodeURIComponent(clientId)}&present=${wsPresent ? 1 : 0}`);
  ws.onopen = () => {
    els.conn.textContent = "live"; els.conn.className = "pill ok";
    while (outbox.length) ws.send(JSON.stringify(outbox.shift()));
  };
  // 4429: this address has too many live sockets (controller/live/codes.py): retry slowly.
  ws.onclose = (ev) => {
    const crowded = ev.code === 4429;
    els.conn.textContent = crowded ? "too many tabs from this address; retrying" : "reconnecting";
    els.conn.className = "pill bad";
    setTimeout(connect, crowded ? 15000 : 1000);
  };
  ws.onmessage = (msg) => handle(JSON.parse(msg.data));
}

// A lesson's lead pressed while the socket reconnects (the presenter view's toggle reconnects
// it) is sent once it is open again, not lost.
const outbox = [];
function send(obj) {
  if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj));
  else if (String(obj.type).startsWith("lesson.")) outbox.push(obj);
}

// While a resync fetch is under way, the deltas that arrive wait here (then replay in order).
let resyncBuffer = null;

// notice: a resync's, or a big room's snapshot sent as a note to fetch it ({fetch: true}:
// its role and lesson; the page then shows the fetched snapshot as it would the message).
function resync(notice) {
  if (operator && notice.refused) showError(notice.refused.map((x) => `${x.action} by ${x.actor} refused: ${x.error}`).join("; "));
  if (resyncBuffer) return;  // one fetch at a time; its snapshot is at least as new
  resyncBuffer = [];
  const first = notice.type === "snapshot";
  // With the token: while a lesson's question is open, a viewer's snapshot is held back.
  // Fetched, parsed and applied in pieces off the main thread (snapshot-fetch.js).
  fetchSnapshot(`/rooms/${slug}/snapshot.json${token ? `?token=${encodeURIComponent(token)}` : ""}`, () => state)
    .then(({ head, state: built }) => {
      const buffered = resyncBuffer; resyncBuffer = null;
      const replay = resyncReplay(notice, head, buffered);
      if (replay === null) { send({ type: "snapshot" }); return; }
      built.role = first ? notice.role : state.role;
      const snap = first ? { ...head, role: built.role, lesson: notice.lesson } : { ...head, role: state.role };
      timed("room:snapshot", () => handleSnapshot(snap, built));
      for (const d of replay) handle(d);
    })
    // Not fetched: the snapshot on the socket (inline, so that it is not a note again).
    .catch(() => { resyncBuffer = null; send({ type: "snapshot", inline: true }); });
}

function handle(m) {
  if (m.type === "delta" || m.type === "resync" || m.type === "clock") effective = m.effective ?? null;
  if (m.type === "rewinding") { rewinding = m.t; return; }
  if (m.type === "reset" || m.type === "resync") rewinding = null;
  if (m.type === "resync") { resync(m); return; }
  if (resyncBuffer && (m.type === "delta" || m.type === "reset")) { resyncBuffer.push(m); return; }
  if (m.type === "snapshot" && m.fetch) { resync(m); return; }
  if (m.type === "snapshot") { timed("room:snapshot", () => handleSnapshot(m)); return; }
  if (m.type === "delta" || m.type === "reset") { timed("room:delta", () => handleDelta(m)); return; }
  if (m.type === "lesson") {
    // A checkpoint reached while the page is open: the room paused at the page's time.
    if (m.checkpoint && !(m.checkpoint in (lessonPanel.reached || {}))) lessonPanel.reached = { ...lessonPanel.reached, [m.checkpoint]: state.simT };
    lessonPanel.message(m); scrubber.render(state); topology.paint(simNow()); return;
  }
  if (m.type === "clock") { state.speed = m.speed; state.paused = m.paused; state.t = m.t; lastWall = performance.now(); return; }
  if (m.type === "presence") { if (els.presence) els.presence.textContent = m.viewers.map((v) => `${v.name}${v.role === "operator" ? " (operator)" : ""}`).join(", "); return; }
  // A rewind over injected faults: asked again by the box, with "Rewind anyway".
  if (m.type === "error" && m.confirm) { noteRewind(m.message.replace(/^rewind: r/, "R"), m.confirm); return; }
  if (m.type === "error") { lessonPanel.error(m.message); showError(m.message); return; }
  // The server lost Redis: the socket stays open, the room's deltas wait until it is back.
  if (m.type === "live") {
    els.conn.textContent = m.paused ? "live updates paused" : "live";
    els.conn.className = m.paused ? "pill bad" : "pill ok";
    els.conn.title = m.paused ? m.message || "" : "";
  }
}

// built: the state already made of it (a resync's, built in pieces), else made here.
function handleSnapshot(m, built = null) {
  if (m.effective !== undefined) effective = m.effective;  // a room too big: the note at once
  const waiting = document.getElementById("room-waiting");
  if (waiting) waiting.remove();  // "building" until the room's data is here (issue #38)
  state = built || timed("room:snapshot:apply", () => applySnapshot(state, m)); lastWall = performance.now(); explain(state.events);
  if (m.lesson !== undefined) lessonPanel.snapshot(m.lesson);  // not in snapshot.json
  timed("room:snapshot:render", () => renderAll());
  charts.reset(); charts.record(state, m.workloads); charts.recordNodes(state, state.nodes.keys());
  loadHistory(); scrubber.load(state.nodes.size);
  renderWorkloads(); renderParams();
  // The open "why" panel too: a lesson's question opening sends a held snapshot.
  if (selected) showDetail(selected.kind, selected.key, true);
}

function handleDelta(m) {
  const r = timed("room:delta:apply", () => applyDelta(state, m));
  if (r.gap) { send({ type: "snapshot" }); return; }
  // Valid when sent, but its node or pod was gone at its instant (another operator's action).
  if (operator && m.refused) showError(m.refused.map((x) => `${x.action} by ${x.actor} refused: ${x.error}`).join("; "));
  if (!r.changed) return;
  state = r.state; lastWall = performance.now();
  explain(m.events || []);
  if (r.changed.all) {
    renderAll(); charts.reset(); charts.recordNodes(state, state.nodes.keys()); renderWorkloads(); renderParams();
    loadHistory(); scrubber.load(state.nodes.size);
  } else {
    renderChanged(r.changed, m.events || []);
    charts.recordNodes(state, r.changed.nodes);
    if (r.changed.workloads) renderWorkloads();
    if (r.changed.params) renderParams();
  }
  charts.record(state, m.workloads);
}

// The charts start at t=0 whenever the page is opened: the room's history as the engine kept it.
function loadHistory() {
  fetch(`/rooms/${slug}/series.json`).then((r) => (r.ok ? r.json() : null)).then((series) => {
    if (series) { charts.seed(series); charts.record(state, state.workloads); }
  }).catch(() => {});
}

// A time picked on a chart: the timeline scrolls to the last event at or before it.
function pickTime(t) {
  timeline.flush();
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
  topology.renderAll();
  topology.paint(simNow());
  renderTimeline(true);
  scrubber.render(state);
  applyFocus();
}

function renderChanged(changed, newEvents) {
  timed("room:delta:topology", () => { topology.renderChanged(changed); if (changed.nodes.size && !topology.compact()) sizeTiles(); topology.paint(simNow()); });
  timed("room:delta:timeline", () => renderTimeline(false, newEvents));
  scrubber.render(state);
  if (selected) showDetail(selected.kind, selected.key, true);
}

// A lesson step's focus: its nodes and zones highlighted, the rest dimmed (presenter view).
function focusNode(el, n) {
  const f = lessonPanel.focus();
  el.classList.toggle("focused", Boolean(f) && inFocus(f, n.name, n.zone));
  el.classList.toggle("unfocused", Boolean(f) && !inFocus(f, n.name, n.zone));
}
function applyFocus() {
  const f = lessonPanel.focus();
  for (const [name, el] of topology.nodeEls) { const n = state.nodes.get(name); if (n) focusNode(el, n); }
  for (const [zone, z] of topology.zoneEls) {
    z.el.classList.toggle("focused", Boolean(f) && f.zones.has(zone));
    z.el.classList.toggle("unfocused", Boolean(f) && !f.zones.has(zone) && ![...f.nodes].some((x) => (state.nodes.get(x) || {}).zone === zone));
  }
  sizeTiles();
}
// The projector's tiles: big (everything written out) or small (name and signs), bigTiles.
function sizeTiles() {
  const list = [];
  for (const [name, el] of topology.nodeEls) {
    const n = state.nodes.get(name);
    if (n) list.push({ name, zone: n.zone, loud: !el.classList.contains("calm") || Boolean(n.kubeletVersion) });
  }
  const big = bigTiles(lessonPanel.focus(), list);
  for (const [name, el] of topology.nodeEls) el.classList.toggle("big", big.has(name));
}

// The time the page shows: the clock, the countdowns and the picture agree on it (shownTime).
function simNow() { return shownTime(state, (performance.now() - lastWall) / 1000); }

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
  // Shown with the release's own values only (no 1.18-style defaults before they arrive).
  form.hidden = false;
  document.getElementById("params-head").hidden = false;
  const note = document.getElementById("params-version");
  if (note && p.kubernetesVersion) note.textContent = `Kubernetes ${p.kubernetesVersion}: fixed for the room (a cluster does not change release while it runs; create a room to try another).`;
  for (const input of form.querySelectorAll("input")) {
    const { shown, value } = paramAt(p, input.name);
    // A setting this release does not have (podEvictionTimeout after 1.27) is not offered.
    input.closest("label").style.display = shown ? "" : "none";
    const text = placeholderFor(value, input.dataset.unit);
    if (text) input.placeholder = text;
  }
}

// Fault types the room's Kubernetes release cannot show (ShutdownNode before 1.21): no button.
function renderTimeline(full, newEvents = []) {
  const filter = els.filter.value.trim();
  const list = full ? state.events : newEvents;
  const wanted = [];
  for (let i = list.length - 1; i >= 0; i--) {
    const e = list[i];
    if (!eventMatches(e, filter, state)) continue;
    const text = e.why ?? why(e, state);
    wanted.push({ key: entryKey(e, text), make: () => entryElement(e, text, operator) });
    if (wanted.length >= 400) break;
  }
  if (full) {
    // As a rebuilt list would read: no entry picked on a chart.
    for (const el of els.timeline.querySelectorAll("li.picked")) el.classList.remove("picked");
    // A big room's resync frame also rebuilds its canvas and more: there the list shows its
    // first 40 entries (more than it has room for) at once and 20 more each frame after.
    const big = state.nodes.size > Config.compactAbove;
    timeline.full(wanted, big ? 40 : Infinity, 20);
  } else timeline.prepend(wanted.map((w) => w.make()));
}

// A square of a big room clicked (near: where): its details beside it, the page stays where
// it is (it jumped down to Details; issue #38); the Details card below has them too.
const squareBox = document.getElementById("square-detail");
function showSquare(key, near) {
  if (!squareBox) return;
  const o = outlook("node", key, state);
  const more = h("button", { class: "more", text: "history and YAML in Details ↓" });
  more.addEventListener("click", () => { squareBox.hidden = true; els.detail.scrollIntoView({ block: "nearest" }); });
  const close = h("button", { class: "close", text: "×", title: "close (Esc)" });
  close.addEventListener("click", () => { squareBox.hidden = true; });
  const n = state.nodes.get(key);
  squareBox.replaceChildren(...[close, h("h3", { text: `node ${key}` }),
    n ? h("p", { class: "muted", text: `${n.zone || ""} · Ready=${n.ready ?? "?"}${(n.taints || []).length ? ` · taints: ${n.taints.map((x) => `${x.key}:${x.effect}`).join(", ")}` : ""}` }) : null,
    ...o.now.map((x) => h("p", { text: x })),
    o.next.length ? h("ul", {}, ...o.next.map((x) => h("li", {}, h("strong", { text: x.at === null ? "no set time" : fmtTime(x.at) }), " ", x.text)))
      : h("p", { class: "muted", text: "Nothing is scheduled for it." }),
    more].filter(Boolean));
  squareBox.hidden = false;
  const w = squareBox.offsetWidth, hgt = squareBox.offsetHeight;
  squareBox.style.left = `${Math.max(8, Math.min(near.x + 12, innerWidth - w - 8))}px`;
  squareBox.style.top = `${Math.max(8, Math.min(near.y + 12, innerHeight - hgt - 8))}px`;
}
document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && squareBox) squareBox.hidden = true; });

function showDetail(kind, key, quiet = false, near = null) {
  if (near) { showSquare(key, near); quiet = true; }
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

// -- the clock and countdowns ---------------------------------------------------------------
// The clock moves every frame; countdowns, heartbeat bars and buckets four times a second
// (walking every node card each frame costs frames on a 300-card page).
let lastSlow = 0;
function tick() {
  const now = performance.now();
  const t = simNow();
  // Written only when they change (between deltas the time shown stands still): a write
  // each frame made the browser restyle, lay out and repaint the page at every frame.
  setText(els.clock, fmtTime(Math.max(0, t)));
  setText(els.speed, state.paused ? "paused" : `${state.speed}×`);
  // "Start" (a class room made paused at 0 s) goes once the clock has started.
  lessonPanel.clock(state.paused);  // (learning alone, Next goes on from a paused step)
  if (els.notStarted && !els.notStarted.hidden && state.seq >= 0 && (!state.paused || t > 0)) els.notStarted.hidden = true;
  const note = rewinding !== null ? `rewinding to ${fmtShort(rewinding)}…` : speedNote(state.speed, state.paused, effective);
  if (els.speedNote) { setText(els.speedNote, note); if (els.speedNote.hidden !== !note) els.speedNote.hidden = !note; }
  if (now - lastSlow < 250) { requestAnimationFrame(tick); return; }
  lastSlow = now;
  timed("room:paint", () => { topology.paint(t); scrubber.paint(t); });
  requestAnimationFrame(tick);
}

// -- operator controls -------------------------------------------------------------------------
// A clock control; Play and Step of a lesson room carry the lesson state this page shows (the
// server drops one pressed on a state the lesson has left, instead of applying the lesson's
// rule to a question this page never showed).
function control(kind, value) {
  const at = kind === "resume" || kind === "step" ? lessonPanel.stamp() : null;
  return at ? { type: kind, value, at } : { type: kind, value };
}
// The rewind box: a time is needed (an empty box once reset the room to 0 s, every injected
// fault gone for everyone; issue #38). The server refuses a rewind without one too, and asks
// first when the rewind would undo faults injected after its time ({type: "confirm"}).
const rewindNote = document.getElementById("rewind-note");
function noteRewind(text, confirm = null) {
  if (!rewindNote) { showError(text); return; }
  const kids = [h("span", { class: "rewind-note-text", text })];
  if (confirm) {
    const yes = h("button", { class: "confirm", text: "Rewind anyway" });
    yes.addEventListener("click", () => { rewindNote.hidden = true; send({ ...confirm, confirm: true }); });
    const no = h("button", { class: "cancel", text: "Cancel" });
    no.addEventListener("click", () => { rewindNote.hidden = true; });
    kids.push(yes, no);
  }
  rewindNote.replaceChildren(...kids);
  rewindNote.hidden = false;
}
function askRewind() {
  const box = document.getElementById("rewind-t");
  const raw = box.value.trim();
  if (!raw || !Number.isFinite(Number(raw))) {
    noteRewind("Rewind to when? Type a time in simulated seconds first (the clock's 01:30 is 90 s). Nothing was rewound.");
    box.focus();
    return;
  }
  if (rewindNote) rewindNote.hidden = true;
  send({ type: "rewind", t: Number(raw) });
}
// A fault button's dataset -> the actions it sends (faultmenu.js: the comparison sends the same).
function faultActions(d) {
  return faultActionsFor(d, (d.node && podsByNode(state).get(d.node)) || [], state.events, d.node ? state.nodes.get(d.node) : null);
}
if (operator) {
  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("button.fault");
    if (b) {
      for (const action of faultActions(b.dataset)) send({ type: "action", action });
      if (b.closest("details.node-menu")) topology.closeMenus();
    }
    const rw = ev.target.closest("button.rewind-here");
    // The scrubber's drag and a timeline entry's ⟲ name their time as they are pressed
    // ("rewind to 01:30?"): sent confirmed. The box asks first (askRewind).
    if (rw) send({ type: "rewind", t: Number(rw.dataset.t), confirm: true });
    const sc = ev.target.closest("button.scale");
    if (sc) send({ type: "action", action: { type: "ScaleWorkload", workload: sc.dataset.workload, replicas: Number(sc.dataset.replicas) } });
    const c = ev.target.closest("button[data-ctl]");
    if (c) {
      const kind = c.dataset.ctl;
      if (kind === "rewind") askRewind();
      else send(control(kind, c.dataset.value ? Number(c.dataset.value) : undefined));
    }
  });
  document.getElementById("speed-select").addEventListener("change", (ev) => send({ type: "speed", value: Number(ev.target.value) }));
  document.getElementById("add-node")?.addEventListener("click", () => {
    const zone = state.zones.length ? state.zones[0].zone : "zone-a";
    send({ type: "action", action: { type: "AddNode", node: { name: `added-${Date.now() % 100000}`, zone } } });
  });
  document.getElementById("params")?.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const params = paramsFrom([...ev.target.querySelectorAll("input")].map((i) => [i.name, i.value]));
    send({ type: "params", params });
  });
}
els.filter.addEventListener("input", () => renderTimeline(true));
// For measurements and tests: the applied state (read-only use).
window.playgroundRoom = { state: () => state, charts: () => charts, topology: () => topology };
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
  if (ws && ws.readyState === 1 && presenting() !== wsPresent) {  // reconnect at once, told
    ws.onclose = null; ws.close(); connect();
  }
}
document.getElementById("presenter").addEventListener("click", () => setPresenter(!document.body.classList.contains("presenter")));

// -- keys: one table (keys.js) for what they do and for the `?` overlay that lists them ---------
function keyContext() {
  return { operator, lesson: Boolean(lessonPanel.ls.def), presenter: document.body.classList.contains("presenter") };
}
function playPause() {
  if (!state.paused) { send({ type: "pause" }); return; }
  if (!lessonPanel.play()) send(control("resume"));  // at an open question: the reveal first
}
const helpBox = document.getElementById("keys-help");
function showHelp(on) {
  if (!helpBox) return;
  if (on) {
    const ctx = keyContext();
    helpBox.querySelector(".keys-rows").replaceChildren(...keyRows(ctx).map((r) => h("tr", {},
      h("th", {}, ...r.keys.flatMap((k, i) => [i ? " " : null, h("kbd", { text: k })]).filter(Boolean)), h("td", { text: r.what }))));
    helpBox.querySelector(".keys-note").textContent = KEYS_NOTE;
  }
  helpBox.hidden = !on;
  if (on) helpBox.querySelector("button.close").focus();
}
helpBox?.addEventListener("click", (ev) => { if (ev.target === helpBox || ev.target.closest("button.close")) showHelp(false); });
document.getElementById("keys-button")?.addEventListener("click", () => showHelp(helpBox.hidden));
document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) return;
  const action = keyAction(ev.key, keyContext());
  if (!action) return;
  if (action === "close") { if (helpBox && !helpBox.hidden) { ev.preventDefault(); showHelp(false); } return; }
  if (action === "play-pause" && ownButton(ev.target)) return;  // that button's own Space
  ev.preventDefault();
  // (a focused Play or Step button would also take the Space as its own click on key up)
  if (action === "play-pause" && ev.target.blur && ev.target !== document.body) ev.target.blur();
  if (helpBox && !helpBox.hidden && action !== "help") showHelp(false);
  if (ev.repeat) return;  // a key held down is one press
  if (action === "help") showHelp(Boolean(helpBox && helpBox.hidden));
  else if (action === "next" || action === "prev") lessonPanel.press(action);
  else if (action === "play-pause") playPause();
  else if (action === "presenter") setPresenter(!document.body.classList.contains("presenter"));
});
if (new URL(location.href).searchParams.get("present") === "1") setPresenter(true);
