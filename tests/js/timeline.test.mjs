// node --test tests/js: the timeline list's in-place update (static/js/timeline.js): after
// patchList the list holds exactly the wanted entries in order, entries that read the same are
// the same elements as before, and only the difference is made, moved or removed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TimelineList, changeShown, entryKey, eventLabel, patchList } from "../../static/js/timeline.js";

// Just enough of an element tree for patchList, counting the mutations.
class Parent {
  constructor() { this.kids = []; this.ops = 0; }
  get firstElementChild() { return this.kids[0] || null; }
  get lastElementChild() { return this.kids[this.kids.length - 1] || null; }
  get childElementCount() { return this.kids.length; }
  append(...els) { for (const el of els) this.insertBefore(el, null); }
  prepend(...els) { const first = this.kids[0] || null; for (const el of els) this.insertBefore(el, first); }
  insertBefore(el, ref) {
    this.ops++;
    if (el.parentNode) el.parentNode.kids.splice(el.parentNode.kids.indexOf(el), 1);
    const i = ref ? this.kids.indexOf(ref) : this.kids.length;
    assert.ok(i >= 0, "the reference is a child");
    this.kids.splice(i, 0, el);
    el.parentNode = this;
  }
}
class Item {
  constructor(key) { this.key = key; this.parentNode = null; }
  get nextElementSibling() { const k = this.parentNode.kids; return k[k.indexOf(this) + 1] || null; }
  remove() { this.parentNode.ops++; this.parentNode.kids.splice(this.parentNode.kids.indexOf(this), 1); this.parentNode = null; }
}
const keyOf = (el) => el.key;

function listOf(keys) {
  const p = new Parent();
  for (const k of keys) p.insertBefore(new Item(k), null);
  p.ops = 0;
  return p;
}
function patch(p, keys) {
  let made = 0;
  patchList(p, keys.map((key) => ({ key, make: () => { made++; return new Item(key); } })), keyOf);
  return made;
}

test("patchList: new entries on top, old ones dropped at the bottom: only those are touched", () => {
  const old = Array.from({ length: 400 }, (_, i) => `e${399 - i}`);  // newest first
  const p = listOf(old);
  const before = new Map(p.kids.map((el) => [el.key, el]));
  const wanted = [...["e402", "e401", "e400"], ...old.slice(0, 397)];
  const made = patch(p, wanted);
  assert.deepEqual(p.kids.map(keyOf), wanted);
  assert.equal(made, 3);
  assert.equal(p.ops, 6, "3 inserted, 3 removed, none moved");
  for (const el of p.kids.slice(3)) assert.equal(el, before.get(el.key), "kept: the same element");
});

test("patchList: the same list again changes nothing", () => {
  const keys = ["c", "b", "a"];
  const p = listOf(keys);
  const els = [...p.kids];
  assert.equal(patch(p, keys), 0);
  assert.equal(p.ops, 0);
  assert.deepEqual(p.kids, els);
});

test("patchList: any old and new lists (duplicates, reorders, filters) end as wanted", () => {
  let seed = 27;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  for (let round = 0; round < 300; round++) {
    const old = Array.from({ length: rnd(30) }, () => `k${rnd(12)}`);
    const wanted = Array.from({ length: rnd(30) }, () => `k${rnd(12)}`);
    const p = listOf(old);
    const olds = new Set(p.kids);
    const made = patch(p, wanted);
    assert.deepEqual(p.kids.map(keyOf), wanted, `round ${round}: ${old} -> ${wanted}`);
    // An element is made only when no old one with its key is left over.
    const count = (list, k) => list.filter((x) => x === k).length;
    const needed = [...new Set(wanted)].reduce((s, k) => s + Math.max(0, count(wanted, k) - count(old, k)), 0);
    assert.equal(made, needed, `round ${round}`);
    assert.equal(p.kids.filter((el) => olds.has(el)).length, wanted.length - needed);
  }
});

test("patchList: children without a key (a placeholder) are removed", () => {
  const p = listOf(["a"]);
  const stray = new Item(undefined);
  p.insertBefore(stray, p.kids[0]);
  patch(p, ["b", "a"]);
  assert.deepEqual(p.kids.map(keyOf), ["b", "a"]);
});

test("entryKey: an entry's time, type, subject and why; differs when what it reads differs", () => {
  const e = { t: 40, type: "TaintAdded", node: "n1", key: "node.kubernetes.io/unreachable" };
  assert.equal(entryKey(e, "why"), entryKey({ ...e }, "why"));
  assert.notEqual(entryKey(e, "why"), entryKey(e, "why not"));
  assert.notEqual(entryKey(e, "why"), entryKey({ ...e, t: 41 }, "why"));
  assert.notEqual(entryKey(e, "why"), entryKey({ ...e, type: "TaintRemoved" }, "why"));
  assert.notEqual(entryKey(e, "why"), entryKey({ ...e, node: "n2" }, "why"));
  assert.equal(entryKey({ t: 1, type: "PodEvicted", pod: "p", node: "n" }, ""), entryKey({ t: 1, type: "PodEvicted", pod: "p" }, ""), "the subject shown: the pod");
});

