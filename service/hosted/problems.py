"""The problems the hosted calls answer besides validation (422) and tokens (401)."""

from engine.game import Game
from service.errors import KINDS, Kind, Problem


class StaleVersion(Problem):
    """A 409 that also carries the session's current version."""

    def __init__(self, version: int, detail: str) -> None:
        super().__init__(409, detail, kind=KINDS["stale-version"])
        self.version = version


class EpochChanged(StaleVersion):
    """The store's epoch of the session moved on since its state was read."""


class LiveChanged(Exception):
    """A commit found the session's live record changed at the same version (a spectator
    token added, a seat present again): the call is checked again on the session as stored."""


class Busy(Problem):
    """A 503 or 429 with Retry-After: try again shortly."""

    def __init__(self, kind: Kind, detail: str, retry_after: int = 1) -> None:
        super().__init__(kind.status, detail, headers={"Retry-After": str(retry_after)}, kind=kind)


def unavailable(detail: str) -> Busy:
    return Busy(KINDS["unavailable"], detail)


def changing_too_fast() -> Busy:
    return unavailable("the session is changing too fast; retry")


def creation_in_progress() -> Busy:
    return Busy(
        KINDS["idempotency-key-in-use"],
        "a session creation with this Idempotency-Key is still being answered; retry",
    )


def not_found() -> Problem:
    """404 for a session: the same answer whatever the id, so that another integrator's key
    on a session is answered exactly as an id that never existed (and nothing from the path,
    a token put in its place say, is echoed)."""
    return Problem.of(
        KINDS["session-not-found"], "no such session: it never existed, expired or was ended"
    )


def spectators_cannot(what: str) -> Problem:
    return Problem.of(
        KINDS["seat-token-required"], f"a spectator token cannot {what}; only a seat's token can"
    )


def spectator_limit(most: int) -> Problem:
    return Problem.of(KINDS["spectator-limit"], f"the session has {most} spectator tokens already")


def rolled_back(epoch: int, version: int) -> str:
    """A changed epoch: its store lost moves."""
    return (
        f"the session is at version {version}, epoch {epoch}: its store came back from a "
        "restart or a failover and may have lost its latest moves; read the session again"
    )


def ahead(epoch: int, version: int, sent: int) -> str:
    """A version ahead of the session's: never one of its versions, or one its store lost."""
    return (
        f"version {sent} is ahead of the session's version {version} (epoch {epoch}): it was "
        "never this session's, or its store came back from a restart or a failover and lost "
        "its latest moves; read the session again"
    )


def stale(current: int, sent: int) -> StaleVersion:
    return StaleVersion(
        current, f"version {sent} is not the current version {current}; read the session again"
    )


def not_your_turn(game: Game, state: object, seat: int) -> Problem:
    mover = game.to_move(state)
    if mover is None:
        return Problem.of(KINDS["match-over"], "the match is over; no seat may move")
    return Problem.of(KINDS["not-your-turn"], f"it is seat {mover}'s turn, not seat {seat}'s")
