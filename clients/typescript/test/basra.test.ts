// The client against the real service: typed calls only (no casts, no URLs built by hand).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { gameClient, type Schemas, seatClient } from "../src/index.js";
import { type Service, startService } from "./service.js";

// A match of Basra ends well before this many moves; the bound only stops a runaway loop.
const MOST_MOVES = 3000;

let service: Service;

before(async () => {
  service = await startService();
});

after(async () => {
  await service.stop();
});

type SessionMove = Schemas["SessionResponse"]["moves"][number];

/** A hosted session's moves are those of its game; Basra's have no `type`. */
function isBasra(move: SessionMove): move is Schemas["BasraLegalMove"] {
  return !("type" in move);
}

/** The move worth most at once, then the one taking most cards. */
function greedy(moves: Schemas["BasraLegalMove"][]): Schemas["BasraMove"] {
  const [first, ...others] = moves;
  assert.ok(first, "no legal move on a turn");
  const best = others.reduce(
    (chosen, move) =>
      move.points > chosen.points ||
      (move.points === chosen.points && move.capture.length > chosen.capture.length)
        ? move
        : chosen,
    first,
  );
  return { card: best.card, capture: best.capture };
}

test("a whole stateless Basra match", async () => {
  const client = gameClient(service.url);
  const created = await client.POST("/v1/games/basra/new", { body: { seed: "typescript client" } });
  assert.ok(created.data, "new game refused");
  let state = created.data.state;
  assert.equal(state.game, "basra");
  const kinds = new Set<string>();
  for (let played = 0; state.status === "playing"; played++) {
    assert.ok(played < MOST_MOVES, "the match does not end");
    const legal = await client.POST("/v1/games/basra/legal-moves", { body: { state } });
    assert.ok(legal.data, "legal-moves refused");
    const applied = await client.POST("/v1/games/basra/apply", {
      body: { state, move: greedy(legal.data.moves) },
    });
    assert.ok(applied.data, `apply refused: ${applied.error?.detail}`);
    state = applied.data.state;
    for (const event of applied.data.events) kinds.add(event.type);
  }
  assert.equal(state.turn, null);
  assert.notEqual(state.winner, null);
  assert.ok(kinds.has("round_end") && kinds.has("match_end"));

  const score = await client.POST("/v1/games/basra/score", { body: { state } });
  assert.ok(score.data);
  assert.equal(score.data.sides.length, 2);
  const view = await client.POST("/v1/games/basra/view", { body: { state, seat: 1 } });
  assert.ok(view.data);
  assert.equal(view.data.view.seat, 1);
  assert.deepEqual(view.data.view.scores, state.scores);
});

test("an illegal move is a problem naming the field", async () => {
  const client = gameClient(service.url);
  const created = await client.POST("/v1/games/basra/new", { body: { seed: "typescript client" } });
  assert.ok(created.data);
  const { state } = created.data;
  const elsewhere = state.stock[0];
  assert.ok(elsewhere);
  const refused = await client.POST("/v1/games/basra/apply", {
    body: { state, move: { card: elsewhere } },
  });
  assert.equal(refused.response.status, 422);
  assert.ok(refused.error);
  assert.deepEqual(Object.keys(refused.error.errors ?? {}), ["move.card"]);
});

test("a hosted Basra match against a bot", async () => {
  const client = gameClient(service.url);
  const created = await client.POST("/v1/sessions", {
    body: {
      game: "basra",
      rules: { preset: "egyptian", target_score: 61 },
      seats: [{ type: "human" }, { type: "bot", level: "greedy" }],
      seed: "typescript hosted",
    },
  });
  assert.equal(created.response.status, 201);
  assert.ok(created.data);
  const token = created.data.seats.find((seat) => seat.type === "human")?.token;
  assert.ok(token, "no token for the human seat");
  const seat = seatClient(service.url, token);
  const params = { path: { session_id: created.data.id } };

  const read = await seat.GET("/v1/sessions/{session_id}", { params });
  assert.ok(read.data);
  let { version, view, moves } = read.data;
  assert.equal(read.data.seat, 0);
  for (let played = 0; view.status !== "match_over"; played++) {
    assert.ok(played < MOST_MOVES, "the match does not end");
    const answer = await seat.POST("/v1/sessions/{session_id}/moves", {
      params,
      body: { move: greedy(moves.filter(isBasra)), version },
    });
    assert.ok(answer.data, `move refused: ${answer.error?.detail}`);
    assert.ok(answer.data.version > version);
    ({ version, view, moves } = answer.data);
  }
  assert.deepEqual(moves, []);
  assert.equal(view.game, "basra");
  assert.notEqual(view.winner, null);
  assert.ok(view.round >= 1);

  const events = await seat.GET("/v1/sessions/{session_id}/events", {
    params: { ...params, query: { after: 0 } },
  });
  assert.ok(events.data);
  const versions = events.data.map((event) => event.version);
  assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
  assert.equal(versions.at(-1), version);
  assert.equal(events.data.at(-1)?.type, "match_end");

  const stale = await seat.POST("/v1/sessions/{session_id}/moves", {
    params,
    body: { move: { card: "7D" }, version: 0 },
  });
  assert.equal(stale.response.status, 409);
  assert.ok(stale.error);

  const ended = await seat.DELETE("/v1/sessions/{session_id}", { params });
  assert.equal(ended.response.status, 204);
});
