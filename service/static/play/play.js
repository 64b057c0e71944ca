// The play page's shell: one human seat against the service's bots in a hosted session, or
// a spectator of one (opened from its watch link, /play#watch=<id>.<spectator token>).
// It knows sessions, seats, sides, scores and events in general; what a game's view looks
// like is its renderer's (basra.js, bank.js), and any other game is drawn by generic.js.
// Plain ES modules, no build step: everything it needs is served by the service itself.

import bank from "./bank.js";
import basra from "./basra.js";
import generic from "./generic.js";
import { backs, block, cardElement, isCard, note, points, words } from "./ui.js";

// Games with a renderer of their own; every other registered game gets the generic one.
const RENDERERS = { basra, bank };
const LOG_LENGTH = 60;
const RETRY_MS = 1000;
const TICK_MS = 250;
const WATCH = "#watch=";
// The seat this tab plays, kept for the tab's life so that a reload goes back to the match.
const STORED = "play-session";
// Milliseconds before each other seat's move lands; `?pace=off` or `?pace=<ms>` sets it.
const PACES = { slow: 1600, normal: 900, fast: 350, off: 0 };

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
// `?renderer=generic` draws every game with the generic renderer.
const forcedRenderer = query.get("renderer") === "generic" ? generic : null;

let catalogue = [];     // GET /v1/games
let session = null;     // the match: id, token, seats (types, null for a spectator), seat
let shown = null;       // the session answer drawn on the board
let latest = null;      // the newest answer read; drawn once the events before it landed
let queue = [];         // events still to land, oldest first
let landing = false;    // the events in the queue are landing
let hurry = false;      // the player skipped: the rest of this batch lands at once
let wake = null;        // ends the current wait between two landings early
let eventsSeen = 0;     // highest event version received
let following = null;   // AbortController of the running event stream or long poll
let deadlineAt = null;  // when the seat to move runs out of time (this clock), or null
let busy = false;       // a move is on its way: nothing is clickable
let picked = null;      // the hand card whose moves are listed, and the version it was picked at
let gone = false;       // the server no longer has the session (ended, expired): nothing to play

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

const rendererOf = (game) => forcedRenderer || RENDERERS[game] || generic;

// ---- who is who ----------------------------------------------------------------------

// Seats and sides as the view gives them: one score per side, and seat s plays for side
// s mod the number of sides (Basra's partners sit opposite: 0 and 2 against 1 and 3).
function people(view) {
  const me = session.seat;
  const sides = Array.isArray(view.scores) ? view.scores.length : view.seats;
  const sideOf = (seat) => seat % sides;
  const seatName = (seat) => {
    if (seat === me) return "You";
    const entry = session.seats && session.seats[seat];
    return entry && entry.type === "bot" ? `Seat ${seat} (${entry.level} bot)` : `Seat ${seat}`;
  };
  const members = (side) =>
    Array.from({ length: view.seats }, (_, seat) => seat).filter((seat) => sideOf(seat) === side);
  const sideName = (side) => {
    const seats = members(side);
    if (seats.length === 1) return seatName(seats[0]);
    if (me !== null && seats.includes(me)) return "Your side";
    return `Seats ${seats.join(" & ")}`;
  };
  return {
    me, sides, sideOf, seatName, sideName, members,
    /** "You draw" / "Seat 1 (greedy bot) draws". */
    verb: (seat, yours, theirs) => `${seatName(seat)} ${seat === me ? yours : theirs}`,
    scoresText: (scores) =>
      scores.map((score, side) => `${sideName(side)} ${points(score)}`).join(" · "),
    partnerOf: (seat) => me !== null && seat !== me && sides < view.seats &&
      sideOf(seat) === sideOf(me),
  };
}

// ---- setup ---------------------------------------------------------------------------

const selectedGame = () => catalogue.find((game) => game.name === $("game").value);

function fill(select, values, chosen) {
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement("option");
    option.value = option.textContent = String(value);
    option.selected = value === chosen;
    return option;
  }));
}

