// A room's page (/r/{code}): the waiting room and seat picking, then the table; the WebSocket,
// reconnection banners, the "I'm back" button and the round-end panel.

import { claimSeat, getRoom, leaveSeat, playAgain, setOpenTable, setOptions, remember, roomMemory, saveFeed, savedFeed, saveName, saveRoundEnd, savedRoundEnd, savedName, setBot, startMatch, stopMatch, touchRoom } from "./api.js";
import { KOZEL_SEATS, TARGETS, TIMER_MAX_S, TIMER_MIN_S, timerSeconds } from "./lobby.js";
import { RoomSocket } from "./connection.js";
import { clearToasts, h, replace, setStyle, toast } from "./dom.js";
import { errorText, has, t, tf } from "./i18n.js";
import { BOT_LEVELS, botLabel } from "./bots.js";
import { seatName } from "./narrate.js";
import { roundEndPanel } from "./roundend.js";
import { ChatBox } from "./chat.js";
import { brandMark, TableView } from "./table.js";
import { copyLinkButton, languageSelect, pageHeader, shareUrl } from "./ui.js";


export class RoomController {
  constructor(root, code) {
    this.root = root;
    this.code = code;
    this.memory = roomMemory(code);
    this.room = null;
    this.view = null;
    this.version = null;
    this.seat = null;
    // the seat a window showed when another window took it (the socket's 4001): the table goes on
    // showing it from there, dimmed, never from another seat or as a spectator's (table.js ownSeat)
    this.replacedSeat = null;
    this.watcherTag = null; // a spectator's public tag in this room (static/js/chat.js: the host may mute it)
    this.spectatorName = null; // the name the server holds for this spectator's socket in the chat (null: none)
    this.spectatorsHere = []; // to the host alone: every spectator watching, {tag, name} (static/js/chat.js)
    this.deadline = null;
    this.rounds = new Map();
    this.roundEnd = null;
    this.dismissedRound = null;
    this.panel = null;
    this.screen = null;
    this.socket = null;
    this.connection = { online: false, reconnecting: false, replaced: false, closed: false, trouble: false };
    // the move sent and not yet answered (`sendAction`): {action, version, welcome, resent}
    this.outbox = null;
    this.answeredResent = false; // the last move answered was sent twice: a stale copy is no news
    this.langKey = "";
    this.chat = null; // the chat's rules and lines (static/js/chat.js draws them at the table)
    this.match = null; // the room's match number (Play again starts the next)
    this.lastMatchEnd = null; // the last match's final panel, shown again from the next one's waiting room
    this.againAskedIn = null; // the match at whose end this page pressed Play again: its next closes the final panel
    this.heldFinal = false; // the open panel is the last match's, kept while it is read
    this.starting = false; // a start request is out: the Start button waits for its answer
    this.timedOut = null; // this seat's last move a bot made when its turn timer ran out (`noteTimedOut`)
    // came by the lobby's Join (``?join``, static/js/opentables.js): said so if no seat is left
    this.fromList = new URLSearchParams(location.search).has("join");
    window.__domeng = this;
  }

  get hostToken() {
    return this.memory.host_token || null;
  }

  /** Whether this page is the deputy: the host is away and the server named this seat to start
   * (and set up) the match in their stead (docs/protocol.md, "When the host is away"). */
  get isDeputy() {
    return !this.hostToken && this.seat !== null && this.room?.host?.deputy === this.seat;
  }

  /** The token for starting and setting up the match: the host's, or the deputy seat's. */
  get starterToken() {
    return this.hostToken || (this.isDeputy ? this.memory.token : null);
  }

  async init() {
    try {
      this.room = await this.firstRead();
    } catch (error) {
      if (error.status === 404) return this.notFound();
      if (error.code === "too_many_reads") return this.notFound("error.too_many_reads");
      throw error;
    }
    this.banner = h("div", { class: "banner", hidden: true, role: "status", "aria-live": "assertive" });
    this.notice = h("div", { class: "room-notice", hidden: true, role: "alert" });
    // the link shared or kept is the room's own, without the lobby's mark
    if (this.fromList) history.replaceState(history.state, "", location.pathname);
    this.main = h("div", { class: "room-main" });
    // the banner takes its own strip above the page; at the table it shows over the felt's top,
    // so a dropped connection moves nothing but a chain under it (static/css/app.css)
    this.page = h("div", { class: "room-page" }, this.banner, this.notice, this.main);
    // at the table the toasts come under the top bar, and under this banner while it shows: its
    // height (0 while hidden), heard from the layout, is said on the toasts' box (#toasts in
    // static/css/app.css), not on the page's body, whose every element would inherit it
    this.bannerSized = new ResizeObserver(([entry]) => {
      const height = Math.ceil(entry.borderBoxSize?.[0]?.blockSize ?? this.banner.offsetHeight);
      const toasts = document.getElementById("toasts");
      if (!toasts) return;
      if (height) setStyle(toasts, "--banner-h", `${height}px`);
      else toasts.style.removeProperty("--banner-h");
    });
    this.bannerSized.observe(this.banner);
    replace(this.root, this.page);
    this.render([]);
    this.connect();
  }

