// One match: seats and options, the chart of stones (Kozel: points) across rounds, every round's
// deal, outcome and transfers, the replay viewer and the export.

import { h, replace } from "../dom.js";
import { miniTile } from "../tiles.js";
import { chatSection } from "./chat.js";
import { adminApi, when } from "./api.js";
import { resultText } from "./matches.js";
import { count, optionsText, statusWords } from "./words.js";
import { ReplayViewer } from "./replay.js";
import { closeButton } from "./rooms.js";

const COLOURS = ["#f2c14e", "#8fe3a5", "#ff9c8a", "#8ec5ff", "#d7a6ff"];

function tiles(list, vertical = true) {
  return h("span", { class: "reveal-tiles" }, list.map((t) => miniTile(t, { vertical })));
}

function drawChart(canvas, chart, pairs = false) {
  // a line drawn over an earlier one is dotted and wider, so the line under it still shows: in
  // pairs the partner's (seats 3 and 4 share 1's and 2's points, K10), else a line with the same
  // values. Pairs go by seat, not by values: both pairs can stand level (even at 0)
  const drawn = new Set();
  const datasets = chart.series.map((s, i) => {
    const key = pairs ? `pair ${s.seat % 2}` : JSON.stringify(s.values);
    const again = drawn.has(key);
    drawn.add(key);
    return {
      label: `${s.name} (Seat ${s.seat + 1})`,
      data: s.values,
      borderColor: COLOURS[i % COLOURS.length],
      backgroundColor: COLOURS[i % COLOURS.length],
      tension: 0.15,
      ...(again ? { borderDash: [2, 4], borderWidth: 4 } : {}),
    };
  });
  if (chart.table) datasets.push({ label: "table", data: chart.table, borderColor: "#b8cfc0", borderDash: [6, 4], backgroundColor: "#b8cfc0" });
  // eslint-disable-next-line no-undef
  return new Chart(canvas, {
    type: "line",
    data: { labels: chart.rounds.map((n) => `R${n}`), datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: {
        x: { title: { display: true, text: "after round", color: "#f5f1e6" }, ticks: { color: "#f5f1e6" }, grid: { color: "rgba(255,255,255,0.1)" } },
        y: { title: { display: true, text: chart.unit, color: "#f5f1e6" }, beginAtZero: true, ticks: { color: "#f5f1e6", precision: 0 }, grid: { color: "rgba(255,255,255,0.1)" } },
      },
      plugins: { legend: { labels: { color: "#f5f1e6" } } },
    },
  });
}

function actionText(a, names) {
  if (a.pass) return `${names[a.seat]} passes`;
  if (a.draw) return `${names[a.seat]} draws`;
  const tile = Array.isArray(a.play) ? a.play.join(" + ") : a.play;
  return `${names[a.seat]} plays ${tile}${a.end ? ` on ${a.end}` : ""}`;
}

/** Domeng: every penalty of the round, in order, in the engine's words. */
function transfers(round) {
  if (!round.transfers.length) return h("p", { class: "hint" }, round.outcome ? "No stones moved this round." : "No stones moved yet.");
  return h("ol", { class: "transfers" }, round.transfers.map((t) => h("li", { class: `transfer transfer-${t.reason}` }, t.action === null ? "At the end — " : `Action ${t.action + 1} — `, t.text)));
}