// One input per rule option the catalogue lists, of the kind its value is, showing the
// chosen preset's value; only what the player changes is sent on top of the preset.
function fillOptions() {
  const game = selectedGame();
  const preset = game.presets[$("preset").value];
  const inputs = [];
  for (const [name, fallback] of Object.entries(game.options)) {
    const value = name in preset ? preset[name] : fallback;
    if (Array.isArray(value) || value === null || typeof value === "object") continue;
    const label = document.createElement("label");
    label.textContent = words(name);
    const input = document.createElement("input");
    input.id = `option-${name}`;
    input.dataset.option = name;
    input.dataset.kind = typeof value;
    if (typeof value === "boolean") {
      input.type = "checkbox";
      input.checked = value;
      label.classList.add("check");
    } else if (typeof value === "number") {
      input.type = "number";
      input.value = String(value);
    } else {
      input.value = value;
      const known = [...new Set(Object.values(game.presets).map((rules) => rules[name]))];
      const list = document.createElement("datalist");
      list.id = `choices-${name}`;
      fill(list, known, null);
      input.setAttribute("list", list.id);
      label.append(list);
    }
    label.append(input);
    inputs.push(label);
  }
  $("option-fields").replaceChildren(...inputs);
}

function chosenRules() {
  const game = selectedGame();
  const preset = game.presets[$("preset").value];
  const rules = { preset: $("preset").value };
  for (const input of $("option-fields").querySelectorAll("input")) {
    const name = input.dataset.option;
    const value = input.dataset.kind === "boolean" ? input.checked
      : input.dataset.kind === "number" ? Number(input.value) : input.value;
    if (value !== (name in preset ? preset[name] : game.options[name])) rules[name] = value;
  }
  return rules;
}

function fillGameChoices() {
  const game = selectedGame();
  fill($("preset"), Object.keys(game.presets), game.default_preset);
  fill($("seats"), game.seats, game.seats[0]);
  fillOptions();
}

function introGames() {
  $("intro-games").replaceChildren(...catalogue.map((game) => {
    const item = document.createElement("li");
    const [first] = rendererOf(game.name).summary(game.name);
    item.append(note(`${words(game.name)} (${game.seats.join(" or ")} players): `, "strong"),
      note(first));
    return item;
  }));
}

async function loadGames() {
  catalogue = (await call("/v1/games")).games;
  fill($("game"), catalogue.map((game) => game.name), catalogue[0].name);
  fillGameChoices();
  introGames();
}

async function startMatch(event) {
  event.preventDefault();
  stopFollowing();
  showProblem(null);
  const level = $("level").value;
  const seats = Number($("seats").value);
  const body = {
    game: $("game").value,
    rules: chosenRules(),
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
      game: created.game,
    };
    session.watch = created.spectators[0].token;
    sessionStorage.setItem(STORED, JSON.stringify(session));
    await resume();
  } catch (error) {
    showProblem(error);
  } finally {
    $("start").disabled = false;
  }
}

// The board of `session`, the seat this tab plays, read afresh and followed.
async function resume() {
  resetBoard();
  showWatchLink(session.watch);
  $("new-match").open = false;
  await refresh();
  keepUp();
}

// A reload goes back to the tab's match; one the server no longer has leaves the form.
async function resumeStored() {
  const stored = sessionStorage.getItem(STORED);
  if (stored === null) return;
  session = JSON.parse(stored);
  try {
    await resume();
  } catch (error) {
    sessionStorage.removeItem(STORED);
    session = null;
    $("new-match").open = true;
    $("intro").hidden = false;
    $("watch").hidden = true;
    showProblem(error);
  }
}

function resetBoard() {
  shown = latest = picked = null;
  gone = false;
  queue = [];
  eventsSeen = 0;
  $("events").replaceChildren();
  $("landed").replaceChildren();
  $("intro").hidden = true;
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
  session = { id, token, seats: null, seat: null, game: null };
  resetBoard();
  await refresh();
  const { view } = shown;
  session.game = view.game;
  const box = $("spectating");
  box.textContent = `Spectator view of a ${words(view.game)} match for ${view.seats} players: ` +
    "you see the table, the scores and every move as they happen, but no hand.";
  box.hidden = false;
  keepUp();
}

// ---- keeping up ----------------------------------------------------------------------

// A session answer: its events land first (one at a time), then its view is drawn.
function take(answer) {
  if (latest && answer.version < latest.version) return;
  latest = answer;
  if ("time_left" in answer) {
    deadlineAt = answer.time_left === null ? null : Date.now() + answer.time_left * 1000;
  }
  if (answer.events) receive(answer.events);
  land();
}

async function refresh() {
  take(await call(`/v1/sessions/${session.id}`));
}

// Events already drawn on the board (the history a page opened mid-match reads) go
// straight to the log; newer ones queue up to land.
function receive(events) {
  for (const event of events) {
    if (event.version <= eventsSeen) continue;
    if (shown && event.version <= shown.version) log(event);
    else queue.push(event);
  }
  const last = events.at(-1);
  if (last && last.version > eventsSeen) eventsSeen = last.version;
}

