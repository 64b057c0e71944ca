"""Hosted sessions: a game kept by the server, played by seat-token holders and bots.

Checks on a move run in the contract's order: session (404), token (401), version (409),
turn (403), legality (422). A move and the bot replies it triggers, up to the next human
turn, are one compare-and-set on the session's version, so concurrent movers and retries
can never lose or double-apply a move. Each seat only ever sees game.view of its own seat;
every event is stored in full, tagged with its version, and each reader gets them through
game.events_for its own seat (a Bank seat never sees another seat's drawn card).
"""

import hashlib
import hmac
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from engine.bots import choose_move
from engine.game import Events, Game, get_game
from service import play
from service.errors import Problem, Unprocessable, invalid, json_paths
from service.schemas.envelopes import SessionMoveRequest
from service.store import Change, Outcome, Session, SessionStore

# Tokens and ids avoid the suit letters C, D, H and S in either case, so no card name can
# ever appear inside one: a byte scan of what a seat receives finds cards only as cards.
ALPHABET = "0123456789abefgijklmnopqrtuvwxyz"
TOKEN_LENGTH = 52  # 260 bits
ID_LENGTH = 26  # 130 bits
ISSUED_ID = re.compile(f"[{ALPHABET}]{{{ID_LENGTH}}}")
MAX_KEY_LENGTH = 255
AUTH_SCHEME = "bearer"
MOVE_REQUEST = SessionMoveRequest()  # built once: building a schema costs more than a load


FAIR_DEAL = (
    "a session with two or more human seats is dealt from the server's secret seed, so that "
    "no player can know another's cards; leave seed out (the answer commits to the seed, "
    "which is revealed when the match ends)"
)


class Unauthorized(Problem):
    def __init__(self, detail: str, error: str | None = None) -> None:
        challenge = 'Bearer realm="basra"' + (f', error="{error}"' if error else "")
        super().__init__(401, detail, headers={"WWW-Authenticate": challenge})


class StaleVersion(Problem):
    """A 409 that also carries the session's current version."""

    def __init__(self, version: int, detail: str) -> None:
        super().__init__(409, detail)
        self.version = version


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

    @classmethod
    def read(cls, session: Session, seats: list[dict[str, Any]]) -> "Known":
        game = get_game(session.game)
        state = game.read(orjson.loads(session.state))
        return cls(session.id, game, session.version, seats, state)


@dataclass(frozen=True, slots=True)
class Seated:
    """A session as one authenticated seat reads it."""

    known: Known
    seat: int


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
        self, store: SessionStore, long_poll_seconds: float, client_seeds: bool = False
    ) -> None:
        """`client_seeds` lets a client choose the seed of a session with several human
        seats (tests, replays); otherwise only the server's secret seed deals those."""
        self.store = store
        self.long_poll_seconds = long_poll_seconds
        self.client_seeds = client_seeds
        self.recent = Recent()

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
        state = play.new_state(game, body.get("rules"), len(seat_kinds), play.seed(body))
        session_id = random_text(ID_LENGTH)
        seats, tokens = [], {}
        for seat, kind in enumerate(seat_kinds):
            if kind["type"] == "human":
                tokens[seat] = random_text(TOKEN_LENGTH)
                seats.append({"type": "human", "token": digest(tokens[seat])})
            else:
                seats.append({"type": "bot", "level": kind["level"]})
        state, batches = play_bots(game, session_id, seats, state, 0)
        session = Session(
            id=session_id,
            game=game.name,
            version=len(batches),
            state=orjson.dumps(game.write(state)).decode(),
            seats=orjson.dumps(seats).decode(),
        )
        self.store.create(session, tuple(orjson.dumps(batch).decode() for batch in batches))
        return {
            "id": session_id,
            "game": game.name,
            "version": session.version,
            "seats": [seat_entry(seat, kind, tokens.get(seat)) for seat, kind in enumerate(seats)],
            "deal": deal(game, state),
        }

    # -- read ------------------------------------------------------------------------

    def read(self, session_id: str, authorization: str | None) -> dict[str, Any]:
        seated = self.seated(session_id, authorization)
        return seat_answer(seated.known, seated.seat)

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
            answer = self._move_on_known(known, authorization, read_body, key)
            if answer is not None:
                return answer
        seated = self.seated(session_id, authorization)
        key = checked_key(key)
        body = read_body()
        mark = fingerprint("move", seated.seat, body)
        if key is not None:
            earlier = self.store.answer(session_id, digest(key))
            if earlier is not None:
                return replayed(earlier, mark)
        move = checked_move(seated.known, seated.seat, body)
        return self._commit(seated, move, mark, key)

    def _move_on_known(
        self,
        known: Known,
        authorization: str | None,
        read_body: Callable[[], object],
        key: str | None,
    ) -> dict[str, Any] | None:
        """The move when it passes every check on the version this process knows, else
        None: then the caller runs the checks again on the session as stored."""
        try:
            seat = authenticate(known.seats, bearer_token(authorization))
            checked_key(key)
            body = read_body()
            move = checked_move(known, seat, body)
        except Problem:
            return None
        return self._commit(Seated(known, seat), move, fingerprint("move", seat, body), key)

    def _commit(self, seated: Seated, move: Any, mark: str, key: str | None) -> dict[str, Any]:
        known, seat = seated.known, seated.seat
        game, version = known.game, known.version
        state, events = game.apply(known.state, move)
        batches = [tag(events, version + 1)]
        state, bot_batches = play_bots(game, known.id, known.seats, state, version + 1)
        batches += bot_batches
        after = replace(known, version=version + len(batches), state=state)
        answer = {
            "version": after.version,
            "view": game.view(state, seat),
            "moves": moves_of(after, seat),
            "events": [event for batch in batches for event in seen_by(game, seat, batch)],
        }
        change = Change(
            expected_version=version,
            state=orjson.dumps(game.write(state)).decode(),
            batches=tuple(orjson.dumps(batch).decode() for batch in batches),
            key=None if key is None else digest(key),
            answer=None
            if key is None
            else orjson.dumps({"fingerprint": mark, "answer": answer}).decode(),
        )
        commit = self.store.commit(known.id, change)
        if commit.outcome is Outcome.APPLIED:
            self.recent.put(after)
            return answer
        self.recent.drop(known.id)
        if commit.outcome is Outcome.GONE:
            raise not_found(known.id)
        if commit.outcome is Outcome.REPLAY:
            return replayed(commit.answer, mark)
        raise stale(commit.version, version)

    # -- events ----------------------------------------------------------------------

    def events(
        self, session_id: str, authorization: str | None, after: int
    ) -> list[dict[str, Any]]:
        """The events after version `after` as the token's seat may see them; waits for some
        up to the long-poll bound."""
        session, _, seat = self._authorized(session_id, authorization)
        batches = self.store.events(session_id, after, self.long_poll_seconds)
        if batches is None:
            raise not_found(session_id)
        game = get_game(session.game)
        return [event for batch in batches for event in seen_by(game, seat, orjson.loads(batch))]

    # -- delete ----------------------------------------------------------------------

    def delete(self, session_id: str, authorization: str | None) -> None:
        self._authorized(session_id, authorization)
        self.recent.drop(session_id)
        if not self.store.delete(session_id):
            raise not_found(session_id)

    # -- the checks every call starts with -----------------------------------------------

    def seated(self, session_id: str, authorization: str | None) -> Seated:
        """The session as stored, its state read, and the token's seat."""
        session, seats, seat = self._authorized(session_id, authorization)
        known = Known.read(session, seats)
        self.recent.put(known)
        return Seated(known, seat)

    def _authorized(
        self, session_id: str, authorization: str | None
    ) -> tuple[Session, list[dict[str, Any]], int]:
        """The session as stored (404 when there is none) and the token's seat (401)."""
        # An id this service cannot have issued is not looked up (nor used in a key name).
        session = self.store.load(session_id) if ISSUED_ID.fullmatch(session_id) else None
        if session is None:
            self.recent.drop(session_id)
            raise not_found(session_id)
        seats = orjson.loads(session.seats)
        return session, seats, authenticate(seats, bearer_token(authorization))


