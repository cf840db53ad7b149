// Live rooms: what this server hosts now, and closing a stuck room (two clicks, no dialog).

import { t } from "../i18n.js";
import { h, replace } from "../dom.js";
import { adminApi } from "./api.js";
import { count } from "./words.js";

function seatText(s) {
  const who = s.kind === "bot" ? `Bot ${s.seat + 1} (${s.bot_level})` : s.kind === "human" ? s.name : "empty";
  const extra = [s.connections ? count(s.connections, "socket") : null, s.covered ? "bot covering" : null].filter(Boolean);
  return extra.length ? `${who} (${extra.join(", ")})` : who;
}

/** A room's Close button: the first click arms it ("Confirm: close it"), the second closes. The
 * codes armed are kept in ``armed`` (the live rooms page keeps one set across its refreshes, so a
 * refresh between the two clicks does not disarm it). */
export function closeButton(room, onClosed, armed = new Set()) {
  const button = h("button", { class: "btn close-room", type: "button", dataset: { code: room.code } }, "Close room");
  const arm = () => {
    button.textContent = "Confirm: close it";
    button.classList.add("btn-danger");
  };
  if (armed.has(room.code)) arm();
  button.addEventListener("click", async () => {
    if (!armed.has(room.code)) {
      armed.add(room.code);
      arm();
      return;
    }
    armed.delete(room.code);
    button.disabled = true;
    try {
      const closed = await adminApi("POST", `/rooms/${encodeURIComponent(room.code)}/close`);
      onClosed(closed);
    } catch (error) {
      button.textContent = error.message;
    }
  });
  return button;
}

/** The room's state without saying a word twice: "playing · round 6", "playing · between rounds · round 2". */
export function stateText(r) {
  const phase = { ready: "between rounds", over: "match over" }[r.phase] ?? r.phase;
  const parts = [r.status];
  if (phase && phase !== r.status && !(r.status === "finished" && r.phase === "over")) parts.push(phase);
  if (r.round !== null) parts.push(`round ${r.round + 1}`);
  return parts.join(" · ");
}

/** How long a room has been idle (nobody connected, nothing done): "in use", "45 s", "12 min", "3 h 5 min". */
export function idleText(seconds) {
  if (!seconds) return "in use";
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What the page says when no room in memory has ``code``: the room may be stored all the same
 * (out of memory, finished, closed), so it links the room's matches in the history. */
function notOpen(code) {
  const history = h("a", { class: "room-history", href: `/admin/matches?code=${encodeURIComponent(code)}` }, "its matches in the history");
  return [`No open room with a code containing ${code}. A room nobody has opened lately is not in memory: see `, history, "."];
}

/** The room code in what an operator pastes: "Xy3_k9", "/r/Xy3_k9" or a whole link. */
export function codeOf(text) {
  const trimmed = (text || "").trim().replace(/[?#].*$/, "").replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/** How often the live rooms page reads the rooms again, in milliseconds (while its tab is shown). */
export const REFRESH_MS = 5000;

export async function roomsPage(main, refreshMs = REFRESH_MS) {
  const status = h("p", { class: "hint", role: "status" });
  const body = h("div", { class: "table-wrap" });
  const wanted = codeOf(new URLSearchParams(location.search).get("code"));
  const search = h("input", { id: "room-code", name: "code", class: "input", value: wanted, placeholder: "code or /r/ link", autocomplete: "off", spellcheck: "false" });
  const form = h("form", { class: "filters", method: "get", action: "/admin/rooms" }, h("label", { class: "filter", for: "room-code" }, h("span", {}, "Room code"), search), h("button", { class: "btn btn-gold", type: "submit" }, "Find"));
  main.append(h("h1", {}, "Live rooms"), h("p", { class: "hint live-help" }, t("admin.live_help")), form, status, body);
  let rooms = [];
  let reads = 0;
  let closedNote = ""; // the last close's report, kept through the refreshes
  const armed = new Set(); // rooms whose Close waits for its confirm, across refreshes
  const draw = async () => {
    const data = await adminApi("GET", "/rooms");
    rooms = data.rooms;
    body.dataset.reads = String(++reads); // how many reads the table shows (tests wait on it)
    show();
  };
  search.addEventListener("input", () => show());
  const show = () => {
    const code = codeOf(search.value);
    const shown = code ? rooms.filter((r) => r.code.toLowerCase().includes(code.toLowerCase())) : rooms;
    const open = `${count(rooms.length, "open room")} on this server (updated every ${refreshMs / 1000} s)`;
    status.textContent = (code ? `${open}; ${shown.length} with a code containing ${code}.` : `${open}.`) + closedNote;
    // each cell names its column (data-label): a phone shows a room as a stack of labelled lines
    const cell = (label, props, ...children) => h("td", { ...props, dataset: { label } }, ...children);
    const rows = shown.map((r) =>
      h(
        "tr",
        { class: "room-row", dataset: { code: r.code } },
        cell("Code", { class: "room-code" }, h("a", { href: `/r/${encodeURIComponent(r.code)}`, target: "_blank", rel: "noopener" }, r.code)),
        cell("Match", {}, h("a", { href: `/admin/matches/${r.match_id}` }, `#${r.match_id}`)),
        cell("Variant", {}, r.variant),
        cell("State", { class: "room-state" }, stateText(r)),
        cell("Turn", {}, r.to_act === null ? "–" : `Seat ${r.to_act + 1}`),
        cell("Connections", { class: "num" }, `${count(r.connections, "connection")} (${r.spectators} watching)`),
        cell("Idle", { class: "num room-idle" }, idleText(r.idle_s)),
        cell("Seats", { class: "room-seats" }, r.seats.map(seatText).join(" · ")),
        cell("Task", {}, r.task_alive ? `v${r.version} · ${r.queued} queued` : "task stopped"),
        h("td", { class: "room-close" }, closeButton(r, async (closed) => {
          closedNote = ` Closed room of match #${closed.match_id}: ${count(closed.disconnected, "socket")} closed, task ${closed.task}, match ${closed.status}.`;
          await draw();
        }, armed)),
      ),
    );
    replace(
      body,
      h(
        "table",
        { class: "admin-table rooms" },
        h("thead", {}, h("tr", {}, ["Code", "Match", "Variant", "State", "Turn", "Connections", "Idle", "Seats", "Task", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 10 }, code ? notOpen(code) : "No open room."))),
      ),
    );
  };
  await draw();
  // the rooms change under the admin's eyes (turns, sockets, idle times): read them again, while
  // the tab is shown; a read that fails is tried again at the next tick
  const timer = setInterval(() => {
    if (!main.isConnected) clearInterval(timer);
    else if (!document.hidden) draw().catch(() => {});
  }, refreshMs);
}
