// Availability charts (vendored uPlot): ready nodes per zone, queue depth per zone, and ready
// vs desired replicas per workload. Samples are taken from the room state at each delta;
// drawing is throttled so a fast room does not redraw more than twice a second.
import uPlot from "../vendor/uplot/uPlot.esm.js";

const MAX_POINTS = 3000;
const COLORS = ["#2e7dd7", "#2e9d4f", "#d9a400", "#c0392b", "#8e44ad", "#16a085", "#7f8c8d", "#d35400"];

class Series {
  constructor(el, title) {
    this.el = el; this.title = title; this.t = []; this.cols = new Map(); this.plot = null; this.keys = "";
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
    if (!this.t.length) return;
    const keys = [...this.cols.keys()];
    const data = [this.t, ...keys.map((k) => this.cols.get(k))];
    if (this.plot && this.keys === keys.join("|")) { this.plot.setData(data); return; }
    if (this.plot) this.plot.destroy();
    this.keys = keys.join("|");
    const width = Math.max(280, this.el.clientWidth - 10);
    this.plot = new uPlot({
      title: this.title, width, height: 170,
      scales: { x: { time: false } },
      axes: [{ label: "simulated s" }, {}],
      series: [{ label: "t" }, ...keys.map((k, i) => ({ label: k, stroke: COLORS[i % COLORS.length], width: 2, paths: uPlot.paths.stepped({ align: 1 }) }))],
    }, data, this.el);
  }
}

export class Charts {
  constructor(root) {
    this.root = root;
    const make = (title) => { const el = document.createElement("div"); el.className = "chart"; root.append(el); return new Series(el, title); };
    this.ready = make("Ready nodes per zone");
    this.queue = make("Nodes waiting in each zone's queue");
    this.replicas = make("Ready / desired replicas");
    this.pending = false;
  }
  record(state, workloads) {
    const t = state.simT;
    const ready = {};
    for (const n of state.nodes.values()) {
      const z = n.zone || "(none)";
      ready[z] = (ready[z] || 0) + (n.ready === "True" ? 1 : 0);
    }
    this.ready.push(t, ready);
    const queue = {};
    for (const z of state.zones) queue[z.zone || "(none)"] = z.queue.length;
    this.queue.push(t, queue);
    if (workloads) {
      const values = {};
      for (const [ref, [desired, readyCount]] of Object.entries(workloads)) {
        values[`${ref} ready`] = readyCount; values[`${ref} desired`] = desired;
      }
      this.replicas.push(t, values);
    }
    if (!this.pending) { this.pending = true; setTimeout(() => { this.pending = false; this.draw(); }, 500); }
  }
  reset() { for (const s of [this.ready, this.queue, this.replicas]) { s.t = []; s.cols.clear(); } }
  draw() { this.ready.draw(); this.queue.draw(); this.replicas.draw(); }
}
