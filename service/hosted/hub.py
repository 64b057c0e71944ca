"""The readers of this process that wait on sessions (long polls, event streams): their
admission, their wake-ups and the events they are handed.

A reader waits on an in-process condition, never on a Redis connection of its own. What
wakes it is the facts of a commit of this process (which carry the new versions' events),
or with Redis one subscription per process to the `changed` channels of the sessions its
readers follow, on which the commit script publishes the new version. The new versions'
events are then read
from the store once, by the first reader to wake, and handed to every reader of that
session in this process: a commit costs one read here whatever the number of readers.

Readers are capped: at most `max_per_token` per token (then 429; with Redis, counted over
every process, each reader holding a lease its process renews, so that the places of a
process that died lapse), `max_per_address` per client address in this process (then 429:
one client holding many tokens, its sessions' and their spectators', cannot take every place
for itself) and `max_waiters` in this process (then 503), so waiting readers can never take
the connections a move needs.
"""

import contextlib
import itertools
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import redis

from engine.game import Events
from service.errors import KINDS
from service.hosted.commit import Facts
from service.hosted.problems import Busy
from service.hosted.records import Record
from service.logs import Outage
from service.store import RedisStore, SessionStore, StoreUnavailable
from service.store.redis_store import UNREACHABLE

if TYPE_CHECKING:
    from service.hosted.timers import Timers

log = logging.getLogger("service.live")

SHARED_VERSIONS = 64  # the latest versions' events a session's readers share, at most
# Readers' ids: this process's own mark (pids repeat across hosts and restarts), then a count.
PROCESS = secrets.token_hex(8)
READERS = itertools.count()


@dataclass
class Followed:
    """One session as this process's readers follow it: `batches` holds the events of the
    versions after `first` (None: nothing shared yet), `announced` the latest version the
    store announced, which the shared batches may not reach yet."""

    changed: threading.Condition
    fetching: threading.Lock = field(default_factory=threading.Lock)
    watchers: int = 0
    generation: int = 0
    ended: bool = False
    first: int | None = None
    batches: list[Events] = field(default_factory=list)
    announced: int = 0
    # When the session next needs the server (its turn timer, resumed server play) as of
    # version `deadline_of`.
    deadline: float | None = None
    deadline_of: int = -1

    def learn(self, version: int, deadline: float | None) -> None:
        """When the session needs the server at `version`, unless a later one is known."""
        if version >= self.deadline_of:
            self.deadline, self.deadline_of = deadline, version

    @property
    def end(self) -> int:
        return (self.first or 0) + len(self.batches)

    def share(self, first: int, batches: list[Events]) -> None:
        """Batches that continue (or start) what the readers share."""
        if self.first is None:
            self.first, self.batches = first, []
        elif first != self.end:
            return
        self.batches.extend(batches)
        excess = len(self.batches) - SHARED_VERSIONS
        if excess > 0:
            del self.batches[:excess]
            self.first += excess


@dataclass
class Watch:
    """One reader's watch on one session."""

    hub: "Hub"
    session_id: str
    followed: Followed
    seen: int = 0

    def wait(self, timeout: float) -> bool:
        """Whether the session changed since the watch began or the last wait (False: the
        timeout passed first)."""
        with self.hub.lock:
            if self.followed.generation == self.seen and timeout > 0:
                self.followed.changed.wait(timeout)
            changed = self.followed.generation != self.seen
            self.seen = self.followed.generation
            return changed

    def due_in(self, now: float) -> float | None:
        """Seconds until the session next needs the server (None: never)."""
        deadline = self.followed.deadline
        return None if deadline is None else max(0.0, deadline - now)

    def fire_if_due(self, timers: "Timers") -> None:
        """Fire the session's timer (or resume its server play) when it is due: one reader
        of this process does, the others find it done (or, when the store is unreachable,
        try at their next wait)."""
        followed = self.followed
        with followed.fetching:
            if followed.deadline is not None and timers.clock() >= followed.deadline:
                followed.deadline = timers.fire(self.session_id)

    def news(self, after: int) -> list[Events] | None:
        """The events of each version after `after` (None: the session ended): from what
        this session's readers share, read once for all of them when it falls behind."""
        followed, store, lock = self.followed, self.hub.store, self.hub.lock
        with followed.fetching:
            with lock:
                if followed.ended:
                    return None
                shared = followed.first is not None and followed.first <= after
                start = followed.end if shared else after
                if shared and start >= max(followed.announced, after):
                    return followed.batches[after - followed.first :]
            # Behind what was announced (one read for every reader), or a reader catching
            # up from before what is shared (a read of its own).
            read = store.events(self.session_id, start)
            with lock:
                if read is None:
                    followed.ended = shared
                    return None
                batches = [orjson.loads(batch) for batch in read]
                followed.share(start, batches)
                if not shared:
                    return batches
                if followed.first is not None and followed.first <= after:
                    return followed.batches[after - followed.first :]
        # What is shared moved on past this reader's versions meanwhile: it reads its own.
        own = store.events(self.session_id, after)
        return None if own is None else [orjson.loads(batch) for batch in own]


