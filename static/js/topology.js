// The cluster as a class reads it from the back of the room: one band per zone (its state by
// colour and word, its queue and token bucket), nodes as tiles coloured by Ready, taints as
// badges, pods as small marks coloured by owner with their state as a shape and a sign, and
// countdowns where a clock is running: a silent node's grace period, a pod's NoExecute
// toleration. Only the tiles a delta touched are rebuilt; countdowns, heartbeat bars and
// buckets are repainted from the views' timestamps (paint, four times a second). Past
// Config.compactAbove nodes a canvas draws one square per node instead.
import { fmtLeft, graceCountdown, tolerationCountdown } from "./countdown.js";
import { h, setStyle, setText } from "./dom.js";
import { faultBadges, leaks, nodeMenu, podLeakText } from "./faultmenu.js";
import { Config, nodesByZone, podsByNode } from "./state.js";

const FAULT_TITLES = {
  StopKubelet: "the kubelet process stops: no Lease renewal, no status; containers keep running",
  StartKubelet: "the kubelet starts: it renews its Lease and posts a fresh status at once",
  PartitionNode: "cut the node off from the control plane: its kubelet keeps running its pods",
  HealNode: "reconnect the node: the next status tick posts a fresh status",
  PowerOffNode: "the machine is off: containers die too",
  PowerOnNode: "the machine is on: the kubelet starts fresh",
  SetNodeNotReady: "the container runtime is down: the kubelet posts Ready=False (KubeletNotReady)",
  SetNodeReady: "the container runtime is back: the kubelet posts Ready=True",
  Cordon: "kubectl cordon: spec.unschedulable",
  Uncordon: "kubectl uncordon",
  LeakMemory: "50Mi/s into the node's first pod that no DaemonSet owns",
  FillDisk: "500Mi/s into the node's filesystem",
  StopLeak: "stop the leaks running on this node and its pods",
  DeleteNode: "kubectl delete node",
  ShutdownNode: "systemctl poweroff: the kubelet's graceful node shutdown (shutdownGracePeriod), then power off",
  OutOfService: "kubectl taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute (non-graceful node shutdown): PodGC force-deletes the node's Terminating pods at its next 20 s pass while the node is not Ready",
  RemoveOutOfService: "kubectl taint node.kubernetes.io/out-of-service-: take the mark off once the node is recovered",
};
// What a fault does differently in 1.18 (still offered there, to show the difference).
const FAULT_TITLES_1_18 = {
  OutOfService: "kubectl taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute: in 1.18 only a NoExecute taint (pods deleted by the taint manager stay Terminating; PodGC's out-of-service rule came in 1.24, GA 1.28)",
};
// The small tiles' signs on the projector (a node not in the step, or one of many alike): what
// a big tile writes out, a small one shows as a sign explained by the legend.
export function tileSigns(n) {
  const signs = [];
  if (n.kubelet && n.kubelet.state !== "Running") signs.push("■");
  if (n.taints.some((t) => t.effect === "NoExecute")) signs.push("✖");
  if (n.taints.some((t) => t.effect !== "NoExecute")) signs.push("⚑");
  if (n.kubeletVersion) signs.push(`v${n.kubeletVersion}`);
  return signs.join("");
}
const LEGEND = [["l-ready", "", "Ready"], ["l-unknown", "", "Unknown"], ["l-notready", "", "NotReady"],
  ["", "■", "kubelet stopped"], ["", "✖", "NoExecute taint"], ["", "⚑", "NoSchedule taint"], ["", "v1.x", "older kubelet"],
  ["l-cordoned", "", "cordoned"], ["", "", "small tiles: not in this step, or many alike (click for details)"]];
// The projector's big tiles (everything written out at 24 px): the nodes the step names, and
// the nodes with something to see (not calm) in the step's zones (every zone without a focus)
// while a zone has at most BIG_PER_ZONE of them; the rest are small tiles (name and signs, a
// legend explains the signs). nodes: [{name, zone, loud}] -> Set of names.
export const BIG_PER_ZONE = 4;
export function bigTiles(focus, nodes) {
  const named = focus ? focus.nodes : new Set();
  const loud = new Map();
  for (const n of nodes) {
    if (named.has(n.name) || !n.loud) continue;
    if (focus && !focus.zones.has(n.zone)) continue;
    if (!loud.has(n.zone)) loud.set(n.zone, []);
    loud.get(n.zone).push(n.name);
  }
  const out = new Set(named);
  for (const names of loud.values()) if (names.length <= BIG_PER_ZONE) for (const x of names) out.add(x);
  return out;
}