/** Kozel: what each seat wrote this round and its recorded and pending points after it (K8). */
function pointsTable(round, names) {
  if (!round.outcome) return h("p", { class: "hint" }, "Unfinished: no points written yet.");
  const o = round.outcome;
  const head = ["Player", "Hand", "Written", "Points", "Pending"]; // the rows are named by who sat there
  const cell = (label, text, cls = "num") => h("td", { class: cls, dataset: { label } }, text);
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "admin-table points cards" },
      // the numbers' headers sit over them, on the right
      h("thead", {}, h("tr", {}, head.map((t, i) => h("th", { scope: "col", class: i ? "num" : null }, t)))),
      h(
        "tbody",
        {},
        names.map((name, seat) =>
          h(
            "tr",
            { dataset: { seat: String(seat) } },
            h("th", { scope: "row", class: "name" }, name),
            cell("Hand", count(o.hand_values?.[seat] ?? 0, "pip")),
            cell("Written", `+${o.written?.[seat] ?? 0}`),
            cell("Points", String(o.points?.[seat] ?? 0)),
            cell("Pending", String(o.pending?.[seat] ?? 0)),
          ),
        ),
      ),
    ),
  );
}

/** Who made a stored move, in words; a move a bot made for a person is marked (issue 12). */
const ACTOR_WORDS = {
  human: "by the player",
  bot: "by the seat's bot",
  timer: "by a bot for the player: their turn timer ran out",
  cover: "by a bot covering the player's seat",
  server: "forced pass, by the server",
};

/** The words for who made a move: a person's move in a seat the host has since given to a bot
 * names that person (the seat's ``former``), since the seat's name is now the bot's. */
function actorWords(actor, seat) {
  if (actor === "human" && seat?.former) return `by ${seat.former}, before the host gave the seat to a bot`;
  return ACTOR_WORDS[actor] || actor;
}

/** A seat's kind in words: "person", "bot (medium)", "bot (medium), replacing Dewi". */
function kindText(s) {
  if (s.kind === "human") return "person";
  if (s.kind !== "bot") return s.kind;
  return s.former ? `bot (${s.bot_level}), replacing ${s.former}` : `bot (${s.bot_level})`;
}

function actionItem(action, actor, names, seats) {
  const forPerson = actor === "timer" || actor === "cover";
  return h(
    "li",
    { class: forPerson ? "by-bot" : "", dataset: { actor } },
    actionText(action, names),
    " ",
    forPerson ? h("span", { class: "by-bot-tag" }, "bot for the player") : null,
    h("span", { class: "actor" }, ` (${actorWords(actor, seats[action.seat])})`),
  );
}

/** The hints used in a round (issue 16): who, at which action, and what they were shown. */
function hintsUsed(match, round, names) {
  const used = (match.hints_used || []).filter((x) => x.round === round.index);
  if (!used.length) return null;
  return h(
    "div",
    { class: "hints-used" },
    h("h3", {}, `Hints used (${used.length})`),
    h("ul", {}, used.map((x) => h("li", { dataset: { seat: String(x.seat) } }, `${names[x.seat]}, before action ${x.seq + 1}: `, actionText(x.action, names)))),
  );
}

function roundSection(match, round, names, openReplay) {
  const hands = h(
    "table",
    { class: "admin-table deal" },
    h("tbody", {}, round.hands.map((hand, seat) => h("tr", {}, h("th", { scope: "row", class: "name" }, names[seat]), h("td", {}, tiles(hand))))),
    h("tbody", {}, h("tr", {}, h("th", { scope: "row" }, round.rest_name), h("td", {}, tiles(round.rest)))),
  );
  const outcome = round.outcome ? h("div", { class: "round-summary" }, round.summary.map((line) => h("p", {}, line))) : h("p", { class: "hint" }, "Unfinished: no outcome yet.");
  const kozel = match.chart.unit === "points";
  const [movesTitle, moves] = kozel ? ["Points", pointsTable(round, names)] : ["Stones (penalties)", transfers(round)];
  const replay = h("button", { class: "btn btn-gold open-replay", type: "button", dataset: { round: String(round.index) } }, "Replay this round");
  replay.addEventListener("click", () => openReplay(round.index));
  const agrees = round.replay_agrees === false ? h("p", { class: "warn", role: "alert" }, "The engine's replay does not give the stored outcome!") : null;
  return h(
    "details",
    { class: "round-card", dataset: { round: String(round.index) }, open: round.index === match.rounds.length - 1 },
    h("summary", {}, `Round ${round.index + 1}`, round.outcome ? ` · ${round.outcome.end}` : " · in play", ` · ${count(round.actions.length, "action")}`),
    h("div", { class: "round-body" }, h("h3", {}, "Deal"), hands, h("h3", {}, "Outcome"), outcome, agrees, h("h3", {}, movesTitle), moves, hintsUsed(match, round, names), h("details", { class: "actions-list" }, h("summary", {}, "Actions"), h("ol", {}, round.actions.map((a, i) => actionItem(a, round.actors[i], names, match.seats)))), replay),
  );
}