  /** The room's first read. A 503 says "try again" (the room is moving between server processes,
   * one of which is stopping, or its lease cannot be checked now: docs/deploy.md, "Adding and
   * removing a process"): asked again after its Retry-After, as the socket reconnects, for up to
   * 30 s; then, or on any other error, it throws. */
  async firstRead() {
    const until = Date.now() + 30_000;
    for (;;) {
      try {
        return await getRoom(this.code);
      } catch (error) {
        if (error.status !== 503 || Date.now() > until) throw error;
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfter ?? 1) * 1000));
      }
    }
  }

  /** No such room: the site's header (brand, Rules, language), the reason and the way to the lobby. */
  /** The page of a room that cannot be shown: not found, or ``reason`` (a catalog key: the
   * address read too much, docs/protocol.md), with the way back to the lobby. */
  notFound(reason = null) {
    this.refused = reason;
    replace(
      this.root,
      h(
        "div",
        { class: "page not-found-page" },
        pageHeader(brandMark()),
        h("main", { class: "card narrow not-found" }, h("h1", {}, t(reason ?? "room.not_found")), h("p", {}, h("a", { class: "btn btn-gold", href: "/" }, t("room.back_lobby")))),
      ),
    );
  }

  // -- the socket ------------------------------------------------------------------------------

  connect() {
    this.socket?.stop();
    this.socket = new RoomSocket(this.code, this.memory.token, {
      welcome: (seat, tag) => this.onWelcome(seat, tag),
      named: (name) => {
        this.spectatorName = name;
        this.screen?.chatBox?.onNamed();
      },
      state: (message) => this.onState(message),
      presence: (message) => {
        // who is here and covered, and the turn's deadline (armed when a covered player is back)
        if (this.room) {
          const keepWatching = message.keep_watching ?? this.room.keep_watching;
          this.room = { ...this.room, seats: message.seats, host: message.host ?? this.room.host, turn: message.turn ?? this.room.turn, keep_watching: keepWatching };
        }
        this.setDeadline();
        this.render([]);
        this.clearTheHand();
      },
      error: (message) => this.onError(message),
      chat: (message) => this.onChat(message),
      spectators: (list) => {
        this.spectatorsHere = list;
        this.screen?.chatBox?.drawHost();
      },
      hint: (message) => this.screen?.onHint?.(message),
      status: (status) => {
        this.connection = { ...this.connection, ...status, replaced: false };
        this.updateBanner();
      },
      replaced: () => {
        // Another window has the seat now: this one stops acting for it (no "your turn", no moves)
        // until "use it here" reconnects; the page's memory keeps the token for that.
        this.connection = { ...this.connection, online: false, replaced: true };
        this.replacedSeat = this.seat ?? this.replacedSeat;
        this.seat = null;
        this.closePanel(); // nothing may stand between the player and "play here"
        this.updateBanner();
        this.render([]);
      },
      roomClosed: () => {
        // nothing more can be played: the table stops inviting a move (its status says closed)
        this.connection = { ...this.connection, online: false, closed: true };
        this.updateBanner();
        this.render([]);
      },
      removed: () => {
        // the host removed this spectator: the page follows the room no more and says why. It does
        // not reconnect by itself; as for a player whose seat the host gave to a bot, opening the
        // room again watches it
        this.connection = { ...this.connection, online: false, closed: true, removed: true };
        this.updateBanner();
        this.render([]);
      },
      seatToBot: () => {
        // the host gave this seat to a bot: its token opens nothing now (forgotten, so a reload
        // watches). The page says so, offers to watch or go to the lobby, and never "Play here"
        // (no window of this person holds the seat: another hello would only be refused)
        this.memory = remember(this.code, { token: null, seat: null });
        this.connection = { ...this.connection, online: false, closed: true, seatToBot: true };
        this.closePanel(); // nothing may stand between the player and why their seat went
        this.updateBanner();
        this.render([]);
      },
      seatLeft: () => this.forgetSeat(),
      tooBig: () => toast(t("error.frame_too_big"), "error"),
      badToken: () => {
        this.memory = remember(this.code, { token: null, seat: null });
        this.seat = null;
        toast(t("room.seat_lost"), "info", 6000);
        this.connect();
      },
    }, this.hostToken);
    this.socket.start();
  }

  onWelcome(seat, tag) {
    this.seat = seat;
    this.replacedSeat = null;
    this.watcherTag = tag;
    if (seat !== null && this.memory.seat !== seat) this.memory = remember(this.code, { seat });
    else touchRoom(this.code); // when this browser was last here: the lobby's "Your tables" says it
  }

  onState(message) {
    const view = message.view;
    const match = message.room?.match ?? 1;
    if (this.match !== null && match !== this.match) this.newMatch(match, message.room);
    this.match = match;
    this.keepPrevious(message.previous, message.room);
    const whole = !!view && "log" in view;
    if (view && !whole) {
      // An update: the view without its log, and the round's events from index `from` on.
      const before = this.view && this.view.round === view.round ? this.view.log : [];
      if (!before || before.length < message.from) {
        this.socket.send({ type: "sync" }); // missed part of the round: ask for the whole state
        return;
      }
      view.log = before.slice(0, message.from).concat(message.events || []);
    }
    this.version = message.version;
    this.tellStop(message.room);
    this.noteTimedOut(message, this.room);
    // the room as the narration reads it: the server's room, with the view's rule facts (goal, sides)
    this.room = view ? { ...message.room, goal: view.goal, sides: view.sides } : message.room;
    this.view = view;
    this.setDeadline();
    if (view) {
      if (!this.rounds.size) this.restoreFeed(view.round);
      // a whole state mid-round (opened, reloaded, back from a gap): the round before, if not held
      if (whole && view.phase === "playing" && view.round > 1 && !(this.roundEnd?.round >= view.round - 1)) this.restoreRoundEnd(view.round, message.round_before);
      this.rounds.set(view.round, { round: view.round, log: view.log, room: this.room });
      for (const key of [...this.rounds.keys()]) if (key < view.round - 2) this.rounds.delete(key);
      this.keepFeed();
      if (view.phase !== "playing" && view.outcome && view.reveal) this.captureRoundEnd();
    }
    this.settleOutbox(message.version);
    this.render(message.events || []);
    this.clearTheHand();
  }

  /**
   * A move a bot made for this page's own seat because its turn timer ran out (docs/protocol.md,
   * "Turns, timers and bots"): an event of ``message`` (an update) at one of the round's public
   * ``by_bot`` indexes that is this seat's tile placed or pass, while no bot covered the seat
   * before or after it in ``before`` (the room this page held) and the message's room: a covering
   * bot's moves are the cover note's, and a seat is covered (`presence`) before its first one.
   * Kept as ``timedOut`` (``{round, at, event}``, ``at`` its index in the round's log) for the
   * table's note until this seat's next move that no bot made, or the next match; nothing new is
   * asked of the server, and other pages see only the feed's "bot for …" tag.
   */
  noteTimedOut(message, before) {
    const seat = this.seat;
    const events = message.events || [];
    if (seat === null || !events.length || !message.view) return;
    const byBot = new Set(message.room?.round?.by_bot || []);
    const covered = !!before?.seats?.[seat]?.covered || !!message.room?.seats?.[seat]?.covered;
    events.forEach((event, k) => {
      if (event.seat !== seat || (event.type !== "placed" && event.type !== "passed")) return;
      const at = message.from + k;
      if (!byBot.has(at)) this.timedOut = null;
      else if (!covered) this.timedOut = { round: message.view.round, at, event };
    });
  }

  /** The note of a timed-out turn read (its close button): it goes. */
  dismissTimedOut() {
    this.timedOut = null;
    this.render([]);
  }

  /**
   * The move this page sent, after a state of ``version``: answered by any later version (the move
   * stored, or something else that the table now shows: the hand is free again). A state of the
   * same version that came on a newer socket than the move (a reconnect's update or whole state)
   * means the move was never answered: it went into a socket that died (the browser may hold its
   * frames while offline and drop them with the socket). It is sent again, once per socket, while
   * it is still a legal move of the turn; else dropped. Either way nothing is played twice: the
   * server refuses a move made at a version some move followed (`stale_version`). A socket that
   * was not dropped may still answer (a slow network): nothing is done while it is the same one.
   */
  settleOutbox(version) {
    const box = this.outbox;
    if (!box) return;
    if (version !== box.version) {
      this.answeredResent = box.resent; // a copy may still come back refused (`onError`)
      this.outbox = null;
      return;
    }
    if (box.welcome === this.socket?.welcomes) return; // still the socket it went on: wait
    const still = this.view?.to_act === this.seat && (this.view?.legal || []).some((legal) => sameAction(legal, box.action));
    if (still && this.socket.send({ type: "action", version: box.version, action: box.action })) {
      this.outbox = { ...box, welcome: this.socket.welcomes, resent: true };
      this.socket.ping(true);
    } else this.outbox = null;
  }

  /**
   * The room moved on to its next match (Play again): nothing of the last one's rounds may mix
   * with the new one's (its round numbers start again), so the feed and the round-end panel start
   * afresh; the last match's final panel stays at hand for the waiting room. A player still
   * reading that panel when someone else pressed Play again keeps it until they close it (or
   * press Play again in it), or until that match is dealt (`foldLastMatch`): the waiting room is
   * behind it.
   */
  newMatch(match, room) {
    const final = this.roundEnd?.view?.match_over ? this.roundEnd : null;
    if (final) this.lastMatchEnd = final;
    if (final && this.panel && this.againAskedIn !== this.match) {
      this.heldFinal = true;
      this.panel.foldOnDeal = true; // until that match is dealt (`foldLastMatch`)
      // it says so, and its Play again joins that match; a spectator's, its Take a seat
      this.panel.setNextMatch?.(match, false, this.seatOffer(room));
    } else this.closePanel();
    this.againAskedIn = null;
    this.timedOut = null;
    this.roundEnd = null;
    this.dismissedRound = null;
    this.view = null;
    this.rounds.clear();
    this.keptFeed = "";
    saveFeed(this.code, []);
    saveRoundEnd(this.code, null);
  }

  /** Whether the bar offers "Previous match" (the last match's final panel, `lastMatchEnd`): only
   * until this match's first round ends. After that, the last round's results are this match's
   * (`roundEnd`, `restoreRoundEnd`), and a page that has none of them (a room loaded again sends
   * no ``round_before``) offers nothing rather than the last match's as if they were this one's. */
  offersLastMatch() {
    return !!this.lastMatchEnd && (!this.view || this.view.round <= 1);
  }

  /** The room's last match as it ended, from a whole state's ``previous`` (docs/protocol.md):
   * what "Previous match" opens after a reload, as this page would have kept it (`newMatch`) had
   * it seen that match end; one it kept itself (its own seat's) stays. This page's seat is its
   * seat in that match when the same person held it then (Play again keeps seats and tokens). */
  keepPrevious(previous, now) {
    if (!previous?.view || this.lastMatchEnd?.room?.match === previous.room.match) return;
    const { view, room } = previous;
    const seed = room.round?.seed || room.last_round?.seed || null;
    const commitment = room.round?.commitment || room.last_round?.commitment || null;
    const snap = { ...room, goal: view.goal, sides: view.sides };
    const held = this.seat !== null && room.seats[this.seat]?.kind === "human" && room.seats[this.seat]?.name === now?.seats?.[this.seat]?.name;
    this.lastMatchEnd = { round: view.round, view, room: snap, seed, commitment, seat: held ? this.seat : null };
  }

  /** The turn timer's end on this clock, from the room's ``turn.deadline_ms`` (or null). */
  setDeadline() {
    const turn = this.room?.turn;
    if (turn?.deadline_ms && this.room.turn_timer_s > 0) {
      const total = this.room.turn_timer_s * 1000;
      this.deadline = Date.now() + Math.max(0, Math.min(total, turn.deadline_ms - Date.now()));
    } else this.deadline = null;
  }

  /** Whether this player's turn timer is running now: then nothing may cover the hand. */
  myTimerRuns() {
    return this.deadline !== null && !!this.screen?.isMyTurn?.();
  }

  /**
   * Nothing covers the hand while its turn timer runs: on this player's turn with a timer, the
   * round-end panel folds away (the bar's "round results" reopens it after the move) and the feed
   * drawer closes. Once the next round is dealt, the panel folds away too, but not while the
   * player is reading it (``panel.inUse``: a phone's panel for its reading time, and once touched
   * until closed; a mouse over it, or a scroll, click or key in it lately) or asked for it again
   * (the bar's "round results"): it says the next round has started, or that it is their turn,
   * and goes when they are done (looked at again every second) or when a turn timer of theirs
   * starts. Without a turn timer nothing hurries them, so it may stay on their turn, saying so.
   */
  clearTheHand() {
    const dealt = this.roundEnd && this.view && this.view.round > this.roundEnd.round;
    const myTurn = !!this.screen?.isMyTurn?.();
    const hurry = this.myTimerRuns();
    if (this.panel?.foldOnDeal && this.view && this.room?.status !== "waiting") this.foldLastMatch(hurry);
    if (this.panel && (dealt || hurry) && !this.view?.match_over) {
      if (!hurry && (this.panelAsked || this.panel.inUse?.())) {
        this.panel.setNext?.(true, myTurn);
        this.readingTimer ??= setInterval(() => this.clearTheHand(), 1000);
      } else {
        this.dismissedRound = this.roundEnd?.round ?? null;
        this.closePanel();
      }
    }
    // the turn comes: the feed drawer steps aside (opened again on the turn, it ends above the
    // hand), but not from a line being written in its chat: it stays there, above the hand
    if (myTurn && !this.wasMyTurn && !this.writingInFeed()) this.screen?.toggleFeed?.(false);
    this.wasMyTurn = myTurn;
  }

  /** Whether the player is writing in the feed drawer's chat (its box has the focus): closing the
   * drawer then took the line from under their fingers, and a phone's keyboard with it. */
  writingInFeed() {
    const input = this.screen?.chatBox?.input;
    return !!input && document.activeElement === input && !!this.screen.el?.classList.contains("feed-open");
  }

  /** Everyone hears when the host asks to end the match after this round, or takes it back (the
   * note above the hand says it as long as it stands). */
  tellStop(room) {
    const was = this.room;
    if (!room || !was || was.match !== room.match || room.status !== "playing") return;
    if (typeof room.host_stop !== "boolean" || was.host_stop === room.host_stop) return;
    toast(t(room.host_stop ? "stop.note" : "stop.kept"), "info", 6000);
  }

  /** The host ends the no-limit match after the round in play (``stop``), or takes that back; the
   * room's next state shows it to everyone. */
  async stopMatch(stop) {
    try {
      await stopMatch(this.code, stop, this.hostToken);
    } catch (error) {
      toast(errorText(error), "error");
    }
    if (this.screen) this.screen.stopAsking = false;
    this.render([]);
  }

  /**
   * The next match is dealt: the last match's final panel, kept while it was read (`newMatch`) or
   * opened from the waiting room, folds away as a round's does (`clearTheHand`): at once, or, while
   * the player is reading it (``panel.inUse``) and no turn timer of theirs runs, once they are done
   * (looked at again every second), saying meanwhile that the match has started. The bar's "last
   * match" button opens it again until this match's first round ends.
   */
  foldLastMatch(hurry) {
    if (!hurry && this.panel.inUse?.()) {
      this.panel.setNextMatch?.(this.match, true);
      this.readingTimer ??= setInterval(() => this.clearTheHand(), 1000);
    } else this.closePanel();
  }

  captureRoundEnd() {
    const { view, room } = this;
    // the host ended the match between rounds: the round's panel, already shown, becomes the final one
    const ended = view.match_over && this.roundEnd?.round === view.round && !this.roundEnd.view.match_over;
    if ((this.roundEnd?.round === view.round && !ended) || this.connection.replaced) return;
    const last = room.last_round;
    const seed = room.round?.seed || (last && last.index === room.round?.index ? last.seed : null);
    const commitment = room.round?.commitment || last?.commitment || null;
    this.roundEnd = { round: view.round, view, room, seed, commitment, seat: this.seat };
    saveRoundEnd(this.code, { match: this.match, ...this.roundEnd });
    if (this.dismissedRound !== view.round || ended) this.openRoundEnd();
  }

  /** A page opened or reloaded in the middle of round ``current``: the round before it as it
   * ended, for the bar's "Round results" (not shown by itself: it was shown when the round ended).
   * As this tab showed it (`captureRoundEnd`, kept in sessionStorage) when it is this match's
   * round before, seen from the same seat; else from a whole state's ``round_before``
   * (docs/protocol.md: everyone's view of it, the room then), when the server has it. */
  restoreRoundEnd(current, before) {
    const kept = savedRoundEnd(this.code);
    if (kept && kept.match === this.match && kept.round === current - 1 && (kept.seat ?? null) === this.seat) {
      const { view, room, seed, commitment, seat, round } = kept;
      this.roundEnd = { round, view, room, seed: seed ?? null, commitment: commitment ?? null, seat };
    } else if (before?.view?.round === current - 1 && before.view.outcome && before.view.reveal && before.room?.match === this.match) {
      const { view, room } = before;
      const snap = { ...room, goal: view.goal, sides: view.sides };
      this.roundEnd = { round: view.round, view, room: snap, seed: room.round?.seed || null, commitment: room.round?.commitment || null, seat: this.seat };
    } else return;
    this.dismissedRound = this.roundEnd.round;
  }

  onChat(message) {
    if (message.type === "chat_log") this.chat = { rules: message.rules, lines: message.lines, you_muted: !!message.you_muted };
    else if (this.chat && message.type === "chat_rules") this.chat = { ...this.chat, rules: message.rules, you_muted: !!message.you_muted };
    else if (this.chat && message.type === "chat") this.chat.lines = [...this.chat.lines.slice(-99), message.line];
    this.screen?.chatBox?.onMessage(message);
  }

  /** Why a name was refused (a ``name_*`` code), in the page's language. */
  nameRefusal(code) {
    return t(`join.${code}`, { n: MAX_NAME });
  }

  onError(message) {
    // a refused move frees the hand (chat, names and hints are not moves)
    const quiet = message.code === "stale_version" && (this.outbox ? this.outbox.resent : this.answeredResent);
    if (isMoveRefusal(message.code)) this.outbox = null;
    // a move sent again after a reconnect that the first sending had already played: nothing to say
    if (quiet) {
      this.socket.send({ type: "sync" });
      return this.render([]);
    }
    // a spectator's name refused (docs/protocol.md `name`): said as a seat's name is, beside its box
    const nameText = NAME_ERRORS.includes(message.code) ? this.nameRefusal(message.code) : null;
    if (nameText && this.screen?.chatBox) return this.screen.chatBox.onNameRefused(message.code);
    if (nameText) return toast(nameText, "error");
    const key = `error.${message.code}`;
    toast(has(key) ? t(key) : t("error.generic", { message: message.message }), "error");
    if (message.code === "stale_version") this.socket.send({ type: "sync" });
    if (message.code.startsWith("chat_")) {
      if (message.code === "chat_muted" && this.chat) this.chat.you_muted = true;
      this.screen?.chatBox?.onRefused(message.code);
    }
    this.render([]);
  }

  /** Send ``action`` (the view's legal action without its seat) at this page's version; it waits
   * in ``outbox`` for its answer (`settleOutbox`), and a ping goes with it so that a dead socket
   * shows soon, and is given up within seconds (static/js/connection.js ``MOVE_TROUBLE_MS``,
   * ``MOVE_UNANSWERED_MS``). False when not connected. */
  sendAction(action) {
    const ok = this.socket?.send({ type: "action", version: this.version, action });
    if (!ok) toast(t("room.offline_action"), "error");
    else {
      this.outbox = { action, version: this.version, welcome: this.socket.welcomes, resent: false };
      this.answeredResent = false;
      this.socket.ping(true);
    }
    return ok;
  }

  back() {
    this.socket?.send({ type: "back" });
  }

  /** A spectator answers "keep watching?": the bots deal the next round (docs/protocol.md). */
  stillWatching() {
    if (!this.socket?.send({ type: "keep_watching" })) toast(t("room.offline_action"), "error");
  }

  feedRounds() {
    return [...this.rounds.values()].sort((a, b) => a.round - b.round);
  }

  /** After a reload: the feed's earlier rounds (up to two) from what this tab kept of them. */
  restoreFeed(current) {
    for (const r of savedFeed(this.code)) {
      if ((r.match ?? 1) !== this.match) continue; // another match of this room (Play again)
      if (r.round < current && r.round >= current - 2) this.rounds.set(r.round, r);
    }
  }

  /** Keep the feed's finished rounds for a reload of this tab (once per change, not per event). */
  keepFeed() {
    const view = this.view;
    const done = this.feedRounds().filter((r) => r.round < view.round || view.phase !== "playing");
    const key = done.map((r) => `${r.round}:${r.log.length}`).join(",");
    if (key === this.keptFeed) return;
    this.keptFeed = key;
    const room = (r) => ({ variant: r.room.variant, options: r.room.options, seats: r.room.seats, goal: r.room.goal, sides: r.room.sides, round: r.room.round });
    saveFeed(this.code, done.map((r) => ({ match: this.match, round: r.round, log: r.log, room: room(r) })));
  }

  // -- rendering -------------------------------------------------------------------------------

  /** The page drawn again (in another language): what was open stays open, the feed drawer
   * (where a phone's language menu is, which keeps the focus) and the round-end panel. */
  rebuild() {
    const feedOpen = !!this.screen?.el?.classList.contains("feed-open");
    const stopAsking = !!this.screen?.stopAsking; // the host's End match confirm stays asked
    const typed = this.screen?.kept?.(); // the waiting room's boxes and what was said beside them
    const chatTyped = this.screen?.chatBox?.kept(); // the chat's line being written, its name box
    this.screen?.destroy?.();
    this.screen = null;
    this.langKey = String(Date.now());
    if (!this.main) return this.notFound(this.refused);
    // which panel: the last match's final one kept while it is read, the same from the waiting
    // room's "Last match" button, or the last round's
    const reopen = !this.panel ? null : this.heldFinal ? "held" : this.panel.lastMatch ? "last" : "round";
    this.closePanel();
    if (this.notice) delete this.notice.dataset.kind; // drawn again in the new language
    this.render([]);
    if (typed) this.screen?.restore?.(typed);
    if (chatTyped) this.screen?.chatBox?.restore(chatTyped);
    this.updateBanner();
    if (stopAsking) this.screen?.askStop?.(true);
    if (feedOpen) {
      this.screen?.toggleFeed?.(true);
      this.screen?.el?.querySelector(".feed-lang .lang-select")?.focus();
    }
    if (reopen === "held" || reopen === "last") this.openLastMatch({ held: reopen === "held" });
    else if (reopen) this.openRoundEnd({ asked: true });
  }

  render(events) {
    if (!this.main || !this.room) return;
    const waiting = !this.view || this.room.status === "waiting";
    const kind = waiting ? "waiting" : "table";
    if (this.screen?.kind !== kind) {
      // the focus was on the screen that goes, or already dropped to the page's body (Start pressed
      // with Enter: the button is disabled while the start is on its way): it goes to the new
      // screen's start, never left on the body, where a keyboard or a screen reader starts over
      const focused = document.activeElement;
      const hadFocus = !!this.screen && (!focused || focused === document.body || this.main.contains(focused));
      this.screen?.destroy?.();
      this.screen = kind === "waiting" ? new WaitingView(this) : new TableView(this);
      this.screen.kind = kind;
      replace(this.main, this.screen.el);
      // on body, so the toasts (outside the room page) move up at the table too, without a
      // body:has() rule that would be looked at again after every change anywhere in the page
      document.body.classList.toggle("at-table", kind === "table");
      events = [];
      this.screen.update(events);
      if (hadFocus && !this.main.contains(document.activeElement)) this.screen.takeFocus?.();
    } else this.screen.update(events);
    this.updateNotice();
  }

  /** Whether a person may sit down now: an empty seat, or a bot's before the start. */
  hasOpenSeat() {
    const room = this.room;
    return room.seats.some((s) => s.kind === "empty" || (s.kind === "bot" && room.status === "waiting"));
  }

  /**
   * Joined from the lobby's open tables (``fromList``) to a table whose last free seat someone
   * else took meanwhile, or whose match started: the server shows such a room as to anyone (GET
   * /api/rooms/{code}, then the socket as a spectator), so the page says that this browser only
   * watches, with the way back to the lobby's tables, until a seat is free again (its Sit button
   * then shows), this page holds a seat, or the player keeps watching.
   */
  updateNotice() {
    const show = this.fromList && this.seat === null && !this.memory.token && !this.hasOpenSeat();
    const kind = show ? (this.room.status === "waiting" ? "full" : "started") : "";
    if (this.notice.dataset.kind === kind) return;
    this.notice.dataset.kind = kind;
    this.notice.hidden = !show;
    replace(
      this.notice,
      show
        ? [
            h("span", {}, t(`open.${kind}`)),
            h("a", { class: "btn btn-small", href: "/#open-tables" }, t("open.find_other")),
            h("button", { class: "btn btn-small notice-close", type: "button", onclick: () => this.keepWatching() }, t("open.keep_watching")),
          ]
        : [],
    );
  }

  /** The notice of a full table read: it goes, and this page watches on. */
  keepWatching() {
    this.fromList = false;
    this.updateNotice();
  }

  /** Why this page follows the room no more, as a catalog key: the host removed this spectator,
   * or gave this seat to a bot, or the room was closed. */
  closedWords() {
    const c = this.connection;
    return c.removed ? "room.removed" : c.seatToBot ? "room.seat_to_bot" : "room.closed";
  }

  /** After the host gave this page's seat to a bot: watch the table as a spectator (the token
   * was forgotten already). */
  watchTable() {
    this.connection = { ...this.connection, closed: false, seatToBot: false };
    this.updateBanner();
    this.forgetSeat();
  }

  updateBanner() {
    if (!this.banner) return;
    const c = this.connection;
    let content = null;
    if (c.seatToBot)
      content = [
        h("span", {}, t(this.closedWords())),
        h("button", { class: "btn btn-small watch-table", type: "button", onclick: () => this.watchTable() }, t("room.watch_table")),
        h("a", { class: "btn btn-small", href: "/" }, t("room.back_lobby")),
      ];
    else if (c.closed) content = [h("span", {}, t(this.closedWords())), h("a", { class: "btn btn-small", href: "/" }, t("room.back_lobby"))];
    else if (c.replaced)
      content = [
        h("span", {}, t("room.replaced")),
        h("button", { class: "btn btn-small", type: "button", onclick: () => this.socket.playHere() }, t("room.use_here")),
      ];
    else if (c.full) content = [h("span", {}, t("room.spectators_full"))];
    else if (c.reconnecting) content = [h("span", { class: "spinner", "aria-hidden": "true" }), h("span", {}, t("room.reconnecting"))];
    else if (c.trouble) content = [h("span", { class: "spinner", "aria-hidden": "true" }), h("span", {}, t("room.trouble"))];
    this.banner.hidden = !content;
    this.banner.dataset.kind = c.closed ? "closed" : c.replaced ? "replaced" : c.full ? "full" : c.reconnecting ? "reconnecting" : c.trouble ? "trouble" : "";
    if (content) replace(this.banner, content);
  }

  /** The last round's panel; ``asked``: the player asked for it (the bar's "round results"), so it
   * stays until they close it or a turn timer of theirs starts (`clearTheHand`). */
  openRoundEnd({ asked = false } = {}) {
    if (!this.roundEnd) return;
    this.closePanel();
    if (this.myTimerRuns()) return; // never over the hand while its timer runs
    this.panelAsked = asked;
    const started = this.view && this.view.round > this.roundEnd.round;
    this.panel = roundEndPanel(this.roundEnd, {
      mySeat: this.seat,
      code: this.code,
      token: this.memory.token,
      nextStarted: started,
      onAgain: this.canPlayAgain() ? () => this.playAgain() : null,
      watching: !this.canPlayAgain(), // a spectator: told how they come to play
      onClose: () => {
        this.dismissedRound = this.roundEnd?.round ?? null; // none once the next match began
        this.closePanel();
      },
    });
    document.body.append(this.panel);
    this.panel.showModal();
    if (started) this.panel.setNext(true, !!this.screen?.isMyTurn?.());
    this.screen?.update?.([]);
  }

  /** The last match's final panel again: from the next match's waiting room ("Last match"), or,
   * with ``held``, as it was kept while read when the next match began (`newMatch`), drawn again
   * in another language: it then still says the next match is being set up, and its Play again
   * joins it. Its "Review my round" asks for that match's last round (by the match's number), for
   * the seat this page held in it. It is the panel shown when that match ended (`openRoundEnd`),
   * for the seat this page held then: a spectator's says how they come to play, not a player's
   * thanks. */
  openLastMatch({ held = false } = {}) {
    const last = this.lastMatchEnd;
    if (!last) return;
    this.closePanel();
    const onAgain = held && this.canPlayAgain() ? () => this.playAgain() : null;
    const mine = last.seat === this.seat; // the same seat (and token) as in that match
    const review = mine ? { code: this.code, token: this.memory.token } : {};
    const watching = last.seat === null && !this.hostToken; // `canPlayAgain` as that match ended
    this.panel = roundEndPanel(last, { mySeat: last.seat, nextStarted: false, onAgain, watching, onClose: () => this.closePanel(), ...review });
    this.panel.lastMatch = !held;
    // opened before the next match was dealt, it folds away once it is (`foldLastMatch`); asked
    // for at the table (the bar's "last match"), it stays until closed
    const atTable = !!this.view && this.room?.status !== "waiting";
    this.panel.foldOnDeal = held || !atTable;
    document.body.append(this.panel);
    this.panel.showModal();
    if (held) {
      this.heldFinal = true;
      this.panel.setNextMatch?.(this.match, atTable, this.seatOffer(this.room));
    }
  }

  /** For a spectator (no seat, not the host) while ``room`` waits for its match with a seat free
   * or a bot's: what the final panel's Take a seat does (close it on the waiting room, the name
   * box ready); else null. */
  seatOffer(room) {
    if (this.seat !== null || this.hostToken || room?.status !== "waiting") return null;
    if (!room.seats.some((s) => s.kind === "empty" || s.kind === "bot")) return null;
    return () => {
      this.closePanel();
      const name = this.screen?.nameInput;
      if (name?.isConnected) name.focus();
    };
  }

  /** Whether this page may ask to play again: it holds a seat, or the host's token. */
  canPlayAgain() {
    return this.seat !== null || !!this.hostToken;
  }

  /** Play again: at the match's end, the room's next match with the same seats (this seat ready);
   * in its waiting room, this seat ready. The room's next state shows it. */
  async playAgain() {
    // at a match's end (not in the next one's waiting room, where it only says "ready"); the next
    // match's first state may come before the reply
    if (this.view?.match_over) this.againAskedIn = this.match;
    try {
      await playAgain(this.code, this.seat !== null ? this.memory.token : this.hostToken);
      if (this.heldFinal) this.closePanel(); // the last match's panel, kept while it was read
    } catch (error) {
      this.againAskedIn = null;
      toast(errorText(error), "error");
    }
  }

  closePanel() {
    clearInterval(this.readingTimer);
    this.readingTimer = null;
    this.panelAsked = false;
    this.heldFinal = false;
    if (!this.panel) return;
    const hadFocus = this.panel.contains(document.activeElement);
    if (this.panel.open) this.panel.close();
    this.panel.remove();
    this.panel = null;
    this.screen?.update?.([]);
    // the panel gives the focus back to what held it when it opened: gone since (the End match
    // confirm step, a tile played), the focus fell to the page's body; the screen's start takes it
    if (hadFocus && (!document.activeElement || document.activeElement === document.body)) this.screen?.takeFocus?.();
    // at the match's end (the final panel closed with Escape, say) it goes from the hand, which has
    // nothing left to play, to the end-of-match actions (a keyboard trial: Play again was then
    // reachable only with Shift+Tab, past every button and term of the feed)
    else if (hadFocus) this.screen?.leaveHandAtEnd?.();
  }

  // -- seats -----------------------------------------------------------------------------------

  async takeSeat(seat, name) {
    try {
      const reply = await claimSeat(this.code, seat, name);
      clearToasts("error"); // "enter your name" and the like are settled now
      saveName(name);
      this.memory = remember(this.code, { token: reply.token, seat: reply.seat, name });
      this.seat = reply.seat;
      this.connect();
    } catch (error) {
      // a refused name is said next to the name box, in the player's language, and the player
      // stays on the seat form to correct it
      if (NAME_ERRORS.includes(error.code) && this.screen?.nameError) return this.screen.nameError(error.code);
      const said = error.code === "seat_taken" ? t("join.taken") : has(`error.${error.code}`) ? errorText(error) : t("join.error", { message: error.message });
      toast(said, "error");
    }
  }

  /** Leave the seat before the start: it is empty again (or its bot is back) and this page watches on. */
  async leaveSeat() {
    const seat = this.seat;
    if (seat === null) return;
    try {
      await leaveSeat(this.code, seat, this.memory.token);
      this.forgetSeat();
    } catch (error) {
      toast(errorText(error), "error");
    }
  }

  /** This page holds no seat any more (left, here or in another window): watch as a spectator. */
  forgetSeat() {
    this.memory = remember(this.code, { token: null, seat: null });
    this.seat = null;
    this.connect();
    this.render([]);
  }

  async setSeatBot(seat, level) {
    try {
      await setBot(this.code, seat, level, this.hostToken);
    } catch (error) {
      toast(errorText(error), "error");
    }
  }

  async setOpen(open) {
    try {
      await setOpenTable(this.code, open, this.hostToken);
    } catch (error) {
      toast(errorText(error), "error");
    }
  }

  /** The host changes the match's options, turn timer, hints and (Kozel) number of seats before
   * the start. A smaller table refused because a person sits in a seat it would lose
   * (``seat_taken``) is said beside the seat count (`WaitingView.seatsRefused`), anything else in
   * a toast. */
  async setOptions(options, turnTimerS, hints, seats) {
    try {
      await setOptions(this.code, { options, turn_timer_s: turnTimerS, hints, seats }, this.starterToken);
      this.screen?.seatsRefused?.(null);
    } catch (error) {
      if (error.code === "seat_taken" && seats !== undefined && this.screen?.seatsRefused) this.screen.seatsRefused(seats);
      else toast(errorText(error), "error");
    }
  }

  /** Start the match, once: the button is disabled while the request is out (a double click sends
   * one), and an "already started" answer (another click, the deputy, a second window) is quietly
   * what was wanted: the table comes with the next update. */
  async start() {
    if (this.starting) return;
    this.starting = true;
    for (const button of document.querySelectorAll(".start-match")) button.disabled = true;
    try {
      await startMatch(this.code, this.starterToken);
    } catch (error) {
      if (error.code !== "already_started") toast(errorText(error), "error");
    } finally {
      this.starting = false;
      for (const button of document.querySelectorAll(".start-match")) button.disabled = false;
    }
  }
}

