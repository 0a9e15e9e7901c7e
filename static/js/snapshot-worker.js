// A big room's snapshot.json (10 MB at 5,000 nodes) fetched, decoded and parsed here, off the
// page's main thread (there it blocked the page for 100-400 ms at each resync), then sent to
// the page in chunks: the head (everything but nodes, pods and events), then those in slices.
// The next chunk goes when the page has taken the last one ({id, ack: true}), so that each is
// a task of its own on the page's side (snapshot-fetch.js), however fast they are parsed.
// A classic worker: {id, url} in; {id, part: "head" | "nodes" | "pods" | "events" | "done" |
// "error", ...} out.
const CHUNK = { nodes: 250, pods: 1000, events: 250 };
const pending = new Map();  // id -> the chunks not yet sent

function next(id) {
  const queue = pending.get(id);
  if (!queue) return;
  const m = queue.shift();
  if (!queue.length) pending.delete(id);
  self.postMessage(m);
}

self.onmessage = async (ev) => {
  const { id, url, ack } = ev.data;
  if (ack) { next(id); return; }
  try {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) throw new Error(`snapshot.json: ${r.status}`);
    const snap = await r.json();
    const head = { ...snap };
    delete head.nodes; delete head.pods; delete head.events;
    const queue = [{ id, part: "head", head }];
    for (const part of ["nodes", "pods", "events"]) {
      const list = snap[part] || [];
      for (let i = 0; i < list.length; i += CHUNK[part]) queue.push({ id, part, list: list.slice(i, i + CHUNK[part]) });
    }
    queue.push({ id, part: "done" });
    pending.set(id, queue);
    next(id);
  } catch (err) {
    self.postMessage({ id, part: "error", message: String(err && err.message ? err.message : err) });
  }
};
