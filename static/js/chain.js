// The chain on the table: a snake of real tiles that wraps in rows to stay inside its board.
// Lempas lie crosswise; a tile that reaches a row's edge turns the corner standing upright.
// The layout is pure (units of one tile's short side); `ChainBoard` draws it and keeps each tile
// element (a tile is unique in the set). A chain that only grew glides to its new place as one
// piece; one laid out anew (a new size or shape) takes its new places at once, so no two tiles
// ever pass over one another on the way.

import { h, reducedMotion, setAttr, setStyle, setText } from "./dom.js";
import { isLempa, pips, tileKey, tileSvg } from "./tiles.js";

const GAP = 0.06; // between tiles along a row
const PITCH = 2.3; // from one row's centre line to the next
const MIN_UNIT = 10; // px: the smallest short side of a chain's tile, unless the page says (--chain-min)
const GLIDE = { duration: 450, easing: "cubic-bezier(0.2, 0.8, 0.2, 1)" }; // the chain moving as one piece
const SETTLE = { duration: 220, easing: "ease-out" }; // the chain laid out anew: it fades in where it is

/** A tile's place in a layout, as a key: the same in two layouts only if the tile stays put there. */
const placeKey = (r) => `${r.x},${r.y},${r.w},${r.h},${r.vertical},${r.reversed}`;

/**
 * One arm of the chain, growing away from the opening tile: along the row in ``dir`` (+1 right,
 * -1 left) from ``cursor``, turning the corner at the board's edge towards ``vdir`` (+1 down,
 * -1 up) and coming back the other way. Items are {lempa}; rects are in units, ``line`` is the
 * centre line of the row, ``dir`` the way the arm runs there (a corner tile: the way it ran into
 * the corner). ``flipWhen`` is the direction in which the item's pips run backwards.
 *
 * A tile joins the row only if room for a corner tile (one unit) stays after it; otherwise it
 * stands upright at the row's end and turns the corner itself (a lempa too). So every row change
 * goes through a corner and the chain reads as one line: no tile starts a row on its own.
 */
function layoutArm(items, { cursor, dir, vdir, cols, flipWhen }) {
  const out = [];
  let line = 0;
  let afterTurn = false;
  const room = () => (dir === 1 ? cols - cursor : cursor); // units left before the edge
  for (const item of items) {
    const w = item.lempa ? 1 : 2;
    const lead = afterTurn && item.lempa ? 1 : 0; // a lempa stands beside the corner tile, not under it
    if (room() - lead - w - GAP < 1 - 1e-9) {
      if (room() >= 1 - 1e-9) {
        const x = dir === 1 ? cursor : cursor - 1;
        const y = vdir === 1 ? line - 0.5 : line - 1.5;
        out.push({ x, y, w: 1, h: 2, vertical: true, reversed: false, turn: true, dir });
        cursor = dir === 1 ? x + 1 : x;
        dir = -dir;
        line += vdir * PITCH;
        afterTurn = true;
        continue;
      }
      // no room even for a corner (a board narrower than the opening row): start the next row
      dir = -dir;
      cursor = dir === 1 ? 0 : cols;
      line += vdir * PITCH;
      afterTurn = false;
    }
    if (afterTurn && item.lempa) cursor += dir;
    const x = dir === 1 ? cursor : cursor - w;
    const hgt = item.lempa ? 2 : 1;
    out.push({ x, y: line - hgt / 2, w, h: hgt, vertical: item.lempa, reversed: !item.lempa && dir === flipWhen, dir });
    cursor += dir * (w + GAP);
    afterTurn = false;
  }
  return out;
}

/**
 * Lay out a chain of ``items`` ({lempa}) whose opening tile is ``items[opening]``, in rows
 * ``cols`` units wide: the opening sits mid-row, the right arm snakes downwards and the left arm
 * upwards, so a new tile never moves the others. Returns rects in chain order (units), each
 * but the opening's with the ``dir`` its arm runs there (+1 right, -1 left).
 */