/** Error codes that answer something else than a move (docs/protocol.md): hints, chat, names,
 * keep watching. Any other refuses the move in ``outbox``. */
const NOT_MOVE_ERRORS = ["hints_off", "not_your_turn", "hint_stale", "hint_too_fast", "keep_watching_too_fast", "not_spectator"];
const isMoveRefusal = (code) => !NOT_MOVE_ERRORS.includes(code) && !/^(chat_|name_)/.test(code);

/** Whether a legal action of the view (with its seat) is the move ``sent`` (without it). */
function sameAction(legal, sent) {
  const { seat: _seat, ...payload } = legal;
  return JSON.stringify(payload, Object.keys(payload).sort()) === JSON.stringify(sent, Object.keys(sent).sort());
}

/** The server's reasons for refusing a name (app/rooms/names.py clean_name, app/rooms/seats.py
 * check_claim), each worded by ``join.<code>``. */
const NAME_ERRORS = ["name_empty", "name_too_long", "name_invisible", "name_stacked", "name_blank", "name_reserved", "name_marked", "name_taken"];
/** The longest name, in user-perceived characters (app/rooms/names.py MAX_NAME_GRAPHEMES). */
export const MAX_NAME = 32;
/** Characters typed before the name box shows its count. */
const NAME_COUNT_FROM = 24;