# Every hub of this process, for drain_hubs() when the worker stops.
HUBS: "weakref.WeakSet[Hub]" = weakref.WeakSet()


def drain_hubs() -> None:
    """The worker is stopping: every waiting reader of this process answers now."""
    for hub in list(HUBS):
        hub.drain()


class Hub:
    """This base class is woken by the commits of this process alone (the in-process store)."""

    def __init__(
        self, store: SessionStore, max_waiters: int, max_per_token: int,
        max_per_address: int | None = None,
    ) -> None:  # fmt: skip
        self.store = store
        self.max_waiters = max_waiters
        self.max_per_token = max_per_token
        self.max_per_address = max_per_address  # None: no cap of its own
        self.lock = threading.Lock()
        self._followed: dict[str, Followed] = {}
        self._holders: dict[str, int] = {}  # token digest -> its readers waiting here
        self._addresses: dict[str, int] = {}  # client address -> its readers waiting here
        self._waiting = 0
        self.draining = False
        HUBS.add(self)

    @contextmanager
    def watching(self, record: Record, holder: str, address: str = "") -> Iterator[Watch]:
        """A watch on the session for as long as the block runs, for a reader holding the
        token whose digest is `holder`, from the client `address`: take it before reading
        the session's events, so no change after the read can go unnoticed. 429 or 503 when
        the caps are reached."""
        session_id = record.id
        self._admit_address(address)
        try:
            reader = self._admit(holder)
        except BaseException:
            self._leave_address(address)
            raise
        try:
            self.started()
            with self.lock:
                followed = self._followed.get(session_id)
                first = followed is None
                if followed is None:
                    followed = self._followed[session_id] = Followed(threading.Condition(self.lock))
                followed.watchers += 1
                followed.learn(record.version, record.live.due_at)
                watch = Watch(self, session_id, followed, followed.generation)
            try:
                if first:
                    self.tune(session_id)
                yield watch
            finally:
                with self.lock:
                    followed.watchers -= 1
                    last = not followed.watchers
                    if last:
                        del self._followed[session_id]
                if last:
                    self.tune(session_id)
        finally:
            self._leave(holder, reader)
            self._leave_address(address)

    def _admit_address(self, address: str) -> None:
        """A place for a reader from the client `address` in this process, else a 429."""
        if self.max_per_address is None:
            return
        with self.lock:
            if self._addresses.get(address, 0) >= self.max_per_address:
                raise Busy(
                    KINDS["too-many-readers"],
                    f"this client address has {self.max_per_address} streams and long polls "
                    "open already; close one first",
                )
            self._addresses[address] = self._addresses.get(address, 0) + 1

    def _leave_address(self, address: str) -> None:
        if self.max_per_address is None:
            return
        with self.lock:
            self._addresses[address] -= 1
            if not self._addresses[address]:
                del self._addresses[address]

    def _admit(self, holder: str) -> str:
        """A place for a reader of the token whose digest is `holder`: its id."""
        with self.lock:
            if self._holders.get(holder, 0) >= self.max_per_token:
                raise self.too_many_readers()
            if self._waiting >= self.max_waiters:
                raise Busy(
                    KINDS["server-busy"],
                    "this server has as many waiting readers as it takes; retry",
                )
            self._holders[holder] = self._holders.get(holder, 0) + 1
            self._waiting += 1
        return f"{PROCESS}:{next(READERS)}"

    def too_many_readers(self) -> Busy:
        return Busy(
            KINDS["too-many-readers"],
            f"this token has {self.max_per_token} streams and long polls open already; "
            "close one first",
        )

    def _leave(self, holder: str, reader: str) -> None:
        with self.lock:
            self._waiting -= 1
            self._holders[holder] -= 1
            if not self._holders[holder]:
                del self._holders[holder]

    def committed(self, facts: Facts) -> None:
        """A follower of this process's commits: their events are shared as they are."""
        with self.lock:
            followed = self._followed.get(facts.session_id)
            if followed is None:
                return
            followed.share(facts.first_version, [moved.events for moved in facts.moved])
            followed.announced = max(followed.announced, facts.version)
            followed.learn(facts.version, facts.due_at)
            self._wake(followed)

    def announced(self, session_id: str, version: int, deadline: float | None) -> None:
        """The store says the session is at `version` now, needing the server next at
        `deadline`."""
        with self.lock:
            followed = self._followed.get(session_id)
            if followed is not None:
                followed.announced = max(followed.announced, version)
                followed.learn(version, deadline)
                self._wake(followed)

    def ended(self, session_id: str) -> None:
        """The session was deleted."""
        with self.lock:
            followed = self._followed.get(session_id)
            if followed is not None:
                followed.ended = True
                self._wake(followed)

    def changed_everywhere(self) -> None:
        """What changed is unknown: every reader reads its session again."""
        with self.lock:
            for followed in self._followed.values():
                self._unknown(followed)

    def changed_unheard(self, session_id: str) -> None:
        """What changed in the session until now is unknown: its readers read it again."""
        with self.lock:
            followed = self._followed.get(session_id)
            if followed is not None:
                self._unknown(followed)

    @classmethod
    def _unknown(cls, followed: Followed) -> None:
        followed.first, followed.batches = None, []
        cls._wake(followed)

    @staticmethod
    def _wake(followed: Followed) -> None:
        followed.generation += 1
        followed.changed.notify_all()

    def waiting(self) -> int:
        """How many readers wait in this process."""
        with self.lock:
            return self._waiting

    def started(self) -> None:
        """Ready to deliver wake-ups (nothing to start in-process)."""

    def tune(self, session_id: str) -> None:
        """Whether this process follows the session changed (nothing to do in-process)."""

    def drain(self) -> None:
        """The worker is stopping: wake every reader; a long poll then answers what it has
        and a stream closes (its client resumes on a live worker with Last-Event-ID)."""
        self.draining = True
        self.changed_everywhere()

    def close(self) -> None:
        """Wake everyone; nothing to release in-process."""
        self.changed_everywhere()


