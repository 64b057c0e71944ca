// Bank through the client against the real service: typed calls only.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { gameClient, type Schemas, seatClient } from "../src/index.js";
import { type Service, startService } from "./service.js";

// Far more moves than a match to a low target takes; the bound only stops a runaway loop.
const MOST_MOVES = 5000;

let service: Service;

before(async () => {
  service = await startService();
});

after(async () => {
  await service.stop();
});

type SessionMove = Schemas["SessionResponse"]["moves"][number];

/** A hosted session's moves are those of its game; Bank's carry a `type`. */
function isBank(move: SessionMove): move is Schemas["BankLegalMove"] {
  return "type" in move;
}

/** Shed cards while possible: a quad or a run first, then a lay, then draw or pass. */
function shedding(moves: Schemas["BankLegalMove"][]): Schemas["BankMove"] {
  const order: Schemas["BankLegalMove"]["type"][] = ["quad", "run", "lay", "draw", "pass"];
  for (const type of order) {
    const move = moves.find((candidate) => candidate.type === type);
    if (move) return move;
  }
  assert.fail("no legal move on a turn");
}

test("a stateless Bank deal", async () => {
  const client = gameClient(service.url);
  const created = await client.POST("/v1/games/bank/new", {
    body: { seats: 3, seed: "typescript bank", rules: { preset: "classic", trump_mode: "single" } },
  });
  assert.ok(created.data, `new game refused: ${created.error?.detail}`);
  let state = created.data.state;
  assert.equal(state.seats, 3);
  const kinds = new Set<string>();
  for (let played = 0; !kinds.has("deal_end"); played++) {
    assert.ok(played < MOST_MOVES, "the deal does not end");
    const legal = await client.POST("/v1/games/bank/legal-moves", { body: { state } });
    assert.ok(legal.data);
    const applied = await client.POST("/v1/games/bank/apply", {
      body: { state, move: shedding(legal.data.moves) },
    });
    assert.ok(applied.data, `apply refused: ${applied.error?.detail}`);
    state = applied.data.state;
    for (const event of applied.data.events) kinds.add(event.type);
  }
  const score = await client.POST("/v1/games/bank/score", { body: { state } });
  assert.ok(score.data);
  assert.equal(score.data.sides.length, 3);
});

test("a hosted three-seat Bank game with two bots", async () => {
  const client = gameClient(service.url);
  const created = await client.POST("/v1/sessions", {
    body: {
      game: "bank",
      rules: { preset: "classic", target_score: 1 },
      seats: [{ type: "human" }, { type: "bot", level: "greedy" }, { type: "bot", level: "random" }],
      seed: "typescript bank hosted",
    },
  });
  assert.equal(created.response.status, 201, created.error?.detail);
  assert.ok(created.data);
  assert.equal(created.response.headers.get("Location"), `/v1/sessions/${created.data.id}`);
  const token = created.data.seats.find((seat) => seat.type === "human")?.token;
  assert.ok(token, "no token for the human seat");
  const seat = seatClient(service.url, token);
  const params = { path: { session_id: created.data.id } };

  const read = await seat.GET("/v1/sessions/{session_id}", { params });
  assert.ok(read.data);
  let { version, view, moves } = read.data;
  for (let played = 0; view.status !== "match_over"; played++) {
    assert.ok(played < MOST_MOVES, "the match does not end");
    if (moves.length === 0) {
      // The bots' replies stopped at the server's bound of moves a step (a random deal may
      // reach it) and go on in the background: wait for the next version, read again.
      await seat.GET("/v1/sessions/{session_id}/events", {
        params: { ...params, query: { after: version } },
      });
      const again = await seat.GET("/v1/sessions/{session_id}", { params });
      assert.ok(again.data);
      ({ version, view, moves } = again.data);
      continue;
    }
    const answer = await seat.POST("/v1/sessions/{session_id}/moves", {
      params,
      body: { move: shedding(moves.filter(isBank)), version },
    });
    assert.ok(answer.data, `move refused: ${answer.error?.detail}`);
    ({ version, view, moves } = answer.data);
  }
  assert.ok(view.game === "bank", "a Bank session shows a Bank view");
  assert.equal(view.hand_sizes.length, 3);
  assert.ok(view.winners.length >= 1);
  assert.deepEqual(moves, []);

  const events = await seat.GET("/v1/sessions/{session_id}/events", {
    params: { ...params, query: { after: 0 } },
  });
  assert.ok(events.data);
  const kinds = new Set(events.data.map((event) => event.type));
  assert.ok(kinds.has("deal_end") && kinds.has("match_end"));
  // Another seat's draw never shows its card.
  for (const event of events.data) {
    if (event.type === "draw" && event.seat !== 0) assert.equal(event.card, null);
  }
});