/** User-perceived characters (grapheme clusters) in ``text``: a joined emoji or a flag is one. */
export function graphemeCount(text) {
  return [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].length;
}

/** A typed name as the server reads it: trimmed, each run of spaces one space. */
const squeezedName = (raw) => raw.trim().split(/\s+/).join(" ");

/** What the client can tell about a name before sending it: a reason code, or null. */
export function nameProblem(raw) {
  const name = squeezedName(raw);
  if (!name) return "name_empty";
  if (graphemeCount(name) > MAX_NAME) return "name_too_long";
  return null;
}

/** Before the start: who sits where, seat picking, the host's bot choices and the Start button. */
class WaitingView {
  constructor(ctl) {
    this.ctl = ctl;
    this.nameError = this.nameError.bind(this);
    this.nameMessage = h("p", { class: "field-error", id: "player-name-error", role: "alert", hidden: true });
    this.nameInput = h("input", {
      id: "player-name",
      class: "input",
      type: "text",
      autocomplete: "nickname",
      enterkeyhint: "go",
      value: savedName(),
      placeholder: t("join.name_placeholder"),
      "aria-describedby": "player-name-hint player-name-count player-name-error",
      oninput: () => {
        clearToasts("error");
        // too long is said as it happens, with the count on the way there; the rest when the name is sent
        this.showNameCount();
        const problem = nameProblem(this.nameInput.value);
        this.nameError(problem === "name_too_long" ? problem : null);
      },
      onkeydown: (e) => {
        if (e.key !== "Enter" || e.isComposing) return;
        e.preventDefault();
        const seat = this.firstOpenSeat();
        if (seat !== null) this.sit(seat);
      },
      dataset: { focusKey: "name" },
    });
    // the name's length in user-perceived characters (what the server counts), from NAME_COUNT_FROM on
    this.nameCount = h("p", { class: "field-count", id: "player-name-count", hidden: true });
    this.showNameCount();
    // the host's turn timer box is kept across updates, so what is being typed is never lost
    this.timerInput = h("input", {
      id: "opt-turn-timer",
      class: "input",
      type: "number",
      min: "0",
      max: String(TIMER_MAX_S),
      step: "1",
      inputmode: "numeric",
      "aria-describedby": "opt-turn-timer-error",
      dataset: { focusKey: "opt-timer" },
      onchange: () => this.applyOptions(true),
    });
    // what is wrong with a refused timer, said beside the box (which keeps what was typed) until
    // the host corrects it
    this.timerError = h("p", { class: "field-error", id: "opt-turn-timer-error", role: "alert", hidden: true });
    // a smaller Kozel table the server refused (a person sits in a seat it would lose), said
    // beside the seat count until the count is changed again
    this.seatsError = h("p", { class: "field-error", id: "opt-seats-error", role: "alert", hidden: true });
    this.body = h("div", { class: "waiting-body" });
    this.el = h(
      "div",
      { class: "page waiting-page" },
      h(
        "header",
        { class: "page-header" },
        h("a", { class: "brand", href: "/" }, brandMark(), h("span", { class: "brand-text" }, t("app.title"))),
        h("nav", { class: "page-nav" }, h("a", { href: "/rules", target: "_blank", rel: "noopener" }, t("nav.rules")), languageSelect()),
      ),
      h("main", { class: "card waiting-card" }, this.body),
    );
    this.addChat();
  }