export function layoutChain(items, cols, opening) {
  if (!items.length) return [];
  const first = items[opening];
  const w0 = first.lempa ? 1 : 2;
  const x0 = Math.max(0, (cols - w0) / 2);
  const centre = { x: x0, y: first.lempa ? -1 : -0.5, w: w0, h: first.lempa ? 2 : 1, vertical: first.lempa, reversed: false };
  const right = layoutArm(items.slice(opening + 1), { cursor: x0 + w0 + GAP, dir: 1, vdir: 1, cols, flipWhen: -1 });
  const left = layoutArm(items.slice(0, opening).reverse(), { cursor: x0 - GAP, dir: -1, vdir: -1, cols, flipWhen: 1 });
  return [...left.reverse(), centre, ...right];
}

function bounds(rects) {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const r of rects) {
    minX = Math.min(minX, r.x);
    minY = Math.min(minY, r.y);
    maxX = Math.max(maxX, r.x + r.w);
    maxY = Math.max(maxY, r.y + r.h);
  }
  return { minX, minY, width: maxX - minX, height: maxY - minY };
}

/**
 * The unit (px) and layout for the chain in width × height: the largest unit at which it fits in
 * about one row per seven tiles (so a short chain does not turn corners early), or else the
 * largest unit at which it fits at all. ``opening`` is the index of the opening tile in ``items``.
 */
export function fitChain(items, opening, width, height, { maxUnit = 40, minUnit = 12 } = {}) {
  const wantRows = Math.max(1, Math.ceil(items.length / 7));
  let fallback = null;
  let last = null;
  for (let unit = maxUnit; unit >= minUnit; unit -= 1) {
    const rects = layoutChain(items, width / unit, opening);
    const box = bounds(rects);
    last = { unit, rects, box };
    const fits = box.height * unit <= height && box.width * unit <= width;
    if (!fits) continue;
    fallback ??= last;
    const rows = new Set(rects.map((r) => Math.round((r.y + r.h / 2) / PITCH))).size;
    if (rows <= wantRows) return last;
    if (unit < fallback.unit * 0.72) break;
  }
  return fallback ?? last;
}

const TARGET_MIN = 48; // px: an end target's smallest side where it lies in the next tile's place
const TARGET_ASIDE = [48, 40, 32, 24]; // px: its side beside the end's tile, the largest that finds room
const TARGET_GAP = 3; // px between an end target moved aside and the tile it stands by

/** How much of two boxes ({x, y, w, h}, px) overlap: the area they share (0 for none). */
function overlap(a, b) {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * Where an end's target goes: a box {x, y, w, h} (px in the board), in the place where the end's
 * next tile would lie (``next``, px), at least ``TARGET_MIN`` square, unless it would cover a tile
 * of the chain or the other target there (``others``, px boxes). Then it is a square beside the
 * end's last tile (``last``, px): beyond it the way the chain runs there (``way``, +1 right, -1
 * left), above or below it (centred on its edge that way), or above or below the next tile's
 * place; the first such place inside the board (``board``: {w, h}, px) that covers nothing, at the
 * largest of ``TARGET_ASIDE``'s sides that finds one (24 px on a small phone's board full of tiles;
 * the Left end and Right end buttons under the question are a finger's size anyway). Where none
 * does, the place that covers least. A phone's felt is narrow: the right end's target, centred
 * past a chain that reached its edge, covered its last tile.
 */
export function placeTargetBox(next, last, way, others, board) {
  const inside = (x, y, w, h) => ({ x: Math.max(0, Math.min(x, board.w - w)), y: Math.max(0, Math.min(y, board.h - h)), w, h });
  const mid = (box, size, along) => box[along] + (box[along === "x" ? "w" : "h"] - size) / 2;
  const w = Math.max(next.w, TARGET_MIN);
  const h = Math.max(next.h, TARGET_MIN);
  const places = [inside(mid(next, w, "x"), mid(next, h, "y"), w, h)];
  // above or below the last tile, its centre over the tile's edge the chain runs on to: its arrow
  // still points from the tile to where the next one goes
  const edge = way === 1 ? last.x + last.w : last.x;
  for (const side of TARGET_ASIDE) {
    const beyond = way === 1 ? last.x + last.w + TARGET_GAP : last.x - TARGET_GAP - side;
    places.push(
      inside(beyond, mid(last, side, "y"), side, side),
      inside(edge - side / 2, last.y - TARGET_GAP - side, side, side),
      inside(edge - side / 2, last.y + last.h + TARGET_GAP, side, side),
      inside(mid(next, side, "x"), next.y - TARGET_GAP - side, side, side),
      inside(mid(next, side, "x"), next.y + next.h + TARGET_GAP, side, side),
    );
  }
  let best = null;
  for (const box of places) {
    const covered = others.reduce((sum, other) => sum + overlap(box, other), 0);
    if (covered === 0) return box;
    if (!best || covered < best.covered) best = { box, covered };
  }
  return best.box;
}

