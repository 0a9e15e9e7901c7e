// The small multiples' arithmetic (pure: tests/js/multiples.test.mjs): which panels a group
// of chart columns makes, in what order, on what shared count axis.

// Tick steps for a count axis: whole numbers only.
export const COUNT_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000];

// A count axis from 0 to the group's largest value (at least 1), ticks on whole numbers.
export function countAxis(getMax) {
  return {
    range: () => [0, Math.max(1, Math.ceil(getMax()))],
    incrs: COUNT_INCRS,
    values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : "")),
  };
}

function worst(cols, ready, desired) {
  const r = cols.get(ready) || [], d = cols.get(desired) || [];
  let w = 0;
  for (let i = 0; i < r.length; i++) if (r[i] !== null && d[i] !== null) w = Math.min(w, r[i] - d[i]);
  return w;
}

// kind "zones": a panel per column (a zone); "replicas": a panel per workload from its
// "<ref> ready" and "<ref> desired" columns, those that fell furthest short first (then by
// name). -> {panels: [{key, cols: [column keys]}], max (the group's largest value), hidden}
export function panelsOf(kind, t, cols, maxPanels = 12) {
  let panels;
  if (kind === "replicas") {
    const refs = [...new Set([...cols.keys()].map((k) => k.replace(/ (ready|desired)$/, "")))];
    const score = new Map(refs.map((r) => [r, worst(cols, `${r} ready`, `${r} desired`)]));
    refs.sort((a, b) => score.get(a) - score.get(b) || a.localeCompare(b));
    panels = refs.map((r) => ({ key: r, cols: [`${r} desired`, `${r} ready`].filter((k) => cols.has(k)) }));
  } else {
    panels = [...cols.keys()].sort().map((k) => ({ key: k, cols: [k] }));
  }
  const shown = panels.slice(0, maxPanels);
  let max = 1;
  for (const p of shown) for (const k of p.cols) for (const v of cols.get(k)) if (v !== null && v > max) max = v;
  return { panels: shown, max, hidden: panels.length - shown.length };
}
