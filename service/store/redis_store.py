"""The Redis store: hosted sessions shared by every worker process and host.

Key layout (one hash tag per session, so all its keys live on one Redis Cluster slot):

    cards:{<id>}:session        hash: game, version, state (JSON), seats (JSON, token hashes),
                                epoch, incarnation (run id of the Redis that last touched it)
    cards:{<id>}:events         list: item i holds the JSON events of version i + 1
    cards:{<id>}:answers        hash: Idempotency-Key digest -> stored answer of a move
    cards:{<id>}:changed        pub/sub channel: a message per commit and on delete
    cards:{create:<digest>}     string: stored answer of a session creation

Every key of a session carries the idle TTL and every access refreshes all of them, so the
stored answers expire with their session. A move is one Lua script (`COMMIT`): it checks
the version, writes the state, appends the events, keeps the answer, refreshes the TTL and
publishes on the session's channel, all atomically. Connection and timeout errors become
StoreUnavailable; redis-py reconnects by itself once the server is back.

On a Redis Cluster (REDIS_CLUSTER) the same keys, scripts and channels serve: every key a
script or a MULTI touches carries the session's hash tag, so one session lives on one slot
of one master, and sessions spread over the masters by id. A creation's answer has a tag of
its own (its key's digest): it is one key alone. PUBLISH reaches every node of a cluster.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.store.base import Change, Commit, Outcome, Session, SessionStore, StoreUnavailable

# A hung Redis (paused, swapping, a network partition) turns a request into a 503 after one
# socket timeout: a timeout is never retried, since the same server will not answer the
# retry sooner. Only a dropped connection is retried once, at once, on a fresh one (a
# restarted Redis, an idle connection the server closed). Settings REDIS_TIMEOUT_SECONDS and
# READY_GRACE_SECONDS; these are their defaults.
SOCKET_TIMEOUT = 1.5
CONNECT_TIMEOUT = 1.0
# /readyz answers 503 only once Redis has failed every probe for this long: every replica
# shares the one Redis, so a blip taking them all out of rotation at once would only add to it.
READY_GRACE = 5.0
# Each waiting long poll holds a pub/sub connection from the pool: room for gunicorn's
# worker_connections (1000 per gevent worker) and the commands running beside them.
MAX_CONNECTIONS = 4096

# What "not reachable now" looks like: the server is down or hung, or (on a cluster) a
# master's slots are being failed over or no node holds them yet.
UNREACHABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
    redis.exceptions.SlotNotCoveredError,
)

# A session's epoch: each session remembers the run id of the Redis process that last
# touched it (`incarnation`). A different one means Redis restarted from its files or a
# replica took over since, either of which may have lost the latest writes: the epoch grows.
EPOCH = """
local function incarnation()
  return string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
end
local function same_incarnation(key)
  local now = incarnation()
  if redis.call('HGET', key, 'incarnation') ~= now then
    redis.call('HSET', key, 'incarnation', now)
    return redis.call('HINCRBY', key, 'epoch', 1)
  end
  return tonumber(redis.call('HGET', key, 'epoch'))
end
"""

# KEYS: session, events, answers. ARGV: ttl ms. Returns the session hash, flat.
LOAD = (
    EPOCH
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
same_incarnation(KEYS[1])
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: session, events, answers. ARGV: expected version, state, ttl ms, channel,
# answer key ('' for none), answer, expected live ('' for any), live ('' to keep),
# expected epoch, batch... Returns {outcome, version, epoch[, answer]}.
COMMIT = (
    EPOCH
    + """
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return {'gone', 0, 0} end
local epoch = same_incarnation(KEYS[1])
if ARGV[5] ~= '' then
  local earlier = redis.call('HGET', KEYS[3], ARGV[5])
  if earlier then return {'replay', tonumber(version), epoch, earlier} end
end
if version ~= ARGV[1] or epoch ~= tonumber(ARGV[9]) then
  return {'stale', tonumber(version), epoch}
end
if ARGV[7] ~= '' and (redis.call('HGET', KEYS[1], 'live') or '{}') ~= ARGV[7] then
  return {'stale', tonumber(version), epoch}
