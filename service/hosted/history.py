"""Match records: what anyone needs to rebuild a whole match and check its deal.

A session's record is written by the commit path with every commit that changes it (the
same compare-and-set): its head at creation, then one entry per move, and, when the match
ends, the head again with what is known only then (the seed, the outcome, the spectator
tokens' digests). The store keeps a finished match's record for RECORD_TTL_SECONDS after the
end, even once the session itself is gone. Nothing in it is hidden before the end: the moves
are public (a Bank draw names no card) and the seed comes with the end.
"""

import hashlib
from typing import Any

from service.hosted.records import BOT, Record

FORMAT = "cards-record/1"
ACCESS = "access"  # the head's digests of who may read it: never part of an answer


def seed_of(record: Record) -> str:
    return record.game.write(record.state).get("seed", "")


def status_of(record: Record) -> str:
    return "playing" if record.game.outcome(record.state) is None else "match_over"


def head(record: Record) -> dict[str, Any]:
    """The record's head as the session stands: the match's settings, and once it is over
    its seed and outcome."""
    game, state = record.game, record.state
    outcome = game.outcome(state)
    return {
        "format": FORMAT,
        "game": game.name,
        "rules": game.write(state)["rules"],
        "seats": len(record.seats),
        "players": [
            {"seat": seat, "type": kind.kind, **({"level": kind.level} if kind.kind == BOT else {})}
            for seat, kind in enumerate(record.seats)
        ],
        "commitment": hashlib.sha256(seed_of(record).encode()).hexdigest(),
        "seed": None if outcome is None else seed_of(record),
        "status": status_of(record),
        "outcome": None
        if outcome is None
        else {"winners": list(outcome.winners), "scores": list(outcome.points)},
        ACCESS: {
            "tokens": [seat.token for seat in record.seats if seat.token],
            "spectators": list(record.live.spectators),
            "owner": record.meta.owner,
        },
    }


def entry(moved: Any) -> dict[str, Any]:
    """One move of the record (`moved`: a commit.Moved): the version it made, who moved, the
    move as POST …/moves takes it and who played it; `absent` when the server played for an
    absent seat (its events then begin with a timeout event saying so)."""
    written = {"version": moved.version, "seat": moved.seat, "move": moved.move, "by": moved.by}
    if moved.events and moved.events[0].get("absent"):
        written["absent"] = True
    return written


def answer(items: list[dict[str, Any]], live: Record | None) -> dict[str, Any]:
    """The record as answered: its head and its moves. While the session lives, both as of
    the version read: the record, read after the session, may hold moves committed since,
    which wait for the next read (else a final move could stand beside a head that says
    the match is playing)."""
    if live is None:
        kept, moves = items[0], items[1:]
    else:
        kept, moves = head(live), [move for move in items[1:] if move["version"] <= live.version]
    return {**{k: v for k, v in kept.items() if k != ACCESS}, "moves": moves}
