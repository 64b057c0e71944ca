"""The one commit path: creation, a seat's move, a timeout and a change of the live record
are each computed as the facts of what happens (a frozen value), written as one
compare-and-set on the session's version, epoch and live record, and handed, once applied,
to whatever follows a session (this process's record cache, the hub that wakes its readers,
metrics, the log).

Whatever must be written with a commit (the webhook outbox's messages, a match record) is
computed from the facts in `change_of`, so it is part of the same compare-and-set.
"""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from engine.bots import choose_move
from engine.errors import TooLarge
from engine.game import Events, Game, MatchResult
from service.hosted import history
from service.hosted.deliveries import Deliveries
from service.hosted.records import BOT, HUMAN, Live, Meta, Recent, Record, Seat, write_seats
from service.hosted.webhooks import messages_of
from service.store import Change, Commit, NewSession, Schedule, SessionStore
from service.store import Outcome as Written

log = logging.getLogger("service.sessions")

TIMEOUT = "timeout"  # the server played for a seat whose time ran out, or that is absent
# The server's own play (bots, absent seats) in one step — one request or one timer firing:
# at most this many moves, of which at most EXPERT_MOVES_PER_STEP expert searches (tens of
# ms each; the others take well under one); the rest is committed and resumed in the
# background, so no session ever holds a worker for long. Counts, not a time, so that the
# same moves give the same steps under any load. Enough that an answer holds every bot
# reply up to the next human turn, as the contract has it: in Bank with three or four
# seats, once the human is out, the others play the deal on (65 server moves at most in a
# row over 40 four- and three-seat matches of greedy bots). Between two decisions the step
# yields (a greenlet under gevent), so /livez and other requests keep being answered.
SERVER_MOVES_PER_STEP = 256
EXPERT_MOVES_PER_STEP = 64
YIELD_SECONDS = 1e-6  # a real sleep, not 0: gevent then polls its sockets as well
Clock = Callable[[], float]
NO_META = Meta()  # seconds since the epoch (deadlines are wall-clock times)


@dataclass(frozen=True, slots=True)
class Moved:
    """One version: who moved (`by` human, bot or timeout; `level` the bot's or the timeout
    level's) and its events in full, tagged with the version."""

    version: int
    seat: int
    by: str
    level: str | None
    events: Events
    move: dict[str, Any]  # the move as written on the wire (public: a draw names no card)


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
    due_at: float | None  # when the session next needs the server (its timer, resumed play)
    outcome: MatchResult | None  # how the match ended, once it has

    @property
    def created(self) -> bool:
        return self.before is None

    @property
    def ended(self) -> bool:
        """Whether this commit ends the match."""
        return self.outcome is not None and (
            self.before is None or self.before.game.outcome(self.before.state) is None
        )

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
        due_at=after.live.due_at,
        outcome=after.game.outcome(after.state),
    )


def server_move(game: Game, state: Any, level: str, seed: str) -> Any | None:
    """The move the server plays for the seat to move (its bot, or `level` for a seat whose
    time ran out or that is absent); None when the game refuses to list the moves to choose
    from (TooLarge: Basra's any_family on a crowded table). No computer player can move
    there, so the server does not: raising would refuse the human move that led there, and
    every read and timer scan that tried again."""
    try:
        return choose_move(game, state, level, seed)
    except TooLarge:
        return None


def cannot_play(record: Record, seat: int, version: int) -> None:
    log.warning(
        "the server cannot play for this seat: the game refuses to list its moves",
        extra={"session_id": record.id, "seat": seat, "version": version},
    )