end
local batches = #ARGV - 9
version = tonumber(version) + batches
redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[2])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'live', ARGV[8]) end
for i = 10, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[3]) end
redis.call('PUBLISH', ARGV[4], version)
return {'applied', version, epoch}
"""
)

# KEYS: session, events. ARGV: ttl ms, game, version, state, seats, live, batch...
CREATE = (
    EPOCH
    + """
redis.call('HSET', KEYS[1], 'game', ARGV[2], 'version', ARGV[3], 'state', ARGV[4],
           'seats', ARGV[5], 'live', ARGV[6], 'epoch', 0, 'incarnation', incarnation())
for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
"""
)

# KEYS: session, events, answers. ARGV: channel. Returns how many keys it deleted. A script
# rather than a MULTI: Redis Cluster clients refuse PUBLISH inside a pipeline.
DELETE = """
local deleted = redis.call('DEL', unpack(KEYS))
redis.call('PUBLISH', ARGV[1], 'deleted')
return deleted
"""

# KEYS: session, events, answers. ARGV: after, ttl ms. Returns false or the batches.
EVENTS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[2]) end
return redis.call('LRANGE', KEYS[2], ARGV[1], -1)
"""


def session_keys(session_id: str) -> list[str]:
    tag = f"cards:{{{session_id}}}"
    return [f"{tag}:session", f"{tag}:events", f"{tag}:answers"]


def channel(session_id: str) -> str:
    return f"cards:{{{session_id}}}:changed"


# Every session's channel, for one subscription per process (service.live.RedisHub).
CHANGED_PATTERN = "cards:{*}:changed"


def session_of_channel(name: str) -> str | None:
    """The session id in a channel's name, None for another name."""
    if name.startswith("cards:{") and name.endswith("}:changed"):
        return name[len("cards:{") : -len("}:changed")]
    return None


def creation_key(key: str) -> str:
    return f"cards:{{create:{key}}}"


@contextmanager
def reachable() -> Iterator[None]:
    """Redis errors that mean 'not reachable now' become StoreUnavailable."""
    try:
        yield
    except UNREACHABLE as error:
        raise StoreUnavailable(f"Redis is unavailable: {error}") from error


def client_options(timeout: float) -> dict[str, Any]:
    """redis-py settings for failing fast: one timeout, one retry on a dropped connection."""
    return {
        "decode_responses": True,
        "socket_timeout": timeout,
        "socket_connect_timeout": min(timeout, CONNECT_TIMEOUT),
        "retry": Retry(
            ExponentialBackoff(cap=0.2, base=0.02), 1, (redis.exceptions.ConnectionError,)
        ),
        # No CLIENT SETINFO on connecting: one round trip fewer for a fresh connection.
        "driver_info": None,
    }