/** The room's matches in order (Play again): "match 2 of 3 · ← match 1 · match 3 →", each a link. */
function roomMatches(m) {
  const all = m.room_matches || [];
  const at = all.findIndex((r) => r.id === m.id);
  const link = (r, text) => h("a", { href: `/admin/matches/${r.id}`, class: "room-match", dataset: { number: String(r.number) } }, text);
  const parts = [h("span", { class: "room-code" }, m.code), ` · match ${m.room_match} of ${Math.max(all.length, 1)}`];
  // a match being played: its table, watched as a spectator (this page refreshes itself meanwhile)
  if (m.live && (m.status === "playing" || m.status === "waiting"))
    parts.push(" · ", h("a", { class: "watch-table", href: `/r/${encodeURIComponent(m.code)}`, target: "_blank", rel: "noopener" }, "watch the table live"));
  if (at > 0) parts.push(" · ", link(all[at - 1], `← match ${all[at - 1].number}`));
  if (at >= 0 && at < all.length - 1) parts.push(" · ", link(all[at + 1], `match ${all[at + 1].number} →`));
  if (all.length > 1)
    parts.push(
      h(
        "ol",
        { class: "room-matches" },
        all.map((r) => h("li", {}, r.id === m.id ? h("strong", { "aria-current": "page" }, `match ${r.number} (${r.status})`) : link(r, `match ${r.number} (${r.status})`))),
      ),
    );
  return parts;
}

/** Whether the admin may close the match's room from its page: the room's latest match, not over
 * (in memory or not: the server loads a room out of memory to close it). */
function closable(m) {
  const latest = m.room_matches.length ? m.room_matches[m.room_matches.length - 1].id : m.id;
  return latest === m.id && (m.status === "waiting" || m.status === "playing");
}

/** How often the page of a match in play asks whether the match changed, in milliseconds (while
 * its tab is shown). */
export const REFRESH_MS = 5000;

const inPlay = (m) => m.status === "waiting" || m.status === "playing";

/** What the match list says of the room's matches (``/matches?code=``: a few small rows, no
 * deals nor actions): it changes with every stored action, round, status or new match of the
 * room, so the page reads the whole match again only when this changed. */
async function mark(code) {
  const page = await adminApi("GET", `/matches?code=${encodeURIComponent(code)}&per_page=200`);
  return JSON.stringify(page.items);
}