def played_on(
    before: Record | None, start: Record, state: Any, live: Live, moved: list[Moved], clock: Clock
) -> Facts:
    """After the step's own moves on `start`: the server's moves (bots, absent seats), each
    one version, up to a present human's turn, the end, or the step's bound; then that
    seat's deadline if timed, or, with server play left over, a resume at once. Where the
    server cannot choose a move (`server_move`), its play stops and no timer runs: a human
    seat moves itself, with its token; a bot's seat waits."""
    game = start.game
    version = start.version + len(moved)
    played = searched = 0
    while (mover := game.to_move(state)) is not None:
        seat = start.seats[mover]
        if seat.kind == HUMAN and mover not in live.absent:
            live = live.turn_of(mover, clock())
            break
        if seat.kind == BOT:
            by, level, lead = BOT, seat.level, []
        else:
            by, level = TIMEOUT, live.timeout_level
            lead = [{"type": "timeout", "seat": mover, "absent": True}]
        if played >= SERVER_MOVES_PER_STEP or (
            level == "expert" and searched >= EXPERT_MOVES_PER_STEP
        ):
            live = live.resumed(clock())
            break
        if played:
            time.sleep(YIELD_SECONDS)
        searched += level == "expert"
        move = server_move(game, state, level, f"{start.id}/{version}")
        if move is None:
            cannot_play(start, mover, version)
            live = live.turn_of(None, clock())
            break
        written = game.write_move(state, move)
        state, events = game.apply(state, move)
        version += 1
        played += 1
        moved.append(Moved(version, mover, by, level, tag([*lead, *events], version), written))
    else:
        live = live.turn_of(None, clock())
    # An unchanged live record keeps its stored text: the compare-and-set names that text.
    live_text = start.live_text if live is start.live else live.dumps()
    after = replace(start, version=version, state=state, live=live, live_text=live_text)
    return facts_of(before, after, moved)


def opening(
    session_id: str,
    game: Game,
    seats: tuple[Seat, ...],
    state: Any,
    live: Live,
    clock: Clock,
    meta: Meta = NO_META,
) -> Facts:
    """A new session: the server plays the bots that move first."""
    start = Record(session_id, game, 0, 0, seats, state, live, live.dumps(), meta)
    return played_on(None, start, state, live, [], clock)


def seat_move(record: Record, seat: int, move: Any, clock: Clock) -> Facts:
    """`seat` plays `move` (already checked legal), then the server plays on."""
    written = record.game.write_move(record.state, move)
    state, events = record.game.apply(record.state, move)
    version = record.version + 1
    live = record.live.spent(seat, clock()).present(seat)
    moved = [Moved(version, seat, HUMAN, None, tag(events, version), written)]
    return played_on(record, record, state, live, moved, clock)


def due_play(record: Record, clock: Clock) -> Facts | None:
    """The server's play that is due: the next step of server play left over, or a move for
    the seat to move whose time has run out; None when nothing is due."""
    seat, live = record.to_move, record.live
    if seat is None or not live.due(clock()):
        return None
    if live.resume_at is not None:
        return played_on(record, record, record.state, live, [], clock)
    level = live.timeout_level
    move = server_move(record.game, record.state, level, f"{record.id}/{record.version}")
    if move is None:
        # No move to play for the seat: its timer stops (so it fires no more), its turn goes on.
        cannot_play(record, seat, record.version)
        return live_change(record, live.turn_of(None, clock()))
    written = record.game.write_move(record.state, move)
    state, events = record.game.apply(record.state, move)
    version = record.version + 1
    events = tag([{"type": "timeout", "seat": seat}, *events], version)
    moved = [Moved(version, seat, TIMEOUT, level, events, written)]
    return played_on(record, record, state, live.timed_out(seat, len(record.seats)), moved, clock)


def live_change(record: Record, live: Live) -> Facts:
    """A new live record at the same version (a spectator token, a seat present again)."""
    return facts_of(record, replace(record, live=live, live_text=live.dumps()), ())


