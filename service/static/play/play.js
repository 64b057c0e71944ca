// The play page: one human seat against the service's bots in a hosted session, or a
// spectator of one (opened from its watch link, /play#watch=<id>.<spectator token>).
// Plain ES module, no build step: everything it needs is served by the service itself.

const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED_SUITS = new Set(["D", "H"]);
const TRUMP_CLASSES = ["plain", "trumps", "senior trumps"];
const LOG_LENGTH = 40;
const RETRY_MS = 1000;
const TICK_MS = 250;
const WATCH = "#watch=";

const $ = (id) => document.getElementById(id);

let catalogue = [];   // GET /v1/games
let session = null;   // the match on screen: id, token, seats, version, view, moves
let eventsSeen = 0;   // highest event version written to the log
let following = null; // AbortController of the running event stream or long poll
let deadlineAt = null; // when the seat to move runs out of time (this clock), or null
let busy = false;     // a move is on its way: nothing is clickable

class Problem extends Error {
  constructor(status, body) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function call(path, { method = "GET", body, signal } = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session && path.startsWith(`/v1/sessions/${session.id}`)) {
    headers.Authorization = `Bearer ${session.token}`;
  }
  const response = await fetch(path, {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const answer = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Problem(response.status, answer || {});
  return answer;
}

function showProblem(error) {
  const box = $("problem");
  box.textContent = error ? error.message : "";
  box.hidden = !error;
}

// ---- cards ---------------------------------------------------------------------------

function rankLabel(card) {
  return card[0] === "T" ? "10" : card[0];
}

function cardText(card) {
  return card ? rankLabel(card) + SUIT_SYMBOLS[card[1]] : "a card";
}

function cardsText(cards) {
  return cards.map(cardText).join(" ");
}

function cardElement(card, { small = false } = {}) {
  const element = document.createElement("span");
  element.className = "card" + (small ? " small" : "") + (RED_SUITS.has(card[1]) ? " red" : "");
  element.dataset.card = card;
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

function backs(count) {
  const fan = document.createElement("span");
  fan.className = "fan";
  for (let i = 0; i < count; i++) {
    const back = document.createElement("span");
    back.className = "card small back";
    fan.append(back);
  }
  return fan;
}

function row(cards, { small = false } = {}) {
  const element = document.createElement("div");
  element.className = "cards";
  for (const card of cards) element.append(cardElement(card, { small }));
  if (!cards.length) element.append(note("empty"));
  return element;
}

function note(text, className = "note") {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

function block(title, ...children) {
  const element = document.createElement("div");
  element.className = "block";
  const heading = document.createElement("h3");
  heading.textContent = title;
  element.append(heading, ...children);
  return element;
}

// ---- who is who ----------------------------------------------------------------------

function seatName(seat) {
  if (seat === null || seat === undefined) return "nobody";
  if (seat === session.seat) return "You";
  const entry = session.seats && session.seats[seat];
  return entry ? `Seat ${seat} (${entry.level} bot)` : `Seat ${seat}`;
}

function sideCount(view) {
  return view.game === "basra" && view.seats === 4 ? 2 : view.seats;
}

function sideName(side, view) {
  if (view.game !== "basra") return seatName(side);
  if (view.seats === 2) return seatName(side);
  if (session.seat === null) return `Side ${side}`;
  return side === session.seat % 2 ? "Your side" : `Side ${side}`;
}

// ---- setup ---------------------------------------------------------------------------

function selectedGame() {
  return catalogue.find((game) => game.name === $("game").value);
}

function fill(select, values, chosen) {
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement("option");
    option.value = option.textContent = String(value);
    option.selected = value === chosen;
    return option;
  }));
}

function fillGameOptions() {
  const game = selectedGame();
  fill($("preset"), Object.keys(game.presets), game.default_preset);
  fill($("seats"), game.seats, game.seats[0]);
}

async function loadGames() {
  catalogue = (await call("/v1/games")).games;
  fill($("game"), catalogue.map((game) => game.name), catalogue[0].name);
  fillGameOptions();
}

async function startMatch(event) {
  event.preventDefault();
  stopPolling();
  showProblem(null);
  const level = $("level").value;
  const seats = Number($("seats").value);
  const rules = { preset: $("preset").value };
  if ($("target").value) rules.target_score = Number($("target").value);
  const body = {
    game: $("game").value,
    rules,
    seats: [{ type: "human" }, ...Array.from({ length: seats - 1 }, () => ({ type: "bot", level }))],
    spectators: 1,
  };
  if ($("turn-seconds").value) body.turn_seconds = Number($("turn-seconds").value);
  $("start").disabled = true;
  try {
    const created = await call("/v1/sessions", { method: "POST", body });
    session = {
      id: created.id,
      token: created.seats.find((seat) => seat.type === "human").token,
      seats: created.seats,
      seat: created.seats.findIndex((seat) => seat.type === "human"),
      version: -1,
    };
    showWatchLink(created.spectators[0].token);
    eventsSeen = 0;
    $("events").replaceChildren();
    await refresh();
    keepUp();
  } catch (error) {
    showProblem(error);
  } finally {
    $("start").disabled = false;
  }
}

function showWatchLink(token) {
  const link = $("watch-link");
  link.href = `${location.origin}/play${WATCH}${session.id}.${token}`;
  link.textContent = link.href;
  $("watch").hidden = false;
}

// A watch link opens the page as a spectator: the session's public view, nothing to play.
async function watch(fragment) {
  const [id, token] = fragment.split(".");
  document.body.dataset.role = "spectator";
  session = { id, token, seats: null, seat: null, version: -1 };
  await refresh();
  keepUp();
}

// ---- keeping up ----------------------------------------------------------------------

function take(answer) {
  if (answer.version < session.version) return;
  session.version = answer.version;
  session.view = answer.view;
  session.moves = answer.moves;
  if ("time_left" in answer) {
    deadlineAt = answer.time_left === null ? null : Date.now() + answer.time_left * 1000;
  }
  if (answer.events) logEvents(answer.events);
  render();
}

async function refresh() {
  take(await call(`/v1/sessions/${session.id}`));
}

function stopPolling() {
  if (following) following.abort();
  following = null;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, RETRY_MS));