  /** The room's chat, in every waiting room: the first match's (people talk while they wait for a
   * friend) and the next one's (Play again: the table's conversation goes on). The server takes
   * lines before the start as after (docs/protocol.md, `chat`): seated people, and spectators when
   * the host allows. */
  addChat() {
    const ctl = this.ctl;
    if (this.chatBox) return;
    this.chatBox = new ChatBox(ctl, { onReaction: () => {}, onUnread: () => {} });
    this.chatBox.setOpen(true);
    this.el.append(h("section", { class: "card waiting-chat" }, this.chatBox.el));
  }

  destroy() {}

  /** The focus on arriving here from the table (Play again): one's own seat, else the heading. */
  takeFocus() {
    (this.el.querySelector(".seat-row.mine") || this.el.querySelector("h1"))?.focus();
  }

  isMyTurn() {
    return false;
  }

  /** The count under the name box, "27/32", once the name nears its limit; marked past it. */
  showNameCount() {
    const used = graphemeCount(squeezedName(this.nameInput.value));
    this.nameCount.hidden = used < NAME_COUNT_FROM;
    this.nameCount.textContent = `${used}/${MAX_NAME}`;
    this.nameCount.classList.toggle("full", used > MAX_NAME);
  }

  /** Say next to the name box why the name cannot be taken (``code``), or clear it (null); with
   * ``focus``, the box takes the focus to be corrected. */
  nameError(code, focus = true) {
    const message = this.nameMessage;
    this.nameCode = code;
    message.hidden = !code;
    message.textContent = code ? t(`join.${code}`, { n: MAX_NAME }) : "";
    this.nameInput.toggleAttribute("aria-invalid", !!code);
    if (code && focus) this.nameInput.focus();
  }

