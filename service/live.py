"""Live play around a hosted session: its live record (turn timer, absent seats, spectator
tokens), the wake-ups that tell waiting readers a session changed, and the schedule of turn
deadlines that a per-process scanner fires.

Wake-ups: every reader waiting on a session in this process (a long poll, an event stream)
waits on an in-process condition; what wakes them is, without Redis, the commit itself, and
with Redis one pattern subscription per process on the sessions' `changed` channels (which
the commit script publishes on), fanned out here. So a waiting client costs a greenlet and a
socket, never a Redis connection of its own.
"""

import logging
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson
import redis
from redis.cluster import RedisCluster

from service.store.redis_store import reachable

log = logging.getLogger("service.live")

Clock = Callable[[], float]  # seconds since the epoch (deadlines are wall-clock times)

MAX_SPECTATORS = 16
DEFAULT_TIMEOUT_LEVEL = "greedy"


@dataclass(frozen=True, slots=True)
class Live:
    """What a session keeps beside its game state for live play."""

    turn_seconds: int | None = None
    timeout_level: str = DEFAULT_TIMEOUT_LEVEL
    absent_after: int | None = None
    spectators: tuple[str, ...] = ()  # SHA-256 of each spectator token
    deadline: float | None = None  # when the seat to move runs out of time (epoch seconds)
    timeouts: tuple[int, ...] = ()  # per seat: timeouts in a row
    absent: tuple[int, ...] = ()
    time_bank: int | None = None  # seconds each seat may spend beyond turn_seconds in all
    banks: tuple[float, ...] = ()  # per seat: what is left of its time bank
    turn_began: float | None = None  # when the seat to move was given its turn
    # Server play (bots, absent seats) left over by a bounded step: due at once, continued
    # by the next timer scan or reader through the same compare-and-set.
    resume_at: float | None = None

    @property
    def due_at(self) -> float | None:
        """When the session next needs the server: its turn deadline or its resumed play."""
        if self.resume_at is None:
            return self.deadline
        return self.resume_at if self.deadline is None else min(self.deadline, self.resume_at)

    def bank_of(self, seat: int) -> float:
        """What is left of `seat`'s time bank (0 without one)."""
        return self.banks[seat] if seat < len(self.banks) else 0.0

    def spent(self, seat: int, now: float) -> "Live":
        """`seat` moved at `now`: the time beyond turn_seconds comes out of its bank."""
        if not self.banks or self.turn_began is None or self.turn_seconds is None:
            return self
        over = max(0.0, now - self.turn_began - self.turn_seconds)
        banks = list(self.banks)
        banks[seat] = round(max(0.0, banks[seat] - over), 3)
        return replace(self, banks=tuple(banks))

    @classmethod
    def loads(cls, text: str) -> "Live":
        data = orjson.loads(text or "{}")
        for name in ("spectators", "timeouts", "absent"):
            data[name] = tuple(data.get(name, ()))
        return cls(**data)

    def dumps(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    def timed_out(self, seat: int, seats: int) -> "Live":
        """One more timeout of `seat` in a row; absent once there are `absent_after`."""
        timeouts = list(self.timeouts or (0,) * seats)
        timeouts[seat] += 1
        absent = set(self.absent)
        if self.absent_after is not None and timeouts[seat] >= self.absent_after:
            absent.add(seat)
        banks = list(self.banks)
        if banks:
            banks[seat] = 0.0  # its time ran out: its bank with it
        return replace(
            self, timeouts=tuple(timeouts), absent=tuple(sorted(absent)), banks=tuple(banks)
        )

    def present(self, seat: int) -> "Live":
        """`seat` moved or used its token: present, its run of timeouts over."""
        timeouts = list(self.timeouts)
        if seat < len(timeouts):
            timeouts[seat] = 0
        return replace(
            self, timeouts=tuple(timeouts), absent=tuple(s for s in self.absent if s != seat)
        )


def rfc3339(moment: float | None) -> str | None:
    """An epoch time as an RFC 3339 UTC timestamp to the millisecond."""
    if moment is None:
        return None
    text = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


# -- wake-ups ------------------------------------------------------------------------------


@dataclass
class Watched:
    changed: threading.Condition
    generation: int = 0
    watchers: int = 0


@dataclass
class Watch:
    """One reader's watch on one session: `wait` returns once the session changed since the
    watch began or since the last `wait`, or after the timeout."""

    hub: "Hub"
    session_id: str
    watched: Watched
    seen: int = field(default=0)

    def wait(self, timeout: float) -> bool:
        """Whether the session changed (False: the timeout passed first)."""
        with self.hub.lock:
            if self.watched.generation == self.seen and timeout > 0:
                self.watched.changed.wait(timeout)
            changed = self.watched.generation != self.seen
            self.seen = self.watched.generation
            return changed


# Every hub of this process, for drain_hubs() when the worker stops.
HUBS: "weakref.WeakSet[Hub]" = weakref.WeakSet()


def drain_hubs() -> None:
    """The worker is stopping: every waiting reader of this process answers now."""
    for hub in list(HUBS):
        hub.drain()


class Hub:
    """Wakes the readers of this process that wait on a session. This base class is fed by
    the commits of this process alone (the in-process store)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._watched: dict[str, Watched] = {}
        self.draining = False
        HUBS.add(self)

    @contextmanager
    def watching(self, session_id: str) -> Iterator[Watch]:
        """A watch on the session for as long as the block runs: take it before reading the
        session, so no change after the read can go unnoticed."""
        self.started()
        with self.lock:
            watched = self._watched.get(session_id)
            if watched is None:
                watched = self._watched[session_id] = Watched(threading.Condition(self.lock))
            watched.watchers += 1
            watch = Watch(self, session_id, watched, watched.generation)
        try:
            yield watch
        finally:
            with self.lock:
                watched.watchers -= 1
                if not watched.watchers:
                    del self._watched[session_id]

    def changed(self, session_id: str) -> None:
        """Wake the readers of one session."""
        with self.lock:
            watched = self._watched.get(session_id)
            if watched is not None:
                watched.generation += 1
                watched.changed.notify_all()

    def changed_everywhere(self) -> None:
        """Wake every reader (each reads its session again)."""
        with self.lock:
            for watched in self._watched.values():
                watched.generation += 1
                watched.changed.notify_all()

    def committed(self, session_id: str) -> None:
        """This process committed a change to the session (or ended it)."""
        self.changed(session_id)

    def waiting(self) -> int:
        """How many readers wait in this process."""
        with self.lock:
            return sum(watched.watchers for watched in self._watched.values())

    def started(self) -> None:
        """Ready to deliver wake-ups (nothing to start in-process)."""

    def drain(self) -> None:
        """The worker is stopping: wake every reader; a long poll then answers what it has
        and a stream closes (its client resumes on a live worker with Last-Event-ID)."""
        self.draining = True
        self.changed_everywhere()

    def close(self) -> None:
        """Wake everyone; nothing to release in-process."""
        self.changed_everywhere()


class RedisHub(Hub):
    """Wake-ups from Redis: one connection per process subscribed to every session's
    `changed` channel by pattern; a listener thread (a greenlet under gevent) fans each
    message out to this process's readers of that session."""

    RECONNECT_SECONDS = 0.5
    # How long a new reader waits for the subscription to hold (Redis down: it goes on, and
    # its own store call fails fast as a 503).
    SUBSCRIBE_SECONDS = 1.5

    def __init__(self, url: str, pattern: str, session_of: Callable[[str], str | None]) -> None:
        super().__init__()
        self.url = url
        self.pattern = pattern
        self.session_of = session_of
        self._listener: threading.Thread | None = None
        self._subscribed = threading.Event()
        self._stopping = threading.Event()
        self._start_lock = threading.Lock()

    def committed(self, session_id: str) -> None:
        """The commit published on the session's channel; the listener wakes the readers."""

    def started(self) -> None:
        """Start the listener (once, in the process that uses it: never before a fork) and
        wait until its subscription holds, so no later commit can be missed."""
        if self._listener is None:
            with self._start_lock:
                if self._listener is None:
                    self._listener = threading.Thread(
                        target=self._listen, name="live-hub", daemon=True
                    )
                    self._listener.start()
        self._subscribed.wait(self.SUBSCRIBE_SECONDS)

    def close(self) -> None:
        self._stopping.set()
        super().close()

    def _listen(self) -> None:
        while not self._stopping.is_set():
            client = redis.Redis.from_url(self.url, socket_connect_timeout=2.0)
            try:
                with client.pubsub(ignore_subscribe_messages=False) as pubsub:
                    pubsub.psubscribe(self.pattern)
                    self._relay(pubsub)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as error:
                log.warning("live hub lost Redis, reconnecting: %s", error)
            finally:
                self._subscribed.clear()
                client.close()
            # Whatever was published while unsubscribed is unknown: every reader looks again.
            self.changed_everywhere()
            self._stopping.wait(self.RECONNECT_SECONDS)

    def _relay(self, pubsub: Any) -> None:
        while not self._stopping.is_set():
            message = pubsub.get_message(timeout=1.0)
            if message is None:
                continue
            if message["type"] == "psubscribe":
                self._subscribed.set()
                self.changed_everywhere()
            elif message["type"] == "pmessage":
                channel = message["channel"]
                name = channel.decode() if isinstance(channel, bytes) else channel
                session_id = self.session_of(name)
                if session_id is not None:
                    self.changed(session_id)


# -- the schedule of deadlines ----------------------------------------------------------------


class Schedule(ABC):
    """When each session's turn timer runs out. Only a hint of when to look: the session's
    live record decides, and a timeout is committed with the version compare-and-set."""

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


class MemorySchedule(Schedule):
    def __init__(self) -> None:
        self._due: dict[str, float] = {}
        self._lock = threading.Lock()

    def plan(self, session_id: str, deadline: float) -> None:
        with self._lock:
            self._due[session_id] = deadline

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


# KEYS: the schedule. ARGV: now ms, lease ms, most. Returns the claimed ids.
CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local mark = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], mark, id) end
return due
"""

# KEYS: the schedule. ARGV: id, mark ms, next deadline ms ('' for none).
SETTLE = """
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
"""


def ms(seconds: float) -> int:
    return round(seconds * 1000)


class RedisSchedule(Schedule):
    """A sorted set of session ids by deadline (ms), shared by every process."""

    KEY = "cards:{timers}:deadlines"
    MOST = 200  # claimed per scan

    def __init__(self, url: str, cluster: bool = False, timeout: float = 1.5) -> None:
        kind = RedisCluster if cluster else redis.Redis
        self.client = kind.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._claim = self.client.register_script(CLAIM)
        self._settle = self.client.register_script(SETTLE)

    def plan(self, session_id: str, deadline: float) -> None:
        with reachable():
            self.client.zadd(self.KEY, {session_id: ms(deadline)})

    def claim(self, now: float, lease: float) -> list[tuple[str, float]]:
        mark = ms(now) + ms(lease)
        with reachable():
            due = self._claim(keys=[self.KEY], args=[ms(now), ms(lease), self.MOST])
        return [(session_id.decode(), mark / 1000) for session_id in due]

    def settle(self, session_id: str, mark: float, deadline: float | None) -> None:
        later = "" if deadline is None else ms(deadline)
        with reachable():
            self._settle(keys=[self.KEY], args=[session_id, ms(mark), later])

    def close(self) -> None:
        self.client.close()