/** Draws the chain in ``el`` and the two end targets for choosing where a tile goes. */
export class ChainBoard {
  constructor({ onEnd, labels }) {
    this.onEnd = onEnd;
    this.labels = labels; // () => ({chain, left, right, empty})
    this.el = h("div", { class: "chain-board", role: "group" });
    this.layer = h("div", { class: "chain-layer" });
    this.empty = h("p", { class: "chain-empty" });
    this.targets = {
      L: h("button", { class: "end-target", type: "button", dataset: { end: "L" }, onclick: () => this.onEnd("L") }),
      R: h("button", { class: "end-target", type: "button", dataset: { end: "R" }, onclick: () => this.onEnd("R") }),
    };
    this.el.append(this.layer, this.empty, this.targets.L, this.targets.R);
    // ArrowLeft and ArrowRight move between the two end targets (Tab still goes through both)
    this.el.addEventListener("keydown", (event) => {
      const end = { ArrowLeft: "L", ArrowRight: "R" }[event.key];
      if (!end || !event.target.classList.contains("end-target") || this.targets[end].hidden) return;
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      this.targets[end].focus();
    });
    this.tiles = new Map();
    this.laid = null; // the last layout drawn: {unit, offX, offY, places: tile key → placeKey}
    this.gliding = null; // the layer's animation (`moveLayer`) while it runs
    this.chain = [];
    this.ends = null;
    this.choosing = null;
    this.clearTop = 0; // px at the board's top that a toast or a banner covers (setClear)
    this.clearBottom = 0; // px at the board's bottom that a toast covers (setClear)
    // the board's size is read only here, where the layout is fresh: reading it in draw() after a
    // state's changes would make the browser lay the page out once more for every update
    this.size = { width: 0, height: 0, cap: 44, min: MIN_UNIT };
    this.observer = new ResizeObserver(() => {
      // the largest unit the page allows here (--chain-cap, static/css/app.css: larger on a tablet),
      // and the smallest (--chain-min: a small phone's, where a smaller tile could not be read)
      const style = getComputedStyle(this.el);
      const cap = parseFloat(style.getPropertyValue("--chain-cap"));
      const min = parseFloat(style.getPropertyValue("--chain-min"));
      this.size = {
        width: this.el.clientWidth,
        height: this.el.clientHeight,
        cap: cap > 0 ? Math.floor(cap) : 44,
        min: min > 0 ? Math.ceil(min) : MIN_UNIT,
      };
      this.draw();
    });
    this.observer.observe(this.el);
  }

  destroy() {
    this.observer.disconnect();
    this.gliding?.cancel();
  }

  /**
   * Keep the chain out of the board's top ``top`` px, where the connection banner (or, on a phone
   * on its side, a toast) shows over it, and out of its bottom ``bottom`` px, where a toast shows
   * (CSS pixels, 0 for none): a chain that reaches there is drawn again between them.
   */
  setClear(top, bottom = 0) {
    const clearTop = Math.max(0, Math.ceil(top));
    const clearBottom = Math.max(0, Math.ceil(bottom));
    if (clearTop === this.clearTop && clearBottom === this.clearBottom) return;
    this.clearTop = clearTop;
    this.clearBottom = clearBottom;
    this.draw();
  }

  /** New chain (oriented "a-b" strings, left to right), ends, and the tile being placed (or null). */
  update(chain, ends, choosing, opening = 0) {
    this.chain = chain;
    this.opening = Math.max(0, Math.min(opening, chain.length - 1));
    this.ends = ends;
    this.choosing = choosing;
    this.draw();
  }

