// The replay viewer: one round step by step (first, back, forward, last, or jump to any action),
// every hand visible, drawn with the table's own tiles (tiles.js). The frames come from the
// server, which builds them with the engine: the client computes no rules. Below it, the round
// review a player sees (static/js/review.js), for any seat: judged from what that seat could see.

import { h, replace } from "../dom.js";
import { useLanguage } from "../i18n.js";
import { reviewList } from "../review.js";
import { pips, tileSvg } from "../tiles.js";
import { adminApi } from "./api.js";
import { count, seatReviewWords } from "./words.js";

function face(tile, vertical) {
  const [a, b] = pips(tile);
  return h("span", { class: `rp-tile${vertical ? " v" : ""}`, dataset: { tile }, title: tile }, tileSvg(a, b, { vertical }));
}

export class ReplayViewer {
  constructor(matchId, names) {
    this.matchId = matchId;
    this.names = names;
    this.replay = null;
    this.step = 0;
    this.el = h("section", { class: "replay", id: "replay", hidden: true, tabindex: "-1", "aria-label": "replay" });
    this.el.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT") return;
      if (e.key === "ArrowRight") this.go(this.step + 1);
      else if (e.key === "ArrowLeft") this.go(this.step - 1);
      else if (e.key === "Home") this.go(0);
      else if (e.key === "End") this.go(Infinity);
      else return;
      e.preventDefault();
    });
  }

  async open(round) {
    this.replay = await adminApi("GET", `/matches/${this.matchId}/rounds/${round}/replay`);
    this.build();
    this.go(0);
    this.el.hidden = false;
    this.el.scrollIntoView({ block: "start" });
    this.el.focus({ preventScroll: true });
  }

  /** Read the round shown again (the match page calls it when the match changed): a round in
   * play gains frames; the step shown, the review and the focus stay. */
  async refresh() {
    if (!this.replay || this.el.hidden) return;
    const replay = await adminApi("GET", `/matches/${this.matchId}/rounds/${this.replay.round}/replay`);
    if (replay.frames.length === this.replay.frames.length && replay.finished === this.replay.finished) return;
    this.replay = replay;
    this.title.textContent = this.titleText();
    this.slider.max = String(replay.frames.length - 1);
    this.go(this.step);
  }

  titleText() {
    const r = this.replay;
    return `Replay · round ${r.round + 1} of ${r.rounds}${r.finished ? "" : " · in play (new actions show as they are stored)"}`;
  }

  build() {
    const last = () => this.replay.frames.length - 1;
    const button = (cls, label, to) => {
      const b = h("button", { class: `btn ${cls}`, type: "button" }, label);
      b.addEventListener("click", () => this.go(to()));
      return b;
    };
    this.slider = h("input", { class: "rp-slider", type: "range", min: 0, max: last(), value: 0, "aria-label": "jump to action" });
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    this.counter = h("span", { class: "rp-step", "aria-live": "polite" });
    this.text = h("p", { class: "rp-text" });
    this.board = h("div", { class: "rp-board" });
    this.title = h("h2", { class: "rp-title" }, this.titleText());
    replace(
      this.el,
      this.title,
      h(
        "div",
        { class: "rp-controls" },
        button("rp-first", "« First", () => 0),
        button("rp-prev", "◀ Back", () => this.step - 1),
        button("rp-next", "Forward ▶", () => this.step + 1),
        button("rp-last", "Last »", last),
        this.slider,
        this.counter,
      ),
      this.text,
      this.board,
      this.reviewSection(),
    );
  }

  reviewSection() {
    const body = h("div", { class: "rp-review-body", "aria-live": "polite" });
    const ask = async (seat) => {
      replace(body, h("p", { class: "review-working", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), ` Reviewing ${this.names[seat]}'s decisions…`));
      try {
        await useLanguage("en");
        const review = await adminApi("GET", `/matches/${this.matchId}/rounds/${this.replay.round}/review?seat=${seat}`);
        replace(body, reviewList(review, seatReviewWords(this.names[seat])));
      } catch (error) {
        replace(body, h("p", { class: "review-failed", role: "alert" }, `No review: ${error.message}`));
      }
    };
    const buttons = this.names.map((name, seat) => h("button", { class: "btn btn-small rp-review-seat", type: "button", dataset: { seat: String(seat) }, onclick: () => ask(seat) }, name));
    return h(
      "section",
      { class: "rp-review" },
      h("h3", {}, "Review of a seat's decisions"),
      h("p", { class: "hint" }, "Every option of each decision with a choice, costed from what that seat could see then (the same review the player sees at the round's end)."),
      h("div", { class: "rp-review-seats" }, buttons),
      body,
    );
  }

  go(step) {
    const frames = this.replay.frames;
    this.step = Math.max(0, Math.min(frames.length - 1, step));
    const f = frames[this.step];
    this.el.dataset.step = String(this.step);
    this.el.dataset.frames = String(frames.length); // tests wait on it
    this.slider.value = String(this.step);
    this.counter.textContent = `action ${this.step} of ${frames.length - 1}`;
    this.text.textContent = f.step === 0 ? "As dealt." : f.text;
    const score = f.score;
    const seats = f.hands.map((hand, seat) =>
      h(
        "div",
        { class: `rp-seat${seat === f.to_act ? " acting" : ""}${f.action && f.action.seat === seat ? " acted" : ""}`, dataset: { seat: String(seat) } },
        h("div", { class: "rp-name" }, `${this.names[seat]}`, seat === f.to_act ? " · to act" : "", score.stones ? ` · ${count(score.stones[seat], "stone")}` : "", score.points ? ` · ${count(score.points[seat], "point")}` : ""),
        h("div", { class: "rp-hand" }, hand.length ? hand.map((t) => face(t, true)) : h("span", { class: "hint" }, "out")),
      ),
    );
    const chain = f.chain.length ? f.chain.map((t) => face(t, pips(t)[0] === pips(t)[1])) : h("span", { class: "hint" }, "no tile yet");
    replace(
      this.board,
      h("div", { class: "rp-chain", "aria-label": "chain" }, chain),
      // Domeng: "table 25 stones · unused: …"; Kozel has no table of stones: "bazaar: …"
      h("div", { class: "rp-meta" }, score.table !== undefined ? `table ${score.table} stones · ` : "", `${this.replay.rest_name}: `, h("span", { class: "rp-rest" }, f.rest.length ? f.rest.map((t) => face(t, true)) : "empty")),
      h("div", { class: "rp-seats" }, seats),
    );
  }
}
