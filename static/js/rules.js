// The rules page (/rules): Domeng explained with small tile diagrams and every term; then Kozel
// (RULES.md K1-K10) with its own words: bazaar, fish, goat, two lempas, opened.

import { BOT_LEVELS } from "./bots.js";
import { h, s } from "./dom.js";
import { t, tf, termEl } from "./i18n.js";
import { brandMark } from "./table.js";
import { isLempa, pips, tileSvg } from "./tiles.js";
import { pageHeader } from "./ui.js";

const KOZEL_TERMS = ["bazaar", "fish", "goat", "two_lempas", "opened"];
const TERMS = ["lempa", "passebunge", "last mappano", "first cappu", "mappakuling", "ceki", "pollo", "manguno", "mattikkeng", "cucuq", "camat"];

/** A row of tiles as they lie in a chain (lempas crosswise); ``mark`` highlights one index. */
export function chainFigure(tiles, captionKey, { mark = -1 } = {}) {
  const row = h("div", { class: "fig-chain", "aria-hidden": "true" });
  tiles.forEach((tile, i) => {
    const [a, b] = pips(tile);
    const lempa = isLempa(tile);
    row.append(h("span", { class: `fig-tile${lempa ? " lempa" : ""}${i === mark ? " marked" : ""}` }, tileSvg(a, b, { vertical: lempa })));
  });
  return h("figure", { class: "fig" }, row, h("figcaption", {}, tf(captionKey)));
}

/** Five seats around the table, numbered from 1 as at the table (RULES.md's P0 is seat 1), play
 * going round; the first cappu and the cucuq before them. */
function seatsFigure() {
  const svg = s("svg", { class: "fig-seats", viewBox: "0 0 220 170", "aria-hidden": "true" });
  svg.append(
    s("defs", {}, s("marker", { id: "fig-arrowhead", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, s("path", { class: "fig-arrowhead", d: "M0 0L10 5L0 10z" }))),
    s("ellipse", { class: "fig-felt", cx: 110, cy: 85, rx: 70, ry: 48 }),
  );
  const centres = [0, 1, 2, 3, 4].map((i) => {
    const angle = Math.PI / 2 + (i * 2 * Math.PI) / 5;
    return [110 + 92 * Math.cos(angle), 85 + 66 * Math.sin(angle)];
  });
  centres.forEach(([x, y], i) => {
    const cls = i === 3 ? "fig-seat cappu" : i === 2 ? "fig-seat cucuq" : "fig-seat";
    svg.append(s("circle", { class: cls, cx: x, cy: y, r: 15 }), s("text", { class: "fig-seat-label", x, y: y + 5, "text-anchor": "middle" }, String(i + 1)));
  });
  for (let i = 0; i < 5; i += 1) {
    const [x1, y1] = centres[i];
    const [x2, y2] = centres[(i + 1) % 5];
    const mx = (x1 + x2) / 2 + (110 - (x1 + x2) / 2) * 0.25;
    const my = (y1 + y2) / 2 + (85 - (y1 + y2) / 2) * 0.25;
    svg.append(s("path", { class: "fig-arrow", "marker-end": "url(#fig-arrowhead)", d: `M${x1 + (mx - x1) * 0.35} ${y1 + (my - y1) * 0.35} Q${mx} ${my} ${x2 + (mx - x2) * 0.35} ${y2 + (my - y2) * 0.35}` }));
  }
  return h("figure", { class: "fig" }, svg, h("figcaption", {}, tf("rules.fig.cucuq")));
}

function section(id, ...content) {
  return h("section", { class: "rules-section", id }, h("h2", {}, t(`rules.${id}.h`)), ...content);
}

const p = (key, params) => h("p", {}, tf(key, params));

function settlementTable() {
  const rows = ["pass", "passebunge", "out", "ceki", "pollo", "manguno", "mattikkeng", "shared"];
  return h(
    "table",
    { class: "rules-table" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("rules.col.event")), h("th", { scope: "col" }, t("rules.col.receiver")), h("th", { scope: "col" }, t("rules.col.stones")))),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h("tr", {}, h("td", {}, tf(`rules.row.${row}.event`)), h("td", {}, tf(`rules.row.${row}.receiver`)), h("td", { class: "num" }, tf(`rules.row.${row}.stones`))),
      ),
    ),
  );
}

