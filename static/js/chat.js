// The table's chat (in the feed's panel, and in the waiting room of a room's next match): lines
// people type, quick reactions that also show for a moment on the sender's plate, an unread count on
// the feed's button while the panel is closed, and for the host: whether spectators may write, and
// muting a seat or one spectator (by the public tag its lines carry). A spectator may give a name,
// which its lines carry: shown as a spectator's ("Dewi (spectator)"), never as a seat's. The
// conversation is the room's: it carries on across its matches (Play again), with a quiet divider
// where each match began. Everything is shown as text.

import { removeSpectator, setChatRules } from "./api.js";
import { spectatorName as savedSpectatorName } from "./connection.js";
import { h, replace, toast } from "./dom.js";
import { errorText, t, tf } from "./i18n.js";
import { icon } from "./icons.js";

/** The quick reactions and the icon each shows before its words (static/js/icons.js: drawn lines,
 * never emoji, which a system without an emoji font shows as empty boxes). */
export const REACTIONS = [
  ["nice", "thumbs-up"],
  ["oops", "oops"],
  ["hurry", "hourglass"],
  ["well_played", "star"],
  ["hello", "hand"],
  ["thanks", "heart"],
];
const ICONS = Object.fromEntries(REACTIONS);
const MAX_CHARS = 200;
const COUNT_FROM = 160; // characters typed before the box shows its count
let chatBoxes = 0; // ids for the count of each chat box made
const HIDE_KEY = "domeng:hide-reactions";

/** Whether this browser hides reactions on the plates (the chat still lists them). */
export const reactionsHidden = () => localStorage.getItem(HIDE_KEY) === "on";

/** A spectator as the chat names them: "Spectator 3fa9c1d2" (their public tag in this room). */
const spectatorName = (tag) => t("chat.spectator_tag", { tag });

/** A spectator who gave a ``name``: "Dewi (spectator)", with ``tag`` "Dewi (spectator 3fa9c1d2)"
 * (two spectators may share a name), the name isolated (a name of the other direction leaves the
 * mark after it); one who gave none: by ``tag``, or "Spectator" (a line from before tags). */
function spectatorLabel(name, tag, withTag = false) {
  if (!name) return tag ? spectatorName(tag) : t("chat.spectator");
  const shown = h("bdi", {}, name);
  return withTag && tag ? tf("chat.spectator_named_tag", { name: shown, tag }) : tf("chat.spectator_named", { name: shown });
}

/** A reaction as shown: its icon (hidden from screen readers: the words are its name) and its
 * words, e.g. [thumbs-up] "Nice!". */
export function reactionShown(key) {
  const words = t(`reaction.${key}`);
  if (!ICONS[key]) return [words];
  const drawn = icon(ICONS[key]);
  drawn.classList.add("reaction-icon");
  return [drawn, words];
}