const POD_MARKS = { terminating: "↓", failed: "×", pending: "…", notready: "!" };
const OWNER_COLORS = ["#2e7dd7", "#8e44ad", "#16a085", "#d35400", "#2c3e50", "#c2185b", "#6d8b00", "#00838f", "#795548", "#5c6bc0"];

// One colour per owner (by its name, so that every page and every tick agree).
export function ownerColor(owner) {
  if (!owner) return "#7f8c8d";
  let x = 0;
  for (const c of owner.split("/").slice(-1)[0].replace(/-[a-z0-9]{5,10}$/, "")) x = (x * 31 + c.charCodeAt(0)) >>> 0;
  return OWNER_COLORS[x % OWNER_COLORS.length];
}

function readyClass(n) { return n.ready === "True" ? "ready" : n.ready === "False" ? "notready" : "unknown"; }
function podClass(p) { return p.terminating ? "terminating" : p.phase === "Failed" ? "failed" : p.phase === "Pending" ? "pending" : p.ready ? "ok" : "notready"; }

export class Topology {
  // opts: {operator, state: () => state, showDetail(kind, key), focusNode(el, n), hideCountdowns: () => bool}
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.nodeEls = new Map();
    this.zoneEls = new Map();
    this.openMenu = null;  // cards are rebuilt on every change to their node: which menu is open
    this.layout = null;  // the canvas's squares (compactLayout), kept while no node comes or goes
    this.compactWidth = 0;
    els.compact.addEventListener("click", (ev) => this.compactClick(ev));
    // The canvas's width follows the page's, read when the browser has laid it out anyway
    // (reading clientWidth in a delta's handler would force a layout there).
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => {
        const w = els.zones.clientWidth;
        if (w && w !== this.compactWidth) { this.compactWidth = w; if (this.layout) this.drawCompact(); }
      }).observe(els.zones);
    }
  }

  get state() { return this.opts.state(); }
  compact() { return this.state.nodes.size > Config.compactAbove; }

  renderAll() {
    const state = this.state;
    // The projector's legend: what the small tiles' colours and signs mean (CSS shows it there).
    this.els.zones.replaceChildren(h("p", { class: "tile-legend" }, ...LEGEND.map(([cls, sign, text]) =>
      h("span", { class: `legend-item ${cls}` }, sign ? h("span", { class: "legend-sign", text: sign }) : null, text))));
    this.nodeEls.clear(); this.zoneEls.clear();
    const compact = this.compact();
    this.els.compact.hidden = !compact;
    this.els.zones.classList.toggle("compact", compact);
    const byNode = compact ? null : podsByNode(state);
    for (const [zone, nodes] of nodesByZone(state)) {
      const band = this.zoneBand(zone);
      if (compact) continue;
      for (const n of nodes) {
        const el = this.nodeTile(n, byNode.get(n.name) || []);
        this.nodeEls.set(n.name, el); band.body.append(el);
      }
    }
    this.renderZones();
    this.layout = null;
    if (compact) this.drawCompact();
  }

  renderChanged(changed) {
    if (this.compact()) { this.renderZones(); this.drawCompact(changed.nodes); return; }
    const state = this.state;
    const byNode = podsByNode(state);
    for (const name of changed.nodes) {
      const old = this.nodeEls.get(name);
      const n = state.nodes.get(name);
      if (!n) { if (old) old.remove(); this.nodeEls.delete(name); continue; }
      const fresh = this.nodeTile(n, byNode.get(name) || []);
      if (old) old.replaceWith(fresh); else this.zoneBand(n.zone).body.append(fresh);
      this.nodeEls.set(name, fresh);
    }
    if (changed.zones) this.renderZones();
  }

  // -- zones: one band each ------------------------------------------------------------------
  zoneBand(zone) {
    let z = this.zoneEls.get(zone);
    if (z) return z;
    const head = h("header", { class: "zone-head", title: "click for why, and what happens next" });
    head.addEventListener("click", (ev) => { if (!ev.target.closest("button")) this.opts.showDetail("zone", zone); });
    const queue = h("div", { class: "queue" });
    const body = h("div", { class: "zone-body" });
    const el = h("div", { class: "zone", "data-zone": zone }, h("div", { class: "zone-side" }, head, queue), body);
    this.els.zones.append(el);
    z = { el, head, queue, body, zoneData: null };
    this.zoneEls.set(zone, z);
    return z;
  }

  renderZones() {
    const state = this.state;
    // A zone whose last node was deleted leaves the list: drop its (empty) band.
    const listed = new Set(state.zones.map((z) => z.zone));
    for (const [zone, band] of this.zoneEls) {
      if (!listed.has(zone) && !band.body.childElementCount) { band.el.remove(); this.zoneEls.delete(zone); }
    }
    const counts = zoneCounts(state.nodes.values());
    for (const z of state.zones) {
      const band = this.zoneBand(z.zone);
      band.zoneData = z;
      const { total, ready } = counts.get(z.zone) || { total: 0, ready: 0 };
      // Rebuilt only when what it shows changed (the bucket's fill is painted from zoneData).
      const backlog = z.clientBacklog > 0 ? Math.floor(z.clientBacklog) : 0;
      const shown = JSON.stringify([z.state, total, ready, z.qps, z.burst, z.queue.length, z.queue.slice(0, 8), backlog, z.eventsQueued || 0]);
      if (band.shown === shown) continue;
      band.shown = shown;
      band.el.dataset.state = z.state;
      const buttons = this.opts.operator ? h("span", { class: "zone-actions" },
        h("button", { class: "fault", "data-fault": "ZoneOutage", "data-zone": z.zone, text: "zone outage" }),
        h("button", { class: "fault", "data-fault": "ZoneRestore", "data-zone": z.zone, text: "restore" })) : null;
      band.head.replaceChildren(h("strong", { class: "zone-name", text: `zone ${z.zone || "(none)"}` }), " ",
        h("span", { class: `state s-${z.state}`, text: z.state }), " ",
        h("span", { class: "zone-ready", text: `${ready}/${total} Ready` }), " ",
        h("span", { class: "muted zone-rate", title: "the rate the zone's queue is drained at (setLimiterInZone)", text: z.qps === null ? "rate: after the reveal" : `${z.qps} node/s` }),
        ...(backlog ? [" ", h("span", { class: "muted zone-backlog", title: "the node-controller's writes (node status, taints, pod status, events) wait for its client's tokens (--kube-api-qps / --kube-api-burst): its monitor pass lasts longer than its period, and the next one starts after it", text: `node-controller writes waiting for tokens: monitor pass running for ${backlog} s${z.eventsQueued ? `, ${z.eventsQueued} events queued` : ""}` })] : []),
        ...(buttons ? [buttons] : []));
      // A lesson's open question about the zone (engine/holdback.py): its rate and tokens
      // come with the reveal.
      const bucket = z.qps === null ? h("span", { class: "bucket held", text: "tokens: after the reveal" }) : z.burst ? h("span", { class: "bucket", "data-zone": z.zone, title: "token bucket: one token per taint (or eviction); refills at the zone's rate, burst 1" },
        h("span", { class: "bucket-fill" }), h("span", { class: "bucket-text" })) : h("span", { class: "bucket stopped", text: "no tokens: evictions stopped" });
      band.queue.replaceChildren(bucket, " ",
        z.queue.length ? h("span", { class: "queue-list", title: z.queue.join(", "),
          text: `waiting (${z.queue.length}): ${z.queue.slice(0, 8).join(", ")}${z.queue.length > 8 ? `, … ${z.queue.length - 8} more` : ""}` })
          : h("span", { class: "muted", text: "queue empty" }));
    }
  }

  // -- nodes ---------------------------------------------------------------------------------
  faultTitle(type) {
    const p = this.state.params;
    const v = (p && p.kubernetesVersion) || "1.18";
    return (v === "1.18" && FAULT_TITLES_1_18[type]) || FAULT_TITLES[type] || "";
  }

  // The node's actions, grouped, only those that apply to its state (faultmenu.js).
  actionMenu(n, pods) {
    const state = this.state;
    const groups = nodeMenu(n, pods, { refused: (state.params && state.params.faultsRefused) || [], leaks: leaks(n.name, pods, state.events, n) });
    const list = h("div", { class: "node-actions" }, ...groups.map((g) => {
      const group = h("div", { class: "fault-group", role: "group", "data-group": g.group },
        h("span", { class: "fault-group-name", text: g.group }),
        ...g.items.map((i) => h("button", { class: `fault${i.type === "DeleteNode" ? " danger" : ""}`, "data-fault": i.type, "data-node": n.name, text: i.label,
          title: i.why ? `${this.faultTitle(i.type)} (not now: ${i.why})` : this.faultTitle(i.type), disabled: Boolean(i.disabled) })));
      group.setAttribute("aria-label", g.group);
      return group;
    }));
    const menu = h("details", { class: "node-menu", open: this.openMenu === n.name },
      h("summary", { text: "actions", title: `actions on ${n.name}` }), list);
    menu.addEventListener("toggle", () => {
      if (menu.open) {
        // One menu open at a time.
        for (const other of this.els.zones.querySelectorAll("details.node-menu[open]")) if (other !== menu) other.open = false;
        this.openMenu = n.name;
      } else if (this.openMenu === n.name) this.openMenu = null;
    });
    return menu;
  }

  closeMenus() {
    for (const m of this.els.zones.querySelectorAll("details.node-menu[open]")) m.open = false;
    this.openMenu = null;
  }

  nodeTile(n, pods) {
    const buttons = this.opts.operator ? this.actionMenu(n, pods) : null;
    const taints = h("div", { class: "taints" }, ...n.taints.map((t) => {
      const short = t.key.replace("node.kubernetes.io/", "");
      return h("span", { class: `chip badge ${t.effect}`, title: `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}${t.timeAdded !== undefined && t.timeAdded !== null ? ` since ${t.timeAdded} s` : ""}` },
        short, h("span", { class: "badge-kind", text: `:${t.effect}` }));
    }));
    const conds = n.conditions.filter((c) => c.type !== "Ready" && c.status !== "False").map((c) => `${c.type}=${c.status}`).join(" ");
    const grace = h("div", { class: "grace", hidden: true }, h("span", { class: "grace-text" }), h("div", { class: "hb" }, h("div", { class: "hb-bar" })));
    const podBox = h("div", { class: "pods" }, ...pods.map((p) => this.podMark(p)));
    // Nothing to look at (Ready, untainted, its kubelet running, its pods fine): the presenter
    // view dims it so the nodes that matter stand out.
    // The faults injected on it that its status shows only later ("runtime down", "leaking"):
    // on the tile at once, from the views the fault's delta carries (faultBadges).
    const badges = faultBadges(n, pods, this.state.simT || 0);
    const calm = n.ready === "True" && !n.taints.length && !n.unschedulable && (!n.kubelet || n.kubelet.state === "Running")
      && !badges.length && pods.every((p) => !p.terminating && p.phase === "Running" && p.ready !== false);
    const kstate = n.kubelet && n.kubelet.state !== "Running" ? n.kubelet.state : null;
    const el = h("article", { class: `node ${readyClass(n)}${n.unschedulable ? " cordoned" : ""}${calm ? " calm" : ""}`, "data-node": n.name },
      h("header", {}, h("strong", { class: "node-name", text: n.name }), " ", h("span", { class: "ready-label", text: `Ready=${n.ready}` }),
        kstate ? h("span", { class: "kstate", text: ` kubelet ${kstate}` }) : null,
        n.unschedulable ? h("span", { class: "cordon-mark", text: " cordoned" }) : null,
        ...badges.map((b) => h("span", { class: `fault-badge ${b.kind}`, "data-badge": b.kind, text: b.text, title: b.title })),
        n.kubelet && n.kubelet.shuttingDown ? h("span", { class: "kstate", text: " shutting down" }) : null,
        // Version skew: this node's kubelet is an older release than the control plane.
        n.kubeletVersion ? h("span", { class: "kver", text: ` kubelet ${n.kubeletVersion}`,
          title: `this node's kubelet runs Kubernetes ${n.kubeletVersion}: its rules are that release's` }) : null,
        h("span", { class: "tile-signs", "aria-hidden": "true", text: tileSigns(n) })),
      conds ? h("div", { class: "conds", text: conds }) : null, grace, taints, podBox, buttons);
    el.addEventListener("click", (ev) => { if (!ev.target.closest("button, details")) this.opts.showDetail("node", n.name); });
    this.opts.focusNode(el, n);
    el.tabIndex = 0;
    el.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && ev.target === el) this.opts.showDetail("node", n.name); });
    return el;
  }

  podMark(p) {
    const cls = podClass(p);
    // State by shape and sign too, not colour alone; the owner by colour.
    const mark = POD_MARKS[cls];
    const owner = p.owner || "no owner";
    const leak = podLeakText(p, this.state.simT || 0);
    const el = h("span", { class: `pod ${cls} q-${p.qosClass}${leak ? " leaking" : ""}`, "data-pod": p.key, tabIndex: 0, role: "button",
      style: `--owner:${ownerColor(p.owner)}`,
      title: `${p.key} (${owner}) ${p.terminating ? "Terminating" : p.phase}${p.reason ? " (" + p.reason + ")" : ""}${p.ready === false ? ", not Ready" : ""}${leak ? `, ${leak}` : ""}` },
      mark ? h("span", { class: "pod-mark", "aria-hidden": "true", text: mark }) : null,
      h("span", { class: "pod-name", text: p.key.split("/")[1] }), h("span", { class: "countdown" }));
    el.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.stopPropagation(); this.opts.showDetail("pod", p.key); } });
    el.addEventListener("click", (ev) => { ev.stopPropagation(); this.opts.showDetail("pod", p.key); });
    return el;
  }

  // -- countdowns, heartbeat bars, buckets (from timestamps; no message needed) -----------------
  paint(t) {
    const state = this.state;
    const hide = this.opts.hideCountdowns();
    if (!this.compact()) {
      for (const el of this.nodeEls.values()) {
        const n = state.nodes.get(el.dataset.node);
        if (!n) continue;
        this.paintGrace(el, n, t, hide);
        if (!n.taints.length) { if (el.classList.contains("counting")) this.clearPods(el); continue; }
        let counting = false;
        for (const pe of el.querySelectorAll(".pod")) {
          const c = hide ? null : tolerationCountdown(state.pods.get(pe.dataset.pod), n, t);
          const text = pe.querySelector(".countdown");
          if (c && !c.untolerated) {
            counting = true;
            pe.classList.add("evicting");
            setStyle(pe, "--left", `${c.seconds ? Math.min(100, (c.left / c.seconds) * 100) : 0}%`);
            setText(text, fmtLeft(c.left));
            if (pe.dataset.evictAt !== String(c.at)) pe.dataset.evictAt = c.at;
            const title = `${pe.dataset.pod}: deleted by the taint manager in ${fmtLeft(c.left)} (tolerates ${c.taint}:NoExecute ${c.seconds} s, from ${c.since} s)`;
            if (pe.title !== title) pe.title = title;
          } else if (pe.classList.contains("evicting")) {
            pe.classList.remove("evicting"); text.textContent = ""; delete pe.dataset.evictAt;
          }
        }
        el.classList.toggle("counting", counting);
      }
    }
    this.paintBuckets(t);
  }

  clearPods(el) {
    for (const pe of el.querySelectorAll(".pod.evicting")) { pe.classList.remove("evicting"); pe.querySelector(".countdown").textContent = ""; delete pe.dataset.evictAt; }
    el.classList.remove("counting");
  }

  paintGrace(el, n, t, hide) {
    const box = el.querySelector(".grace");
    const g = hide ? null : graceCountdown(n, this.state.params, t);
    if (!g) { if (!box.hidden) { box.hidden = true; el.classList.remove("in-grace"); delete el.dataset.unknownAt; } return; }
    if (box.hidden) box.hidden = false;
    el.classList.add("in-grace");
    if (el.dataset.unknownAt !== String(g.at)) el.dataset.unknownAt = g.at;
    setText(box.querySelector(".grace-text"), g.left > 0 ? `Unknown in ${fmtLeft(g.left)}` : "Unknown at this monitor pass");
    setStyle(box.querySelector(".hb-bar"), "width", `${Math.min(100, (g.elapsed / g.grace) * 100)}%`);
    const title = `silent for ${g.elapsed.toFixed(1)} s (last heartbeat at ${g.since} s); nodeMonitorGracePeriod ${g.grace} s, then Unknown at the next monitor pass (${g.at} s)`;
    if (box.title !== title) box.title = title;
  }

  paintBuckets(t) {
    for (const z of this.zoneEls.values()) {
      const b = z.queue.querySelector(".bucket-fill");
      if (!b || !z.zoneData) continue;
      const tokens = bucketTokens(z.zoneData, t);
      setStyle(b, "width", `${Math.min(100, (Math.max(0, tokens) / z.zoneData.burst) * 100)}%`);
      setText(z.queue.querySelector(".bucket-text"), `bucket ${Math.max(0, tokens).toFixed(2)}/${z.zoneData.burst} token`);
    }
  }

  // -- the canvas for big rooms ----------------------------------------------------------------
  compactClick(ev) {
    const r = this.els.compact.getBoundingClientRect();
    const name = this.layout && compactHit(this.layout, ev.clientX - r.left, ev.clientY - r.top);
    if (name) this.opts.showDetail("node", name, false, { x: ev.clientX, y: ev.clientY });
  }

  // One square per node. The squares' places are laid out again only when a node comes, goes
  // or changes zone, or the page's width changes; otherwise only the squares of the nodes a
  // delta touched are painted over (5,000 squares and a sort of their names per delta made
  // the canvas most of a big room's delta handler).
  drawCompact(changed = null) {
    const c = this.els.compact, state = this.state;
    if (!this.compactWidth) this.compactWidth = this.els.zones.clientWidth || 1200;
    const ctx = c.getContext("2d");
    if (this.layout && changed && this.layout.width === this.compactWidth && !relayoutNeeded(this.layout, state.nodes, changed)) {
      paintSquares(ctx, this.layout, state.nodes, changed);
      return;
    }
    this.layout = compactLayout(nodesByZone(state), this.compactWidth);
    // Setting a canvas's size reallocates (and clears) it: only when it changes.
    if (c.width !== this.layout.width) c.width = this.layout.width;
    if (c.height !== this.layout.height) c.height = this.layout.height;
    ctx.clearRect(0, 0, c.width, c.height);
    paintSquares(ctx, this.layout, state.nodes, this.layout.cells.keys());
  }
}

