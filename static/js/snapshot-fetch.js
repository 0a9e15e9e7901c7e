// A room's snapshot.json for a resync, as {head, state}: fetched and parsed by a worker
// (snapshot-worker.js) and built here chunk by chunk (SnapshotBuilder), so that no single
// task of the page parses 10 MB or builds 35,000 entries; without workers, fetched here.
// current(): the page's state when the head arrives (its role and parameters carry over).
import { SnapshotBuilder, applySnapshot } from "./state.js";

let worker = null;
let nextId = 0;

export function fetchSnapshot(url, current) {
  const href = new URL(url, location.href).href;
  if (typeof Worker === "undefined") return fetchHere(href, current);
  try {
    worker = worker || new Worker(new URL("./snapshot-worker.js", import.meta.url));
  } catch (err) {
    return fetchHere(href, current);
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    let head = null, builder = null;
    const done = () => worker.removeEventListener("message", on);
    const on = (ev) => {
      const m = ev.data;
      if (m.id !== id) return;
      if (m.part === "head") { head = m.head; builder = new SnapshotBuilder(current(), head); }
      else if (m.part === "nodes") builder.nodes(m.list);
      else if (m.part === "pods") builder.pods(m.list);
      else if (m.part === "events") builder.events(m.list);
      else if (m.part === "done") { done(); resolve({ head, state: builder.finish() }); return; }
      else if (m.part === "error") { done(); reject(new Error(m.message)); return; }
      worker.postMessage({ id, ack: true });  // the next chunk, in a task of its own
    };
    worker.addEventListener("message", on);
    worker.postMessage({ id, url: href });
  });
}

function fetchHere(href, current) {
  return fetch(href)
    .then((r) => { if (!r.ok) throw new Error(`snapshot.json: ${r.status}`); return r.json(); })
    .then((snap) => ({ head: snap, state: applySnapshot(current(), snap) }));
}
