// Translations: one JSON catalog per language in /static/i18n/, never text in code.
//
// A message is a string, or an object of plural forms ({"one": …, "few": …, "other": …}) chosen by
// the ``n`` parameter with Intl.PluralRules. ``{name}`` inserts a parameter (as text, or a Node in
// `tf`); ``[[ceki]]`` inserts one of the game's own terms, which stay untranslated and carry a
// tooltip with their definition (the ``term.<id>`` message) in the chosen language.
// A missing key renders as ⟦key⟧, is logged once, and is listed in ``window.__i18nMissing``.

import { h } from "./dom.js";

const STORAGE_KEY = "domeng:lang";
const TOKEN = /\{(\w+)\}|\[\[([^\]|]+)(?:\|([^\]]+))?\]\]/g;

let languages = [{ code: "en", name: "English" }];
let lang = "en";
let catalog = {};
const listeners = new Set();
const missing = new Set();
window.__i18nMissing = [];

async function fetchJson(url) {
  const reply = await fetch(url, { cache: "no-cache" });
  if (!reply.ok) throw new Error(`${url}: ${reply.status}`);
  return reply.json();
}

/** Load the language list and the catalog of the stored or the browser's language. */
export async function initI18n() {
  languages = (await fetchJson("/static/i18n/index.json")).languages;
  await load(pickLanguage());
}

function pickLanguage() {
  const codes = languages.map((l) => l.code);
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored && codes.includes(stored)) return stored;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (codes.includes(base)) return base;
  }
  return "en";
}

/** Load ``code``'s catalog without remembering it as the visitor's choice (the admin pages, which
 * are in English, draw the players' round review with it). */
export const useLanguage = (code) => load(code);

async function load(code) {
  catalog = await fetchJson(`/static/i18n/${code}.json`);
  lang = code;
  document.documentElement.lang = code;
  renderDefinitions();
}

/** Switch language (remembered in localStorage) and tell every listener. */
export async function setLanguage(code) {
  localStorage.setItem(STORAGE_KEY, code);
  await load(code);
  for (const fn of listeners) fn(code);
}

export const onLanguageChange = (fn) => listeners.add(fn);
export const currentLanguage = () => lang;
export const availableLanguages = () => languages;

function noteMissing(key) {
  if (!missing.has(key)) {
    missing.add(key);
    window.__i18nMissing.push(`${lang}:${key}`);
    console.warn(`missing translation ${lang}:${key}`);
  }
}

/** Whether the catalog holds ``key``. */
export const has = (key) => Object.prototype.hasOwnProperty.call(catalog, key);

/** A refusal from the server (an api.js error: ``code``, ``message``) in the page's words: its
 * code's own (``error.too_many_writes``, ...), else the general words around its English message. */
export const errorText = (error) => (has(`error.${error.code}`) ? t(`error.${error.code}`) : t("error.generic", { message: error.message }));

function message(key, params) {
  if (!has(key)) {
    noteMissing(key);
    return null;
  }
  const value = catalog[key];
  if (value && typeof value === "object") {
    const n = Number(params?.n ?? 0);
    return value[formats().plural.select(n)] ?? value.other;
  }
  return value;
}

let formatted = { lang: null, plural: null, number: null };

/** The language's plural rules and number format, made once per language (making them costs more
 * than the rest of a message: a table's feed formats hundreds a second). */
function formats() {
  if (formatted.lang !== lang) {
    formatted = { lang, plural: new Intl.PluralRules(lang), number: new Intl.NumberFormat(lang) };
  }
  return formatted;
}

const termId = (text) => text.trim().toLowerCase().replace(/\s+/g, "_");

function formatParam(value) {
  if (typeof value === "number") return formats().number.format(value);
  if (value instanceof Node) return value.textContent;
  return String(value ?? "");
}

/** A message as plain text (terms as their words): for aria-label, title, document.title. */
export function t(key, params = {}) {
  const template = message(key, params);
  if (template === null) return `⟦${key}⟧`;
  return template.replace(TOKEN, (_, name, term, shown) => (term ? shown || term : formatParam(params[name])));
}

/** A message as a DocumentFragment: parameters may be Nodes, terms get their tooltip. */
export function tf(key, params = {}) {
  const fragment = document.createDocumentFragment();
  const template = message(key, params);
  if (template === null) {
    fragment.append(`⟦${key}⟧`);
    return fragment;
  }
  let last = 0;
  for (const match of template.matchAll(TOKEN)) {
    fragment.append(template.slice(last, match.index));
    const [, name, term, shown] = match;
    if (term) fragment.append(termEl(term, shown));
    else {
      const value = params[name];
      fragment.append(value instanceof Node ? value.cloneNode(true) : formatParam(value));
    }
    last = match.index + match[0].length;
  }
  fragment.append(template.slice(last));
  return fragment;
}

/** A message as one inline span (`tf`): inside a flex box such as a `.tag`, its terms and its words
 * stay one run of text, so no box's gap stands between a term and the colon or word after it
 * ("MAPPAKULING : …"). */
export const tfSpan = (key, params = {}) => h("span", {}, tf(key, params));

/** One of the game's terms, shown as written (or as ``shown``), with its definition as tooltip and
 * description. */
export function termEl(text, shown = text) {
  const id = termId(text);
  const key = `term.${id}`;
  const definition = has(key) ? catalog[key] : (noteMissing(key), `⟦${key}⟧`);
  return h(
    "span",
    { class: "term", tabindex: "0", title: definition, "aria-describedby": `def-${id}`, dataset: { term: id } },
    shown,
  );
}

function renderDefinitions() {
  const box = document.getElementById("term-defs");
  if (!box) return;
  box.replaceChildren();
  for (const key of Object.keys(catalog)) {
    if (key.startsWith("term.")) box.append(h("span", { id: `def-${key.slice(5)}` }, catalog[key]));
  }
}

/** Items joined as a list in the language ("A, B and C"); items may be Nodes. */
export function list(items) {
  const fragment = document.createDocumentFragment();
  const marks = items.map((_, i) => `\u0001${i}\u0001`);
  for (const part of new Intl.ListFormat(lang, { type: "conjunction" }).formatToParts(marks)) {
    if (part.type === "element") {
      const item = items[Number(part.value.replaceAll("\u0001", ""))];
      fragment.append(item instanceof Node ? item : String(item));
    } else fragment.append(part.value);
  }
  return fragment;
}

/** A number in the language's format. */
export const num = (n) => formats().number.format(n);
