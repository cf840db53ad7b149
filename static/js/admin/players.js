// Players: every display name (and bot level) with its totals.

import { h } from "../dom.js";
import { adminApi, query } from "./api.js";
import { count } from "./words.js";

/** A bot's note: a named bot is one bot; an unnamed level adds up every seat of that level. */
function playerNote(p) {
  // a person whose seat the host gave to a bot during a match: that match counts for them, its
  // rounds and stones for the bot
  if (p.kind !== "bot") return p.replaced ? h("span", { class: "hint player-note player-replaced" }, ` · replaced by a bot in ${count(p.replaced, "match", "matches")}`) : null;
  return h("span", { class: "hint player-note" }, p.name ? " · bot" : " · every seat of this level");
}

export async function playersPage(main) {
  const params = new URLSearchParams(location.search);
  const name = params.get("name") || "";
  const page = Math.max(1, Number(params.get("page") || 1));
  main.append(
    h("h1", {}, "Players"),
    h(
      "form",
      { class: "filters", method: "get", action: "/admin/players" },
      h("label", { class: "filter" }, h("span", {}, "Name"), h("input", { name: "name", class: "input", value: name })),
      h("button", { class: "btn btn-gold", type: "submit" }, "Filter"),
    ),
  );
  const data = await adminApi("GET", `/players${query({ name, page, per_page: 50 })}`);
  const head = ["Player", "Matches", "Rounds", "Stones received", "Stones paid", "Camat elections", "Kozel points", "Goats"];
  main.append(
    h("p", { class: "hint" }, `${count(data.total, "player")}. Every person who sat in a match counts it; a seat's rounds and stones count for whoever holds it now (a person replaced by a bot leaves them to the bot); a bot level counts each of its seats.`),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "admin-table players" },
        h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          data.items.map((p) =>
            h(
              "tr",
              { class: "player-row" },
              h("th", { scope: "row", class: "name" }, p.display_name, playerNote(p)),
              // each cell names its column: below 640 px a player is a card of labelled lines
              [p.matches, p.rounds, p.stones_received, p.stones_paid, p.camat_elections, p.points, p.goats].map((n, i) => h("td", { class: "num", dataset: { label: head[i + 1] } }, String(n))),
            ),
          ),
        ),
      ),
    ),
  );
  const pages = Math.max(1, Math.ceil(data.total / data.per_page));
  if (pages > 1) {
    const link = (p, label) => h("a", { class: "btn", href: `/admin/players${query({ name, page: p })}` }, label);
    main.append(h("nav", { class: "pager" }, page > 1 ? link(page - 1, "← Previous") : null, h("span", {}, `page ${page} of ${pages}`), page < pages ? link(page + 1, "Next →") : null));
  }
}
