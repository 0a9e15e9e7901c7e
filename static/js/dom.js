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

// Writes that leave the page alone when nothing changes: a text or style set, even to the
// same value, makes the browser recompute style and layout and repaint at its next frame.
export function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
// (The style as written is remembered: the browser reads back a rounded value, 33.3333%.)
const written = new WeakMap();
export function setStyle(el, prop, value) {
  let mine = written.get(el);
  if (!mine) written.set(el, (mine = {}));
  if (mine[prop] === value && el.style.getPropertyValue(prop) !== "") return;
  mine[prop] = value;
  el.style.setProperty(prop, value);
}