export class ChatBox {
  /** ``ctl`` is the room controller (socket, seats, host token); ``onReaction(line)`` shows a
   * reaction on its sender's plate; ``onUnread(n)`` is told the unread count. */
  constructor(ctl, { onReaction, onUnread }) {
    this.ctl = ctl;
    this.onReaction = onReaction;
    this.onUnread = onUnread;
    this.unread = 0;
    this.open = false;
    this.list = h("ol", { class: "chat-list", "aria-live": "polite", "aria-label": t("chat.heading") });
    // a quiet line while nobody has written: an empty chat showed nothing at all under its heading
    this.empty = h("p", { class: "chat-empty" }, t("chat.empty"));
    this.input = h("input", {
      class: "input chat-input",
      type: "text",
      maxlength: String(MAX_CHARS),
      autocomplete: "off",
      enterkeyhint: "send",
      placeholder: t("chat.placeholder"),
      "aria-label": t("chat.placeholder"),
    });
    this.form = h(
      "form",
      { class: "chat-form" },
      this.input,
      h("button", { class: "btn btn-small chat-send", type: "submit" }, t("chat.send")),
    );
    // how much of the line's limit is used, shown from COUNT_FROM characters on (the box takes no
    // more than MAX_CHARS, so a longer paste is cut there: the count says so)
    this.count = h("p", { class: "chat-count", id: `chat-count-${++chatBoxes}`, hidden: true });
    this.input.setAttribute("aria-describedby", this.count.id);
    // a paste (or a drop) longer than the room left in the box is cut there by its maxlength: say so
    this.cutNote = h("p", { class: "chat-cut", role: "status", hidden: true });
    this.cut = false;
    const fits = (incoming) => {
      const { value, selectionStart, selectionEnd } = this.input;
      const room = MAX_CHARS - (value.length - ((selectionEnd ?? 0) - (selectionStart ?? 0)));
      this.cut = incoming.length > room;
    };
    this.input.addEventListener("paste", (event) => fits(event.clipboardData?.getData("text/plain") ?? ""));
    this.input.addEventListener("beforeinput", (event) => {
      const incoming = event.data ?? event.dataTransfer?.getData("text/plain");
      if (incoming != null) fits(incoming); // a paste's text may come only with the paste event
    });
    this.input.addEventListener("input", () => this.showCount());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = this.input.value.trim();
      if (!text) return;
      // the line stays in the box until the server takes it (its own line comes back, `onMessage`);
      // refused (too fast, muted, ...: `onRefused`) it is still there to send again
      if (this.send({ type: "chat", text })) this.sent = text;
    });
    this.reactions = h(
      "div",
      { class: "chat-reactions", role: "group", "aria-label": t("chat.reactions") },
      REACTIONS.map(([key]) =>
        h("button", { class: "chip reaction", type: "button", dataset: { reaction: key }, onclick: () => this.send({ type: "chat", reaction: key }) }, reactionShown(key)),
      ),
    );
    this.notice = h("p", { class: "chat-notice", hidden: true });
    // a spectator's name in the chat (docs/protocol.md `name`): kept by this browser, the server's
    // answer said under the box (how its lines read, or why the name was refused: the box keeps it)
    this.nameInput = h("input", {
      class: "input chat-name-input",
      type: "text",
      autocomplete: "nickname",
      enterkeyhint: "done",
      placeholder: t("join.name_placeholder"),
    });
    this.nameSaid = h("p", { class: "chat-name-said", id: `chat-name-said-${chatBoxes}`, role: "status" });
    this.nameInput.setAttribute("aria-describedby", this.nameSaid.id);
    this.nameForm = h(
      "form",
      { class: "chat-name", hidden: true },
      h("label", { class: "chat-name-label" }, t("chat.your_name"), this.nameInput),
      h("button", { class: "btn btn-small chat-name-save", type: "submit" }, t("chat.name_save")),
    );
    this.nameForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send({ type: "name", name: this.nameInput.value.trim() || null });
    });
    const hide = h("input", { type: "checkbox", class: "hide-reactions", checked: reactionsHidden() });
    hide.addEventListener("change", () => localStorage.setItem(HIDE_KEY, hide.checked ? "on" : "off"));
    this.hostBox = h("div", { class: "chat-host", hidden: true });
    this.el = h(
      "section",
      { class: "chat-box", "aria-label": t("chat.heading") },
      h("h3", {}, t("chat.heading")),
      this.empty,
      this.list,
      this.notice,
      this.reactions,
      this.form,
      this.count,
      this.cutNote,
      this.nameForm,
      this.nameSaid,
      h("label", { class: "chat-option" }, hide, " ", t("chat.hide_reactions")),
      this.hostBox,
    );
    this.rules = { spectators: false, muted: [] };
    this.youMuted = false; // the server says the host's mute holds this window (``you_muted``: its address, say)
    this.live = true; // false: this window lost its seat to another (`setLive`)
    this.lastMatch = null; // the match of the list's last line or divider (null: the list is empty)
    this.spectators = new Map(); // the tags of the spectators who wrote, in the order they did, to their last name
    this.sent = null; // the text sent last, until the server takes or refuses it
    if (ctl.chat) this.onMessage({ type: "chat_log", ...ctl.chat }, false);
    this.onNamed();
  }

  /** The server holds this spectator's name now (``ctl.spectatorName``): the box shows it, and how
   * its lines read. */
  onNamed() {
    const name = this.ctl.spectatorName;
    // before the server's first answer on this socket, the name this browser keeps (sent with it)
    const shown = name ?? savedSpectatorName();
    if (document.activeElement !== this.nameInput || this.nameInput.value.trim() === shown) this.nameInput.value = shown;
    this.nameInput.removeAttribute("aria-invalid");
    this.refused = null;
    this.nameSaid.classList.remove("field-error");
    replace(this.nameSaid, [tf("chat.named_as", { name: spectatorLabel(name, this.ctl.watcherTag) })]);
  }

  /** The server refused the name sent (``code``, e.g. "name_reserved", said in the page's words:
   * ``ctl.nameRefusal``): the box keeps it, to correct. */
  onNameRefused(code) {
    this.refused = code;
    this.nameInput.setAttribute("aria-invalid", "true");
    this.nameSaid.classList.add("field-error");
    replace(this.nameSaid, [this.ctl.nameRefusal(code)]);
  }

  /** What the boxes hold, for the page drawn again in another language (`restore`): the line being
   * written, the name typed and why the server refused it (a code, or null). */
  kept() {
    return { line: this.input.value, name: this.nameInput.value, refused: this.refused ?? null };
  }

  /** Put back what `kept` took from the page before, a refusal said in the page's language now. */
  restore({ line, name, refused }) {
    this.input.value = line;
    this.showCount();
    if (!refused) return;
    this.nameInput.value = name;
    this.onNameRefused(refused);
  }

  /** The count under the box: "172/200" once the line nears its limit, marked at the limit. */
  showCount() {
    const used = this.input.value.length; // as the box's maxlength counts (UTF-16 units)
    this.count.hidden = used < COUNT_FROM;
    this.count.textContent = `${used}/${MAX_CHARS}`;
    this.count.classList.toggle("full", used >= MAX_CHARS);
    if (used < MAX_CHARS) this.cut = false; // cut text deleted, or the line sent: the note goes
    this.cutNote.hidden = !this.cut;
    this.cutNote.textContent = this.cut ? t("chat.cut", { n: MAX_CHARS }) : "";
  }

  send(message) {
    const ok = this.ctl.socket?.send(message);
    if (!ok) toast(t("room.offline_action"), "error");
    return ok;
  }

  /** The server refused this page's last chat message (an ``error`` with a ``chat_`` code): its
   * text stays in the box, to send again. */
  /** A chat line refused (``code``: the error's): a ``chat_muted`` says this window is muted. */
  onRefused(code = null) {
    this.sent = null;
    if (code === "chat_muted" && !this.youMuted) {
      this.youMuted = true;
      this.drawSilence();
    }
  }

  /** A ``chat``, ``chat_log`` or ``chat_rules`` message; ``fresh`` lines may show on a plate. */
  onMessage(message, fresh = true) {
    if (message.type === "chat_log") {
      replace(this.list, []);
      this.lastMatch = null;
      this.spectators.clear();
      for (const line of message.lines) this.appendLine(line);
      if (this.ctl.match) this.markMatch(this.ctl.match); // this match began after the last line
      if ("you_muted" in message) this.youMuted = !!message.you_muted;
      this.setRules(message.rules);
    } else if (message.type === "chat_rules") {
      if ("you_muted" in message) this.youMuted = !!message.you_muted;
      this.setRules(message.rules);
    } else if (message.type === "chat") {
      const line = message.line;
      if (this.sent !== null && line.seat === this.ctl.seat && line.text === this.sent) {
        if (this.input.value.trim() === this.sent) this.input.value = ""; // unless typed over since
        this.sent = null;
        this.showCount();
      }
      this.appendLine(line);
      while (this.list.children.length > 100) this.list.firstElementChild.remove();
      while (this.list.firstElementChild?.classList.contains("chat-divider")) this.list.firstElementChild.remove();
      if (fresh && message.line.reaction) this.onReaction(message.line);
      if (!this.open && message.line.seat !== this.ctl.seat) this.setUnread(this.unread + 1);
    }
    this.empty.hidden = this.list.childElementCount > 0;
    this.list.scrollTop = this.list.scrollHeight;
  }

  /** Put the box to write in (the form, with its count and its note of a cut paste) at the end of
   * ``foot``, or back in its place in the chat (``foot`` null); the focus in it stays. The table's
   * drawer on a phone keeps it at its bottom edge while the rest scrolls (static/js/table.js). */
  placeForm(foot) {
    const parts = [this.form, this.count, this.cutNote];
    if (this.form.parentElement === (foot ?? this.el)) return;
    const focused = parts.find((el) => el.contains(document.activeElement)) ? document.activeElement : null;
    if (foot) foot.append(...parts);
    else this.nameForm.before(...parts);
    focused?.focus({ preventScroll: true });
  }

  /** The panel was opened (the unread count goes) or closed. */
  setOpen(open) {
    this.open = open;
    if (open) this.setUnread(0);
  }

  setUnread(n) {
    this.unread = n;
    this.onUnread(n);
  }

  /** Draw ``line`` last, after a divider when it is the first shown of a later match. */
  appendLine(line) {
    this.markMatch(line.match ?? 1);
    this.list.append(this.lineEl(line));
    if (line.seat === null && line.watcher && this.spectators.get(line.watcher) !== (line.name || "")) {
      this.spectators.set(line.watcher, line.name || "");
      this.drawHost(); // the host may mute them, named as they last wrote
    }
  }

  /** A quiet divider where ``match`` began, when the list shows an earlier match's lines last
   * (an empty list has nothing to divide). */
  markMatch(match) {
    if (this.lastMatch !== null && match > this.lastMatch) {
      this.list.append(h("li", { class: "chat-divider", role: "separator", dataset: { match: String(match) } }, t("chat.match_began", { n: match })));
    }
    if (this.lastMatch === null || match > this.lastMatch) this.lastMatch = match;
  }

  lineEl(line) {
    // a seat's name now, for this match's lines (a bot covering a seat has none); an earlier
    // match's line keeps the name it was said under: its seat may be someone else's now
    const current = (line.match ?? 1) === (this.ctl.match ?? 1);
    const now = current ? this.ctl.room?.seats?.[line.seat]?.name : null;
    const who = line.seat !== null ? now || line.name : spectatorLabel(line.name, line.watcher);
    const tag = line.seat === null && line.name && line.watcher ? spectatorName(line.watcher) : undefined;
    return h(
      "li",
      { class: `chat-line${line.reaction ? " chat-reaction" : ""}`, dataset: { seat: line.seat === null ? "" : String(line.seat) } },
      h("bdi", { class: line.seat === null ? "who spectator" : "who", title: tag }, who),
      ": ",
      h("span", { class: "said", dir: "auto" }, line.text ?? reactionShown(line.reaction)), // its own direction, isolated
    );
  }

  setRules(rules) {
    this.rules = rules;
    this.drawSilence();
    this.drawHost();
  }

  /** ``live`` false: this window lost its seat to another (the room's ``connection.replaced``)
   * and follows the room no more: nothing may be written here, and the box says where the chat
   * goes on, until "Play here" takes the seat back. */
  setLive(live) {
    if (this.live === live) return;
    this.live = live;
    this.drawSilence();
    this.drawHost();
  }

  /** The host removes spectator ``tag`` (its sockets close, and its page says why): it leaves the
   * list, unless muted (the host may still unmute it). One already gone says so. */
  async removeSpectator(tag, token) {
    try {
      await removeSpectator(this.ctl.code, tag, token);
    } catch (error) {
      toast(errorText(error), "error");
      if (error.code !== "no_such_spectator") return;
    }
    if (!(this.rules.muted_spectators || []).includes(tag)) this.spectators.delete(tag);
    // gone from the list now, not only at the server's next word (its sockets are closed)
    this.ctl.spectatorsHere = (this.ctl.spectatorsHere || []).filter((s) => s.tag !== tag);
    this.drawHost();
  }

  /** Whether this page may write, and the notice when it may not: muted, a spectator the host has
   * not let write, or a window that lost its seat to another. */
  drawSilence() {
    const rules = this.rules;
    const seat = this.ctl.seat;
    const tag = this.ctl.watcherTag;
    // the rules name muted seats and tags; the server also says when a mute holds this window
    // itself (a new window from a muted person's address has a tag of its own)
    const muted = this.youMuted || (seat !== null ? rules.muted.includes(seat) : !!tag && (rules.muted_spectators || []).includes(tag));
    const reader = seat === null && !rules.spectators;
    const gone = !this.live;
    const silent = gone || muted || reader;
    this.notice.hidden = !silent;
    const goneWords = this.ctl.connection?.closed ? t(this.ctl.closedWords()) : t("chat.replaced", { button: t("room.use_here") });
    this.notice.textContent = gone ? goneWords : muted ? t("chat.muted") : reader ? t("chat.spectators_read") : "";
    this.form.hidden = silent;
    this.nameForm.hidden = silent || seat !== null;
    this.nameSaid.hidden = this.nameForm.hidden;
    this.input.disabled = gone;
    this.reactions.hidden = silent;
  }

  /** The host's controls: spectators may write; mute or unmute each person at the table, and each
   * spectator watching (``ctl.spectatorsHere``), who wrote or is muted; those watching now the
   * host may also remove from the table. */
  drawHost() {
    const token = this.live ? this.ctl.hostToken : null; // a window that lost its seat shows no stale list
    this.hostBox.hidden = !token;
    if (!token) return;
    const apply = async (change) => {
      try {
        await setChatRules(this.ctl.code, change, token);
      } catch (error) {
        toast(errorText(error), "error");
      }
    };
    const spectators = h("input", { type: "checkbox", class: "allow-spectators", checked: this.rules.spectators });
    spectators.addEventListener("change", () => apply({ spectators: spectators.checked }));
    const people = (this.ctl.room?.seats || []).filter((s) => s.kind === "human" && s.seat !== this.ctl.seat);
    const mutedSpectators = this.rules.muted_spectators || [];
    const left = this.rules.left || {};
    // every spectator watching (the server tells the host alone), silent ones too, then those who
    // wrote and left, and the muted
    const here = new Map((this.ctl.spectatorsHere || []).map((s) => [s.tag, s.name]));
    // watching, and held by a mute though its tag is not muted (its address is: the seat its
    // person left, another of their tabs): muted all the same, and Unmute lets it write
    const held = new Set((this.ctl.spectatorsHere || []).filter((s) => s.muted).map((s) => s.tag));
    const tags = [...here.keys(), ...this.spectators.keys(), ...mutedSpectators];
    const watchers = [...new Set(tags)].filter((tag) => tag !== this.ctl.watcherTag);
    const rows = [
      people.map((s) => {
        const muted = this.rules.muted.includes(s.seat);
        const key = muted ? "chat.unmute" : "chat.mute";
        const words = t(key, { name: s.name }); // whole in its title and label: the button may shorten it
        return h(
          "div",
          { class: "chat-person" },
          h(
            "button",
            { class: "btn btn-small chat-mute", type: "button", title: words, "aria-label": words, "aria-pressed": String(muted), dataset: { seat: String(s.seat) }, onclick: () => apply({ muted: { [s.seat]: !muted } }) },
            h("span", { class: "chat-mute-words" }, tf(key, { name: h("bdi", {}, s.name) })),
          ),
        );
      }),
      watchers.map((tag) => {
        const muted = mutedSpectators.includes(tag) || held.has(tag);
        const key = muted ? "chat.unmute" : "chat.mute";
        const given = here.get(tag) || this.spectators.get(tag);
        // a muted seat's person another took (only the host's rules say so): named after the seat
        const who = !given && left[tag] ? tf("chat.left_seat", { name: h("bdi", {}, left[tag]), tag }) : spectatorLabel(given, tag, true);
        const words = t(key, { name: who }); // whole in its title and label: the button may shorten it
        const removal = t("chat.remove", { name: who });
        // one row per person: Mute with the name, then Remove beside it (alone on a line of its
        // own, a Remove did not say whom it removes); Remove only for one watching now: one who
        // left (a muted person not at the table, a spectator gone) has no socket to close, and the
        // server could only answer 404 no_such_spectator
        return h(
          "div",
          { class: "chat-person" },
          h(
            "button",
            { class: "btn btn-small chat-mute", type: "button", title: words, "aria-label": words, "aria-pressed": String(muted), dataset: { watcher: tag }, onclick: () => apply({ muted_spectators: { [tag]: !muted } }) },
            h("span", { class: "chat-mute-words" }, tf(key, { name: who })),
          ),
          here.has(tag) ? h("button", { class: "btn btn-small chat-remove", type: "button", title: removal, "aria-label": removal, dataset: { watcher: tag }, onclick: () => this.removeSpectator(tag, token) }, t("chat.remove_short")) : [],
        );
      }),
    ].flat();
    // the people's rows scroll in a box of their own: however many watch, the chat keeps its lines
    replace(this.hostBox, [
      h("label", { class: "chat-option" }, spectators, " ", t("chat.allow_spectators")),
      rows.length ? h("div", { class: "chat-people" }, rows) : [],
    ]);
  }
}
