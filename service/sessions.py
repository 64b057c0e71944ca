"""Hosted sessions: a game kept by the server, played by seat-token holders and bots.

Checks on a move run in the contract's order: session (404), token (401), version (409),
turn (403), legality (422). A move and the bot replies it triggers, up to the next human
turn, are one compare-and-set on the session's version, so concurrent movers and retries
can never lose or double-apply a move. Each seat only ever sees game.view of its own seat;
events are public by construction (no hand contents) and tagged with their version.
"""

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from engine.bots import choose_move
from engine.errors import GameError
from engine.game import Game, get_game
from service.errors import Problem, Unprocessable, invalid, json_paths
from service.routes.games import rules_path, under
from service.schemas import SessionMoveRequest
from service.store import Change, Outcome, Session, SessionStore

# Tokens and ids avoid the suit letters C, D, H and S in either case, so no card name can
# ever appear inside one: a byte scan of what a seat receives finds cards only as cards.
ALPHABET = "0123456789abefgijklmnopqrtuvwxyz"
TOKEN_LENGTH = 52  # 260 bits
ID_LENGTH = 26  # 130 bits
SEED_BYTES = 16
AUTH_SCHEME = "bearer"


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


def key_reused() -> Unprocessable:
    return invalid(
        "Idempotency-Key", "already used for a different request; use a fresh key for this one"
    )


@dataclass(frozen=True, slots=True)
class Seated:
    """A session as one authenticated seat reads it."""

    session: Session
    game: Game
    seats: list[dict[str, Any]]
    seat: int

    def state(self) -> Any:
        return self.game.read(orjson.loads(self.session.state))


class Sessions:
    def __init__(self, store: SessionStore, long_poll_seconds: float) -> None:
        self.store = store
        self.long_poll_seconds = long_poll_seconds

    # -- create ----------------------------------------------------------------------

    def create(self, body: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """A new session; with an Idempotency-Key, a retry gets the first answer."""
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
        seed = body.get("seed") or secrets.token_hex(SEED_BYTES)
        try:
            state = game.new(body.get("rules") or {}, len(seat_kinds), seed)
        except GameError as error:
            raise invalid(rules_path(error.path), error.reason) from error
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
        }

    # -- read ------------------------------------------------------------------------

    def read(self, session_id: str, authorization: str | None) -> dict[str, Any]:
        seated = self.seated(session_id, authorization)
        return seat_answer(seated, seated.state())

    # -- move ------------------------------------------------------------------------

    def move(self, seated: "Seated", body: object, key: str | None) -> dict[str, Any]:
        """Play the seat's move and the bots' replies as one compare-and-set; `seated` comes
        from `seated()`, so the session and token checks have run already."""
        session, game = seated.session, seated.game
        session_id = session.id
        mark = fingerprint("move", seated.seat, body)
        if key is not None:
            earlier = self.store.answer(session_id, digest(key))
            if earlier is not None:
                return replayed(earlier, mark)
        version = read_version(body)
        if version != session.version:
            raise stale(session.version, version)
        state = seated.state()
        if game.to_move(state) != seated.seat:
            raise not_your_turn(game, state, seated.seat)
        move = read_move(game, state, body)
        state, events = game.apply(state, move)
        batches = [tag(events, version + 1)]
        state, bot_batches = play_bots(game, session_id, seated.seats, state, version + 1)
        batches += bot_batches
        version += len(batches)
        answer = {
            "version": version,
            "view": game.view(state, seated.seat),
            "moves": moves_of(game, state, seated.seat),
            "events": [event for batch in batches for event in batch],
        }
        change = Change(
            expected_version=session.version,
            state=orjson.dumps(game.write(state)).decode(),
            batches=tuple(orjson.dumps(batch).decode() for batch in batches),
            key=None if key is None else digest(key),
            answer=None
            if key is None
            else orjson.dumps({"fingerprint": mark, "answer": answer}).decode(),
        )
        commit = self.store.commit(session_id, change)
        if commit.outcome is Outcome.GONE:
            raise not_found(session_id)
        if commit.outcome is Outcome.REPLAY:
            return replayed(commit.answer, mark)
        if commit.outcome is Outcome.STALE:
            raise stale(commit.version, session.version)
        return answer

    # -- events ----------------------------------------------------------------------

    def events(
        self, session_id: str, authorization: str | None, after: int
    ) -> list[dict[str, Any]]:
        """The events after version `after`; waits for some up to the long-poll bound."""
        self.seated(session_id, authorization)
        batches = self.store.events(session_id, after, self.long_poll_seconds)
        if batches is None:
            raise not_found(session_id)
        return [event for batch in batches for event in orjson.loads(batch)]

    # -- delete ----------------------------------------------------------------------

    def delete(self, session_id: str, authorization: str | None) -> None:
        self.seated(session_id, authorization)
        if not self.store.delete(session_id):
            raise not_found(session_id)

    # -- the checks every call starts with -----------------------------------------------

    def seated(self, session_id: str, authorization: str | None) -> Seated:
        session = self.store.load(session_id)
        if session is None:
            raise not_found(session_id)
        seats = orjson.loads(session.seats)
        seat = authenticate(seats, bearer_token(authorization))
        return Seated(session, get_game(session.game), seats, seat)


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


def read_move(game: Game, state: Any, body: dict[str, Any]) -> Any:
    errors = SessionMoveRequest().validate(body)
    if errors:
        raise Unprocessable(json_paths(errors))
    try:
        return game.read_move(state, body["move"])
    except GameError as error:
        raise invalid(under("move", error.path), error.reason) from error


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


def tag(events: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    return [{**event, "version": version} for event in events]


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


def moves_of(game: Game, state: Any, seat: int) -> list[dict[str, Any]]:
    if game.to_move(state) != seat:
        return []
    return [game.write_move(state, move) for move in game.legal_moves(state)]


def seat_answer(seated: Seated, state: Any) -> dict[str, Any]:
    game, seat = seated.game, seated.seat
    return {
        "id": seated.session.id,
        "version": seated.session.version,
        "seat": seat,
        "view": game.view(state, seat),
        "moves": moves_of(game, state, seat),
    }


def seat_entry(seat: int, kind: Mapping[str, Any], token: str | None) -> dict[str, Any]:
    if token is not None:
        return {"seat": seat, "type": "human", "token": token}
    return {"seat": seat, "type": "bot", "level": kind["level"]}
