// A big room's snapshot.json (10 MB at 5,000 nodes) fetched, decoded and parsed here, off the
// page's main thread (there it blocked the page for 100-400 ms at each resync), then sent to
// the page in chunks: the head (everything but nodes, pods and events), then those in slices,
// each a message the page takes in a task of its own (snapshot-fetch.js). A classic worker:
// {id, url} in; {id, part: "head" | "nodes" | "pods" | "events" | "done" | "error", ...} out.
const CHUNK = { nodes: 500, pods: 2000, events: 500 };

self.onmessage = async (ev) => {
  const { id, url } = ev.data;
  try {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) throw new Error(`snapshot.json: ${r.status}`);
    const snap = await r.json();
    const head = { ...snap };
    delete head.nodes; delete head.pods; delete head.events;
    self.postMessage({ id, part: "head", head });
    for (const part of ["nodes", "pods", "events"]) {
      const list = snap[part] || [];
      for (let i = 0; i < list.length; i += CHUNK[part]) self.postMessage({ id, part, list: list.slice(i, i + CHUNK[part]) });
    }
    self.postMessage({ id, part: "done" });
  } catch (err) {
    self.postMessage({ id, part: "error", message: String(err && err.message ? err.message : err) });
  }
};
