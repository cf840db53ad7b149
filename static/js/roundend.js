// The round-end panel: how the round ended, every hand and the unused tiles revealed, one
// sentence per stone transfer, the stones after the round, the fair-deal check and, at the end of
// the match, the final standings. Kozel: each hand's value and what it wrote, what was left in the
// bazaar, the score sheet after the round and, at the end, the goat.

import { api, verifyUrl } from "./api.js";
import { h, replace } from "./dom.js";
import { t, tf, tfSpan } from "./i18n.js";
import { allByBot, blockDetails, byBotCounts, goatSentence, groupEl, nameEl, namesEl, outcomeTitle, roundSettlements, seatName, settlementSentence, writtenSentence } from "./narrate.js";
import { reviewSection } from "./review.js";
import { scoreSheet } from "./scoresheet.js";
import { sha256Hex } from "./sha256.js";
import { miniTile, stoneSvg } from "./tiles.js";

/**
 * ``snap``: {view, room, seed, commitment, round, seat} captured when the round ended (``room.match``:
 * the match's number in the room, whose round a review asks for).
 * ``opts``: {onClose, mySeat, nextStarted, onAgain, watching, code, token} (``onAgain``: Play again at
 * the match's end, or null; ``watching``: a spectator's, whose final panel says how they come to play); with a seat and its token the panel offers "Review my round" (static/js/review.js).
 */
export function roundEndPanel(snap, opts) {
  const { view, room } = snap;
  const o = view.outcome;
  const dialog = h("dialog", { class: "round-end", "aria-labelledby": "round-end-title" });
  // the focus starts on the foot's main button: Play again on a final panel that offers it (never
  // behind the body's glossary terms, each a Tab stop), else Close
  const again = view.match_over && opts.onAgain;
  const close = h("button", { class: "btn btn-gold", type: "button", autofocus: !again, onclick: () => opts.onClose() }, t("panel.close"));
  const header = h(
    "header",
    { class: "panel-head" },
    // a match the host ended (no limit: docs/rules.md, "Match end") says so at its top, which a
    // phone shows (its foot has no room for the note that says it too)
    h("p", { class: "panel-kicker" }, t(view.match_over ? (room.host_stop ? "panel.host_ended" : "panel.match_over") : "panel.round_over", { n: view.round })),
    h("h2", { id: "round-end-title" }, outcomeTitle(o, room)),
  );
  const body = h("div", { class: "panel-body" });
  if (room.variant === "kozel") kozelBody(body, view, room, opts.mySeat, snap);
  else domengBody(body, view, room, opts.mySeat, snap);
  const hintsUsed = room.round?.hints || [];
  if (hintsUsed.length) body.append(hintsLine(room, hintsUsed));
  if (opts.mySeat !== null && opts.mySeat !== undefined && opts.token && opts.code) {
    // after how the round ended; the round's index in the record counts from 0
    // a round a bot played all of for this seat has nothing of the player's own to review: said
    // at once, never offered for the server to answer so
    const botOnly = allByBot(view.log, room, opts.mySeat);
    body.insertBefore(reviewSection(opts.code, view.round - 1, opts.token, room.match ?? 1, { allByBot: botOnly }), body.children[1] || null);
  }
  const foot = h("footer", { class: `panel-foot${view.match_over ? " match-over" : ""}` });
  // a spectator's final panel says how they come to play: a seat in the next match (Play again),
  // as their table does, and a phone shows it where it drops a player's thanks line; after the
  // host's stop too (its kicker says the host ended the match, and a spectator was not playing)
  const overNote = opts.watching ? "table.watch_next" : room.host_stop ? "panel.host_stopped" : "panel.match_over_note";
  const watchNext = view.match_over && overNote === "table.watch_next";
  const note = h("p", { class: `panel-note${watchNext ? " watch-next" : ""}`, role: "status" });
  note.textContent = view.match_over ? t(overNote) : opts.nextStarted ? t("panel.next_started") : t("panel.next_soon");
  foot.append(note);
  if (view.match_over) foot.append(h("a", { class: "btn", href: "/" }, t("panel.new_table")));
  if (again) foot.append(h("button", { class: "btn btn-again play-again", type: "button", autofocus: true, onclick: () => opts.onAgain() }, t("panel.play_again")));
  foot.append(close);
  dialog.append(header, body, foot);
  // a key held down (its repeats) presses nothing here: Enter on the last tile or on Round results,
  // held a little long, would else press the Play again the panel opened on (a keyboard trial)
  dialog.addEventListener(
    "keydown",
    (e) => {
      if (e.repeat && (e.key === "Enter" || e.key === " ")) e.preventDefault();
    },
    true,
  );
  dialog.addEventListener("cancel", (e) => {
    e.preventDefault();
    opts.onClose();
  });
  watchReading(dialog);
  dialog.setNext = (started, myTurn) => {
    if (view.match_over) return;
    note.textContent = started ? (myTurn ? t("panel.next_your_turn") : t("panel.next_started")) : t("panel.next_soon");
    note.classList.toggle("attention", !!myTurn);
  };
  // a match's final panel kept open while someone else already pressed Play again; ``started``:
  // that match is dealt and played, which this panel's Play again can no longer join;
  // ``onSeat``: a spectator's way to that match's waiting room, where a seat is free for them
  dialog.setNextMatch = (n, started = false, onSeat = null) => {
    note.textContent = t(started ? "panel.next_match_started" : "panel.next_match", { n });
    note.classList.add("attention");
    if (started) foot.querySelector(".play-again")?.remove();
    foot.querySelector(".take-seat")?.remove();
    if (!started && onSeat) foot.insertBefore(h("button", { class: "btn btn-gold take-seat", type: "button", onclick: () => onSeat() }, t("panel.take_seat")), close);
  };
  return dialog;
}

