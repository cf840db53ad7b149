// "Review my round" (issue 16): the round-end panel's section that asks the server for the review of
// this seat's decisions in the round just ended (docs/protocol.md, "Round review") and shows it:
// a one-line summary (and the moves a bot made for the player, never judged), then each decision
// with a choice: the chain as it stood, the tile played and the better one marked on it, every
// option with its expected cost this round (stones or points, fewer is better), and a gap the
// estimate cannot tell from its noise said so, with its margin. The admin replay viewer draws the
// same list (static/js/admin/replay.js).

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { has, t, tf } from "./i18n.js";
import { isLempa, miniTile, pips } from "./tiles.js";

/** Reviews already fetched, by "code:match:round" (the server caches them too; this saves the
 * trip). The match's number is in it: after Play again a room's round numbers start again. */
const fetched = new Map();
/** Reviews being fetched, by "code:match:round": a panel drawn again meanwhile waits for the same one. */
const pending = new Map();

/**
 * ``x`` (a cost, a loss, a margin, as the review sends them: unrounded) to ``digits`` decimals,
 * rounded once, as `domeng review` prints it (Python's ``f"{x:.2f}"``, engine/review.py `shown`):
 * from the exact value, an exact tie (0.125) to the even digit (0.12). A figure rounded before
 * (0.3149 → 0.315) and again here would read 0.32.
 */
export function shown(x, digits = 2) {
  const scale = 10 ** digits;
  const eighths = x * 2 ** (digits + 1); // exact: only an odd multiple of 2^-(digits+1) is a tie
  if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
    const down = Math.floor(x * scale); // exact too: a tie is a half-integer once scaled
    return (down % 2 === 0 ? down : down + 1) / scale + 0;
  }
  return Number(x.toFixed(digits)) + 0; // toFixed rounds from the exact value; + 0: never "-0"
}

/** The review of ``round`` (from 0) of the room's match number ``match`` (from 1) for the holder
 * of ``token``, from the server: a match's final panel kept open after Play again asks for its own
 * match, not the one the room is at now. */
export const getReview = (code, round, token, match) =>
  api("GET", `/api/rooms/${encodeURIComponent(code)}/rounds/${round}/review?match=${match}`, undefined, token);

/**
 * An action of the review (RECORD.md JSON) as words: "2–2 on the left", "draw", "pass"…
 * ``ends``: the chain's open ends ([left, right] pips) or null; ``lempa``: the chain's only tile
 * when it is a lempa ("6-6", `loneLempa`), or null: a tile played against it goes "next to 6–6",
 * as either of its ends is that one tile.
 */
export function optionText(action, ends = null, lempa = null) {
  if (action.pass) return tf("review.pass");
  if (action.draw) return tf("review.draw");
  if (Array.isArray(action.play)) {
    // two lempas (RECORD.md: "play": ["a-a", "b-b"], K4): each goes on the end showing its number
    const [a, b] = action.play;
    const [left, right] = ends && pips(b)[0] === ends[0] && pips(a)[0] !== ends[0] ? [b, a] : [a, b];
    return tf("review.lempas", { left: miniTile(left), right: miniTile(right) });
  }
  const tile = miniTile(action.play);
  if (lempa && (action.end === "L" || action.end === "R")) return tf("review.play_beside", { tile, lempa: miniTile(lempa) });
  if (action.end === "L") return tf("review.play_left", { tile });
  if (action.end === "R") return tf("review.play_right", { tile });
  return tf("review.play", { tile });
}

/** The chain's only tile when it is a lempa ("6-6"), else null; ``chain``: tiles as "a-b" or [a, b]. */
export function loneLempa(chain) {
  if (chain?.length !== 1) return null;
  const tile = Array.isArray(chain[0]) ? `${chain[0][0]}-${chain[0][1]}` : chain[0];
  return isLempa(tile) ? tile : null;
}

/** The ends of the chain a decision saw ([left, right] pips), or null before the opening. */
const chainEnds = (decision) => (decision.chain.length ? [decision.chain[0][0], decision.chain[decision.chain.length - 1][1]] : null);

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The tile an action places (the first of two lempas), or null. */
const placed = (action) => (Array.isArray(action.play) ? action.play[0] : action.play || null);

