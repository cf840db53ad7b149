// Kozel's score sheet: points recorded and pending (K8), who has opened, who is closest to the goal
// (101, the goat, K9); with pairs (K10) one row per pair. Shown at the table and in the round-end
// panel. Every rule fact comes from the server: the view's goal and sides, the score's opened.

import { h } from "./dom.js";
import { t, tf, tfSpan } from "./i18n.js";
import { kozelGroups, nameEl, namesEl } from "./narrate.js";

/** The rows of the sheet: each side the view names (each seat, or each pair: P1+P3 and P2+P4 on screen). */
export function sheetRows(room, score) {
  return kozelGroups(room, score.points.length).map((members) => {
    const seat = members[0];
    return {
      members,
      points: score.points[seat],
      pending: score.pending[seat],
      opened: score.opened[seat],
      written: score.written ? score.written[seat] : null,
      // a round's outcome names the goat; the table's view carries it in its last outcome (K9)
      goat: (score.goat || score.outcome?.goat || []).includes(seat),
    };
  });
}

/** The row(s) closest to 101: the highest recorded total (pending counts once opened; none if all 0). */
function closest(rows) {
  const top = Math.max(...rows.map((r) => r.points));
  return top > 0 ? new Set(rows.filter((r) => r.points === top)) : new Set();
}

/**
 * The tag of the row(s) closest to 101, ``n`` points to go: "45 to 101" in the table's narrow
 * column; in the round-end panel "closest to 101: 45 points to go", which a phone shows in the
 * short form too (CSS picks one) so the name column stays one line per tag in every language.
 */
function closestTag(n, compact) {
  const long = t("sheet.closest", { n });
  const short = t("sheet.to_go", { n });
  if (compact) return h("span", { class: "tag tag-warn tag-closest", title: long }, short);
  return h("span", { class: "tag tag-warn tag-closest", title: long }, h("span", { class: "closest-long" }, long), h("span", { class: "closest-short" }, short));
}

/**
 * The sheet as a table. ``score``: {points, pending, written?, goat?}; ``mySeat`` marks the viewer's
 * row; ``compact`` (the table's side column) marks an opened row with ✓ by its points instead of a
 * column. Each row carries data-seat (its first member), data-points and data-pending for tests.
 */
export function scoreSheet(room, score, mySeat = null, compact = false) {
  const rows = sheetRows(room, score);
  const near = closest(rows);
  const withWritten = rows.some((r) => r.written !== null);
  const body = rows.map((row) => {
    const who = row.members.length > 1 ? namesEl(room, row.members) : nameEl(room, row.members[0]);
    const marks = [];
    if (row.goat) marks.push(h("span", { class: "tag tag-goat" }, tfSpan("sheet.goat")));
    else if (near.has(row) && row.points < room.goal) marks.push(closestTag(room.goal - row.points, compact));
    const opened = compact
      ? h("span", { class: "opened-check", title: t("sheet.opened"), "aria-label": t("sheet.opened") }, "✓")
      : h("span", { class: "tag tag-win" }, tfSpan("sheet.opened"));
    return h(
      "tr",
      {
        class: `sheet-row${row.members.includes(mySeat) ? " mine" : ""}${row.opened ? " opened" : ""}${near.has(row) ? " closest" : ""}`,
        dataset: { seat: String(row.members[0]), points: String(row.points), pending: String(row.pending) },
      },
      h("th", { scope: "row" }, who, " ", marks),
      withWritten ? h("td", { class: "num written" }, row.written ? `+${row.written}` : "0") : null,
      h("td", { class: "num points" }, row.opened ? String(row.points) : "—", compact && row.opened ? opened : null),
      h("td", { class: "num pending" }, row.opened ? "" : String(row.pending)),
      compact ? null : h("td", { class: "opened-mark" }, row.opened ? opened : t("sheet.not_opened")),
    );
  });
  return h(
    "table",
    { class: `score-sheet${compact ? " compact" : ""}` },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, t(room.options?.pairs ? "sheet.pair" : "sheet.player")),
        withWritten ? h("th", { scope: "col" }, t("sheet.written")) : null,
        h("th", { scope: "col" }, t("sheet.points")),
        h("th", { scope: "col" }, t("sheet.pending")),
        compact ? null : h("th", { scope: "col" }, tf("sheet.opened_col")),
      ),
    ),
    h("tbody", {}, body),
  );
}
