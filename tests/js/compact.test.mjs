// node --test tests/js: the canvas of a big room (static/js/topology.js): where each node's
// square is, which square a click hits, when a delta moves squares, and that painting only
// the squares a delta touched leaves the same picture as painting them all; and dom.js's
// writes that leave the page alone when nothing changed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setStyle, setText } from "../../static/js/dom.js";
import { nodesByZone } from "../../static/js/state.js";
import { compactColor, compactHit, compactLayout, paintSquares, relayoutNeeded, zoneCounts } from "../../static/js/topology.js";

const node = (name, zone, extra = {}) => ({ name, zone, ready: "True", taints: [], kubelet: { state: "Running" }, ...extra });

function cluster(perZone) {
  const nodes = new Map();
  for (const z of ["zone-a", "zone-b", "zone-c"]) {
    for (let i = 1; i <= perZone; i++) { const n = node(`${z.slice(-1)}-${i}`, z); nodes.set(n.name, n); }
  }
  return nodes;
}

// A 2D context that keeps the last colour painted on each square.
function fakeCtx() {
  const px = new Map();
  return { px, fillStyle: "", fillRect(x, y, w, h) { px.set(`${x},${y},${w},${h}`, this.fillStyle); }, clearRect() { px.clear(); } };
}

test("compactLayout: zones side by side, rows of 6 px squares 1 px apart, in nodesByZone's order", () => {
  const nodes = cluster(100);
  const layout = compactLayout(nodesByZone({ nodes }), 1200);
  // 1200 / 3 zones = 400 px each, less 20 px: 54 squares of 7 px a row, 2 rows.
  assert.equal(layout.perRow, 54);
  assert.equal(layout.height, 2 * 7 + 10);
  assert.deepEqual(layout.cells.get("a-1"), { zone: "zone-a", x: 0, y: 5 });
  // nodesByZone sorts names as text: a-1, a-10, a-100, a-11, ...; the 55th is on the second row.
  const order = [...nodesByZone({ nodes }).get("zone-b")].map((n) => n.name);
  assert.deepEqual(layout.cells.get(order[54]), { zone: "zone-b", x: 400, y: 12 });
  assert.deepEqual(layout.cells.get(order[1]), { zone: "zone-b", x: 407, y: 5 });
  assert.equal(layout.cells.size, 300);
});

test("compactHit: every square's point names its node; a point past the squares names none", () => {
  const nodes = cluster(100);
  const layout = compactLayout(nodesByZone({ nodes }), 1200);
  for (const [name, cell] of layout.cells) assert.equal(compactHit(layout, cell.x + 3, cell.y + 3), name);
  assert.equal(compactHit(layout, 390, 6), null, "zone-a's row holds 54 squares: x 390 is past them");
  assert.equal(compactHit(layout, 2, 40), null, "below the last row");
});

test("relayoutNeeded: a node's new state keeps the squares; a node coming, going or moving zone does not", () => {
  const nodes = cluster(10);
  const layout = compactLayout(nodesByZone({ nodes }), 1200);
  nodes.set("a-1", node("a-1", "zone-a", { ready: "Unknown" }));
  assert.equal(relayoutNeeded(layout, nodes, ["a-1"]), false);
  assert.equal(relayoutNeeded(layout, nodes, []), false);
  const added = new Map(nodes).set("a-11", node("a-11", "zone-a"));
  assert.equal(relayoutNeeded(layout, added, ["a-11"]), true);
  const gone = new Map(nodes); gone.delete("b-2");
  assert.equal(relayoutNeeded(layout, gone, ["b-2"]), true);
  const moved = new Map(nodes).set("c-3", node("c-3", "zone-a"));
  assert.equal(relayoutNeeded(layout, moved, ["c-3"]), true);
});

test("paintSquares: painting only the changed nodes over the old picture gives the full picture", () => {
  const nodes = cluster(200);
  const layout = compactLayout(nodesByZone({ nodes }), 1400);
  const ctx = fakeCtx();
  paintSquares(ctx, layout, nodes, layout.cells.keys());
  assert.equal(ctx.px.size, 600);
  // A delta: b-7 Unknown, b-8 tainted, c-9 NotReady, a-3 silent (kubelet stopped, still Ready).
  const changed = ["b-7", "b-8", "c-9", "a-3"];
  nodes.set("b-7", node("b-7", "zone-b", { ready: "Unknown" }));
  nodes.set("b-8", node("b-8", "zone-b", { taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" }] }));
  nodes.set("c-9", node("c-9", "zone-c", { ready: "False" }));
  nodes.set("a-3", node("a-3", "zone-a", { kubelet: { state: "Stopped" } }));
  paintSquares(ctx, layout, nodes, changed);
  const fresh = fakeCtx();
  paintSquares(fresh, layout, nodes, layout.cells.keys());
  assert.deepEqual(ctx.px, fresh.px);
  const at = (name) => { const c = layout.cells.get(name); return ctx.px.get(`${c.x},${c.y},6,6`); };
  assert.deepEqual(["b-7", "b-8", "c-9", "a-3", "a-1"].map(at), ["#7f8c8d", "#d9a400", "#c0392b", "#e67e22", "#2e9d4f"]);
  assert.equal(at("b-7"), compactColor(nodes.get("b-7")));
});

test("zoneCounts: all and Ready nodes per zone in one pass", () => {
  const nodes = cluster(3);
  nodes.set("b-2", node("b-2", "zone-b", { ready: "Unknown" }));
  nodes.set("b-3", node("b-3", "zone-b", { ready: "False" }));
  assert.deepEqual(Object.fromEntries(zoneCounts(nodes.values())),
    { "zone-a": { total: 3, ready: 3 }, "zone-b": { total: 3, ready: 1 }, "zone-c": { total: 3, ready: 3 } });
});

// An element that counts its writes; its style reads back rounded, as a browser's does.
function fakeEl() {
  const el = { writes: 0, text: "", props: {} };
  Object.defineProperty(el, "textContent", { get() { return el.text; }, set(v) { el.writes++; el.text = String(v); } });
  el.style = {
    getPropertyValue: (p) => el.props[p] ?? "",
    setProperty: (p, v) => { el.writes++; el.props[p] = v.replace(/(\.\d{4})\d+/, "$1"); },
  };
  return el;
}

test("setText and setStyle write only a changed value (a rounded read-back is not a change)", () => {
  const el = fakeEl();
  setText(el, "01:40.000"); setText(el, "01:40.000");
  assert.equal(el.writes, 1);
  setText(el, "01:50.000");
  assert.equal(el.writes, 2);
  setStyle(el, "width", "33.33333333%"); setStyle(el, "width", "33.33333333%");
  assert.equal(el.writes, 3);
  assert.equal(el.style.getPropertyValue("width"), "33.3333%");
  setStyle(el, "width", "50%");
  assert.equal(el.writes, 4);
  // Someone else cleared it: written again.
  el.props.width = "";
  setStyle(el, "width", "50%");
  assert.equal(el.writes, 5);
});