def change_of(facts: Facts, at: float, key: str | None = None, answer: str | None = None) -> Change:
    """The store's one write for the facts, committed at `at`: a compare-and-set on the
    version, the epoch and the live record they were computed on."""
    before, after = facts.before, facts.after
    entries = [history.entry(moved) for moved in facts.moved]
    # The record's head again when the match ends, and when a finished match's spectators
    # change: a token added after the end reads the record once the session is gone too.
    final = facts.ended or (
        facts.outcome is not None
        and before is not None
        and before.live.spectators != after.live.spectators
    )
    # The live record as it was is not sent again (a move without timers leaves it so).
    unchanged_live = before is not None and after.live_text == before.live_text
    new = None
    if before is None:
        entries.insert(0, history.head(after))
        meta = after.meta
        new = NewSession(
            facts.game, write_seats(after.seats), meta.dumps(), meta.owner, meta.created_at
        )
    return Change(
        expected_version=facts.first_version,
        expected_epoch=facts.epoch,
        expected_live=None if before is None else before.live_text,
        state=after.state_text(),
        batches=tuple(orjson.dumps(moved.events).decode() for moved in facts.moved),
        live=None if unchanged_live else after.live_text,
        key=key,
        answer=answer,
        new=new,
        notice="" if facts.due_at is None else repr(facts.due_at),
        at=at,
        record=tuple(orjson.dumps(entry).decode() for entry in entries),
        messages=tuple(orjson.dumps(message).decode() for message in messages_of(facts, at)),
        ended=orjson.dumps(history.head(after)).decode() if final else "",
    )


class Commits:
    """Writes facts to the store; the applied ones become the latest record this process
    knows and go to the followers, in order."""

    def __init__(
        self,
        store: SessionStore,
        schedule: Schedule,
        recent: Recent,
        followers: Sequence[Follower],
        clock: Clock = time.time,
        deliveries: Deliveries | None = None,
    ) -> None:
        """`deliveries` deliver webhook messages: a commit with messages plans its session
        there as it is written, and hands it to them once it is when the plan is its
        worker's claim (not when the outbox held messages: their deliverer goes on to
        these)."""
        self.clock = clock
        self.deliveries = deliveries
        self.store = store
        self.schedule = schedule
        self.recent = recent
        self.followers = list(followers)

    def commit(self, facts: Facts, key: str | None = None, answer: str | None = None) -> Commit:
        """One compare-and-set. What is due (a deadline, resumed play) is planned before: a
        plan whose commit fails costs one needless look, a commit without its plan could go
        unfired."""
        if facts.due_at is not None:
            self.schedule.plan(facts.session_id, facts.due_at)
        change = change_of(facts, self.clock(), key, answer)
        mark = None
        if change.messages and self.deliveries is not None:
            mark = self.deliveries.claim_of(change.at)
            change = replace(change, plan=mark)
        commit = self.store.commit(facts.session_id, change)
        if commit.outcome is not Written.APPLIED:
            if facts.due_at is not None:
                # The plan above replaced the one of the session as it is, and may be later
                # (a late move checked on a stale copy: the next timeout fired that much
                # late). A look now plans the session's own deadline again; only on this
                # path, never on an applied move's.
                self.schedule.plan(facts.session_id, self.clock())
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
        if mark is not None and self.deliveries is not None and commit.claimed:
            messages = change.messages if commit.heads_outbox else None
            self.deliveries.committed(facts.session_id, mark, messages)
        return commit


def logged(facts: Facts) -> None:
    """A follower: one log line per commit (ids, versions, counts, levels; never a card).
    A session's life is told at INFO (created, its match over, its live record changed);
    every other commit of moves at DEBUG. At INFO, the default, a line for every move cost
    a hosted move a sixth of its CPU under gunicorn, and each request has its access line
    already (docs/benchmarks.md)."""
    extra = {"session_id": facts.session_id, "version": facts.version}
    if facts.created:
        seats = [seat.level or HUMAN for seat in facts.after.seats]
        log.info("session created", extra={**extra, "game": facts.game, "seats": seats})
    elif facts.ended:
        log.info("match over", extra={**extra, "moves": len(facts.moved)})
    elif facts.moved:
        log.debug("moves applied", extra={**extra, "moves": len(facts.moved)})
    else:
        log.info("live record changed", extra=extra)
