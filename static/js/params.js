// The room page's parameters panel, its data side (pure, no DOM: tests/js/params.test.mjs).
// An input is named by its path in the parameters view, which spells sections as the
// scenario does: "controllerManager.nodeEvictionRate", or nested for kube-scheduler's
// KubeSchedulerConfiguration, "scheduler.clientConnection.qps".

// The setting at `name` in the parameters view: {shown: false} when the room's release does
// not have it (the view leaves it out), else {shown: true, value}.
export function paramAt(params, name) {
  const path = name.split(".");
  let at = params;
  for (const key of path) {
    if (at === null || typeof at !== "object" || !(key in at)) return { shown: false };
    at = at[key];
  }
  return { shown: true, value: at };
}

// The text an input shows greyed for its current value: a duration (data-unit="s") as "40s".
export function placeholderFor(value, unit) {
  if (value === undefined || value === null) return "";
  return typeof value === "number" && unit === "s" ? `${value}s` : String(value);
}

// What an operator typed, as the server takes it (the SetParameters sections): a number where
// it reads as one (a negative QPS too: no rate limiting), a duration field (…Period) as its
// text; nested by the input's path. Empty inputs keep their value and are left out.
export function paramsFrom(entries) {
  const out = {};
  for (const [name, raw] of entries) {
    const text = String(raw).trim();
    if (!text) continue;
    const path = name.split(".");
    const field = path[path.length - 1];
    let at = out;
    for (const key of path.slice(0, -1)) at = at[key] = at[key] || {};
    const num = Number(text);  // "1.2.3" is no number: sent as typed, refused naming its field
    at[field] = /^-?[0-9.]+$/.test(text) && Number.isFinite(num) && !field.endsWith("Period") ? num : text;
  }
  return out;
}