function pace() {
  if (hurry) return 0;
  const given = query.get("pace");
  if (given !== null) return given in PACES ? PACES[given] : Math.max(0, Number(given) || 0);
  return PACES[$("pace").value];
}

function wait(ms) {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => { clearTimeout(timer); resolve(); };
  });
}

// The queue lands one event at a time: each other seat's move after a pause, a round or
// deal end stopping on its breakdown until the player goes on; then the newest view.
async function land() {
  if (landing) return;
  landing = true;
  render();
  try {
    while (queue.length) {
      const event = queue[0];
      if (Number.isInteger(event.seat) && event.seat !== session.seat && event.type !== "timeout") {
        $("skip").hidden = pace() === 0;
        await wait(pace());
      }
      queue.shift();
      log(event);
      const ending = shown && rendererOf(shown.view.game).ending(event, people(shown.view));
      if (ending) await goOn(ending);
    }
  } finally {
    landing = hurry = false;
    wake = null;
    $("skip").hidden = true;
  }
  // A newer answer is drawn only once every event before it has landed: a read can be
  // ahead of the stream (the server plays on between two reads), and drawing it early
  // would log the events in between without their pauses and breakdowns.
  if (latest && latest !== shown && (!shown || latest.version <= eventsSeen)) shown = latest;
  render();
}

function skip() {
  hurry = true;
  if (wake) wake();
}

function goOn({ title, table, lines }) {
  $("ending-title").textContent = title;
  $("ending-table").replaceChildren(table);
  $("ending-lines").replaceChildren(...lines.map((line) => note(line, "line")));
  const dialog = $("ending");
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
}

function stopFollowing() {
  if (following) following.abort();
  following = null;
}