function glossary() {
  const figures = {
    lempa: () => chainFigure(["6-6"], "rules.fig.lempa_short"),
    mappakuling: () => chainFigure(["3-5", "5-1", "1-3"], "rules.fig.mappakuling", { mark: 2 }),
    pollo: () => chainFigure(["4-4", "4-1", "1-4"], "rules.fig.pollo", { mark: 0 }),
  };
  const items = TERMS.map((term) => {
    const id = term.replace(" ", "_");
    return h(
      "div",
      { class: "gloss-item", id: `term-${id}` },
      h("dt", {}, termEl(term)),
      h("dd", {}, t(`term.${id}`), figures[id] ? figures[id]() : null),
    );
  });
  items.push(h("div", { class: "gloss-item" }, h("dt", {}, t("rules.gloss.stones")), h("dd", {}, t("rules.gloss.stones_def"))));
  return h("dl", { class: "glossary" }, items);
}

function kozelGlossary() {
  const items = KOZEL_TERMS.map((id) => h("div", { class: "gloss-item", id: `term-${id}` }, h("dt", {}, tf(`kozel.word.${id}`)), h("dd", {}, t(`term.${id}`))));
  return h("dl", { class: "glossary" }, items);
}

export function rulesPage(root) {
  const toc = ["aim", "deal", "turn", "stones", "out", "block", "camat", "summary", "fair", "glossary", "kozel", "bots", "docs"];
  root.replaceChildren(
    h(
      "div",
      { class: "page rules-page" },
      pageHeader(brandMark()),
      h(
        "main",
        { class: "card rules" },
        h("h1", {}, t("rules.title")),
        p("rules.intro"),
        h("nav", { class: "toc", "aria-label": t("rules.toc") }, h("ol", {}, toc.map((id) => h("li", {}, h("a", { href: `#${id}` }, t(`rules.${id}.h`)))))),
        section("aim", p("rules.aim.p")),
        section("deal", p("rules.deal.p1"), p("rules.deal.p2")),
        section("turn", p("rules.turn.p1"), chainFigure(["2-6", "6-6", "6-3"], "rules.fig.lempa"), p("rules.turn.p2")),
        section("stones", p("rules.stones.p1"), p("rules.stones.p2"), p("rules.stones.p3")),
        section("out", p("rules.out.p1"), seatsFigure(), p("rules.out.p2"), chainFigure(["3-5", "5-1", "1-3"], "rules.fig.ceki", { mark: 2 }), chainFigure(["4-4", "4-1", "1-4"], "rules.fig.pollo", { mark: 0 })),
        section("block", p("rules.block.p1"), p("rules.block.p2"), p("rules.block.p3")),
        section("camat", p("rules.camat.p1"), p("rules.camat.p2")),
        section("summary", settlementTable()),
        section("fair", p("rules.fair.p")),
        section("glossary", glossary()),
        section(
          "kozel",
          p("rules.kozel.p1"),
          p("rules.kozel.p2"),
          p("rules.kozel.leader"),
          p("rules.kozel.turn"),
          p("rules.kozel.lempas"),
          chainFigure(["5-5", "5-2", "2-3", "3-3"], "rules.fig.two_lempas"),
          p("rules.kozel.end"),
          p("rules.kozel.scoring"),
          p("rules.kozel.opening"),
          p("rules.kozel.goat"),
          p("rules.kozel.pairs"),
          p("rules.kozel.client"),
          h("h3", {}, t("rules.kozel.words")),
          kozelGlossary(),
        ),
        section("bots", p("rules.bots.p"), h("ul", { class: "bot-levels" }, BOT_LEVELS.map((level) => h("li", { dataset: { level } }, t(`rules.bots.${level}`)))), p("rules.bots.cover")),
        // the repository's own documents (docs/rules.md, docs/record.md), served by app/web/routes.py
        section(
          "docs",
          p("rules.docs.p"),
          h("ul", { class: "rule-docs" }, h("li", {}, h("a", { href: "/rules/rules", id: "doc-rules" }, t("rules.docs.rules"))), h("li", {}, h("a", { href: "/rules/record", id: "doc-record" }, t("rules.docs.record")))),
        ),
      ),
    ),
  );
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}
