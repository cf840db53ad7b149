// The match page's chat: every line people typed (or reacted with), in order, with the round and
// the number of actions played in it when it was sent, so it reads beside the play. Text only.

import { adminApi } from "./api.js";
import { h } from "../dom.js";

const REACTIONS = { nice: "Nice!", oops: "Oops", hurry: "Hurry up", well_played: "Well played", hello: "Hello", thanks: "Thanks" };

/** The chat section of match ``id`` (seats named by ``names``). */
export async function chatSection(id, names) {
  const chat = await adminApi("GET", `/matches/${id}/chat`);
  const section = h("section", { class: "chat-log", id: "chat-log" }, h("h2", {}, "Chat"));
  const rules = [chat.rules.spectators ? "spectators may write" : "spectators read only"];
  if (chat.rules.muted.length) rules.push(`muted: ${chat.rules.muted.map((s) => names[s] ?? `seat ${s + 1}`).join(", ")}`);
  const spectators = chat.rules.muted_spectators || [];
  if (spectators.length) rules.push(`muted spectators: ${spectators.join(", ")}`);
  section.append(h("p", { class: "muted" }, rules.join(" · ")));
  if (!chat.lines.length) {
    section.append(h("p", {}, "Nobody wrote in the chat."));
    return section;
  }
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
  section.append(
    h(
      "table",
      { class: "admin-table chat-table" },
      h("thead", {}, h("tr", {}, ["When", "Who", "Said", "At (UTC)"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows),
    ),
  );
  return section;
}
