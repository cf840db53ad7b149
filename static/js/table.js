// The table: opponents around it, the chain on the felt, your hand at the bottom, the stone pile
// (Domeng) or the bazaar and the score sheet (Kozel), the turn timer and the play-by-play feed. It
// shows the view and offers only view.legal; in Kozel it draws for you while nothing fits.

import { alertButtons, audioHeld, TableAlerts, watchSound } from "./alerts.js";
import { botLabel, botName, COVER_LEVEL } from "./bots.js";
import { ChainBoard } from "./chain.js";
import { ChatBox, reactionShown, reactionsHidden } from "./chat.js";
import { arrowsAlong, h, keepChildren, keepCount, reducedMotion, replace, setAttr, setStyle, setText, toast } from "./dom.js";
import { t, tf, tfSpan } from "./i18n.js";
import { feedLinesFrom, seatName } from "./narrate.js";
import { loneLempa, optionText } from "./review.js";
import { scoreSheet } from "./scoresheet.js";
import { miniTile, pips, stoneSvg, tileBackSvg, tileKey, tileSvg } from "./tiles.js";
import { icon } from "./icons.js";
import { languageSelect, topBarActions } from "./ui.js";

/** Where the opponents sit, by table size, in seat order after you (play goes round clockwise). */
const OPP_AREAS = { 2: ["o23"], 3: ["o1", "o4"], 4: ["o1", "o23", "o4"], 5: ["o1", "o2", "o3", "o4"] };
const AUTO_DRAW_MS = 450;
/** Where the speaker is in the feed's drawer, not the top bar (static/css/app.css). */
const PHONE = "(max-width: 759px)";
/** The lengths the table hears from the layout (TableView.say) and the elements whose rules read
 * them (static/css/app.css): the toasts' box (#toasts), the connection banner (room.js) and the feed
 * drawer (.feed). */
const SAID_ON = {
  "--bar-bottom": ["toasts", "banner", "feed"],
  "--me-h": ["toasts", "feed"],
  "--felt-top": ["toasts", "banner"],
  "--felt-bottom": ["toasts"],
  "--felt-left": ["toasts", "banner"],
  "--felt-right": ["toasts", "banner"],
};

export class TableView {
  constructor(ctl) {
    this.ctl = ctl;
    this.seatCount = ctl.room.seats.length;
    this.kozel = ctl.room.variant === "kozel";
    this.choosing = null; // the tile whose end the player is choosing
    this.plates = new Map();
    this.handButtons = new Map();
    this.feedKey = "";
    this.alerts = new TableAlerts();
    this.unread = 0; // the chat's lines unread while the drawer is closed
    // a phone's speaker is in the closed drawer: its button says when the browser holds the sound
    this.phone = window.matchMedia(PHONE);
    this.build();
    this.onPhone = () => this.labelFeedToggle();
    this.phone.addEventListener("change", this.onPhone);
    this.unwatchSound = watchSound(this.onPhone);
    this.labelFeedToggle();
    this.chatBox.setOpen(window.matchMedia("(min-width: 1100px)").matches); // the feed is always open there
    this.timer = setInterval(() => this.tick(), 250);
    this.onKey = (event) => {
      if (event.key !== "Escape" || event.defaultPrevented) return;
      if (this.choosing) this.cancelChoice();
      else if (this.el.classList.contains("feed-open") && !document.querySelector("dialog[open]")) {
        // the feed's drawer (a phone, a tablet) closes as a menu does; focus inside it goes back
        // to its button (focus elsewhere, on the hand say, stays)
        this.toggleFeed(false); // focus inside goes back to its button
      }
    };
    document.addEventListener("keydown", this.onKey);
  }

  /** The focus on arriving at the table from the waiting room (Start pressed from the keyboard):
   * the hand's Tab stop, a tile; a spectator's (no seat: the hand shows someone's tiles face down),
   * the chain, the line of play. At the match's end, its actions (`focusOverActions`). */
  takeFocus() {
    if (this.focusOverActions()) return;
    const stop = this.hand.querySelector(".hand-tile[tabindex='0']");
    if (stop && this.ownSeat() !== null) stop.focus();
    else {
      this.chain.el.setAttribute("tabindex", "-1");
      this.chain.el.focus();
    }
  }

  /** At the match's end: the focus on its actions, Play again (else New table), for the hand has
   * nothing left to play. Whether there were any to take it. */
  focusOverActions() {
    if (this.overBox.hidden) return false;
    const action = this.overBox.querySelector(".play-again") || this.overBox.querySelector(".new-table");
    action?.focus();
    return !!action;
  }

  /** A panel closed at the match's end gave the focus back to the hand (the last tile played from
   * the keyboard): it goes to the end-of-match actions instead (`focusOverActions`). */
  leaveHandAtEnd() {
    if (this.hand.contains(document.activeElement)) this.focusOverActions();
  }

  destroy() {
    clearInterval(this.timer);
    clearTimeout(this.drawTimer);
    clearTimeout(this.hintNoteTimer);
    document.removeEventListener("keydown", this.onKey);
    this.phone.removeEventListener("change", this.onPhone);
    this.unwatchSound();
    this.alerts.closeNotice();
    this.chain.destroy();
    this.feedSized.disconnect();
    this.meSized.disconnect();
    this.barSized.disconnect();
    this.overSized.disconnect();
    for (const name of Object.keys(SAID_ON)) for (const el of this.saidOn(name)) el.style.removeProperty(name);
    cancelAnimationFrame(this.feedFrame);
    this.destroyed = true;
    document.fonts?.removeEventListener("loadingdone", this.onFonts);
    cancelAnimationFrame(this.barFrame);
  }

  // -- building --------------------------------------------------------------------------------