// The canvas's squares: zones side by side, each a block of rows of 6 px squares (1 px apart)
// in the order of nodesByZone. zones: Map(zone -> [node]); width: the canvas's, px.
// -> {width, height, size, gap, perRow, cells: Map(name -> {zone, x, y}), blocks: [{x0, names}]}
export function compactLayout(zones, width) {
  const size = 6, gap = 1, count = Math.max(zones.size, 1);
  const perRow = Math.max(1, Math.floor((width / count - 20) / (size + gap)));
  const rows = Math.max(...[...zones.values()].map((l) => Math.ceil(l.length / perRow)), 1);
  const cells = new Map(), blocks = [];
  let zi = 0;
  for (const [zone, nodes] of zones) {
    const x0 = zi * (width / count);
    blocks.push({ x0, names: nodes.map((n) => n.name) });
    nodes.forEach((n, i) => cells.set(n.name, { zone, x: x0 + (i % perRow) * (size + gap), y: 5 + Math.floor(i / perRow) * (size + gap) }));
    zi++;
  }
  return { width, height: rows * (size + gap) + 10, size, gap, perRow, cells, blocks };
}

// The node whose square is at canvas point (x, y), or null.
export function compactHit(layout, x, y) {
  const { size, gap, perRow } = layout;
  for (const b of layout.blocks) {
    const col = Math.floor((x - b.x0) / (size + gap)), row = Math.floor((y - 5) / (size + gap));
    if (col < 0 || col >= perRow || row < 0) continue;
    const name = b.names[row * perRow + col];
    if (name !== undefined) return name;
  }
  return null;
}

