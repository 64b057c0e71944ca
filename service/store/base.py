"""The SessionStore interface every hosted-session backend implements.

A store keeps sessions as opaque records (the game state as JSON text, the version, the
seats with their token hashes) and knows nothing of the rules. What it guarantees:

* `commit` is the one write of a session, its creation included: a compare-and-set on the
  version and the epoch (and on the live record when the change names the one it expects):
  of several commits expecting the same version exactly one is applied; it appends that
  move's events, keeps the idempotent answer and refreshes the idle TTL in the same atomic
  step, then announces the new version to other processes (Redis: on the session's channel).
* a commit sent again after it was applied (its answer lost with a dropped connection, and
  the client library's retry sent it once more) is answered as its first run was: each
  change carries a nonce, kept with the session's RECENT_COMMITS latest commits (others
  may land before the retry: a player's next move, the other seat's, a timer).
* every read or write of a session refreshes its idle TTL; an expired session is gone.
* a backend that cannot be reached raises StoreUnavailable, never its own errors.

With METRICS on, every call is timed and counted by its outcome
(`cards_store_operation_duration_seconds`); a store never sees more than ids and opaque
text, so neither can a metric.
"""

import functools
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from service.metrics import STORE_OPERATIONS, labelled


class StoreUnavailable(RuntimeError):
    """The backend cannot be reached right now; retrying later may succeed."""


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    game: str
    version: int
    state: str  # the game state's JSON text
    seats: str  # JSON text: one object per seat, with the token's SHA-256 for a human seat
    # JSON text: live play (timer settings, deadline, timeouts, absent seats, spectator token
    # digests); moves leave what they do not change as it is.
    live: str = "{}"
    # Grows when the store may have lost acknowledged writes of this session: its Redis
    # came back from its files after a crash, or a replica took over. Versions may then have
    # gone back; a client that sees the epoch change reads the session again.
    epoch: int = 0
    # JSON text written once at creation: the owner (an integrator's name), the creation
    # time, the webhook; opaque to the store.
    meta: str = "{}"
    updated_at: float = 0.0  # the time of its latest commit (epoch seconds)


class Outcome(Enum):
    APPLIED = "applied"
    STALE = "stale"  # the expected version is not the current one
    REPLAY = "replay"  # the idempotency key already has an answer
    GONE = "gone"  # no such session (never was, expired or deleted)


@dataclass(frozen=True, slots=True)
class Commit:
    outcome: Outcome
    version: int = 0  # the current version after the attempt
    answer: str | None = None  # the stored answer when outcome is REPLAY
    epoch: int = 0  # the session's current epoch
    # An applied change's messages are the first of the session's webhook outbox: it held
    # none before them (a deliverer then starts from them without reading it).
    heads_outbox: bool = False
    # An applied change's plan is written (Change.plan): the session is claimed by the
    # committing worker, which delivers it. Not when the outbox held messages and was
    # planned already: whoever delivers those finds these after them.
    claimed: bool = False


@dataclass(frozen=True, slots=True)
class Settle:
    """What a deliverer's pass over a session's outbox did, to be written: how many of the
    messages it read from the head are done (delivered or given up), and the rewrite of the
    one after them that failed, for its next attempt. A compare on the messages' text: what
    another deliverer settled meanwhile is not settled twice, and a message is never dropped
    unless this pass (or another) is done with it."""

    session_id: str
    done: int = 0
    last: str = ""  # the last message done, as read (found again within the first `done`)
    failed: str = ""  # the message that failed, as read ('' when none did)
    retry: str = ""  # its replacement: the same message with its next attempt's time


@dataclass(frozen=True, slots=True)
class NewSession:
    """What a session's first commit writes besides a change: it creates the session."""

    game: str
    seats: str  # JSON text, as Session.seats
    meta: str = "{}"  # JSON text, as Session.meta
    # The integrator that created it: the store lists its sessions, newest (`created_at`,
    # epoch seconds) first.
    owner: str | None = None
    created_at: float = 0.0


# How many of a session's latest commits keep their nonce and answer. A retry follows its
# lost reply within a second (redis-py's one retry, after a reconnect); more commits than
# this in that second on one session are not a match's pace.
RECENT_COMMITS = 4


def new_nonce() -> str:
    """A commit's nonce: 64 random bits from the OS (forked workers never draw alike), in
    hex (no space or semicolon: the Redis store keeps it beside its answer with those)."""
    return os.urandom(8).hex()