  /** What the boxes hold and what is said beside them, for the page drawn again in another language
   * (`restore`): the name typed and why it was refused (a code), the refused timer typed (or null),
   * the seat count refused (or null). */
  kept() {
    const timer = this.timerError.hidden ? null : this.timerInput.value;
    return { name: this.nameInput.value, nameCode: this.nameCode ?? null, timer, seats: this.seatsAsked ?? null };
  }

  /** Put back what `kept` took from the page before, its reasons said in the page's language now. */
  restore({ name, nameCode, timer, seats }) {
    this.nameInput.value = name;
    this.showNameCount();
    if (nameCode) this.nameError(nameCode, false);
    if (seats !== null) this.seatsRefused(seats);
    if (timer === null) return;
    this.timerInput.value = timer;
    this.timerRefused(true);
  }

  /** Mark the timer box refused (with its reason beside it) or not. */
  timerRefused(refused) {
    this.timerError.hidden = !refused;
    this.timerInput.setAttribute("aria-invalid", String(refused));
    if (refused) this.timerError.textContent = t("lobby.timer_invalid", { min: TIMER_MIN_S, max: TIMER_MAX_S });
  }

  /** Say beside the seat count that a table of ``count`` seats was refused, naming the first
   * person who sits in a seat it would lose (and what to do), or clear it (null). */
  seatsRefused(count) {
    this.seatsAsked = count;
    const held = count === null ? undefined : this.ctl.room.seats.slice(count).find((info) => info.kind === "human");
    this.seatsError.hidden = !held;
    this.seatsError.textContent = held ? t("waiting.seats_taken", { seat: held.seat + 1, name: held.name || "" }) : "";
    const select = this.body.querySelector("#opt-seats");
    if (!select) return;
    select.setAttribute("aria-invalid", String(!!held));
    select.value = String(this.ctl.room.seats.length); // the table keeps its size
  }

  /** The seat Enter takes: the first empty one, else the first bot's (before the start only), or null. */
  firstOpenSeat() {
    const room = this.ctl.room;
    if (this.ctl.seat !== null || room.status !== "waiting") return null;
    // a seat waiting for a person first; a bot's seat (the host's choice) only when none is left
    const open = room.seats.find((info) => info.kind === "empty") || room.seats.find((info) => info.kind === "bot");
    return open ? open.seat : null;
  }

