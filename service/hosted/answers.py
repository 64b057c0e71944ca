"""What a token holder is answered: its seat's view of a record, its legal moves, the turn
timer, the seed's commitment, and the events it may see."""

import hashlib
from datetime import UTC, datetime
from typing import Any

import orjson

from engine.errors import TooLarge
from engine.game import Events, Game
from service.hosted.records import Record


def rfc3339(moment: float | None) -> str | None:
    """An epoch time as an RFC 3339 UTC timestamp to the millisecond."""
    if moment is None:
        return None
    text = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def seen_in(game: Game, seat: int | None, batch: Events) -> Events:
    """One version's events (stored in full, tagged) as `seat` may see them, still tagged."""
    if not batch:
        return batch
    version = batch[0]["version"]
    untagged = [{key: value for key, value in event.items() if key != "version"} for event in batch]
    return [{**event, "version": version} for event in game.events_for(untagged, seat)]


def moves_of(record: Record, seat: int | None) -> list[dict[str, Any]]:
    """The seat's legal moves when it is its turn, else none; none too when the game refuses
    to list them for their number (TooLarge): the seat still moves, by the rules, and the
    session must stay readable for it to do so."""
    game, state = record.game, record.state
    if game.to_move(state) != seat:
        return []
    try:
        moves = game.legal_moves(state)
    except TooLarge:
        return []
    return [game.write_move(state, move) for move in moves]


def timing(record: Record, now: float) -> dict[str, Any]:
    """The turn timer as an answer shows it."""
    live = record.live
    left = None if live.deadline is None else max(0.0, round(live.deadline - now, 3))
    return {
        "deadline": rfc3339(live.deadline),
        "time_left": left,
        "absent": list(live.absent),
        "time_banks": list(live.banks) if live.banks else None,
    }


def deal(game: Game, state: Any) -> dict[str, str]:
    """The commitment to the session's seed (its SHA-256), and the seed itself once the
    match is over: then anyone can deal the same match with it and check every card."""
    seed = game.write(state).get("seed", "")
    answer = {"commitment": hashlib.sha256(seed.encode()).hexdigest()}
    if game.outcome(state) is not None:
        answer["seed"] = seed
    return answer


def seat_answer(record: Record, seat: int | None, now: float) -> dict[str, Any]:
    """GET /v1/sessions/{id}: the session as `seat` (None: a spectator) sees it."""
    return {
        "game": record.game.name,
        "id": record.id,
        "version": record.version,
        "epoch": record.epoch,
        "seat": seat,
        "view": record.game.view(record.state, seat),
        "moves": moves_of(record, seat),
        "score": record.game.score(record.state),
        "deal": deal(record.game, record.state),
        **timing(record, now),
    }


def entity_tag(answer: dict[str, Any]) -> str:
    """A weak entity tag of a read's answer: the digest of all it says but `time_left`
    (which only counts down to `deadline`). Different readers see different views, so their
    tags differ; the digest names no token."""
    said = {key: value for key, value in answer.items() if key != "time_left"}
    return hashlib.sha256(orjson.dumps(said)).hexdigest()[:32]


def move_answer(record: Record, seat: int, batches: list[Events], now: float) -> dict[str, Any]:
    """A move's answer: the seat's view after it and the bots' replies, and their events."""
    return {
        "game": record.game.name,
        "version": record.version,
        "epoch": record.epoch,
        "view": record.game.view(record.state, seat),
        "moves": moves_of(record, seat),
        "score": record.game.score(record.state),
        "events": [event for batch in batches for event in seen_in(record.game, seat, batch)],
        **timing(record, now),
    }
