// The room page's timeline list: its entries, newest first. A full render (a snapshot, a
// resync, the filter) patches the list in place: an entry that reads the same as one already
// shown is kept (the same element), only the difference is made, moved or removed. Rebuilding
// ~400 entries after each resync made the browser shape and lay out all of their text again
// in one frame (a 5,000-node room's long task, issue #27); kept entries cost it nothing.
import { h } from "./dom.js";
import { fmtTime } from "./state.js";

// What an entry reads: two events with the same key show the same entry.
export function entryKey(e, whyText) {
  return `${e.t}\u0000${e.type}\u0000${subject(e)}\u0000${whyText}`;
}

function subject(e) { return eventLabel(e).subject; }

// What an entry names: its type and subject. A parameter change reads "Parameters changed:
// nodeEvictionRate 0.1 → 0.5" (it read "Fault SetParameters"); its JSON keeps type "Fault",
// fault "SetParameters" and changes ("controllerManager.nodeEvictionRate: 0.1 -> 0.5"), as the
// exports' text says it (controller/engine/timeline.py parameters_changed).
export function eventLabel(e) {
  if (e.type === "Fault" && e.fault === "SetParameters" && Array.isArray(e.changes)) {
    return { type: "Parameters changed:", subject: e.changes.map(changeShown).join("; ") || "nothing" };
  }
  return { type: e.type, subject: e.pod || e.node || e.zone || e.object || e.fault || "" };
}

// "controllerManager.nodeEvictionRate: 0.1 -> 0.5" -> "nodeEvictionRate 0.1 → 0.5"; the
// scheduler's client keeps its component ("kube-scheduler clientConnection.qps 50 → 5"): its
// last name alone (qps, burst) would not say whose.
export function changeShown(change) {
  const text = String(change);
  const i = text.indexOf(": ");
  if (i < 0) return text;
  const values = text.slice(i + 2).split(" -> ");
  if (values.length !== 2) return text;
  const path = text.slice(0, i).split(".");
  const name = path[0] === "scheduler" && path.length > 2 ? `kube-scheduler ${path.slice(1).join(".")}` : path.pop();
  return `${name} ${values[0]} → ${values[1]}`;
}

const keys = new WeakMap();  // entry element -> its entryKey

// An entry's element (operator: with its "rewind here" button).
export function entryElement(e, whyText, operator) {
  const label = eventLabel(e);
  const li = h("li", { class: `ev t-${e.type}`, "data-t": e.t }, h("span", { class: "ev-t", text: fmtTime(e.t) }), " ",
    h("span", { class: "ev-type", text: label.type }), " ", h("span", { class: "ev-subj", text: label.subject }),
    operator ? h("button", { class: "rewind-here", "data-t": e.t, title: `rewind the room to ${fmtTime(e.t)}, just after this event`, text: "⟲" }) : null,
    h("div", { class: "why", text: whyText }));
  keys.set(li, entryKey(e, whyText));
  return li;
}

// Makes parent's children the entries wanted ([{key, make}] in order; make() builds one),
// reusing the children whose key is wanted. Only elements made or out of place are inserted,
// only those no longer wanted are removed; nothing is read back from the layout.
// keyOf(el): a child's key (default: the one entryElement recorded).
export function patchList(parent, wanted, keyOf = (el) => keys.get(el)) {
  const pool = new Map();  // key -> the children with it, in order (equal entries are alike)
  for (let el = parent.firstElementChild; el; el = el.nextElementSibling) {
    const k = keyOf(el);
    if (k === undefined) continue;
    const list = pool.get(k);
    if (list) list.push(el); else pool.set(k, [el]);
  }
  const next = [];
  const kept = new Set();
  for (const w of wanted) {
    const list = pool.get(w.key);
    if (list && list.length) { const el = list.shift(); kept.add(el); next.push(el); } else next.push(w.make());
  }
  for (let el = parent.firstElementChild; el;) {
    const after = el.nextElementSibling;
    if (!kept.has(el)) el.remove();
    el = after;
  }
  // The kept children are now in their old order; the rest go in before the first one that
  // is not where it should be.
  let cur = parent.firstElementChild;
  for (const el of next) {
    if (el === cur) { cur = cur.nextElementSibling; continue; }
    parent.insertBefore(el, cur);
  }
}

// The list as a page keeps it: full() shows the wanted entries, the first `eager` at once and
// the rest `step` per animation frame after (appended below; a resync of a 5,000-node room
// brings ~400 new entries, which laid out in one frame made it a 75-95 ms long task). Deltas'
// entries go on top; the list keeps its first `max` entries, the ones still to come included.
export class TimelineList {
  constructor(el, { max = 600 } = {}) { this.el = el; this.max = max; this.pending = []; this.step = Infinity; this.frame = 0; }

  full(wanted, eager = Infinity, step = eager) {
    this.pending = wanted.slice(eager); this.step = step;
    patchList(this.el, wanted.slice(0, eager));
    this.schedule();
  }

  prepend(elements) {
    this.el.prepend(...elements);
    let excess = this.el.childElementCount + this.pending.length - this.max;
    if (excess > 0 && this.pending.length) {
      const drop = Math.min(excess, this.pending.length);
      this.pending.length -= drop; excess -= drop;
    }
    while (excess-- > 0) this.el.lastElementChild.remove();
  }

  // Everything at once (before reading the list: a time picked on a chart).
  flush() { this.append(this.pending.length); }

  append(n) {
    const batch = this.pending.splice(0, n);
    if (batch.length) this.el.append(...batch.map((w) => w.make()));
  }

  schedule() {
    if (this.frame || !this.pending.length) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.append(this.step); this.schedule(); });
  }
}
