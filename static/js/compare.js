// Compare: two rooms of one scenario on one clock. Each side is a room websocket (snapshot,
// then deltas, as on the room page) drawn as the room page draws its cluster (topology.js:
// tiles, pod marks, countdowns, the faults on each node); one scrubber for the pair (a rewind
// rewinds both rooms, rooms/controls.lockstep_ids); the merged timeline marks the events only
// one side has.
import { markDifferences } from "./diff.js";
import { h, setText } from "./dom.js";
import { faultActionsFor } from "./faultmenu.js";
import { Scrubber, markKind } from "./scrubber.js";
import { Config, applyDelta, applySnapshot, emptyState, fmtShort, fmtTime, podsByNode, shownTime, speedNote } from "./state.js";
import { eventLabel } from "./timeline.js";
import { Topology } from "./topology.js";

const root = document.getElementById("compare");
const token = root.dataset.token;
const operator = root.dataset.operator === "1";
const els = { clock: document.getElementById("clock"), speed: document.getElementById("speed"), conn: document.getElementById("conn"),
  speedNote: document.getElementById("speed-note"), rewindT: document.getElementById("rewind-t"),
  merged: document.getElementById("merged"), onlyDiff: document.getElementById("only-diff"), error: document.getElementById("error") };

// A side's tiles are the room page's, marked as the comparison's (cmp-node).
class SideTopology extends Topology {
  nodeTile(n, pods) {
    const el = super.nodeTile(n, pods);
    el.classList.add("cmp-node");
    return el;
  }
}

const sides = {};
for (const name of ["left", "right"]) {
  const box = document.querySelector(`.side[data-side="${name}"]`);
  const side = { name, slug: root.dataset[name], label: root.dataset[`${name}Label`], state: emptyState(), ws: null, box,
    // The speed it really runs at when its ticks cannot keep up (null: it keeps up), and a
    // rewind asked and not done yet (its t): the note beside the clock says either.
    effective: null, rewinding: null };
  side.topology = new SideTopology({ zones: box.querySelector(".side-zones"), compact: box.querySelector("canvas.side-compact") }, {
    operator, state: () => side.state, showDetail: () => {}, focusNode: () => {}, hideCountdowns: () => false,
  });
  sides[name] = side;
}

// One scrubber for the pair: both rooms' marked events (the right's keyed apart), the left's
// clock; a drag rewinds both.
const scrubber = new Scrubber(document.getElementById("scrubber"), {
  operator, slug: sides.left.slug, compactAbove: Config.compactAbove, lesson: () => null, onRewind: (t) => rewind(t),
});
function loadHistory() {
  scrubber.load(sides.left.state.nodes.size);
  if (sides.right.state.nodes.size > Config.compactAbove) return;
  fetch(`/rooms/${sides.right.slug}/events.json?since=-1`).then((r) => (r.ok ? r.json() : null)).then((body) => {
    if (!body) return;
    for (const e of body.events) if (markKind(e)) scrubber.history.set(`r${e.idx}`, e);
    scrubber.schedule();
  }).catch(() => {});
}
function scrubState() {
  const l = sides.left.state, r = sides.right.state;
  return { simT: l.simT, events: [...l.events, ...r.events.map((e) => ({ ...e, idx: e.idx === undefined ? undefined : `r${e.idx}` }))] };
}

function connect(name) {
  const side = sides[name];
  const proto = location.protocol === "https:" ? "wss" : "ws";
  side.ws = new WebSocket(`${proto}://${location.host}/ws/rooms/${side.slug}/?token=${encodeURIComponent(token)}&name=compare`);
  side.ws.onopen = () => updateConn();
  side.ws.onclose = () => { updateConn(); setTimeout(() => connect(name), 1000); };
  side.ws.onmessage = (msg) => handle(name, JSON.parse(msg.data));
}

function updateConn() {
  const up = Object.values(sides).every((s) => s.ws && s.ws.readyState === 1);
  els.conn.textContent = up ? "live" : "reconnecting"; els.conn.className = `pill ${up ? "ok" : "bad"}`;
}

function send(name, obj) { const ws = sides[name].ws; if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }

function showError(text) {
  els.error.hidden = false; els.error.textContent = text;
  clearTimeout(showError.timer); showError.timer = setTimeout(() => { els.error.hidden = true; }, 6000);
}

// A rewind of the pair (the server takes the other room along), to t seconds.
function rewind(t) { send("left", { type: "rewind", t }); }

