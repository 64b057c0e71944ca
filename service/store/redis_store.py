"""The Redis store: hosted sessions shared by every worker process and host.

Key layout (one hash tag per session, so all its keys live on one Redis Cluster slot):

    cards:{<id>}:session        hash: game, version, state (JSON), seats (JSON, token hashes),
                                epoch, incarnation (run id of the Redis that last touched it)
    cards:{<id>}:events         list: item i holds the JSON events of version i + 1
    cards:{<id>}:answers        hash: Idempotency-Key digest -> stored answer of a move
    cards:{<id>}:changed        pub/sub channel: "<version> <notice>" per commit, "deleted"
    cards:{<id>}:record         list: the match record's head (JSON), then one entry a move;
                                the session's TTL while it plays, RECORD_TTL_SECONDS from
                                the end on (a read never shortens it; DELETE spares it then)
    cards:{<id>}:outbox         list: the webhook messages not yet delivered or given up, in
                                version order (service.hosted.webhooks delivers them)
    cards:{create:<digest>}     string: stored answer of a session creation
    cards:{owner:<name>}:sessions  sorted set: an integrator's session ids by creation time
                                (ms); ids of sessions that are gone are dropped as listed

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

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.store.base import (
    OUTBOX_TTL,
    RECORD_TTL,
    Change,
    Commit,
    Outcome,
    Session,
    SessionStore,
    StoreUnavailable,
)

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
# The most connections a process's pool opens.
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

# Extends a key's TTL to ARGV ms unless it has a longer one (a finished match's record).
EXTEND = """
local function extend(key, ms)
  local left = redis.call('PTTL', key)
  if left ~= -2 and left < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end
"""

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

# KEYS: session, events, answers, record. ARGV: ttl ms. Returns the session hash, flat.
LOAD = (
    EPOCH
    + EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
same_incarnation(KEYS[1])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
extend(KEYS[4], ARGV[1])
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: session, events, answers, record, outbox. ARGV: expected version, state, ttl ms,
# channel, answer key ('' for none), answer, expected live ('' for any), live ('' to keep),
# expected epoch, new game and seats ('' unless the commit creates the session), notice,
# meta (creation only), the commit's time, the record's final head ('' unless the match
# ends), record ttl ms, how many batches, how many record entries, outbox ttl ms, then the
# batches, the record entries and the outbox messages. Returns {outcome, version, epoch[,
# answer]}.
COMMIT = (
    EPOCH
    + EXTEND
    + """
local version = redis.call('HGET', KEYS[1], 'version')
if ARGV[10] ~= '' then
  if version then
    return {'stale', tonumber(version), tonumber(redis.call('HGET', KEYS[1], 'epoch'))}
  end
  redis.call('HSET', KEYS[1], 'game', ARGV[10], 'seats', ARGV[11], 'version', ARGV[1],
             'epoch', 0, 'incarnation', incarnation(), 'meta', ARGV[13])
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
local batches, entries = tonumber(ARGV[17]), tonumber(ARGV[18])
version = tonumber(version) + batches
redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[2], 'updated_at', ARGV[14])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'live', ARGV[8]) end
for i = 20, 19 + batches do redis.call('RPUSH', KEYS[2], ARGV[i]) end
for i = 20 + batches, 19 + batches + entries do redis.call('RPUSH', KEYS[4], ARGV[i]) end
for i = 20 + batches + entries, #ARGV do redis.call('RPUSH', KEYS[5], ARGV[i]) end
if 20 + batches + entries <= #ARGV then redis.call('PEXPIRE', KEYS[5], ARGV[19]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
if ARGV[15] ~= '' then
  redis.call('LSET', KEYS[4], 0, ARGV[15])
  redis.call('HSET', KEYS[1], 'ended', '1')
  redis.call('PEXPIRE', KEYS[4], ARGV[16])
end
extend(KEYS[4], ARGV[3])
redis.call('PUBLISH', ARGV[4], version .. ' ' .. ARGV[12])
return {'applied', version, epoch}
"""
)

# KEYS: session, events, answers, record. ARGV: channel. Returns how many keys it deleted
# (a finished match's record stays). A script rather than a MULTI: Redis Cluster clients
# refuse PUBLISH inside a pipeline.
DELETE = """
if not redis.call('HGET', KEYS[1], 'ended') then redis.call('DEL', KEYS[4]) end
local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('PUBLISH', ARGV[1], 'deleted')
return deleted
"""

# KEYS: session, events, answers, record. ARGV: after, ttl ms. Returns false or the batches.
EVENTS = (
    EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
extend(KEYS[4], ARGV[2])
return redis.call('LRANGE', KEYS[2], ARGV[1], -1)
"""
)


# KEYS: outbox. ARGV: the head expected, its replacement ('' drops it). Returns 1 if it was
# the head.
OUTBOX_SETTLE = """
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('LPOP', KEYS[1]) else redis.call('LSET', KEYS[1], 0, ARGV[2]) end
return 1
"""