export async function matchPage(main, id, refreshMs = REFRESH_MS) {
  let m = await adminApi("GET", `/matches/${id}`);
  const names = m.seats.map((s) => s.display_name);
  const exportLink = h("a", { id: "export-record", class: "btn btn-gold", href: `/api/admin/matches/${id}/record`, download: "" }, "Export record (domeng-record/1)");
  // one Close button for the page's life: armed by its first click, it stays armed (and focused)
  // through the refreshes
  const close = closeButton(m, () => location.reload());
  const head = h("div", { class: "match-head" });
  const viewer = new ReplayViewer(id, names); // kept through the refreshes: the step shown stays
  const rounds = h("section", { class: "rounds" });
  let reads = 0;
  const render = () => {
    const names = m.seats.map((s) => s.display_name);
    // the rounds (and their action lists) the admin opened or closed stay so; a new round opens
    const open = new Map([...rounds.querySelectorAll("details")].map((d) => [`${d.className}:${d.closest(".round-card").dataset.round}`, d.open]));
    if (main.chart) main.chart.destroy();
    main.chart = null;
    const parts = [
      h("p", {}, h("a", { href: "/admin/matches" }, "← Matches")),
      h("h1", {}, `Match #${m.id} · ${m.variant}`),
      h(
        "dl",
        { class: "facts" },
        [
          ["Status", h("span", {}, statusWords(m))],
          ["Created", when(m.created_at)],
          ["Last activity", when(m.last_active_at)],
          ["Room", roomMatches(m)],
          ["Options", optionsText(m.variant, m.options)],
          ["Turn timer", m.turn_timer_s ? `${m.turn_timer_s} s` : "off"],
          ["Result", resultText(m)],
        ].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
      ),
      h(
        "table",
        { class: "admin-table seats" },
        h("thead", {}, h("tr", {}, ["Seat", "Name", "Kind"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, m.seats.map((s) => h("tr", {}, h("td", {}, String(s.seat + 1)), h("td", { class: "name" }, s.display_name), h("td", {}, kindText(s))))),
      ),
      h("p", { class: "match-actions" }, exportLink, closable(m) ? close : null),
    ];
    if (m.replay_error) parts.push(h("p", { class: "warn", role: "alert" }, `Replay failed: ${m.replay_error}`));
    const canvas = m.chart.rounds.length ? h("canvas", { id: "stones-chart", role: "img", "aria-label": `${m.chart.unit} of each seat after each round` }) : null;
    if (canvas) parts.push(h("section", { class: "chart-box" }, h("h2", {}, m.chart.unit === "points" ? "Points across rounds" : "Stones across rounds"), h("div", { class: "chart-wrap" }, canvas)));
    replace(head, ...parts);
    if (canvas) main.chart = drawChart(canvas, m.chart, Boolean(m.options && m.options.pairs));
    replace(rounds, h("h2", {}, "Rounds"), m.rounds.map((round) => roundSection(m, round, names, (index) => viewer.open(index))));
    for (const d of rounds.querySelectorAll("details")) {
      const was = open.get(`${d.className}:${d.closest(".round-card").dataset.round}`);
      if (was !== undefined) d.open = was;
    }
    rounds.dataset.reads = String(++reads); // how many reads of the match the page shows (tests wait on it)
  };
  main.append(head, viewer.el, rounds);
  render();
  // a line said in the waiting room is told from one said just after the deal by the deal's time
  // (the stored times are UTC: one without its zone is read as such, never as the browser's)
  const firstDeal = () => {
    const first = m.rounds?.find((r) => r.index === 0);
    if (!first) return null;
    const iso = first.started_at;
    return Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(iso) ? iso : `${iso}Z`);
  };
  const chat = await chatSection(id, names, firstDeal);
  main.append(chat);
  if (!inPlay(m)) return; // a finished or abandoned match no longer changes: no refresh
  // a match in play changes under the admin's eyes (moves, rounds, status): while the tab is
  // shown, ask every few seconds whether it changed (a few small rows), and read it again only
  // then, with the round open in the replay viewer (its step stays); the scroll position stays.
  // The chat is read at every tick (a line said changes no row). A failed read is tried again at
  // the next tick.
  let seen = await mark(m.code);
  let busy = false;
  const timer = setInterval(async () => {
    if (!main.isConnected) return clearInterval(timer);
    if (document.visibilityState === "hidden" || busy) return;
    busy = true;
    try {
      const now = await mark(m.code);
      if (now !== seen) {
        m = await adminApi("GET", `/matches/${id}`);
        seen = now;
        const x = window.scrollX;
        const y = window.scrollY;
        render();
        window.scrollTo(x, y);
        await viewer.refresh();
        if (!inPlay(m)) clearInterval(timer);
      }
      await chat.refresh();
    } catch {
      // tried again at the next tick
    } finally {
      busy = false;
    }
  }, refreshMs);
}
