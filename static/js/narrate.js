// The game told in its own terms: feed lines for events, and one sentence per stone transfer,
// built from the settlement data the server sends (receiver, from_table, from_payers, cancelled).

import { h } from "./dom.js";
import { list, t, tf, tfSpan } from "./i18n.js";
import { isLempa, miniTile } from "./tiles.js";

/** A seat's display name: the person's name, or "Bot 3", or "Seat 3" while empty. */
export function seatName(room, seat) {
  const info = room?.seats?.[seat];
  if (info?.kind === "human" && info.name) return info.name;
  if (info?.kind === "bot") return t("seat.bot_name", { n: seat + 1 });
  return t("seat.empty_name", { n: seat + 1 });
}

/** A name as an element (always text, never markup): isolated for direction (a right-to-left
 * name never reorders the sentence around it), whole in its title (hover; long-press on touch). */
export function nameEl(room, seat) {
  const name = seatName(room, seat);
  return h("bdi", { class: "who", title: name, dataset: { seat: String(seat) } }, name);
}

const tileEl = (tile) => h("span", { class: "tile-inline" }, miniTile(tile));

/**
 * What a settlement did to its receiver, as the predicate of a sentence whose subject is the
 * receiver: "takes 3 stones (penalty, 2 from the table, 1 from Eko)"; "takes 1 stone (penalty,
 * from the table)" when one source gave all; a shortfall the table and the payers could not cover
 * is said plainly as cancelled (D5).
 */
export function penaltyText(settlement, room) {
  const received = settlement.received; // the server sums what the receiver got (D5)
  if (received === 0) return tf("penalty.none", { n: settlement.owed ?? settlement.cancelled });
  const payers = settlement.from_payers.filter(([, n]) => n > 0);
  const parts = settlement.from_table > 0 ? 1 + payers.length : payers.length;
  const sources = [];
  if (settlement.from_table > 0) sources.push(parts === 1 ? t("source.table_all") : t("source.table", { n: settlement.from_table }));
  for (const [payer, n] of payers) sources.push(parts === 1 ? tf("source.seat_all", { name: seatName(room, payer) }) : tf("source.seat", { n, name: seatName(room, payer) }));
  const p = { stones: t("stones.count", { n: received }), sources: fragmentNode(list(sources)) };
  if (settlement.cancelled > 0) return tf("penalty.short", { ...p, n: settlement.cancelled });
  return tf("penalty.takes", p);
}

function fragmentNode(fragment) {
  const span = h("span", { class: "sources" });
  span.append(fragment);
  return span;
}

/**
 * The round's own settlements said after `outcomeTitle`, which has already named who went out
 * (first cappu, ceki, pollo) or the manguno: only what follows from it ("Budi, the cucuq, takes…").
 */
const AFTER_TITLE = { out: "settle.cucuq", ceki: "settle.cucuq", pollo: "settle.cucuq", manguno: "settle.no_mattikkeng" };

/**
 * One sentence explaining a settlement. ``outcome`` (for round-end settlements) names the
 * first cappu or the manguno and the mattikkeng. With ``afterTitle`` the sentence follows the
 * round's `outcomeTitle` (the feed's line) and does not say again what the title said.
 */
export function settlementSentence(settlement, room, outcome = null, { afterTitle = false } = {}) {
  const p = {
    receiver: nameEl(room, settlement.receiver),
    penalty: fragmentNode(penaltyText(settlement, room)),
  };
  if (outcome) {
    p.winner = nameEl(room, outcome.winner);
    if (outcome.manguno !== null && outcome.manguno !== undefined) p.manguno = nameEl(room, outcome.manguno);
    if (outcome.first_cappu !== null && outcome.first_cappu !== undefined) p.cappu = nameEl(room, outcome.first_cappu);
    p.mattikkeng = fragmentNode(list((outcome.mattikkeng || []).map((s) => nameEl(room, s))));
  }
  const key = (afterTitle && AFTER_TITLE[settlement.reason]) || `settle.${settlement.reason}`;
  return h("span", { class: "sentence" }, tf(key, p));
}

