// The room page's "What if" card: queue a headless run in the worker, poll, show per-workload
// recovery (controller/whatif.py computes it).
const form = document.getElementById("whatif-form");
const state = document.getElementById("whatif-state");
const error = document.getElementById("whatif-error");
const table = document.getElementById("whatif-result");

function secs(ms) {
  return ms === null || ms === undefined ? "" : `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
}

function render(result) {
  const body = table.querySelector("tbody");
  body.textContent = "";
  for (const r of result.rows) {
    const tr = document.createElement("tr");
    const back = r.down_at_ms === null ? "never short" : r.back_at_ms === null
      ? `not back by ${secs(result.duration_ms)}` : secs(r.back_at_ms);
    const after = r.back_at_ms === null ? "" : secs(r.back_at_ms - result.at_ms);
    const cells = [`${r.workload} (${r.namespace})`, r.desired, secs(r.down_at_ms),
      r.lowest_ready ?? "", back, after];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = String(c);
      tr.appendChild(td);
    }
    tr.dataset.workload = r.workload;
    if (r.down_at_ms !== null) tr.classList.add(r.back_at_ms === null ? "never" : "short");
    body.appendChild(tr);
  }
  table.hidden = false;
  const what = result.zone ? `zone ${result.zone}` : result.nodes.join(", ");
  state.textContent = `${what} failed at ${secs(result.at_ms)}:`;
}

async function poll(url) {
  for (;;) {
    const res = await fetch(url);
    const body = await res.json();
    if (body.state === "done") return render(body);
    if (body.state === "failed") throw new Error(body.error);
    await new Promise((r) => setTimeout(r, 700));
  }
}

form?.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  error.hidden = true;
  table.hidden = true;
  state.textContent = "running in the worker…";
  try {
    const res = await fetch(form.dataset.url, { method: "POST", body: new FormData(form) });
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || res.statusText);
    await poll(`${form.dataset.url}/${body.id}`);
  } catch (e) {
    state.textContent = "";
    error.textContent = e.message;
    error.hidden = false;
  }
});
