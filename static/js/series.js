// The room's charts from t=0 (GET /rooms/<slug>/series.json, kept by the engine as it runs):
// each stream is a list of changes; a chart needs one time axis with every column carried
// forward. Pure, so tests/js can check it.

// streams: { key: [[t, value], ...] } -> { t: [...], cols: Map(key -> [...]) }, step-wise.
export function mergeStreams(streams) {
  const times = [...new Set(Object.values(streams).flatMap((pts) => pts.map((p) => p[0])))].sort((a, b) => a - b);
  const cols = new Map();
  for (const [key, pts] of Object.entries(streams)) {
    const col = [];
    let i = 0, last = null;
    for (const t of times) {
      while (i < pts.length && pts[i][0] <= t) last = pts[i++][1];
      col.push(last);
    }
    cols.set(key, col);
  }
  return { t: times, cols };
}

// The three charts' streams from the endpoint's answer.
export function chartStreams(series) {
  const zones = new Set(series.zones.flatMap(([, counts]) => Object.keys(counts)));
  const ready = {};
  for (const z of zones) ready[z || "(none)"] = series.zones.map(([t, counts]) => [t, counts[z] ?? 0]);
  const queue = {};
  for (const [z, pts] of Object.entries(series.queue)) queue[z || "(none)"] = pts;
  const replicas = {};
  for (const [ref, pts] of Object.entries(series.workloads)) {
    replicas[`${ref} ready`] = pts.map(([t, , r]) => [t, r]);
    replicas[`${ref} desired`] = pts.map(([t, d]) => [t, d]);
  }
  return { ready, queue, replicas };
}
