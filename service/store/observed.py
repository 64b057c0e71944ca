"""A store wrapped to be seen: every call timed and counted by outcome, the moves and
sessions it commits counted and logged. What it logs and counts never includes a state, a
token (hash or not), a seed or an answer: only ids, versions, counts, games and bot levels."""

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import orjson

from service.metrics import MOVES, SESSIONS, STORE_OPERATIONS
from service.store.base import Change, Commit, Outcome, Session, SessionStore, StoreUnavailable

log = logging.getLogger("service.sessions")
Result = TypeVar("Result")
HUMAN = "human"
BOT = "bot"
TIMEOUT = "timeout"


class Players:
    """Who sits where in the sessions this process has seen lately: (game, one label per
    seat), so a commit can say who made each move without reading the session again."""

    def __init__(self, size: int = 16384) -> None:
        self.size = size
        self._seen: OrderedDict[str, tuple[str, tuple[str, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, session: Session) -> None:
        seats = tuple(kind.get("level", "") for kind in orjson.loads(session.seats))
        with self._lock:
            self._seen[session.id] = (session.game, seats)
            self._seen.move_to_end(session.id)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)

    def get(self, session_id: str) -> tuple[str, tuple[str, ...]] | None:
        with self._lock:
            return self._seen.get(session_id)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._seen.pop(session_id, None)


def timed_out(batch: str) -> bool:
    """Whether a version's events start with a timeout: the server played for the seat."""
    events = orjson.loads(batch)
    return bool(events) and isinstance(events[0], dict) and events[0].get("type") == "timeout"


def mover(batch: str) -> int | None:
    """The seat that made the move of one version's event batch: the first event naming a
    seat (a move event leads every batch)."""
    for event in orjson.loads(batch):
        seat = event.get("seat") if isinstance(event, dict) else None
        if isinstance(seat, int):
            return seat
    return None


class ObservedStore(SessionStore):
    """Any SessionStore, with metrics (when `metrics` is on) and log lines."""

    def __init__(self, store: SessionStore, metrics: bool = True) -> None:
        super().__init__(store.ttl)
        self.store = store
        self.metrics = metrics
        self.players = Players()

    def create(self, session: Session, batches: tuple[str, ...] = ()) -> None:
        self._timed("create", lambda: self.store.create(session, batches), lambda _: "ok")
        self.players.note(session)
        self._count_moves(session.id, batches, first_by_human=False)
        if self.metrics:
            SESSIONS.labels(session.game).inc()
        seats = [kind.get("level", HUMAN) for kind in orjson.loads(session.seats)]
        log.info(
            "session created",
            extra={"session_id": session.id, "game": session.game, "version": session.version,
                   "seats": seats},
        )  # fmt: skip

    def load(self, session_id: str) -> Session | None:
        session = self._timed(
            "load", lambda: self.store.load(session_id), lambda s: "gone" if s is None else "ok"
        )
        if session is not None:
            self.players.note(session)
        return session

    def commit(self, session_id: str, change: Change) -> Commit:
        commit = self._timed(
            "commit", lambda: self.store.commit(session_id, change), lambda c: c.outcome.value
        )
        if commit.outcome is Outcome.APPLIED:
            self._count_moves(session_id, change.batches, first_by_human=True)
            log.info(
                "moves applied",
                extra={"session_id": session_id, "version": commit.version,
                       "moves": len(change.batches)},
            )  # fmt: skip
        else:
            log.info(
                "move not applied",
                extra={"session_id": session_id, "outcome": commit.outcome.value,
                       "version": commit.version, "expected_version": change.expected_version},
            )  # fmt: skip
        return commit

    def answer(self, session_id: str, key: str) -> str | None:
        return self._timed(
            "answer",
            lambda: self.store.answer(session_id, key),
            lambda a: "missing" if a is None else "ok",
        )

    def remember_creation(self, key: str, answer: str) -> str | None:
        return self._timed(
            "remember_creation",
            lambda: self.store.remember_creation(key, answer),
            lambda earlier: "kept" if earlier is None else "replay",
        )

    def forget_creation(self, key: str) -> None:
        self._timed("forget_creation", lambda: self.store.forget_creation(key), lambda _: "ok")

    def events(self, session_id: str, after: int, timeout: float) -> list[str] | None:
        return self._timed(
            "events",
            lambda: self.store.events(session_id, after, timeout),
            lambda b: "gone" if b is None else "ok" if b else "empty",
        )

    def delete(self, session_id: str) -> bool:
        deleted = self._timed(
            "delete", lambda: self.store.delete(session_id), lambda d: "ok" if d else "gone"
        )
        self.players.forget(session_id)
        if deleted:
            log.info("session ended", extra={"session_id": session_id})
        return deleted

    def exists(self, session_id: str) -> bool:
        return self._timed(
            "exists", lambda: self.store.exists(session_id), lambda e: "ok" if e else "gone"
        )

    def ready(self) -> bool:
        return self.store.ready()

    def drain(self) -> None:
        self.store.drain()

    def close(self) -> None:
        self.store.close()

    def _timed(
        self, operation: str, call: Callable[[], Result], outcome: Callable[[Result], str]
    ) -> Result:
        if not self.metrics:
            return call()
        started = time.perf_counter()
        try:
            result = call()
        except StoreUnavailable:
            STORE_OPERATIONS.labels(operation, "unavailable").observe(time.perf_counter() - started)
            raise
        STORE_OPERATIONS.labels(operation, outcome(result)).observe(time.perf_counter() - started)
        return result

    def _count_moves(self, session_id: str, batches: tuple[str, ...], first_by_human: bool) -> None:
        if not self.metrics or not batches:
            return
        game, seats = self.players.get(session_id) or ("unknown", ())
        for index, batch in enumerate(batches):
            if timed_out(batch):  # the server played for a seat (its turn timer, or absent)
                MOVES.labels(game, TIMEOUT, "").inc()
                continue
            seat = mover(batch)
            level = seats[seat] if seat is not None and seat < len(seats) else ""
            by_human = (index == 0 and first_by_human) or (seat is not None and not level)
            MOVES.labels(game, HUMAN if by_human else BOT, "" if by_human else level).inc()
