// Domeng Online in the browser: picks the page from the address (/, /r/{code}, /rules).

import { h, replace } from "./dom.js";
import { initI18n, onLanguageChange, t } from "./i18n.js";
import { lobbyPage } from "./lobby.js";
import { RoomController } from "./room.js";
import { rulesPage } from "./rules.js";
import { brandMark } from "./table.js";
import { installTermTooltips, pageHeader } from "./ui.js";

/**
 * The room a path names: ``{code, trailing}`` for /r/{code}, the code being the leading characters
 * a room's code is made of (the server's ``secrets.token_urlsafe``) and ``trailing`` whether
 * anything came after them: punctuation a message put after the link ("/r/Ab3_x." or "/r/Ab3_x)"),
 * a space, an invisible character. ``code`` is "" when nothing there can be a code (the page says
 * that table does not exist); null for a path that is not a room's.
 */
function roomLink(pathname) {
  const link = pathname.match(/^\/r\/([A-Za-z0-9_-]*)(.*)$/);
  if (!link) return null;
  return { code: link[1], trailing: link[2] !== "" && link[2] !== "/" };
}

/** An address the site has no page at (the server answered 404 with this page: app/web/routes.py
 * ``page_not_found``): said under the site's header, with the way to the lobby. */
function noSuchPage(root) {
  replace(
    root,
    h(
      "div",
      { class: "page not-found-page" },
      pageHeader(brandMark()),
      h("main", { class: "card narrow not-found" }, h("h1", {}, t("page.not_found")), h("p", {}, h("a", { class: "btn btn-gold", href: "/" }, t("room.back_lobby")))),
    ),
  );
}

async function main() {
  const root = document.getElementById("app");
  try {
    await initI18n();
  } catch (error) {
    root.replaceChildren(h("p", { class: "fatal" }, `Domeng Online could not load its texts: ${error.message}`));
    return;
  }
  installTermTooltips();
  const room = roomLink(location.pathname);
  let page;
  if (room !== null) {
    const ctl = new RoomController(root, room.code);
    page = () => ctl.rebuild();
    if (!room.code) ctl.notFound();
    else {
      // the link as the room's own: a share link pasted with the sentence's full stop, a bracket
      // or a space after it opened the lobby, as if the table were not there
      if (room.trailing) history.replaceState(history.state, "", `/r/${room.code}${location.search}${location.hash}`);
      await ctl.init();
    }
  } else if (location.pathname.replace(/\/$/, "") === "/rules") {
    page = () => rulesPage(root);
    page();
  } else if (location.pathname === "/") {
    page = () => lobbyPage(root);
    page();
  } else {
    page = () => noSuchPage(root);
    page();
  }
  document.title = t("app.title");
  onLanguageChange(() => page());
  document.body.dataset.ready = "true";
}

main();