def bearer_token(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").strip().partition(" ")
    if not authorization:
        raise Unauthorized("this call needs 'Authorization: Bearer <seat token>'")
    if scheme.lower() != AUTH_SCHEME or not token.strip():
        raise Unauthorized(
            "the Authorization header must be 'Bearer <seat token>'", "invalid_request"
        )
    return token.strip()


def authenticate(seats: list[dict[str, Any]], token: str) -> int:
    """The seat whose token this is; every seat is compared, in constant time."""
    wanted = digest(token)
    found = None
    for seat, kind in enumerate(seats):
        if hmac.compare_digest(kind.get("token", ""), wanted):
            found = seat
    if found is None:
        raise Unauthorized("the token is not a seat token of this session", "invalid_token")
    return found


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
        raise stale(known.version, version)
    if known.game.to_move(known.state) != seat:
        raise not_your_turn(known.game, known.state, seat)
    return read_move(known.game, known.state, body)


def read_move(game: Game, state: Any, body: dict[str, Any]) -> Any:
    """The body's move, read as the stateless `apply` reads one."""
    errors = MOVE_REQUEST.validate(body)
    if errors:
        raise Unprocessable(json_paths(errors))
    return play.read_move(game, state, body["move"])


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


def seen_by(game: Game, seat: int | None, batch: Events) -> Events:
    """One version's events, stored in full, as `seat` may see them, still tagged."""
    if not batch:
        return batch
    version = batch[0]["version"]
    untagged = [{key: value for key, value in event.items() if key != "version"} for event in batch]
    return tag(game.events_for(untagged, seat), version)


def play_bots(
    game: Game, session_id: str, seats: list[dict[str, Any]], state: Any, version: int
) -> tuple[Any, list[list[dict[str, Any]]]]:
    """Bot seats move until a human's turn or the end; each move is one version, and its
    seed derives from the session id and that version, so a replay is the same game."""
    batches = []
    while (mover := game.to_move(state)) is not None and seats[mover]["type"] == "bot":
        move = choose_move(game, state, seats[mover]["level"], f"{session_id}/{version}")
        state, events = game.apply(state, move)
        version += 1
        batches.append(tag(events, version))
    return state, batches


def moves_of(known: Known, seat: int) -> list[dict[str, Any]]:
    game, state = known.game, known.state
    if game.to_move(state) != seat:
        return []
    return [game.write_move(state, move) for move in game.legal_moves(state)]


def seat_answer(known: Known, seat: int) -> dict[str, Any]:
    return {
        "id": known.id,
        "version": known.version,
        "seat": seat,
        "view": known.game.view(known.state, seat),
        "moves": moves_of(known, seat),
        "deal": deal(known.game, known.state),
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