  build() {
    const ctl = this.ctl;
    this.pileCount = h("span", { class: "pile-count" });
    this.pile = h(
      "div",
      { class: "pile", id: "table-pile", role: "img" },
      h("span", { class: "pile-stones", "aria-hidden": "true" }, stoneSvg(), stoneSvg(), stoneSvg()),
      h("span", { class: "pile-text" }, h("span", { class: "pile-label" }, t("table.on_table")), this.pileCount),
    );
    this.bazaarCount = h("span", { class: "pile-count bazaar-count" });
    this.bazaar = h(
      "div",
      { class: "pile bazaar", id: "table-bazaar", role: "img" },
      h("span", { class: "bazaar-tiles", "aria-hidden": "true" }, tileBackSvg(), tileBackSvg()),
      h("span", { class: "pile-text" }, h("span", { class: "pile-label" }, tf("table.bazaar")), this.bazaarCount),
    );
    this.roundLabel = h("span", { class: "round-label" });
    this.feedToggle = h(
      "button",
      { class: "icon-btn feed-toggle", type: "button", "aria-expanded": "false", onclick: () => this.toggleFeed(undefined, { focus: true }) },
      icon("list"),
      h("span", { class: "lbl" }, t("table.feed")),
    );
    this.unreadBadge = h("span", { class: "unread-badge", hidden: true });
    // the speaker's gold dot, on a phone whose speaker is in the closed drawer (labelFeedToggle)
    this.heldDot = h("span", { class: "held-dot", hidden: true });
    this.feedToggle.append(this.unreadBadge, this.heldDot);
    // the last round's panel; before this match's first round ends, the last match's (Play again)
    this.lastRoundLabel = h("span", { class: "lbl" }, t("table.last_round"));
    this.lastRoundBtn = h(
      "button",
      { class: "icon-btn last-round-btn", type: "button", hidden: true, onclick: () => (ctl.roundEnd ? ctl.openRoundEnd({ asked: true }) : ctl.openLastMatch()) },
      icon("flag"),
      this.lastRoundLabel,
    );
    // the host's end of a no-limit match (docs/rules.md, "Match end"): asked here, confirmed in the
    // stop note above the hand (words a phone's bar has no room for)
    this.stopBtn = h(
      "button",
      { class: "icon-btn stop-btn", type: "button", hidden: true, title: t("stop.button"), onclick: () => this.askStop(true) },
      icon("stop"),
      h("span", { class: "lbl" }, t("stop.button")),
    );
    this.stopAsking = false; // the host pressed End match: the note asks them to confirm
    this.bar = h(
      "header",
      { class: "bar" },
      h("a", { class: "brand", href: "/", "aria-label": t("app.title") }, brandMark(), h("span", { class: "brand-text" }, t("app.title"))),
      this.roundLabel,
      this.kozel ? this.bazaar : this.pile,
      (this.barActions = h("div", { class: "bar-actions" }, this.stopBtn, this.lastRoundBtn, this.feedToggle, ...topBarActions(ctl))),
    );
    this.barFit = ""; // what the bar's fit was measured for (fitBar)
    this.barIcons = new Set(); // the class of each bar button shown as its icon alone (fitBar)

    this.chain = new ChainBoard({
      onEnd: (end) => this.playEnd(end),
      labels: () => this.chainLabels(),
    });
    this.felt = h("main", { class: "felt", id: "felt" }, this.chain.el);

    this.ticker = h("div", { class: "ticker", "aria-hidden": "true" });
    // the moves said to a screen reader (`sayMoves`): the feed's list is no live region (a phone's
    // closed drawer says nothing, and a list made again whole would say it all again)
    this.movesSaid = h("div", { class: "sr-only moves-said", role: "log", "aria-live": "polite", "aria-label": t("table.feed") });
    this.feedSaid = null; // the feed's items when its new lines were last said
    this.status = h("div", { class: "status", role: "status", "aria-live": "polite" });
    this.choiceBox = h("div", { class: "choice", hidden: true });
    this.choiceBox.addEventListener("keydown", (event) => arrowsAlong(event, [...this.choiceBox.querySelectorAll("button")]));
    this.lempasBox = h("div", { class: "choice lempas-choice", hidden: true });
    this.coverBox = h("div", { class: "cover-note", hidden: true });
    // this seat's turn timer ran out and a bot moved for it (room.js `noteTimedOut`): said to this
    // player alone, and to a screen reader (a live region that is always there, empty meanwhile)
    this.timedOutBox = h("div", { class: "timed-out-note", role: "status", "aria-live": "polite", "aria-atomic": "true" });
    // "Last round": the host ends the match when this round ends (everyone sees it; the host may
    // take it back here), or the host's confirm step
    this.stopBox = h("div", { class: "stop-note", role: "status", hidden: true });
    // the bots wait between rounds for a spectator to say they still watch (docs/protocol.md
    // `keep_watching`): asked above the hand, with Continue
    this.watchingBox = h("div", { class: "keep-watching", role: "status", hidden: true });
    // the match is over: Play again and New table on the table itself, not only in the final panel
    this.overBox = h("div", { class: "over-actions", hidden: true });
    // a spectator is told how they come to play: a seat in the next match's waiting room
    this.watchNote = h("p", { class: "watch-note", hidden: true });
    this.myTimer = h("div", { class: "turn-timer", hidden: true }, h("i"));
    this.myTimerText = h("span", { class: "timer-text", hidden: true });
    // the countdown is silent to a screen reader: once a turn, near its end, it says so (`tick`)
    this.timeSaid = h("div", { class: "sr-only time-said", "aria-live": "assertive" });
    this.hand = h("div", { class: "hand", role: "group", tabindex: "-1" });
    // the hand is one Tab stop, its arrow keys move between the tiles that can be played (the
    // WAI-ARIA toolbar's roving tabindex): the tile last focused keeps the stop
    this.roving = null; // that tile's key
    this.hand.addEventListener("keydown", (event) => this.onHandKey(event));
    this.hand.addEventListener("focusin", (event) => {
      if (event.target.classList.contains("hand-tile")) this.rove(event.target);
    });
    // hints (issue 16): when the host allows them, the hard bot's choice on the hand, told to all
    this.hintBtn = h("button", { class: "btn btn-small hint-btn", type: "button", hidden: true, onclick: () => this.askHint() }, icon("bulb"), " ", t("hint.button"));
    this.hinted = null; // {version, action} of the hint shown on the hand
    this.hintAsked = null; // the version a hint was asked at
    // what a hint says ("Hint: 3-5 on the right", "Budi used a hint"): in the table's flow above the
    // turn's status, beside the Hint button, so it covers no plate; a click or 4 s sends it away
    this.hintNote = h("div", { class: "hint-note", role: "status", hidden: true, onclick: () => this.closeHintNote() });
    this.hintNoteTimer = 0;
    this.mePlate = this.makePlate("me");
    this.me = h(
      "section",
      { class: "me" },
      this.coverBox,
      this.timedOutBox,
      this.watchingBox,
      this.stopBox,
      this.hintNote,
      h("div", { class: "me-status" }, this.status, this.myTimer, this.myTimerText, this.timeSaid, this.hintBtn),
      this.watchNote,
      this.overBox,
      this.choiceBox,
      this.lempasBox,
      h("div", { class: "me-main" }, this.mePlate.el, this.hand),
    );

    this.feedList = h("ol", { class: "feed-list" });
    // the feed follows new moves unless the reader scrolled up; whether it follows is decided only
    // while the list is shown (a phone's closed drawer has no size), and when it comes into view
    // (the drawer opened, the window widened) it shows the latest move
    this.feedFollow = true;
    this.feedPinned = 0; // the scrollTop the page itself last gave the list (feedToEnd)
    this.feedHeight = 0; // the list's scrollHeight when the page last looked (the frame of an update, a scroll)
    this.feedList.addEventListener("scroll", () => {
      const list = this.feedList;
      if (list.clientHeight === 0) return;
      // a scroll is reported a frame after it was made, and the moves of that frame are already in
      // the list: the reader who scrolled to the end of what was there is at the end
      const end = this.feedHeight ? Math.min(list.scrollHeight, this.feedHeight) : list.scrollHeight;
      const atEnd = end - list.scrollTop - list.clientHeight < 40;
      this.feedHeight = list.scrollHeight;
      // the page's own scroll to the latest line may be reported after the list got shorter (the
      // window's height settling after its width, the chat growing), away from the end though the
      // reader never moved it. Only the reader's scroll (elsewhere than where the page put it)
      // stops the following; the resize puts it back.
      if (atEnd || list.scrollTop !== this.feedPinned) this.feedFollow = atEnd;
    });
    this.feedSized = new ResizeObserver(() => {
      if (this.feedFollow) this.feedToEnd();
    });
    this.feedSized.observe(this.feedList);
    // on one's turn the feed drawer (a phone's overlay) ends above the hand, never over it: the
    // hand's height is heard from the layout (reading it after each update would force one more)
    this.meHeight = "";
    this.meSized = new ResizeObserver(() => {
      const meHeight = `${this.me.offsetHeight}px`;
      if (this.meHeight === meHeight) return;
      this.meHeight = meHeight;
      this.say("--me-h", meHeight); // the drawer and the toasts end above it (app.css)
    });
    this.meSized.observe(this.me);
    // the feed drawer (a phone's or tablet's overlay), the toasts and a desktop's reconnecting
    // banner (room.js, over the table) start below the top bar, whose height is its buttons' rows (a
    // host's End match and Last round wrap a phone's bar to two lines): heard from the layout, said
    // on them (the toasts and the banner are outside the table: say)
    this.barBottom = "";
    this.barSized = new ResizeObserver(() => {
      this.fitBar();
      this.placeFeed(); // a drawer over the table, or a column beside it (the window's width)
      const barBottom = `${Math.ceil(this.bar.getBoundingClientRect().bottom)}px`;
      if (this.barBottom === barBottom) return;
      this.barBottom = barBottom;
      this.say("--bar-bottom", barBottom);
    });
    // a toast (dom.js) and the connection banner (room.js) show over the felt only (its box said on
    // both: say), so that they cover no plate: the banner at its top, the
    // toasts above its bottom edge (a phone on its side: under the banner); the chain keeps clear of
    // both (the board's top and bottom they cover, ChainBoard.setClear).
    // Their boxes, the felt's and the bar's are heard from the layout.
    this.overSized = new ResizeObserver(() => this.clearOverlays());
    this.chatBox = new ChatBox(this.ctl, { onReaction: (line) => this.showReaction(line), onUnread: (n) => this.showUnread(n) });
    this.sheetBox = h("section", { class: "sheet-box", hidden: !this.kozel, "aria-label": t("sheet.heading") });
    // the drawer's foot: the chat's box to write in while the feed is a drawer over the table
    // (placeFeed), kept at its bottom edge as the score sheet, the play-by-play and the chat scroll
    this.feedFoot = h("div", { class: "feed-foot" });
    this.feed = h(
      "aside",
      { class: "feed", id: "feed", "aria-label": t("table.feed") },
      h(
        "div",
        { class: "feed-head" },
        h("h2", { tabindex: "-1" }, t("table.feed")), // where the focus goes as its button opens the drawer
        // the buttons as one group: on a narrow phone they go under the title together
        h(
          "span",
          { class: "feed-tools" },
          h("span", { class: "feed-alerts" }, alertButtons()),
          h("span", { class: "feed-lang" }, languageSelect()),
          h("button", { class: "icon-btn feed-close", type: "button", onclick: () => this.toggleFeed(false) }, t("common.close")),
        ),
      ),
      this.sheetBox,
      this.feedList,
      this.chatBox.el,
      this.feedFoot,
    );

    this.opps = (OPP_AREAS[this.seatCount] || OPP_AREAS[5]).map((area) => this.makePlate(area));
    this.flights = h("div", { class: "flights", "aria-hidden": "true" });
    this.el = h(
      "div",
      // the number of seats: a layout may place the plates by it (static/css/app.css)
      { class: "table-screen", dataset: { seats: String(this.seatCount) } },
      this.bar,
      ...this.opps.map((p) => p.el),
      this.felt,
      this.ticker,
      this.movesSaid,
      this.me,
      this.feed,
      this.flights,
    );
    this.barSized.observe(this.bar);
    this.barSized.observe(this.el);
    // a web font that arrives after the bar was fitted changes its words' widths, not the bar's
    // size (which its ResizeObserver hears, a window's resize among them): the bar is fitted again
    // once the fonts have loaded, in the next frame, once for all the fonts of that frame
    this.fontsLoaded = 0; // how often fonts finished loading: part of what the bar's fit was measured for
    this.barFrame = 0;
    this.onFonts = () => {
      if (this.destroyed) return;
      this.fontsLoaded += 1;
      this.barFrame ||= requestAnimationFrame(() => {
        this.barFrame = 0;
        this.fitBar();
      });
    };
    document.fonts?.addEventListener("loadingdone", this.onFonts);
    document.fonts?.ready.then(this.onFonts);
    for (const el of [this.bar, this.felt, document.getElementById("toasts"), this.ctl.banner]) if (el) this.overSized.observe(el);
  }

  /** The elements whose rules read the custom property ``name`` (one of SAID_ON's) and that exist. */
  saidOn(name) {
    const on = { toasts: document.getElementById("toasts"), banner: this.ctl.banner, feed: this.feed };
    return SAID_ON[name].map((key) => on[key]).filter(Boolean);
  }