class RedisStore(SessionStore):
    def __init__(
        self,
        url: str,
        ttl: float,
        ready_timeout: float = CONNECT_TIMEOUT,
        timeout: float = SOCKET_TIMEOUT,
        ready_grace: float = READY_GRACE,
        cluster: bool = False,
    ) -> None:
        """`url` names the server, or with `cluster` any one node of a Redis Cluster."""
        super().__init__(ttl)
        kind = RedisCluster if cluster else redis.Redis
        self.client = kind.from_url(url, max_connections=MAX_CONNECTIONS, **client_options(timeout))
        # Its own connection and short timeouts: a readiness probe must answer fast.
        self._probe = kind.from_url(
            url,
            socket_timeout=ready_timeout,
            socket_connect_timeout=ready_timeout,
            retry=Retry(NoBackoff(), 0),
            driver_info=None,
        )
        self.ready_grace = ready_grace
        self._failing_since: float | None = None  # the first of the probe's latest failures
        self._load = self.client.register_script(LOAD)
        self._commit = self.client.register_script(COMMIT)
        self._events = self.client.register_script(EVENTS)
        self._delete = self.client.register_script(DELETE)
        self._create = self.client.register_script(CREATE)
        self._draining = False
        self._waiting: dict[str, int] = {}  # channel -> long polls of this process on it
        self._waiting_lock = threading.Lock()

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    def create(self, session: Session, batches: tuple[str, ...] = ()) -> None:
        args = [self.ttl_ms, session.game, session.version, session.state, session.seats,
                session.live]  # fmt: skip
        with reachable():
            self._create(keys=session_keys(session.id)[:2], args=[*args, *batches])

    def load(self, session_id: str) -> Session | None:
        with reachable():
            flat = self._load(keys=session_keys(session_id), args=[self.ttl_ms])
        if not flat:
            return None
        fields = dict(zip(flat[::2], flat[1::2]))
        return Session(
            id=session_id,
            game=fields["game"],
            version=int(fields["version"]),
            state=fields["state"],
            seats=fields["seats"],
            live=fields.get("live", "{}"),
            epoch=int(fields["epoch"]),
        )

    def commit(self, session_id: str, change: Change) -> Commit:
        args: list[Any] = [
            change.expected_version,
            change.state,
            self.ttl_ms,
            channel(session_id),
            change.key or "",
            change.answer or "",
            change.expected_live or "",
            change.live or "",
            change.expected_epoch,
            *change.batches,
        ]
        with reachable():
            reply = self._commit(keys=session_keys(session_id), args=args)
        outcome, version, epoch = Outcome(reply[0]), int(reply[1]), int(reply[2])
        answer = reply[3] if outcome is Outcome.REPLAY else None
        return Commit(outcome, version, answer, epoch)

    def answer(self, session_id: str, key: str) -> str | None:
        with reachable():
            return self.client.hget(session_keys(session_id)[2], key)

    def remember_creation(self, key: str, answer: str) -> str | None:
        name = creation_key(key)
        with reachable(), self.client.pipeline(transaction=True) as pipe:
            pipe.set(name, answer, px=self.ttl_ms, nx=True)
            pipe.get(name)
            kept, stored = pipe.execute()
        return None if kept else stored

    def forget_creation(self, key: str) -> None:
        with reachable():
            self.client.delete(creation_key(key))

    def events(self, session_id: str, after: int, timeout: float) -> list[str] | None:
        batches = self._read_events(session_id, after)
        if batches != [] or timeout <= 0 or self._draining:
            return batches
        with reachable(), self._listening(channel(session_id)), self.client.pubsub() as pubsub:
            pubsub.subscribe(channel(session_id))
            # Only once the subscription is confirmed can no commit slip by unnoticed.
            self._await(pubsub, "subscribe", timeout)
            return self._wait_for_events(pubsub, session_id, after, timeout)

    def delete(self, session_id: str) -> bool:
        with reachable():
            deleted = self._delete(keys=session_keys(session_id), args=[channel(session_id)])
        return bool(deleted)

    def exists(self, session_id: str) -> bool:
        with reachable():
            return bool(self.client.exists(session_keys(session_id)[0]))

    def ready(self) -> bool:
        try:
            self._probe.ping()
        except UNREACHABLE:
            now = time.monotonic()
            if self._failing_since is None:
                self._failing_since = now
            return now - self._failing_since < self.ready_grace
        self._failing_since = None
        return True

    def drain(self) -> None:
        self._draining = True
        with self._waiting_lock:
            channels = list(self._waiting)
        for name in channels:
            try:
                self.client.publish(name, "drain")
            except UNREACHABLE:
                return  # a wait on an unreachable Redis fails on its own within its timeout

    def close(self) -> None:
        self.client.close()
        self._probe.close()

    def _read_events(self, session_id: str, after: int) -> list[str] | None:
        with reachable():
            batches = self._events(keys=session_keys(session_id), args=[after, self.ttl_ms])
        return None if batches is None else list(batches)

    def _wait_for_events(
        self, pubsub: redis.client.PubSub, session_id: str, after: int, timeout: float
    ) -> list[str] | None:
        deadline = time.monotonic() + timeout
        while True:
            batches = self._read_events(session_id, after)
            remaining = deadline - time.monotonic()
            if batches != [] or remaining <= 0 or self._draining:
                return batches
            self._await(pubsub, "message", remaining)

    @contextmanager
    def _listening(self, name: str) -> Iterator[None]:
        """Note a long poll waiting on channel `name`, so drain() can wake it."""
        with self._waiting_lock:
            self._waiting[name] = self._waiting.get(name, 0) + 1
        try:
            yield
        finally:
            with self._waiting_lock:
                self._waiting[name] -= 1
                if not self._waiting[name]:
                    del self._waiting[name]

    @staticmethod
    def _await(pubsub: redis.client.PubSub, kind: str, timeout: float) -> None:
        """Read the pub/sub connection until a message of `kind` or the timeout."""
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            message = pubsub.get_message(timeout=remaining)
            if message is not None and message["type"] == kind:
                return
