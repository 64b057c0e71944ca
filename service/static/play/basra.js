// Basra's renderer: the table, each side's pile with its basras, captures in words and a
// round's breakdown line by line as the server scored it.

import generic from "./generic.js";
import { block, breakdown, cardText, cardsText, note, row } from "./ui.js";

// The round_end breakdown's lines, in the order docs/basra.md scores them.
const LINES = [
  ["Cards taken", "cards"],
  ["Most cards", "majority"],
  ["Jacks", "jacks"],
  ["Aces", "aces"],
  ["2♣", "two_clubs"],
  ["10♦", "ten_diamonds"],
  ["Basras", "basras"],
  ["Round points", "total"],
];

const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

const basra = {
  ...generic,
  name: "basra",

  summary() {
    return [
      "Play one card a turn. It takes every table card of its rank, and any group of " +
        "table cards that adds up to its value (A = 1, number cards their number; J, Q " +
        "and K take only their own rank, a jack sweeps the whole table).",
      "Empty the table with an ordinary card: a basra, worth a bonus. A card that takes " +
        "nothing is laid on the table.",
      "A round's points: most cards taken, jacks, aces, the 2♣ and 10♦ (as the rules " +
        "count them) and basras; rounds go on until a side reaches the target.",
      "Click a highlighted card of your hand to play it; when it can take in several " +
        "ways, pick the capture from the buttons under your hand.",
    ];
  },

  period: (view) => `Round ${view.round}`,

  centre(view, who) {
    const piles = document.createElement("div");
    piles.className = "piles";
    for (let side = 0; side < who.sides; side++) {
      const basras = view.basras[side].length;
      piles.append(note(`${who.sideName(side)}: ${plural(view.captured[side].length, "card")}` +
        (basras ? `, ${plural(basras, "basra")}` : ""), "count"));
    }
    const parts = [
      block("Table", row(view.table, { empty: "empty: the next card is laid here", className: "table" })),
      block("Taken", piles),
    ];
    if (view.carry) parts.push(note(`${view.carry} points carried over from a tied round`));
    return parts;
  },

  moveLabel(move) {
    if (!move.capture.length) return `lay ${cardText(move.card)} on the table`;
    return `take ${cardsText(move.capture)} with ${cardText(move.card)}` +
      (move.basra ? " (basra!)" : "");
  },

  describe(event, who) {
    switch (event.type) {
      case "move":
        return event.capture.length
          ? `${who.seatName(event.seat)} played ${cardText(event.card)}, taking ${cardsText(event.capture)}`
          : `${who.seatName(event.seat)} laid ${cardText(event.card)} on the table`;
      case "capture":  // the move event already says what was taken
        return null;
      case "basra":
        return `${who.verb(event.seat, "make", "makes")} a basra with ${cardText(event.card)}` +
          ` (+${event.points})`;
      case "deal":
        return `New cards: ${event.hand_size} each, ${event.stock} left in the stock`;
      case "round_end":
        return `Round ${event.round} over: ${who.scoresText(event.scores)}`;
      case "match_end":
        return `Match over: ${who.scoresText(event.scores)}`;
      default:
        return generic.describe(event, who);
    }
  },

  ending(event, who) {
    if (event.type !== "round_end") return null;
    const lines = [];
    if (event.sweep) {
      lines.push(`The cards left on the table (${cardsText(event.sweep.cards)}) went to ` +
        `${who.sideName(event.sweep.side)}, who took last.`);
    }
    if (event.carry) lines.push(`${event.carry} points carried over to the next round.`);
    lines.push(`Match scores: ${who.scoresText(event.scores)}`);
    return {
      title: `Round ${event.round} over`,
      table: breakdown(event.sides, LINES, event.sides.map((_, side) => who.sideName(side))),
      lines,
    };
  },
};

export default basra;
