// The What-if table's rows from a finished run (controller/whatif.py's rows), pure: tested by
// tests/js/whatif.test.mjs.
export function secs(ms) {
  if (ms === null || ms === undefined) return "";
  return `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
}

export function whatIfRows(result) {
  return result.rows.map((r) => {
    const back = r.down_at_ms === null
      ? "never short"
      : r.back_at_ms === null ? `not back by ${secs(result.duration_ms)}` : secs(r.back_at_ms);
    const after = r.back_at_ms === null ? "" : secs(r.back_at_ms - result.at_ms);
    return {
      workload: r.workload,
      cls: r.down_at_ms === null ? "" : r.back_at_ms === null ? "never" : "short",
      cells: [`${r.workload} (${r.namespace})`, String(r.desired), secs(r.down_at_ms),
        r.lowest_ready === null ? "" : String(r.lowest_ready), back, after],
    };
  });
}

export function whatIfTitle(result) {
  const what = result.zone ? `zone ${result.zone}` : result.nodes.join(", ");
  return `${what} failed at ${secs(result.at_ms)}:`;
}

// Why a finished run has no row (the server's note; a run of an older server has none).
export function whatIfEmpty(result) {
  if (result.rows.length) return "";
  return result.note || "No workload to show: this cluster has no Deployment, StatefulSet, ReplicaSet or DaemonSet, whose recovery the table measures.";
}