  /** Take ``seat`` under the typed name, or say what is wrong with the name. */
  sit(seat) {
    const problem = nameProblem(this.nameInput.value);
    if (problem) return this.nameError(problem);
    this.nameError(null);
    this.ctl.takeSeat(seat, squeezedName(this.nameInput.value));
  }

  update() {
    const ctl = this.ctl;
    const room = ctl.room;
    this.addChat();
    const seated = ctl.seat !== null;
    const host = !!ctl.hostToken;
    const started = room.status !== "waiting";
    const focused = document.activeElement;
    const keepFocus = focused && this.body.contains(focused) ? focused.dataset.focusKey : null;
    // the name box is the same element across updates: keep where the caret was, too
    const caret = focused === this.nameInput ? [this.nameInput.selectionStart, this.nameInput.selectionEnd] : null;
    const again = (room.match ?? 1) > 1;
    const parts = [
      h("h1", { tabindex: "-1", dataset: { focusKey: "heading" } }, again ? t("again.heading", { n: room.match }) : t("waiting.heading")),
      h("p", { class: "lead" }, this.matchLine(room)),
      // the turn timer and hints, which the host's (or deputy's) options box shows to them alone
      (host || ctl.isDeputy) && !started ? "" : this.termsLine(room),
      h(
        "div",
        { class: "share-box" },
        h("label", { for: "share-url" }, t("room.share")),
        h("div", { class: "share-row" }, h("input", { id: "share-url", class: "input", readonly: true, value: shareUrl(ctl.code), onfocus: (e) => e.target.select() }), copyLinkButton(ctl.code, "btn")),
      ),
    ];
    // a spectator the host removed takes no seat in this room, now or after Play again (the
    // server refuses it: 403 spectator_removed): no name box, no "Sit here", the banner says why
    const mayTake = !ctl.connection?.removed;
    if (!seated && !started && mayTake && ctl.hasOpenSeat()) {
      parts.push(
        h(
          "div",
          { class: "name-box" },
          h("label", { for: "player-name" }, t("join.name")),
          this.nameInput,
          this.nameCount,
          this.nameMessage,
          h("p", { class: "hint", id: "player-name-hint" }, t("join.pick_seat"), " ", t("join.enter_hint")),
        ),
      );
    }
    if (again && !started) parts.push(this.againBox(room, seated));
    parts.push(h("ol", { class: "seat-list" }, room.seats.map((info) => this.seatRow(info, { seated, host, started, again, mayTake }))));
    if (!seated && mayTake && ctl.hasOpenSeat()) parts.push(h("p", { class: "hint" }, t("join.watching")));
    // every seat a person's before the start: said, so nobody looks for a seat that is not there
    // (from the lobby's list the room's notice says it: `updateNotice`)
    else if (!seated && !started && !host && !ctl.fromList && mayTake) parts.push(h("p", { class: "hint waiting-full", role: "status" }, t("waiting.full")));
    if ((host || ctl.isDeputy) && !started) {
      parts.push(
        h(
          "div",
          { class: "start-box" },
          host
            ? h("p", { class: "hint" }, t("waiting.host_hint"))
            : h("p", { class: "hint deputy-hint", role: "status" }, t("waiting.deputy_you")),
          host
            ? h(
                "label",
                { class: "check open-toggle" },
                h("input", { type: "checkbox", id: "open-table", checked: !!room.open, dataset: { focusKey: "open" }, onchange: (e) => ctl.setOpen(e.target.checked) }),
                " ",
                t("waiting.open_table"),
              )
            : "",
          host && room.open && !room.seats.some((s) => s.kind === "empty")
            ? h("p", { class: "hint open-unseen", role: "status" }, t("waiting.open_no_free_seat", { person: t("lobby.seat_person") }))
            : "",
          this.optionsBox(room),
          h("button", { class: "btn btn-gold btn-big start-match", type: "button", disabled: !!ctl.starting, dataset: { focusKey: "start" }, onclick: () => ctl.start() }, t("waiting.start")),
        ),
      );
    } else if (!started) parts.push(this.whoStarts(room));
    replace(this.body, parts);
    // a window that lost its seat to another follows the room no more: its chat takes no line
    // until "Play here" (as the table's, `TableView.update`)
    this.chatBox?.setLive(!ctl.connection?.replaced && !ctl.connection?.closed);
    if (keepFocus) {
      // the name box or the Sit button that seated this player is gone: their seat's row takes the
      // focus; Leave seat gone with the seat: the name box, where Enter sits again, else the
      // heading (never the page's body, where a keyboard or a screen reader would start over)
      const unseated = this.body.querySelector('[data-focus-key="name"]') || this.body.querySelector("h1");
      const kept = this.body.querySelector(`[data-focus-key="${keepFocus}"]`) || (seated ? this.body.querySelector(".seat-row.mine") : unseated);
      kept?.focus();
    }
    if (caret && document.activeElement === this.nameInput) this.nameInput.setSelectionRange(...caret);
  }

  /** Who will start the match, for those who cannot: the host, or (the host away) the deputy. */
  whoStarts(room) {
    const away = room.host && !room.host.connected;
    const deputy = away && room.host.deputy !== null && room.host.deputy !== undefined ? room.seats[room.host.deputy] : null;
    let text = t("waiting.guest_hint");
    if (deputy) text = t("waiting.deputy_other", { name: deputy.name || "" });
    else if (away) text = t("waiting.host_away");
    return h("p", { class: "hint waiting-guest", role: "status", dataset: { hostAway: String(!!away) } }, h("span", { class: "spinner", "aria-hidden": "true" }), text);
  }

  /** The host's options before the start, as the lobby's form has them (Kozel's number of seats
   * too). */
  optionsBox(room) {
    const options = room.options || {};
    const fields = [];
    if (room.variant === "kozel") {
      // the table's size (K1: 2 to 4 players), as the lobby's form has it; a refusal is said below
      const count = h(
        "select",
        { id: "opt-seats", class: "input", "aria-describedby": "opt-seats-error", "aria-invalid": String(!this.seatsError.hidden), dataset: { focusKey: "opt-seats" }, onchange: () => this.applyOptions() },
        KOZEL_SEATS.map((n) => h("option", { value: String(n), selected: n === room.seats.length }, t("lobby.players_n", { n }))),
      );
      fields.push(h("label", { class: "option-field", for: "opt-seats" }, h("span", {}, t("lobby.players")), count), this.seatsError);
      const two = h("input", { type: "checkbox", id: "opt-two-lempas", checked: options.two_lempas !== false, dataset: { focusKey: "opt-two" }, onchange: () => this.applyOptions() });
      fields.push(h("label", { class: "check" }, two, h("span", {}, tf("lobby.two_lempas"))));
      if (room.seats.length === 4) {
        const pairs = h("input", { type: "checkbox", id: "opt-pairs", checked: !!options.pairs, dataset: { focusKey: "opt-pairs" }, onchange: () => this.applyOptions() });
        fields.push(h("label", { class: "check" }, pairs, h("span", {}, t("lobby.pairs"))));
      }
    } else {
      const target = options.camat_target ?? 1;
      const select = h(
        "select",
        { id: "opt-camat-target", class: "input", dataset: { focusKey: "opt-target" }, onchange: () => this.applyOptions() },
        TARGETS.map((n) => h("option", { value: String(n), selected: n === target }, n === 0 ? t("lobby.no_limit") : t("lobby.elections", { n }))),
      );
      fields.push(h("label", { class: "option-field", for: "opt-camat-target" }, h("span", {}, t("lobby.match_length")), select));
    }
    // a refused timer stays in the box with its reason until corrected, whatever else changes
    if (document.activeElement !== this.timerInput && this.timerError.hidden) this.timerInput.value = String(room.turn_timer_s ?? 0);
    fields.push(h("label", { class: "option-field", for: "opt-turn-timer" }, h("span", {}, t("lobby.timer")), this.timerInput), this.timerError);
    // as the lobby's form has it: whether a player may ask for the hard bot's choice on their turn
    const hints = h("input", { type: "checkbox", id: "opt-hints", checked: !!room.hints, dataset: { focusKey: "opt-hints" }, onchange: () => this.applyOptions() });
    fields.push(h("label", { class: "check" }, hints, h("span", {}, t("lobby.hints"))));
    return h("fieldset", { class: "options-box" }, h("legend", {}, t("waiting.options")), fields);
  }

