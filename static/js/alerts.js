// Sounds and notifications at the table: a short sound for your turn, a tile placed, a pass, a
// round's end and the match's end; a browser notification when your turn comes while the tab is
// hidden. Sound is off until the player turns it on (remembered in localStorage); notifications
// need the browser's permission, asked only when the player presses the bell.
//
// A browser holds a page's audio until the player taps or presses a key there (its autoplay
// policy): after a reload with sound on, the AudioContext starts suspended. The speaker then says
// it waits for a tap, and the first pointer or key event anywhere on the page lets it play.

import { h, toast } from "./dom.js";
import { t } from "./i18n.js";
import { icon } from "./icons.js";

const SOUND_KEY = "domeng:sound";

/** Whether this browser wants sounds (off on a first visit). */
export const soundOn = () => localStorage.getItem(SOUND_KEY) === "on";

const NOTIFY_KEY = "domeng:notify";

/** Whether a hidden tab is notified of the player's turn: the browser allows it, and the player
 * has not turned the bell off. */
const notifyOn = () => notifications() && notificationsPossible() && Notification.permission === "granted" && localStorage.getItem(NOTIFY_KEY) !== "off";

// Each sound: [frequency (Hz), start (s), length (s), wave, peak gain]. Synthesised with the Web
// Audio API, so there are no sound files to fetch; short and quiet, like a tile on a table.
const SOUNDS = {
  turn: [
    [660, 0, 0.12, "sine", 0.22],
    [880, 0.13, 0.18, "sine", 0.22],
  ],
  place: [[180, 0, 0.07, "triangle", 0.35]],
  pass: [[300, 0, 0.1, "sine", 0.12]],
  round: [
    [523, 0, 0.14, "sine", 0.18],
    [659, 0.12, 0.14, "sine", 0.18],
    [784, 0.24, 0.24, "sine", 0.18],
  ],
  match: [
    [523, 0, 0.16, "sine", 0.2],
    [659, 0.16, 0.16, "sine", 0.2],
    [784, 0.32, 0.16, "sine", 0.2],
    [1047, 0.48, 0.4, "sine", 0.2],
  ],
};

let audio = null;
window.__domengAudio = () => audio?.state ?? "none";
let lockedAtPress = false; // the press under way (pointer or key) came while the audio was held

/** The page's AudioContext, made on first use (null where the browser has none). */
function audioContext() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return null;
  if (!audio) {
    audio = new Context();
    audio.onstatechange = paintSounds; // held, let go (or held again: a phone call, say)
  }
  if (audio.state !== "running") audio.resume().catch(() => {});
  return audio;
}

/** Whether sound is on but the browser holds the audio until the player taps or presses a key. */
export const audioHeld = () => soundOn() && !!audio && audio.state !== "running";

/** Any press on the page (a pointer or a key, as the browser counts a gesture) lets held audio play. */
function onPress(event) {
  if (event.type === "pointerdown" || event.type === "keydown") lockedAtPress = audioHeld();
  if (audioHeld()) audio.resume().then(paintSounds, () => {});
}
for (const type of ["pointerdown", "pointerup", "keydown", "touchend", "click"]) {
  window.addEventListener(type, onPress, { capture: true, passive: true });
}

const soundWatchers = new Set();

/** Call ``fn()`` each time the speakers are painted again (sound turned on or off, the audio held
 * or let go: see `audioHeld`); returns the function that stops it. */
export function watchSound(fn) {
  soundWatchers.add(fn);
  return () => soundWatchers.delete(fn);
}

function paintSounds() {
  for (const each of document.querySelectorAll(".sound-toggle")) paintSound(each);
  for (const fn of soundWatchers) fn();
}

/** Play the sound ``kind`` (a key of SOUNDS) if sound is on; every sound asked for is also kept in
 * ``window.__domengSounds`` (what a test of the page reads: it cannot hear), and
 * ``window.__domengAudio()`` says the AudioContext's state ("none" before one is made). */
export function play(kind) {
  (window.__domengSounds ||= []).push({ kind, on: soundOn() });
  if (!soundOn()) return;
  const ctx = audioContext();
  if (!ctx) return;
  const now = ctx.currentTime;
  for (const [freq, start, length, wave, peak] of SOUNDS[kind] || []) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = wave;
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, now + start);
    gain.gain.exponentialRampToValueAtTime(peak, now + start + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(now + start);
    osc.stop(now + start + length + 0.02);
  }
}

const notifications = () => "Notification" in window;

/** Whether the browser can ever show this page's notifications: only in a secure context (https,
 * or this computer's own address). Over plain http from a LAN address (http://192.168.1.20:8000)
 * Chromium still has ``Notification`` but refuses every request without asking, and no site
 * setting changes that. */