// Whether the changed nodes move squares: one came, went or changed zone.
export function relayoutNeeded(layout, nodes, changed) {
  for (const name of changed) {
    const n = nodes.get(name), cell = layout.cells.get(name);
    if (!n !== !cell || (n && cell.zone !== n.zone)) return true;
  }
  return false;
}

// Paints the squares of `names` (each over its old colour).
export function paintSquares(ctx, layout, nodes, names) {
  for (const name of names) {
    const cell = layout.cells.get(name), n = nodes.get(name);
    if (!cell || !n) continue;
    ctx.fillStyle = compactColor(n);
    ctx.fillRect(cell.x, cell.y, layout.size, layout.size);
  }
}

// Ready and all nodes per zone, in one pass.
export function zoneCounts(nodes) {
  const out = new Map();
  for (const n of nodes) {
    let c = out.get(n.zone);
    if (!c) out.set(n.zone, (c = { total: 0, ready: 0 }));
    c.total++;
    if (n.ready === "True") c.ready++;
  }
  return out;
}

// A node's square on the canvas: by Ready, and amber while its grace period runs (silent
// but still Ready) or while it is tainted.
export function compactColor(n) {
  if (n.ready === "False") return "#c0392b";
  if (n.ready !== "True") return "#7f8c8d";
  const silent = n.kubelet && n.kubelet.state !== "Running";
  return silent ? "#e67e22" : n.taints.length ? "#d9a400" : "#2e9d4f";
}

// Tokens now, from the bucket as the server last saw it, refilled at qps up to burst.
function bucketTokens(z, t) {
  if (!z.burst) return 0;
  return Math.min(z.burst, z.tokens + Math.max(0, t - z.tokensAt) * z.qps);
}

