// The generic renderer: any registered game drawn from its view alone — the hand, every
// public card or pile, per-seat and per-side piles, the facts in words, events by type
// and a breakdown table for any event that carries each side's score (`sides`). A game's
// own renderer (basra.js, bank.js) starts from this one and replaces what it says better.

import { block, breakdown, cardText, isCard, isCards, note, row, shown, words } from "./ui.js";

// What the shell itself draws from every view; everything else is the game's own.
const SHELL_KEYS = new Set([
  "game", "rules", "seats", "seat", "turn", "status", "winner", "winners", "hand",
  "hand_sizes", "scores",
]);
// Fields of an event said by the sentence itself, not repeated after it.
const EVENT_SUBJECT = new Set(["type", "seat", "side", "version", "sides", "scores"]);

const isPiles = (value) => Array.isArray(value) && value.length > 0 && value.every(isCards);
const isEntries = (value) =>
  Array.isArray(value) && value.length > 0 && value.every((entry) => entry && isCard(entry.card));

/** The game's public parts of the view, in the view's own order. */
function ownParts(view) {
  return Object.entries(view).filter(([key]) => !SHELL_KEYS.has(key));
}

// Per-seat or per-side piles: one line each with its size and its top card.
function piles(key, value, view, who) {
  const lines = document.createElement("div");
  lines.className = "piles";
  const perSeat = value.length === view.seats && value.length !== who.sides;
  value.forEach((pile, index) => {
    const name = perSeat ? who.seatName(index) : who.sideName(index);
    lines.append(note(`${name}: ${pile.length} card${pile.length === 1 ? "" : "s"}` +
      (pile.length ? `, last ${cardText(pile.at(-1))}` : ""), "count"));
  });
  return block(words(key), lines);
}

function part(key, value, view, who) {
  if (isCard(value)) return block(words(key), row([value]));
  if (isCards(value)) return block(words(key), row(value));
  if (isPiles(value)) return piles(key, value, view, who);
  if (isEntries(value)) return block(words(key), row(value.map((entry) => entry.card)));
  if (value && typeof value === "object" && isCard(value.card)) {
    const { card, ...rest } = value;
    return block(words(key), row([card]), note(shown(rest)));
  }
  return null;
}

const generic = {
  name: "generic",

  /** In-page help; the full rules are a link beside it. */
  summary(game) {
    return [
      `${words(game)} is drawn here from what the server shows each seat: your hand, ` +
        "every public card and pile, and each side's score.",
      "Click a card of your hand to play it; when a card can be played in several ways, " +
        "or a move plays no single card, the choices are listed as buttons under the hand.",
    ];
  },

  /** "Round 2", "Deal 3": the period the view is in, if it says. */
  period(view) {
    for (const key of ["round", "deal", "hand_number"]) {
      if (Number.isInteger(view[key])) return `${words(key)} ${view[key]}`;
    }
    return null;
  },

  centre(view, who) {
    const parts = [];
    const facts = [];
    for (const [key, value] of ownParts(view)) {
      const drawn = part(key, value, view, who);
      if (drawn) parts.push(drawn);
      else facts.push(`${words(key)}: ${shown(value)}`);
    }
    if (facts.length) parts.push(block("Also", note(facts.join(" · "))));
    return parts;
  },

  /** Extra lines in a seat's panel (its hand size is drawn by the shell). */
  seatLines() {
    return [];
  },

  /** The hand card a move plays on its own, or null (the move is then a button). */
  playsCard(move) {
    return isCard(move.card) ? move.card : null;
  },

  moveLabel(move) {
    const parts = move.type ? [words(move.type)] : [];
    for (const [key, value] of Object.entries(move)) {
      if (key === "type" || value === false || value === 0 || value === null) continue;
      if (isCards(value) && !value.length) continue;
      parts.push(key === "card" ? shown(value) : `${words(key).toLowerCase()} ${shown(value)}`);
    }
    return parts.join(" ") || "play";
  },

  describe(event, who) {
    const subject = Number.isInteger(event.seat) ? `${who.seatName(event.seat)}: ` : "";
    const rest = Object.entries(event).filter(([key]) => !EVENT_SUBJECT.has(key));
    const details = rest.map(([key, value]) => `${words(key).toLowerCase()} ${shown(value)}`);
    return `${subject}${words(event.type)}${details.length ? ` (${details.join(", ")})` : ""}`;
  },

  /**
   * An event that ends a round or deal, as the breakdown to show until the player goes
   * on: {title, table, lines (text)}; null for any other event.
   */
  ending(event, who) {
    if (!Array.isArray(event.sides) || !event.sides.length || typeof event.sides[0] !== "object") {
      return null;
    }
    const keys = Object.keys(event.sides[0]);
    const names = event.sides.map((_, side) => who.sideName(side));
    const lines = [];
    if (Array.isArray(event.scores)) lines.push(`Match scores: ${who.scoresText(event.scores)}`);
    return {
      title: `${words(event.type)}${this.period(event) ? ` — ${this.period(event)}` : ""}`,
      table: breakdown(event.sides, keys.map((key) => [words(key), key]), names),
      lines,
    };
  },

  /** The name of the running score's parts for the score table's note. */
  scoreNote() {
    return "banked + this round so far";
  },
};

export default generic;
