// Domeng Online in the browser: picks the page from the address (/, /r/{code}, /rules).

import { h } from "./dom.js";
import { initI18n, onLanguageChange, t } from "./i18n.js";
import { lobbyPage } from "./lobby.js";
import { RoomController } from "./room.js";
import { rulesPage } from "./rules.js";
import { installTermTooltips } from "./ui.js";

async function main() {
  const root = document.getElementById("app");
  try {
    await initI18n();
  } catch (error) {
    root.replaceChildren(h("p", { class: "fatal" }, `Domeng Online could not load its texts: ${error.message}`));
    return;
  }
  installTermTooltips();
  const room = location.pathname.match(/^\/r\/([A-Za-z0-9_-]+)\/?$/);
  let page;
  if (room) {
    const ctl = new RoomController(root, room[1]);
    page = () => ctl.rebuild();
    await ctl.init();
  } else if (location.pathname.replace(/\/$/, "") === "/rules") {
    page = () => rulesPage(root);
    page();
  } else {
    page = () => lobbyPage(root);
    page();
  }
  document.title = t("app.title");
  onLanguageChange(() => page());
  document.body.dataset.ready = "true";
}

main();