/** How long after the last scroll, wheel, click or key inside the panel it still counts as being read. */
export const READING_MS = 6000;

/** How long a panel stays, at least, once open on a device without hover (a phone: no mouse
 * resting over it tells that someone reads), however little its reader does with it: its text at
 * ``READ_CHARS_PER_S``, between ``READ_MIN_MS`` and ``READ_MAX_MS``. People read running text at
 * about 240 words a minute (Brysbaert 2019), some 22 characters a second, and skim a list of
 * alike lines ("Bot 2 passes and takes 1 stone") faster: 25. Round panels measured 1,045 to 1,452
 * characters (Domeng and Kozel, four rounds each): 42 to 45 s; a short one at least 15 s. */
export const READ_CHARS_PER_S = 25;
export const READ_MIN_MS = 15000;
export const READ_MAX_MS = 45000;

/** The least time ``dialog`` stays open (milliseconds), from the length of its text. */
export function readingTime(dialog) {
  const chars = (dialog.textContent || "").replace(/\s+/g, " ").length;
  return Math.min(READ_MAX_MS, Math.max(READ_MIN_MS, (chars / READ_CHARS_PER_S) * 1000));
}

/**
 * ``dialog.inUse()``: whether the player is (or may still be) reading the panel: on a device without
 * hover, for ``readingTime`` after it opened; then (and with a mouse, from the start) while a mouse
 * rests over it, or a scroll, wheel, click or key inside it came in the last ``READING_MS``. A
 * touch on it (a finger, a pen: no hover says when they are done) makes it the reader's: it stays
 * until they close it. The room keeps the
 * panel open past the next deal while it is in use, saying that the round has started or that it
 * is the reader's turn, and folds it away at once when a turn timer of theirs starts
 * (static/js/room.js ``clearTheHand``).
 */