def session_keys(session_id: str) -> list[str]:
    tag = f"cards:{{{session_id}}}"
    return [f"{tag}:session", f"{tag}:events", f"{tag}:answers"]


def record_key(session_id: str) -> str:
    return f"cards:{{{session_id}}}:record"


def outbox_key(session_id: str) -> str:
    return f"cards:{{{session_id}}}:outbox"


def kept_keys(session_id: str) -> list[str]:
    """The session's keys and its match record's."""
    return [*session_keys(session_id), record_key(session_id)]


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


def owner_key(owner: str) -> str:
    return f"cards:{{owner:{owner}}}:sessions"


def ms(seconds: float) -> int:
    return round(seconds * 1000)


def read_session(session_id: str, flat: list[str] | dict[str, str]) -> Session:
    """A session from its hash (flat, as a script returns it, or a dict)."""
    fields = flat if isinstance(flat, dict) else dict(zip(flat[::2], flat[1::2]))
    return Session(
        id=session_id,
        game=fields["game"],
        version=int(fields["version"]),
        state=fields["state"],
        seats=fields["seats"],
        live=fields.get("live", "{}"),
        epoch=int(fields["epoch"]),
        meta=fields.get("meta", "{}"),
        updated_at=float(fields.get("updated_at", 0.0)),
    )


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
        record_ttl: float = RECORD_TTL,
        outbox_ttl: float = OUTBOX_TTL,
    ) -> None:
        """`url` names the server, or with `cluster` any one node of a Redis Cluster."""
        super().__init__(ttl, record_ttl, outbox_ttl)
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
        self._outbox_settle = self.client.register_script(OUTBOX_SETTLE)

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    def load(self, session_id: str) -> Session | None:
        with reachable():
            flat = self._load(keys=kept_keys(session_id), args=[self.ttl_ms])
        return read_session(session_id, flat) if flat else None

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
            "" if change.new is None else change.new.meta,
            repr(change.at),
            change.ended,
            ms(self.record_ttl),
            len(change.batches),
            len(change.record),
            ms(max(self.ttl, self.outbox_ttl)),
            *change.batches,
            *change.record,
            *change.messages,
        ]
        with reachable():
            if change.new is not None and change.new.owner is not None:
                # Listed before it exists (its own slot on a cluster, so not in the script):
                # a listing drops an id whose creation never landed.
                self.client.zadd(
                    owner_key(change.new.owner), {session_id: ms(change.new.created_at)}
                )
            keys = [*kept_keys(session_id), outbox_key(session_id)]
            reply = self._commit(keys=keys, args=args)
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
            batches = self._events(keys=kept_keys(session_id), args=[after, self.ttl_ms])
        return None if batches is None else list(batches)

    def delete(self, session_id: str) -> bool:
        with reachable():
            deleted = self._delete(keys=kept_keys(session_id), args=[channel(session_id)])
        return bool(deleted)

    def exists(self, session_id: str) -> bool:
        with reachable():
            return bool(self.client.exists(session_keys(session_id)[0]))

    def record(self, session_id: str) -> list[str] | None:
        with reachable():
            items = self.client.lrange(record_key(session_id), 0, -1)
        return items or None

    def outbox_head(self, session_id: str) -> str | None:
        with reachable():
            return self.client.lindex(outbox_key(session_id), 0)

    def outbox_settle(self, session_id: str, head: str, replacement: str | None) -> bool:
        with reachable():
            done = self._outbox_settle(
                keys=[outbox_key(session_id)], args=[head, replacement or ""]
            )
        return bool(done)

    def owned(
        self, owner: str, after: tuple[float, str] | None, count: int
    ) -> list[tuple[float, str]]:
        top, found, offset = "+inf" if after is None else ms(after[0]), [], 0
        mark = None if after is None else (ms(after[0]), after[1])
        with reachable():
            while len(found) < count:
                page = self.client.zrevrangebyscore(
                    owner_key(owner), top, "-inf", start=offset, num=count, withscores=True
                )
                if not page:
                    break
                offset += len(page)
                found += [
                    (score / 1000, session_id)
                    for session_id, score in page
                    if mark is None or (int(score), session_id) < mark
                ]
        return found[:count]

    def disown(self, owner: str, session_ids: list[str]) -> None:
        if session_ids:
            with reachable():
                self.client.zrem(owner_key(owner), *session_ids)

    def peek(self, session_ids: list[str]) -> list[Session | None]:
        with reachable(), self.client.pipeline(transaction=False) as pipe:
            for session_id in session_ids:
                pipe.hgetall(session_keys(session_id)[0])
            hashes = pipe.execute()
        return [
            read_session(session_id, fields) if fields else None
            for session_id, fields in zip(session_ids, hashes)
        ]

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
