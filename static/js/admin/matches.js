// The match list: filters in the address (a GET form), newest first, a page at a time.

import { h } from "../dom.js";
import { adminApi, query, when } from "./api.js";
import { codeOf } from "./rooms.js";
import { t } from "../i18n.js";
import { count, statusWords } from "./words.js";

const STATUSES = ["", "waiting", "playing", "finished", "abandoned"];
const VARIANTS = ["", "domeng", "kozel"];

function field(label, control) {
  return h("label", { class: "filter" }, h("span", {}, label), control);
}

function select(name, values, current) {
  return h(
    "select",
    { name, class: "input" },
    values.map((v) => h("option", { value: v, selected: v === current }, v || "any")),
  );
}

/** The result in words: Domeng's places as the engine ranks them (most camat elections, then
 * the fewest stones received over the match) with both totals; Kozel's goat and points. */
export function resultText(item) {
  const r = item.result;
  if (!r) return item.status === "waiting" ? "not started" : "no round finished";
  const name = (s) => item.seats[s]?.display_name ?? `Seat ${s + 1}`;
  const names = (seats) => seats.map(name).join(", ");
  if (r.points) {
    const goat = r.goat?.length ? `goat: ${names(r.goat)}` : "no goat yet";
    // pending points (not yet opened at 13, K8) are part of the standing: show them by the points
    const seat = (s) => `${name(s)} ${count(r.points[s], "point")}${r.pending?.[s] ? ` (+${r.pending[s]} pending)` : ""}`;
    const order = r.standings?.length ? r.standings : r.points.map((_, s) => s);
    return `${goat} · points: ${order.map(seat).join(", ")}`;
  }
  const head = r.match_over ? "final" : `after ${count(r.finished_rounds, "round")}`;
  const place = (s, i) => `${r.places?.[i] ?? i + 1}. ${name(s)}: ${count(r.camat_elections[s], "camat election")}, ${count(r.received?.[s] ?? 0, "stone")} received`;
  return `${head} · ${(r.standings || []).map(place).join(" · ")}`;
}

/** A match's variant as the list says it: Kozel with its table, "kozel, 3 seats" or "kozel, 4 in
 * pairs" (K10); Domeng (always five seats) by its name. */
export function variantText(match) {
  if (match.variant !== "kozel") return match.variant;
  return match.options?.pairs ? `kozel, ${match.seats.length} in pairs` : `kozel, ${match.seats.length} seats`;
}

/** A result cell: at most two lines, the whole text on hover (its title) and on a click (or
 * Enter), which opens it in full and closes it again. */
export function resultCell(text) {
  const el = h("span", { class: "result-text", title: text, tabindex: "0", role: "button", "aria-expanded": "false" }, text);
  const toggle = () => el.setAttribute("aria-expanded", String(el.getAttribute("aria-expanded") !== "true"));
  el.addEventListener("click", toggle);
  el.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" && e.key !== " ") return;
    e.preventDefault();
    toggle();
  });
  return el;
}

export function seatsText(seats) {
  // a person's seat the host gave to a bot during the match names them too
  const text = (s) => (s.kind === "empty" ? "—" : s.former ? `${s.display_name}, replacing ${s.former}` : s.display_name);
  return seats.map(text).join(" · ");
}

/** A whole number from the address, clamped to [low, high]; ``fallback`` when absent or not a number. */
export function addressNumber(params, name, fallback, low, high) {
  const raw = params.get(name);
  const n = raw === null || raw.trim() === "" ? NaN : Math.floor(Number(raw));
  return Number.isFinite(n) ? Math.min(high, Math.max(low, n)) : fallback;
}

const PER_PAGE = 25;
const MAX_PER_PAGE = 200; // the API's limit

