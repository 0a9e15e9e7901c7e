// node --test tests/js: the projector's tiles (static/js/topology.js): which nodes get a big tile
// (everything written out at 24 px) and the signs a small tile shows (the legend explains them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { BIG_PER_ZONE, bigTiles, tileSigns } from "../../static/js/topology.js";

const focus = (nodes = [], zones = []) => ({ nodes: new Set(nodes), zones: new Set(zones) });
const n = (name, zone, loud = false) => ({ name, zone, loud });

test("the nodes a step names are big, even when there is nothing to see on them", () => {
  const big = bigTiles(focus(["b-1", "b-2"]), [n("a-1", "zone-a", true), n("b-1", "zone-b"), n("b-2", "zone-b")]);
  assert.deepEqual([...big].sort(), ["b-1", "b-2"]);
});

test("in the step's zones, the nodes with something to see are big while there are few", () => {
  const few = [n("b-1", "zone-b", true), n("b-2", "zone-b"), n("a-1", "zone-a", true)];
  assert.deepEqual([...bigTiles(focus([], ["zone-b"]), few)], ["b-1"]);
  const many = Array.from({ length: BIG_PER_ZONE + 1 }, (_, i) => n(`a-${i}`, "zone-a", true));
  assert.equal(bigTiles(focus([], ["zone-a"]), many).size, 0, "35 silent nodes: small tiles and the legend");
});

test("without a focus, every zone's few nodes with something to see are big", () => {
  const big = bigTiles(null, [n("a-1", "zone-a", true), n("a-2", "zone-a"), n("c-1", "zone-c", true)]);
  assert.deepEqual([...big].sort(), ["a-1", "c-1"]);
});

test("a small tile's signs: kubelet stopped, NoExecute, NoSchedule, an older kubelet", () => {
  const base = { ready: "True", taints: [], kubelet: { state: "Running" } };
  assert.equal(tileSigns(base), "");
  assert.equal(tileSigns({ ...base, kubelet: { state: "Stopped" }, taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" }] }), "■⚑");
  assert.equal(tileSigns({ ...base, taints: [{ key: "k", effect: "NoExecute" }, { key: "k", effect: "NoSchedule" }], kubeletVersion: "1.30" }), "✖⚑v1.30");
});
