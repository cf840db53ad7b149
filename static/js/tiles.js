// Domino tiles as SVG: faces with real pips, backs, and the stones (penalty counters).

import { s } from "./dom.js";

// Pip centres in a 100×100 half, for a tile standing upright (halves one above the other).
const P = { tl: [28, 28], tr: [72, 28], ml: [28, 50], mr: [72, 50], bl: [28, 72], br: [72, 72], c: [50, 50] };
const PIPS = {
  0: [],
  1: ["c"],
  2: ["tr", "bl"],
  3: ["tr", "c", "bl"],
  4: ["tl", "tr", "bl", "br"],
  5: ["tl", "tr", "c", "bl", "br"],
  6: ["tl", "tr", "ml", "mr", "bl", "br"],
};

/** Parse "3-6" into [3, 6] (as written: the order is the orientation). */
export const pips = (tile) => tile.split("-").map(Number);

/** The same tile whichever way round it is written: "6-3" → "3-6". */
export const tileKey = (tile) => {
  const [a, b] = pips(tile);
  return a <= b ? `${a}-${b}` : `${b}-${a}`;
};

export const isLempa = (tile) => {
  const [a, b] = pips(tile);
  return a === b;
};

function half(value, dx, dy, vertical) {
  return PIPS[value].map((name) => {
    const [x, y] = P[name];
    // Upright tiles use the pattern as written; lying tiles turn it a quarter (six shows 3 × 2).
    const [px, py] = vertical ? [x, y] : [y, 100 - x];
    return s("circle", { class: "pip", cx: px + dx, cy: py + dy, r: 9.5 });
  });
}

/**
 * A tile face: ``a`` on the left (or top when ``vertical``), ``b`` on the right (or bottom).
 * The SVG is decorative (aria-hidden); the control around it carries the label.
 */
export function tileSvg(a, b, { vertical = false, cls = "" } = {}) {
  const [w, h2] = vertical ? [100, 200] : [200, 100];
  const svg = s("svg", {
    class: `tile-svg ${cls}`.trim(),
    viewBox: `0 0 ${w} ${h2}`,
    "aria-hidden": "true",
    focusable: "false",
  });
  svg.append(
    s("rect", { class: "tile-edge", x: 1, y: 1, width: w - 2, height: h2 - 2, rx: 15 }),
    s("rect", { class: "tile-face", x: 4, y: 4, width: w - 8, height: h2 - 8, rx: 12 }),
    vertical
      ? s("line", { class: "tile-line", x1: 16, y1: 100, x2: 84, y2: 100 })
      : s("line", { class: "tile-line", x1: 100, y1: 16, x2: 100, y2: 84 }),
    ...half(a, 0, 0, vertical),
    ...(vertical ? half(b, 0, 100, true) : half(b, 100, 0, false)),
    s("circle", { class: "tile-rivet", cx: w / 2, cy: h2 / 2, r: 4.5 }),
  );
  return svg;
}

/** A tile seen from the back (another player's hand). */
export function tileBackSvg({ vertical = true, cls = "" } = {}) {
  const [w, h2] = vertical ? [100, 200] : [200, 100];
  const svg = s("svg", {
    class: `tile-svg tile-back ${cls}`.trim(),
    viewBox: `0 0 ${w} ${h2}`,
    "aria-hidden": "true",
    focusable: "false",
  });
  svg.append(
    s("rect", { class: "back-face", x: 2, y: 2, width: w - 4, height: h2 - 4, rx: 13 }),
    s("rect", { class: "back-inlay", x: 14, y: 14, width: w - 28, height: h2 - 28, rx: 7 }),
    s("circle", { class: "back-mark", cx: w / 2, cy: h2 / 2, r: 12 }),
  );
  return svg;
}

/** A tile drawn in the text flow of a sentence (feed, round-end panel). */
export function miniTile(tile, { vertical = false } = {}) {
  const [a, b] = pips(tile);
  const label = `${a}–${b}`;
  const wrap = s("svg", { class: "mini-tile", viewBox: vertical ? "0 0 100 200" : "0 0 200 100", role: "img" });
  wrap.append(s("title", {}, label));
  const face = tileSvg(a, b, { vertical });
  for (const child of [...face.childNodes]) wrap.append(child);
  return wrap;
}

/** One stone (a penalty counter). */
export function stoneSvg(cls = "") {
  const svg = s("svg", { class: `stone ${cls}`.trim(), viewBox: "0 0 20 20", "aria-hidden": "true", focusable: "false" });
  svg.append(
    s("ellipse", { class: "stone-body", cx: 10, cy: 11, rx: 8.5, ry: 7.5 }),
    s("ellipse", { class: "stone-shine", cx: 7.5, cy: 8, rx: 3, ry: 2 }),
  );
  return svg;
}