  /** Send the host's options as the boxes have them now. A timer the server would refuse is not
   * sent: the box keeps what was typed, marked invalid, with the reason beside it, and the table
   * keeps the timer in effect (the other options, changed meanwhile, are sent with it);
   * ``fromTimer``: the timer box itself changed, which alone sends nothing then. */
  applyOptions(fromTimer = false) {
    const typed = timerSeconds(this.timerInput.value);
    this.timerRefused(typed === null);
    if (typed === null && fromTimer) return;
    const room = this.ctl.room;
    const seconds = typed ?? room.turn_timer_s ?? 0;
    const kozel = room.variant === "kozel";
    // pairs need 4 seats (K10): a table made smaller leaves them off (the box shows at 4 seats only)
    const seats = kozel ? Number(this.body.querySelector("#opt-seats")?.value ?? room.seats.length) : undefined;
    const options = kozel
      ? { two_lempas: !!this.body.querySelector("#opt-two-lempas")?.checked, pairs: seats === 4 && !!this.body.querySelector("#opt-pairs")?.checked }
      : { camat_target: Number(this.body.querySelector("#opt-camat-target")?.value ?? 1) };
    this.ctl.setOptions(options, seconds, !!this.body.querySelector("#opt-hints")?.checked, seats);
  }

  /** The next match's waiting room (Play again): who of the people is ready, this seat's "I'm in",
   * and the last match's result. */
  againBox(room, seated) {
    const ctl = this.ctl;
    // who is here: a person away (their browser closed) is covered by a bot at the start, so
    // neither counts as ready nor is waited for; said apart
    const people = room.seats.filter((s) => s.kind === "human" && s.connected);
    const away = room.seats.filter((s) => s.kind === "human" && !s.connected).length;
    const ready = people.filter((s) => s.ready).length;
    const mine = seated ? room.seats[ctl.seat] : null;
    const box = h(
      "div",
      { class: "again-box", dataset: { ready: String(ready), people: String(people.length) } },
      h("p", { class: "hint" }, t("again.intro")),
      h("p", { class: "ready-count", role: "status" }, t("again.ready_count", { n: ready, total: people.length }), away ? ` ${t("again.away_count", { n: away })}` : ""),
    );
    if (mine && !mine.ready) box.append(h("button", { class: "btn btn-gold btn-big ready-button", type: "button", dataset: { focusKey: "ready" }, onclick: () => ctl.playAgain() }, t("again.ready_button")));
    else if (mine) box.append(h("p", { class: "you-ready" }, t("again.you_ready")));
    if (ctl.lastMatchEnd) box.append(h("button", { class: "btn last-match", type: "button", dataset: { focusKey: "last-match" }, onclick: () => ctl.openLastMatch() }, t("again.last_match")));
    return box;
  }

  matchLine(room) {
    const variant = t(`variant.${room.variant}`);
    if (room.variant === "kozel") {
      const line = h("span", {}, tf("waiting.kozel", { variant, n: room.seats.length }));
      line.append(" ", tf(room.options?.two_lempas === false ? "waiting.two_lempas_off" : "waiting.two_lempas_on"));
      if (room.options?.pairs) line.append(" ", t("waiting.pairs"));
      return line;
    }
    const n = room.options?.camat_target ?? 1;
    return n > 0 ? tf("waiting.variant_target", { variant, n }) : tf("waiting.variant_nolimit", { variant });
  }

  /** The match's turn timer and whether hints are allowed, as everyone may read them. */
  termsLine(room) {
    const timer = room.turn_timer_s > 0 ? t("waiting.timer", { s: room.turn_timer_s }) : t("waiting.no_timer");
    const hints = t(room.hints ? "waiting.hints_on" : "waiting.hints_off");
    return h("p", { class: "hint match-terms", dataset: { timer: String(room.turn_timer_s ?? 0), hints: String(!!room.hints) } }, timer, " ", hints);
  }

  seatRow(info, { seated, host, started, again, mayTake }) {
    const ctl = this.ctl;
    const seat = info.seat;
    const mine = seat === ctl.seat;
    let who;
    if (info.kind === "human") who = h("span", { class: "seat-who" }, h("span", { class: `conn ${info.connected ? "on" : "off"}`, "aria-hidden": "true" }), h("bdi", { class: "seat-name", title: info.name || "" }, info.name || ""), mine ? h("span", { class: "you" }, t("seat.you_suffix")) : "");
    else if (info.kind === "bot") who = h("span", { class: "seat-who bot" }, botLabel(info.bot_level));
    else who = h("span", { class: "seat-who empty" }, t("waiting.empty"));
    // who is ready for the next match: beside the seat's number, never squeezing the name
    // (a person away is neither: a bot covers them if the match starts without them)
    const here = info.connected;
    const readyKey = !here ? "again.away" : info.ready ? "again.ready" : "again.not_ready";
    const ready = again && !started && info.kind === "human" ? h("span", { class: `tag ready-tag${here && info.ready ? " tag-win" : ""}`, dataset: { ready: String(here && !!info.ready) } }, t(readyKey)) : "";
    const actions = [];
    const open = info.kind === "empty" || (info.kind === "bot" && !started);
    const partner = partnerOf(ctl.room, seat);
    if (!seated && open && !started && mayTake) {
      actions.push(
        h(
          "button",
          {
            class: "btn btn-gold sit",
            type: "button",
            dataset: { seat: String(seat), focusKey: `sit-${seat}` },
            // "Sit here" says which seat to a screen reader, and with pairs whose partner it makes
            "aria-label": partner === null ? t("join.sit_seat", { n: seat + 1 }) : t("join.sit_seat_partner", { n: seat + 1, partner: partner + 1 }),
            onclick: () => this.sit(seat),
          },
          t("join.sit"),
        ),
      );
    }
    if (mine && !started) {
      actions.push(h("button", { class: "btn leave", type: "button", dataset: { focusKey: `leave-${seat}` }, onclick: () => ctl.leaveSeat() }, t("waiting.leave")));
    }
    if (host && !started) {
      const value = info.kind === "bot" ? info.bot_level : "person";
      const select = h(
        "select",
        {
          class: "seat-select",
          "aria-label": t("waiting.seat_for", { n: seat + 1 }),
          dataset: { seat: String(seat), focusKey: `bot-${seat}` },
          onchange: (e) => {
            const level = e.target.value === "person" ? null : e.target.value;
            if (info.kind === "human" && !window.confirm(t("waiting.confirm_replace", { name: info.name || "" }))) {
              e.target.value = value;
              return;
            }
            ctl.setSeatBot(seat, level);
          },
        },
        h("option", { value: "person", selected: value === "person" }, info.kind === "human" ? info.name || t("seat.person") : t("lobby.seat_person")),
        // a room restored from before the levels keeps showing its seat's old level
        (BOT_LEVELS.includes(value) || value === "person" ? BOT_LEVELS : [...BOT_LEVELS, value]).map((level) => h("option", { value: level, selected: value === level }, botLabel(level))),
      );
      actions.push(select);
    }
    return h(
      "li",
      // one's own row takes the focus when the control that seated them goes (`update`)
      { class: `seat-row seat-${info.kind}${mine ? " mine" : ""}`, dataset: { seat: String(seat), ...(mine ? { focusKey: "my-seat" } : {}) }, tabindex: mine ? "-1" : null },
      h("span", { class: "seat-num" }, t("seat.label", { n: seat + 1 }), ready ? " " : "", ready),
      who,
      h("span", { class: "seat-actions" }, actions),
    );
  }
}

/** The seat that plays in a pair with ``seat`` (from 0), or null: the room's ``sides`` (the
 * server's, K10; the view's once dealt). */
function partnerOf(room, seat) {
  const side = room.sides?.find((each) => each.includes(seat));
  return side && side.length > 1 ? side.find((other) => other !== seat) : null;
}

export { seatName };