  /** Say a length heard from the layout (``name``, one of SAID_ON's; ``value`` CSS, "12px") on the
   * elements whose rules read it (app.css), not on the page's body: a custom property is inherited,
   * and one changed on the body had Chromium compute the style of every element of the page again
   * (the felt's box moves with most moves, as the plates' rows grow and shrink). Only a value that
   * changed is set (dom.js setStyle): the felt's four are said together whenever one moves. */
  say(name, value) {
    for (const el of this.saidOn(name)) setStyle(el, name, value);
  }

  /** Say the felt's inner box on the toasts and the banner (--felt-top, --felt-bottom, --felt-left,
   * --felt-right: px from the window's edges: say) and keep the chain clear of the toasts and the
   * banner over the board: those over its upper half cover its top, those over its lower half (the
   * toasts, above the felt's bottom edge: app.css) its bottom. */
  clearOverlays() {
    const felt = this.felt.getBoundingClientRect();
    this.say("--felt-top", `${Math.round(felt.top + this.felt.clientTop)}px`);
    this.say("--felt-bottom", `${Math.round(window.innerHeight - felt.bottom + this.felt.clientTop)}px`);
    this.say("--felt-left", `${Math.round(felt.left + this.felt.clientLeft)}px`);
    this.say("--felt-right", `${Math.round(window.innerWidth - felt.right + this.felt.clientLeft)}px`);
    const board = this.chain.el.getBoundingClientRect();
    let clear = 0;
    let clearBottom = 0;
    for (const el of [document.getElementById("toasts"), this.ctl.banner]) {
      if (!el || el.hidden) continue;
      const r = el.getBoundingClientRect();
      if (!r.height || r.right <= board.left || r.left >= board.right || r.top >= board.bottom || r.bottom <= board.top) continue;
      if (r.top + r.bottom > board.top + board.bottom) clearBottom = Math.max(clearBottom, board.bottom - r.top + 6);
      else clear = Math.max(clear, r.bottom + 6 - board.top);
    }
    this.chain.setClear(clear, clearBottom);
  }

  /** The host's "give the seat to a bot" for an absent player: a second click within 4 s confirms. */
  replaceButton(seat) {
    const button = h("button", { class: "tag tag-replace", type: "button", dataset: { replaceSeat: String(seat) } }, t("seat.replace"));
    button.addEventListener("click", () => {
      if (button.dataset.armed) {
        button.disabled = true;
        this.ctl.setSeatBot(seat, COVER_LEVEL);
        return;
      }
      button.dataset.armed = "1";
      button.textContent = t("seat.replace_confirm");
      setTimeout(() => {
        if (!button.isConnected || button.disabled) return;
        delete button.dataset.armed;
        button.textContent = t("seat.replace");
      }, 4000);
    });
    return button;
  }

  makePlate(area) {
    const plate = {
      // placed by its class (static/css/app.css: .plate-o1 … .plate-o23), each layout its own way
      el: h("section", { class: `plate plate-${area}` }),
      conn: h("span", { class: "conn", "aria-hidden": "true" }),
      name: h("span", { class: "plate-name" }),
      nameText: h("bdi", { class: "name-text" }),
      you: h("span", { class: "you", hidden: true }),
      tags: h("div", { class: "plate-tags" }),
      stones: h("span", { class: "plate-stones" }),
      stonesCount: h("b", { class: "count" }),
      hand: h("span", { class: "plate-hand", "aria-hidden": "true" }),
      handCount: h("b", { class: "count" }),
      timer: h("div", { class: "plate-timer", hidden: true }, h("span", { class: "timer-track" }, h("i")), h("span", { class: "timer-text" })),
      turn: h("span", { class: "turn-flag", "aria-hidden": "true" }, "▶"),
      // a bot (or a bot covering a seat) is choosing: three dots over the plate's corner, out of
      // the flow so they never move anything
      thinking: h("span", { class: "thinking", "aria-hidden": "true", hidden: true }, h("i"), h("i"), h("i")),
      points: h("span", { class: "plate-points" }),
      pointsCount: h("b", { class: "count" }),
      // what the number counts: "37 pts", in pairs "37 pts (pair)" (K10)
      pointsUnit: h("small", { class: "unit" }),
      pending: h("small", { class: "pending" }),
    };
    // the name shrinks into an ellipsis inside its box; "(you)" never does
    plate.name.append(plate.nameText, plate.you);
    plate.stones.append(stoneSvg(), plate.stonesCount);
    // spaces, not margins: a narrow plate breaks the line there ("0 poin (pasangan)" / "+12")
    plate.points.append(plate.pointsCount, " ", plate.pointsUnit, " ", plate.pending);
    plate.el.append(
      h("div", { class: "plate-top" }, plate.turn, plate.conn, plate.name),
      plate.tags,
      h("div", { class: "plate-row" }, this.kozel ? plate.points : plate.stones, h("span", { class: "plate-tiles" }, plate.hand, plate.handCount)),
      plate.timer,
      plate.thinking,
    );
    return plate;
  }

  /** A move of this page's is on its way, unanswered (the controller's ``outbox``, room.js
   * `settleOutbox`): the hand waits, and the status says it is sending. */
  get pending() {
    return !!this.ctl.outbox;
  }

  // -- updating --------------------------------------------------------------------------------

  /** Redraw from the controller's latest state; ``events`` are the ones this update added. */
  update(events = []) {
    const { view, room } = this.ctl;
    if (!view || !room) return;
    const legalTiles = this.legalByTile();
    if (this.choosing && !legalTiles.has(tileKey(this.choosing))) this.choosing = null;
    const myTurn = this.isMyTurn();
    // the table's own attributes only when they change: a change restyles everything under it
    setAttr(this.el, "data-my-turn", String(myTurn));
    this.placeFeed(); // the hand under an open drawer takes the focus on one's turn only
    setAttr(this.el, "data-phase", view.phase);
    if (this.el.classList.contains("spectating") !== (this.ownSeat() === null)) this.el.classList.toggle("spectating");
    // this window lost its seat to another and follows the table no more: what it still shows is
    // dimmed (static/css/app.css), without what looked live (who is away or covered, whose turn,
    // its timer), and its chat takes no line until "Play here"
    const replaced = !this.isLive();
    if (this.el.classList.contains("replaced") !== replaced) this.el.classList.toggle("replaced");
    this.chatBox.setLive(!replaced && !this.isClosed()); // removed by the host, its seat a bot's, closed: it writes no more
    setText(this.roundLabel, t("table.round", { n: view.round }));
    if (this.kozel) {
      setText(this.bazaarCount, String(view.bazaar ?? 0));
      this.bazaar.dataset.tiles = String(view.bazaar ?? 0);
      setAttr(this.bazaar, "aria-label", t("table.bazaar_aria", { n: view.bazaar ?? 0 }));
      setAttr(this.bazaar, "title", t("table.bazaar_aria", { n: view.bazaar ?? 0 }));
      this.updateSheet();
    } else {
      setText(this.pileCount, String(view.table ?? 0));
      this.pile.dataset.stones = String(view.table ?? 0);
      setAttr(this.pile, "aria-label", t("table.pile_aria", { n: view.table ?? 0 }));
      setAttr(this.pile, "title", t("table.pile_aria", { n: view.table ?? 0 }));
    }
    this.lastRoundBtn.hidden = !this.ctl.roundEnd && !this.ctl.offersLastMatch();
    this.lastRoundBtn.dataset.opens = this.ctl.roundEnd ? "round" : "match";
    setText(this.lastRoundLabel, this.ctl.roundEnd ? t("table.last_round") : t("table.last_match"));
    // the round-end panel would cover the hand: not while one's turn timer runs (after the move)
    const hurry = this.ctl.myTimerRuns();
    this.lastRoundBtn.disabled = hurry;
    this.lastRoundHurry = hurry; // its tooltip: fitBar, from updateStop (the bar's last change)
    const base = this.ownSeat() ?? 0;
    const n = this.seatCount;
    for (let pos = 1; pos < n; pos += 1) this.updatePlate(this.opps[pos - 1], (base + pos) % n);
    this.updatePlate(this.mePlate, base);
    this.chain.update(view.chain, view.ends, this.choosing, this.openingIndex());
    // the leader's first turn: the status says "You lead: play a raised tile to open", which the
    // empty felt's "the leader opens" only said again (the others still read it there)
    const leading = this.isLeading();
    if (this.chain.empty.hidden !== leading) this.chain.empty.hidden = leading;
    this.updateHand(legalTiles);
    this.updateHint(myTurn);
    if (myTurn && document.activeElement === this.hand) this.hand.querySelector(".hand-tile.playable[tabindex='0']")?.focus();
    this.updateStatus(myTurn);
    this.updateLempas(myTurn);
    this.updateFeed();
    this.tick();
    if (events.length) this.animate(events);
    this.autoDraw(myTurn);
    const title = myTurn ? `● ${t("table.your_turn_short")} · ${t("app.title")}` : t("app.title");
    if (document.title !== title) document.title = title;
    // a turn with a tile to choose (a forced pass is the server's, a Kozel draw the page's own)
    const choosing = myTurn && (view.legal || []).some((a) => a.play !== undefined);
    this.alerts.update(view, events, choosing, t("alerts.turn_body", { code: this.ctl.code }));
  }