  draw() {
    if (!this.el.isConnected) return;
    const { width, height, cap, min } = this.size;
    if (!width || !height) return;
    const text = this.labels();
    setAttr(this.el, "aria-label", this.chain.length ? text.chain : text.empty);
    setText(this.empty, this.chain.length ? "" : text.empty);
    if (!this.chain.length) {
      for (const el of this.tiles.values()) el.remove();
      this.tiles.clear();
      this.laid = null;
      this.targets.L.hidden = true;
      this.targets.R.hidden = true;
      return;
    }
    const items = [{ lempa: false }, ...this.chain.map((t) => ({ lempa: isLempa(t) })), { lempa: false }];
    // never below ``min``: a chain that does not fit at that size scrolls in its board (overflowing)
    const fitIn = (room) => {
      const maxUnit = Math.max(14, min, Math.min(cap, Math.floor(Math.min(width / 10.5, room / 5))));
      const fit = fitChain(items, this.opening + 1, width - 8, room - 8, { maxUnit, minUnit: min });
      return { ...fit, top: Math.max(4, (room - fit.box.height * fit.unit) / 2) };
    };
    // a toast or a banner over the board's top (``clearTop`` px of it) or a toast over its bottom
    // (``clearBottom``): a chain drawn clear of them stays as it is; one that reached under one is
    // drawn again in the rest of the board (at least 60 px of it)
    let fit = fitIn(height);
    const clear = Math.min(this.clearTop, Math.max(0, height - 60));
    const clearBottom = Math.min(this.clearBottom, Math.max(0, height - 60 - clear));
    const bottom = (f) => f.top + f.box.height * f.unit;
    if ((clear > 0 && fit.top < clear) || (clearBottom > 0 && bottom(fit) > height - clearBottom)) {
      fit = fitIn(height - clear - clearBottom);
      fit.top += clear;
    }
    const { unit, rects, box } = fit;
    const offX = (width - box.width * unit) / 2 - box.minX * unit;
    const offY = fit.top - box.minY * unit;
    setStyle(this.el, "--unit", `${unit}px`);
    const overflowing = box.height * unit > height;
    if (this.el.classList.contains("overflowing") !== overflowing) this.el.classList.toggle("overflowing", overflowing);
    setStyle(this.layer, "height", `${Math.max(height, box.height * unit + 8)}px`);
    const seen = new Set();
    const places = new Map();
    // the tiles already drawn, each where it was in the layout (at the same size): the chain only
    // grew, so it moves as one piece (by the change of its offsets, as it is centred again)
    const before = this.laid;
    let grown = !!before && before.unit === unit;
    this.chain.forEach((tile, i) => {
      const key = tileKey(tile);
      seen.add(key);
      places.set(key, placeKey(rects[i + 1]));
      const was = before?.places.get(key);
      if (was !== undefined && was !== places.get(key)) grown = false;
      this.place(key, tile, rects[i + 1], unit, offX, offY, i);
    });
    this.laid = { unit, offX, offY, places };
    if (before) this.moveLayer(grown ? { dx: before.offX - offX, dy: before.offY - offY } : null);
    for (const [key, el] of this.tiles) {
      if (!seen.has(key)) {
        el.remove();
        this.tiles.delete(key);
      }
    }
    this.drawn = true;
    this.placeTargets(rects, unit, offX, offY, Math.max(height, box.height * unit + 8));
  }

  /** The end targets while a tile's end is chosen (hidden otherwise), each clear of the chain's
   * tiles and of the other (placeTargetBox): ``rects`` the layout's, in units, with the places of
   * the tiles next to each end first and last; ``high`` the layer's height, px. */
  placeTargets(rects, unit, offX, offY, high) {
    const on = !!this.choosing;
    for (const target of Object.values(this.targets)) if (target.hidden === on) target.hidden = !on;
    if (!on) return;
    const px = (r) => ({ x: offX + r.x * unit, y: offY + r.y * unit, w: r.w * unit, h: r.h * unit });
    const tiles = rects.slice(1, -1).map(px);
    const board = { w: this.size.width, h: high };
    const left = this.placeTarget("L", rects[0], px(rects[0]), tiles[0], tiles, board);
    this.placeTarget("R", rects[rects.length - 1], px(rects[rects.length - 1]), tiles[tiles.length - 1], [...tiles, left], board);
  }