function handle(name, m) {
  const side = sides[name];
  if (["snapshot", "delta", "resync", "clock"].includes(m.type) && m.effective !== undefined) side.effective = m.effective;
  if (m.type === "rewinding") { side.rewinding = m.t; return; }
  if (["snapshot", "reset", "resync"].includes(m.type)) side.rewinding = null;
  // A big room's snapshot comes as a note to fetch it: here it is asked for on the socket.
  if (m.type === "snapshot" && m.fetch) { send(name, { type: "snapshot", inline: true }); return; }
  if (m.type === "snapshot") { side.state = applySnapshot(side.state, m); renderSide(side, null); return; }
  // A tick too large to broadcast (controller/rooms/broadcast.py): take a fresh snapshot.
  if (m.type === "resync") { send(name, { type: "snapshot", inline: true }); return; }
  if (m.type === "delta" || m.type === "reset") {
    const r = applyDelta(side.state, m);
    if (r.gap) { send(name, { type: "snapshot" }); return; }
    if (operator && m.refused) showError(m.refused.map((x) => `${side.label}: ${x.action} by ${x.actor} refused: ${x.error}`).join("; "));
    if (!r.changed) return;
    side.state = r.state;
    renderSide(side, r.changed.all ? null : r.changed);
    return;
  }
  if (m.type === "clock") { side.state.speed = m.speed; side.state.paused = m.paused; side.state.t = m.t; return; }
  if (m.type === "error") showError(`${side.label}: ${m.message}`);
}

// changed: a delta's changed objects, or null (everything: a snapshot or a reset).
function renderSide(side, changed) {
  const s = side.state;
  setText(side.box.querySelector("[data-version]"), s.params ? `Kubernetes ${s.params.kubernetesVersion}` : "");
  if (changed) side.topology.renderChanged(changed); else side.topology.renderAll();
  side.topology.paint(simNow());
  if (!changed) loadHistory();
  scrubber.render(scrubState());
  renderMerged();
}

function renderMerged() {
  const merged = markDifferences(sides.left.state.events, sides.right.state.events);
  const only = els.onlyDiff.checked;
  const items = [];
  for (let i = merged.length - 1; i >= 0 && items.length < 500; i--) {
    const e = merged[i];
    if (only && e.side === "both") continue;
    const who = e.side === "both" ? "both" : e.side === "left" ? `only ${sides.left.label}` : `only ${sides.right.label}`;
    const label = eventLabel(e.event);
    items.push(h("li", { class: `ev t-${e.event.type} side-${e.side}`, "data-t": e.event.t },
      h("span", { class: "ev-t", text: fmtTime(e.event.t) }), " ", h("span", { class: `side-tag side-${e.side}`, text: who }), " ",
      h("span", { class: "ev-type", text: label.type }), " ",
      h("span", { class: "ev-subj", text: label.subject }),
      h("span", { class: "muted", text: ` ${e.event.status || e.event.reason || e.event.state || e.event.key || ""}` })));
  }
  els.merged.replaceChildren(...items);
}

// The time the page shows: its data's (the left room's last delta), as on the room page.
function simNow() { return shownTime(sides.left.state); }

let lastSlow = 0;
function tick(now) {
  const t = simNow();
  setText(els.clock, fmtTime(Math.max(0, t)));
  const s = sides.left.state;
  setText(els.speed, s.paused ? "paused" : `${s.speed}×`);
  if (els.speedNote) {
    const rw = Object.values(sides).find((x) => x.rewinding !== null);
    const slowest = Object.values(sides).map((x) => x.effective).filter((e) => e !== null && e !== undefined);
    const note = rw ? `rewinding to ${fmtShort(rw.rewinding)}…` : speedNote(s.speed, s.paused, slowest.length ? Math.min(...slowest) : null);
    setText(els.speedNote, note);
    if (els.speedNote.hidden !== !note) els.speedNote.hidden = !note;
  }
  // Countdowns, heartbeat bars, buckets and the scrubber's handle: four times a second.
  if (!(now - lastSlow < 250)) {
    lastSlow = now;
    for (const side of Object.values(sides)) side.topology.paint(t);
    scrubber.paint(t);
  }
  requestAnimationFrame(tick);
}

els.onlyDiff.addEventListener("change", renderMerged);
if (operator) {
  document.addEventListener("click", (ev) => {
    const c = ev.target.closest("button[data-ctl]");
    if (c && c.dataset.ctl === "rewind") {
      // A rewind needs a time: an empty box is refused, never read as 0 s.
      const text = els.rewindT.value.trim();
      if (!text) { showError("rewind: give the time to rewind both rooms to, in seconds"); els.rewindT.focus(); return; }
      rewind(Number(text));
      return;
    }
    // One control for both: the server applies it to the pair at one wall instant.
    if (c) send("left", { type: c.dataset.ctl, value: c.dataset.value ? Number(c.dataset.value) : undefined });
    const b = ev.target.closest("button.fault");
    if (b) {
      // The same action on both sides, each made from its own side's pods (a leak's target).
      for (const side of Object.values(sides)) {
        const d = b.dataset, s = side.state;
        const pods = (d.node && podsByNode(s).get(d.node)) || [];
        for (const action of faultActionsFor(d, pods, s.events, d.node ? s.nodes.get(d.node) : null)) send(side.name, { type: "action", action });
      }
      for (const side of Object.values(sides)) side.topology.closeMenus();
    }
  });
  document.getElementById("speed-select").addEventListener("change", (ev) => send("left", { type: "speed", value: Number(ev.target.value) }));
}
connect("left"); connect("right");
requestAnimationFrame(tick);