  /** A wide screen's bar shows its buttons' words; where they and the language's name do not all
   * fit (after a round in Ukrainian or Russian, "Round results" and "Copy link" beside the menu),
   * the buttons give their words up one by one for their icon: first Copy link, then Rules, then
   * End match, then Round results; only then does the language menu narrow (static/css/app.css,
   * data-tight). A button shown as its icon alone (here, or always on a phone's and a tablet's bar)
   * is still named by its hidden words, and has them as its tooltip. Measured when what the bar
   * holds or its width changes, and again when web fonts have loaded (``fontsLoaded``). */
  fitBar() {
    const { bar, barActions } = this;
    const key = [
      bar.clientWidth,
      document.documentElement.lang,
      this.stopBtn.hidden,
      this.lastRoundBtn.hidden,
      this.lastRoundLabel.textContent,
      this.fontsLoaded,
    ].join("|");
    if (key !== this.barFit) {
      this.barFit = key;
      // its whole width (past the bar's edge where it does not fit), without transitions: a reduced
      // motion's 0.01 ms one (app.css) still shows the old value to a measure in the same task
      bar.classList.add("measuring");
      let level = 0;
      for (; level < 4; level += 1) {
        bar.dataset.tight = String(level);
        if (bar.scrollWidth <= bar.clientWidth) break;
      }
      bar.dataset.tight = String(level);
      // the buttons whose words are hidden (their class, as in the words' tooltips below)
      const hidden = (b) => (b.querySelector(".lbl")?.getBoundingClientRect().width ?? 2) <= 1;
      this.barIcons = new Set([...barActions.querySelectorAll(".icon-btn")].filter(hidden).map((b) => b.classList[1]));
      bar.classList.remove("measuring");
    }
    const tip = (el, words) => setAttr(el, "title", this.barIcons.has(el.classList[1]) ? words : null);
    tip(barActions.querySelector(".copy-link"), t("room.copy_link"));
    tip(barActions.querySelector(".rules-link"), t("nav.rules"));
    tip(this.feedToggle, t("table.feed"));
    tip(this.lastRoundBtn, this.lastRoundLabel.textContent);
    if (this.lastRoundHurry) setAttr(this.lastRoundBtn, "title", t("table.last_round_after_turn"));
  }

  /** Where the opening tile sits in the chain: one place further right for each tile laid on L. */
  openingIndex() {
    return (this.ctl.view.log || []).filter((e) => e.type === "placed" && e.end === "L").length;
  }

  /** The hint shown for the turn in play (its action), or null. */
  currentHint() {
    const hint = this.hinted;
    return hint && hint.version === this.ctl.version ? hint.action : null;
  }

  /** The tile of the hint shown for the turn in play ("a-b", low first), or null: a two-lempas
   * hint (K4) raises the two-lempas button instead (updateLempas), as clicking one lempa would play
   * it alone. */
  hintedTile() {
    const play = this.currentHint()?.play;
    return typeof play === "string" ? tileKey(play) : null;
  }

  updateHint(myTurn) {
    const { view, room } = this.ctl;
    const choice = myTurn && (view.legal || []).length > 1;
    this.hintBtn.hidden = !(room.hints && choice);
    const busy = this.hintAsked === this.ctl.version && !this.currentHint();
    // never ``disabled`` while the hint is on its way: a focused button that is disabled drops the
    // keyboard's focus to the page's body
    setAttr(this.hintBtn, "aria-disabled", busy ? "true" : null);
    this.hintBtn.classList.toggle("busy", busy);
    if (this.hintNote.dataset.kind === "shown" && !this.hintNote.hidden && !this.currentHint()) this.closeHintNote(); // its turn is over
  }

  askHint() {
    if (this.currentHint()) return this.showHint(this.hinted.action);
    if (this.hintAsked === this.ctl.version) return; // asked: on its way
    // pressed from the keyboard (or clicked): the hinted tile takes the focus when the hint comes
    this.hintFocus = document.activeElement === this.hintBtn;
    this.hintAsked = this.ctl.version;
    this.ctl.socket?.send({ type: "hint" });
    this.updateHint(this.isMyTurn());
  }

  showHint(action) {
    this.sayHint(tf("hint.shown", { action: optionText(action, this.ctl.view?.ends, loneLempa(this.ctl.view?.chain)) }), "shown");
  }

  /** Show a hint's words in the hint note for ``ms`` (``kind``: "shown" for this seat's own hint,
   * which goes with its turn; "used" when another seat used one). */
  sayHint(content, kind, ms = 4000) {
    clearTimeout(this.hintNoteTimer);
    replace(
      this.hintNote,
      h("span", { class: "hint-note-text" }, content),
      h("button", { class: "hint-note-close", type: "button", "aria-label": t("common.close") }, "×"),
    );
    this.hintNote.dataset.kind = kind;
    this.hintNote.hidden = false;
    this.hintNoteTimer = setTimeout(() => this.closeHintNote(), ms);
  }

  closeHintNote() {
    clearTimeout(this.hintNoteTimer);
    this.hintNote.hidden = true;
    replace(this.hintNote);
  }

  /** ``hint`` (the action, for this seat) and ``hint_used`` (someone used one) from the server. */
  onHint(message) {
    if (message.type === "hint") {
      if (message.version !== this.ctl.version) return; // the turn moved on
      this.hinted = { version: message.version, action: message.action };
      this.updateHand(this.legalByTile());
      this.updateLempas(this.isMyTurn());
      this.updateHint(this.isMyTurn());
      this.showHint(message.action);
      this.focusHinted();
    } else if (message.seat !== this.ctl.seat) {
      this.sayHint(tf("hint.used", { name: seatName(this.ctl.room, message.seat) }), "used");
    }
  }

  /** After a hint asked from the Hint button, while the focus is still there (or was dropped):
   * the focus goes to what the hint plays, the hinted tile, or the two-lempas move's first button
   * (K4), else the hand's Tab stop. */
  focusHinted() {
    if (!this.hintFocus) return;
    this.hintFocus = false;
    const here = document.activeElement;
    if (here !== this.hintBtn && here !== document.body && here !== null) return; // moved on by itself
    const tile = this.handButtons.get(this.hintedTile());
    const lempas = this.lempasBox.hidden ? null : this.lempasBox.querySelector("button");
    const stop = this.hand.querySelector(".hand-tile[tabindex='0']");
    (tile || lempas || stop)?.focus();
  }

  /** Whether this seat opens the round now: its turn on an empty chain, a tile to place, no bot
   * covering it (the status then says "You lead", `updateStatus`). */
  isLeading() {
    const { view } = this.ctl;
    return view.chain.length === 0 && this.isMyTurn() && !this.isCovered() && (view.legal || []).some((a) => a.play !== undefined);
  }

  /** The seat this table is shown from: this window's, or the one another window took from it
   * (shown dimmed from there until "Play here", rather than as another player's); null for a
   * spectator. Acting goes by ``ctl.seat`` alone. */
  ownSeat() {
    return this.ctl.seat ?? this.ctl.replacedSeat ?? null;
  }

  /** Whether this window follows the table: false once another window took its seat (the room's
   * ``connection.replaced``), until "Play here". */
  isLive() {
    return !this.ctl.connection?.replaced;
  }

  isMyTurn() {
    const { view, seat } = this.ctl;
    return seat !== null && view.phase === "playing" && view.to_act === seat && !this.isClosed();
  }

  /** Whether the room was closed (by an admin, or as abandoned): nothing more can be played here. */
  isClosed() {
    return !!this.ctl.connection?.closed;
  }

  legalByTile() {
    const map = new Map();
    for (const action of this.ctl.view.legal || []) {
      if (typeof action.play !== "string") continue;
      const key = tileKey(action.play);
      if (!map.has(key)) map.set(key, []);
      map.get(key).push(action);
    }
    return map;
  }