  place(key, tile, rect, unit, offX, offY, index) {
    let el = this.tiles.get(key);
    const fresh = !el;
    if (fresh) {
      el = h("div", { class: "chain-tile", dataset: { tile: key } });
      this.tiles.set(key, el);
      this.layer.append(el);
    }
    const [a, b] = pips(tile);
    const [first, second] = rect.reversed ? [b, a] : [a, b];
    const look = `${first}-${second}-${rect.vertical ? "v" : "h"}`;
    if (el.dataset.look !== look) {
      el.dataset.look = look;
      el.replaceChildren(tileSvg(first, second, { vertical: rect.vertical }));
    }
    setAttr(el, "data-index", String(index));
    setStyle(el, "width", `${rect.w * unit}px`);
    setStyle(el, "height", `${rect.h * unit}px`);
    // (its place by `translate`, which applies after the `scale` of its landing: with `transform`,
    // the scale acted on the place too, and a tile played flew in from across the board)
    setStyle(el, "translate", `${offX + rect.x * unit}px ${offY + rect.y * unit}px`);
    if (fresh && this.drawn && !reducedMotion()) {
      el.classList.add("fresh");
      setTimeout(() => el.classList.remove("fresh"), 900);
    }
  }

  /**
   * Move the tiles' layer to the layout just drawn: with ``shift`` ({dx, dy}: px from the new places
   * to the old ones, the chain only grew), from where it showed (a glide still running goes on from
   * where it is) to its place, every tile together, so none passes over another; without (a new size
   * or shape), at once, fading in. Nothing moves with reduced motion.
   */
  moveLayer(shift) {
    let [x, y] = [0, 0];
    if (this.gliding) {
      const now = getComputedStyle(this.layer).transform;
      if (shift && now && now !== "none") ({ m41: x, m42: y } = new DOMMatrixReadOnly(now));
      this.gliding.cancel();
      this.gliding = null;
    }
    if (reducedMotion()) return;
    let animation;
    if (!shift) animation = this.layer.animate([{ opacity: 0.35 }, { opacity: 1 }], SETTLE);
    else {
      x += shift.dx;
      y += shift.dy;
      if (Math.abs(x) < 0.5 && Math.abs(y) < 0.5) return;
      animation = this.layer.animate([{ transform: `translate(${x}px, ${y}px)` }, { transform: "none" }], GLIDE);
    }
    this.gliding = animation;
    animation.onfinish = () => {
      if (this.gliding === animation) this.gliding = null;
    };
  }

  /** Draw the target of ``end`` ("L", "R") for the next tile's place (``rect`` in units, ``next``
   * in px) beside the end's ``last`` tile, clear of ``others`` (px boxes), inside ``board``;
   * returns its box (px). */
  placeTarget(end, rect, next, last, others, board) {
    const target = this.targets[end];
    const text = this.labels();
    const value = this.ends ? this.ends[end === "L" ? 0 : 1] : "";
    // the arrow points the way a tile goes from this end: once the chain has turned a corner, the
    // left end may run rightwards (its target then sits right of the end's tile) and the right end
    // leftwards
    const way = rect.dir ?? (end === "L" ? -1 : 1);
    target.dataset.way = way === 1 ? "right" : "left";
    target.replaceChildren(h("span", { class: "end-arrow", "aria-hidden": "true" }, way === 1 ? "▶" : "◀"), h("span", { class: "end-pips" }, String(value)));
    setAttr(target, "aria-label", end === "L" ? text.left : text.right);
    const box = placeTargetBox(next, last, way, others, board);
    setStyle(target, "width", `${box.w}px`);
    setStyle(target, "height", `${box.h}px`);
    setStyle(target, "transform", `translate(${box.x}px, ${box.y}px)`);
    return box;
  }

  /** Move keyboard focus to the left end target (after a tile with two possible ends is chosen),
   * without scrolling the page: the browser scrolled a target near the board's top into view, and
   * the page jumped away from the hand the tile was tapped in. */
  focusEnd(end = "L") {
    this.targets[end].focus({ preventScroll: true });
  }

  /** Screen position of the tile ``key`` (for animations), or null. */
  rectOf(key) {
    const el = this.tiles.get(tileKey(key));
    return el ? el.getBoundingClientRect() : null;
  }
}
