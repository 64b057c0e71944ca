"""Hosted sessions: a game kept by the server, played by seat-token holders and bots.

Checks on a move run in the contract's order: session (404), token (401), version (409),
turn (403), legality (422). A move and the bot replies it triggers, up to the next human
turn, are one compare-and-set on the session's version, so concurrent movers and retries
can never lose or double-apply a move. Each seat only ever sees game.view of its own seat;
every event is stored in full, tagged with its version, and each reader gets them through
game.events_for its own seat (a Bank seat never sees another seat's drawn card).

Live play: a spectator token reads as seat None (public information only) and never moves.
With a turn timer, every commit that leaves a human seat to move sets its deadline in the
session's live record and plans a look at it in the schedule; a due timer is fired by the
scanner of any process or by any reader, as a move by the session's timeout level committed
with the same compare-and-set as a human's, so of a human move and a timeout for one version
exactly one applies. Absent seats' turns are played at once, like bots'. Readers that wait
(the long poll, the event stream) wait on the live hub, woken by commits.
"""

import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import orjson
from prometheus_client import Gauge

from engine.bots import choose_move
from engine.game import Events, Game, get_game
from service import requests
from service.errors import Problem, Unprocessable, invalid, json_paths
from service.live import (
    DEFAULT_TIMEOUT_LEVEL,
    MAX_SPECTATORS,
    Clock,
    Hub,
    Live,
    MemorySchedule,
    Schedule,
    rfc3339,
)
from service.metrics import LONG_POLLS, STREAMS
from service.schemas.envelopes import SessionMoveRequest
from service.store import Change, Outcome, Session, SessionStore, StoreUnavailable

log = logging.getLogger("service.sessions")

# Tokens and ids avoid the suit letters C, D, H and S in either case, so no card name can
# ever appear inside one: a byte scan of what a seat receives finds cards only as cards.
ALPHABET = "0123456789abefgijklmnopqrtuvwxyz"
TOKEN_LENGTH = 52  # 260 bits
ID_LENGTH = 26  # 130 bits
ISSUED_ID = re.compile(f"[{ALPHABET}]{{{ID_LENGTH}}}")
MAX_KEY_LENGTH = 255
AUTH_SCHEME = "bearer"
MOVE_REQUEST = SessionMoveRequest()  # built once: building a schema costs more than a load
# A claim on a due timer lasts this long: a process that dies holding one delays it no more.
TIMER_LEASE_SECONDS = 5.0
STREAM_PING_SECONDS = 10.0
# The server's own play (bots, absent seats) in one step — one request or one timer firing:
# at most this many moves; the rest is committed and resumed in the background, so no
# session ever holds a worker for long. A count, not a time, so that the same moves give the
# same steps under any load. Between two decisions the step yields (a greenlet under
# gevent), so /livez and other requests keep being answered.
SERVER_MOVES_PER_STEP = 16
YIELD_SECONDS = 1e-6  # a real sleep, not 0: gevent then polls its sockets as well


FAIR_DEAL = (
    "a session with two or more human seats is dealt from the server's secret seed, so that "
    "no player can know another's cards; leave seed out (the answer commits to the seed, "
    "which is revealed when the match ends)"
)


class Unauthorized(Problem):
    def __init__(self, detail: str, error: str | None = None) -> None:
        challenge = 'Bearer realm="cards"' + (f', error="{error}"' if error else "")
        super().__init__(401, detail, headers={"WWW-Authenticate": challenge})


class StaleVersion(Problem):
    """A 409 that also carries the session's current version."""

    def __init__(self, version: int, detail: str) -> None:
        super().__init__(409, detail)
        self.version = version


class EpochChanged(StaleVersion):
    """The store's epoch of the session moved on since its state was read."""


class LiveChanged(Exception):
    """A commit found the session's live record changed at the same version (a spectator
    token added, a seat present again): the move is checked again on the session as stored."""