const notificationsPossible = () => window.isSecureContext !== false;

/** The top bar's sound switch and, where the browser has notifications, the bell: it asks for
 * them the first time, then turns them on and off; where the browser blocks them it says so, and
 * on a page opened over plain http it says that notifications need https (``data-notify``:
 * ``insecure``). */
export function alertButtons() {
  const sound = h("button", { class: "icon-btn sound-toggle", type: "button" });
  sound.addEventListener("click", () => {
    if (soundOn() && lockedAtPress) {
      // the speaker said it waits for a tap, and this was it: the sound stays on, and is heard
      lockedAtPress = false;
      play("place");
      return paintSounds();
    }
    localStorage.setItem(SOUND_KEY, soundOn() ? "off" : "on");
    paintSounds();
    if (soundOn()) play("place"); // a gesture unlocks the audio, and the player hears what they chose
  });
  if (soundOn()) audioContext(); // remembered on: the browser may hold it until a tap (shown)
  paintSound(sound);
  const buttons = [sound];
  if (notifications()) {
    const bell = h("button", { class: "icon-btn notify-toggle", type: "button" });
    bell.addEventListener("click", async () => {
      if (!notificationsPossible()) return toast(t("alerts.notify_insecure"), "info");
      if (Notification.permission === "granted") localStorage.setItem(NOTIFY_KEY, notifyOn() ? "off" : "on");
      else if (Notification.permission === "default" && (await Notification.requestPermission()) === "granted")
        localStorage.setItem(NOTIFY_KEY, "on");
      if (Notification.permission === "denied") toast(t("alerts.notify_blocked"), "info");
      for (const each of document.querySelectorAll(".notify-toggle")) paintBell(each);
    });
    paintBell(bell);
    buttons.push(bell);
  }
  return buttons;
}

/** The bell: on, off, or why it cannot be on (``data-notify``: ``insecure``, plain http;
 * ``blocked``, the browser's permission is "denied", which only its site settings change). */
function paintBell(button) {
  const on = notifyOn();
  const possible = notificationsPossible();
  const blocked = possible && Notification.permission === "denied";
  button.setAttribute("aria-pressed", String(on));
  button.dataset.notify = !possible ? "insecure" : blocked ? "blocked" : on ? "on" : "off";
  button.title = !possible ? t("alerts.notify_insecure") : blocked ? t("alerts.notify_blocked") : on ? t("alerts.notify_off") : t("alerts.notify_ask");
  button.replaceChildren(icon(on ? "bell" : "bell-off"), h("span", { class: "sr-only" }, t("alerts.notify")));
}

/** The speaker: off, on, or on but waiting for a tap (``data-audio``: off, on, held). */
function paintSound(button) {
  const on = soundOn();
  const held = audioHeld();
  button.setAttribute("aria-pressed", String(on));
  button.dataset.audio = held ? "held" : on ? "on" : "off";
  button.title = held ? t("alerts.sound_held") : on ? t("alerts.sound_off") : t("alerts.sound_on");
  // one fixed name with aria-pressed ("Sound, pressed" / "not pressed"): a name that changed too
  // read "Muted, not pressed"; the title (its description) says what a press does, or why it waits
  button.replaceChildren(icon(on ? "sound" : "mute"), h("span", { class: "sr-only" }, t("alerts.sound")));
}

/** What the table plays and shows as the game goes on: one per table screen. */
export class TableAlerts {
  constructor() {
    this.wasMyTurn = false;
    this.shown = null;
  }

  /** After the table drew ``view``: ``events`` are the round's new events, ``myTurn`` whether the
   * player has a tile to choose now, ``turnText`` the notification's words. */
  update(view, events, myTurn, turnText) {
    let sound = null;
    for (const event of events) {
      if (event.type === "placed") sound = "place";
      else if (event.type === "passed" && sound === null) sound = "pass";
      else if (event.type === "round_ended") sound = view.match_over ? "match" : "round";
    }
    const turnNow = myTurn && !this.wasMyTurn;
    this.wasMyTurn = myTurn;
    if (turnNow) sound = "turn";
    if (sound) play(sound);
    if (turnNow) this.notifyTurn(turnText);
    else if (!myTurn) this.closeNotice();
  }

  notifyTurn(text) {
    if (!document.hidden || !notifyOn()) return;
    try {
      this.shown = new Notification(t("app.title"), { body: text, tag: "domeng-turn", icon: "/static/img/icon-192.png" });
      this.shown.onclick = () => {
        window.focus();
        this.closeNotice();
      };
    } catch {
      this.shown = null; // a browser that shows notifications only from a service worker
    }
  }

  closeNotice() {
    this.shown?.close();
    this.shown = null;
  }
}