/** The chain as the seat saw it, with ``chosen`` and ``best`` drawn at the ends they took. */
function chainLine(decision, words) {
  const line = h("div", { class: "review-chain", role: "img", "aria-label": words.chainLabel(decision.marked) });
  const at = (action, cls) => {
    const tile = placed(action);
    if (!tile) return null;
    return h("span", { class: `review-tile ${cls}` }, miniTile(tile));
  };
  const ends = { L: [], R: [] };
  const mine = at(decision.chosen, "chosen");
  const better = decision.marked ? at(decision.best, "better") : null;
  if (mine) ends[decision.chosen.end === "L" ? "L" : "R"].push(mine);
  if (better) ends[decision.best.end === "L" ? "L" : "R"].push(better);
  const drawn = decision.chain.length > 8 ? decision.chain.slice(0, 3).concat([null], decision.chain.slice(-3)) : decision.chain;
  line.append(
    ...ends.L.reverse(),
    ...drawn.map((pair) => (pair === null ? h("span", { class: "review-gap" }, "…") : h("span", { class: "review-tile" }, miniTile(`${pair[0]}-${pair[1]}`)))),
    ...ends.R,
  );
  return line;
}

function decisionItem(decision, review, index, words) {
  const unit = review.unit === "points" ? "points.count" : "stones.count";
  const options = h(
    "ol",
    { class: "review-options" },
    decision.options.map((option) => {
      const chosen = same(option.action, decision.chosen);
      const best = option.lost === 0;
      return h(
        "li",
        { class: `review-option${chosen ? " chosen" : ""}${best ? " best" : ""}` },
        h("span", { class: "review-what" }, optionText(option.action, chainEnds(decision), loneLempa(decision.chain))),
        h("span", { class: "review-cost" }, t(unit, { n: shown(option.cost) })),
        chosen ? h("span", { class: "tag tag-you" }, words.choice()) : null,
        best ? h("span", { class: "tag tag-best" }, t("review.best")) : null,
      );
    }),
  );
  const head = h("p", { class: "review-move" }, t("review.move", { n: decision.at + 1 }));
  const amount = t(unit, { n: shown(decision.lost) });
  if (decision.marked) head.append(" · ", h("strong", {}, t("review.lost", { amount })));
  // a gap above the threshold that the estimate cannot tell from noise: shown with its margin,
  // neither a mistake nor "within the threshold"
  else if (decision.within_noise) {
    const close = decision.margin == null ? t("review.too_close_plain", { amount }) : t("review.too_close", { amount, margin: t(unit, { n: shown(decision.margin) }) });
    head.append(" · ", h("span", { class: "review-close" }, close));
  }
  return h("li", { class: `review-decision${decision.marked ? " marked" : ""}`, dataset: { at: decision.at, index } }, head, chainLine(decision, words), options);
}

/**
 * The review's words about the seat reviewed. A player reads them about themselves ("you", in the
 * page's language: these); the admin's replay viewer passes its own, naming the seat
 * (static/js/admin/words.js). ``unit`` is "stones" or "points".
 */
export const OWN_WORDS = {
  noChoices: () => t("review.no_choices"),
  noOwnChoices: () => t("review.no_own_choices"),
  allByBot: () => t("review.all_by_bot"),
  none: (unit, threshold) => t(`review.none_${unit}`, { threshold }),
  byBot: (moves, n) => t("review.by_bot", { moves, n }),
  byTimer: (moves, n) => t("review.by_timer", { moves, n }),
  intro: (unit) => t(`review.intro_${unit}`),
  choice: () => t("review.your_choice"),
  // ``better``: a better tile is drawn beside the seat's (a choice marked as a mistake); a best
  // choice's line has no better one to speak of
  chainLabel: (better) => t(better ? "review.chain_label" : "review.chain_label_yours"),
};