  updatePlate(plate, seat) {
    const { view, room } = this.ctl;
    const info = room.seats[seat] || {};
    const stones = view.stones?.[seat] ?? 0;
    const count = view.hand_counts?.[seat] ?? 0;
    // a window that lost its seat, or a closed table, says nothing of who is here, or acts
    const live = this.isLive() && !this.isClosed();
    const acting = live && view.phase === "playing" && view.to_act === seat;
    const mine = seat === this.ownSeat();
    const el = plate.el;
    el.dataset.seat = String(seat);
    el.classList.toggle("acting", acting);
    el.classList.toggle("mine", mine);
    el.classList.toggle("offline", live && !info.connected);
    const thinking = acting && (info.kind === "bot" || Boolean(info.covered) || Boolean(info.stand_in));
    el.classList.toggle("bot-thinking", thinking);
    el.classList.toggle("bot", info.kind === "bot");
    if (plate.thinking.hidden === thinking) plate.thinking.hidden = !thinking;
    const name = info.kind === "bot" ? botName(seat, info.bot_level) : seatName(room, seat);
    setText(plate.nameText, name);
    setAttr(plate.nameText, "title", name);
    setText(plate.you, mine ? t("seat.you_suffix") : "");
    if (plate.you.hidden === mine) plate.you.hidden = !mine;
    if (this.kozel) this.updatePoints(plate, seat);
    plate.stones.dataset.seatStones = String(seat);
    plate.stones.dataset.stones = String(stones);
    setText(plate.stonesCount, String(stones));
    setAttr(plate.stones, "title", t("stones.count", { n: stones }));
    setText(plate.handCount, `×${count}`);
    keepCount(plate.hand, Math.min(count, 5), () => tileBackSvg());
    plate.conn.className = live ? `conn ${info.connected ? "on" : "off"}` : "conn";
    const tags = [];
    if (info.kind === "bot") tags.push(h("span", { class: "tag tag-bot" }, t("seat.bot")));
    else if (info.kind === "human" && !mine) tags.push(h("span", { class: "tag tag-human" }, t("seat.person")));
    if (live && info.covered) tags.push(h("span", { class: "tag tag-covered" }, t("seat.covered")));
    else if (live && info.stand_in) tags.push(h("span", { class: "tag tag-covered tag-stand-in" }, t("seat.stand_in")));
    if (live && info.kind === "human" && !info.connected) {
      // the host sees what to do about it instead (the red dot still says offline)
      if (this.ctl.hostToken && !mine && room.status === "playing") tags.push(this.replaceButton(seat));
      else tags.push(h("span", { class: "tag tag-offline" }, t("seat.offline")));
    }
    if (view.last_placer === seat && view.phase === "playing" && !this.kozel) tags.push(h("span", { class: "tag tag-mappano" }, tfSpan("seat.last_mappano")));
    if (this.ownSeat() !== null && !mine && view.sides?.some((side) => side.length > 1 && side.includes(seat) && side.includes(this.ownSeat()))) tags.push(h("span", { class: "tag tag-partner" }, t("seat.partner")));
    // one tag for the camat: the camat now (gold) says "camat", or "camat ×2" from a second election
    // on; a seat elected before but not now says its count ("camat ×1")
    const elections = view.elections?.[seat] ?? 0;
    if (view.camat === seat) tags.push(h("span", { class: "tag tag-camat" }, elections > 1 ? tfSpan("seat.elections", { n: elections }) : tfSpan("seat.camat")));
    else if (elections) tags.push(h("span", { class: "tag tag-elections" }, tfSpan("seat.elections", { n: elections })));
    const tagKey = tags.map((x) => x.textContent).join("|");
    if (plate.tagKey !== tagKey) {
      plate.tagKey = tagKey;
      replace(plate.tags, tags);
    }
    const aria = [
      name,
      info.kind === "bot" ? botLabel(info.bot_level) : t("seat.person"),
      t("tiles.count", { n: count }),
      this.kozel ? this.pointsText(seat) : t("stones.count", { n: stones }),
      !live ? null : info.connected ? t("seat.online") : t("seat.offline"),
      !live ? null : info.covered ? t("seat.covered") : info.stand_in ? t("seat.stand_in") : null,
      acting ? t("seat.to_act") : null,
      thinking ? t("seat.thinking") : null,
    ].filter(Boolean);
    setAttr(el, "aria-label", aria.join(", "));
  }

  /** Kozel: recorded points on the plate, or the pending points of a seat that has not opened
   * (K8), with what they count: the seat's points, or in pairs its pair's (K10). */
  updatePoints(plate, seat) {
    const { view } = this.ctl;
    const points = view.points?.[seat] ?? 0;
    const pending = view.pending?.[seat] ?? 0;
    plate.points.dataset.seatPoints = String(seat);
    plate.points.dataset.points = String(points);
    plate.points.dataset.pending = String(pending);
    plate.points.classList.toggle("opened", points > 0);
    setText(plate.pointsCount, String(points));
    setText(plate.pointsUnit, t(this.inPair(seat) ? "plate.pair_points_unit" : "plate.points_unit", { n: points }));
    setText(plate.pending, points > 0 || !pending ? "" : `+${pending}`);
    setAttr(plate.points, "title", this.pointsText(seat));
  }

  /** Whether ``seat`` shares its points with a partner (Kozel's pairs, K10). */
  inPair(seat) {
    return Boolean(this.ctl.view.sides?.some((side) => side.length > 1 && side.includes(seat)));
  }

  pointsText(seat) {
    const { view } = this.ctl;
    const points = view.points?.[seat] ?? 0;
    const pair = this.inPair(seat) ? "pair_" : "";
    return points > 0 ? t(`points.${pair}count`, { n: points }) : t(`points.${pair}pending`, { n: view.pending?.[seat] ?? 0 });
  }

  updateSheet() {
    const { view, room, seat } = this.ctl;
    const key = `${view.points}|${view.pending}|${this.ctl.langKey}`;
    if (key === this.sheetKey) return;
    this.sheetKey = key;
    replace(this.sheetBox, h("h2", {}, t("sheet.heading")), scoreSheet(room, view, seat, true), h("p", { class: "sheet-note" }, tf("sheet.note")));
  }

  /** Kozel K4: the two-lempas move, offered as one button when it is legal. */
  updateLempas(myTurn) {
    const action = myTurn && !this.pending ? (this.ctl.view.legal || []).find((a) => Array.isArray(a.play)) : null;
    this.lempasBox.hidden = !action || !!this.choosing;
    if (!action) return;
    const hinted = this.currentHint()?.play;
    const same = Array.isArray(hinted) && [...hinted].sort().join("+") === [...action.play].sort().join("+");
    const key = action.play.join("+") + (same ? " hinted" : "");
    if (this.lempasBox.dataset.move === key) return;
    this.lempasBox.dataset.move = key;
    const [a, b] = action.play;
    replace(
      this.lempasBox,
      h(
        "button",
        { class: `btn btn-gold two-lempas${key.endsWith(" hinted") ? " hinted" : ""}`, type: "button", onclick: () => this.send(action) },
        miniTile(a),
        " ",
        miniTile(b),
        " ",
        tf("table.play_two_lempas", { a, b }),
      ),
    );
  }

  /** Kozel K3: with nothing to place and tiles in the bazaar, draw one (after a short pause, so
   * each draw shows); the next state says whether to draw again. */
  autoDraw(myTurn) {
    const legal = this.ctl.view.legal || [];
    const me = this.ctl.room.seats[this.ctl.seat] || {};
    // while a bot plays for this seat (covering it, or this one turn) the bot draws, not the page
    const drawing = myTurn && !this.pending && !me.covered && !me.stand_in && legal.length === 1 && legal[0].draw === true;
    if (!drawing || this.drawVersion === this.ctl.version) return;
    this.drawVersion = this.ctl.version;
    clearTimeout(this.drawTimer);
    this.drawTimer = setTimeout(() => {
      if (this.isMyTurn() && !this.pending && this.ctl.version === this.drawVersion) this.send(legal[0]);
    }, reducedMotion() ? 120 : AUTO_DRAW_MS);
  }

  updateHand(legalTiles) {
    const { view, seat } = this.ctl;
    const myTurn = this.isMyTurn();
    setAttr(this.hand, "aria-label", seat === null ? t("hand.watching_aria", { name: seatName(this.ctl.room, 0) }) : t("hand.aria"));
    setAttr(this.hand, "role", seat === null || !view.hand ? "group" : "toolbar");
    this.hand.classList.toggle("my-turn", myTurn);
    if (seat === null || !view.hand) {
      const n = view.hand_counts?.[0] ?? 0;
      if (this.hand.dataset.backs !== String(n)) {
        this.hand.dataset.backs = String(n);
        for (const el of [...this.hand.children]) if (!el.classList.contains("hand-back")) el.remove(); // a seat's tiles, as it left
        keepCount(this.hand, n, () => h("span", { class: "hand-back" }, tileBackSvg()));
        this.handButtons.clear();
      }
      return;
    }
    delete this.hand.dataset.backs;
    const keys = view.hand.map(tileKey);
    setStyle(this.hand, "--hand-n", String(Math.max(keys.length, 1))); // the tiles share one row (app.css)
    for (const [key, btn] of this.handButtons) {
      if (!keys.includes(key)) {
        btn.remove();
        this.handButtons.delete(key);
      }
    }
    this.hand.querySelectorAll(".hand-back").forEach((x) => x.remove());
    keys.forEach((key, i) => {
      let btn = this.handButtons.get(key);
      if (!btn) {
        const [a, b] = pips(key);
        btn = h(
          "button",
          { class: "hand-tile", type: "button", dataset: { tile: key }, onclick: () => this.pick(key) },
          tileSvg(a, b, { vertical: true }),
          h("span", { class: "marker", "aria-hidden": "true" }, "▲"),
        );
        this.handButtons.set(key, btn);
      }
      if (this.hand.children[i] !== btn) this.hand.insertBefore(btn, this.hand.children[i] || null);
      const playable = myTurn && !this.pending && legalTiles.has(key);
      const [a, b] = pips(key);
      btn.classList.toggle("playable", playable);
      btn.classList.toggle("chosen", this.choosing === key);
      btn.classList.toggle("hinted", playable && this.hintedTile() === key);
      // never ``disabled``: a tile that cannot be played stays reachable by the arrow keys (a blind
      // player steps through the whole hand) and says so with aria-disabled; `pick` plays only the legal
      setAttr(btn, "aria-disabled", playable ? null : "true");
      setAttr(btn, "aria-pressed", this.choosing === key ? "true" : null);
      setAttr(btn, "aria-label", t(playable ? "tile.playable" : "tile.aria", { a, b }));
    });
    const tiles = [...this.hand.querySelectorAll(".hand-tile")];
    const playable = tiles.filter((btn) => btn.classList.contains("playable"));
    // the Tab stop: the tile last focused while it can be played, else the hinted one, else the first
    // that can be played, else the one last focused, else the first
    // a tile with the focus keeps the stop, played or not (Tab leaves the hand from it, in one)
    const roving = tiles.find((btn) => btn.dataset.tile === this.roving);
    const focused = tiles.find((btn) => btn === document.activeElement);
    this.rove(focused || (roving?.classList.contains("playable") ? roving : null) || playable.find((btn) => btn.classList.contains("hinted")) || playable[0] || roving || tiles[0]);
  }

