// Availability charts (vendored uPlot) as small multiples: one small chart per zone for its
// Ready nodes and for its queue, one per workload for its ready vs desired replicas, each
// group on one shared count axis from 0 in whole numbers (a node is never 2.5), so that the
// panels compare at a glance; and the selected node's eviction signals (percent available)
// against their thresholds. They start from the room's whole history as the engine kept it
// (seed), then take a sample from the room state at each delta; drawing is throttled so a fast
// room does not redraw more than twice a second. Clicking a chart picks a time (the timeline
// scrolls there); each chart can be saved as a PNG.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { countAxis, panelsOf } from "./multiples.js";
import { timed } from "./perf.js";
import { chartStreams, mergeStreams } from "./series.js";
import { signalValues } from "./state.js";

const MAX_POINTS = 3000;
const COLORS = ["#2e7dd7", "#2e9d4f", "#d9a400", "#c0392b", "#8e44ad", "#16a085", "#7f8c8d", "#d35400"];
const MAX_PANELS = 12;
// A count axis as wide as its longest tick label (1,666 nodes need four digits).
const axisSize = (_u, values) => 16 + 7 * Math.max(1, ...(values || []).map((v) => String(v).length));

// A sampled table: one time axis, columns carried forward.
class Table {
  constructor() { this.t = []; this.cols = new Map(); }
  seed(streams) { const m = mergeStreams(streams); this.t = m.t; this.cols = m.cols; }
  clear() { this.t = []; this.cols.clear(); }
  push(t, values) {
    if (this.t.length && t < this.t[this.t.length - 1]) this.clear(); // rewind
    const n = this.t.length;
    this.t.push(t);
    for (const k of Object.keys(values)) if (!this.cols.has(k)) this.cols.set(k, new Array(n).fill(null));
    for (const [k, col] of this.cols) col.push(k in values ? values[k] : col[col.length - 1] ?? null);
    if (this.t.length > MAX_POINTS) { this.t.shift(); for (const col of this.cols.values()) col.shift(); }
  }
}

// One uPlot chart in a box with a PNG button.
class Panel {
  constructor(parent, title, onPick, { height = 120, count = null, legend = false, series = null, span = null } = {}) {
    this.span = span;  // the group's shared time range ({min, max}, Charts.spanAll), or the data's
    this.title = title; this.onPick = onPick; this.height = height; this.count = count; this.legend = legend; this.seriesStyle = series;
    this.box = document.createElement("div");
    this.box.className = "chart";
    const png = document.createElement("button");
    png.className = "chart-png"; png.textContent = "PNG"; png.title = "save this chart as a PNG image";
    png.addEventListener("click", () => this.savePng());
    this.el = document.createElement("div");
    this.box.append(png, this.el);
    parent.append(this.box);
    this.plot = null; this.keys = "";
  }
  destroy() { if (this.plot) this.plot.destroy(); this.plot = null; this.keys = ""; this.box.remove(); }
  savePng() {
    if (!this.plot) return;
    const a = document.createElement("a");
    a.href = this.plot.ctx.canvas.toDataURL("image/png");
    a.download = `${this.title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase()}.png`;
    a.click();
  }
  // The x range drawn, on the box (the groups share one: tests/browser/test_charts.py).
  shownRange() { if (!this.plot) return; const x = this.plot.scales.x; this.box.dataset.xMin = x.min; this.box.dataset.xMax = x.max; }
  empty(text) {
    if (this.plot) { this.plot.destroy(); this.plot = null; this.keys = ""; }
    this.el.replaceChildren(Object.assign(document.createElement("p"), { className: "muted chart-empty", textContent: text }));
  }
  // t: the time axis; cols: [[key, values]] in order. True when it made a chart (uPlot's
  // first draw: 15-25 ms, where an update is 1-3 ms).
  draw(t, cols) {
    if (!t.length) { this.empty(`${this.title}: no samples yet`); return false; }
    const data = [t, ...cols.map(([, v]) => v)];
    this.box.dataset.from = t[0]; this.box.dataset.to = t[t.length - 1];
    const keys = cols.map(([k]) => k).join("|");
    if (this.plot && this.keys === keys) { this.plot.setData(data); return false; }
    if (this.plot) this.plot.destroy();
    this.el.replaceChildren();
    this.keys = keys;
    const width = Math.max(200, this.el.clientWidth - 4);
    const y = this.count ? countAxis(() => this.count.max) : {};
    this.plot = new uPlot({
      title: this.title, width, height: this.height,
      legend: { show: this.legend },
      hooks: { setScale: [(_u, key) => { if (key === "x") this.shownRange(); }] },
      scales: { x: { time: false, ...(this.span ? { range: (_u, lo, hi) => spanRange(this.span, lo, hi) } : {}) }, ...(this.count ? { y: { range: y.range } } : {}) },
      axes: [{ label: this.legend ? "simulated s" : undefined, size: 30 }, this.count ? { incrs: y.incrs, values: y.values, size: axisSize, space: 16 } : {}],
      series: [{ label: "t" }, ...cols.map(([k], i) => ({ label: k, width: 2, paths: uPlot.paths.stepped({ align: 1 }),
        ...(this.seriesStyle ? this.seriesStyle(k, i) : { stroke: COLORS[i % COLORS.length] }) }))],
    }, data, this.el);
    // A click picks the time under the cursor: the page scrolls its timeline there.
    this.plot.over.addEventListener("click", () => {
      const left = this.plot.cursor.left;
      if (left !== undefined && left >= 0 && this.onPick) this.onPick(this.plot.posToVal(left, "x"));
    });
    return true;
  }
}