@dataclass(frozen=True, slots=True)
class Change:
    """One atomic step: the state after it and one event batch per version it adds."""

    expected_version: int
    state: str
    batches: tuple[str, ...]  # JSON text of each new version's events, in order
    key: str | None = None  # digest of the Idempotency-Key, when the request had one
    answer: str | None = None  # the answer to store under `key`
    # The live record this change was computed on: when set, the commit is also a
    # compare-and-set on it (STALE at the same version when it changed since).
    expected_live: str | None = None
    live: str | None = None  # the live record to write; None leaves it as it is
    expected_epoch: int = 0  # a change made on an earlier epoch's state is STALE
    new: NewSession | None = None  # set: the commit creates the session (STALE if it exists)
    # Announced with the new version to other processes (what their readers need without a
    # read: the turn deadline); opaque to the store.
    notice: str = ""
    at: float = 0.0  # when it is committed (epoch seconds): the session's updated_at
    # The match record's entries it appends (JSON text; its head first at creation), and
    # its final head when the change ends the match: the record is then kept for the
    # store's record_ttl, whatever becomes of the session.
    record: tuple[str, ...] = ()
    ended: str = ""
    # Webhook messages (JSON text) appended to the session's outbox, in version order, and
    # when (epoch seconds) the store's outbox schedule is to look at the session: planned
    # with the commit, so that a commit is never without the plan that delivers it (unless
    # the session is planned already because its outbox held messages: see Commit.claimed).
    messages: tuple[str, ...] = ()
    plan: float | None = None
    # This change's own, drawn when it is made (a change made anew, for a new attempt, draws
    # another): while it is among the session's RECENT_COMMITS latest commits, the same
    # change sent again is answered APPLIED as it was the first time (with its own version),
    # not STALE on its own write.
    nonce: str = field(default_factory=new_nonce)


def gone_or_ok(result: object) -> str:
    return "gone" if result is None or result is False else "ok"


# Each call that is timed, and the outcome label of what it returned.
MEASURED: dict[str, Callable[[Any], str]] = {
    "load": gone_or_ok,
    "commit": lambda commit: commit.outcome.value,
    "answer": lambda answer: "missing" if answer is None else "ok",
    "remember_creation": lambda earlier: "kept" if earlier is None else "replay",
    "settle_creation": lambda _: "ok",
    "forget_creation": lambda _: "ok",
    "events": lambda batches: "gone" if batches is None else "ok" if batches else "empty",
    "delete": gone_or_ok,
    "exists": gone_or_ok,
    "record": gone_or_ok,
    "outbox": lambda messages: "ok" if messages else "empty",
    "outbox_settle": lambda _: "ok",
    "owned": lambda _: "ok",
    "peek": lambda _: "ok",
}


def measured(operation: str, call: Callable[..., Any]) -> Callable[..., Any]:
    """`call` timed into STORE_OPERATIONS when the store's `metrics` is on; a commit that
    creates its session is counted as operation `create`."""
    outcome = MEASURED[operation]

    @functools.wraps(call)
    def timed(store: "SessionStore", *args: Any) -> Any:
        if not store.metrics:
            return call(store, *args)
        name = "create" if operation == "commit" and args[1].new is not None else operation
        started = time.perf_counter()
        try:
            result = call(store, *args)
        except StoreUnavailable:
            labelled(STORE_OPERATIONS, name, "unavailable").observe(time.perf_counter() - started)
            raise
        labelled(STORE_OPERATIONS, name, outcome(result)).observe(time.perf_counter() - started)
        return result

    return timed


# What a creation's idempotency key holds while the creation runs (then its answer, JSON).
HOLD = "hold:"
RECORD_TTL = 30 * 86400.0  # RECORD_TTL_SECONDS' default
OUTBOX_TTL = 86400.0  # an undelivered webhook message is dropped no sooner than this
# The most messages of an outbox read at once: a receiver that was down for long leaves
# thousands, and a pass sends them a read at a time.
OUTBOX_READ = 100


