// The room's WebSocket (docs/protocol.md): hello with the seat token, state updates, actions,
// and reconnection with backoff after a drop (same token; the next `state` restores everything).
// A reconnect of its own says which connection it resumes, so it never takes the seat from a
// window the player opened meanwhile; only a new socket or "Play here" does (`playHere`).

// Waits before each new try after a drop, the last repeated (each plus up to 30% at random, so a
// restarted server's tables do not all come back at once). Capped low: a server restart takes a few
// seconds, and a try at a server that is down costs a refused connection, nothing more.
const BACKOFF_MS = [250, 500, 1000, 2000, 3000];
/** How often a spectator the room has no place for (close 4008: it has as many as it takes) asks
 * again: a place frees when one leaves, and no faster try would find one sooner. */
const FULL_RETRY_MS = 10_000;
const WATCHER_KEY = "domeng:watcher"; // this browser's spectator key, as the server gave it
const NAME_KEY = "domeng:spectator-name"; // this browser's name in the chat while it watches, as the server took it
const PING_EVERY_MS = 10000;
const UNANSWERED_MS = 15000;
// A ping unanswered this long (or the browser saying it is offline) makes the page say the
// connection is in trouble, long before it gives the socket up (`UNANSWERED_MS`): a move waits.
const TROUBLE_MS = 4000;
// The ping that goes with a move (`ping(true)`) is held to shorter steps: the server answers a ping
// at once, before the move is even stored, so only a dead network or a stalled process leaves it
// unanswered for seconds. Unsteady after `MOVE_TROUBLE_MS`; given up after `MOVE_UNANSWERED_MS`,
// and the move goes again on the next socket (static/js/room.js `settleOutbox`). Idle sockets
// keep the slower steps above: no more frames than before while nobody acts.
const MOVE_TROUBLE_MS = 2000;
const MOVE_UNANSWERED_MS = 5000;
const TICK_MS = 1000; // how often the heartbeat looks (it sends a ping only every `PING_EVERY_MS`)
// A socket not welcomed this long after it was opened is given up and opened again: its handshake
// or its hello went out on a network path that died under it (a phone's network changing, a NAT
// forgetting it), where nothing closes and the browser would wait minutes (Chromium gives an
// opening handshake 240 s; a hello sent waits on TCP's own retries). Longer than nginx may take to
// pass a handshake on from a hung process to the next (deploy/nginx.conf: 15 s each, 30 s in all).
const WELCOME_MS = 45000;

/** The name this browser gives itself in the chat while it watches ("": none). */
export const spectatorName = () => localStorage.getItem(NAME_KEY) || "";

/**
 * Events (on ``handlers``): welcome(seat, tag), named(name), state(msg), presence(msg), error(msg),
 * chat(msg), spectators(list), status({online, reconnecting, trouble}), replaced(), seatToBot(), roomClosed(),
 * removed(), badToken(). ``spectators``: to the host alone, every spectator watching ({tag, name}).
 * ``trouble``: the socket is open but a ping has gone unanswered for `TROUBLE_MS`, or the browser
 * says it is offline; it is dropped (and reconnected) once a ping stays unanswered `UNANSWERED_MS`.
 */
export class RoomSocket {
  /** ``hostToken``: the room's host token when this browser holds it (the server learns the host is here). */
  constructor(code, token, handlers, hostToken = null) {
    this.code = code;
    this.token = token || null;
    this.hostToken = hostToken || null;
    this.on = handlers;
    this.ws = null;
    this.version = null;
    this.attempt = 0;
    this.stopped = false;
    this.welcomed = false;
    this.connection = null; // the seat's connection the last welcome named: a reconnect resumes it
    this.resumeSent = false; // this socket's hello carried `resume`
    this.savedNameSent = false; // the name kept in this browser went with this socket's first words
    this.retryTimer = null;
    this.pingTimer = null;
    this.pingSent = 0; // when the last ping went out on this socket (0: none yet)
    // a ping out that nothing heard since answers: a flag, not a time, since a message heard in
    // the same millisecond as the ping went (or under a clock held still) is not its answer
    this.unanswered = false;
    this.lastPing = 0; // when the heartbeat last sent a ping of its own
    this.urgent = false; // a move waits on the ping out: `MOVE_TROUBLE_MS`, `MOVE_UNANSWERED_MS`
    this.trouble = false; // said to the page: a ping unanswered past `TROUBLE_MS`, or offline
    this.welcomes = 0; // how many welcomes this page had: a socket's number, to tell a new one
    this.retrying = false; // a drop's retry is waiting for its backoff step
    this.parked = false; // closed for a reason a retry would not mend (replaced, room closed, seat left or given to a bot)
    // the network is back, or a phone woken up or a tab brought back while a retry waits: try now
    // rather than at the next backoff step (never for a parked socket: a window replaced by
    // another must not take the seat back by itself)
    this.onOnline = () => {
      if (!this.parked) this.reconnectNow();
    };
    this.onVisible = () => {
      if (document.visibilityState === "visible" && this.retrying) this.reconnectNow();
    };
    // the browser says the network is gone: the page says so at once (a move would wait)
    this.onOffline = () => this.setTrouble(this.online);
    window.addEventListener("online", this.onOnline);
    window.addEventListener("offline", this.onOffline);
    document.addEventListener("visibilitychange", this.onVisible);
  }