class RedisHub(Hub):
    """Wake-ups from Redis too: one connection per process, subscribed to the `changed`
    channel of each session this process's readers follow, for as long as they do; a
    listener thread (a greenlet under gevent) turns each message into `announced` or
    `ended` for those readers. Only those: a subscription to every session's channel cost
    every worker a wake-up, a read and a parse on every commit of any worker, readers or
    none (docs/benchmarks.md)."""

    RECONNECT_SECONDS = 0.5
    # The subscription is pinged this often, and taken for dead when nothing (not even the
    # PONG) came back for SILENT_SECONDS: a Redis that hangs (stopped, cut off by the
    # network) rather than closing its sockets sends nothing, and under Sentinel only a new
    # connection finds the replica promoted in its place.
    PING_SECONDS = 1.0
    SILENT_SECONDS = 3.0
    # A reader's place in its token's count over every process lapses this long after its
    # process last renewed it (a third of it apart): the places of a process that died.
    LEASE_SECONDS = 30.0
    # How long a new reader waits for the subscription to hold (Redis down: it goes on, and
    # its own store call fails fast as a 503).
    SUBSCRIBE_SECONDS = 1.5

    def __init__(
        self,
        store: SessionStore,
        max_waiters: int,
        max_per_token: int,
        subscriber: Callable[[], Any],
        channel_of: Callable[[str], str],
        session_of: Callable[[str], str | None],
        max_per_address: int | None = None,
    ) -> None:
        """`channel_of` names a session's `changed` channel, `session_of` the session of
        such a name (None for any other name)."""
        super().__init__(store, max_waiters, max_per_token, max_per_address)
        self.subscriber = subscriber
        self.channel_of = channel_of
        self.session_of = session_of
        # This process's own channel, on which nobody publishes: the connection is in
        # subscribed mode from the start, and its confirmation says the listener hears.
        self.own_channel = f"cards:{{hub}}:{PROCESS}"
        self._pubsub: Any = None  # the listener's subscription, None while it has none
        self._channels: set[str] = set()  # sessions subscribed to on it
        self._tuning = threading.Lock()  # one subscription change at a time, in order
        self._listener: threading.Thread | None = None
        self._subscribed = threading.Event()
        self._stopping = threading.Event()
        self._start_lock = threading.Lock()
        self.outage = Outage(log, "live hub")
        self._leases: dict[str, str] = {}  # reader -> holder: this process's counted readers
        self._renewer: threading.Thread | None = None

    def _admit(self, holder: str) -> str:
        """This process's own caps, then the token's count over every process (Redis out
        of reach: this process's cap alone; the reader's own reads then fail fast)."""
        reader = super()._admit(holder)
        assert isinstance(self.store, RedisStore)
        try:
            counted = self.store.admit_reader(holder, reader, self.max_per_token,
                                              self.LEASE_SECONDS)  # fmt: skip
        except StoreUnavailable:
            return reader
        except BaseException:
            super()._leave(holder, reader)
            raise
        if not counted:
            super()._leave(holder, reader)
            raise self.too_many_readers()
        with self.lock:
            self._leases[reader] = holder
        return reader

    def _leave(self, holder: str, reader: str) -> None:
        super()._leave(holder, reader)
        with self.lock:
            counted = self._leases.pop(reader, None) is not None
        if counted:
            assert isinstance(self.store, RedisStore)
            with contextlib.suppress(StoreUnavailable):  # else its lease lapses
                self.store.release_reader(holder, reader)

    def _renew(self) -> None:
        assert isinstance(self.store, RedisStore)
        while not self._stopping.wait(self.LEASE_SECONDS / 3):
            with self.lock:
                leases = [(holder, reader) for reader, holder in self._leases.items()]
            if leases:
                with contextlib.suppress(StoreUnavailable):  # the next round tries again
                    self.store.renew_readers(leases, self.LEASE_SECONDS)

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
                    self._renewer = threading.Thread(
                        target=self._renew, name="live-hub-leases", daemon=True
                    )
                    self._renewer.start()
        self._subscribed.wait(self.SUBSCRIBE_SECONDS)

    def close(self) -> None:
        self._stopping.set()
        super().close()

    def tune(self, session_id: str) -> None:
        """Subscribe to the session's channel while this process follows it, unsubscribe
        when it no longer does. Each call does what the session's state then asks, under
        one lock, so that a reader leaving and another arriving end subscribed, in any
        order. A commit before the subscription holds is heard by nobody here: its
        confirmation makes the session's readers read it again (_relay)."""
        with self._tuning:
            with self.lock:
                wanted = session_id in self._followed
            pubsub = self._pubsub
            if pubsub is None or wanted == (session_id in self._channels):
                return  # no subscription: the listener's next one takes every followed
            try:
                if wanted:
                    pubsub.subscribe(self.channel_of(session_id))
                    self._channels.add(session_id)
                else:
                    pubsub.unsubscribe(self.channel_of(session_id))
                    self._channels.discard(session_id)
            except UNREACHABLE:
                pass  # the listener finds the connection lost, and subscribes anew

    def _listen(self) -> None:
        while not self._stopping.is_set():
            client = self.subscriber()
            try:
                with client.pubsub(ignore_subscribe_messages=False) as pubsub:
                    with self._tuning:
                        with self.lock:
                            followed = set(self._followed)
                        channels = [self.channel_of(session_id) for session_id in followed]
                        pubsub.subscribe(self.own_channel, *channels)
                        self._pubsub, self._channels = pubsub, followed
                    try:
                        self._relay(pubsub)
                    finally:  # before the subscription is reset: a reset one would reconnect
                        with self._tuning:
                            self._pubsub, self._channels = None, set()
            except UNREACHABLE as error:
                self.outage.failed(error)
            except Exception:  # anything else must not end the listener for good: this
                # process's readers would then only ever wake at the end of their waits
                log.exception("live hub: the listener failed; it subscribes again")
            finally:
                self._subscribed.clear()
                client.close()
            # Whatever was published while unsubscribed is unknown: every reader looks again.
            self.changed_everywhere()
            self._stopping.wait(self.RECONNECT_SECONDS)

    def _relay(self, pubsub: Any) -> None:
        heard = pinged = time.monotonic()
        while not self._stopping.is_set():
            message = pubsub.get_message(timeout=self.PING_SECONDS)
            now = time.monotonic()
            if message is None:
                if now - heard > self.SILENT_SECONDS:
                    raise redis.exceptions.ConnectionError(
                        f"the subscription has been silent for {self.SILENT_SECONDS} s"
                    )
                if now - pinged >= self.PING_SECONDS:
                    pubsub.ping()
                    pinged = now
                continue
            heard = now
            if message["type"] not in ("subscribe", "message"):
                continue
            channel = text(message["channel"])
            if message["type"] == "subscribe" and channel == self.own_channel:
                self.outage.succeeded()
                self._subscribed.set()
                self.changed_everywhere()
                continue
            session_id = self.session_of(channel)
            if session_id is None:
                continue
            if message["type"] == "subscribe":
                self.changed_unheard(session_id)
            else:
                version, _, deadline = text(message["data"]).partition(" ")
                if version.isdigit():
                    self.announced(session_id, int(version), float(deadline) if deadline else None)
                else:
                    self.ended(session_id)


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
