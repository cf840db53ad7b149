// Live rooms: what this server hosts now, and closing a stuck room (two clicks, no dialog).

import { h, replace } from "../dom.js";
import { adminApi } from "./api.js";

function seatText(s) {
  const who = s.kind === "bot" ? `bot ${s.bot_level}` : s.kind === "human" ? s.name : "empty";
  const extra = [s.connections ? `${s.connections} socket${s.connections > 1 ? "s" : ""}` : null, s.covered ? "bot covering" : null].filter(Boolean);
  return extra.length ? `${who} (${extra.join(", ")})` : who;
}

function closeButton(room, onClosed) {
  const button = h("button", { class: "btn close-room", type: "button", dataset: { code: room.code } }, "Close room");
  let armed = false;
  button.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      button.textContent = "Confirm: close it";
      button.classList.add("btn-danger");
      return;
    }
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

export async function roomsPage(main) {
  const status = h("p", { class: "hint", role: "status" });
  const body = h("div", { class: "table-wrap" });
  main.append(h("h1", {}, "Live rooms"), status, body);
  const draw = async () => {
    const data = await adminApi("GET", "/rooms");
    status.textContent = `${data.rooms.length} open room${data.rooms.length === 1 ? "" : "s"} on this server.`;
    const rows = data.rooms.map((r) =>
      h(
        "tr",
        { class: "room-row", dataset: { code: r.code } },
        h("td", {}, h("a", { href: `/admin/matches/${r.match_id}` }, `#${r.match_id}`)),
        h("td", {}, r.variant),
        h("td", {}, `${r.status}${r.phase ? ` · ${r.phase}` : ""}${r.round !== null ? ` · round ${r.round + 1}` : ""}`),
        h("td", {}, r.to_act === null ? "–" : `Seat ${r.to_act + 1}`),
        h("td", { class: "num" }, `${r.connections} (${r.spectators} watching)`),
        h("td", {}, r.seats.map(seatText).join(" · ")),
        h("td", {}, r.task_alive ? `v${r.version} · ${r.queued} queued` : "task stopped"),
        h("td", {}, closeButton(r, (closed) => {
          status.textContent = `Closed room of match #${closed.match_id}: ${closed.disconnected} socket(s) closed, task ${closed.task}, match ${closed.status}.`;
          draw();
        })),
      ),
    );
    replace(
      body,
      h(
        "table",
        { class: "admin-table rooms" },
        h("thead", {}, h("tr", {}, ["Match", "Variant", "State", "Turn", "Connections", "Seats", "Task", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 8 }, "No open room."))),
      ),
    );
  };
  await draw();
}