function watchReading(dialog) {
  let last = -Infinity;
  let hovering = false;
  let held = false; // touched: the reader closes it
  let until = -Infinity; // set once the panel is open (its text is laid out)
  const touch = () => {
    last = performance.now();
  };
  const over = (e) => {
    const r = dialog.getBoundingClientRect(); // a modal's backdrop reports as the dialog: look where
    return e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
  };
  dialog.addEventListener("pointermove", (e) => {
    hovering = e.pointerType === "mouse" && over(e);
    if (over(e) && e.pointerType !== "mouse") touch();
  });
  dialog.addEventListener("pointerleave", () => {
    hovering = false;
  });
  for (const type of ["scroll", "wheel", "pointerdown", "keydown"]) {
    dialog.addEventListener(type, (e) => (type !== "pointerdown" || over(e)) && touch(), { capture: true, passive: true });
  }
  // a finger or a pen on the panel (a swipe to scroll it too), not on its backdrop
  const hold = (e) => {
    if (e.pointerType !== "mouse" && over(e)) held = true;
  };
  dialog.addEventListener("pointerdown", hold, { capture: true, passive: true });
  const showModal = dialog.showModal.bind(dialog);
  dialog.showModal = () => {
    showModal();
    const hover = window.matchMedia("(any-hover: hover)").matches; // a mouse says it by resting there
    until = hover ? -Infinity : performance.now() + readingTime(dialog);
  };
  dialog.inUse = () => held || hovering || performance.now() < until || performance.now() - last < READING_MS;
  dialog.readUntil = () => until; // for the tests: when its reading time ends, on performance.now()'s clock
}

/** "Hints used this round: Ana (2), Budi (1)": every hint is told (issue 16). */
function hintsLine(room, used) {
  const counts = new Map();
  for (const { seat } of used) counts.set(seat, (counts.get(seat) || 0) + 1);
  const names = [...counts].map(([seat, n]) => t("hint.count", { name: seatName(room, seat), n }));
  return h("p", { class: "hints-used" }, t("hint.round_end", { names: names.join(", ") }));
}

function domengBody(body, view, room, mySeat, snap) {
  const o = view.outcome;
  const summary = h("div", { class: "panel-summary" });
  for (const line of blockDetails(o, room)) summary.append(h("p", {}, line));
  if (o.end === "block") summary.append(h("p", {}, tf("outcome.winner", { winner: nameEl(room, o.winner) })));
  if (!view.match_over) summary.append(h("p", {}, tf("outcome.next_leader", { name: nameEl(room, o.next_leader) })));
  // at the match's end no round follows: the camat leads none
  const camatKey = view.match_over ? "outcome.camat_final" : "outcome.camat";
  if (o.camat_elected) summary.append(h("p", { class: "camat-note" }, tf(camatKey, { name: nameEl(room, o.camat) })));
  body.append(summary);
  if (view.match_over) body.append(standings(view, room));
  body.append(transfers(view, room), hands(view, room, mySeat), stonesAfter(view, room), fairDeal(snap, mySeat));
}

/** Kozel (K5-K10): who writes what, the goat, every hand with its value, the bazaar left, the sheet. */
function kozelBody(body, view, room, mySeat, snap) {
  const o = view.outcome;
  const summary = h("div", { class: "panel-summary" });
  summary.append(h("p", {}, writtenSentence(o, room)));
  if (o.goat.length) {
    summary.append(h("p", { class: "goat-note" }, goatSentence(o, room)));
  } else summary.append(h("p", {}, tf("outcome.next_leader", { name: nameEl(room, o.next_leader) })));
  body.append(summary);
  if (view.match_over) body.append(kozelStandings(view, room));
  body.append(
    section("sheet.after", scoreSheet(room, o, mySeat), h("p", { class: "hint" }, tf(room.options?.pairs ? "sheet.rule_pairs" : "sheet.rule"))),
    kozelHands(view, room, mySeat),
    fairDeal(snap, mySeat),
  );
}

/** Kozel's final standings (K9): players (or pairs) in the view's order (the server ranks them by
 * the fewest recorded points, then the fewest pending); the goat marked, last. */
