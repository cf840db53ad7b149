// The admin area's words (English): a count with its word in the right form, chosen by the
// platform's plural rules (Intl.PluralRules: "1 socket", "2 sockets", "0 sockets"), and a
// match's options in words rather than JSON.

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { when } from "./api.js";

const RULES = new Intl.PluralRules("en");

/** ``n`` and the word for it: ``one`` for CLDR's "one" category, ``other`` (default one + "s") else. */
export function count(n, one, other = `${one}s`) {
  return `${n} ${RULES.select(n) === "one" ? one : other}`;
}

/** A match's options as a person would say them: "the match ends at the first camat election",
 * "two lempas allowed, in pairs". Unknown options are named with their value. */
export function optionsText(variant, options) {
  const parts = [];
  for (const [key, value] of Object.entries(options || {})) {
    if (key === "camat_target") {
      parts.push(value === 0 ? "no limit on camat elections" : value === 1 ? "ends at the first camat election" : `ends after ${count(value, "camat election")}`);
    } else if (key === "two_lempas") parts.push(value ? "two lempas in one move allowed" : "no two-lempas move");
    else if (key === "pairs") parts.push(value ? "played in pairs (seats 1 and 3 against 2 and 4)" : "every player alone");
    else parts.push(`${key.replaceAll("_", " ")}: ${value === true ? "yes" : value === false ? "no" : value}`);
  }
  return parts.length ? parts.join("; ") : "the rules' defaults";
}

/** Why a match's status is what it is, after it: " (closed)" or " (idle)" for an abandoned one,
 * " (stopped by the host)" for a no-limit match the host ended, " (ends after this round)" while
 * the host's ask to end it stands; "" otherwise. */
export function statusReason(m) {
  if (m.abandoned_reason) return ` (${m.abandoned_reason})`;
  if (m.host_stop && m.status === "finished") return " (stopped by the host)";
  if (m.host_stop && m.status === "playing") return " (ends after this round)";
  return "";
}

/** The round review's words about the seat reviewed, ``name`` (static/js/review.js's
 * ``reviewList``): the player's own panel says "you", the admin's replay viewer names the seat. */
export function seatReviewWords(name) {
  const expect = { stones: `stones ${name} could expect from this round`, points: `points ${name} could expect to write this round` };
  return {
    noChoices: () => `Every move ${name} made this round was forced: nothing to review.`,
    noOwnChoices: () => `The other moves ${name} made this round were forced: nothing else to review.`,
    allByBot: () => `A bot played every move of ${name} this round: nothing of theirs to review.`,
    none: (unit, threshold) => `No clear mistake: no choice of ${name} lost more than ${threshold} ${unit} to the best by more than the estimate's margin of error.`,
    byBot: (moves, n) => `${n === 1 ? "Move" : "Moves"} ${moves} of the round ${n === 1 ? "was" : "were"} played for ${name} by a bot covering the seat: not judged.`,
    byTimer: (moves, n) => `${n === 1 ? "Move" : "Moves"} ${moves} of the round ${n === 1 ? "was" : "were"} played for ${name} by a bot when the turn's time ran out: not judged.`,
    intro: (unit) => `Each option was played out on hundreds of deals that fit what ${name} could see then (never the hands revealed now). The number is the ${expect[unit]}: fewer is better.`,
    choice: () => `${name}'s choice`,
    chainLabel: (better) => `The line of play at that moment, with ${name}'s tile${better ? " and the better one" : ""}`,
  };
}

/** Whether a match's room is in memory, after its status: " · live" (explained on hover, the
 * ``admin.live_help`` message) when a room hosts it; for a waiting or playing match no room hosts
 * (its server stopped, or its room left memory), " · not hosted, last activity …" (explained by
 * ``admin.not_hosted_help``): its stored status is only the last one known. */
export function hostedNote(m) {
  if (m.hosted === false) return [" · ", h("span", { class: "not-hosted", title: t("admin.not_hosted_help") }, "not hosted"), `, last activity ${when(m.last_active_at)}`];
  if (m.live || m.hosted) return [" · ", h("abbr", { class: "live-word", title: t("admin.live_help") }, "live")];
  return [];
}

/** The status, its reason and whether a room hosts it: a playing match no room hosts is shown
 * "playing?" (greyed), since nobody plays it now. */
export function statusWords(m) {
  const stale = m.hosted === false;
  return [h("span", { class: `status status-${m.status}${stale ? " status-stale" : ""}` }, stale ? `${m.status}?` : m.status), statusReason(m), hostedNote(m)];
}
