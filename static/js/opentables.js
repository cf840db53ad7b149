// The lobby's open tables: rooms whose hosts listed them, waiting for players. The list refreshes
// every few seconds while the page is visible; joining is the room's link (a name, then a seat).

import { api } from "./api.js";
import { botLabel } from "./bots.js";
import { h, replace } from "./dom.js";
import { num, t } from "./i18n.js";
import { icon } from "./icons.js";

const REFRESH_MS = 4000;

function waited(seconds) {
  const minutes = Math.floor(seconds / 60);
  return minutes < 1 ? t("open.waiting_new") : t("open.waiting_min", { n: minutes });
}

/** How many seated people are at the table now (``here``: those holding a socket, what the list
 * ranks by): a people icon and the number, read out whole ("2 people here"). */
function here(count) {
  const words = t("open.here", { n: count });
  return h(
    "span",
    { class: count ? "open-here" : "open-here open-here-none", title: words, dataset: { here: String(count) } },
    icon("people"),
    h("span", { "aria-hidden": "true" }, num(count)),
    h("span", { class: "sr-only" }, words),
  );
}

function row(table) {
  const variant = t(`variant.${table.variant}`);
  const who = [...table.people, ...table.bots.map((level) => botLabel(level))].join(", ");
  return h(
    "li",
    { class: "open-table", dataset: { code: table.code } },
    h(
      "div",
      { class: "open-facts" },
      // ``?? 0``: a process of an older release, during a rolling update, publishes no ``here``
      here(table.here ?? 0),
      h("b", {}, variant),
      " · ",
      t("open.free", { free: table.free, seats: table.seats }),
      " · ",
      // ``pairs``: Kozel's partners share a score (K10); a table of an older release says nothing
      ...(table.pairs ? [h("span", { class: "open-pairs" }, t("open.pairs")), " · "] : []),
      table.turn_timer_s ? t("open.timer", { s: table.turn_timer_s }) : t("open.no_timer"),
      " · ",
      waited(table.waiting_s),
      h("div", { class: "open-who" }, h("bdi", {}, who)),
    ),
    // ``?join``: the room's page says so if the table filled (or started) before this click
    h("a", { class: "btn btn-gold btn-small open-join", href: `/r/${encodeURIComponent(table.code)}?join` }, t("open.join")),
  );
}

/** The open tables' section; it keeps itself fresh until it leaves the page. */
export function openTablesSection() {
  const list = h("ol", { class: "open-list", "aria-live": "polite" });
  const empty = h("p", { class: "hint open-empty" }, t("open.none"));
  const section = h("section", { class: "card open-tables", id: "open-tables" }, h("h2", {}, t("open.heading")), empty, list);
  let timer = null;
  const refresh = async () => {
    if (!section.isConnected && timer !== null) return;
    try {
      if (!document.hidden) {
        const { tables } = await api("GET", "/api/open-tables");
        replace(list, tables.map(row));
        empty.hidden = tables.length > 0;
        section.dataset.loaded = "true";
      }
    } catch {
      // the next refresh tries again
    }
    timer = setTimeout(refresh, REFRESH_MS);
  };
  refresh();
  return section;
}