/** The review as a list (used by the panel and by the admin's replay viewer, with its ``words``). */
export function reviewList(review, words = OWN_WORDS) {
  const box = h("div", { class: "review" });
  const unitKey = review.unit === "points" ? "points" : "stones";
  // the moves a bot made for the seat's person are theirs to know of, never judged: the summary's
  // verdict is about the person's own choices only. Those their turn timer left to a bot (one turn
  // each, ``by_timer``) are told apart from those of a bot covering their seat while they were away
  const byBot = review.by_bot || [];
  const timed = new Set(review.by_timer || []);
  const covered = byBot.filter((at) => !timed.has(at));
  const outOfTime = byBot.filter((at) => timed.has(at));
  const moves = (ats) => ats.map((at) => at + 1).join(", ");
  // a bot made every move of the seat (``all_by_bot``): said plainly, never "your other moves were forced"
  if (review.all_by_bot) box.append(h("p", { class: "review-summary review-all-by-bot" }, words.allByBot()));
  else if (!review.decisions.length) box.append(h("p", { class: "review-summary" }, byBot.length ? words.noOwnChoices() : words.noChoices()));
  else if (review.marked) box.append(h("p", { class: "review-summary marked" }, t(`review.summary_${unitKey}`, { n: review.marked, lost: shown(review.lost) })));
  else box.append(h("p", { class: "review-summary" }, words.none(unitKey, review.threshold)));
  if (covered.length) box.append(h("p", { class: "review-by-bot" }, words.byBot(moves(covered), covered.length)));
  if (outOfTime.length) box.append(h("p", { class: "review-by-bot review-by-timer" }, words.byTimer(moves(outOfTime), outOfTime.length)));
  // the row of tiles in each decision is the chain as it stood: said once, above them (a row of
  // tiles with no word could be read as the hand)
  if (review.decisions.length) box.append(h("p", { class: "review-intro" }, words.intro(unitKey)), h("p", { class: "review-legend" }, words.chainLabel(review.decisions.some((d) => d.marked))), h("ol", { class: "review-decisions" }, review.decisions.map((d, i) => decisionItem(d, review, i, words))));
  return box;
}

/** The panel's section: a button, then a progress line, then the review (or a reason and a retry),
 * of ``round`` (from 0) of the room's match number ``match`` (from 1). With ``allByBot`` (the page
 * knows a bot made every move of the seat in that round: `narrate.allByBot`) it says so at once,
 * as the review would (``all_by_bot``), and offers no review. */
export function reviewSection(code, round, token, match, { allByBot = false } = {}) {
  const key = `${code}:${match}:${round}`;
  const body = h("div", { class: "review-body", "aria-live": "polite" });
  // the heading takes the focus from the button pressed (Review, Retry), which the progress line
  // replaces: never the page's body, behind the open panel, where a screen reader starts over
  const heading = h("h3", { tabindex: "-1" }, t("review.heading"));
  const section = h("section", { class: "panel-section review-section" }, heading, body);
  const show = (review) => replace(body, reviewList(review));
  const ask = async (attempt = 1) => {
    const pressed = body.contains(document.activeElement);
    if (pressed) heading.focus();
    replace(body, h("p", { class: "review-working", role: "status", "aria-busy": "true" }, h("span", { class: "spinner", "aria-hidden": "true" }), " ", t("review.working")));
    if (!pending.has(key)) {
      const asked = getReview(code, round, token, match).then((review) => {
        fetched.set(key, review);
        return review;
      });
      pending.set(key, asked);
      asked.finally(() => pending.delete(key)).catch(() => {});
    }
    try {
      show(await pending.get(key));
    } catch (error) {
      if (!section.isConnected) return; // this panel was closed or drawn again
      if (error.code === "reviews_busy" && attempt < 4) {
        setTimeout(() => ask(attempt + 1), 3000 * attempt);
        return;
      }
      replace(
        body,
        h("p", { class: "review-failed", role: "alert" }, t("review.failed", { reason: has(`error.${error.code}`) ? t(`error.${error.code}`) : error.message })),
        h("button", { class: "btn btn-small", type: "button", onclick: () => ask() }, t("review.retry")),
      );
    }
  };
  if (fetched.has(key)) show(fetched.get(key));
  else if (pending.has(key)) ask();
  else if (allByBot) replace(body, h("p", { class: "review-summary review-all-by-bot" }, OWN_WORDS.allByBot()));
  else replace(body, h("p", { class: "review-intro" }, t("review.offer")), h("button", { class: "btn review-button", type: "button", onclick: () => ask() }, t("review.button")));
  return section;
}
