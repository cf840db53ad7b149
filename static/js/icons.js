// A few line icons (drawn here, no icon font): link, book, list, flag, sound, mute, bell, bell-off, globe, stop,
// people, bulb (a hint: the bell is the notifications'), and the chat's quick reactions: thumbs-up,
// oops, hourglass, star, hand, heart (never emoji, which a system without an emoji font shows as
// empty boxes).

import { s } from "./dom.js";

const PATHS = {
  link: ["M10 14a4.5 4.5 0 0 0 6.4 0l3.2-3.2a4.5 4.5 0 0 0-6.4-6.4L12 5.6", "M14 10a4.5 4.5 0 0 0-6.4 0l-3.2 3.2a4.5 4.5 0 0 0 6.4 6.4l1.2-1.2"],
  book: ["M5 4.5A1.5 1.5 0 0 1 6.5 3H19v15H6.5A1.5 1.5 0 0 0 5 19.5z", "M5 19.5A1.5 1.5 0 0 0 6.5 21H19", "M9 7h6"],
  list: ["M8 6h12", "M8 12h12", "M8 18h12", "M4 6h.01", "M4 12h.01", "M4 18h.01"],
  flag: ["M5 21V4", "M5 4h12l-2.5 4.5L17 13H5"],
  sound: ["M4 9h4l5-4v14l-5-4H4z", "M16.5 8.5a5 5 0 0 1 0 7", "M19 6a8.5 8.5 0 0 1 0 12"],
  mute: ["M4 9h4l5-4v14l-5-4H4z", "M17 9.5l5 5", "M22 9.5l-5 5"],
  bell: ["M6 17V11a6 6 0 0 1 12 0v6l1.5 2h-15z", "M10 21h4"],
  "bell-off": ["M6 17V11a6 6 0 0 1 12 0v6l1.5 2h-15z", "M10 21h4", "M3.5 3.5l17 17"],
  bulb: ["M9 16.2a6.5 6.5 0 1 1 6 0c-.6.4-.9.9-.9 1.6V18H9.9v-.2c0-.7-.3-1.2-.9-1.6z", "M10 21h4", "M12 18v-3.5", "M10.5 12.5l1.5 2l1.5-2"],
  stop: ["M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z", "M9 9h6v6H9z"],
  people: ["M9 11a3.5 3.5 0 1 0 0-7a3.5 3.5 0 1 0 0 7z", "M2.5 20a6.5 6.5 0 0 1 13 0", "M16 4.3a3.5 3.5 0 0 1 0 6.4", "M18 14.2a6.5 6.5 0 0 1 3.5 5.8"],
  globe: ["M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z", "M3 12h18", "M12 3c2.8 3 2.8 15 0 18", "M12 3c-2.8 3-2.8 15 0 18"],
  "thumbs-up": ["M3 11h4v9H3z", "M7 11l4-7c1.5 0 2.5 1 2.5 2.5V10h5a2 2 0 0 1 2 2.3l-1.2 6A2 2 0 0 1 17.3 20H7"],
  oops: ["M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z", "M9 9.5h.01", "M15 9.5h.01", "M8 15.5c1.3-1.3 2.7-1.3 4 0s2.7 1.3 4 0"],
  hourglass: ["M6 3h12", "M6 21h12", "M8 3v3.5l4 5.5l-4 5.5V21", "M16 3v3.5l-4 5.5l4 5.5V21"],
  star: ["M12 3l2.7 5.6l6.1.9l-4.4 4.3l1 6.1L12 17l-5.4 2.9l1-6.1l-4.4-4.3l6.1-.9z"],
  hand: ["M7 12V6.5a1.5 1.5 0 0 1 3 0V11", "M10 11V4.5a1.5 1.5 0 0 1 3 0V11", "M13 11V5.5a1.5 1.5 0 0 1 3 0V12", "M16 12V8.5a1.5 1.5 0 0 1 3 0V14a7 7 0 0 1-7 7h-.5a6 6 0 0 1-4.8-2.4L4 14.5a1.5 1.5 0 0 1 2.4-1.8L7 13.5"],
  heart: ["M12 20s-8-4.6-8-10.2A4.6 4.6 0 0 1 12 7a4.6 4.6 0 0 1 8 2.8C20 15.4 12 20 12 20z"],
};

export function icon(name) {
  const svg = s("svg", { class: "icon", "data-icon": name, viewBox: "0 0 24 24", "aria-hidden": "true", focusable: "false" });
  for (const d of PATHS[name] || []) svg.append(s("path", { d }));
  return svg;
}
