// HTTP calls of docs/protocol.md, and what this browser keeps per room in localStorage (and, per
// tab, the feed's finished rounds in sessionStorage).

/** Call the JSON API; throws an Error with ``code``, ``status``, ``retryAfter`` (seconds, or null)
 * and the server's message. */
export async function api(method, path, body, hostToken) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (hostToken) headers.Authorization = `Bearer ${hostToken}`;
  const reply = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try {
    data = await reply.json();
  } catch {
    data = null;
  }
  if (!reply.ok) {
    const detail = data?.detail;
    let message = reply.statusText;
    let code = `http_${reply.status}`;
    if (Array.isArray(detail)) {
      message = detail.map((d) => d.msg).join("; ");
      code = "invalid";
    } else if (detail && typeof detail === "object") {
      message = detail.message ?? message;
      code = detail.code ?? code;
    }
    const error = new Error(message);
    error.code = code;
    error.status = reply.status;
    error.retryAfter = Number(reply.headers.get("Retry-After")) || null; // seconds, on a 503 or 429
    throw error;
  }
  return data;
}

export const createRoom = (body) => api("POST", "/api/rooms", body);
export const getRoom = (code) => api("GET", `/api/rooms/${encodeURIComponent(code)}`);
// "Your tables": up to 8 rooms' status, game and seats at once, without loading them on the server
export const roomStatuses = (codes) => api("GET", `/api/rooms/status?codes=${codes.map(encodeURIComponent).join(",")}`);
// the spectator key this browser holds (connection.js keeps it): a host's mute of this spectator
// goes with them to the seat, and one of another person at this address does not
export const claimSeat = (code, seat, name) => {
  const watcher = localStorage.getItem("domeng:watcher");
  return api("POST", `/api/rooms/${encodeURIComponent(code)}/seats/${seat}`, watcher ? { name, watcher } : { name });
};
export const leaveSeat = (code, seat, token) =>
  api("DELETE", `/api/rooms/${encodeURIComponent(code)}/seats/${seat}`, undefined, token);
export const setBot = (code, seat, level, hostToken) =>
  api("PUT", `/api/rooms/${encodeURIComponent(code)}/seats/${seat}/bot`, { level }, hostToken);
export const setOpenTable = (code, open, hostToken) =>
  api("PUT", `/api/rooms/${encodeURIComponent(code)}/open`, { open }, hostToken);
export const setChatRules = (code, rules, hostToken) =>
  api("PUT", `/api/rooms/${encodeURIComponent(code)}/chat`, rules, hostToken);
/** The host removes the spectator whose chat lines carry ``tag``: its sockets close (4006). */
export const removeSpectator = (code, tag, hostToken) =>
  api("DELETE", `/api/rooms/${encodeURIComponent(code)}/spectators/${encodeURIComponent(tag)}`, undefined, hostToken);
/** Play again (a seat's token, or the host's): the room's next match, or this seat ready for it. */
export const playAgain = (code, token) =>
  api("POST", `/api/rooms/${encodeURIComponent(code)}/again`, undefined, token);
/** The host's options and turn timer before the start: ``{options, turn_timer_s}``. */
export const setOptions = (code, body, hostToken) =>
  api("PUT", `/api/rooms/${encodeURIComponent(code)}/options`, body, hostToken);
export const stopMatch = (code, stop, hostToken) =>
  api("PUT", `/api/rooms/${encodeURIComponent(code)}/stop`, { stop }, hostToken);
export const startMatch = (code, hostToken) =>
  api("POST", `/api/rooms/${encodeURIComponent(code)}/start`, undefined, hostToken);

export const verifyUrl = (seed, commitment, variant = "domeng", seats = 5) =>
  `/api/deals/verify?${new URLSearchParams({ seed, commitment, variant, seats: String(seats) })}`;

// -- localStorage: one entry per room (host token, seat token, seat, name) -------------------

const roomKey = (code) => `domeng:room:${code}`;

/** What this browser holds for room ``code``: {host_token?, token?, seat?, name?}. */
export function roomMemory(code) {
  try {
    return JSON.parse(localStorage.getItem(roomKey(code)) || "{}") || {};
  } catch {
    return {};
  }
}