  start() {
    this.stopped = false;
    this.open();
  }

  /** Close for good (leaving the page, or switching the token). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    window.removeEventListener("online", this.onOnline);
    window.removeEventListener("offline", this.onOffline);
    document.removeEventListener("visibilitychange", this.onVisible);
    if (this.ws) {
      drop(this.ws, 1000, "bye");
      this.ws = null;
    }
  }

  get online() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN && this.welcomed;
  }

  send(message) {
    if (!this.online) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** "Play here": take the seat back from the window that has it (a hello without `resume`). */
  playHere() {
    this.connection = null;
    this.reconnectNow();
  }

  reconnectNow() {
    if (this.stopped || this.online) return;
    clearTimeout(this.retryTimer);
    if (this.ws) {
      // closed now even while it connects: it may have gone out on the network just left, and the
      // next socket would wait behind it (`drop`)
      drop(this.ws, 1000, "", true);
      this.ws = null;
    }
    this.open();
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws/rooms/${encodeURIComponent(this.code)}`);
    this.ws = ws;
    this.welcomed = false;
    this.retrying = false;
    this.parked = false;
    this.pingSent = 0;
    this.unanswered = false;
    this.lastPing = 0;
    this.urgent = false;
    this.opened = Date.now(); // when this socket was opened: welcomed within `WELCOME_MS`, or dropped
    ws.onopen = () => {
      const hello = { type: "hello", protocol: 1, token: this.token };
      // Resync by version (docs/protocol.md): the server answers with only what this client missed
      // since the last state it kept (an update the room view applies to its log), else the whole state.
      if (this.version !== null) hello.since = this.version;
      if (this.hostToken) hello.host = this.hostToken;
      // a spectator is known by the key the server gave this browser (the host can mute one)
      const watcher = !this.token && localStorage.getItem(WATCHER_KEY);
      if (watcher) hello.watcher = watcher;
      // a reconnect of this socket's own takes the seat only if no other window said hello for it
      // since (the server closes it as replaced otherwise)
      this.resumeSent = !!(this.token && this.connection);
      if (this.resumeSent) hello.resume = this.connection;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (event) => this.receive(event.data);
    ws.onclose = (event) => this.closed(event);
    ws.onerror = () => {}; // the close event follows and decides what to do
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => this.heartbeat(), TICK_MS);
  }

  /** Every ``TICK_MS``: a ping every ``PING_EVERY_MS``, answered by the server's pong (any message
   * heard after it answers it). A ping unanswered past ``TROUBLE_MS`` (``MOVE_TROUBLE_MS`` for one
   * that went with a move), or the browser offline, is said to the page (``status`` with
   * ``trouble``); still unanswered after ``UNANSWERED_MS`` (``MOVE_UNANSWERED_MS``) it means a dead
   * network or a stalled server (one stopped, say: its room moves to another process meanwhile):
   * the socket is dropped at once, without waiting for a closing handshake that may never end, and
   * the page reconnects. Counted from the ping, not from the last message, so a hidden tab whose
   * timers the browser slows down is not taken for silent. A socket not welcomed within
   * ``WELCOME_MS`` of its opening (no ping before the welcome) is dropped the same way. */
  heartbeat() {
    const now = Date.now();
    if (!this.online) {
      if (this.ws && !this.welcomed && now - this.opened > WELCOME_MS) {
        // closed now even while it connects (`drop`)
        drop(this.ws, 4000, "silent", true);
        this.closed({ code: 4000, reason: "silent" });
      }
      return;
    }
    const waiting = this.unanswered;
    const [troubleMs, unansweredMs] = this.urgent ? [MOVE_TROUBLE_MS, MOVE_UNANSWERED_MS] : [TROUBLE_MS, UNANSWERED_MS];
    if (waiting && now - this.pingSent > unansweredMs) {
      drop(this.ws, 4000, "silent");
      this.closed({ code: 4000, reason: "silent" });
      return;
    }
    this.setTrouble((waiting && now - this.pingSent > troubleMs) || navigator.onLine === false);
    if (!waiting && now - this.lastPing >= PING_EVERY_MS) this.ping();
  }

  /** A ping now, unless one is waiting for its answer. ``urgent``: the page sent a move and wants
   * to know soon whether anything answers: the ping out now, or the one already waiting (older:
   * its verdict comes no later), is held to `MOVE_TROUBLE_MS` and `MOVE_UNANSWERED_MS`. */
  ping(urgent = false) {
    if (urgent) this.urgent = true;
    if (this.unanswered) return;
    this.pingSent = this.lastPing = Date.now();
    this.unanswered = true;
    this.send({ type: "ping" });
  }

  setTrouble(trouble) {
    if (trouble === this.trouble) return;
    this.trouble = trouble;
    if (this.online) this.on.status?.({ online: true, reconnecting: false, trouble, full: false });
  }

  receive(data) {
    this.unanswered = false;
    this.urgent = false;
    if (this.trouble && navigator.onLine !== false) this.setTrouble(false);
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    switch (message.type) {
      case "welcome":
        this.welcomed = true;
        this.welcomes += 1;
        this.attempt = 0;
        this.trouble = false;
        this.connection = message.connection ?? null;
        this.on.status?.({ online: true, reconnecting: false, trouble: false, full: false });
        if (message.watcher) localStorage.setItem(WATCHER_KEY, message.watcher);
        // a spectator's name in the chat is its socket's: each new one is told it again, when the
        // server takes names (its welcome says "name"; an older server closes on a name message, and
        // the page would reconnect and send it again, over and over)
        this.savedNameSent = message.seat === null && "name" in message && !!spectatorName();
        if (this.savedNameSent) this.send({ type: "name", name: spectatorName() });
        this.on.welcome?.(message.seat, message.tag ?? null);
        break;
      case "named":
        this.savedNameSent = false;
        if (message.name) localStorage.setItem(NAME_KEY, message.name);
        else localStorage.removeItem(NAME_KEY);
        this.on.named?.(message.name ?? null);
        break;
      case "state":
        this.version = message.version;
        this.on.state?.(message);
        break;
      case "presence":
        this.on.presence?.(message);
        break;
      case "error":
        // the saved name refused (a check stricter than when it was taken): forgotten, not sent
        // again on every reconnect; the chat says why, beside its empty name box
        if (this.savedNameSent && message.code.startsWith("name_") && message.code !== "name_too_fast") {
          localStorage.removeItem(NAME_KEY);
          this.savedNameSent = false;
        }
        this.on.error?.(message);
        break;
      case "chat":
      case "chat_log":
      case "chat_rules":
        this.on.chat?.(message);
        break;
      case "spectators":
        this.on.spectators?.(message.spectators || []);
        break;
      case "hint":
      case "hint_used":
        this.on.hint?.(message);
        break;
      default:
        break; // pong
    }
  }

  closed(event) {
    const unwelcomed = !this.welcomed;
    this.ws = null;
    this.welcomed = false;
    this.trouble = false;
    clearInterval(this.pingTimer);
    if (this.stopped) return;
    this.parked = true;
    if (event.code === 4001) return this.on.replaced?.(event.reason);
    if (event.code === 4003) return this.on.roomClosed?.();
    if (event.code === 4005) return this.on.seatLeft?.(); // the seat was left (here or in another window)
    if (event.code === 4006) return this.on.removed?.(); // the host removed this spectator: no retry
    if (event.code === 4007) return this.on.seatToBot?.(); // the host gave the seat to a bot: no retry, no "Play here"
    if (event.code === 4004 && this.token) return this.on.badToken?.(); // only then is the token dead
    this.parked = false;
    if (event.code === 4008) {
      // the room has as many spectators as it takes: said as such (not "reconnecting"), asked again
      this.on.status?.({ online: false, reconnecting: false, trouble: false, full: true });
      this.retrying = true;
      this.retryTimer = setTimeout(() => this.open(), FULL_RETRY_MS + Math.random() * 2000);
      return;
    }
    // a server from before `resume` (an upgrade under way) takes no hello with it: the next without
    if (event.code === 1007 && this.resumeSent && unwelcomed) this.connection = null;
    // a frame over the server's size limit (1009, 4 KiB by default) was dropped with the socket:
    // said, not only "reconnecting" (a chat line past the box's limit, pasted around it)
    if (event.code === 1009) this.on.tooBig?.();
    this.on.status?.({ online: false, reconnecting: true, trouble: false, full: false });
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.retrying = true;
    this.retryTimer = setTimeout(() => this.open(), base + Math.random() * base * 0.3);
  }
}

/**
 * Let go of a socket without hearing from it again: closed now, or, while it is still connecting,
 * as soon as it opens (closing a connecting socket makes the browser log an error), unless ``now``:
 * a handshake that may never end, behind which the next socket would wait (a browser opens one
 * socket to a server at a time, RFC 6455 4.1).
 */
function drop(ws, code = 1000, reason = "", now = false) {
  ws.onclose = null;
  ws.onmessage = null;
  ws.onerror = null;
  if (ws.readyState === WebSocket.CONNECTING && !now) ws.onopen = () => ws.close(code, reason);
  else ws.close(code, reason);
}
