// The match page's chat: every line people typed (or reacted with), in order, with the round and
// the number of actions played in it when it was sent, so it reads beside the play. Text only.

import { adminApi } from "./api.js";
import { h, replace } from "../dom.js";

const REACTIONS = { nice: "Nice!", oops: "Oops", hurry: "Hurry up", well_played: "Well played", hello: "Hello", thanks: "Thanks" };

function draw(section, chat, names) {
  const rules = [chat.rules.spectators ? "spectators may write" : "spectators read only"];
  if (chat.rules.muted.length) rules.push(`muted: ${chat.rules.muted.map((s) => names[s] ?? `seat ${s + 1}`).join(", ")}`);
  const spectators = chat.rules.muted_spectators || [];
  if (spectators.length) rules.push(`muted spectators: ${spectators.join(", ")}`);
  section.dataset.lines = String(chat.lines.length); // tests wait on it
  const parts = [h("h2", {}, "Chat"), h("p", { class: "muted" }, rules.join(" · "))];
  if (!chat.lines.length) return replace(section, ...parts, h("p", {}, "Nobody wrote in the chat."));
  const rows = chat.lines.map((line) =>
    h(
      "tr",
      {},
      h("td", { "data-label": "When" }, `Round ${line.round + 1}, after ${line.seq} action${line.seq === 1 ? "" : "s"}`),
      h("td", { "data-label": "Who", class: "name" }, line.seat === null ? `${line.name || "spectator"} (spectator${line.watcher ? ` ${line.watcher}` : ""})` : names[line.seat] ?? line.name),
      h("td", { "data-label": "Said", class: "chat-text", dir: "auto" }, line.text ?? `[reaction] ${REACTIONS[line.reaction] ?? line.reaction}`),
      h("td", { "data-label": "At" }, new Date(line.at).toISOString().replace("T", " ").slice(0, 19)),
    ),
  );
  return replace(
    section,
    ...parts,
    h(
      "table",
      { class: "admin-table chat-table" },
      h("thead", {}, h("tr", {}, ["When", "Who", "Said", "At (UTC)"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows),
    ),
  );
}

/** The chat section of match ``id`` (seats named by ``names``). Its ``refresh()`` reads the chat
 * again and draws it anew only when it changed (the page of a match in play calls it). */
export async function chatSection(id, names) {
  let chat = await adminApi("GET", `/matches/${id}/chat`);
  const section = h("section", { class: "chat-log", id: "chat-log" });
  draw(section, chat, names);
  section.refresh = async () => {
    const now = await adminApi("GET", `/matches/${id}/chat`);
    if (JSON.stringify(now) === JSON.stringify(chat)) return;
    chat = now;
    draw(section, chat, names);
  };
  return section;
}