  /** ``tile`` (a hand's button, or none) becomes the hand's one Tab stop. */
  rove(tile) {
    if (tile) this.roving = tile.dataset.tile;
    for (const btn of this.handButtons.values()) {
      const stop = btn === tile ? "0" : "-1";
      if (btn.getAttribute("tabindex") !== stop) btn.setAttribute("tabindex", stop);
    }
  }

  /** ArrowLeft/ArrowUp and ArrowRight/ArrowDown (round the hand), Home and End: focus another tile
   * of the hand, those that cannot be played too (aria-disabled: said, never played). */
  onHandKey(event) {
    const tiles = [...this.hand.querySelectorAll(".hand-tile")];
    if (arrowsAlong(event, tiles, true)) this.rove(document.activeElement);
  }

  /** Whether the match is over (nothing more to play, or to come back to). */
  isOver() {
    return this.ctl.view.match_over || this.ctl.room.status === "finished";
  }

  /** Whether a bot covers this player's seat: it plays for them until they are back. */
  isCovered() {
    const { room, seat } = this.ctl;
    return seat !== null && !!room.seats[seat]?.covered && !this.isOver();
  }

  updateStatus(myTurn) {
    const { view, room, seat } = this.ctl;
    const info = seat === null ? null : room.seats[seat];
    const over = this.isOver();
    const covered = this.isCovered();
    const standIn = !!info?.stand_in && !covered && !over;
    this.coverBox.hidden = !covered && !standIn;
    const coverKey = covered ? "covered" : standIn ? "stand_in" : "";
    if (this.coverBox.dataset.kind !== coverKey) {
      this.coverBox.dataset.kind = coverKey;
      if (covered) {
        replace(
          this.coverBox,
          h("span", {}, t("table.covered")),
          h("button", { class: "btn btn-gold", type: "button", onclick: () => this.ctl.back() }, t("table.im_back")),
        );
      } else replace(this.coverBox, standIn ? h("span", {}, t("table.stand_in")) : []);
    }
    this.updateTimedOut(covered);
    this.updateOver(over);
    this.updateWatchNote();
    this.updateKeepWatching();
    this.updateStop();
    this.choiceBox.hidden = !this.choosing;
    setAttr(this.el, "data-choosing", this.choosing ? "true" : null);
    if (this.choosing) {
      const [a, b] = pips(this.choosing);
      replace(
        this.choiceBox,
        h("button", { class: "btn end-btn", type: "button", dataset: { end: "L" }, onclick: () => this.playEnd("L") }, "◀ ", t("table.end_left", { n: view.ends?.[0] ?? "" })),
        h("button", { class: "btn end-btn", type: "button", dataset: { end: "R" }, onclick: () => this.playEnd("R") }, t("table.end_right", { n: view.ends?.[1] ?? "" }), " ▶"),
        h("button", { class: "btn btn-quiet", type: "button", onclick: () => this.cancelChoice() }, t("common.cancel")),
      );
      setText(this.status, t("table.choose_end", { a, b }));
      return;
    }
    let text;
    if (this.isClosed()) text = t(this.ctl.closedWords());
    else if (view.phase !== "playing") text = view.match_over ? t("table.match_over") : t("table.round_over");
    else if (myTurn && this.pending) text = t("table.sending"); // the move is out: its answer is awaited
    else if (myTurn) {
      const forced = (view.legal || []).length > 0 && view.legal.every((a) => a.pass);
      const drawing = (view.legal || []).length > 0 && view.legal.every((a) => a.draw);
      if (drawing) text = t("table.drawing", { n: view.bazaar ?? 0 });
      else if (forced) text = this.kozel ? t("table.must_pass_kozel") : t("table.must_pass");
      else if (covered) text = t("table.covered_turn"); // the bot plays it, unless they play first
      else text = view.chain.length === 0 ? t("table.your_turn_open") : t("table.your_turn");
    } else if (this.ctl.connection?.replaced) text = t("table.replaced"); // its player's, not a spectator's
    else if (seat === null) text = t("table.watching", { name: seatName(room, view.to_act) });
    else text = t("table.waiting_for", { name: seatName(room, view.to_act) });
    setText(this.status, text);
    this.status.classList.toggle("attention", myTurn);
  }

  /** "Time's up — a bot played 0–6 for you." while the controller keeps a move a bot made for
   * this seat when its timer ran out (``ctl.timedOut``), unless a bot now covers the seat (the
   * cover note says more); drawn again only when it or the language changes (a live region says
   * what it is given again). */
  updateTimedOut(covered) {
    const timedOut = this.isLive() && !covered ? this.ctl.timedOut : null;
    const key = timedOut ? `${this.ctl.langKey}|${timedOut.round}|${timedOut.at}` : "";
    if (this.timedOutBox.dataset.key === key) return;
    this.timedOutBox.dataset.key = key;
    if (!timedOut) return replace(this.timedOutBox, []);
    const { event } = timedOut;
    const words = event.type === "placed" ? tf("table.timed_out_played", { tile: h("span", { class: "tile-inline" }, miniTile(event.tile)) }) : tf("table.timed_out_passed");
    replace(
      this.timedOutBox,
      h("span", { class: "timed-out-text" }, words),
      h("button", { class: "hint-note-close", type: "button", "aria-label": t("common.close"), onclick: () => this.ctl.dismissTimedOut() }, "×"),
    );
  }

  /** The host's stop of a no-limit match: the bar's End match for the host while it is played and
   * not yet asked; the note above the hand for everyone once asked ("Last round", with the host's
   * Keep playing), or the host's confirm step. ``room.host_stop`` is null for a match that ends by
   * its options (the server says which: the client knows no rules). */
  updateStop() {
    const { room } = this.ctl;
    const playing = room.status === "playing" && typeof room.host_stop === "boolean";
    const host = playing && !!this.ctl.hostToken;
    const asked = playing && room.host_stop;
    if (!host || asked) this.stopAsking = false;
    this.stopBtn.hidden = !host || asked;
    this.stopBtn.disabled = this.stopAsking;
    this.fitBar();
    // between rounds the stop ends the match at once: the confirm step asks that, not "when this
    // round ends" (a round that ends while it is shown changes its question)
    const between = this.ctl.view?.phase !== "playing";
    const kind = asked ? `asked:${host}` : this.stopAsking ? `confirm:${between}` : "";
    this.stopBox.hidden = !kind;
    if (this.stopBox.dataset.kind === kind) return;
    this.stopBox.dataset.kind = kind;
    if (kind.startsWith("confirm")) {
      replace(
        this.stopBox,
        h("span", {}, t(between ? "stop.ask_now" : "stop.ask")),
        h(
          "span",
          { class: "stop-actions" },
          h("button", { class: "btn btn-gold stop-confirm", type: "button", onclick: () => this.ctl.stopMatch(true) }, t("stop.button")),
          h("button", { class: "btn btn-quiet stop-cancel", type: "button", onclick: () => this.askStop(false) }, t("common.cancel")),
        ),
      );
    } else if (asked) {
      replace(
        this.stopBox,
        h("span", {}, t("stop.note")),
        host ? h("button", { class: "btn btn-small stop-undo", type: "button", onclick: () => this.ctl.stopMatch(false) }, t("stop.undo")) : "",
      );
    } else replace(this.stopBox, []);
  }

  /** A table with no person at it stopped dealing after the server's number of rounds, and asks
   * its spectators whether they still watch (``room.keep_watching``): the note above the hand
   * says so with Continue, which deals the next round. The round's panel steps aside for it. */
  updateKeepWatching() {
    const asking = !!this.ctl.room.keep_watching && this.ctl.seat === null && !this.isClosed();
    this.watchingBox.hidden = !asking;
    if (this.watchingBox.dataset.kind === String(asking)) return;
    this.watchingBox.dataset.kind = String(asking);
    if (!asking) return replace(this.watchingBox, []);
    replace(
      this.watchingBox,
      h("span", {}, t("watching.ask")),
      h("button", { class: "btn btn-gold keep-watching-btn", type: "button", onclick: () => this.ctl.stillWatching() }, t("watching.continue")),
    );
    this.ctl.closePanel?.();
  }

  /** The host pressed End match (``asking``: show the confirm step) or its Cancel. */
  askStop(asking) {
    this.stopAsking = asking;
    this.updateStop();
    if (asking) this.stopBox.querySelector(".stop-confirm")?.focus();
    else this.stopBtn.focus();
  }

  /** At the match's end: New table, and Play again for whoever may ask (a seat, or the host). */
  updateOver(over) {
    const again = over && this.ctl.canPlayAgain();
    const key = over ? `over:${again}` : "";
    if (this.overBox.dataset.kind === key) return;
    this.overBox.dataset.kind = key;
    this.overBox.hidden = !over;
    replace(
      this.overBox,
      over
        ? [
            h("a", { class: "btn new-table", href: "/" }, t("panel.new_table")),
            again ? h("button", { class: "btn btn-again play-again", type: "button", onclick: () => this.ctl.playAgain() }, t("panel.play_again")) : "",
          ]
        : [],
    );
  }

  /** A spectator's way to play (not the host's page, nor a window whose seat went to another, nor
   * a closed room's): when the host starts the next match (Play again), its waiting room offers
   * the free seats and the bots' (`RoomController.hasOpenSeat`). */
  updateWatchNote() {
    const show = !this.ctl.canPlayAgain() && !this.ctl.connection?.replaced && !this.isClosed();
    this.watchNote.hidden = !show;
    setText(this.watchNote, show ? t("table.watch_next") : "");
  }

