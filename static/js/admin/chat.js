// The match page's chat: every line people typed (or reacted with), in order, with the round and
// the number of actions played in it when it was sent, so it reads beside the play. Text only.

import { adminApi } from "./api.js";
import { h, replace } from "../dom.js";

const REACTIONS = { nice: "Nice!", oops: "Oops", hurry: "Hurry up", well_played: "Well played", hello: "Hello", thanks: "Thanks" };

/** When a line was said: before the match's first deal (in its waiting room: stored as round 1
 * after 0 actions, as a line said just after the deal is, told apart by the deal's time
 * ``firstDeal``, Unix ms, null while none was dealt), else its round and the actions played. */
function whenSaid(line, firstDeal) {
  if (line.round === 0 && line.seq === 0 && (firstDeal === null || line.at < firstDeal)) return "Before the first deal";
  return `Round ${line.round + 1}, after ${line.seq} action${line.seq === 1 ? "" : "s"}`;
}

function draw(section, chat, names, firstDeal) {
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
      h("td", { "data-label": "When" }, whenSaid(line, firstDeal)),
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

/** The chat section of match ``id`` (seats named by ``names``; ``firstDeal()``: when its first round
 * was dealt, Unix ms, or null). Its ``refresh()`` reads the chat again and draws it anew only when
 * it changed (the page of a match in play calls it). */
export async function chatSection(id, names, firstDeal = () => null) {
  let chat = await adminApi("GET", `/matches/${id}/chat`);
  const section = h("section", { class: "chat-log", id: "chat-log" });
  let dealt = firstDeal();
  draw(section, chat, names, dealt);
  section.refresh = async () => {
    const now = await adminApi("GET", `/matches/${id}/chat`);
    if (JSON.stringify(now) === JSON.stringify(chat) && firstDeal() === dealt) return;
    chat = now;
    dealt = firstDeal();
    draw(section, chat, names, dealt);
  };
  return section;
}
