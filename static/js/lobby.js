// The lobby (/): choose the game, its options, the turn timer and who sits where; create the room.

import { api, createRoom, remember } from "./api.js";
import { BOT_LEVELS, botLabel, COVER_LEVEL } from "./bots.js";
import { h, toast } from "./dom.js";
import { has, t, tf } from "./i18n.js";
import { myTablesSection } from "./mytables.js";
import { openTablesSection } from "./opentables.js";
import { brandMark } from "./table.js";
import { pageHeader } from "./ui.js";
import { tileSvg } from "./tiles.js";

/** Domeng's match lengths the forms offer (camat elections; 0: no limit). */
export const TARGETS = [1, 2, 3, 4, 5, 0];
export const KOZEL_SEATS = [2, 3, 4];
/** The turn timers the server accepts (app/web/models.py playable_timer): 0 (off) or whole seconds from MIN to MAX. */
export const TIMER_MIN_S = 5;
export const TIMER_MAX_S = 600;

/** The seconds typed in the timer field, or null when the server would refuse them (whole seconds only). */
export function timerSeconds(raw) {
  const text = String(raw ?? "").trim();
  const seconds = text === "" ? NaN : Number(text);
  if (!Number.isInteger(seconds)) return null;
  return seconds === 0 || (seconds >= TIMER_MIN_S && seconds <= TIMER_MAX_S) ? seconds : null;
}

/** What the lobby's form on the page (in ``root``) holds, by its fields' ids: their values (a
 * checkbox: whether it is checked), whether the timer was typed in and is refused, whether the
 * player ticked pairs (kept while fewer than 4 players turn the box off); null without one. */
function formNow(root) {
  const form = root.querySelector(".lobby-form");
  if (!form) return null;
  const fields = {};
  for (const el of form.querySelectorAll("input[id], select[id]")) fields[el.id] = el.type === "checkbox" ? el.checked : el.value;
  const timer = form.querySelector("#turn-timer");
  const pairsWanted = form.querySelector("#pairs")?.dataset.wanted === "1";
  return { fields, typed: timer?.dataset.typed === "1", timerRefused: !form.querySelector("#turn-timer-error")?.hidden, pairsWanted };
}

/** The lobby: the new table's form (drawn again in another language, it keeps what was set and
 * what was said beside the timer), the player's tables and the open ones. */
