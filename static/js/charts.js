// Availability charts (vendored uPlot): ready nodes per zone, queue depth per zone, and ready
// vs desired replicas per workload. They start from the room's whole history as the engine
// kept it (seed), then take a sample from the room state at each delta; drawing is throttled
// so a fast room does not redraw more than twice a second. Clicking a chart picks a time (the
// timeline scrolls there); each chart can be saved as a PNG.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { chartStreams, mergeStreams } from "./series.js";
import { signalValues } from "./state.js";

const MAX_POINTS = 3000;
const COLORS = ["#2e7dd7", "#2e9d4f", "#d9a400", "#c0392b", "#8e44ad", "#16a085", "#7f8c8d", "#d35400"];

class Series {
  constructor(el, title, onPick) {
    this.box = el; this.title = title; this.t = []; this.cols = new Map(); this.plot = null; this.keys = "";
    this.onPick = onPick;
    const png = document.createElement("button");
    png.className = "chart-png"; png.textContent = "PNG"; png.title = "save this chart as a PNG image";
    png.addEventListener("click", () => this.savePng());
    this.el = document.createElement("div");
    el.append(png, this.el);
  }
  // The whole history at once (changes only, carried forward).
  seed(streams) {
    const m = mergeStreams(streams);
    this.t = m.t; this.cols = m.cols;
    if (this.plot) { this.plot.destroy(); this.plot = null; this.keys = ""; }
  }
  savePng() {
    if (!this.plot) return;
    const a = document.createElement("a");
    a.href = this.plot.ctx.canvas.toDataURL("image/png");
    a.download = `${this.title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase()}.png`;
    a.click();
  }
  push(t, values) {
    if (this.t.length && t < this.t[this.t.length - 1]) { this.t = []; this.cols.clear(); } // rewind
    const n = this.t.length;
    this.t.push(t);
    for (const [k, v] of Object.entries(values)) {
      if (!this.cols.has(k)) this.cols.set(k, new Array(n).fill(null));
    }
    for (const [k, col] of this.cols) col.push(k in values ? values[k] : col[col.length - 1] ?? null);
    if (this.t.length > MAX_POINTS) { this.t.shift(); for (const col of this.cols.values()) col.shift(); }
  }
  draw() {
    if (!this.t.length) {
      if (this.plot) { this.plot.destroy(); this.plot = null; this.keys = ""; }
      this.el.replaceChildren(Object.assign(document.createElement("p"), { className: "muted chart-empty", textContent: `${this.title}: no samples yet` }));
      return;
    }
    const keys = [...this.cols.keys()].sort();
    const data = [this.t, ...keys.map((k) => this.cols.get(k))];
    this.box.dataset.from = this.t[0]; this.box.dataset.to = this.t[this.t.length - 1];
    if (this.plot && this.keys === keys.join("|")) { this.plot.setData(data); return; }
    if (this.plot) this.plot.destroy();
    this.el.replaceChildren();
    this.keys = keys.join("|");
    const width = Math.max(280, this.el.clientWidth - 10);
    this.plot = new uPlot({
      title: this.title, width, height: 170,
      scales: { x: { time: false } },
      axes: [{ label: "simulated s" }, {}],
      series: [{ label: "t" }, ...keys.map((k, i) => ({
        label: k, stroke: COLORS[(k.endsWith(" threshold") ? i - 1 : i) % COLORS.length], width: 2,
        dash: k.endsWith(" threshold") ? [6, 4] : undefined, paths: uPlot.paths.stepped({ align: 1 }),
      }))],
    }, data, this.el);
    // A click picks the time under the cursor: the page scrolls its timeline there.
    this.plot.over.addEventListener("click", () => {
      const left = this.plot.cursor.left;
      if (left !== undefined && left >= 0 && this.onPick) this.onPick(this.plot.posToVal(left, "x"));
    });
  }
}

export class Charts {
  constructor(root, onPick) {
    this.root = root;
    const make = (title) => { const el = document.createElement("div"); el.className = "chart"; root.append(el); return new Series(el, title, onPick); };
    this.ready = make("Ready nodes per zone");
    this.queue = make("Nodes waiting in each zone's queue");
    this.replicas = make("Ready / desired replicas");
    this.signals = make("Eviction signals: click a node");
    this.signalNode = null;
    this.nodeHistory = new Map(); // node -> [{at, values}] from the kubelet's eviction syncs
    this.pending = false;
  }
  // Every changed node view carries its kubelet's last eviction-manager observations.
  recordNodes(state, names) {
    for (const name of names) {
      const n = state.nodes.get(name);
      const signals = n && n.kubelet && n.kubelet.signals;
      if (!signals || !signals.length) continue;
      const at = signals[0].at;
      const list = this.nodeHistory.get(name) || [];
      if (list.length && list[list.length - 1].at === at) continue;
      list.push({ at, values: signalValues(signals) });
      if (list.length > MAX_POINTS) list.shift();
      this.nodeHistory.set(name, list);
      if (name === this.signalNode) { this.signals.push(at, list[list.length - 1].values); this.schedule(); }
    }
  }
  // Show one node's eviction signals (percent of capacity available) against their thresholds.
  selectNode(name) {
    if (name === this.signalNode) return;
    this.signalNode = name;
    const s = this.signals;
    s.t = []; s.cols.clear();
    if (s.plot) { s.plot.destroy(); s.plot = null; s.keys = ""; }
    s.title = `Eviction signals of ${name}: % available (dashed: threshold)`;
    const history = this.nodeHistory.get(name) || [];
    for (const p of history) s.push(p.at, p.values);
    if (history.length && this.lastT > history[history.length - 1].at) s.push(this.lastT, history[history.length - 1].values);
    s.box.dataset.node = name;
    this.schedule();
  }
  schedule() {
    if (!this.pending) { this.pending = true; setTimeout(() => { this.pending = false; this.draw(); }, 500); }
  }
  record(state, workloads) {
    const t = state.simT;
    this.lastT = t;
    const ready = {};
    for (const n of state.nodes.values()) {
      const z = n.zone || "(none)";
      ready[z] = (ready[z] || 0) + (n.ready === "True" ? 1 : 0);
    }
    this.ready.push(t, ready);
    const queue = {};
    for (const z of state.zones) queue[z.zone || "(none)"] = z.queue.length;
    this.queue.push(t, queue);
    // A kubelet whose numbers do not move skips its eviction syncs: its last observation
    // holds until now, so the selected node's signals are carried forward to this delta.
    const history = this.signalNode && this.nodeHistory.get(this.signalNode);
    if (history && history.length) this.signals.push(t, history[history.length - 1].values);
    if (workloads && Object.keys(workloads).length) {
      const values = {};
      for (const [ref, [desired, readyCount]] of Object.entries(workloads)) {
        values[`${ref} ready`] = readyCount; values[`${ref} desired`] = desired;
      }
      this.replicas.push(t, values);
    }
    this.schedule();
  }
  // The room's history from t=0 (GET series.json), before the live samples go on.
  seed(series) {
    const streams = chartStreams(series);
    this.ready.seed(streams.ready);
    this.queue.seed(streams.queue);
    if (Object.keys(streams.replicas).length) this.replicas.seed(streams.replicas);
    this.schedule();
  }
  reset() {
    for (const s of [this.ready, this.queue, this.replicas, this.signals]) { s.t = []; s.cols.clear(); }
    this.nodeHistory.clear();
  }
  draw() { this.ready.draw(); this.queue.draw(); this.replicas.draw(); this.signals.draw(); }
}
