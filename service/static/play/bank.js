// Bank's renderer: the bank pile, the target to beat, the trumps, each seat's captures and
// finish, and a deal's breakdown as the server scored it.

import generic from "./generic.js";
import { block, breakdown, cardElement, cardText, cardsText, note, suitSymbol, words } from "./ui.js";

const TRUMP_CLASSES = ["plain", "trumps", "senior trumps"];
const FINISHES = {
  plain: "a plain card", king: "a king", trump_king: "a trump king", quad: "four of a kind",
  four_kings: "four kings", run: "a run",
};
const TAKEN_BECAUSE = {
  pass: "the next player passed on its card",
  trump_king: "went out with a trump king",
  four_kings: "went out with four kings",
};
const ENDINGS = {
  E1: "only one player still held cards",
  E2: "the stock was empty and every player passed",
};
const LINES = [
  ["Captured points", "captured_points"],
  ["Went out with", "finish"],
  ["Place", "place"],
  ["Bonus", "bonus"],
  ["Penalty", "penalty"],
  ["Deal points", "total"],
];

const finishText = (finish) => FINISHES[finish] || words(finish);

const bank = {
  ...generic,
  name: "bank",

  summary() {
    return [
      "Beat the target, the card on top of the bank: a higher card of its suit, or a " +
        "trump (your own suit, and the common trumps shown). Eights, four of a kind and " +
        "runs of four may always be laid.",
      "Cannot or will not beat it? Draw a card, then play or pass. When everyone passes " +
        "on your card, you take the bank and score its cards (A 12, 10 10, K 5, Q 3, J 1).",
      "Go out first for a bonus; the last player holding cards pays for them. The match " +
        "goes on, deal after deal, until someone reaches the target.",
      "Click a highlighted card to lay it; draw, pass, quads and runs are the buttons " +
        "under your hand.",
    ];
  },

  period: (view) => `Deal ${view.deal}`,

  centre(view, who) {
    const pile = document.createElement("div");
    pile.className = "cards bank";
    for (const entry of view.bank) {
      const card = cardElement(entry.card);
      card.title = entry.by === null ? "turned up from the pack" : `laid by ${who.seatName(entry.by)}`;
      pile.append(card);
    }
    if (!view.bank.length) pile.append(note("empty"));
    let target;
    if (view.target === null) {
      target = note("free lead: play any card");
    } else {
      target = document.createElement("div");
      target.className = "cards";
      const by = view.target.virtual ? "after a capture: beat it to lead"
        : view.target.by === null ? "turned up from the pack" : `laid by ${who.seatName(view.target.by)}`;
      target.append(cardElement(view.target.card), note(by));
    }
    const trumps = Object.entries(view.trumps.common)
      .filter(([, level]) => level > 0)
      .map(([suit, level]) => `${suitSymbol(suit)} ${TRUMP_CLASSES[level]}`);
    const personal = who.me === null ? null : view.trumps.personal[who.me];
    if (personal) trumps.push(`yours: ${suitSymbol(personal)}`);
    return [
      block("Bank", pile),
      block("Target", target),
      block("Trumps", note(trumps.length ? trumps.join(" · ") : "no common trumps")),
    ];
  },

  seatLines(view, seat) {
    const lines = [note(`${view.captured[seat].length} captured`, "count")];
    const personal = view.trumps.personal[seat];
    if (personal) lines.push(note(`trumps ${suitSymbol(personal)}`, "count"));
    const out = view.out.find((entry) => entry.seat === seat);
    if (out) lines.push(note(`out #${out.place} with ${finishText(out.finish)}, +${out.bonus}`, "count"));
    return lines;
  },

  moveLabel(move) {
    if (move.type === "lay") return `lay ${cardText(move.card)}`;
    if (move.type === "quad" || move.type === "run") return `${move.type} ${cardsText(move.cards)}`;
    return words(move.type);  // Draw, Pass
  },

  playsCard(move) {
    return move.type === "lay" ? move.card : null;
  },

  describe(event, who) {
    const name = who.seatName(event.seat);
    switch (event.type) {
      case "lay":
        return `${name} laid ${cardText(event.card)}`;
      case "quad":
      case "run":
        return `${name} laid a ${event.type}: ${cardsText(event.cards)}`;
      case "draw":
        // Another seat's drawn card is hidden: the event then names no card.
        return `${who.verb(event.seat, "draw", "draws")} ${event.card ? cardText(event.card) : "a card"}` +
          (event.forced ? " (after a seven)" : "");
      case "pass":
        return `${who.verb(event.seat, "pass", "passes")}`;
      case "capture":
        return `${who.verb(event.seat, "take", "takes")} the bank: ${event.cards.length} cards, ` +
          `${event.points} points (${TAKEN_BECAUSE[event.why] || words(event.why)})`;
      case "turn_up":
        return `Turned up from the pack: ${cardText(event.card)}`;
      case "skip":
        return `${who.verb(event.seat, "miss", "misses")} a turn (after a seven)`;
      case "out":
        return `${who.verb(event.seat, "go", "goes")} out in place ${event.place} with ` +
          `${finishText(event.finish)} (+${event.bonus})`;
      case "deal":
        return `Deal ${event.deal}: ${who.seatName(event.dealer)} dealt, ` +
          `the pack turned up ${cardText(event.card)}`;
      case "deal_end":
        return `Deal ${event.deal} over: ${who.verb(event.loser, "pay", "pays")} ${event.penalty}; ` +
          who.scoresText(event.scores);
      case "match_end":
        return `Match over: ${who.scoresText(event.scores)}`;
      default:
        return generic.describe(event, who);
    }
  },

  ending(event, who) {
    if (event.type !== "deal_end") return null;
    const lines = [
      `The deal ended because ${ENDINGS[event.ending] || event.ending}.`,
      `${who.verb(event.loser, "were", "was")} left holding cards and ` +
        `${event.loser === who.me ? "pay" : "pays"} ${event.penalty}.`,
    ];
    if (event.discarded.length) lines.push(`Discarded with the last bank: ${cardsText(event.discarded)}.`);
    lines.push(`Match scores: ${who.scoresText(event.scores)}`);
    return {
      title: `Deal ${event.deal} over`,
      table: breakdown(
        event.sides.map((side) => ({ ...side, finish: side.finish && finishText(side.finish) })),
        LINES, event.sides.map((_, seat) => who.seatName(seat))),
      lines,
    };
  },

  scoreNote() {
    return "banked + this deal so far";
  },
};

export default bank;