export function lobbyPage(root) {
  const before = formNow(root);
  const variant = h(
    "select",
    { id: "variant", class: "input", name: "variant" },
    h("option", { value: "domeng", selected: true }, t("variant.domeng")),
    h("option", { value: "kozel" }, t("variant.kozel_players")),
  );
  const target = h(
    "select",
    { id: "camat-target", class: "input", name: "camat_target", "aria-describedby": "camat-target-hint" },
    TARGETS.map((n) => h("option", { value: String(n), selected: n === 1 }, n === 0 ? t("lobby.no_limit") : t("lobby.elections", { n }))),
  );
  const players = h(
    "select",
    { id: "kozel-seats", class: "input", name: "seats" },
    KOZEL_SEATS.map((n) => h("option", { value: String(n), selected: n === 4 }, t("lobby.players_n", { n }))),
  );
  const twoLempas = h("input", { id: "two-lempas", type: "checkbox", name: "two_lempas", checked: true });
  const pairs = h("input", { id: "pairs", type: "checkbox", name: "pairs" });
  const hints = h("input", { id: "allow-hints", type: "checkbox", name: "hints" });
  const timer = h("input", {
    id: "turn-timer",
    class: "input",
    name: "turn_timer_s",
    type: "number",
    min: "0",
    max: String(TIMER_MAX_S),
    step: "1",
    value: "30",
    inputmode: "numeric",
    "aria-describedby": "turn-timer-hint turn-timer-error",
  });
  const timerError = h("p", { class: "field-error", id: "turn-timer-error", role: "alert", hidden: true });
  /** Says what is wrong next to the field (or clears it); returns the seconds, or null. */
  const checkTimer = () => {
    const seconds = timerSeconds(timer.value);
    timerError.hidden = seconds !== null;
    timerError.textContent = seconds === null ? t("lobby.timer_invalid", { min: TIMER_MIN_S, max: TIMER_MAX_S }) : "";
    if (seconds === null) timer.setAttribute("aria-invalid", "true");
    else timer.removeAttribute("aria-invalid");
    return seconds;
  };
  // checked when the form is sent (checking on blur would push the button away from the pointer),
  // then again as the player corrects it
  timer.addEventListener("input", () => {
    if (!timerError.hidden) checkTimer();
  });
  const seatList = h("ol", { class: "lobby-seats" });
  let seats = [];
  const seatCount = () => (variant.value === "kozel" ? Number(players.value) : 5);
  const drawSeats = () => {
    const keep = seats.map((select) => select.value);
    const chosen = (seat) => keep[seat] ?? (seat < 2 ? "person" : COVER_LEVEL);
    seats = Array.from({ length: seatCount() }, (_, seat) =>
      h(
        "select",
        { class: "input seat-choice", name: `seat-${seat}`, id: `seat-${seat}`, dataset: { seat: String(seat) } },
        h("option", { value: "person", selected: chosen(seat) === "person" }, t("lobby.seat_person")),
        BOT_LEVELS.map((level) => h("option", { value: level, selected: chosen(seat) === level }, botLabel(level))),
      ),
    );
    seatList.replaceChildren(...seats.map((select, seat) => h("li", {}, h("label", { for: `seat-${seat}` }, t("seat.label", { n: seat + 1 })), select)));
  };
  const domengFields = h("div", { class: "field" }, h("label", { for: "camat-target" }, t("lobby.match_length")), target, h("p", { class: "hint", id: "camat-target-hint" }, tf("lobby.match_length_hint", { no_limit: t("lobby.no_limit") })));
  const kozelFields = h(
    "div",
    { class: "kozel-fields", hidden: true },
    h("div", { class: "field" }, h("label", { for: "kozel-seats" }, t("lobby.players")), players, h("p", { class: "hint" }, tf("lobby.kozel_length_hint"))),
    h("div", { class: "field check-field" }, h("label", { class: "check" }, twoLempas, h("span", {}, tf("lobby.two_lempas"))), h("p", { class: "hint" }, tf("lobby.two_lempas_hint"))),
    h("div", { class: "field check-field" }, h("label", { class: "check" }, pairs, h("span", {}, t("lobby.pairs"))), h("p", { class: "hint" }, t("lobby.pairs_hint"))),
  );
  // pairs need 4 players (K10): the box is off while there are fewer, and the player's tick comes
  // back with the fourth seat (a table of 3 never sends it)
  const wantPairs = (wanted) => {
    pairs.dataset.wanted = wanted ? "1" : "0";
  };
  pairs.addEventListener("change", () => wantPairs(pairs.checked));
  const sync = () => {
    const kozel = variant.value === "kozel";
    domengFields.hidden = kozel;
    kozelFields.hidden = !kozel;
    pairs.disabled = !kozel || players.value !== "4";
    pairs.checked = !pairs.disabled && pairs.dataset.wanted === "1";
    if (seats.length !== seatCount()) drawSeats();
  };
  variant.addEventListener("change", sync);
  players.addEventListener("change", sync);
  drawSeats();
  const submit = h("button", { class: "btn btn-gold btn-big", type: "submit", id: "create-room" }, t("lobby.create"));
  const form = h(
    "form",
    { class: "lobby-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "variant" }, t("lobby.variant")), variant),
    domengFields,
    kozelFields,
    h("div", { class: "field" }, h("label", { for: "turn-timer" }, t("lobby.timer")), timer, timerError, h("p", { class: "hint", id: "turn-timer-hint" }, t("lobby.timer_hint", { min: TIMER_MIN_S, max: TIMER_MAX_S }))),
    h("fieldset", { class: "field seats-field" }, h("legend", {}, t("lobby.seats")), seatList, h("p", { class: "hint" }, t("lobby.seats_hint"))),
    h("div", { class: "field check-field" }, h("label", { class: "check" }, hints, h("span", {}, t("lobby.hints"))), h("p", { class: "hint" }, t("lobby.hints_hint"))),
    submit,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const seconds = checkTimer();
    if (seconds === null) {
      timer.focus();
      return;
    }
    const kozel = variant.value === "kozel";
    const body = {
      variant: variant.value,
      options: kozel ? { two_lempas: twoLempas.checked, pairs: pairs.checked } : { camat_target: Number(target.value) },
      turn_timer_s: seconds,
      bots: seats.map((s) => (s.value === "person" ? null : s.value)),
      hints: hints.checked,
    };
    if (kozel) body.seats = Number(players.value);
    submit.disabled = true;
    submit.textContent = t("lobby.creating");
    try {
      const room = await createRoom(body);
      remember(room.code, { host_token: room.host_token });
      location.assign(`/r/${room.code}`);
    } catch (error) {
      // what the server refused, in the page's language when the catalog says it (the address's
      // open tables, its tables a minute, a full server); else the server's own words
      const said = has(`error.${error.code}`) ? t(`error.${error.code}`) : error.message;
      toast(t("lobby.error", { message: said }), "error");
      submit.disabled = false;
      submit.textContent = t("lobby.create");
    }
  });

  const hero = h(
    "section",
    { class: "hero" },
    h("div", { class: "hero-tiles", "aria-hidden": "true" }, tileSvg(3, 5), tileSvg(5, 5, { vertical: true }), tileSvg(5, 1), tileSvg(1, 3)),
    h("h1", {}, t("lobby.heading")),
    h("p", { class: "lead" }, tf("lobby.intro")),
    h("p", {}, h("a", { href: "/rules" }, t("lobby.read_rules"))),
    // on a phone the open tables come below the whole form: a way down to them from the top
    // (hidden where they sit beside the form, static/css/app.css)
    h("p", { class: "to-open-tables" }, h("a", { href: "#open-tables" }, t("lobby.to_open_tables"))),
  );
  root.replaceChildren(
    h("div", { class: "page lobby-page" }, pageHeader(brandMark()), h("main", { class: "lobby" }, hero, myTablesSection(), h("div", { class: "card new-table-card" }, h("h2", {}, t("lobby.new_table")), form), openTablesSection())),
  );
  if (before) {
    const setField = (el) => {
      if (Object.hasOwn(before.fields, el.id)) el[el.type === "checkbox" ? "checked" : "value"] = before.fields[el.id];
    };
    setField(variant);
    setField(players);
    wantPairs(before.pairsWanted);
    sync();
    for (const el of [target, twoLempas, hints, timer, ...seats]) setField(el);
    if (before.typed) timer.dataset.typed = "1";
    if (before.timerRefused) checkTimer();
  }
  // "Find another table" (a room that filled before its Join, static/js/room.js) comes back here
  if (location.hash === "#open-tables") document.getElementById("open-tables")?.scrollIntoView();
  // the form's timer starts from the server's own default (DOMENG_TURN_TIMER_S), unless typed in meanwhile
  api("GET", "/api/room-defaults")
    .then(({ turn_timer_s: seconds }) => {
      if (timer.dataset.typed !== "1" && timerSeconds(seconds) !== null) timer.value = String(seconds);
    })
    .catch(() => {}); // the 30 s in the form stands
  timer.addEventListener("input", () => (timer.dataset.typed = "1"), { once: true });
}
