// The room page's "What if" card: queue a headless run in the worker, poll, show per-workload
// recovery (controller/whatif.py computes it).
import { whatIfEmpty, whatIfRows, whatIfTitle } from "./whatif-rows.js";

const form = document.getElementById("whatif-form");
const state = document.getElementById("whatif-state");
const error = document.getElementById("whatif-error");
const table = document.getElementById("whatif-result");
const note = document.getElementById("whatif-note");

function render(result) {
  const body = table.querySelector("tbody");
  body.textContent = "";
  for (const row of whatIfRows(result)) {
    const tr = document.createElement("tr");
    for (const c of row.cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    tr.dataset.workload = row.workload;
    if (row.cls) tr.classList.add(row.cls);
    body.appendChild(tr);
  }
  // No row: the table is not shown bare; the note says why (controller/whatif.py empty_note).
  const rows = body.childElementCount;
  table.hidden = !rows;
  note.textContent = rows ? "" : whatIfEmpty(result);
  note.hidden = Boolean(rows);
  state.textContent = whatIfTitle(result);
}

async function poll(url) {
  for (;;) {
    const res = await fetch(url);
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || res.statusText);  // 404: expired, or not this room's
    if (body.state === "done") return render(body);
    if (body.state === "failed") throw new Error(body.error);
    await new Promise((r) => setTimeout(r, 700));
  }
}

form?.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  error.hidden = true;
  table.hidden = true;
  note.hidden = true;
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