/** Change what this browser holds for room ``code`` (a null value forgets that key); ``at`` says
 * when (ms since the epoch: the lobby's "Your tables" lists the latest first). The new memory. */
export function remember(code, changes) {
  const next = { ...roomMemory(code), ...changes, at: Date.now() };
  for (const [key, value] of Object.entries(next)) if (value === null || value === undefined) delete next[key];
  localStorage.setItem(roomKey(code), JSON.stringify(next));
  return next;
}

/** The rooms this browser holds a host's or a seat's token for, the latest remembered first:
 * [{code, host, seat, name}] (``host``: it holds the host's token; ``seat``: its seat, or null).
 * Nothing of the tokens themselves. */
export function heldRooms() {
  const held = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key?.startsWith("domeng:room:")) continue;
    const code = key.slice("domeng:room:".length);
    const memory = roomMemory(code);
    if (!memory.host_token && !memory.token) continue;
    const seat = memory.token && Number.isInteger(memory.seat) ? memory.seat : null;
    held.push({ code, host: !!memory.host_token, seat, name: memory.name || "", at: Number(memory.at) || 0 });
  }
  return held.sort((a, b) => b.at - a.at);
}

/** This browser opened room ``code`` (its page connected to it): when is kept (`remember`'s
 * ``at``) for "Your tables", which says it and lists the latest first, if it holds a host's or a
 * seat's token for it; a room it only watches leaves nothing here. */
export function touchRoom(code) {
  const memory = roomMemory(code);
  if (memory.host_token || memory.token) remember(code, {});
}

/** Forget room ``code`` (the server no longer knows it): its tokens go from this browser. */
export function forgetRoom(code) {
  localStorage.removeItem(roomKey(code));
}

export const savedName = () => localStorage.getItem("domeng:name") || "";
export const saveName = (name) => localStorage.setItem("domeng:name", name);

// -- sessionStorage: the feed's finished rounds, per tab -----------------------------------------
// A whole state carries only the round in play (docs/protocol.md), so a reload would forget the
// rounds before it; the tab keeps the ones it was sent (all public once a round has ended).

// "feed2": feeds kept before settlements carried their `received` (and Kozel views their `goal`, `sides`)
// are not read back.
const feedKey = (code) => `domeng:feed2:${code}`;

/** The finished rounds this tab kept for room ``code``: [{round, log, room}], maybe empty. */
export function savedFeed(code) {
  try {
    const rounds = JSON.parse(sessionStorage.getItem(feedKey(code)) || "[]");
    return Array.isArray(rounds) ? rounds.filter((r) => Number.isInteger(r?.round) && Array.isArray(r.log) && r.room) : [];
  } catch {
    return [];
  }
}

export function saveFeed(code, rounds) {
  try {
    sessionStorage.setItem(feedKey(code), JSON.stringify(rounds));
  } catch {
    // storage full or refused: after a reload the feed starts from the round in play, as before
  }
}

// The last round's end as this tab's table showed it ({match, round, view, room, seed, commitment,
// seat}): a reload in the middle of the next round offers "Round results" from it as it was shown,
// from this seat, even where the whole state has no `round_before` (`RoomController.restoreRoundEnd`).
const roundEndKey = (code) => `domeng:round-end:${code}`;

/** The round end this tab kept for room ``code`` (`saveRoundEnd`), or null. */
export function savedRoundEnd(code) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(roundEndKey(code)) || "null");
    return Number.isInteger(kept?.match) && Number.isInteger(kept.round) && kept.view && kept.room ? kept : null;
  } catch {
    return null;
  }
}

/** Keep ``roundEnd`` (with its match's number) for a reload of this tab; null forgets it. */
export function saveRoundEnd(code, roundEnd) {
  try {
    if (roundEnd) sessionStorage.setItem(roundEndKey(code), JSON.stringify(roundEnd));
    else sessionStorage.removeItem(roundEndKey(code));
  } catch {
    // storage full or refused: after a reload the bar offers this round's results once it ends
  }
}
