"""The in-process store: the embedded default when no REDIS_URL is configured.

Sessions live in this process only, so the run command starts one worker process when it
uses this store (see gunicorn.conf.py). One lock guards every session. Its sessions are
never rolled back, so their epoch stays what it was created with.
"""

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from service.store.base import (
    HOLD,
    OUTBOX_READ,
    OUTBOX_TTL,
    RECENT_COMMITS,
    RECORD_TTL,
    Change,
    Commit,
    Outcome,
    Schedule,
    Session,
    SessionStore,
    Settle,
)


@dataclass
class Record:
    session: Session
    expires: float
    batches: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)  # the match record's items
    # The latest commits' nonces and what each answered, newest first: the same change
    # committed again is answered so (as the Redis store answers a commit its client's
    # retry sent twice).
    applied: deque[tuple[str, Commit]] = field(
        default_factory=lambda: deque(maxlen=RECENT_COMMITS)
    )


def again(record: Record, change: Change) -> Commit | None:
    """The first answer to `change` when it is among the session's latest commits already
    (it is committed again), else None."""
    return next((commit for nonce, commit in record.applied if nonce == change.nonce), None)


class MemoryStore(SessionStore):
    def __init__(
        self, ttl: float, record_ttl: float = RECORD_TTL, outbox_ttl: float = OUTBOX_TTL
    ) -> None:
        super().__init__(ttl, record_ttl, outbox_ttl)
        # Finished matches' records, kept past their session: id -> (items, until).
        self._finished: dict[str, tuple[list[str], float]] = {}
        # Webhook outboxes, past their session too: id -> (messages, until).
        self._outboxes: dict[str, tuple[list[str], float]] = {}
        self._records: dict[str, Record] = {}
        self._creations: dict[str, tuple[str, float]] = {}
        self._owned: dict[str, dict[str, float]] = {}  # owner -> session id -> created_at
        self._lock = threading.Lock()
        self.outbox_schedule = MemorySchedule()
        self._next_sweep = 0.0

    def load(self, session_id: str) -> Session | None:
        with self._lock:
            record = self._live(session_id)
            return record.session if record else None

    def commit(self, session_id: str, change: Change) -> Commit:
        with self._lock:
            record = self._live(session_id)
            if change.new is not None:
                if record is not None:
                    session = record.session
                    stale = Commit(Outcome.STALE, session.version, None, session.epoch)
                    return again(record, change) or stale
                record = self._opened(session_id, change)
            if record is None:
                return Commit(Outcome.GONE)
            session = record.session
            version, epoch = session.version, session.epoch
            if change.key is not None and change.key in record.answers:
                replay = Commit(Outcome.REPLAY, version, record.answers[change.key], epoch)
                return again(record, change) or replay
            live_changed = change.expected_live not in (None, session.live)
            if version != change.expected_version or change.expected_epoch != epoch or live_changed:
                return again(record, change) or Commit(Outcome.STALE, version, None, epoch)
            version += len(change.batches)
            live = session.live if change.live is None else change.live
            record.session = replace(
                session, version=version, state=change.state, live=live, updated_at=change.at
            )
            record.batches.extend(change.batches)
            record.history.extend(change.record)
            heads = claimed = False
            if change.messages:
                kept, _ = self._outboxes.get(session_id, ([], 0.0))
                heads = not kept
                kept.extend(change.messages)
                if change.plan is not None:
                    claimed = self.outbox_schedule.plan(session_id, change.plan, not heads)
                until = time.monotonic() + max(self.ttl, self.outbox_ttl)
                self._outboxes[session_id] = (kept, until)
            if change.ended:
                record.history[0] = change.ended
                self._finished[session_id] = (record.history, time.monotonic() + self.record_ttl)
            if change.key is not None and change.answer is not None:
                record.answers[change.key] = change.answer
            commit = Commit(Outcome.APPLIED, version, None, epoch, heads, claimed)
            record.applied.appendleft((change.nonce, commit))
            return commit

    def answer(self, session_id: str, key: str) -> str | None:
        with self._lock:
            record = self._live(session_id)
            return record.answers.get(key) if record else None

    def remember_creation(self, key: str, hold: str, seconds: float) -> str | None:
        with self._lock:
            earlier = self._creations.get(key)
            now = time.monotonic()
            if earlier is not None and earlier[1] > now and earlier[0] != hold:
                if not earlier[0].startswith(HOLD):
                    self._creations[key] = (earlier[0], self._deadline())
                return earlier[0]
            self._creations[key] = (hold, now + seconds)
            return None

    def settle_creation(self, key: str, hold: str, answer: str | None) -> None:
        with self._lock:
            kept = self._creations.get(key)
            if kept is None or kept[0] != hold or kept[1] <= time.monotonic():
                return
            if answer is None:
                del self._creations[key]
            else:
                self._creations[key] = (answer, self._deadline())

    def forget_creation(self, key: str) -> None:
        with self._lock:
            self._creations.pop(key, None)

    def events(self, session_id: str, after: int) -> list[str] | None:
        with self._lock:
            record = self._live(session_id)
            return None if record is None else record.batches[after:]

    def delete(self, session_id: str) -> bool:
        with self._lock:
            if self._live(session_id) is None:
                return False
            del self._records[session_id]
            return True

    def exists(self, session_id: str) -> bool:
        with self._lock:
            record = self._records.get(session_id)
            return record is not None and record.expires > time.monotonic()

    def record(self, session_id: str) -> list[str] | None:
        with self._lock:
            record = self._live(session_id)
            if record is not None:
                return list(record.history) or None
            items, until = self._finished.get(session_id, ([], 0.0))
            return list(items) if until > time.monotonic() else None

    def outbox(self, session_id: str) -> list[str]:
        with self._lock:
            kept, until = self._outboxes.get(session_id, ([], 0.0))
            return kept[:OUTBOX_READ] if until > time.monotonic() else []

    def outbox_settle(self, settles: Sequence[Settle]) -> list[list[str]]:
        with self._lock:
            return [self._settled(settle) for settle in settles]

    def _settled(self, settle: Settle) -> list[str]:
        kept, _ = self._outboxes.get(settle.session_id, ([], 0.0))
        read = kept[: settle.done]
        if settle.last in read:  # else another deliverer has settled it already
            del kept[: read.index(settle.last) + 1]
        if settle.failed and kept and kept[0] == settle.failed:
            kept[0] = settle.retry
        if not kept:
            self._outboxes.pop(settle.session_id, None)
        return kept[:OUTBOX_READ]

    def owned(
        self, owner: str, after: tuple[float, str] | None, count: int
    ) -> list[tuple[float, str]]:
        with self._lock:
            listed = sorted(
                (
                    (created, session_id)
                    for session_id, created in self._owned.get(owner, {}).items()
                ),
                reverse=True,
            )
        return [entry for entry in listed if after is None or entry < after][:count]

    def disown(self, owner: str, session_ids: list[str]) -> None:
        with self._lock:
            kept = self._owned.get(owner, {})
            for session_id in session_ids:
                kept.pop(session_id, None)

    def peek(self, session_ids: list[str]) -> list[Session | None]:
        now = time.monotonic()
        with self._lock:
            found = [self._records.get(session_id) for session_id in session_ids]
            return [r.session if r is not None and r.expires > now else None for r in found]

    def ready(self) -> bool:
        return True

    def close(self) -> None:
        """Nothing to release: the sessions live and die with this process."""

    def _opened(self, session_id: str, change: Change) -> Record:
        """A new session's record, at the version its first change expects."""
        assert change.new is not None
        self._forget_expired()
        new = change.new
        session = Session(
            session_id, new.game, change.expected_version, change.state, new.seats, meta=new.meta
        )
        if new.owner is not None:
            self._owned.setdefault(new.owner, {})[session_id] = new.created_at
        record = self._records[session_id] = Record(session, self._deadline())
        return record

    def _deadline(self) -> float:
        return time.monotonic() + self.ttl

    def _live(self, session_id: str) -> Record | None:
        """The session's record with its TTL refreshed, or None once it has expired."""
        record = self._records.get(session_id)
        if record is None:
            return None
        if record.expires <= time.monotonic():
            del self._records[session_id]
            return None
        record.expires = self._deadline()
        return record

    def _forget_expired(self) -> None:
        """Drop what expired unseen; at most once a minute, so creating stays cheap."""
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + min(self.ttl, 60.0)
        for session_id in [k for k, r in self._records.items() if r.expires <= now]:
            del self._records[session_id]
        for key in [k for k, (_, expires) in self._creations.items() if expires <= now]:
            del self._creations[key]
        for kept in (self._finished, self._outboxes):
            for key in [k for k, (_, until) in kept.items() if until <= now]:
                del kept[key]


class MemorySchedule(Schedule):
    def __init__(self) -> None:
        self._due: dict[str, float] = {}
        self._lock = threading.Lock()

    def plan(self, session_id: str, deadline: float, only_new: bool = False) -> bool:
        """As Schedule.plan; with `only_new`, only a session not planned yet: whether it is
        planned now."""
        with self._lock:
            if only_new and session_id in self._due:
                return False
            self._due[session_id] = deadline
            return True

    def claim(self, now: float, lease: float) -> list[tuple[str, float]]:
        with self._lock:
            due = [session_id for session_id, at in self._due.items() if at <= now]
            for session_id in due:
                self._due[session_id] = now + lease
            return [(session_id, now + lease) for session_id in due]

    def settle(self, session_id: str, mark: float, deadline: float | None) -> None:
        with self._lock:
            if self._due.get(session_id) != mark:
                return
            if deadline is None:
                del self._due[session_id]
            else:
                self._due[session_id] = deadline

    def close(self) -> None:
        """Nothing to release: the schedule lives and dies with this process."""
