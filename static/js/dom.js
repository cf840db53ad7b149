// Tiny DOM helpers: every piece of user text goes in as a Text node (never innerHTML).

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Build an element: h("button", {class: "x", onclick: fn, "aria-label": "…"}, child, "text", …).
 * Props: class, text, dataset, style (object), on* listeners, anything else as an attribute
 * (true → empty attribute, false/null/undefined → left out). Children: Nodes, strings, numbers, arrays.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

/** The same for SVG elements: s("circle", {cx: 5, cy: 5, r: 2}). */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

function applyProps(el, props) {
  if (!props) return;
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key === "text") el.textContent = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

/** Append children (Nodes as they are, anything else as text). */
export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replace all children of ``el``. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Make ``items`` (elements) the children of ``el``, keeping the leading children that already are
 * (no DOM work for them): a list that grows at its end costs only its new items. */
export function keepChildren(el, items) {
  let same = 0;
  while (same < items.length && el.children[same] === items[same]) same += 1;
  while (el.children.length > same) el.lastElementChild.remove();
  el.append(...items.slice(same));
}

/** Keep ``n`` children in ``el``, all alike (``make()`` builds one: a hand's tile backs): those
 * missing are added at the end, those too many removed from it, so that a hand one tile shorter
 * builds, restyles and lays out none of the others again. */
export function keepCount(el, n, make) {
  while (el.childElementCount > n) el.lastElementChild.remove();
  while (el.childElementCount < n) el.append(make());
}

/** Set an inline style property (``--custom`` ones too) only when it changes: a custom property
 * set on a container restyles everything under it, even to the value it had. */
export function setStyle(el, name, value) {
  if (el.style.getPropertyValue(name) !== value) el.style.setProperty(name, value);
}

/** Set an attribute only when it changes (keeps focus and avoids layout work). */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else {
    const text = value === true ? "" : String(value);
    if (el.getAttribute(name) !== text) el.setAttribute(name, text);
  }
}

/** Set textContent only when it changes. */
export function setText(el, text) {
  const value = String(text);
  if (el.textContent !== value) el.textContent = value;
}

export const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** A short message at the bottom of the screen. */
export function toast(content, kind = "info", ms = 4000) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const item = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, content);
  // the same message again replaces the one showing rather than stacking; a click dismisses
  for (const old of box.children) if (old.textContent === item.textContent) old.remove();
  item.addEventListener("click", () => item.remove());
  box.append(item);
  setTimeout(() => item.classList.add("leaving"), ms);
  setTimeout(() => item.remove(), ms + 400);
}

/** Remove the toasts of one kind ("error", "info") at once: what they said no longer holds. */
export function clearToasts(kind) {
  const box = document.getElementById("toasts");
  if (box) for (const item of [...box.querySelectorAll(`.toast-${kind}`)]) item.remove();
}

/**
 * Arrow keys along a row of buttons (the WAI-ARIA toolbar pattern), from a keydown ``event``:
 * ArrowLeft and ArrowRight (with ``upDown`` ArrowUp and ArrowDown too) focus the one before or after
 * the focused one of ``items``, round the row; Home and End the first and the last. Returns whether
 * the key moved the focus (its default action is then prevented).
 */
export function arrowsAlong(event, items, upDown = false) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return false;
  const at = items.indexOf(document.activeElement);
  if (at < 0) return false;
  const steps = { ArrowLeft: -1, ArrowRight: 1, ...(upDown ? { ArrowUp: -1, ArrowDown: 1 } : {}) };
  let next;
  if (event.key === "Home") next = 0;
  else if (event.key === "End") next = items.length - 1;
  else if (Object.hasOwn(steps, event.key)) next = (at + steps[event.key] + items.length) % items.length;
  else return false;
  event.preventDefault();
  items[next].focus();
  return true;
}