function kozelStandings(view, room) {
  const o = view.outcome;
  const places = placesOf(view);
  const rows = view.standings.map((members, i) => {
    const goat = o.goat.includes(members[0]);
    return h(
      "tr",
      { class: `${places[i] === 1 ? "champion" : ""}${goat ? " goat-row" : ""}`.trim(), dataset: { seat: String(members[0]), points: String(o.points[members[0]]), place: String(places[i]) } },
      h("td", {}, String(places[i])),
      h("td", {}, groupEl(room, members), goat ? [" ", h("span", { class: "tag tag-goat" }, tfSpan("sheet.goat"))] : null),
      h("td", { class: "num" }, String(o.points[members[0]])),
      h("td", { class: "num" }, String(o.pending[members[0]])),
    );
  });
  const head = [t("standings.rank"), t(room.options?.pairs ? "sheet.pair" : "sheet.player"), t("sheet.points"), t("sheet.pending")];
  return h(
    "section",
    { class: "panel-section standings kozel-standings" },
    h("h3", {}, t("standings.heading")),
    h("table", {}, h("thead", {}, h("tr", {}, head.map((text) => h("th", { scope: "col" }, text)))), h("tbody", {}, rows)),
    h("p", { class: "standings-rule" }, tf("kozel.standings.rule")),
  );
}

/** Tiles as the panel shows a hand or the rest: upright mini tiles in a row. */
const revealTiles = (tiles) => h("span", { class: "reveal-tiles" }, tiles.map((tile) => miniTile(tile, { vertical: true })));

/** The deal the server made again from the seed: every seat's hand as dealt and the rest (Domeng's
 * unused tiles, Kozel's bazaar top first), and whether the server agrees with the commitment. */
function recreatedDeal(deal, room, mySeat) {
  const rows = deal.hands.map((hand, seat) =>
    h(
      "li",
      { class: `fair-row${seat === mySeat ? " mine" : ""}`, dataset: { seat: String(seat), tiles: hand.join(" ") } },
      h("span", { class: "reveal-name" }, nameEl(room, seat)),
      revealTiles(hand),
    ),
  );
  const restLabel = room.variant === "kozel" ? tf("fair.bazaar") : t("panel.unused");
  return h(
    "div",
    {},
    h("p", { class: `fair-server ${deal.matches ? "ok" : "bad"}`, dataset: { ok: String(deal.matches) } }, t(deal.matches ? "fair.server_ok" : "fair.server_bad")),
    h("ul", { class: "fair-hands" }, rows),
    h("p", { class: "fair-rest", dataset: { tiles: deal.rest.join(" ") } }, h("span", {}, restLabel), " ", revealTiles(deal.rest)),
  );
}

function kozelHands(view, room, mySeat) {
  const o = view.outcome;
  const byBot = byBotCounts(view.log, room);
  // with pairs the round is the pair's (K10): both partners of the winner win it
  const winners = o.winner == null ? [] : (room.sides || []).find((side) => side.includes(o.winner)) || [o.winner];
  const rows = view.reveal.hands.map((hand, seat) => {
    const roles = [];
    if (winners.includes(seat)) roles.push(h("span", { class: "tag tag-win" }, t("panel.role_winner")));
    if (o.goat.includes(seat)) roles.push(h("span", { class: "tag tag-goat" }, tfSpan("sheet.goat")));
    if (byBot[seat]) roles.push(byBotTag(byBot[seat]));
    const lone = hand.length === 1 && hand[0] === "0-0";
    const tiles = hand.length
      ? revealTiles(hand)
      : h("span", { class: "reveal-out" }, t("panel.no_tiles"));
    return h(
      "li",
      { class: `reveal-row${seat === mySeat ? " mine" : ""}`, dataset: { seat: String(seat), value: String(o.hand_values[seat]), written: String(o.written[seat]) } },
      h("span", { class: "reveal-name" }, nameEl(room, seat), " ", roles),
      tiles,
      h("span", { class: "reveal-pips" }, t(lone ? "panel.lone_zero" : "panel.pips", { n: o.hand_values[seat] })),
    );
  });
  const rest = view.reveal.rest.length
    ? h("p", { class: "reveal-rest" }, h("span", {}, tf("panel.bazaar_left")), " ", revealTiles(view.reveal.rest))
    : h("p", { class: "reveal-rest" }, tf("panel.bazaar_empty"));
  return section("panel.hands", h("ul", { class: "reveal" }, rows), rest);
}