export async function matchesPage(main) {
  const params = new URLSearchParams(location.search);
  let page = addressNumber(params, "page", 1, 1, Number.MAX_SAFE_INTEGER);
  const perPage = addressNumber(params, "per_page", PER_PAGE, 1, MAX_PER_PAGE);
  const filters = {
    variant: params.get("variant") || "",
    status: params.get("status") || "",
    player: params.get("player") || "",
    since: params.get("since") || "",
    until: params.get("until") || "",
    code: codeOf(params.get("code")), // a room's code, or a pasted /r/ link
  };
  const form = h(
    "form",
    { class: "filters", method: "get", action: "/admin/matches" },
    field("Variant", select("variant", VARIANTS, filters.variant)),
    field("Status", select("status", STATUSES, filters.status)),
    field("Player", h("input", { name: "player", class: "input", value: filters.player, placeholder: "name or bot level" })),
    field("Room code", h("input", { name: "code", class: "input", value: filters.code, placeholder: "code or /r/ link", autocomplete: "off", spellcheck: "false" })),
    field("From", h("input", { name: "since", class: "input", type: "date", value: filters.since })),
    field("To", h("input", { name: "until", class: "input", type: "date", value: filters.until })),
    h("button", { class: "btn btn-gold", type: "submit" }, "Filter"),
  );
  if (perPage !== PER_PAGE) form.append(h("input", { type: "hidden", name: "per_page", value: String(perPage) }));
  main.append(h("h1", {}, "Matches"), form);
  let data = await adminApi("GET", `/matches${query({ ...filters, page, per_page: perPage })}`);
  const last = Math.max(1, Math.ceil(data.total / data.per_page));
  let note = null;
  if (page > last) {
    // past the last page (an old link, fewer matches now): show the last page and say so
    note = h("p", { class: "hint pager-note", role: "status" }, `There is no page ${page}: showing page ${last}, the last.`);
    page = last;
    data = await adminApi("GET", `/matches${query({ ...filters, page, per_page: perPage })}`);
    history.replaceState(null, "", `/admin/matches${query({ ...filters, page, per_page: perPage === PER_PAGE ? null : perPage })}`);
  }
  // each cell names its column (data-label): below 640 px a match is a card of labelled lines
  const cell = (label, props, ...children) => h("td", { ...props, dataset: { label } }, ...children);
  const rows = data.items.map((m) =>
    h(
      "tr",
      { class: "match-row", dataset: { matchId: String(m.id), status: m.status } },
      cell("Match", {}, h("a", { href: `/admin/matches/${m.id}` }, `#${m.id}`, m.room_match > 1 ? ` (room's match ${m.room_match})` : "")),
      cell("Variant", {}, variantText(m)),
      // one child per cell: a card's line is a grid of its label and one value
      cell("Status", {}, h("span", {}, statusWords(m))),
      cell("Created", {}, when(m.created_at)),
      cell("Rounds", { class: "num" }, String(m.round_count)),
      cell("Seats", { class: "name" }, seatsText(m.seats)),
      cell("Result", { class: "result" }, resultCell(resultText(m))),
    ),
  );
  if (note) main.append(note); // Element.append would print a null as the text "null"
  const exportAll = h(
    "a",
    { id: "export-list", class: "btn", href: `/api/admin/export${query(filters)}`, download: "" },
    `Export ${data.total === 1 ? "this match" : `these ${count(data.total, "match", "matches")}`} (zip of records)`,
  );
  // past the server's limit the export would be refused (422 too_many_matches): say so instead
  const tooMany = h("span", { id: "export-too-many" }, `Too many to export at once (at most ${data.export_limit}): narrow the filters.`);
  const exporting = !data.total ? null : data.total > data.export_limit ? tooMany : exportAll;
  main.append(
    h("p", { class: "hint list-head" }, `${count(data.total, "match", "matches")}, newest first. `, exporting),
    h("p", { class: "hint live-help" }, t("admin.live_help")),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "admin-table matches" },
        h("thead", {}, h("tr", {}, ["Match", "Variant", "Status", "Created", "Rounds", "Seats", "Result"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 7 }, "No match passes these filters."))),
      ),
    ),
  );
  const pages = Math.max(1, Math.ceil(data.total / data.per_page));
  const link = (p, label) => h("a", { class: "btn", href: `/admin/matches${query({ ...filters, page: p, per_page: perPage === PER_PAGE ? null : perPage })}` }, label);
  main.append(
    h("nav", { class: "pager", "aria-label": "pages" }, page > 1 ? link(page - 1, "← Newer") : null, h("span", {}, `page ${page} of ${pages}`), page < pages ? link(page + 1, "Older →") : null),
  );
}