// A group of small multiples over one table: a panel per key of panelsOf(kind), one count axis.
class Multiples {
  constructor(root, title, kind, onPick, series, span) {
    this.span = span;
    this.kind = kind; this.onPick = onPick; this.series = series;
    this.table = new Table();
    this.count = { max: 1 };
    this.section = document.createElement("section");
    this.section.className = "multiples";
    this.section.dataset.group = kind;
    const h3 = document.createElement("h3"); h3.textContent = title;
    this.grid = document.createElement("div"); this.grid.className = "multiples-grid";
    this.more = document.createElement("p"); this.more.className = "muted multiples-more";
    this.section.append(h3, this.grid, this.more);
    root.append(this.section);
    this.panels = new Map();
  }
  // True when it stopped after making a chart with more panels to draw: called again (in a
  // task of its own, Charts.draw), it updates those drawn and goes on with the rest.
  draw() {
    const { t, cols } = this.table;
    const { panels, max, hidden } = panelsOf(this.kind, t, cols, MAX_PANELS);
    this.count.max = max;
    for (const [key, p] of this.panels) if (!panels.some((x) => x.key === key)) { p.destroy(); this.panels.delete(key); }
    if (!panels.length) {
      if (!this.placeholder) { this.placeholder = new Panel(this.grid, `${this.section.querySelector("h3").textContent}`, this.onPick); }
      this.placeholder.empty("no samples yet");
    } else if (this.placeholder) { this.placeholder.destroy(); this.placeholder = null; }
    for (const p of panels) {
      let panel = this.panels.get(p.key);
      if (!panel) { panel = new Panel(this.grid, p.key, this.onPick, { count: this.count, series: this.series, span: this.span }); this.panels.set(p.key, panel); }
      panel.box.dataset.panel = p.key;
      const made = panel.draw(t, p.cols.map((k) => [k.replace(`${p.key} `, ""), cols.get(k)]));
      if (made && p !== panels[panels.length - 1]) return true;
    }
    // Panels keep their order: re-append in the order given.
    for (const p of panels) this.grid.append(this.panels.get(p.key).box);
    this.more.textContent = hidden ? `and ${hidden} more (the ${MAX_PANELS} that fell furthest short are drawn)` : "";
    return false;
  }
}

// One time range for every chart group (zones and workloads): from the earliest sample of any
// group to the latest time seen, so that the panels line up (zones went to 3,000 s while the
// workloads stopped at 750 s). lo/hi: the data's own, when no span is known yet.
export function spanRange(span, lo, hi) {
  if (span.max === null || span.min === null) return [lo, hi];
  return [span.min, Math.max(span.max, span.min + 1)];
}
export function spanOf(tables, lastT = null) {
  let min = null, max = lastT;
  for (const t of tables) {
    if (!t.length) continue;
    if (min === null || t[0] < min) min = t[0];
    if (max === null || t[t.length - 1] > max) max = t[t.length - 1];
  }
  return { min, max };
}

const replicaStyle = (k) => (k.endsWith("desired") ? { stroke: "#7f8c8d", dash: [5, 4] } : { stroke: "#2e9d4f", fill: "rgba(46,157,79,.12)" });