class SessionUnavailable(Problem):
    def __init__(self, detail: str, retry_after: int = 1) -> None:
        super().__init__(503, detail, headers={"Retry-After": str(retry_after)})


def random_text(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(*parts: object) -> str:
    """The digest of a request, to tell a retry from a different request under one key."""
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def not_found(session_id: str) -> Problem:
    return Problem(404, f"no session {session_id!r}: it never existed, expired or was ended")


def checked_key(key: str | None) -> str | None:
    if key is not None and not 0 < len(key) <= MAX_KEY_LENGTH:
        raise invalid("Idempotency-Key", f"must be 1 to {MAX_KEY_LENGTH} characters")
    return key


def key_reused() -> Unprocessable:
    return invalid(
        "Idempotency-Key", "already used for a different request; use a fresh key for this one"
    )


@dataclass(frozen=True, slots=True)
class Known:
    """A session at one version, its state read: states are values, so one version of one
    session always has the same state, and this may be kept and shared."""

    id: str
    game: Game
    version: int
    seats: list[dict[str, Any]]
    state: Any
    live_text: str
    live: Live
    epoch: int = 0

    @classmethod
    def read(cls, session: Session, seats: list[dict[str, Any]]) -> "Known":
        game = get_game(session.game)
        state = game.read(orjson.loads(session.state))
        live = Live.loads(session.live)
        return cls(
            session.id, game, session.version, seats, state, session.live, live, session.epoch
        )


@dataclass(frozen=True, slots=True)
class Seated:
    """A session as one authenticated token holder reads it (seat None: a spectator)."""

    known: Known
    seat: int | None


class Recent:
    """The latest version this process knows of recent sessions. A move that names that
    version is checked and applied on it without reading the session back; the store's
    compare-and-set still decides, and any other outcome takes the authoritative path."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._known: OrderedDict[str, Known] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str) -> Known | None:
        with self._lock:
            return self._known.get(session_id)

    def put(self, known: Known) -> None:
        with self._lock:
            self._known[known.id] = known
            self._known.move_to_end(known.id)
            while len(self._known) > self.size:
                self._known.popitem(last=False)

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._known.pop(session_id, None)


class Sessions:
    """The hosted-session calls, on one store; what the routes call."""

    def __init__(
        self,
        store: SessionStore,
        long_poll_seconds: float,
        client_seeds: bool = False,
        hub: Hub | None = None,
        schedule: Schedule | None = None,
        clock: Clock = time.time,
        ping_seconds: float = STREAM_PING_SECONDS,
        metrics: bool = False,
    ) -> None:
        """`client_seeds` lets a client choose the seed of a session with several human
        seats (tests, replays); otherwise only the server's secret seed deals those. `clock`
        tells the time turn timers run on (the epoch's seconds)."""
        self.store = store
        self.long_poll_seconds = long_poll_seconds
        self.client_seeds = client_seeds
        self.hub = hub or Hub()
        self.schedule = schedule or MemorySchedule()
        self.clock = clock
        self.ping_seconds = ping_seconds
        self.metrics = metrics
        self.recent = Recent()
        self._scanner: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- create ----------------------------------------------------------------------

    def create(self, body: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """A new session; with an Idempotency-Key, a retry gets the first answer."""
        key = checked_key(key)
        answer = self._start(body)
        if key is None:
            return answer
        mark = fingerprint("create", body)
        stored = orjson.dumps({"fingerprint": mark, "answer": answer}).decode()
        for _ in range(2):
            earlier = self.store.remember_creation(digest(key), stored)
            if earlier is None:
                return answer
            kept = orjson.loads(earlier)
            if self.store.load(kept["answer"]["id"]) is not None:
                self.store.delete(answer["id"])
                if kept["fingerprint"] != mark:
                    raise key_reused()
                return kept["answer"]
            # The earlier session has ended; its key went with it.
            self.store.forget_creation(digest(key))
        return answer

    def _start(self, body: Mapping[str, Any]) -> dict[str, Any]:
        game = get_game(body["game"])
        seat_kinds = body["seats"]
        humans = sum(kind["type"] == "human" for kind in seat_kinds)
        if "seed" in body and humans >= 2 and not self.client_seeds:
            raise invalid("seed", FAIR_DEAL)
        state = requests.new_state(game, body.get("rules"), len(seat_kinds), requests.seed(body))
        session_id = random_text(ID_LENGTH)
        seats, tokens = [], {}
        for seat, kind in enumerate(seat_kinds):
            if kind["type"] == "human":
                tokens[seat] = random_text(TOKEN_LENGTH)
                seats.append({"type": "human", "token": digest(tokens[seat])})
            else:
                seats.append({"type": "bot", "level": kind["level"]})
        watchers = [random_text(TOKEN_LENGTH) for _ in range(body.get("spectators") or 0)]
        live = Live(
            turn_seconds=body.get("turn_seconds"),
            timeout_level=body.get("timeout_level") or DEFAULT_TIMEOUT_LEVEL,
            absent_after=body.get("absent_after"),
            spectators=tuple(digest(token) for token in watchers),
            timeouts=(0,) * len(seats),
            time_bank=body.get("time_bank"),
            banks=(float(body["time_bank"]),) * len(seats) if body.get("time_bank") else (),
        )
        state, batches, live = self._advance(game, session_id, seats, live, state, 0)
        session = Session(
            id=session_id,
            game=game.name,
            version=len(batches),
            state=orjson.dumps(game.write(state)).decode(),
            seats=orjson.dumps(seats).decode(),
            live=live.dumps(),
        )
        self._plan(session_id, live)
        self.store.create(session, tuple(orjson.dumps(batch).decode() for batch in batches))
        return {
            "id": session_id,
            "game": game.name,
            "version": session.version,
            "epoch": session.epoch,
            "seats": [seat_entry(seat, kind, tokens.get(seat)) for seat, kind in enumerate(seats)],
            "spectators": [{"token": token} for token in watchers],
            "deal": deal(game, state),
        }

    # -- read ------------------------------------------------------------------------

    def read(self, session_id: str, authorization: str | None) -> dict[str, Any]:
        seated = self.seated(session_id, authorization)
        return seat_answer(seated.known, seated.seat, self.clock())

    # -- move ------------------------------------------------------------------------

    def move(
        self,
        session_id: str,
        authorization: str | None,
        read_body: Callable[[], object],
        key: str | None,
    ) -> dict[str, Any]:
        """Play the seat's move and the bots' replies as one compare-and-set. The body is
        read only after the session and token checks, in the contract's order."""
        known = self.recent.get(session_id)
        if known is not None:
            try:
                answer = self._move_on_known(known, authorization, read_body, key)
            except LiveChanged:
                answer = None
            if answer is not None:
                return answer
        for _ in range(3):
            try:
                return self._move_as_stored(session_id, authorization, read_body, key)
            except LiveChanged:
                continue
        raise SessionUnavailable("the session is changing too fast; retry")

    def _move_as_stored(
        self,
        session_id: str,
        authorization: str | None,
        read_body: Callable[[], object],
        key: str | None,
    ) -> dict[str, Any]:
        seated = self.seated(session_id, authorization)
        if seated.seat is None:
            raise spectators_cannot("move")
        key = checked_key(key)
        body = read_body()
        mark = fingerprint("move", seated.seat, body)
        if key is not None:
            earlier = self.store.answer(session_id, digest(key))
            if earlier is not None:
                return replayed(earlier, mark)
        move = checked_move(seated.known, seated.seat, body)
        return self._commit(Seated(seated.known, seated.seat), move, mark, key)

    def _move_on_known(
        self,
        known: Known,
        authorization: str | None,
        read_body: Callable[[], object],
        key: str | None,
    ) -> dict[str, Any] | None:
        """The move when it passes every check on the version this process knows, else
        None: then the caller runs the checks again on the session as stored (also when
        the store's epoch moved on: the state this process knows may be one it lost)."""
        if due(known.live, self.clock()):
            return None
        try:
            seat = authenticate(known.seats, known.live.spectators, bearer_token(authorization))
            if seat is None:
                return None
            checked_key(key)
            body = read_body()
            move = checked_move(known, seat, body)
        except Problem:
            return None
        try:
            return self._commit(Seated(known, seat), move, fingerprint("move", seat, body), key)
        except EpochChanged:
            return None

    def _commit(self, seated: Seated, move: Any, mark: str, key: str | None) -> dict[str, Any]:
        known, seat = seated.known, seated.seat
        assert seat is not None
        game, version = known.game, known.version
        state, events = game.apply(known.state, move)
        batches = [tag(events, version + 1)]
        live = known.live.spent(seat, self.clock()).present(seat)
        state, more, live = self._advance(game, known.id, known.seats, live, state, version + 1)
        batches += more
        after = replace(
            known, version=version + len(batches), state=state, live_text=live.dumps(), live=live
        )
        answer = {
            "game": game.name,
            "version": after.version,
            "epoch": known.epoch,
            "view": game.view(state, seat),
            "moves": moves_of(after, seat),
            "score": game.score(state),
            "events": [event for batch in batches for event in seen_in(game, seat, batch)],
            **timing(live, self.clock()),
        }
        change = Change(
            expected_version=version,
            state=orjson.dumps(game.write(state)).decode(),
            batches=tuple(orjson.dumps(batch).decode() for batch in batches),
            key=None if key is None else digest(key),
            answer=None
            if key is None
            else orjson.dumps({"fingerprint": mark, "answer": answer}).decode(),
            expected_live=known.live_text,
            live=after.live_text,
            expected_epoch=known.epoch,
        )
        self._plan(known.id, live)
        commit = self.store.commit(known.id, change)
        if commit.outcome is Outcome.APPLIED:
            self.recent.put(after)
            self.hub.committed(known.id)
            return answer
        self.recent.drop(known.id)
        if commit.outcome is Outcome.GONE:
            raise not_found(known.id)
        if commit.outcome is Outcome.REPLAY:
            return replayed(commit.answer, mark)
        if commit.epoch != known.epoch:
            raise EpochChanged(commit.version, rolled_back(commit.epoch, commit.version))
        if commit.version == version:
            raise LiveChanged()
        raise stale(commit.version, version)

    def _advance(
        self,
        game: Game,
        session_id: str,
        seats: list[dict[str, Any]],
        live: Live,
        state: Any,
        version: int,
    ) -> tuple[Any, list[Events], Live]:
        """After a commit's first move: the bots' and absent seats' moves, each one version,
        up to a present human's turn, the end, or the step's bound; then that seat's
        deadline if timed, or, with server play left over, a resume at once."""
        batches: list[Events] = []
        while (mover := game.to_move(state)) is not None:
            if seats[mover]["type"] == "human" and mover not in live.absent:
                break
            if len(batches) >= SERVER_MOVES_PER_STEP:
                resume = round(self.clock(), 3)
                return state, batches, replace(live, deadline=None, turn_began=None,
                                               resume_at=resume)  # fmt: skip
            if batches:
                time.sleep(YIELD_SECONDS)
            if seats[mover]["type"] == "bot":
                move = choose_move(game, state, seats[mover]["level"], f"{session_id}/{version}")
                state, events = game.apply(state, move)
            else:
                move = choose_move(game, state, live.timeout_level, f"{session_id}/{version}")
                state, events = game.apply(state, move)
                events = [{"type": "timeout", "seat": mover, "absent": True}, *events]
            version += 1
            batches.append(tag(events, version))
        deadline = began = None
        if live.turn_seconds is not None and mover is not None:
            began = round(self.clock(), 3)
            deadline = round(began + live.turn_seconds + live.bank_of(mover), 3)
        return state, batches, replace(live, deadline=deadline, turn_began=began, resume_at=None)

    def _plan(self, session_id: str, live: Live) -> None:
        """Plan a look at the session's deadline (or resumed play) before committing it: a
        plan whose commit then fails costs one needless look, a commit without its plan could
        go unfired."""
        if live.due_at is not None:
            self.schedule.plan(session_id, live.due_at)

    # -- turn timers -------------------------------------------------------------------

    def fire(self, session_id: str) -> float | None:
        """Play for the seat to move if its time has run out; the session's deadline after
        (None: none runs, or the session is gone)."""
        for _ in range(3):
            session = self.store.load(session_id)
            if session is None:
                return None
            known = Known.read(session, orjson.loads(session.seats))
            fired = self._fire_on(known)
            if fired is not None:
                return fired.live.due_at
        return Live.loads(session.live).due_at

    def _fire_on(self, known: Known) -> Known | None:
        """`known` itself when nothing is due on it, the session after the timeout (or the
        next step of resumed server play) when this call committed it, None when another
        commit came first."""
        live, game, version = known.live, known.game, known.version
        seat = game.to_move(known.state)
        if not due(live, self.clock()) or seat is None:
            return known
        if live.resume_at is not None:
            state, batches, live = self._advance(
                game, known.id, known.seats, live, known.state, version
            )
        else:
            move = choose_move(game, known.state, live.timeout_level, f"{known.id}/{version}")
            state, events = game.apply(known.state, move)
            batches = [tag([{"type": "timeout", "seat": seat}, *events], version + 1)]
            live = live.timed_out(seat, len(known.seats))
            state, more, live = self._advance(game, known.id, known.seats, live, state, version + 1)
            batches += more
        after = replace(
            known, version=version + len(batches), state=state, live_text=live.dumps(), live=live
        )
        change = Change(
            expected_version=version,
            state=orjson.dumps(game.write(state)).decode(),
            batches=tuple(orjson.dumps(batch).decode() for batch in batches),
            expected_live=known.live_text,
            live=after.live_text,
            expected_epoch=known.epoch,
        )
        self._plan(known.id, live)
        commit = self.store.commit(known.id, change)
        if commit.outcome is not Outcome.APPLIED:
            self.recent.drop(known.id)
            return None
        log.info(
            "server play resumed" if known.live.resume_at is not None else "turn timer fired",
            extra={"session_id": known.id, "seat": seat, "version": after.version},
        )
        self.recent.put(after)
        self.hub.committed(known.id)
        return after

    def fire_due(self) -> int:
        """One scan of the schedule: fire every due timer this process can claim; how many
        sessions it looked at."""
        claimed = self.schedule.claim(self.clock(), TIMER_LEASE_SECONDS)
        for session_id, mark in claimed:
            try:
                deadline = self.fire(session_id)
            except StoreUnavailable as error:
                log.warning("turn timer not fired: %s", error)
                continue
            self.schedule.settle(session_id, mark, deadline)
        return len(claimed)

    def start_timers(self, every: float = 0.5) -> None:
        """Scan the schedule every `every` seconds in this process (a thread, a greenlet
        under gevent), so timers fire with nobody connected."""
        if self._scanner is not None:
            return
        self._scanner = threading.Thread(target=self._scan, args=(every,), daemon=True)
        self._scanner.name = "turn-timers"
        self._scanner.start()

    def _scan(self, every: float) -> None:
        while not self._stopping.wait(every):
            try:
                self.fire_due()
            except Exception:  # the scanner must outlive any one bad scan
                log.exception("turn timer scan failed")

    def close(self) -> None:
        """Stop the scanner, wake every waiting reader, release connections."""
        self._stopping.set()
        self.hub.close()
        self.schedule.close()
        self.store.close()

    # -- spectators --------------------------------------------------------------------

    def add_spectator(self, session_id: str, authorization: str | None) -> dict[str, str]:
        """A new spectator token, asked for by a seat."""
        for _ in range(5):
            seated = self.seated(session_id, authorization)
            if seated.seat is None:
                raise spectators_cannot("create spectator tokens")
            known = seated.known
            if len(known.live.spectators) >= MAX_SPECTATORS:
                raise Problem(409, f"the session has {MAX_SPECTATORS} spectator tokens already")
            token = random_text(TOKEN_LENGTH)
            live = replace(known.live, spectators=(*known.live.spectators, digest(token)))
            if self._change_live(known, live):
                return {"token": token}
        raise SessionUnavailable("the session is changing too fast; retry")

    def _change_live(self, known: Known, live: Live) -> bool:
        """Write a new live record at the same version; False when the session changed."""
        change = Change(
            expected_version=known.version,
            state=orjson.dumps(known.game.write(known.state)).decode(),
            batches=(),
            expected_live=known.live_text,
            live=live.dumps(),
            expected_epoch=known.epoch,
        )
        commit = self.store.commit(known.id, change)
        self.recent.drop(known.id)
        if commit.outcome is Outcome.GONE:
            raise not_found(known.id)
        return commit.outcome is Outcome.APPLIED

    # -- events ----------------------------------------------------------------------

    def events(
        self, session_id: str, authorization: str | None, after: int
    ) -> list[dict[str, Any]]:
        """The events after version `after` as the token's seat may see them; waits for some
        up to the long-poll bound."""
        seated = self.seated(session_id, authorization)
        game, seat = seated.known.game, seated.seat
        until = time.monotonic() + self.long_poll_seconds
        with self.hub.watching(session_id) as watch, self._counted(LONG_POLLS):
            deadline = seated.known.live.due_at
            # A session's timer settings never change: an untimed one has nothing to fire
            # but resumed server play, which the timer scanners carry on.
            timed = seated.known.live.turn_seconds is not None or deadline is not None
            while True:
                batches = self.store.events(session_id, after, 0)
                if batches is None:
                    raise not_found(session_id)
                if batches:
                    return [event for batch in batches for event in seen_by(game, seat, batch)]
                remaining = until - time.monotonic()
                if remaining <= 0 or self.hub.draining:
                    return []
                watch.wait(self._until_deadline(deadline, remaining))
                if timed:
                    deadline = self._fire_if_due(session_id)

    def stream(
        self, session_id: str, authorization: str | None, after: int | None
    ) -> Iterator[str]:
        """The session's event stream as the token's reader may see it: the checks run now,
        the messages as the returned iterator is read."""
        seated = self.seated(session_id, authorization)
        start = seated.known.version if after is None else after
        return self._stream(seated.known.id, seated.known.game, seated.seat, start, seated.known)

    def _stream(
        self, session_id: str, game: Game, seat: int | None, after: int, known: Known
    ) -> Iterator[str]:
        yield ": ping\n\n"
        with self.hub.watching(session_id) as watch, self._counted(STREAMS):
            deadline = known.live.due_at
            timed = known.live.turn_seconds is not None or deadline is not None
            quiet = False  # the last wait passed without a wake-up
            while True:
                if quiet:
                    # Only whether it is still there: an idle session may expire while
                    # watched (a read would keep it alive), and then the stream ends.
                    if not self.store.exists(session_id):
                        yield "event: end\ndata: {}\n\n"
                        return
                    yield ": ping\n\n"
                else:
                    batches = self.store.events(session_id, after, 0)
                    if batches is None:
                        yield "event: end\ndata: {}\n\n"
                        return
                    for batch in batches:
                        after += 1
                        events = orjson.dumps(seen_by(game, seat, batch)).decode()
                        yield f"id: {after}\nevent: events\ndata: {events}\n\n"
                if self.hub.draining:
                    return  # the worker is stopping: the client resumes on another one
                changed = watch.wait(self._until_deadline(deadline, self.ping_seconds))
                if timed and (changed or deadline is not None):
                    deadline = self._fire_if_due(session_id)
                quiet = not changed

    @contextmanager
    def _counted(self, gauge: Gauge) -> Iterator[None]:
        """`gauge` counts this reader while it reads (with METRICS on)."""
        if not self.metrics:
            yield
            return
        gauge.inc()
        try:
            yield
        finally:
            gauge.dec()

    def _until_deadline(self, deadline: float | None, longest: float) -> float:
        """How long a reader waits: `longest`, or less when the turn timer runs out first."""
        if deadline is None:
            return longest
        return max(0.0, min(longest, deadline - self.clock()))

    def _fire_if_due(self, session_id: str) -> float | None:
        """After a quiet wait: fire the session's timer if it is due; its deadline after."""
        session = self.store.load(session_id)
        if session is None:
            return None
        known = Known.read(session, orjson.loads(session.seats))
        fired = self._fire_on(known)
        return None if fired is None else fired.live.due_at

    # -- delete ----------------------------------------------------------------------

    def delete(self, session_id: str, authorization: str | None) -> None:
        _, _, seat = self._authorized(session_id, authorization)
        if seat is None:
            raise spectators_cannot("end the session")
        self.recent.drop(session_id)
        if not self.store.delete(session_id):
            raise not_found(session_id)
        self.hub.committed(session_id)

    # -- the checks every call starts with -----------------------------------------------

    def seated(self, session_id: str, authorization: str | None) -> Seated:
        """The session as stored, its state read, and the token's seat (None: a spectator);
        a due turn timer fired first, and an absent seat present again."""
        for _ in range(5):
            session, seats, seat = self._authorized(session_id, authorization)
            fired = self._fire_on(Known.read(session, seats))
            if fired is None:
                continue  # another commit came first: read it again
            known = fired  # at most one timeout or step of server play per read
            if seat is not None and seat in known.live.absent:
                self._change_live(known, known.live.present(seat))
                continue
            self.recent.put(known)
            return Seated(known, seat)
        raise SessionUnavailable("the session is changing too fast; retry")

    def _authorized(
        self, session_id: str, authorization: str | None
    ) -> tuple[Session, list[dict[str, Any]], int | None]:
        """The session as stored (404 when there is none) and the token's seat (401; None
        for a spectator token)."""
        # An id this service cannot have issued is not looked up (nor used in a key name).
        session = self.store.load(session_id) if ISSUED_ID.fullmatch(session_id) else None
        if session is None:
            self.recent.drop(session_id)
            raise not_found(session_id)
        seats = orjson.loads(session.seats)
        live = Live.loads(session.live)
        return session, seats, authenticate(seats, live.spectators, bearer_token(authorization))


def bearer_token(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").strip().partition(" ")
    if not authorization:
        raise Unauthorized("this call needs 'Authorization: Bearer <seat or spectator token>'")
    if scheme.lower() != AUTH_SCHEME or not token.strip():
        raise Unauthorized(
            "the Authorization header must be 'Bearer <seat token>'", "invalid_request"
        )
    return token.strip()


def authenticate(
    seats: list[dict[str, Any]], spectators: tuple[str, ...], token: str
) -> int | None:
    """The seat whose token this is, None for a spectator token; every token is compared,
    in constant time."""
    wanted = digest(token)
    found, watching = None, False
    for seat, kind in enumerate(seats):
        if hmac.compare_digest(kind.get("token", ""), wanted):
            found = seat
    for spectator in spectators:
        watching |= hmac.compare_digest(spectator, wanted)
    if found is None and not watching:
        raise Unauthorized(
            "the token is not a seat or spectator token of this session", "invalid_token"
        )
    return found


def spectators_cannot(what: str) -> Problem:
    return Problem(403, f"a spectator token cannot {what}; only a seat's token can")


def due(live: Live, now: float) -> bool:
    """Whether the turn timer has run out or server play waits to be resumed."""
    return live.due_at is not None and now >= live.due_at


def timing(live: Live, now: float) -> dict[str, Any]:
    """The turn timer as an answer shows it."""
    left = None if live.deadline is None else max(0.0, round(live.deadline - now, 3))
    return {
        "deadline": rfc3339(live.deadline),
        "time_left": left,
        "absent": list(live.absent),
        "time_banks": list(live.banks) if live.banks else None,
    }


def read_version(body: object) -> int:
    if not isinstance(body, dict):
        raise invalid("body", "must be an object with 'move' and 'version'")
    version = body.get("version")
    if type(version) is not int or version < 0:
        raise invalid("version", "must be the session's current version, an integer >= 0")
    return version


def checked_move(known: Known, seat: int, body: dict[str, Any]) -> Any:
    """The contract's checks after session and token: version, turn, then legality."""
    version = read_version(body)
    if version != known.version:
        if version > known.version:
            raise StaleVersion(known.version, rolled_back(known.epoch, known.version))
        raise stale(known.version, version)
    if known.game.to_move(known.state) != seat:
        raise not_your_turn(known.game, known.state, seat)
    return read_move(known.game, known.state, body)


def read_move(game: Game, state: Any, body: dict[str, Any]) -> Any:
    """The body's move, read as the stateless `apply` reads one."""
    errors = MOVE_REQUEST.validate(body)
    if errors:
        raise Unprocessable(json_paths(errors))
    return requests.read_move(game, state, body["move"])


def rolled_back(epoch: int, version: int) -> str:
    """A version ahead of the session's, or a changed epoch: its store lost moves."""
    return (
        f"the session is at version {version}, epoch {epoch}: its store came back from a "
        "restart or a failover and may have lost its latest moves; read the session again"
    )


def stale(current: int, sent: int) -> StaleVersion:
    return StaleVersion(
        current, f"version {sent} is not the current version {current}; read the session again"
    )


def not_your_turn(game: Game, state: Any, seat: int) -> Problem:
    mover = game.to_move(state)
    if mover is None:
        return Problem(403, "the match is over; no seat may move")
    return Problem(403, f"it is seat {mover}'s turn, not seat {seat}'s")


def replayed(stored: str, mark: str) -> dict[str, Any]:
    kept = orjson.loads(stored)
    if kept["fingerprint"] != mark:
        raise key_reused()
    return kept["answer"]


def tag(events: Events, version: int) -> Events:
    return [{**event, "version": version} for event in events]


def seen_by(game: Game, seat: int | None, stored: str) -> Events:
    """One version's events, stored in full (JSON text), as `seat` may see them, tagged."""
    return seen_in(game, seat, orjson.loads(stored))


def seen_in(game: Game, seat: int | None, batch: Events) -> Events:
    """One version's events as `seat` may see them, still tagged."""
    if not batch:
        return batch
    version = batch[0]["version"]
    untagged = [{key: value for key, value in event.items() if key != "version"} for event in batch]
    return tag(game.events_for(untagged, seat), version)


def moves_of(known: Known, seat: int | None) -> list[dict[str, Any]]:
    game, state = known.game, known.state
    if game.to_move(state) != seat:
        return []
    return [game.write_move(state, move) for move in game.legal_moves(state)]


def seat_answer(known: Known, seat: int | None, now: float) -> dict[str, Any]:
    return {
        "game": known.game.name,
        "id": known.id,
        "version": known.version,
        "epoch": known.epoch,
        "seat": seat,
        "view": known.game.view(known.state, seat),
        "moves": moves_of(known, seat),
        "score": known.game.score(known.state),
        "deal": deal(known.game, known.state),
        **timing(known.live, now),
    }


def deal(game: Game, state: Any) -> dict[str, str]:
    """The commitment to the session's seed (its SHA-256), and the seed itself once the
    match is over: then anyone can deal the same match with it and check every card."""
    seed = game.write(state).get("seed", "")
    answer = {"commitment": hashlib.sha256(seed.encode()).hexdigest()}
    if game.outcome(state) is not None:
        answer["seed"] = seed
    return answer


def seat_entry(seat: int, kind: Mapping[str, Any], token: str | None) -> dict[str, Any]:
    if token is not None:
        return {"seat": seat, "type": "human", "token": token}
    return {"seat": seat, "type": "bot", "level": kind["level"]}
