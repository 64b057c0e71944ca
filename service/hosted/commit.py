"""The one commit path: creation, a seat's move, a timeout and a change of the live record
are each computed as the facts of what happens (a frozen value), written as one
compare-and-set on the session's version, epoch and live record, and handed, once applied,
to whatever follows a session (this process's record cache, the hub that wakes its readers,
metrics, the log).

Whatever must be written with a commit (the webhook outbox's messages, a match record) is
computed from the facts in `change_of`, so it is part of the same compare-and-set.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from engine.bots import choose_move
from engine.game import Events, Game, Outcome
from service.hosted.records import BOT, HUMAN, Live, Recent, Record, Seat, write_seats
from service.hosted.schedule import Schedule
from service.store import Change, Commit, NewSession, SessionStore
from service.store import Outcome as Written

log = logging.getLogger("service.sessions")

TIMEOUT = "timeout"  # the server played for a seat whose time ran out, or that is absent


@dataclass(frozen=True, slots=True)
class Moved:
    """One version: who moved (`by` human, bot or timeout; `level` the bot's or the timeout
    level's) and its events in full, tagged with the version."""

    version: int
    seat: int
    by: str
    level: str | None
    events: Events


@dataclass(frozen=True, slots=True)
class Facts:
    """What a commit does to a session, computed once before it is written."""

    session_id: str
    game: str
    epoch: int
    before: Record | None  # None: the commit creates the session
    after: Record
    moved: tuple[Moved, ...]  # one per version it adds, in order
    to_move: int | None  # the seat to move after it (None: the match is over)
    deadline: float | None  # the turn timer of that seat, when one runs
    outcome: Outcome | None  # how the match ended, once it has

    @property
    def created(self) -> bool:
        return self.before is None

    @property
    def first_version(self) -> int:
        """The version the commit expects (and the one before its first move)."""
        return 0 if self.before is None else self.before.version

    @property
    def version(self) -> int:
        return self.after.version


Follower = Callable[[Facts], None]


def tag(events: Events, version: int) -> Events:
    return [{**event, "version": version} for event in events]


def facts_of(before: Record | None, after: Record, moved: Sequence[Moved]) -> Facts:
    return Facts(
        session_id=after.id,
        game=after.game.name,
        epoch=after.epoch,
        before=before,
        after=after,
        moved=tuple(moved),
        to_move=after.to_move,
        deadline=after.live.deadline,
        outcome=after.game.outcome(after.state),
    )


def played_on(
    before: Record | None, start: Record, state: Any, live: Live, moved: list[Moved], now: float
) -> Facts:
    """After the step's own moves on `start`: the server's moves (bots, absent seats) up to
    a present human's turn or the end, each one version; then that seat's deadline."""
    game = start.game
    version = start.version + len(moved)
    while (mover := game.to_move(state)) is not None:
        seat = start.seats[mover]
        if seat.kind == BOT:
            by, level, lead = BOT, seat.level, []
        elif mover in live.absent:
            by, level = TIMEOUT, live.timeout_level
            lead = [{"type": "timeout", "seat": mover, "absent": True}]
        else:
            break
        state, events = game.apply(state, choose_move(game, state, level, f"{start.id}/{version}"))
        version += 1
        moved.append(Moved(version, mover, by, level, tag([*lead, *events], version)))
    live = live.turn_of(mover, now)
    after = replace(start, version=version, state=state, live=live, live_text=live.dumps())
    return facts_of(before, after, moved)


def opening(
    session_id: str, game: Game, seats: tuple[Seat, ...], state: Any, live: Live, now: float
) -> Facts:
    """A new session: the server plays the bots that move first."""
    start = Record(session_id, game, 0, 0, seats, state, live, "")
    return played_on(None, start, state, live, [], now)


def seat_move(record: Record, seat: int, move: Any, now: float) -> Facts:
    """`seat` plays `move` (already checked legal), then the server plays on."""
    state, events = record.game.apply(record.state, move)
    version = record.version + 1
    live = record.live.spent(seat, now).present(seat)
    moved = [Moved(version, seat, HUMAN, None, tag(events, version))]
    return played_on(record, record, state, live, moved, now)


def timeout(record: Record, now: float) -> Facts | None:
    """The server plays for the seat to move when its time has run out; None when no timer
    is due."""
    seat = record.to_move
    if seat is None or not record.live.due(now):
        return None
    level = record.live.timeout_level
    move = choose_move(record.game, record.state, level, f"{record.id}/{record.version}")
    state, events = record.game.apply(record.state, move)
    version = record.version + 1
    events = tag([{"type": "timeout", "seat": seat}, *events], version)
    live = record.live.timed_out(seat, len(record.seats))
    return played_on(
        record, record, state, live, [Moved(version, seat, TIMEOUT, level, events)], now
    )


def live_change(record: Record, live: Live) -> Facts:
    """A new live record at the same version (a spectator token, a seat present again)."""
    return facts_of(record, replace(record, live=live, live_text=live.dumps()), ())


def change_of(facts: Facts, key: str | None = None, answer: str | None = None) -> Change:
    """The store's one write for the facts: a compare-and-set on the version, the epoch and
    the live record they were computed on."""
    before, after = facts.before, facts.after
    return Change(
        expected_version=facts.first_version,
        expected_epoch=facts.epoch,
        expected_live=None if before is None else before.live_text,
        state=after.state_text(),
        batches=tuple(orjson.dumps(moved.events).decode() for moved in facts.moved),
        live=after.live_text,
        key=key,
        answer=answer,
        new=NewSession(facts.game, write_seats(after.seats)) if before is None else None,
        notice="" if facts.deadline is None else repr(facts.deadline),
    )


class Commits:
    """Writes facts to the store; the applied ones become the latest record this process
    knows and go to the followers, in order."""

    def __init__(
        self, store: SessionStore, schedule: Schedule, recent: Recent, followers: Sequence[Follower]
    ) -> None:
        self.store = store
        self.schedule = schedule
        self.recent = recent
        self.followers = list(followers)

    def commit(self, facts: Facts, key: str | None = None, answer: str | None = None) -> Commit:
        """One compare-and-set. The deadline is planned before: a plan whose commit fails
        costs one needless look, a commit without its plan could go unfired."""
        if facts.deadline is not None:
            self.schedule.plan(facts.session_id, facts.deadline)
        commit = self.store.commit(facts.session_id, change_of(facts, key, answer))
        if commit.outcome is not Written.APPLIED:
            self.recent.drop(facts.session_id)
            log.info(
                "move not applied",
                extra={"session_id": facts.session_id, "outcome": commit.outcome.value,
                       "version": commit.version, "expected_version": facts.first_version},
            )  # fmt: skip
            return commit
        self.recent.put(facts.after)
        for follower in self.followers:
            follower(facts)
        return commit


def logged(facts: Facts) -> None:
    """A follower: one log line per commit (ids, versions, counts, levels; never a card)."""
    extra = {"session_id": facts.session_id, "version": facts.version}
    if facts.created:
        seats = [seat.level or HUMAN for seat in facts.after.seats]
        log.info("session created", extra={**extra, "game": facts.game, "seats": seats})
    elif facts.moved:
        log.info("moves applied", extra={**extra, "moves": len(facts.moved)})
    else:
        log.info("live record changed", extra=extra)