/** "a bot made 2 moves": a person's moves this round that a bot made for them. */
function byBotTag(n) {
  return h("span", { class: "tag tag-by-bot", dataset: { byBot: String(n) } }, t("panel.by_bot", { n }));
}

function section(titleKey, ...content) {
  return h("section", { class: "panel-section" }, h("h3", {}, tf(titleKey)), ...content);
}

function transfers(view, room) {
  const items = roundSettlements(view.log, view.outcome).map(({ settlement, outcome }) =>
    h("li", { class: `transfer transfer-${settlement.reason}` }, settlementSentence(settlement, room, outcome)),
  );
  return section("panel.transfers", items.length ? h("ol", { class: "transfers" }, items) : h("p", {}, t("panel.no_transfers")));
}

function hands(view, room, mySeat) {
  const o = view.outcome;
  const byBot = byBotCounts(view.log, room);
  const rows = view.reveal.hands.map((hand, seat) => {
    const roles = [];
    if (seat === o.winner) roles.push(h("span", { class: "tag tag-win" }, t("panel.role_winner")));
    if (seat === o.first_cappu) roles.push(h("span", { class: "tag" }, tfSpan("panel.role_first_cappu")));
    if (seat === o.cucuq) roles.push(h("span", { class: "tag tag-warn" }, tfSpan("panel.role_cucuq")));
    if (seat === o.manguno) roles.push(h("span", { class: "tag tag-warn" }, tfSpan("panel.role_manguno")));
    if (o.mattikkeng.includes(seat)) roles.push(h("span", { class: "tag" }, tfSpan("panel.role_mattikkeng")));
    if (byBot[seat]) roles.push(byBotTag(byBot[seat]));
    const tiles = hand.length
      ? revealTiles(hand)
      : h("span", { class: "reveal-out" }, t("panel.no_tiles"));
    return h(
      "li",
      { class: `reveal-row${seat === mySeat ? " mine" : ""}`, dataset: { seat: String(seat) } },
      h("span", { class: "reveal-name" }, nameEl(room, seat), " ", roles),
      tiles,
      h("span", { class: "reveal-pips" }, t("panel.pips", { n: o.pip_sums[seat] })),
    );
  });
  const rest = h(
    "p",
    { class: "reveal-rest" },
    h("span", {}, t("panel.unused")),
    " ",
    revealTiles(view.reveal.rest),
  );
  return section("panel.hands", h("ul", { class: "reveal" }, rows), rest);
}

function stonesAfter(view, room) {
  const o = view.outcome;
  const cells = o.stones.map((n, seat) =>
    h(
      "li",
      { class: "stones-cell", dataset: { seat: String(seat), stones: String(n) } },
      h("bdi", { class: "stones-name", title: seatName(room, seat) }, seatName(room, seat)),
      h("span", { class: "stones-value" }, stoneSvg(), h("b", {}, String(n))),
    ),
  );
  cells.push(
    h(
      "li",
      { class: "stones-cell table-cell", dataset: { stones: String(o.table) } },
      h("span", { class: "stones-name" }, t("table.on_table")),
      h("span", { class: "stones-value" }, stoneSvg(), h("b", {}, String(o.table))),
    ),
  );
  return section("panel.stones_after", h("ul", { class: "stones-grid" }, cells));
}

/** Each side's place in the view's ``standings`` (its ``places``: tied sides share one, 1 best). */
function placesOf(view) {
  const places = view.places || [];
  return view.standings.map((_, i) => places[i] ?? i + 1);
}

