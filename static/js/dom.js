// One small DOM builder for the pages: h("div", { class, text, "data-x": ... }, ...children).
export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v; else if (k.startsWith("data-")) el.setAttribute(k, v);
    else if (k === "text") el.textContent = v; else el[k] = v;
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) el.append(kid);
  return el;
}
