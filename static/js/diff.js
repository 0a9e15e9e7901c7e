// Two timelines of one scenario, merged in time order: an event both sides have (same time,
// type and fields) is shown once as "both"; the others are marked with the side that has it.
// Events are matched as a multiset, so three identical events on one side and two on the
// other leave one "only" event. Pure, for tests/js.

export function eventKey(e) {
  const fields = Object.keys(e).filter((k) => k !== "idx" && k !== "why").sort();
  return JSON.stringify(fields.map((k) => [k, e[k]]));
}

export function markDifferences(left, right) {
  const counts = new Map();
  for (const e of right) { const k = eventKey(e); counts.set(k, (counts.get(k) || 0) + 1); }
  const out = [];
  for (const e of left) {
    const k = eventKey(e);
    const n = counts.get(k) || 0;
    if (n > 0) { counts.set(k, n - 1); out.push({ side: "both", event: e, key: k }); } else out.push({ side: "left", event: e, key: k });
  }
  const leftKeys = new Map();
  for (const x of out) if (x.side === "both") leftKeys.set(x.key, (leftKeys.get(x.key) || 0) + 1);
  for (const e of right) {
    const k = eventKey(e);
    const n = leftKeys.get(k) || 0;
    if (n > 0) leftKeys.set(k, n - 1); else out.push({ side: "right", event: e, key: k });
  }
  // Stable by time: left's order first within an instant, then right's.
  return out.map((x, i) => ({ ...x, i })).sort((a, b) => a.event.t - b.event.t || a.i - b.i).map(({ side, event }) => ({ side, event }));
}