  chainLabels() {
    const { view } = this.ctl;
    const ends = view?.ends || ["", ""];
    return {
      chain: t("chain.aria", { n: view?.chain.length ?? 0, tiles: (view?.chain || []).map((x) => x.replace("-", "–")).join(", "), left: ends[0], right: ends[1] }),
      empty: t("chain.empty"),
      left: t("chain.play_left", { n: ends[0] }),
      right: t("chain.play_right", { n: ends[1] }),
    };
  }

  /**
   * A round's feed lines, made again only from the last line on: the log only grows within a
   * round, and the lines already made stay while the names, the moves bots made for people, the
   * hints, the language and this seat do not change (then the round's lines are all made again).
   */
  roundLines(r) {
    const seats = (r.room?.seats || []).map((s) => `${s.kind}:${s.name ?? ""}`).join("|");
    const hinted = (r.room?.round?.hints || []).map((hint) => hint.at).join(",");
    const context = `${this.ctl.langKey}|${this.ctl.seat}|${seats}|${(r.room?.round?.by_bot || []).join(",")}|${hinted}`;
    let made = this.feedMade?.get(r.round);
    if (!made || made.context !== context || r.log.length < made.length) {
      made = { context, length: 0, head: h("li", { class: "feed-round" }, t("table.round", { n: r.round })), lines: [] };
    } else if (made.length === r.log.length) {
      // nothing new in this round (an earlier round's, while another is played): the same
      // elements, so the list keeps them and lays out only what the new moves added
      return made;
    }
    const last = made.lines.length ? made.lines[made.lines.length - 1].first : 0;
    const lines = [...made.lines.slice(0, -1), ...feedLinesFrom(r.log, r.room, this.ctl.seat, last)];
    return { context, length: r.log.length, head: made.head, lines };
  }

  updateFeed() {
    const rounds = this.ctl.feedRounds();
    const key = rounds.map((r) => `${r.round}:${r.log.length}`).join(",") + this.ctl.langKey;
    if (key === this.feedKey) return;
    this.feedKey = key;
    const items = [];
    const kept = new Map();
    for (const r of rounds) {
      const lines = this.roundLines(r);
      kept.set(r.round, lines);
      items.push(lines.head, ...lines.lines.map((line) => line.el));
    }
    this.feedMade = kept;
    keepChildren(this.feedList, items);
    this.sayMoves(items);
    // scrolled to the new line before the next frame is drawn, once for all the updates until
    // then: scrolling here would lay the page out once more for every update
    this.feedFrame ||= requestAnimationFrame(() => {
      this.feedFrame = 0;
      if (this.feedFollow) this.feedToEnd();
      else this.feedHeight = this.feedList.scrollHeight; // laid out for this frame anyway
    });
    const last = items[items.length - 1];
    const copy = last ? last.cloneNode(true) : null;
    copy?.querySelectorAll("[tabindex]").forEach((el) => el.removeAttribute("tabindex"));
    replace(this.ticker, copy ? [...copy.childNodes] : []);
  }

  /** The lines an update added to the feed (a move, a pass, a round's end), copied into the hidden
   * live region `movesSaid`, its last 6 kept: a screen reader says each as it comes. Nothing is said
   * on the first drawing, nor when every line was made again (the language, a name changed); a
   * round's last line made again the same (`roundLines`) is not said twice, and one made again
   * longer (a run of draws) says only what it added. */
  sayMoves(items) {
    const before = this.feedSaid;
    this.feedSaid = items;
    const now = new Set(items);
    if (!before?.length || !before.some((el) => now.has(el))) return;
    const had = new Set(before);
    const goneEls = before.filter((el) => !now.has(el));
    const gone = new Set(goneEls.map((el) => el.outerHTML));
    const fresh = items.filter((el) => !had.has(el) && !gone.has(el.outerHTML));
    for (const line of fresh) {
      // a Kozel run of draws that grew ("You draw 3 tiles…", then "4 tiles…"): only its new draws
      // are said, the line made before it (gone now) said the rest
      const grew = line.saidAfter && goneEls.find((el) => el.saidAfter && el.dataset.seat === line.dataset.seat && Number(el.dataset.draws) < Number(line.dataset.draws));
      const el = grew ? line.saidAfter(Number(grew.dataset.draws)) : line;
      const copy = el.cloneNode(true);
      copy.querySelectorAll("[tabindex]").forEach((x) => x.removeAttribute("tabindex"));
      copy.querySelectorAll("[id]").forEach((x) => x.removeAttribute("id"));
      this.movesSaid.append(h("p", {}, ...copy.childNodes));
    }
    while (this.movesSaid.children.length > 6) this.movesSaid.firstElementChild.remove();
  }

  /** Open (``open`` true) or close the feed's drawer, or switch it (``open`` undefined). With
   * ``focus`` (its button pressed), the focus goes into the opened drawer, to its heading; a drawer
   * that closes with the focus inside (Close, Escape, one's turn) gives it back to its button. */
  toggleFeed(open, { focus = false } = {}) {
    const next = open ?? !this.el.classList.contains("feed-open");
    const inside = this.feed.contains(document.activeElement);
    this.el.classList.toggle("feed-open", next);
    if (!next && inside && getComputedStyle(this.feed).display === "none") this.feedToggle.focus();
    this.placeFeed();
    if (next && focus && getComputedStyle(this.feed).position === "fixed") this.feed.querySelector(".feed-head h2").focus();
    setAttr(this.feedToggle, "aria-expanded", String(next));
    this.chatBox.setOpen(next || window.matchMedia("(min-width: 1100px)").matches);
    if (next) {
      this.feedToEnd();
      // lines that came while the drawer was closed were added to a list not drawn: it shows its latest
      this.chatBox.list.scrollTop = this.chatBox.list.scrollHeight;
    }
  }

  /**
   * The keyboard's order follows what the screen shows. Open over the table (a phone's or tablet's
   * drawer: ``position: fixed``), the feed comes right after the top bar, as it shows under it, and
   * before the hand, which on one's turn shows below it; what it covers takes no focus (``inert``):
   * the plates and the felt, and the hand unless it is one's turn (the drawer then ends above it).
   * Closed, or a column beside the table (a wide screen), it is back after the hand, nothing inert.
   * Open over the table, its chat's box to write in is in its foot, at its bottom edge.
   * Called as the drawer opens or closes, the turn changes and the window's size does.
   */
  placeFeed() {
    const overlay = this.el.classList.contains("feed-open") && getComputedStyle(this.feed).position === "fixed";
    const after = overlay ? this.bar : this.me;
    if (after.nextElementSibling !== this.feed) {
      const focused = this.feed.contains(document.activeElement) ? document.activeElement : null;
      after.after(this.feed); // moved, an element loses the focus: it keeps it
      focused?.focus({ preventScroll: true });
    }
    // the drawer scrolls as a whole (a phone's on one's turn ends above the hand): below the score
    // sheet and the play-by-play, the chat's box to write in was out of view until it was scrolled
    this.chatBox.placeForm(overlay ? this.feedFoot : null);
    for (const plate of this.opps) if (plate.el.inert !== overlay) plate.el.inert = overlay;
    if (this.felt.inert !== overlay) this.felt.inert = overlay;
    const hidden = overlay && !(this.ctl.view && this.isMyTurn());
    if (this.me.inert !== hidden) this.me.inert = hidden;
  }

  /** Scroll the feed to its latest line, keeping where that put it (the scroll listener's test of
   * whose scroll it hears). */
  feedToEnd() {
    const list = this.feedList;
    list.scrollTop = list.scrollHeight;
    this.feedPinned = list.scrollTop;
    this.feedHeight = list.scrollHeight;
  }

  /** The chat's unread count on the feed's button (while the panel is closed). */
  showUnread(n) {
    this.unreadBadge.hidden = n === 0;
    this.unreadBadge.textContent = n > 99 ? "99+" : String(n);
    this.unread = n;
    this.labelFeedToggle();
  }

  /** The feed button's label: its name, the chat's unread count, and on a phone (whose speaker is
   * in the drawer) that the browser holds the sound until a tap, which its gold dot shows too. A
   * tap on it is such a tap: the sound plays, and the dot and the words go. */
  labelFeedToggle() {
    const held = audioHeld() && this.phone.matches;
    const words = [t("table.feed")];
    if (this.unread) words.push(t("chat.unread", { n: this.unread }));
    if (held) words.push(t("alerts.sound_waiting"));
    setAttr(this.feedToggle, "aria-label", words.join(" · "));
    if (this.heldDot.hidden === held) this.heldDot.hidden = !held;
  }

  /** A reaction shows for a moment on its sender's plate (unless this browser hides them). */
  showReaction(line) {
    if (reactionsHidden() || line.seat === null) return;
    const plate = this.el.querySelector(`.plate[data-seat="${line.seat}"]`);
    if (!plate) return;
    plate.querySelector(".reaction-bubble")?.remove();
    const bubble = h("span", { class: "reaction-bubble", role: "status" }, reactionShown(line.reaction));
    plate.append(bubble);
    setTimeout(() => bubble.remove(), 3500);
  }

  // -- the turn timer ----------------------------------------------------------------------------

