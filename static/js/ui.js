// Small shared pieces: the language switcher, the copy-link button, page headers, term tooltips.

import { alertButtons } from "./alerts.js";
import { h, toast } from "./dom.js";
import { availableLanguages, currentLanguage, setLanguage, t } from "./i18n.js";
import { icon } from "./icons.js";

/** The language switcher (its choice is remembered in localStorage). */
export function languageSelect() {
  const select = h(
    "select",
    { class: "lang-select", "aria-label": t("nav.language"), onchange: (e) => setLanguage(e.target.value) },
    availableLanguages().map((l) => h("option", { value: l.code, selected: l.code === currentLanguage() }, l.name)),
  );
  return h("label", { class: "lang" }, icon("globe"), select);
}

/** Copy ``url`` to the clipboard (falls back to selecting a text field on plain-HTTP origins). */
export async function copyText(url) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(url);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const field = h("textarea", { class: "sr-only", readonly: true }, url);
  document.body.append(field);
  field.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  field.remove();
  return ok;
}

export function shareUrl(code) {
  return `${location.origin}/r/${code}`;
}

/** The "copy the share link" button. */
export function copyLinkButton(code, cls = "btn") {
  return h(
    "button",
    {
      class: `${cls} copy-link`,
      type: "button",
      onclick: async () => {
        const ok = await copyText(shareUrl(code));
        toast(ok ? t("room.copied") : t("room.copy_failed"), ok ? "ok" : "info");
      },
    },
    icon("link"),
    h("span", { class: "lbl" }, t("room.copy_link")),
  );
}

/** Buttons at the right of the table's top bar. */
export function topBarActions(ctl) {
  return [
    copyLinkButton(ctl.code, "icon-btn"),
    h("a", { class: "icon-btn rules-link", href: "/rules", target: "_blank", rel: "noopener" }, icon("book"), h("span", { class: "lbl" }, t("nav.rules"))),
    ...alertButtons(),
    languageSelect(),
  ];
}

/** The header of the lobby and rules pages. */
export function pageHeader(brand) {
  return h(
    "header",
    { class: "page-header" },
    h("a", { class: "brand", href: "/" }, brand, h("span", { class: "brand-text" }, t("app.title"))),
    h(
      "nav",
      { class: "page-nav", "aria-label": t("nav.main") },
      h("a", { href: "/" }, t("nav.lobby")),
      h("a", { href: "/rules" }, t("nav.rules")),
      languageSelect(),
    ),
  );
}

/** Tooltips for the game's terms on keyboard focus and on touch (mouse users get the title). */
export function installTermTooltips() {
  const tip = document.getElementById("tooltip");
  let current = null;
  let press = null; // a touch held on a name (see below)
  const endPress = () => {
    if (press) clearTimeout(press);
    press = null;
  };
  const show = (el) => {
    current = el;
    tip.textContent = el.getAttribute("title") || "";
    tip.hidden = false;
    const r = el.getBoundingClientRect();
    const width = Math.min(300, window.innerWidth - 16);
    tip.style.maxWidth = `${width}px`;
    const left = Math.max(8, Math.min(window.innerWidth - width - 8, r.left + r.width / 2 - width / 2));
    tip.style.left = `${left}px`;
    const below = r.bottom + 8;
    tip.style.top = `${below}px`;
    const tipBox = tip.getBoundingClientRect();
    if (tipBox.bottom > window.innerHeight - 8) tip.style.top = `${Math.max(8, r.top - tipBox.height - 8)}px`;
  };
  const hide = () => {
    current = null;
    tip.hidden = true;
  };
  document.addEventListener("focusin", (e) => {
    const el = e.target.closest?.(".term");
    if (el && el.matches(":focus-visible")) show(el);
  });
  document.addEventListener("focusout", (e) => {
    if (e.target.closest?.(".term")) hide();
  });
  document.addEventListener("pointerup", (e) => {
    const el = e.target.closest?.(".term");
    if (el && e.pointerType !== "mouse") {
      if (current === el) hide();
      else show(el);
    } else if (!el && current && current !== e.target.closest?.(NAME_SELECTOR)) hide();
    endPress();
  });
  // Escape closes the innermost thing open: the tooltip alone, not also the drawer or dialog it
  // is in (their handlers see the key's default prevented). Caught on the way down, before them.
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Escape" || !current) return;
      e.preventDefault();
      hide();
    },
    true,
  );
  window.addEventListener("scroll", hide, true);
  // A name shortened with an ellipsis shows whole in its title: on hover with a mouse, and on a
  // long press on a touch screen (no hover there), in the same tooltip as the game's terms.
  document.addEventListener("pointerdown", (e) => {
    const el = e.target.closest?.(NAME_SELECTOR);
    endPress();
    if (el && e.pointerType !== "mouse" && el.getAttribute("title")) press = setTimeout(() => show(el), LONG_PRESS_MS);
  });
  for (const type of ["pointercancel", "pointermove"]) document.addEventListener(type, endPress);
  document.addEventListener("contextmenu", (e) => {
    const el = e.target.closest?.(NAME_SELECTOR);
    if (el && el.getAttribute("title")) {
      e.preventDefault(); // a long press on a name shows the name, not the browser's menu
      endPress();
      show(el);
    }
  });
}

/** Elements that show a person's name and may shorten it (see installTermTooltips). */
const NAME_SELECTOR = ".who, .name-text, .seat-name, .stones-name";
const LONG_PRESS_MS = 500;
