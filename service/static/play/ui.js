// What every renderer draws with: cards in CSS, notes, titled blocks, breakdown tables.

const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED_SUITS = new Set(["D", "H"]);
const CARD = /^([2-9TJQKA])([CDHS])$/;

export const suitSymbol = (suit) => SUIT_SYMBOLS[suit] || suit;

/** Whether a value of a view, a move or an event is one card ("7D", "TS"). */
export const isCard = (value) => typeof value === "string" && CARD.test(value);

/** Whether a value is a list of cards (an empty list counts: a pile that is empty now). */
export const isCards = (value) => Array.isArray(value) && value.every(isCard);

function rankLabel(card) {
  return card[0] === "T" ? "10" : card[0];
}

export function cardText(card) {
  return rankLabel(card) + SUIT_SYMBOLS[card[1]];
}

export function cardsText(cards) {
  return cards.map(cardText).join(" ");
}

export function cardElement(card, { small = false } = {}) {
  const element = document.createElement("span");
  element.className = "card" + (small ? " small" : "") + (RED_SUITS.has(card[1]) ? " red" : "");
  element.dataset.card = card;
  // Named as one picture (a playable hand card is made a button instead): a plain span's
  // name is not read out, its corner and pip would be.
  element.setAttribute("role", "img");
  element.setAttribute("aria-label", cardText(card));
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.textContent = rankLabel(card) + "\n" + SUIT_SYMBOLS[card[1]];
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = SUIT_SYMBOLS[card[1]];
  element.append(corner, pip);
  return element;
}

/** `count` cards face down, fanned. */
export function backs(count) {
  const fan = document.createElement("span");
  fan.className = "fan";
  for (let i = 0; i < count; i++) {
    const back = document.createElement("span");
    back.className = "card small back";
    fan.append(back);
  }
  return fan;
}

/** A row of face-up cards; `empty` is what an empty row says. */
export function row(cards, { small = false, empty = "empty", className = "" } = {}) {
  const element = document.createElement("div");
  element.className = `cards ${className}`.trim();
  for (const card of cards) element.append(cardElement(card, { small }));
  if (!cards.length) element.append(note(empty));
  return element;
}

export function note(text, className = "note") {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

export function block(title, ...children) {
  const element = document.createElement("div");
  element.className = "block";
  const heading = document.createElement("h3");
  heading.textContent = title;
  element.append(heading, ...children);
  return element;
}

/** "two_clubs" → "Two clubs". */
export function words(key) {
  const text = String(key).replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A number as a score line shows it: a sign on penalties, "−" for the minus. */
export function points(value) {
  return typeof value === "number" && value < 0 ? `−${-value}` : String(value);
}

/**
 * A breakdown table: one column per side, one row per line. `lines` is a list of
 * [label, key] and `sides` the server's per-side objects; `names` heads the columns.
 */
export function breakdown(sides, lines, names) {
  const table = document.createElement("table");
  table.className = "breakdown";
  const head = table.createTHead().insertRow();
  head.append(document.createElement("th"));
  for (const name of names) {
    const cell = document.createElement("th");
    cell.textContent = name;
    head.append(cell);
  }
  const body = table.createTBody();
  for (const [label, key] of lines) {
    const line = body.insertRow();
    line.dataset.key = key;
    const title = document.createElement("th");
    title.textContent = label;
    line.append(title);
    for (const side of sides) line.insertCell().textContent = shown(side[key]);
  }
  return table;
}

/** A value of the server's in words: cards as cards, null as a dash. */
export function shown(value) {
  if (value === null || value === undefined) return "–";
  if (isCard(value)) return cardText(value);
  if (isCards(value)) return value.length ? cardsText(value) : "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") return points(value);
  if (Array.isArray(value)) return value.map(shown).join(", ");
  if (typeof value === "object") {
    return Object.entries(value).map(([key, item]) => `${words(key)} ${shown(item)}`).join(", ");
  }
  return words(value);
}
