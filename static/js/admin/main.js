// The admin area in the browser: sign-in, match list, a match (chart, rounds, replay), players,
// live rooms. English only. The server decides who may see it; this script only draws.

import { h, replace } from "../dom.js";
import { useLanguage } from "../i18n.js";
import { adminApi } from "./api.js";
import { matchPage } from "./match.js";
import { matchesPage } from "./matches.js";
import { playersPage } from "./players.js";
import { roomsPage } from "./rooms.js";

const root = document.getElementById("app");

/** The admin page this sign-in leads back to: the form's ``?next=`` (set by the server when it
 * sent an anonymous visitor here from that page) when it is one of the admin area's own
 * paths (as app/admin/routes.py `_ASKED_PAGE` checks it), else null. */
function askedPage() {
  const next = new URLSearchParams(location.search).get("next");
  if (next === null) return null;
  return /^\/admin(\/(matches(\/\d{1,18})?|players|rooms))?$/.test(next) ? next : null;
}

function loginPage() {
  const secret = h("input", { id: "admin-secret", class: "input", type: "password", autocomplete: "current-password", required: true });
  const status = h("p", { class: "hint", role: "status" });
  const form = h(
    "form",
    { class: "card narrow admin-login" },
    h("h1", {}, "Domeng Online admin"),
    h("label", { for: "admin-secret" }, "Admin secret"),
    secret,
    h("button", { id: "admin-login", class: "btn btn-gold", type: "submit" }, "Sign in"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "Signing in…";
    try {
      await adminApi("POST", "/login", { secret: secret.value });
      // to the page asked for (the server's ?next=), else the matches; replace: Back never
      // returns to the form
      location.replace(askedPage() ?? "/admin/matches");
    } catch (error) {
      status.textContent = error.message;
      status.dataset.error = error.code;
    }
  });
  replace(root, h("main", { class: "page" }, form));
  secret.focus();
}

function shell(active) {
  const link = (href, label, key) => h("a", { href, class: key === active ? "current" : null, "aria-current": key === active ? "page" : null }, label);
  const logout = h("button", { id: "admin-logout", class: "btn", type: "button" }, "Sign out");
  logout.addEventListener("click", async () => {
    await adminApi("POST", "/logout");
    location.assign("/admin/login");
  });
  const main = h("main", { class: "page admin-page" });
  replace(
    root,
    h(
      "header",
      { class: "page-header admin-header" },
      h("a", { class: "brand", href: "/admin" }, "Domeng admin"),
      h("nav", { class: "page-nav admin-nav" }, link("/admin/matches", "Matches", "matches"), link("/admin/players", "Players", "players"), link("/admin/rooms", "Live rooms", "rooms")),
      logout,
    ),
    main,
  );
  return main;
}

async function main() {
  const path = location.pathname.replace(/\/$/, "");
  try {
    if (path === "/admin/login") {
      loginPage();
      document.body.dataset.ready = "true";
      return;
    }
    await useLanguage("en"); // the admin pages are in English: a few help lines come from its catalog
    if (path === "/admin/players") {
      await playersPage(shell("players"));
    } else if (path === "/admin/rooms") {
      await roomsPage(shell("rooms"));
    } else {
      const match = path.match(/^\/admin\/matches\/(\d+)$/);
      if (match) await matchPage(shell("matches"), Number(match[1]));
      else await matchesPage(shell("matches"));
    }
  } catch (error) {
    root.append(h("p", { class: "fatal", role: "alert" }, `Could not load: ${error.message}`));
  }
  document.body.dataset.ready = "true";
}

main();
