"""Replaying a match record (`POST /v1/games/{game}/replay`), statelessly and for any game:
it deals `new(rules, seats, seed)` after checking the seed against the commitment, then
plays every move through the game protocol as the session did, checking that each was the
seat to move's and legal. Nothing here knows a game: a new game is replayed as it is."""

import hashlib
import time
from collections.abc import Mapping
from typing import Any

from engine.errors import GameError
from engine.game import Game, games
from engine.shapes import MAX_SEED_LENGTH
from service import requests
from service.errors import Unprocessable, invalid
from service.hosted.commit import YIELD_SECONDS
from service.stateless import PREFIX

TIMEOUT = "timeout"
# A replay yields after this many moves (a greenlet under gevent), as the server's own play
# does between two decisions: a record may be up to MAX_RECORD_BYTES, a long match's
# thousands of moves at about 12 µs each, and the worker's other requests are answered
# meanwhile rather than after it.
MOVES_BETWEEN_YIELDS = 256


def replay_paths() -> frozenset[str]:
    """Where match records are replayed, one path a game: their bodies are bounded by
    MAX_RECORD_BYTES, not MAX_BODY_BYTES, and their cost counts by their size."""
    return frozenset(f"{PREFIX}/{name}/replay" for name in games())


def replay(game: Game, record: object) -> dict[str, Any]:
    """The final state, each move's events (tagged with its version, as the session's
    events are, a timeout's lead event included) and what was verified; a 422 naming
    `record.seed` or `record.moves.<i>` for what does not check out."""
    if not isinstance(record, Mapping):
        raise invalid("record", "must be a match record (GET /v1/sessions/{id}/record)")
    if record.get("game", game.name) != game.name:
        raise invalid("record.game", f"this is the replay of {game.name} records")
    seed = record.get("seed")
    if not isinstance(seed, str):
        raise invalid("record.seed", "the record has no seed (its match is not over yet)")
    if len(seed) > MAX_SEED_LENGTH:
        # No session deals from a longer one, and the final state would carry it: a state
        # the service refuses back (state.seed).
        raise invalid("record.seed", f"must be at most {MAX_SEED_LENGTH} characters")
    if hashlib.sha256(seed.encode()).hexdigest() != record.get("commitment"):
        raise invalid("record.seed", "its SHA-256 is not the record's commitment")
    moves = record.get("moves")
    if not isinstance(moves, list):
        raise invalid("record.moves", "must be the record's list of moves")
    state = dealt(game, record.get("rules"), record.get("seats"), seed)
    events: list[list[dict[str, Any]]] = []
    for number, entry in enumerate(moves):
        if number and not number % MOVES_BETWEEN_YIELDS:
            time.sleep(YIELD_SECONDS)
        state, played = replayed(game, state, entry, f"record.moves.{number}")
        events.append(played)
    return {
        "state": game.write(state),
        "events": events,
        "verified": {"commitment": True, "moves": len(moves)},
    }


def dealt(game: Game, rules: object, seats: object, seed: str) -> Any:
    if not isinstance(rules, Mapping):
        raise invalid("record.rules", "must be the record's rules")
    if type(seats) is not int:
        raise invalid("record.seats", "must be the record's seat count")
    requests.check_preset(game, rules, "record.rules")
    try:
        return game.new(rules, seats, seed)
    except GameError as error:
        raise invalid(f"record.{requests.rules_path(error.path)}", error.reason) from error


def replayed(game: Game, state: Any, entry: object, path: str) -> tuple[Any, list[dict[str, Any]]]:
    """One move of the record played on `state`: the state after it and its events."""
    if not isinstance(entry, Mapping) or type(entry.get("version")) is not int:
        raise invalid(path, "must be a move of the record: {version, seat, move, by}")
    seat, mover = entry.get("seat"), game.to_move(state)
    if mover is None:
        raise invalid(path, "the match is over before this move")
    if seat != mover:
        raise invalid(path, f"it is seat {mover}'s turn, not seat {seat}'s")
    try:
        move = requests.read_move(game, state, entry.get("move"))
    except Unprocessable as error:
        raise invalid(path, f"not a legal move: {error.detail}") from error
    state, events = game.apply(state, move)
    lead = []
    if entry.get("by") == TIMEOUT:
        lead = [
            {"type": "timeout", "seat": seat, **({"absent": True} if entry.get("absent") else {})}
        ]
    return state, [{**event, "version": entry["version"]} for event in [*lead, *events]]
