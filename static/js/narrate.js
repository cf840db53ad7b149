// The game told in its own terms: feed lines for events, and one sentence per stone transfer,
// built from the settlement data the server sends (receiver, from_table, from_payers, cancelled).

import { h } from "./dom.js";
import { list, t, tf } from "./i18n.js";
import { miniTile } from "./tiles.js";

/** A seat's display name: the person's name, or "Bot 3", or "Seat 3" while empty. */
export function seatName(room, seat) {
  const info = room?.seats?.[seat];
  if (info?.kind === "human" && info.name) return info.name;
  if (info?.kind === "bot") return t("seat.bot_name", { n: seat + 1 });
  return t("seat.empty_name", { n: seat + 1 });
}

/** A name as an element (always text, never markup). */
export const nameEl = (room, seat) => h("strong", { class: "who", dataset: { seat: String(seat) } }, seatName(room, seat));

const tileEl = (tile) => h("span", { class: "tile-inline" }, miniTile(tile));

/** The stones one settlement gave its receiver, e.g. "+3 stones (2 from the table, 1 from Eko)". */
export function gainText(settlement, room) {
  const received = settlement.from_table + settlement.from_payers.reduce((sum, [, n]) => sum + n, 0);
  if (received === 0) return tf("gain.nothing");
  const sources = [];
  if (settlement.from_table > 0) sources.push(t("source.table", { n: settlement.from_table }));
  for (const [payer, n] of settlement.from_payers) {
    if (n > 0) sources.push(tf("source.seat", { n, name: seatName(room, payer) }));
  }
  return tf("gain.with_sources", { stones: t("stones.count", { n: received }), sources: fragmentNode(list(sources)) });
}

function fragmentNode(fragment) {
  const span = h("span", { class: "sources" });
  span.append(fragment);
  return span;
}

/**
 * One sentence explaining a settlement. ``outcome`` (for round-end settlements) names the
 * first cappu or the manguno and the mattikkeng.
 */
export function settlementSentence(settlement, room, outcome = null) {
  const p = {
    receiver: nameEl(room, settlement.receiver),
    gain: fragmentNode(gainText(settlement, room)),
  };
  if (outcome) {
    p.winner = nameEl(room, outcome.winner);
    if (outcome.manguno !== null && outcome.manguno !== undefined) p.manguno = nameEl(room, outcome.manguno);
    if (outcome.first_cappu !== null && outcome.first_cappu !== undefined) p.cappu = nameEl(room, outcome.first_cappu);
    p.mattikkeng = fragmentNode(list((outcome.mattikkeng || []).map((s) => nameEl(room, s))));
  }
  const line = h("span", { class: "sentence" }, tf(`settle.${settlement.reason}`, p));
  if (settlement.cancelled > 0) line.append(" ", tf("settle.cancelled", { n: settlement.cancelled }));
  return line;
}

/** How the round ended, in one heading-like line. */
export function outcomeTitle(outcome, room) {
  const key = { out: "outcome.out", ceki: "outcome.ceki", pollo: "outcome.pollo", block: "outcome.block" }[outcome.end];
  return tf(key || "outcome.out", {
    winner: nameEl(room, outcome.winner),
    manguno: outcome.manguno === null ? "" : nameEl(room, outcome.manguno),
  });
}

/** Sentences explaining a block: the manguno, the mattikkeng and who wins. */
export function blockDetails(outcome, room) {
  const lines = [];
  if (outcome.end !== "block") return lines;
  const m = outcome.manguno;
  lines.push(tf("outcome.manguno_detail", { manguno: nameEl(room, m), n: outcome.pip_sums[m] }));
  if (outcome.mattikkeng.length) {
    lines.push(
      tf("outcome.mattikkeng_detail", {
        mattikkeng: fragmentNode(list(outcome.mattikkeng.map((s) => nameEl(room, s)))),
        winner: nameEl(room, outcome.winner),
      }),
    );
  } else lines.push(tf("outcome.no_mattikkeng", { manguno: nameEl(room, m) }));
  return lines;
}

/** A feed line for one event of the round (view.log / events). */
export function eventLine(event, room) {
  const li = h("li", { class: `feed-line feed-${event.type}` });
  if (event.type === "placed") {
    const p = { name: nameEl(room, event.seat), tile: tileEl(event.tile) };
    const key = event.end === null ? "feed.opened" : event.end === "L" ? "feed.placed_left" : "feed.placed_right";
    li.append(tf(key, p));
    if (event.mappakuling) {
      li.classList.add("feed-highlight");
      li.append(" ", h("span", { class: "tag" }, tf("feed.mappakuling", { n: event.ends[0] })));
    }
  } else if (event.type === "passed") {
    if (event.settlement) li.append(settlementSentence(event.settlement, room));
    else li.append(tf("feed.passed", { name: nameEl(room, event.seat) }));
    if (event.passebunge) li.classList.add("feed-passebunge");
  } else if (event.type === "drew") {
    li.append(tf("feed.drew", { name: nameEl(room, event.seat) }));
  } else if (event.type === "round_ended") {
    const o = event.outcome;
    li.classList.add("feed-end");
    li.append(h("span", { class: "feed-title" }, outcomeTitle(o, room)));
    if (o.settlement) li.append(h("span", { class: "feed-detail" }, settlementSentence(o.settlement, room, o)));
    if (o.camat_elected) li.append(h("span", { class: "feed-detail" }, tf("outcome.camat_short", { name: nameEl(room, o.camat) })));
  }
  return li;
}

/** Every settlement of a finished round, in order: passes first, then the round's own. */
export function roundSettlements(log, outcome) {
  const out = [];
  for (const event of log) {
    if (event.type === "passed" && event.settlement) out.push({ settlement: event.settlement, outcome: null });
  }
  if (outcome?.settlement) out.push({ settlement: outcome.settlement, outcome });
  return out;
}