class SessionStore(ABC):
    """Hosted sessions with an idle TTL in seconds, refreshed on every access; finished
    matches' records kept `record_ttl` seconds after the end; webhook outboxes kept at
    least `outbox_ttl` after their latest message."""

    metrics = False  # time every call (open_store sets it from METRICS)
    # The sessions whose webhook outbox is due, by when; commits plan it (Change.plan).
    outbox_schedule: "Schedule"

    def __init__(
        self, ttl: float, record_ttl: float = RECORD_TTL, outbox_ttl: float = OUTBOX_TTL
    ) -> None:
        self.ttl = ttl
        self.record_ttl = record_ttl
        self.outbox_ttl = outbox_ttl

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for operation in MEASURED:
            if operation in cls.__dict__:
                setattr(cls, operation, measured(operation, cls.__dict__[operation]))

    @abstractmethod
    def load(self, session_id: str) -> Session | None:
        """The session, or None when there is none; refreshes its TTL."""

    @abstractmethod
    def commit(self, session_id: str, change: Change) -> Commit:
        """Apply `change` if the session is still at `change.expected_version` and
        `change.expected_epoch` (or, with `change.new`, create it at that version)."""

    @abstractmethod
    def answer(self, session_id: str, key: str) -> str | None:
        """The answer stored under an idempotency key of this session, if any."""

    @abstractmethod
    def remember_creation(self, key: str, hold: str, seconds: float) -> str | None:
        """Keep `hold` (a creation's claim on its idempotency key, HOLD and more) under the
        key for `seconds` unless something is there already: None when it was kept (by this
        call, or by its first run when it is sent again), else what is there, another's
        hold or an answer (an answer's TTL refreshed to the session TTL, as every access of
        a session refreshes its own)."""

    @abstractmethod
    def settle_creation(self, key: str, hold: str, answer: str | None) -> None:
        """Replace `hold` with the creation's answer, kept as long as a session is, or
        drop it (`answer` None: nothing was created); nothing when the key no longer
        holds `hold` (it expired, and another creation may hold the key now)."""

    @abstractmethod
    def forget_creation(self, key: str) -> None:
        """Drop a creation answer whose session no longer exists."""

    @abstractmethod
    def events(self, session_id: str, after: int) -> list[str] | None:
        """The event batches of the versions after `after`; None when there is no such
        session."""

    @abstractmethod
    def delete(self, session_id: str) -> bool:
        """End the session; False when there was none. Announces it to other processes."""

    @abstractmethod
    def exists(self, session_id: str) -> bool:
        """Whether the session is there, without refreshing its TTL (an event stream's idle
        check must not keep an idle session alive)."""

    @abstractmethod
    def record(self, session_id: str) -> list[str] | None:
        """The match record's items (its head, then its moves), None when there is none
        (never was, expired with an unfinished session, or kept past record_ttl)."""

    @abstractmethod
    def outbox(self, session_id: str) -> list[str]:
        """The first OUTBOX_READ webhook messages of the session's outbox, in order."""

    @abstractmethod
    def outbox_settle(self, settles: Sequence[Settle]) -> list[list[str]]:
        """Write each settle: drop its session's first messages through `last` if `last` is
        still among the first `done`, then rewrite the head to `retry` if it is still
        `failed`. For each, the session's outbox after it, as `outbox` reads it."""

    @abstractmethod
    def owned(
        self, owner: str, after: tuple[float, str] | None, count: int
    ) -> list[tuple[float, str]]:
        """Up to `count` of the owner's sessions as (created_at, id), newest first, those
        after the (created_at, id) `after` only; sessions that are gone may still be listed
        (peek tells), until `disown` drops them."""

    @abstractmethod
    def disown(self, owner: str, session_ids: list[str]) -> None:
        """Drop sessions that are gone from the owner's list."""

    @abstractmethod
    def peek(self, session_ids: list[str]) -> list[Session | None]:
        """The sessions (None for one that is gone) without refreshing their TTL: listing a
        backend's sessions must not keep them all alive."""

    @abstractmethod
    def ready(self) -> bool:
        """Whether the backend answers right now."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""


class Schedule(ABC):
    """A schedule of sessions by when to look at them (turn deadlines, due webhook
    outboxes). Only a hint of when to look: the session's own record decides, and what is
    done is committed with the version compare-and-set like any move."""

    @abstractmethod
    def plan(self, session_id: str, deadline: float) -> None:
        """Look at the session at `deadline` (replacing any earlier plan for it)."""

    @abstractmethod
    def claim(self, now: float, lease: float) -> list[tuple[str, float]]:
        """The sessions due at `now`, each claimed until `now + lease` (another process
        claims it again only after that): (session id, the claim's mark)."""

    @abstractmethod
    def settle(self, session_id: str, mark: float, deadline: float | None) -> None:
        """After handling a claim: the session's next deadline (None: no more), unless a
        commit planned it anew meanwhile."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""
