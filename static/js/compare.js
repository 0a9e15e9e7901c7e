// Compare: two rooms of one scenario on one clock. Each side is a room websocket (snapshot,
// then deltas, as on the room page); the merged timeline marks the events only one side has.
import { applyDelta, applySnapshot, emptyState, fmtTime, nodesByZone, podsByNode } from "./state.js";
import { markDifferences } from "./diff.js";
import { h } from "./dom.js";

const root = document.getElementById("compare");
const token = root.dataset.token;
const operator = root.dataset.operator === "1";
const sides = {
  left: { slug: root.dataset.left, label: root.dataset.leftLabel, state: emptyState(), ws: null, lastWall: performance.now() },
  right: { slug: root.dataset.right, label: root.dataset.rightLabel, state: emptyState(), ws: null, lastWall: performance.now() },
};
const els = { clock: document.getElementById("clock"), speed: document.getElementById("speed"), conn: document.getElementById("conn"),
  merged: document.getElementById("merged"), onlyDiff: document.getElementById("only-diff"), error: document.getElementById("error") };


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

function handle(name, m) {
  const side = sides[name];
  if (m.type === "snapshot") { side.state = applySnapshot(side.state, m); side.lastWall = performance.now(); render(); return; }
  // A tick too large to broadcast (controller/rooms/broadcast.py): take a fresh snapshot.
  if (m.type === "resync") { send(name, { type: "snapshot" }); return; }
  if (m.type === "delta" || m.type === "reset") {
    const r = applyDelta(side.state, m);
    if (r.gap) { send(name, { type: "snapshot" }); return; }
    if (!r.changed) return;
    side.state = r.state; side.lastWall = performance.now(); render(); return;
  }
  if (m.type === "clock") { side.state.speed = m.speed; side.state.paused = m.paused; side.lastWall = performance.now(); return; }
  if (m.type === "error") { els.error.hidden = false; els.error.textContent = `${side.label}: ${m.message}`; }
}

const ACTIONS = [["StopKubelet", "stop kubelet"], ["StartKubelet", "start kubelet"], ["PartitionNode", "partition"],
  ["HealNode", "heal"], ["PowerOffNode", "power off"], ["PowerOnNode", "power on"],
  // Both releases have the taint; only from 1.28 does PodGC act on it: a 1.18/1.34 pair shows it.
  ["OutOfService", "out-of-service"], ["RemoveOutOfService", "in service"]];

function renderSide(name) {
  const side = sides[name], s = side.state;
  const box = document.querySelector(`.side[data-side="${name}"]`);
  box.querySelector("[data-version]").textContent = s.params ? `Kubernetes ${s.params.kubernetesVersion}` : "";
  const byNode = podsByNode(s);
  const zones = [...nodesByZone(s)].map(([zone, nodes]) => {
    const zs = (s.zones || []).find((z) => z.zone === zone);
    return h("div", { class: "cmp-zone" },
      h("div", { class: "zone-head" }, h("strong", { text: `zone ${zone || "(none)"}` }), " ",
        zs ? h("span", { class: `state s-${zs.state}`, text: zs.state }) : null, zs ? ` ${zs.qps} node/s` : ""),
      ...nodes.map((n) => {
        const pods = byNode.get(n.name) || [];
        const running = pods.filter((p) => !p.terminating && p.phase === "Running").length;
        const terminating = pods.filter((p) => p.terminating).length;
        const menu = operator ? h("details", { class: "node-menu" }, h("summary", { text: "actions" }),
          h("div", { class: "node-actions" }, ...ACTIONS.map(([type, label]) =>
            h("button", { class: "fault", "data-fault": type, "data-node": n.name, text: label })))) : null;
        return h("div", { class: `cmp-node node ${n.ready === "True" ? "ready" : n.ready === "False" ? "notready" : "unknown"}`, "data-node": n.name },
          h("strong", { text: n.name }), " ", h("span", { class: "ready-label", text: `Ready=${n.ready}` }), " ",
          ...n.taints.filter((t) => t.effect === "NoExecute").map((t) => h("span", { class: "chip NoExecute", text: `${t.key.replace("node.kubernetes.io/", "")}:NoExecute` })),
          h("span", { class: "muted", text: ` ${running} running${terminating ? `, ${terminating} terminating` : ""}` }), menu);
      }));
  });
  box.querySelector(".side-zones").replaceChildren(...zones);
}

function renderMerged() {
  const merged = markDifferences(sides.left.state.events, sides.right.state.events);
  const only = els.onlyDiff.checked;
  const items = [];
  for (let i = merged.length - 1; i >= 0 && items.length < 500; i--) {
    const e = merged[i];
    if (only && e.side === "both") continue;
    const who = e.side === "both" ? "both" : e.side === "left" ? `only ${sides.left.label}` : `only ${sides.right.label}`;
    items.push(h("li", { class: `ev t-${e.event.type} side-${e.side}`, "data-t": e.event.t },
      h("span", { class: "ev-t", text: fmtTime(e.event.t) }), " ", h("span", { class: `side-tag side-${e.side}`, text: who }), " ",
      h("span", { class: "ev-type", text: e.event.type }), " ",
      h("span", { class: "ev-subj", text: e.event.pod || e.event.node || e.event.zone || e.event.object || e.event.fault || "" }),
      h("span", { class: "muted", text: ` ${e.event.status || e.event.reason || e.event.state || e.event.key || ""}` })));
  }
  els.merged.replaceChildren(...items);
}

function render() { renderSide("left"); renderSide("right"); renderMerged(); }

function simNow() {
  const s = sides.left.state;
  return s.paused ? s.simT : s.simT + ((performance.now() - sides.left.lastWall) / 1000) * s.speed;
}
function tick() {
  els.clock.textContent = fmtTime(Math.max(0, simNow()));
  const s = sides.left.state;
  els.speed.textContent = s.paused ? "paused" : `${s.speed}×`;
  requestAnimationFrame(tick);
}

els.onlyDiff.addEventListener("change", renderMerged);
if (operator) {
  document.addEventListener("click", (ev) => {
    const c = ev.target.closest("button[data-ctl]");
    // One control for both: the server applies it to the pair at one wall instant.
    if (c) send("left", { type: c.dataset.ctl, value: c.dataset.value ? Number(c.dataset.value) : undefined });
    const b = ev.target.closest("button.fault");
    if (b) {
      for (const name of ["left", "right"]) send(name, { type: "action", action: { type: b.dataset.fault, node: b.dataset.node } });
      const menu = b.closest("details"); if (menu) menu.open = false;
    }
  });
  document.getElementById("speed-select").addEventListener("change", (ev) => send("left", { type: "speed", value: Number(ev.target.value) }));
}
connect("left"); connect("right");
requestAnimationFrame(tick);