/** How the round ended, in one heading-like line. */
export function outcomeTitle(outcome, room) {
  if (room?.variant === "kozel") {
    if (outcome.end === "out") return tf("kozel.outcome.out", { winner: nameEl(room, outcome.winner) });
    if (outcome.winner === null) return tf("kozel.outcome.fish_tied");
    // pairs compare the pair's hands together (K10): the title names the pair, not its leader
    const pair = room?.sides?.find((side) => side.length > 1 && side.includes(outcome.winner));
    if (pair) return tf("kozel.outcome.fish_pair", { names: groupEl(room, pair) });
    return tf("kozel.outcome.fish", { winner: nameEl(room, outcome.winner) });
  }
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

/** The seats named in a list: "Anna and Boris". */
export const namesEl = (room, seats) => fragmentNode(list(seats.map((seat) => nameEl(room, seat))));

/**
 * The feed's lines for a round's log: one line per event, except that Kozel's consecutive draws
 * by one seat make one line that counts them (others see only how many; the drawer sees its
 * tiles) and a two-lempas move (two placements in a row by one seat) makes one line.
 */
export function feedLines(log, room, mySeat) {
  return feedLinesFrom(log, room, mySeat, 0).map((line) => line.el);
}

/**
 * `feedLines` from the event at index ``from`` (where a line starts) on, each as ``{first, el}``:
 * ``first`` is the index of the line's first event. A table's feed keeps the lines it made and
 * makes only the last one again (a run of draws or a two-lempas move may still grow) and the new.
 */
export function feedLinesFrom(log, room, mySeat, from) {
  const lines = [];
  const byBot = byBotSet(room);
  const hinted = hintedAt(room);
  for (let i = from; i < log.length; i += 1) {
    const event = log[i];
    const first = i;
    let line;
    if (event.type === "drew") {
      const run = [event];
      while (log[i + 1]?.type === "drew" && log[i + 1].seat === event.seat) run.push(log[(i += 1)]);
      line = drawLine(run, room, mySeat);
    } else if (event.type === "placed" && event.end !== null && log[i + 1]?.type === "placed" && log[i + 1].seat === event.seat) {
      line = lempasLine(event, log[(i += 1)], room);
    } else line = eventLine(event, room, loneLempaBefore(log, i));
    let marked = false;
    const hints = []; // the seats whose hint was used for a move of this line
    for (let k = first; k <= i; k += 1) {
      marked ||= byBot.has(k);
      if (hinted.has(k)) hints.push(hinted.get(k));
    }
    if (marked) markByBot(line, room, event.seat);
    for (const seat of hints) markHint(line, room, seat);
    lines.push({ first, el: line });
  }
  return lines;
}

/** The log indexes of the round's moves a bot made for a person (``room.round.by_bot``). */
export const byBotSet = (room) => new Set(room?.round?.by_bot || []);

/** The round's hints by where their move begins in its log (``room.round.hints``: ``at`` → seat). */
export const hintedAt = (room) => new Map((room?.round?.hints || []).map((hint) => [hint.at, hint.seat]));

/** Marks a feed line as a move made after its player used a hint (the table sees who, not what). */
function markHint(line, room, seat) {
  line.classList.add("feed-hinted");
  line.append(" ", h("span", { class: "tag tag-hint" }, tfSpan("hint.used", { name: nameEl(room, seat) })));
}

/** Marks a feed line as a move a bot made for the person at ``seat``. */
function markByBot(line, room, seat) {
  line.classList.add("feed-by-bot");
  line.dataset.byBot = "1";
  line.append(" ", h("span", { class: "tag tag-by-bot" }, tfSpan("feed.by_bot", { name: nameEl(room, seat) })));
}

/** The event types of a seat's own move in a round's log (not the round's end). */
const MOVE_TYPES = new Set(["placed", "passed", "drew"]);

/**
 * Whether a bot made every move of ``seat`` in a finished round (its ``log`` and ``room``: the
 * round's ``by_bot``), and the seat made at least one: what the server's review of that round
 * answers (``all_by_bot``: nothing of the person's own to review). A forced pass is the server's,
 * not a bot's (never in ``by_bot``): a round with one is not all by bot, as the review counts it.
 */
export function allByBot(log, room, seat) {
  const byBot = byBotSet(room);
  let moves = 0;
  for (const [i, event] of (log || []).entries()) {
    if (event?.seat !== seat || !MOVE_TYPES.has(event.type)) continue;
    if (!byBot.has(i)) return false;
    moves += 1;
  }
  return moves > 0;
}

/** How many moves a bot made for each seat in a finished round (its log and room). */
export function byBotCounts(log, room) {
  const counts = Array.from({ length: room?.seats?.length || 0 }, () => 0);
  for (const i of byBotSet(room)) {
    const event = log[i];
    if (event && event.seat !== undefined && event.seat < counts.length) counts[event.seat] += 1;
  }
  return counts;
}

function drawLine(run, room, mySeat) {
  const li = h("li", { class: "feed-line feed-drew", dataset: { seat: String(run[0].seat), draws: String(run.length) } });
  const tiles = run.map((e) => e.tile).filter(Boolean);
  if (run[0].seat === mySeat && tiles.length) {
    li.append(tf("feed.you_drew", { n: run.length, tiles: fragmentNode(list(tiles.map(tileEl))) }));
  } else li.append(tf("feed.drew_n", { name: nameEl(room, run[0].seat), n: run.length }));
  // a run still growing is made again with each draw: what to say of its draws after the first
  // ``said`` (the line said before told those), for a screen reader (table.js `sayMoves`)
  li.saidAfter = (said) => drawLine(run.slice(said), room, mySeat);
  return li;
}

function lempasLine(first, second, room) {
  const li = h("li", { class: "feed-line feed-placed feed-highlight feed-lempas" });
  const [left, right] = first.end === "L" ? [first, second] : [second, first];
  li.append(tf("feed.two_lempas", { name: nameEl(room, first.seat), left: tileEl(left.tile), right: tileEl(right.tile) }));
  return li;
}

/**
 * The lempa ("6-6") that was the whole chain when the event at ``i`` of ``log`` was played, or
 * null: the chain was empty or longer, or its one tile not a lempa. Both ends of a lone lempa are
 * that one tile, so a tile played against it goes "next to" it, not "on the left".
 */
function loneLempaBefore(log, i) {
  for (let k = i - 1; k >= 0; k -= 1) {
    const event = log[k];
    if (event.type !== "placed") continue;
    return event.end === null && isLempa(event.tile) ? event.tile : null; // the round's opening
  }
  return null;
}

/** A feed line for one event of the round (view.log / events); ``lempa``: the chain's only tile
 * when that is a lempa (`loneLempaBefore`). */
export function eventLine(event, room, lempa = null) {
  const li = h("li", { class: `feed-line feed-${event.type}` });
  if (event.type === "placed") {
    const p = { name: nameEl(room, event.seat), tile: tileEl(event.tile) };
    let key = event.end === null ? "feed.opened" : event.end === "L" ? "feed.placed_left" : "feed.placed_right";
    if (event.end !== null && lempa) {
      key = "feed.placed_beside";
      p.lempa = tileEl(lempa);
    }
    li.append(tf(key, p));
    if (event.mappakuling && room?.variant !== "kozel") {
      li.classList.add("feed-highlight");
      li.append(" ", h("span", { class: "tag" }, tfSpan("feed.mappakuling", { n: event.ends[0] })));
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
    if (o.settlement) li.append(h("span", { class: "feed-detail" }, settlementSentence(o.settlement, room, o, { afterTitle: true })));
    if (o.written) li.append(h("span", { class: "feed-detail" }, writtenSentence(o, room)));
    if (o.goat?.length) li.append(h("span", { class: "feed-detail feed-goat" }, goatSentence(o, room)));
    if (o.camat_elected) li.append(h("span", { class: "feed-detail" }, tf("outcome.camat_short", { name: nameEl(room, o.camat) })));
  }
  return li;
}

/**
 * Kozel's goat (K9, K10): "Katya reached 160 points (101 or more) and is the goat…", with the goat's
 * recorded points (one amount: an exact tie's goats share it) and the view's ``goal``; a view
 * without it (views carry it) is said without the goal, never with an empty "( or more)" (the
 * client holds no rule fact: tests/test_rule_facts_placement.py); with pairs each goat pair is
 * named as a pair ("Ana + Boris").
 */
export function goatSentence(outcome, room) {
  const sides = kozelGroups(room, outcome.points.length).filter((members) => outcome.goat.includes(members[0]));
  const names = fragmentNode(list(sides.map((members) => groupEl(room, members))));
  const said = { names, n: outcome.goat.length, points: outcome.points[outcome.goat[0]] };
  if (!Number.isFinite(room?.goal)) return tf("kozel.goat_no_goal", said);
  return tf("kozel.goat", { ...said, goal: room.goal });
}

/** Kozel's seats as the score counts them (the view's ``sides``: each seat, or with pairs the two pairs, K10). */
export const kozelGroups = (room, seats) => room?.sides ?? [...Array(seats).keys()].map((seat) => [seat]);

/** A seat's name, or a pair's two names as one label: "Boris + Vera". */
export function groupEl(room, members) {
  if (members.length === 1) return nameEl(room, members[0]);
  return h("span", { class: "pair-names" }, tf("kozel.pair", { a: nameEl(room, members[0]), b: nameEl(room, members[1]) }));
}

/**
 * Kozel: what this round wrote, per player or per pair (a pair's points are one amount, K10):
 * "Written: Boris +12." for those who have opened (K8; a pair: "Boris + Vera: +12."), and "Not opened yet,
 * so only pending: Vera +5 (now 9 of 13)." for amounts that only went to pending; "Nobody writes…" when nobody wrote.
 */
export function writtenSentence(outcome, room) {
  const recorded = [];
  const pending = [];
  for (const members of kozelGroups(room, outcome.written.length)) {
    const seat = members[0];
    const n = outcome.written[seat];
    if (!(n > 0)) continue;
    const who = groupEl(room, members);
    const pair = members.length > 1 ? "pair_" : "";
    if (outcome.opened[seat]) recorded.push(tf(pair ? "kozel.pair_item" : "kozel.written_item", { name: who, n }));
    else pending.push(tf(`kozel.${pair}pending_item`, { name: who, n, total: outcome.pending[seat] }));
  }
  if (!recorded.length && !pending.length) return tf("kozel.written_none");
  const line = h("span", { class: "written-sentence" });
  if (recorded.length) line.append(h("span", { class: "written-recorded" }, tf("kozel.written", { items: fragmentNode(list(recorded)) })));
  if (recorded.length && pending.length) line.append(" ");
  if (pending.length) line.append(h("span", { class: "written-pending" }, tf("kozel.written_pending", { items: fragmentNode(list(pending)) })));
  return line;
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
