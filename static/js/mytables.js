// The lobby's "Your tables": the rooms this browser holds a host's or a seat's token for (kept in
// localStorage, static/js/api.js `heldRooms`), each a link to its page with what the server tells
// anyone of it (GET /api/rooms/{code}: the game and whether its match waits, is played or is over).
// A room the server no longer knows (404) is forgotten here. No token leaves the browser.

import { forgetRoom, getRoom, heldRooms } from "./api.js";
import { h, replace } from "./dom.js";
import { has, t } from "./i18n.js";

/** How many of the latest rooms the lobby looks up and lists. */
export const MY_TABLES_MAX = 8;

/** The room's public facts for the list: ``room`` as the server tells it, or null (not known now). */
async function lookUp(entry) {
  try {
    return { ...entry, room: await getRoom(entry.code) };
  } catch (error) {
    if (error.status !== 404) return { ...entry, room: null }; // the server busy or away: the link stays
    forgetRoom(entry.code);
    return null;
  }
}

function row({ code, host, seat, name, room }) {
  const facts = [];
  const state = room && has(`mine.${room.status}`) ? [" · ", t(`mine.${room.status}`, { n: room.match ?? 1 })] : [];
  if (room) facts.push(h("b", {}, t(`variant.${room.variant}`)), ...state);
  else facts.push(h("b", {}, code));
  const role = [host ? t("mine.host") : "", seat !== null ? t("seat.label", { n: seat + 1 }) : ""].filter(Boolean).join(" · ");
  // the seat's name as the server shows it to anyone (else as this browser typed it)
  const who = seat !== null ? room?.seats?.[seat]?.name || name : "";
  return h(
    "li",
    { class: "my-table", dataset: { code, status: room?.status ?? "" } },
    h("div", { class: "open-facts" }, ...facts, h("div", { class: "open-who" }, role, who ? [" · ", h("bdi", {}, who)] : "")),
    h("a", { class: "btn btn-small my-open", href: `/r/${encodeURIComponent(code)}` }, t("mine.open")),
  );
}

/** The "Your tables" section: hidden until it lists a room this browser holds a token for. */
export function myTablesSection() {
  const list = h("ol", { class: "open-list my-list" });
  const section = h("section", { class: "card my-tables", id: "my-tables", hidden: true }, h("h2", {}, t("mine.heading")), list);
  Promise.all(heldRooms().slice(0, MY_TABLES_MAX).map(lookUp)).then((rows) => {
    const known = rows.filter(Boolean);
    replace(list, known.map(row));
    section.hidden = known.length === 0;
    section.dataset.loaded = "true";
  });
  return section;
}