// The server ended the session (deleted, expired): the board stays as it was, with nothing
// to play, and the player may start a new match. True: nothing more to follow.
function ended() {
  gone = true;
  sessionStorage.removeItem(STORED);
  showProblem(new Error("This match is no longer on the server (it was ended or expired)" +
    (session.seat === null ? "." : ": start a new one.")));
  $("new-match").open = true;
  render();
  return true;
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

// Followed until the match is over and every event up to its end has arrived.
function matchGoesOn(controller) {
  return !controller.signal.aborted &&
    (latest.view.status !== "match_over" || eventsSeen < latest.version);
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
    if (response.status === 404) return ended();
    if (!response.ok || !response.body) {
      if (!opened) return false;
      await pause();
      continue;
    }
    opened = true;
    document.body.dataset.follow = "stream";
    try {
      if (await readStream(response.body, controller)) return ended();
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
      let arrived = false;
      for (const line of lines) {
        if (line === "") {
          if (message.event === "end") return true;
          if (message.event === "events" && message.data.length) {
            receive(JSON.parse(message.data.join("\n")));
            // A version whose events this token may not see still counts for resuming.
            if (Number.isInteger(message.id)) eventsSeen = Math.max(eventsSeen, message.id);
            arrived = true;
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
      // One read of the session for all the messages that came in together: a stream
      // resumed mid-match (a reload, a watch link) replays every version at once, and a
      // read each went over the token's rate limit.
      if (arrived) {
        await refresh();
        if (!matchGoesOn(controller)) return false;
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
        receive(events);
        await refresh();
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error.status === 404) {
        ended();
        return;
      }
      showProblem(error);
      await pause();
    }
  }
}

// What a player is told when the server refused a move on a board that had changed.
const STALE = new Error("The table changed before your move arrived (a move came first, " +
  "or the timer played for you): it is shown as it is now.");

// A legal move goes back as the server listed it.
async function play(move) {
  busy = true;
  render();
  try {
    take(await call(`/v1/sessions/${session.id}/moves`, {
      method: "POST", body: { move, version: shown.version },
    }));
    showProblem(null);
  } catch (error) {
    if (error.status === 404) ended();
    else showProblem(error.body.type === "/problems/stale-version" ? STALE : error);
    if (error.status === 409) await refresh();
  } finally {
    busy = false;
    render();
  }
}

// ---- the board -----------------------------------------------------------------------

function render() {
  if (!shown) return;
  const { view } = shown;
  const renderer = rendererOf(view.game);
  const who = people(view);
  Object.assign(document.body.dataset, {
    status: view.status, game: view.game, version: String(shown.version),
    renderer: renderer.name, landing: String(landing),
  });
  $("board").hidden = false;
  renderStatus(view, renderer, who);
  renderScores(view, renderer, who);
  renderSeats(view, renderer, who);
  $("centre").replaceChildren(...renderer.centre(view, who));
  renderHand(view, renderer);
  renderCountdown();
}

function renderCountdown() {
  const box = $("countdown");
  const view = latest && latest.view;
  if (gone || deadlineAt === null || !view || view.status === "match_over" || view.turn === null) {
    box.hidden = true;
    return;
  }
  const left = Math.max(0, Math.ceil((deadlineAt - Date.now()) / 1000));
  box.textContent = `${people(view).seatName(view.turn)}: ${left} s left to play`;
  box.dataset.seconds = String(left);
  box.hidden = false;
}

function matchResult(view, who) {
  const winners = Array.isArray(view.winners) && view.winners.length ? view.winners : null;
  if (winners) {
    if (winners.length === 1) return `Match over: ${who.verb(winners[0], "win", "wins")}`;
    return `Match over: ${winners.map(who.seatName).join(" and ")} share the win`;
  }
  if (Number.isInteger(view.winner)) {
    // "You win", "Seats 1 & 3 win"; "Your side wins", "Seat 1 (greedy bot) wins".
    const seats = who.members(view.winner);
    const plural = seats.length === 1 ? seats[0] === who.me : !seats.includes(who.me);
    return `Match over: ${who.sideName(view.winner)} ${plural ? "win" : "wins"}`;
  }
  return "Match over";
}

function renderStatus(view, renderer, who) {
  const parts = [];
  const mine = view.turn === session.seat && session.seat !== null;
  if (gone) {
    parts.push(note("Match ended on the server", "headline"));
  } else if (view.status === "match_over") {
    parts.push(note(matchResult(view, who), "headline"));
  } else if (landing) {
    parts.push(note(session.seat === null ? "Moves landing…" : "The other players are playing…",
      "headline"));
  } else if (mine) {
    parts.push(note(busy ? "Playing…" : "Your turn", "headline"));
    parts.push(note("Click a highlighted card of your hand, or a button under it.", "hint"));
  } else {
    parts.push(note(`${who.seatName(view.turn)} to play…`, "headline"));
  }
  const facts = [renderer.period(view)];
  if (Number.isInteger(view.stock_size)) facts.push(`${view.stock_size} cards in the stock`);
  if (view.rules && Number.isInteger(view.rules.target_score)) {
    facts.push(`first to ${view.rules.target_score} wins`);
  }
  parts.push(note(facts.filter(Boolean).join(" · ")));
  $("status").replaceChildren(...parts);
}

// The score as the game counts it now: what each side has banked, plus what the round or
// deal in play has earned it so far (the server's `score`); once the match is over, the
// banked scores are final.
function renderScores(view, renderer, who) {
  const table = document.createElement("table");
  table.className = "scores";
  const live = view.status !== "match_over" && Array.isArray(shown.score);
  for (let side = 0; side < who.sides; side++) {
    const banked = view.scores[side];
    const now = live ? Number(shown.score[side].total) || 0 : 0;
    const line = table.insertRow();
    line.dataset.side = String(side);
    line.insertCell().textContent = who.sideName(side);
    const total = line.insertCell();
    total.className = "total";
    total.textContent = points(banked + now);
    line.insertCell().textContent = live ? `${points(banked)} + ${points(now)}` : "";
  }
  $("scoreboard").replaceChildren(block(live ? `Score (${renderer.scoreNote()})` : "Score", table));
}

function renderSeats(view, renderer, who) {
  const panels = [];
  for (let seat = 0; seat < view.seats; seat++) {
    const panel = document.createElement("div");
    panel.className = "seat" + (seat === view.turn ? " to-move" : "");
    panel.dataset.seat = String(seat);
    const name = document.createElement("h3");
    name.textContent = who.seatName(seat);
    panel.append(name);
    if (who.partnerOf(seat)) panel.append(note("your partner", "count partner"));
    const held = view.hand_sizes[seat];
    if (seat === session.seat) panel.append(note(`${held} in your hand, below`, "count"));
    else panel.append(backs(held), note(`${held} in hand`, "count"));
    panel.append(...renderer.seatLines(view, seat, who));
    panels.push(panel);
  }
  $("seats-row").replaceChildren(...panels);
}

function choiceButton(move, renderer) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "choice";
  button.textContent = renderer.moveLabel(move);
  button.addEventListener("click", () => play(move));
  return button;
}

// A hand card is clickable when a legal move plays it alone; when several moves play it
// (captures to choose from), a click picks it and lists them. Moves of several cards or
// none are buttons. A picked card stays picked until a move is played: a read of the same
// version (the stream catching up) draws the board again and must not drop the list.
function renderHand(view, renderer) {
  if (session.seat === null) return;  // a spectator has no hand and nothing to play
  const ready = !gone && !busy && !landing && shown === latest && view.turn === session.seat;
  const moves = ready ? shown.moves : [];
  const byCard = new Map();
  const others = [];
  for (const move of moves) {
    const card = renderer.playsCard(move);
    if (card && view.hand.includes(card)) {
      if (!byCard.has(card)) byCard.set(card, []);
      byCard.get(card).push(move);
    } else {
      others.push(move);
    }
  }
  const chosen = picked && picked.version === shown.version && byCard.has(picked.card)
    ? picked.card : null;
  const hand = view.hand.map((card) => {
    const element = cardElement(card);
    const choices = byCard.get(card);
    if (choices) {
      element.classList.add("playable");
      if (choices.length > 1) element.setAttribute("aria-pressed", String(card === chosen));
      element.classList.toggle("picked", card === chosen);
      element.dataset.moves = String(choices.length);
      element.tabIndex = 0;
      element.setAttribute("role", "button");
      const pick = () => {
        if (choices.length === 1) return play(choices[0]);
        picked = { card, version: shown.version };
        render();
        // The hand was drawn anew, so the card's focus is gone: it goes to the first move.
        $("choices").firstElementChild.focus();
      };
      element.addEventListener("click", pick);
      // A button's keys: Enter, and Space (without scrolling the page).
      element.addEventListener("keydown", (key) => {
        if (key.key !== "Enter" && key.key !== " ") return;
        key.preventDefault();
        pick();
      });
    }
    return element;
  });
  $("hand").replaceChildren(...hand);
  if (!hand.length) $("hand").append(note("no cards"));
  const listed = chosen ? byCard.get(chosen) : others;
  $("choices").replaceChildren(...listed.map((move) => choiceButton(move, renderer)));
}

// ---- events --------------------------------------------------------------------------

// A timeout is the session's own event (the server played for a seat); every other event
// is the game's, in its renderer's words.
function describe(event, who, renderer) {
  if (event.type === "timeout") {
    const away = event.absent ? " (away, so at once)" : "";
    return event.seat === who.me
      ? `Time ran out: the computer played for you${away}`
      : `Time ran out for ${who.seatName(event.seat)}: the computer played for them${away}`;
  }
  return renderer.describe(event, who);
}

// Writes one event to the log and, when it is a seat's, shows it as the last play landed.
function log(event) {
  const view = (shown || latest).view;
  const who = people(view);
  const text = describe(event, who, rendererOf(view.game));
  if (text === null) return;
  const item = document.createElement("li");
  item.dataset.type = event.type;
  item.dataset.version = String(event.version);
  item.dataset.landed = String(Math.round(performance.now()));
  item.textContent = text;
  const list = $("events");
  list.prepend(item);
  while (list.children.length > LOG_LENGTH) list.lastElementChild.remove();
  const played = ["card", "cards", "capture"].flatMap((key) => [event[key]].flat()).filter(isCard);
  $("landed").replaceChildren(note(text, "landed-text"),
    ...played.slice(0, 8).map((card) => cardElement(card, { small: true })));
  for (const panel of document.querySelectorAll(".seat")) {
    panel.classList.toggle("landed", Number(panel.dataset.seat) === event.seat);
  }
}

// ---- help ----------------------------------------------------------------------------

function openHelp() {
  const game = (shown && shown.view.game) || $("game").value;
  $("help-title").textContent = `How to play ${words(game)}`;
  $("help-text").replaceChildren(...rendererOf(game).summary(game).map((text) => {
    const paragraph = document.createElement("p");
    paragraph.textContent = text;
    return paragraph;
  }));
  $("rules-link").href = `/play/rules/${game}`;
  $("help").showModal();
}

// ---- start ---------------------------------------------------------------------------

$("game").addEventListener("change", fillGameChoices);
$("preset").addEventListener("change", fillOptions);
$("setup").addEventListener("submit", startMatch);
$("skip").addEventListener("click", skip);
$("go-on").addEventListener("click", () => $("ending").close());
$("help-open").addEventListener("click", openHelp);
document.querySelector("[data-help]").addEventListener("click", openHelp);
$("help-close").addEventListener("click", () => $("help").close());
setInterval(renderCountdown, TICK_MS);
if (query.get("pace") !== null) $("pace").closest("label").hidden = true;
if (location.hash.startsWith(WATCH)) {
  watch(location.hash.slice(WATCH.length)).catch(showProblem);
} else {
  loadGames().then(resumeStored).catch(showProblem);
}