// The other seats' moves arrive through the session's event stream (the long poll if the
// stream cannot be had); each batch is followed by a read of the session for the view and
// the legal moves it leads to.
async function keepUp() {
  const controller = new AbortController();
  following = controller;
  if (await followStream(controller)) return;
  document.body.dataset.follow = "poll";
  await followLongPoll(controller);
}

function matchGoesOn(controller) {
  return !controller.signal.aborted && session.view.status !== "match_over";
}

// EventSource cannot send the bearer token, so the stream is read with fetch: messages of
// `id:`, `event:` and `data:` lines ended by a blank line; `:` lines are pings. A dropped
// connection resumes with Last-Event-ID, so every version arrives once. False when the
// stream could not be opened at all (the caller falls back to the long poll).
async function followStream(controller) {
  const { id, token } = session;
  let opened = false;
  while (matchGoesOn(controller)) {
    let response;
    try {
      response = await fetch(`/v1/sessions/${id}/stream`, {
        signal: controller.signal,
        headers: { Authorization: `Bearer ${token}`, "Last-Event-ID": String(eventsSeen) },
      });
    } catch (error) {
      if (controller.signal.aborted) return true;
      if (!opened) return false;
      await pause();
      continue;
    }
    if (!response.ok || !response.body) {
      if (!opened) return false;
      await pause();
      continue;
    }
    opened = true;
    document.body.dataset.follow = "stream";
    try {
      if (await readStream(response.body, controller)) return true;
    } catch (error) {
      if (controller.signal.aborted) return true;
    }
    if (matchGoesOn(controller)) await pause();
  }
  return true;
}

