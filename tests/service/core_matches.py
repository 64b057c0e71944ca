"""Whole matches played on the hosted core (no HTTP), humans picking at random, their time
running out now and then on a test's clock; and what a finished match's record must replay
to."""

import random
from collections.abc import Sequence
from typing import Any

import orjson

from engine.game import get_game
from service.hosted.sessions import Sessions
from service.replay import replay

SHORT = {"basra": {"preset": "levantine", "target_score": 1}, "bank": {"target_score": 1}}
MOST_READS = 5000  # a bound on a match that never ends, not a timing


def bearer(token: str) -> str:
    return f"Bearer {token}"


def play_out(
    sessions: Sessions,
    game: str,
    seed: str,
    picks: random.Random,
    seats: Sequence[str | None] = (None, None),
    rules: dict[str, Any] | None = None,
    clock: Any = None,
    lapse: float = 0.0,
    **extra: Any,
) -> dict[str, Any]:
    """A match played to its end: the creation's answer and its seats' tokens. `seats` has
    one entry a seat: None for a human, else a bot's level. A human's move is picked by
    `picks` among its legal ones; with `clock` (the core's, and `turn_seconds` in `extra`)
    the human lets its time run out instead as often as `lapse` says, and the next read
    fires the timeout. The seat to move is read as a spectator sees it, so that a seat's
    token is used only for its own moves: an absent seat stays absent until it moves."""
    kinds = [{"type": "human"} if level is None else {"type": "bot", "level": level}
             for level in seats]  # fmt: skip
    body = {"game": game, "rules": rules or SHORT[game], "seats": kinds, "seed": seed,
            "spectators": 1, **extra}  # fmt: skip
    created = sessions.create(body, None)
    tokens = {entry["seat"]: entry["token"] for entry in created["seats"] if "token" in entry}
    watcher = bearer(created["spectators"][0]["token"])
    for _ in range(MOST_READS):
        seen = sessions.read(created["id"], watcher)
        mover = seen["view"]["turn"]
        if mover is None:
            return {**created, "tokens": tokens}
        if mover not in tokens or mover in seen["absent"]:
            continue  # the server's play, left over from a step: the next read resumes it
        if clock is not None and picks.random() < lapse:
            clock.now += extra["turn_seconds"] + 1
            continue
        answer = sessions.read(created["id"], bearer(tokens[mover]))
        move = picks.choice(answer["moves"])
        sessions.move(
            created["id"], bearer(tokens[mover]),
            lambda a=answer, m=move: {"move": m, "version": a["version"]}, None,
        )  # fmt: skip
    raise AssertionError("the match did not end")


def check_replay(sessions: Sessions, match: dict[str, Any], record: dict[str, Any]) -> None:
    """The record, replayed, ends in a state whose view for each seat and for a spectator
    is the session's last one, through the session's own events."""
    game = get_game(record["game"])
    replayed = replay(game, orjson.loads(orjson.dumps(record)))
    assert replayed["verified"] == {"commitment": True, "moves": len(record["moves"])}
    state = game.read(replayed["state"])
    for seat, held in match["tokens"].items():
        assert game.view(state, seat) == sessions.read(match["id"], bearer(held))["view"]
    spectator = bearer(match["spectators"][0]["token"])
    assert game.view(state, None) == sessions.read(match["id"], spectator)["view"]
    stored = [orjson.loads(batch) for batch in sessions.store.events(match["id"], 0)]
    assert replayed["events"] == stored
    assert [entry["version"] for entry in record["moves"]] == list(range(1, len(stored) + 1))