/** Domeng's final standings, as the engine ranks them (the view's ``standings`` and ``places``):
 * most camat elections, then the fewest stones received over the whole match (``received``), with
 * both totals; players equal on both share a place, and first place may be shared. */
function standings(view, room) {
  const received = view.received || [];
  const elections = view.elections || [];
  const order = view.standings.map((side) => side[0]);
  const places = placesOf(view);
  const winners = order.filter((_, i) => places[i] === 1);
  const winnerLine = winners.length > 1 ? tf("standings.winners", { names: namesEl(room, winners) }) : tf("standings.winner", { name: nameEl(room, order[0]) });
  const rows = order.map((seat, i) =>
    h(
      "tr",
      { class: places[i] === 1 ? "champion" : "", dataset: { seat: String(seat), elections: String(elections[seat] ?? 0), received: String(received[seat] ?? 0), place: String(places[i]) } },
      h("td", {}, String(places[i])),
      h("td", { class: "name-cell" }, nameEl(room, seat)),
      h("td", { class: "num" }, String(elections[seat] ?? 0)),
      h("td", { class: "num" }, String(received[seat] ?? 0)),
    ),
  );
  return h(
    "section",
    { class: "panel-section standings" },
    h("h3", {}, t("standings.heading")),
    h("p", { class: "standings-winner" }, winnerLine),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("standings.rank")), h("th", { scope: "col" }, t("standings.player")), h("th", { scope: "col" }, tf("standings.elections")), h("th", { scope: "col" }, t("standings.received")))),
      h("tbody", {}, rows),
    ),
    h("p", { class: "standings-rule" }, tf("standings.rule")),
  );
}

/** The fair-deal check: the browser hashes the revealed seed against the commitment sent before
 * play; "Re-create the deal" asks the server to deal again from that seed (GET /api/deals/verify)
 * and shows the hands it makes, so a player can see the hand they were dealt among them. */
function fairDeal(snap, mySeat) {
  const { seed, commitment } = snap;
  const result = h("p", { class: "fair-result", role: "status" }, t("fair.checking"));
  const box = section(
    "fair.heading",
    h("p", { class: "fair-intro" }, t("fair.intro")),
    h("dl", { class: "fair-data" }, h("dt", {}, t("fair.commitment")), h("dd", { class: "hex" }, commitment || "—"), h("dt", {}, t("fair.seed")), h("dd", { class: "hex" }, seed || "—")),
    result,
  );
  if (!seed || !commitment) {
    result.textContent = t("fair.unavailable");
    return box;
  }
  const dealt = h("div", { class: "fair-deal", "aria-live": "polite" });
  const button = h("button", { class: "btn btn-small fair-recreate", type: "button" }, t("fair.link"));
  button.addEventListener("click", async () => {
    // the disabled (then hidden) button would drop the focus to the page's body behind the panel:
    // the section's heading takes it
    const heading = box.querySelector("h3");
    if (document.activeElement === button) {
      heading.setAttribute("tabindex", "-1");
      heading.focus();
    }
    button.disabled = true;
    replace(dealt, h("p", { class: "fair-working", role: "status" }, t("fair.checking")));
    try {
      const deal = await api("GET", verifyUrl(seed, commitment, snap.room.variant, snap.room.seats.length));
      replace(dealt, recreatedDeal(deal, snap.room, mySeat));
      button.hidden = true;
    } catch (error) {
      replace(dealt, h("p", { class: "fair-failed", role: "alert" }, tf("fair.recreate_failed", { reason: error.message })));
      button.disabled = false;
    }
  });
  box.append(h("p", {}, button), dealt);
  sha256Hex(seed).then((digest) => {
    const ok = digest === commitment.toLowerCase();
    result.textContent = ok ? t("fair.ok") : t("fair.bad");
    result.classList.add(ok ? "ok" : "bad");
    result.dataset.ok = String(ok);
  });
  return box;
}