// Reads one connection's messages; true when the stream said `end` (the session is gone).
async function readStream(body, controller) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let message = { id: null, event: "message", data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || controller.signal.aborted) return false;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (message.event === "end") return true;
          if (message.event === "events" && message.data.length) {
            logEvents(JSON.parse(message.data.join("\n")));
            // A version whose events this token may not see still counts for resuming.
            if (Number.isInteger(message.id)) eventsSeen = Math.max(eventsSeen, message.id);
            await refresh();
            if (!matchGoesOn(controller)) return false;
          }
          message = { id: null, event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") message.id = Number(text);
        else if (field === "event") message.event = text;
        else if (field === "data") message.data.push(text);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

async function followLongPoll(controller) {
  const { id } = session;
  while (matchGoesOn(controller)) {
    try {
      const events = await call(`/v1/sessions/${id}/events?after=${eventsSeen}`, {
        signal: controller.signal,
      });
      if (controller.signal.aborted) return;
      if (events.length) {
        logEvents(events);
        await refresh();
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      showProblem(error);
      await pause();
    }
  }
}

async function play(move) {
  busy = true;
  render();
  try {
    take(await call(`/v1/sessions/${session.id}/moves`, {
      method: "POST", body: { move, version: session.version },
    }));
    showProblem(null);
  } catch (error) {
    showProblem(error);
    if (error.status === 409) await refresh();
  } finally {
    busy = false;
    render();
  }
}

// Only the fields that name a move go back: the listed moves carry extra facts (points...).
function wireMove(move) {
  const wire = {};
  for (const key of ["type", "card", "cards", "capture"]) {
    if (key in move) wire[key] = move[key];
  }
  return wire;
}

// ---- the board -----------------------------------------------------------------------

function render() {
  const { view } = session;
  document.body.dataset.status = view.status;
  document.body.dataset.game = view.game;
  $("board").hidden = false;
  renderStatus(view);
  renderSeats(view);
  $("centre").replaceChildren(...(view.game === "bank" ? bankCentre(view) : basraCentre(view)));
  renderHand(view);
  renderCountdown();
}

function renderCountdown() {
  const box = $("countdown");
  const view = session && session.view;
  if (deadlineAt === null || !view || view.status === "match_over" || view.turn === null) {
    box.hidden = true;
    return;
  }
  const left = Math.max(0, Math.ceil((deadlineAt - Date.now()) / 1000));
  box.textContent = `${seatName(view.turn)}: ${left} s left to play`;
  box.dataset.seconds = String(left);
  box.hidden = false;
}

function matchResult(view) {
  if (view.game === "bank") {
    const winners = view.winners || [];
    if (!winners.length) return "Match over";
    return `Match over: ${winners.map(seatName).join(" and ")} ${
      winners.length === 1 && winners[0] === session.seat ? "win" : "won"}`;
  }
  return view.winner === null ? "Match over" : `Match over: ${sideName(view.winner, view)} won`;
}

function renderStatus(view) {
  const parts = [];
  if (view.status === "match_over") {
    parts.push(note(matchResult(view), "headline"));
  } else if (view.turn === session.seat) {
    parts.push(note(busy ? "Playing…" : "Your turn", "headline"));
  } else {
    parts.push(note(`${seatName(view.turn)} to play…`, "headline"));
  }
  const period = view.game === "bank" ? `Deal ${view.deal}` : `Round ${view.round}`;
  parts.push(note(`${period} · stock ${view.stock_size} · version ${session.version}`));
  const scores = document.createElement("table");
  scores.className = "scores";
  for (let side = 0; side < sideCount(view); side++) {
    const line = scores.insertRow();
    line.insertCell().textContent = sideName(side, view);
    line.insertCell().textContent = String(view.scores[side]);
  }
  const target = view.rules.target_score;
  parts.push(block(`Scores (to ${target})`, scores));
  $("status").replaceChildren(...parts);
}

function renderSeats(view) {
  const panels = [];
  for (let seat = 0; seat < view.seats; seat++) {
    const panel = document.createElement("div");
    panel.className = "seat" + (seat === view.turn ? " to-move" : "");
    panel.dataset.seat = String(seat);
    const name = document.createElement("h3");
    name.textContent = seatName(seat);
    panel.append(name, backs(view.hand_sizes[seat]),
      note(`${view.hand_sizes[seat]} in hand`, "count"));
    if (view.game === "bank") {
      panel.append(note(`${view.captured[seat].length} captured`, "count"));
      const personal = view.trumps.personal[seat];
      if (personal) panel.append(note(`trumps ${SUIT_SYMBOLS[personal]}`, "count"));
      const out = view.out.find((entry) => entry.seat === seat);
      if (out) panel.append(note(`out #${out.place} (${out.finish}, +${out.bonus})`, "count"));
    }
    panels.push(panel);
  }
  $("seats-row").replaceChildren(...panels);
}

function basraCentre(view) {
  const piles = document.createElement("div");
  piles.className = "piles";
  for (let side = 0; side < sideCount(view); side++) {
    const basras = view.basras[side].length;
    piles.append(note(`${sideName(side, view)}: ${view.captured[side].length} cards taken` +
      (basras ? `, ${basras} basra${basras > 1 ? "s" : ""}` : ""), "count"));
  }
  const parts = [block("Table", row(view.table)), block("Captured", piles)];
  if (view.carry) parts.push(note(`${view.carry} points carried over`));
  return parts;
}

function bankCentre(view) {
  const pile = document.createElement("div");
  pile.className = "cards bank";
  for (const entry of view.bank) {
    const card = cardElement(entry.card);
    card.title = entry.by === null ? "pack card" : `laid by ${seatName(entry.by)}`;
    pile.append(card);
  }
  if (!view.bank.length) pile.append(note("empty"));
  let target;
  if (view.target === null) {
    target = note("free lead: play any card");
  } else {
    target = document.createElement("div");
    target.className = "cards";
    target.append(cardElement(view.target.card),
      note(view.target.virtual ? "(after a capture)" : `by ${seatName(view.target.by)}`));
  }
  const trumps = Object.entries(view.trumps.common)
    .filter(([, level]) => level > 0)
    .map(([suit, level]) => `${SUIT_SYMBOLS[suit]} ${TRUMP_CLASSES[level]}`);
  const personal = session.seat === null ? null : view.trumps.personal[session.seat];
  if (personal) trumps.push(`yours: ${SUIT_SYMBOLS[personal]}`);
  return [
    block("Bank", pile),
    block("Target", target),
    block("Trumps", note(trumps.length ? trumps.join(" · ") : "none")),
  ];
}

function moveLabel(move) {
  if (move.type === undefined) {  // Basra: {card, capture}
    if (!move.capture.length) return `lay ${cardText(move.card)} on the table`;
    return `take ${cardsText(move.capture)} with ${cardText(move.card)}` +
      (move.basra ? " (basra!)" : "");
  }
  if (move.type === "lay") return `lay ${cardText(move.card)}`;
  if (move.type === "quad" || move.type === "run") return `${move.type} ${cardsText(move.cards)}`;
  return move.type;
}

function choiceButton(move) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "choice";
  button.textContent = moveLabel(move);
  button.addEventListener("click", () => play(wireMove(move)));
  return button;
}

// A hand card is clickable when a legal move plays it alone; when several moves play it
// (captures to choose from), a click lists them. Moves of several cards or none are buttons.
function renderHand(view) {
  if (session.seat === null) return;  // a spectator has no hand and nothing to play
  const moves = busy || view.turn !== session.seat ? [] : session.moves;
  const byCard = new Map();
  const others = [];
  for (const move of moves) {
    if (move.card && (move.type === undefined || move.type === "lay")) {
      if (!byCard.has(move.card)) byCard.set(move.card, []);
      byCard.get(move.card).push(move);
    } else {
      others.push(move);
    }
  }
  const hand = view.hand.map((card) => {
    const element = cardElement(card);
    const choices = byCard.get(card);
    if (choices) {
      element.classList.add("playable");
      element.dataset.moves = String(choices.length);
      element.tabIndex = 0;
      element.setAttribute("role", "button");
      const pick = () => choices.length === 1
        ? play(wireMove(choices[0]))
        : $("choices").replaceChildren(...choices.map(choiceButton));
      element.addEventListener("click", pick);
      element.addEventListener("keydown", (key) => { if (key.key === "Enter") pick(); });
    }
    return element;
  });
  $("hand").replaceChildren(...hand);
  if (!hand.length) $("hand").append(note("no cards"));
  $("choices").replaceChildren(...others.map(choiceButton));
}

// ---- events --------------------------------------------------------------------------

function describe(event) {
  const who = seatName(event.seat);
  switch (event.type) {
    case "move":
      return event.capture.length
        ? `${who} played ${cardText(event.card)} taking ${cardsText(event.capture)}`
        : `${who} laid ${cardText(event.card)} on the table`;
    case "capture":  // in Basra the move event already says what was taken
      return event.why
        ? `${who} took the bank: ${event.cards.length} cards, ${event.points} points (${event.why})`
        : null;
    case "basra":
      return `${who} made a basra with ${cardText(event.card)} (+${event.points})`;
    case "deal":
      return event.card
        ? `Deal ${event.deal}: ${seatName(event.dealer)} dealt, pack card ${cardText(event.card)}`
        : `New cards: ${event.hand_size} each, ${event.stock} left in the stock`;
    case "round_end":
      return `Round ${event.round} over: scores ${event.scores.join(" – ")}`;
    case "match_end":
      return `Match over: scores ${event.scores.join(" – ")}`;
    case "lay":
      return `${who} laid ${cardText(event.card)}`;
    case "quad":
    case "run":
      return `${who} laid a ${event.type}: ${cardsText(event.cards)}`;
    case "draw":
      return `${who} drew ${cardText(event.card)}${event.forced ? " (after a seven)" : ""}`;
    case "timeout":
      return `time ran out: the computer played for seat ${event.seat}` +
        (event.absent ? " (absent)" : "");
    case "pass":
      return `${who} passed`;
    case "turn_up":
      return `Turned up ${cardText(event.card)}`;
    case "skip":
      return `${who} misses a turn`;
    case "out":
      return `${who} went out, place ${event.place} (${event.finish}, +${event.bonus})`;
    case "deal_end":
      return `Deal ${event.deal} over: ${seatName(event.loser)} pays ${event.penalty}; ` +
        `scores ${event.scores.join(" – ")}`;
    default:
      return event.type;
  }
}

function logEvents(events) {
  const list = $("events");
  for (const event of events) {
    if (event.version <= eventsSeen && event.version !== undefined) continue;
    const text = describe(event);
    if (text === null) continue;
    const item = document.createElement("li");
    item.dataset.type = event.type;
    item.textContent = text;
    list.prepend(item);
  }
  const last = events.at(-1);
  if (last && last.version > eventsSeen) eventsSeen = last.version;
  while (list.children.length > LOG_LENGTH) list.lastElementChild.remove();
}

// ---- start ---------------------------------------------------------------------------

$("game").addEventListener("change", fillGameOptions);
$("setup").addEventListener("submit", startMatch);
setInterval(renderCountdown, TICK_MS);
if (location.hash.startsWith(WATCH)) {
  watch(location.hash.slice(WATCH.length)).catch(showProblem);
} else {
  loadGames().catch(showProblem);
}