  tick() {
    const { room, view } = this.ctl;
    const deadline = this.ctl.deadline;
    const total = (room?.turn_timer_s || 0) * 1000;
    const seat = room?.turn?.seat;
    // a boolean: the "hidden === on" checks below would never hide a timer for a null deadline
    const active = Boolean(deadline) && total > 0 && view?.phase === "playing" && this.isLive() && !this.isClosed();
    const left = active ? Math.max(0, deadline - Date.now()) : 0;
    for (const plate of [...this.opps, this.mePlate]) {
      const on = active && Number(plate.el.dataset.seat) === seat;
      if (plate.timer.hidden === on) plate.timer.hidden = !on; // a write, even of the same value, restyles
      if (on) {
        plate.timer.firstChild.firstChild.style.width = `${(100 * left) / total}%`;
        setText(plate.timer.lastChild, t("table.seconds", { n: Math.ceil(left / 1000) }));
        plate.timer.classList.toggle("urgent", left < 5000);
      }
    }
    // while a bot covers the seat it plays the turn at its own pace: no countdown for the player
    const mine = active && seat === this.ctl.seat && !this.isCovered();
    if (this.myTimer.hidden === mine) this.myTimer.hidden = !mine;
    if (this.myTimerText.hidden === mine) this.myTimerText.hidden = !mine;
    if (mine) {
      setText(this.myTimerText, t("table.seconds", { n: Math.ceil(left / 1000) }));
      this.myTimer.firstChild.style.width = `${(100 * left) / total}%`;
      this.myTimer.classList.toggle("urgent", left < 5000);
    }
    // "Your time is nearly up", once a turn, 10 s before its end (half of a shorter timer); said
    // again on the next turn (the box is emptied in between)
    const near = mine && left > 0 && left <= Math.min(10_000, total / 2);
    const key = near ? `${seat}|${deadline}|${this.ctl.langKey}` : "";
    if (near && this.timeSaid.dataset.key !== key) {
      this.timeSaid.dataset.key = key;
      setText(this.timeSaid, t("table.time_nearly_up"));
    } else if (!mine && this.timeSaid.dataset.key) {
      this.timeSaid.dataset.key = "";
      setText(this.timeSaid, "");
    }
  }

  // -- playing ---------------------------------------------------------------------------------

  pick(key) {
    if (!this.isMyTurn() || this.pending) return this.sayWhyNot(key);
    const actions = this.legalByTile().get(key) || [];
    if (!actions.length) return this.sayWhyNot(key);
    const ends = new Set(actions.map((a) => a.end).filter(Boolean));
    if (actions.length > 1 && ends.has("L") && ends.has("R")) {
      this.choosing = this.choosing === key ? null : key;
      if (this.choosing) this.toggleFeed(false); // the end targets are on the chain: a phone's feed drawer would cover them
      this.update();
      if (this.choosing) this.chain.focusEnd("L");
      return;
    }
    this.send(actions[0]);
  }

  /** A tile of the hand that cannot be played now was clicked, tapped or pressed (it is greyed and
   * aria-disabled, never disabled): a toast says why, for a moment. The server's legal moves
   * decide what may be played; the words only name the case: a move on its way, nothing to play
   * (between rounds, a closed table), another's turn, a forced pass or draw, a tile that cannot
   * open the round, one whose pips match neither end, or another rule (only raised tiles). */
  sayWhyNot(key) {
    const { view, room } = this.ctl;
    if (!view || this.ctl.seat === null) return;
    const [a, b] = pips(key);
    const legal = view.legal || [];
    const ends = (view.ends || []).map(Number);
    let words;
    if (this.pending) words = t("table.sending");
    else if (this.isClosed() || view.phase !== "playing") words = t("tile.not_now");
    else if (!this.isMyTurn()) words = t("tile.not_your_turn", { name: seatName(room, view.to_act) });
    else if (legal.length && legal.every((x) => x.draw)) words = t("table.drawing", { n: view.bazaar ?? 0 });
    else if (legal.length && legal.every((x) => x.pass)) words = this.kozel ? t("table.must_pass_kozel") : t("table.must_pass");
    else if (!view.chain.length) words = t("tile.cannot_open", { a, b });
    else if (ends.length === 2 && !ends.includes(a) && !ends.includes(b)) words = t("tile.fits_neither", { a, b, left: ends[0], right: ends[1] });
    else words = t("tile.not_legal", { a, b });
    toast(words, "info", 3000);
  }

  playEnd(end) {
    if (!this.choosing) return;
    const action = (this.legalByTile().get(this.choosing) || []).find((a) => a.end === end);
    if (action) this.send(action);
  }

  cancelChoice() {
    const key = this.choosing;
    this.choosing = null;
    this.update();
    this.handButtons.get(key)?.focus();
  }

  send(action) {
    const { seat: _seat, ...payload } = action;
    this.choosing = null;
    const focusedTile = document.activeElement?.closest?.(".hand-tile, .end-target, .end-btn");
    if (this.ctl.sendAction(payload)) {
      this.updateStatus(this.isMyTurn());
      this.updateHand(this.legalByTile());
      this.chain.update(this.ctl.view.chain, this.ctl.view.ends, null, this.openingIndex());
      this.choiceBox.hidden = true;
      setAttr(this.el, "data-choosing", null);
      if (focusedTile) this.hand.focus?.();
    }
  }

  // -- stones on the move ------------------------------------------------------------------------

  animate(events) {
    if (reducedMotion()) return;
    let delay = 0;
    for (const event of events) {
      if (event.type === "drew") this.showDraw(event);
      const settlement = event.type === "passed" ? event.settlement : event.type === "round_ended" ? event.outcome?.settlement : null;
      if (!settlement) continue;
      const to = this.stonesEl(settlement.receiver);
      if (!to) continue;
      for (let i = 0; i < Math.min(settlement.from_table, 6); i += 1) this.fly(this.pile, to, (delay += 110));
      for (const [payer, n] of settlement.from_payers) {
        const from = this.stonesEl(payer);
        for (let i = 0; i < Math.min(n, 6); i += 1) if (from) this.fly(from, to, (delay += 110));
      }
      const received = settlement.received; // summed by the server (D5)
      if (received > 0) this.burst(to, `+${received}`, delay + 700);
    }
  }

  /** A draw: the drawn tile glows in your hand; another seat's plate shows "+1" at its tiles. */
  showDraw(event) {
    this.bazaar.classList.remove("bump");
    void this.bazaar.offsetWidth;
    this.bazaar.classList.add("bump");
    if (event.seat === this.ctl.seat && event.tile) {
      const btn = this.handButtons.get(tileKey(event.tile));
      if (!btn) return;
      btn.classList.add("just-drawn");
      setTimeout(() => btn.classList.remove("just-drawn"), 1400);
      return;
    }
    const plate = [...this.opps, this.mePlate].find((p) => Number(p.el.dataset.seat) === event.seat);
    if (plate) this.countDraw(event.seat, plate.hand.childElementCount ? plate.hand : plate.handCount);
  }

  /** Another seat's draws as one rising "+n" at its tiles: a draw while the last one's label still
   * shows adds to it and starts it again, rather than piling labels over the plate's name. */
  countDraw(seat, target) {
    this.drawBursts ??= new Map();
    const shown = this.drawBursts.get(seat);
    if (shown?.isConnected) {
      shown.dataset.n = String(Number(shown.dataset.n) + 1);
      shown.textContent = `+${shown.dataset.n}`;
      shown.style.animation = "none";
      void shown.offsetWidth; // the rise starts again
      shown.style.animation = "";
      clearTimeout(shown.removal);
      shown.removal = setTimeout(() => shown.remove(), 1400);
      return;
    }
    const tag = this.burstNow(target, "+1");
    tag.dataset.n = "1";
    this.drawBursts.set(seat, tag);
  }

  stonesEl(seat) {
    return this.el.querySelector(`.plate-stones[data-seat-stones="${seat}"]`);
  }

  fly(from, to, delay) {
    const a = from.getBoundingClientRect();
    const b = to.getBoundingClientRect();
    const stone = stoneSvg("flying");
    this.flights.append(stone);
    const start = `translate(${a.left + a.width / 2 - 9}px, ${a.top + a.height / 2 - 9}px)`;
    const end = `translate(${b.left + b.width / 2 - 9}px, ${b.top + b.height / 2 - 9}px)`;
    const mid = `translate(${(a.left + b.left) / 2 + (a.width + b.width) / 4 - 9}px, ${Math.min(a.top, b.top) - 40}px) scale(1.35)`;
    const anim = stone.animate(
      [
        { transform: start, opacity: 0 },
        { transform: start, opacity: 1, offset: 0.08 },
        { transform: mid, opacity: 1, offset: 0.5 },
        { transform: end, opacity: 1 },
      ],
      { duration: 750, delay, easing: "cubic-bezier(.3,.6,.4,1)", fill: "backwards" },
    );
    anim.onfinish = () => {
      stone.remove();
      to.classList.remove("bump");
      void to.offsetWidth;
      to.classList.add("bump");
    };
  }

  burst(target, text, delay) {
    setTimeout(() => this.burstNow(target, text), delay);
  }

  /** ``text`` rising over ``target`` now, gone after its animation (its timer is ``removal``). */
  burstNow(target, text) {
    const r = target.getBoundingClientRect();
    const tag = h("span", { class: "burst", style: { left: `${r.left + r.width / 2}px`, top: `${r.top - 2}px` } }, text);
    this.flights.append(tag);
    tag.removal = setTimeout(() => tag.remove(), 1400);
    return tag;
  }
}

/** The domino mark of the brand. */
export function brandMark() {
  const mark = h("span", { class: "brand-mark", "aria-hidden": "true" });
  mark.append(tileSvg(6, 6, { vertical: true }));
  return mark;
}