// Animation frames run by hand.
const frames = [];
globalThis.requestAnimationFrame = (f) => { frames.push(f); return frames.length; };
const runFrame = () => { const f = frames.shift(); if (f) f(); return Boolean(f); };
const wantedOf = (keys) => keys.map((key) => ({ key, make: () => new Item(key) }));

test("TimelineList.full: the first `eager` entries at once, then `step` a frame, until all are there", () => {
  frames.length = 0;
  const p = listOf(["x"]);
  const tl = new TimelineList(p);
  const keys = Array.from({ length: 10 }, (_, i) => `e${9 - i}`);
  tl.full(wantedOf(keys), 4, 3);
  assert.deepEqual(p.kids.map(keyOf), keys.slice(0, 4));
  runFrame();
  assert.deepEqual(p.kids.map(keyOf), keys.slice(0, 7));
  runFrame();
  assert.deepEqual(p.kids.map(keyOf), keys.slice(0, 10), "the last frame: what is left");
  runFrame();
  assert.deepEqual(p.kids.map(keyOf), keys);
  assert.equal(runFrame(), false, "no frame asked for once all are shown");
  tl.full(wantedOf(["a", "b"]));
  assert.deepEqual(p.kids.map(keyOf), ["a", "b"], "eager by default: all at once");
});

test("TimelineList: deltas while entries are still to come end as they would at once (the first `max` kept)", () => {
  for (const [max, news] of [[600, 3], [12, 3], [12, 9], [5, 2]]) {
    frames.length = 0;
    const keys = Array.from({ length: 10 }, (_, i) => `e${9 - i}`);
    const added = Array.from({ length: news }, (_, i) => `n${news - i}`);
    const expected = [...added, ...keys].slice(0, max);
    const p = listOf([]);
    const tl = new TimelineList(p, { max });
    tl.full(wantedOf(keys), 3);
    runFrame();
    tl.prepend(added.map((k) => new Item(k)));
    while (runFrame());
    assert.deepEqual(p.kids.map(keyOf), expected, `max ${max}, ${news} new`);
    // The same, all at once.
    const q = listOf([]);
    const at = new TimelineList(q, { max });
    at.full(wantedOf(keys));
    at.prepend(added.map((k) => new Item(k)));
    assert.deepEqual(q.kids.map(keyOf), expected);
  }
});

test("TimelineList: a full render or flush while entries are to come: the new list, complete", () => {
  frames.length = 0;
  const p = listOf([]);
  const tl = new TimelineList(p);
  tl.full(wantedOf(["a", "b", "c", "d", "e"]), 2);
  tl.full(wantedOf(["z", "a", "b"]), 2);
  while (runFrame());
  assert.deepEqual(p.kids.map(keyOf), ["z", "a", "b"]);
  tl.full(wantedOf(["c", "b", "a"]), 1);
  tl.flush();
  assert.deepEqual(p.kids.map(keyOf), ["c", "b", "a"]);
  while (runFrame());
  assert.deepEqual(p.kids.map(keyOf), ["c", "b", "a"]);
});

// Issue #38: a parameter change read "Fault SetParameters".
test("a parameter change reads Parameters changed: field old → new", () => {
  const e = { t: 50, type: "Fault", fault: "SetParameters", controllerManager: { nodeEvictionRate: 0.5 },
    changes: ["controllerManager.nodeEvictionRate: 0.1 -> 0.5", "kubelet.nodeStatusUpdateFrequency: 10s -> 5s"] };
  assert.deepEqual(eventLabel(e), { type: "Parameters changed:", subject: "nodeEvictionRate 0.1 → 0.5; nodeStatusUpdateFrequency 10s → 5s" });
  assert.deepEqual(eventLabel({ ...e, changes: [] }), { type: "Parameters changed:", subject: "nothing" });
  assert.deepEqual(eventLabel({ t: 1, type: "Fault", fault: "StopKubelet", node: "a-1" }), { type: "Fault", subject: "a-1" });
  assert.equal(changeShown("odd text"), "odd text");
  assert.equal(changeShown("scheduler.clientConnection.qps: 50 -> 5"), "kube-scheduler clientConnection.qps 50 → 5");
  assert.notEqual(entryKey(e, ""), entryKey({ ...e, changes: ["controllerManager.nodeEvictionRate: 0.1 -> 0.2"] }, ""));
});