export class Charts {
  constructor(root, onPick) {
    this.root = root;
    this.span = { min: null, max: null };
    this.ready = new Multiples(root, "Ready nodes, per zone", "zones", onPick, () => ({ stroke: "#2e9d4f", fill: "rgba(46,157,79,.12)" }), this.span);
    this.queue = new Multiples(root, "Nodes waiting in the zone's taint queue", "zones", onPick, () => ({ stroke: "#d9a400", fill: "rgba(217,164,0,.12)" }), this.span);
    this.replicas = new Multiples(root, "Ready (green) and desired (dashed) replicas, per workload", "replicas", onPick, replicaStyle, this.span);
    const signals = document.createElement("section");
    signals.className = "multiples signals";
    root.append(signals);
    this.signals = new Panel(signals, "Eviction signals: click a node", onPick, { height: 170, legend: true, series: (k, i) => ({
      stroke: COLORS[(k.endsWith(" threshold") ? i - 1 : i) % COLORS.length], dash: k.endsWith(" threshold") ? [6, 4] : undefined }) });
    this.signalTable = new Table();
    this.signalNode = null;
    this.nodeHistory = new Map(); // node -> [{at, signals}] from the kubelet's eviction syncs
    this.pending = false;
  }
  // Every changed node view carries its kubelet's last eviction-manager observations: kept as
  // they come (a snapshot brings 5,000 nodes'), turned into chart values for the node shown.
  recordNodes(state, names) {
    for (const name of names) {
      const n = state.nodes.get(name);
      const signals = n && n.kubelet && n.kubelet.signals;
      if (!signals || !signals.length) continue;
      const at = signals[0].at;
      const list = this.nodeHistory.get(name) || [];
      if (list.length && list[list.length - 1].at === at) continue;
      list.push({ at, signals });
      if (list.length > MAX_POINTS) list.shift();
      this.nodeHistory.set(name, list);
      if (name === this.signalNode) { this.signalTable.push(at, signalValues(signals)); this.schedule(); }
    }
  }
  // Show one node's eviction signals (percent of capacity available) against their thresholds.
  selectNode(name) {
    if (name === this.signalNode) return;
    this.signalNode = name;
    const s = this.signalTable;
    s.clear();
    if (this.signals.plot) { this.signals.plot.destroy(); this.signals.plot = null; this.signals.keys = ""; }
    this.signals.title = `Eviction signals of ${name}: % available (dashed: threshold)`;
    const history = this.nodeHistory.get(name) || [];
    for (const p of history) s.push(p.at, signalValues(p.signals));
    if (history.length && this.lastT > history[history.length - 1].at) s.push(this.lastT, signalValues(history[history.length - 1].signals));
    this.signals.box.dataset.node = name;
    this.schedule();
  }
  // Drawn at most twice a second, in steps (drawSteps): a step that made a chart ends its task.
  schedule() {
    if (!this.pending) { this.pending = true; setTimeout(() => this.drawSteps(), 500); }
  }
  spanAll() { Object.assign(this.span, spanOf([this.ready.table.t, this.queue.table.t, this.replicas.table.t], this.lastT ?? null)); }
  drawSteps(steps = null) {
    if (!steps) this.spanAll();
    const todo = steps || [() => this.ready.draw(), () => this.queue.draw(), () => this.replicas.draw(), () => this.drawSignals()];
    while (todo.length) {
      const made = timed("room:charts", todo[0]);
      if (made === true) { setTimeout(() => this.drawSteps(todo)); return; }  // again, in the next task
      todo.shift();
    }
    this.pending = false;  // samples recorded meanwhile: drawn by the next schedule()
  }
  record(state, workloads) {
    const t = state.simT;
    this.lastT = t;
    const ready = {};
    for (const n of state.nodes.values()) {
      const z = n.zone || "(none)";
      ready[z] = (ready[z] || 0) + (n.ready === "True" ? 1 : 0);
    }
    this.ready.table.push(t, ready);
    const queue = {};
    for (const z of state.zones) queue[z.zone || "(none)"] = z.queue.length;
    this.queue.table.push(t, queue);
    // A kubelet whose numbers do not move skips its eviction syncs: its last observation
    // holds until now, so the selected node's signals are carried forward to this delta.
    const history = this.signalNode && this.nodeHistory.get(this.signalNode);
    if (history && history.length) this.signalTable.push(t, signalValues(history[history.length - 1].signals));
    if (workloads && Object.keys(workloads).length) {
      const values = {};
      for (const [ref, [desired, readyCount]] of Object.entries(workloads)) {
        values[`${ref} ready`] = readyCount; values[`${ref} desired`] = desired;
      }
      this.replicas.table.push(t, values);
    }
    this.schedule();
  }
  // The room's history from t=0 (GET series.json), before the live samples go on.
  seed(series) {
    const streams = chartStreams(series);
    this.ready.table.seed(streams.ready);
    this.queue.table.seed(streams.queue);
    if (Object.keys(streams.replicas).length) this.replicas.table.seed(streams.replicas);
    this.schedule();
  }
  reset() {
    for (const g of [this.ready, this.queue, this.replicas]) g.table.clear();
    this.signalTable.clear();
    this.nodeHistory.clear();
  }
  // Everything at once (tests); the page draws in steps (drawSteps).
  draw() {
    this.spanAll();
    while (this.ready.draw());
    while (this.queue.draw());
    while (this.replicas.draw());
    this.drawSignals();
  }
  drawSignals() {
    const s = this.signalTable;
    this.signals.draw(s.t, [...s.cols.keys()].sort().map((k) => [k, s.cols.get(k)]));
    return false;
  }
}
