// The lobby's "Your tables": the rooms this browser holds a host's or a seat's token for (kept in
// localStorage, static/js/api.js `heldRooms`), each a link to its page with when this browser last
// opened it (kept there too: `touchRoom`) and what the server tells
// anyone of it (GET /api/rooms/status?codes=…, one read for them all that loads no room on the
// server: the game, the seats and whether its match waits, is played or is over). A room the
// server no longer knows (null) is forgotten here. No token leaves the browser.

import { forgetRoom, heldRooms, roomStatuses } from "./api.js";
import { h, replace } from "./dom.js";
import { currentLanguage, has, t } from "./i18n.js";

/** How many of the latest rooms the lobby looks up and lists (the server answers at most 8). */
export const MY_TABLES_MAX = 8;

/** A room code as the server makes them (token_urlsafe); anything else names no room. */
const CODE = /^[A-Za-z0-9_-]{1,64}$/;

/** The entries with the room's public facts, ``room`` as the server tells it or null (not known
 * now); the rooms the server no longer knows are forgotten and left out. */
async function lookUp(entries) {
  for (const entry of entries.filter(({ code }) => !CODE.test(code))) forgetRoom(entry.code);
  const held = entries.filter(({ code }) => CODE.test(code));
  if (!held.length) return [];
  let rooms;
  try {
    ({ rooms } = await roomStatuses(held.map(({ code }) => code)));
  } catch {
    return held.map((entry) => ({ ...entry, room: null })); // the server busy or away: the links stay
  }
  const known = [];
  for (const entry of held) {
    const room = Object.hasOwn(rooms, entry.code) ? rooms[entry.code] : undefined;
    if (room === null) forgetRoom(entry.code);
    else known.push({ ...entry, room: room ?? null });
  }
  return known;
}

/** The room's game as its row names it: Domeng's name says its five seats; a Kozel table says
 * its own (2 to 4, ``seats``), and whether it plays in pairs (``options.pairs``). */
function gameName(room) {
  if (room.variant !== "kozel") return t(`variant.${room.variant}`);
  const n = room.seats?.length ?? 0;
  if (room.options?.pairs) return t("mine.kozel_pairs");
  return n ? t("mine.kozel_seats", { n }) : t("variant.kozel");
}

const DAY_MS = 86_400_000;

/** When this browser last opened a room (``at``, ms since the epoch; 0: not known), as its row
 * says it in the page's language: "today 14:05", "yesterday 09:12", a weekday within the week
 * ("Tue 18:40"), else the date ("3 Dec, 14:05"; with the year when it is not this one); "" for 0.
 * ``now`` (a Date) for tests. */
export function whenText(at, now = new Date()) {
  if (!at) return "";
  const lang = currentLanguage();
  const date = new Date(at);
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(date)) / DAY_MS);
  const clock = { hour: "numeric", minute: "2-digit" };
  if (days === 0 || days === 1) {
    const day = new Intl.RelativeTimeFormat(lang, { numeric: "auto" }).format(-days, "day");
    return `${day} ${new Intl.DateTimeFormat(lang, clock).format(date)}`;
  }
  if (days > 1 && days < 7) return new Intl.DateTimeFormat(lang, { weekday: "short", ...clock }).format(date);
  const year = date.getFullYear() === now.getFullYear() ? {} : { year: "numeric" };
  return new Intl.DateTimeFormat(lang, { day: "numeric", month: "short", ...year, ...clock }).format(date);
}

function row({ code, host, seat, name, at, room }) {
  const facts = [];
  const state = room && has(`mine.${room.status}`) ? [" · ", t(`mine.${room.status}`, { n: room.match ?? 1 })] : [];
  if (room) facts.push(h("b", {}, gameName(room)), ...state);
  else facts.push(h("b", {}, code));
  const role = [host ? t("mine.host") : "", seat !== null ? t("seat.label", { n: seat + 1 }) : ""].filter(Boolean).join(" · ");
  // the seat's name as the server shows it to anyone (else as this browser typed it)
  const who = seat !== null ? room?.seats?.[seat]?.name || name : "";
  // what tells two rows of the same game and state apart: when this browser last opened each
  const when = whenText(at);
  return h(
    "li",
    { class: "my-table", dataset: { code, status: room?.status ?? "" } },
    h(
      "div",
      { class: "open-facts" },
      ...facts,
      h("div", { class: "open-who" }, role, who ? [" · ", h("bdi", { class: "my-name" }, who)] : ""),
      when ? h("div", { class: "my-when" }, t("mine.opened_at", { when })) : "",
    ),
    h("a", { class: "btn btn-small my-open", href: `/r/${encodeURIComponent(code)}` }, t("mine.open")),
  );
}

/** The "Your tables" section: hidden until it lists a room this browser holds a token for. */
export function myTablesSection() {
  const list = h("ol", { class: "open-list my-list" });
  const section = h("section", { class: "card my-tables", id: "my-tables", hidden: true }, h("h2", {}, t("mine.heading")), list);
  lookUp(heldRooms().slice(0, MY_TABLES_MAX)).then((known) => {
    replace(list, known.map(row));
    section.hidden = known.length === 0;
    section.dataset.loaded = "true";
  });
  return section;
}
