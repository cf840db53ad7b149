// Bot levels as the player sees them: the levels a seat can be given, and a bot's label and name
// in the page's language (legacy levels of old rooms, "random" and "greedy", still have their words).

import { has, t } from "./i18n.js";

/** The levels the lobby, the waiting room and the table offer, weakest first (engine.bots.PLAYER_LEVELS). */
export const BOT_LEVELS = ["easy", "medium", "hard"];

/** The level a new bot seat starts with, and the one that covers for an absent player (engine.bots.COVER_LEVEL). */
export const COVER_LEVEL = "medium";

/** A level's word, e.g. "hard" ("сильный" in Russian); an unknown level shows as sent. */
export const levelWord = (level) => (has(`bot.${level}`) ? t(`bot.${level}`) : String(level ?? ""));

/** A bot seat's label, e.g. "Bot · hard". */
export const botLabel = (level) => t("seat.bot_level", { level: levelWord(level) });

/** A bot's name with its level, e.g. "Bot 3 · hard" (seats counted from 1). */
export const botName = (seat, level) => t("seat.bot_named", { n: seat + 1, level: levelWord(level) });
