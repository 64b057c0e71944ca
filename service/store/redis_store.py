"""The Redis store: hosted sessions shared by every worker process and host.

Key layout (one hash tag per session, so all its keys live on one Redis Cluster slot):

    cards:{<id>}:session        hash: game, version, state (JSON), seats (JSON, token hashes),
                                epoch, incarnation (run id of the Redis that last touched it)
    cards:{<id>}:events         list: item i holds the JSON events of version i + 1
    cards:{<id>}:answers        hash: Idempotency-Key digest -> stored answer of a move
    cards:{<id>}:changed        pub/sub channel: "<version> <notice>" per commit, "deleted"
    cards:{create:<digest>}     string: stored answer of a session creation

Every key of a session carries the idle TTL and every access refreshes all of them, so the
stored answers expire with their session. Every write of a session, its creation included,
is one Lua script (`COMMIT`): it checks the version, writes the state, appends the events,
keeps the answer, refreshes the TTL and publishes on the session's channel, all atomically.
Connection and timeout errors become StoreUnavailable; redis-py reconnects by itself once
the server is back.

On a Redis Cluster (REDIS_CLUSTER) the same keys, scripts and channels serve: every key a
script or a MULTI touches carries the session's hash tag, so one session lives on one slot
of one master, and sessions spread over the masters by id. A creation's answer has a tag of
its own (its key's digest): it is one key alone. PUBLISH reaches every node of a cluster.
"""

import functools
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
# The most connections a process's pool holds (per node on a cluster): REDIS_MAX_CONNECTIONS.
# A call waits for a free one at most one socket timeout, then it is a 503.
MAX_CONNECTIONS = 64

# What "not answering now" looks like, all of it a 503 and never a 500: the server is down
# or hung, the pool has no free connection, Redis is out of memory (maxmemory with
# noeviction), the node is a replica now (READONLY: a failover demoted it), or (on a
# cluster) a master's slots are being failed over, moved back and forth or held by nobody.
UNREACHABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.ClusterError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.RedisClusterException,
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
# expected epoch, new game and seats ('' unless the commit creates the session), notice,
# batch... Returns {outcome, version, epoch[, answer]}.
COMMIT = (
    EPOCH
    + """
local version = redis.call('HGET', KEYS[1], 'version')
if ARGV[10] ~= '' then
  if version then
    return {'stale', tonumber(version), tonumber(redis.call('HGET', KEYS[1], 'epoch'))}
  end
  redis.call('HSET', KEYS[1], 'game', ARGV[10], 'seats', ARGV[11], 'version', ARGV[1],
             'epoch', 0, 'incarnation', incarnation())
  version = ARGV[1]
end
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
local batches = #ARGV - 12
version = tonumber(version) + batches
redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[2])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'live', ARGV[8]) end
for i = 13, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[3]) end
redis.call('PUBLISH', ARGV[4], version .. ' ' .. ARGV[12])
return {'applied', version, epoch}
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


# Every session's channel, for one subscription per process (service.hosted.hub.RedisHub).
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


def connect(url: str, cluster: bool, timeout: float, max_connections: int) -> Any:
    """A client whose pool (each node's, on a cluster) holds at most `max_connections`: a
    call waits `timeout` for a free one, then fails as unreachable (a 503)."""
    options = {**client_options(timeout), "max_connections": max_connections}
    if cluster:
        pool = functools.partial(redis.BlockingConnectionPool, timeout=timeout)
        return RedisCluster.from_url(url, connection_pool_class=pool, **options)
    return redis.Redis(
        connection_pool=redis.BlockingConnectionPool.from_url(url, timeout=timeout, **options)
    )


class RedisStore(SessionStore):
    def __init__(
        self,
        url: str,
        ttl: float,
        ready_timeout: float = CONNECT_TIMEOUT,
        timeout: float = SOCKET_TIMEOUT,
        ready_grace: float = READY_GRACE,
        cluster: bool = False,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        """`url` names the server, or with `cluster` any one node of a Redis Cluster."""
        super().__init__(ttl)
        kind = RedisCluster if cluster else redis.Redis
        self.client = connect(url, cluster, timeout, max_connections)
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

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

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
            "" if change.new is None else change.new.game,
            "" if change.new is None else change.new.seats,
            change.notice,
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

    def events(self, session_id: str, after: int) -> list[str] | None:
        with reachable():
            batches = self._events(keys=session_keys(session_id), args=[after, self.ttl_ms])
        return None if batches is None else list(batches)

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

    def close(self) -> None:
        self.client.close()
        self._probe.close()
