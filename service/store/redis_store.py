"""The Redis store: hosted sessions shared by every worker process and host.

Key layout (one hash tag per session, so all its keys live on one Redis Cluster slot):

    cards:{<id>}:session        hash: game, version, state (JSON), seats (JSON, token hashes),
                                epoch, incarnation (run id of the Redis that last touched it),
                                applied (the latest commits' nonces and answers: COMMIT)
    cards:{<id>}:events         list: item i holds the JSON events of version i + 1
    cards:{<id>}:answers        hash: Idempotency-Key digest -> stored answer of a move
    cards:{<id>}:changed        pub/sub channel: "<version> <notice>" per commit, "deleted"
    cards:{create:<digest>}     string: stored answer of a session creation
    cards:{readers:<digest>}    sorted set: a token's waiting readers, every process's, by
                                when each one's lease lapses (ms) unless its process renews it
    cards:{<id>}:record         list: the match record's head (JSON), then one entry a move;
                                the session's TTL while it plays, RECORD_TTL_SECONDS from
                                the end on (a read never shortens it while the session lives;
                                DELETE leaves it what is left of RECORD_TTL_SECONDS, kept
                                in the session's `ended` as Redis's ms)
    cards:{<id>}:outbox         list: the webhook messages not yet delivered or given up, in
                                version order (service.hosted.deliveries delivers them)
    cards:{<id>}:deleted        string: the nonce of the delete that ended the session, for a
                                minute (DELETE)
    cards:{owner:<name>}:sessions  sorted set: an integrator's session ids by creation time
                                (ms); ids of sessions that are gone are dropped as listed
    cards:{webhooks}:due        sorted set: session ids by when their outbox is due (ms),
                                planned by COMMIT (outbox_schedule)
    cards:{timers}:deadlines    sorted set: session ids by their turn's deadline (ms)
    <schedule>:claim:<nonce>    string: the ids a scan of that schedule claimed (JSON), for
                                the claim's lease (CLAIM)

Every key of a session carries the idle TTL and every access refreshes all of them, so the
stored answers expire with their session. Every write of a session, its creation included,
is one Lua script (`COMMIT`): it checks the version, writes the state, appends the events,
keeps the answer, refreshes the TTL and publishes on the session's channel, all atomically.
Connection and timeout errors become StoreUnavailable; redis-py reconnects by itself once
the server is back. A process's script calls share round trips (`Rounds`): those made while
one is out go together in the next, each still its own script, answered once Redis ran it.

On a Redis Cluster (REDIS_CLUSTER) the same keys, scripts and channels serve: every key a
script or a MULTI touches carries the session's hash tag, so one session lives on one slot
of one master, and sessions spread over the masters by id. A creation's answer has a tag of
its own (its key's digest): it is one key alone. PUBLISH reaches every node of a cluster.
"""

import contextlib
import functools
import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import hiredis
import redis
from redis._parsers.base import BaseParser
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection

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
    StoreUnavailable,
    new_nonce,
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
# The most connections a process's pool holds (per node on a cluster): REDIS_MAX_CONNECTIONS.
# A call waits for a free one at most one socket timeout, then it is a 503.
MAX_CONNECTIONS = 64

# Durable mode's WAIT gives up after this share of REDIS_TIMEOUT_SECONDS.
WAIT_SHARE = 0.8


class NoReplicasError(redis.exceptions.ResponseError):
    """NOREPLICAS: a primary under `min-replicas-to-write` that has too few replicas in
    reach (one of them died, or is being resynchronised after a failover) refuses writes.
    redis-py gives it no class of its own: a plain ResponseError, which was a 500."""


class UnpersistedError(redis.exceptions.ResponseError):
    """MISCONF: a Redis whose last snapshot failed (a full or broken disk) under
    `stop-writes-on-bgsave-error` (Redis's default with save points) refuses writes until a
    snapshot works again. A plain ResponseError for redis-py, which was a 500."""


# redis-py's parsers (its own and hiredis's) make each error reply's class from this table.
BaseParser.EXCEPTION_CLASSES.setdefault("NOREPLICAS", NoReplicasError)
BaseParser.EXCEPTION_CLASSES.setdefault("MISCONF", UnpersistedError)

# What "not answering now" looks like, all of it a 503 and never a 500: the server is down
# or hung, the pool has no free connection, Redis is out of memory (maxmemory with
# noeviction), the node is a replica now (READONLY: a failover demoted it), has too few
# replicas for its `min-replicas-to-write` (NOREPLICAS) or cannot write its snapshot
# (MISCONF), or (on a cluster) a master's slots are being failed over, moved back and forth
# or held by nobody.
UNREACHABLE = (
    NoReplicasError,
    UnpersistedError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.ClusterError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.RedisClusterException,
)

# WAIT's error on a node that is a replica now: a 503 like READONLY.
DEMOTED = "WAIT cannot be used with replica instances"

# A session's epoch: each session remembers the run id of the Redis process that last
# touched it (`incarnation`) and that process's replication id (`lineage`). A different run
# id means Redis restarted from its files or a replica took over since, either of which may
# have lost the latest writes: the epoch grows. Except in durable mode (REDIS_MIN_REPLICAS,
# the script's `durable` argument '1'), when the Redis now serving is a replica promoted from
# that one (its previous replication id, master_replid2, is that one's): every write it
# acknowledged had reached a replica first, so nothing a client was told is lost, and a
# client must not see a failover as anything but 503s while it lasts. A primary restarted
# from an RDB file takes the file's replication id as its previous one too, and the file may
# be older than its last acknowledged writes. It is told apart by its replication backlog,
# which starts where the file ends (repl_backlog_first_byte_offset = second_repl_offset),
# where a promoted replica's holds the stream it received before the switch; that tells
# until the backlog has wrapped (repl-backlog-size of writes since), so a session first
# touched later is taken as continued, as the sessions a restart rolled back are the ones
# written last, whose players come back first. (A replica promoted with nothing received
# since its last full sync looks restarted: the epoch grows though nothing was lost.)
# The run id comes as the script's last argument: the run id of the Redis that the call's
# connection reached, asked once as the connection opened (`learn_run_id`). A restart or a
# failover closes every connection to the old process, so a connection's run id stays true
# for as long as the connection lives; asking INFO in the script was a sixth of Redis's
# work on a commit. An empty one ('': a cluster's client picks the connection itself) makes
# the script ask. The run id is found in INFO's text as plain text, then read where it
# starts: a pattern tried from every byte of the text was a tenth of a commit's
# instructions in Redis. The session's `incarnation` and `epoch` come from the caller, read
# with whatever else it reads of the session: each redis.call from a script costs Redis a
# few µs beyond its own work.
EPOCH = """
local told_run_id = ARGV[#ARGV]
local function incarnation()
  if told_run_id ~= '' then return told_run_id end
  local info = redis.call('INFO', 'server')
  local _, label_end = string.find(info, 'run_id:', 1, true)
  return string.match(info, '^%w+', label_end + 1)
end
local function lineage()
  local info = redis.call('INFO', 'replication')
  local function offset(name) return tonumber(string.match(info, name .. ':(-?%d+)')) end
  local restarted = offset('repl_backlog_first_byte_offset') == offset('second_repl_offset')
  return string.match(info, 'master_replid:(%w+)'),
         not restarted and string.match(info, 'master_replid2:(%w+)') or nil
end
local function same_incarnation(key, durable, touched_by, epoch)
  local now = incarnation()
  if touched_by ~= now then
    local replid, previous = lineage()
    local continued = durable == '1' and previous == redis.call('HGET', key, 'lineage')
    redis.call('HSET', key, 'incarnation', now, 'lineage', replid)
    if not continued then return redis.call('HINCRBY', key, 'epoch', 1) end
  end
  return tonumber(epoch)
end
"""

# Redis's own time in ms: a finished match's record is kept until RECORD_TTL_SECONDS after
# the end by Redis's clock, whichever process ends the match or deletes the session.
NOW = """
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
"""

# Extends a key's TTL to ARGV ms unless it has a longer one (a finished match's record).
EXTEND = """
local function extend(key, ms)
  local left = redis.call('PTTL', key)
  if left ~= -2 and left < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end
"""

# KEYS: session, events, answers, record. ARGV: ttl ms, durable, run id. Returns the session
# hash, flat.
LOAD = (
    EPOCH
    + EXTEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
same_incarnation(KEYS[1], ARGV[2], unpack(redis.call('HMGET', KEYS[1], 'incarnation', 'epoch')))
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
extend(KEYS[4], ARGV[1])
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: session, events, answers, record, outbox[, the outbox schedule]. ARGV: expected
# version, state, ttl ms, channel, answer key ('' for none), answer, expected live ('' for
# any), live ('' to keep), expected epoch, new game and seats ('' unless the commit creates
# the session), notice, durable, meta (creation only), the commit's time, the record's
# final head ('' unless the match ends), record ttl ms, how many batches, how many record
# entries, outbox ttl ms, the outbox's plan (ms, '' for none: planned by the script when
# the schedule is a key of its own, i.e. not on a cluster), the session id, the commit's
# nonce, then the batches, the record entries and the outbox messages, and last the run id.
# Returns {outcome, version, epoch[, answer]}, and when applied, how many messages the outbox
# held before (0 when the commit adds none: not counted then) and 1 when the script planned
# the session.
# An outbox that held messages is planned already (by the commit that wrote its first, or
# by its deliverer's settle): its plan stays, and the deliverer of those finds these after
# them (its settle answers them).
# The session's `applied` keeps its RECENT_COMMITS latest commits, newest first, each as
# "<nonce> <version> <waiting> <claimed>;": the same commit run again (redis-py's retry on a
# fresh connection when the first one dropped before its reply came, maybe after other
# commits landed) is answered as its first run was, not as a stale version of itself. Only
# looked up when the compare-and-set fails.
COMMIT = (
    EPOCH
    + EXTEND
    + NOW
    + f"local RECENT = {RECENT_COMMITS}\n"
    + """
local version, applied, touched_by, epoch, live = unpack(
  redis.call('HMGET', KEYS[1], 'version', 'applied', 'incarnation', 'epoch', 'live'))
applied = applied or ''
local function again(epoch)
  for nonce, at, waiting, claimed in string.gmatch(applied, '(%S+) (%d+) (%d+) (%d+);') do
    if nonce == ARGV[23] then
      return {'applied', tonumber(at), epoch, tonumber(waiting), tonumber(claimed)}
    end
  end
end
if ARGV[10] ~= '' then
  if version then
    epoch = tonumber(epoch)
    return again(epoch) or {'stale', tonumber(version), epoch}
  end
  version, touched_by, epoch = ARGV[1], incarnation(), '0'
  redis.call('HSET', KEYS[1], 'game', ARGV[10], 'seats', ARGV[11], 'version', version,
             'epoch', epoch, 'incarnation', touched_by, 'lineage', (lineage()),
             'meta', ARGV[14])
end
if not version then return {'gone', 0, 0} end
epoch = same_incarnation(KEYS[1], ARGV[13], touched_by, epoch)
if ARGV[5] ~= '' then
  local earlier = redis.call('HGET', KEYS[3], ARGV[5])
  if earlier then return again(epoch) or {'replay', tonumber(version), epoch, earlier} end
end
if version ~= ARGV[1] or epoch ~= tonumber(ARGV[9]) then
  return again(epoch) or {'stale', tonumber(version), epoch}
end
if ARGV[7] ~= '' and (live or '{}') ~= ARGV[7] then
  return again(epoch) or {'stale', tonumber(version), epoch}
end
local batches, entries = tonumber(ARGV[18]), tonumber(ARGV[19])
version = tonumber(version) + batches
for i = 24, 23 + batches do redis.call('RPUSH', KEYS[2], ARGV[i]) end
for i = 24 + batches, 23 + batches + entries do redis.call('RPUSH', KEYS[4], ARGV[i]) end
local waiting, claimed = 0, 0
if 24 + batches + entries < #ARGV then
  waiting = redis.call('LLEN', KEYS[5])
  for i = 24 + batches + entries, #ARGV - 1 do redis.call('RPUSH', KEYS[5], ARGV[i]) end
  redis.call('PEXPIRE', KEYS[5], ARGV[20])
  if KEYS[6] and ARGV[21] ~= '' then
    if waiting == 0 then
      redis.call('ZADD', KEYS[6], ARGV[21], ARGV[22])
      claimed = 1
    else
      claimed = redis.call('ZADD', KEYS[6], 'NX', ARGV[21], ARGV[22])
    end
  end
end
local latest = {ARGV[23] .. ' ' .. version .. ' ' .. waiting .. ' ' .. claimed .. ';'}
for earlier in string.gmatch(applied, '[^;]+;') do
  if #latest == RECENT then break end
  latest[#latest + 1] = earlier
end
local written = {'version', version, 'state', ARGV[2], 'updated_at', ARGV[15],
                 'applied', table.concat(latest)}
if ARGV[8] ~= '' then
  written[#written + 1] = 'live'
  written[#written + 1] = ARGV[8]
end
redis.call('HSET', KEYS[1], unpack(written))
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
if ARGV[16] ~= '' then
  redis.call('LSET', KEYS[4], 0, ARGV[16])
  redis.call('HSET', KEYS[1], 'ended', string.format('%.0f', now_ms() + tonumber(ARGV[17])))
  redis.call('PEXPIRE', KEYS[4], ARGV[17])
end
extend(KEYS[4], ARGV[3])
redis.call('PUBLISH', ARGV[4], version .. ' ' .. ARGV[12])
return {'applied', version, epoch, waiting, claimed}
"""
)

# KEYS: session, events, answers, record, the delete's mark. ARGV: channel, the delete's
# nonce, how long the mark is kept (ms). Returns how many keys it deleted.
# A finished match's record stays until RECORD_TTL_SECONDS after the end (the session's
# `ended`, in Redis's ms), no longer: while the session lived, its reads kept the record at
# least as long as itself, which may be longer. A script rather than a MULTI: Redis Cluster
# clients refuse PUBLISH inside a pipeline. The mark keeps the nonce a while: the same delete
# run again (redis-py's retry after its reply was lost) answers 1 as its first run did, not
# "no such session", and leaves a finished match's record as that run did.
DELETE = (
    NOW
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.call('GET', KEYS[5]) == ARGV[2] and 1 or 0
end
local kept_until = tonumber(redis.call('HGET', KEYS[1], 'ended'))
if not kept_until then
  redis.call('DEL', KEYS[4])
elseif kept_until > 1 then  -- 1: ended before the end's time was kept; spared as it is
  local left = kept_until - now_ms()
  if left > 0 then redis.call('PEXPIRE', KEYS[4], left) else redis.call('DEL', KEYS[4]) end
end
local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('SET', KEYS[5], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[1], 'deleted')
return deleted
"""
)

# KEYS: session, events, answers. ARGV: idempotency key digest, ttl ms. Returns the answer
# kept under that key, or false.
ANSWER = """
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[2]) end
return redis.call('HGET', KEYS[3], ARGV[1])
"""

# KEYS: a token's readers. ARGV: now ms, lease ms, most, reader. Drops the readers whose
# lease lapsed (their process died), then admits this one if fewer than `most` wait. A
# reader found there already was admitted by this very call, run before its reply was lost
# and run again by redis-py's retry: still admitted, not refused for its own place.
ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3])
   and not redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: a sorted set (a schedule, an owner's list). ARGV: score (ms), id. A script rather than
# a plain ZADD so that it goes as every write does (RedisStore._run): in durable mode, answered
# once the replicas have it, on a cluster's own node for that key.
PLAN = "return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])"

# KEYS: a creation's key. ARGV: hold, hold ms, ttl ms. Returns false when the hold is kept
# now, else what the key holds: another creation's hold, or an answer (its TTL refreshed,
# as every access of the store does). A hold is one creation's own (it holds a new token):
# found there, it was kept by this very call, run before its reply was lost and run again
# by redis-py's retry, which must not answer the creation that it is in progress.
REMEMBER = """
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return false end
local earlier = redis.call('GET', KEYS[1])
if earlier == ARGV[1] then return false end
if string.sub(earlier, 1, #ARGV[4]) ~= ARGV[4] then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return earlier
"""

# KEYS: a creation's key. ARGV: hold, answer ('' drops the hold), ttl ms. Only while the key
# still holds this very hold.
SETTLE_CREATION = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
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

# KEYS: outbox. ARGV: how many messages are done, the last of them ('' for none), the message
# that failed ('' for none), its replacement, how many to read. Drops the messages through
# the last done if it is still among the first `done` (else another deliverer settled it),
# rewrites the head if it is still the one that failed. Returns the outbox's first messages
# after that: the deliverer goes on from them without reading the outbox again.
OUTBOX_SETTLE = """
local done = tonumber(ARGV[1])
if done > 0 then
  local read = redis.call('LRANGE', KEYS[1], 0, done - 1)
  for i, message in ipairs(read) do
    if message == ARGV[2] then
      redis.call('LTRIM', KEYS[1], i, -1)
      break
    end
  end
end
if ARGV[3] ~= '' and redis.call('LINDEX', KEYS[1], 0) == ARGV[3] then
  redis.call('LSET', KEYS[1], 0, ARGV[4])
end
return redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[5]) - 1)
"""


def session_keys(session_id: str) -> list[str]:
    tag = f"cards:{{{session_id}}}"
    return [f"{tag}:session", f"{tag}:events", f"{tag}:answers"]


def record_key(session_id: str) -> str:
    return f"cards:{{{session_id}}}:record"


# The sessions whose webhook outbox is due, by when (ms). Its own slot on a cluster.
OUTBOX_SCHEDULE = "cards:{webhooks}:due"


def outbox_key(session_id: str) -> str:
    return f"cards:{{{session_id}}}:outbox"


def kept_keys(session_id: str) -> list[str]:
    """The session's keys and its match record's."""
    return [*session_keys(session_id), record_key(session_id)]


def deleted_key(session_id: str) -> str:
    return f"cards:{{{session_id}}}:deleted"


# How long a delete's mark is kept: far longer than the client's retry of it takes.
DELETED_MS = 60_000


def channel(session_id: str) -> str:
    """The session's `changed` channel, on which its commits are announced."""
    return f"cards:{{{session_id}}}:changed"


def session_of_channel(name: str) -> str | None:
    """The session id in a channel's name, None for another name."""
    if name.startswith("cards:{") and name.endswith("}:changed"):
        return name[len("cards:{") : -len("}:changed")]
    return None


def creation_key(key: str) -> str:
    return f"cards:{{create:{key}}}"


# The pub/sub connection's settings, whichever node or primary it is made to.
SUBSCRIBER_OPTIONS: Mapping[str, Any] = {"socket_connect_timeout": 2.0}


def readers_key(holder: str) -> str:
    return f"cards:{{readers:{holder}}}"


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


class LeanPool(redis.BlockingConnectionPool):
    """redis-py's bounded pool without two costs of every call that this service has no use
    for: OpenTelemetry's connection counters (it configures no meter) and the poll of a
    pooled connection's socket for unread data. redis-py disconnects a connection whenever
    a call on it fails or is interrupted, so one handed back has nothing left to read, and a
    connection the server closed fails its next call, which the client's retry makes again
    on a new one. Together 15-17 µs of a call's CPU under gevent, measured beside redis-py's own
    pool with 8 greenlets calling at once."""

    def get_connection(self, command_name: str | None = None, *keys: Any, **options: Any) -> Any:
        self._checkpid()
        try:
            connection = self.pool.get(block=True, timeout=self.timeout)
        except queue.Empty:
            raise redis.exceptions.ConnectionError("No connection available.") from None
        if connection is None:  # a free place: the pool makes its connections when needed
            connection = self.make_connection()
        try:
            connection.connect()  # a no-op unless a failure disconnected it
        except BaseException:
            self.release(connection)
            raise
        return connection

    def release(self, connection: Any) -> None:
        self._checkpid()
        if not self.owns_connection(connection):
            # Made before a fork, or to a master that is no more: its place is made anew.
            connection.disconnect()
            connection = None
        with contextlib.suppress(queue.Full):  # the pool was reset (after a fork)
            self.pool.put_nowait(connection)


class BlockingSentinelPool(SentinelConnectionPool, LeanPool):
    """Sentinel's pool (it asks the sentinels where the master is, and drops connections to
    one that was demoted) with a bound: a call waits `timeout` for a free connection."""


class SentinelConnection(SentinelManagedConnection):
    """redis-py's Sentinel connection, dropped when a reply cannot be read, as a plain
    connection is: its `read_response` keeps the connection by default, so after a timeout
    the late reply stays in the socket and the next call on that connection reads it as its
    own (a pipeline then took a script's SHA for WAIT's count: 500s after a Redis pause)."""

    def read_response(self, *args: Any, disconnect_on_error: bool = True, **options: Any) -> Any:
        return super().read_response(*args, disconnect_on_error=disconnect_on_error, **options)


URL_SCHEMES = frozenset({"redis", "rediss", "unix"})  # what redis-py's from_url takes


@dataclass(frozen=True, slots=True)
class Target:
    """Where Redis is: a URL (one server, or with `cluster` any node of a Redis Cluster), or
    the Sentinels that know the primary called `master` (REDIS_SENTINELS and
    REDIS_SENTINEL_MASTER), which the clients then follow through every failover."""

    url: str | None
    cluster: bool = False
    sentinels: tuple[tuple[str, int], ...] = ()
    master: str | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> "Target | None":
        """The target service.config's settings name; None: no Redis (the in-process store)."""
        listed = config.get("REDIS_SENTINELS")
        if listed:
            if not config.get("REDIS_SENTINEL_MASTER"):
                raise ValueError("REDIS_SENTINELS needs REDIS_SENTINEL_MASTER: the master's name")
            if config.get("REDIS_CLUSTER"):
                raise ValueError("REDIS_CLUSTER=true and REDIS_SENTINELS exclude each other: "
                                 "a cluster fails over by itself")  # fmt: skip
            return cls(None, sentinels=parse_sentinels(listed),
                       master=config["REDIS_SENTINEL_MASTER"])  # fmt: skip
        # A Redis setting without Redis would quietly mean the in-process store: one worker,
        # no replica behind any acknowledgement.
        if config.get("REDIS_SENTINEL_MASTER"):
            raise ValueError("REDIS_SENTINEL_MASTER needs REDIS_SENTINELS: host:port,…")
        if not config.get("REDIS_URL"):
            if config.get("REDIS_CLUSTER"):
                raise ValueError("REDIS_CLUSTER=true needs REDIS_URL: any node of the cluster")
            if config.get("REDIS_MIN_REPLICAS"):
                raise ValueError("REDIS_MIN_REPLICAS needs Redis (REDIS_URL or REDIS_SENTINELS):"
                                 " sessions in process have no replica to wait for")  # fmt: skip
            return None
        if str(config["REDIS_URL"]).partition("://")[0].lower() not in URL_SCHEMES:
            # Named, not shown: the URL may hold a password.
            raise ValueError("REDIS_URL is not a Redis URL: redis://[user:password@]host:port/db"
                             ", rediss://… (TLS) or unix:///path/to/socket")  # fmt: skip
        return cls(config["REDIS_URL"], cluster=bool(config.get("REDIS_CLUSTER")))

    def connect(self, timeout: float, max_connections: int, **options: Any) -> Any:
        """A client whose pool (each node's, on a cluster) holds at most `max_connections`: a
        call waits `timeout` for a free one, then fails as unreachable (a 503)."""
        options = {**options, "max_connections": max_connections}
        if self.sentinels:
            return self._sentinel(timeout, options).master_for(
                self.master, connection_pool_class=BlockingSentinelPool, timeout=timeout,
                connection_class=SentinelConnection, **options)  # fmt: skip
        if self.cluster:
            pool = functools.partial(LeanPool, timeout=timeout)
            return RedisCluster.from_url(self.url, connection_pool_class=pool, **options)
        pool = LeanPool.from_url(self.url, timeout=timeout, **options)
        return redis.Redis(connection_pool=pool)

    def subscriber(self) -> redis.Redis:
        """A plain client for one pub/sub connection (PUBLISH reaches every node of a
        cluster and every replica, so any node will do; under Sentinel the primary)."""
        if self.sentinels:
            sentinel = self._sentinel(2.0, SUBSCRIBER_OPTIONS)
            return sentinel.master_for(self.master, **SUBSCRIBER_OPTIONS)
        return redis.Redis.from_url(self.url, **SUBSCRIBER_OPTIONS)

    def limiter_uri(self) -> str:
        """The same Redis as a `limits` storage URI (the rate limits' counters)."""
        if self.sentinels:
            nodes = ",".join(f"{host}:{port}" for host, port in self.sentinels)
            return f"redis+sentinel://{nodes}/{self.master}"
        if self.cluster:
            return "redis+cluster://" + str(self.url).split("://", 1)[1]
        return str(self.url)

    def _sentinel(self, timeout: float, options: Mapping[str, Any]) -> Sentinel:
        ask = {"socket_timeout": min(timeout, CONNECT_TIMEOUT),
               "socket_connect_timeout": min(timeout, CONNECT_TIMEOUT)}  # fmt: skip
        return Sentinel(list(self.sentinels), sentinel_kwargs=ask,
                        **{k: v for k, v in options.items() if k != "max_connections"})  # fmt: skip


# The last argument of the scripts that read Redis's run id (EPOCH): the run id that the
# connection the call goes on learned as it opened (Rounds), or '' where the script asks.
RUN_ID = object()


def stamped(args: list[Any], run_id: str) -> list[Any]:
    """A script's arguments with RUN_ID, when last, given as `run_id`."""
    return [*args[:-1], run_id] if args and args[-1] is RUN_ID else args


@dataclass(slots=True)
class Call:
    """One script call: its reply (or the error to raise) once answered, and whether it is
    to lead the next round."""

    script: Any
    keys: list[str]
    args: list[Any]
    done: threading.Event
    answered: bool = False
    reply: Any = None
    leads: bool = False


class Rounds:
    """A process's script calls, sent in shared round trips (group commit): while a round is
    out, the calls made meanwhile wait, and the first of them then sends them all in one
    pipeline on one connection of the pool. Each script still runs alone and atomically,
    and each call is answered only once Redis has run it; what a worker under load saves is
    a send, a wake-up and a read for each move but one of a round, and Redis a read and a
    write for each (docs/benchmarks.md). The calls go through redis-py's connection and its
    retry, without the client's layers around them (a command's dispatch, its telemetry, the
    script object's own call)."""

    def __init__(self, pool: Any, min_replicas: int = 0, wait_ms: int = 0) -> None:
        """With `min_replicas`, each round ends with WAIT for that many replicas, at most
        `wait_ms`: its calls are answered only once the replicas have every write up to
        them (StoreUnavailable when they do not in time)."""
        self.pool = pool
        self.min_replicas = min_replicas
        self.wait_ms = wait_ms
        self.lock = threading.Lock()
        self.waiting: list[Call] = []
        self.out = False  # a round is out: a new call waits for the next

    def call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """`script`'s reply on its keys and arguments (its error raised)."""
        # Made at the call, not bound at import: a gevent worker's (monkey-patched) Event
        # even when the app was loaded before the patch (gunicorn's --preload).
        call = Call(script, keys, args, threading.Event())
        with self.lock:
            self.waiting.append(call)
            call.leads = not self.out
            self.out = True
        try:
            if not call.leads:
                call.done.wait()
            if call.leads:
                # Group commit: the requests ready to run (a greenlet each) run first, up
                # to their own calls, which join this round rather than wait for the next.
                time.sleep(0)
        except BaseException:  # interrupted: the call leaves its round, or its lead
            with self.lock:
                if call in self.waiting:
                    self.waiting.remove(call)
                if call.leads:
                    self._hand_on()
            raise
        if call.leads:
            self._round()
        if isinstance(call.reply, BaseException):
            raise call.reply
        return call.reply

    def learn_run_id(self, connection: Any) -> None:
        """The run id of the Redis that `connection` reached, kept on it for the scripts
        sent on it. Also its callback each time it opens anew (after a failure, maybe to
        another server: a restart or a failover closes every connection to the old one)."""
        connection.send_command("INFO", "server")
        info = connection.read_response()
        connection.run_id = info.split("run_id:", 1)[1].split(None, 1)[0]

    def run_id_of(self, connection: Any) -> str:
        """The run id of the Redis that `connection` is open to (asked once a connection)."""
        if not hasattr(connection, "run_id"):
            self.learn_run_id(connection)
            connection.register_connect_callback(self.learn_run_id)  # redis-py keeps a weakref
        return connection.run_id

    def _hand_on(self) -> None:
        """The lead to the first call waiting, else no round out (under the lock)."""
        if self.waiting:
            self.waiting[0].leads = True
            self.waiting[0].done.set()
        else:
            self.out = False

    def _round(self) -> None:
        """The waiting calls' round trip, then the lead handed on."""
        with self.lock:
            calls, self.waiting = self.waiting, []
        try:
            connection = self.pool.get_connection()
            try:
                connection.retry.call_with_retry(
                    lambda: self._exchange(connection, calls), lambda _: connection.disconnect()
                )
            finally:
                self.pool.release(connection)
        except Exception as error:
            with self.lock:
                # Redis did not answer the round, or no connection was free in time: the
                # calls queued behind it fail with it now, not one timeout later each.
                calls += self.waiting
                self.waiting = []
            fail(calls, error)
        except BaseException:  # the leader itself is interrupted (its worker stops)
            fail(calls, redis.exceptions.ConnectionError("the round was interrupted"))
            raise
        finally:
            with self.lock:
                self._hand_on()
            for call in calls:
                call.done.set()

    def _exchange(self, connection: Any, calls: list[Call]) -> None:
        """The calls not answered yet, sent in one pipeline on `connection` (in durable mode
        followed by WAIT), each answered with its reply or its error; a server whose script
        cache is empty (restarted, or a replica promoted) is given the scripts it lacks, and
        asked again."""
        connection.connect()  # open again after the retry's disconnect, learning its run id
        run_id = self.run_id_of(connection)
        for attempt in range(2):
            asked = [call for call in calls if not call.answered]
            commands = [("EVALSHA", call.script.sha, len(call.keys), *call.keys,
                         *stamped(call.args, run_id)) for call in asked]  # fmt: skip
            if self.min_replicas:
                commands.append(("WAIT", self.min_replicas, self.wait_ms))
            # One buffer, one send: redis-py's pack_commands cuts a round past 6 KB (four
            # moves' scripts) into pieces sent one by one.
            packed = b"".join([hiredis.pack_command(command) for command in commands])
            connection.send_packed_command([packed])
            replies = []
            for _ in asked:
                try:
                    replies.append(connection.read_response())
                except redis.exceptions.ResponseError as error:
                    replies.append(error)
            if self.min_replicas:
                self._acknowledged(connection)
            for call, reply in zip(asked, replies, strict=True):
                if attempt == 0 and isinstance(reply, redis.exceptions.NoScriptError):
                    continue
                call.reply, call.answered = reply, True
            if all(call.answered for call in calls):
                return
            lacking = {call.script.sha: call.script for call in calls if not call.answered}
            for script in lacking.values():
                connection.send_command("SCRIPT", "LOAD", script.script)
                connection.read_response()

    def _acknowledged(self, connection: Any) -> None:
        """WAIT's answer read on `connection` and checked (acknowledge); the connection goes
        too when the node turned replica."""
        try:
            replicas = connection.read_response()
        except redis.exceptions.ResponseError as error:
            replicas = error
        if demoted(replicas):
            connection.disconnect()  # in use, so beyond the pool's own disconnect
        acknowledge(replicas, self.min_replicas, self.wait_ms, self.pool)


def demoted(replicas: Any) -> bool:
    """Whether WAIT's answer says the node is a replica now."""
    return isinstance(replicas, redis.exceptions.ResponseError) and str(replicas).startswith(
        DEMOTED
    )


def acknowledge(replicas: Any, min_replicas: int, wait_ms: int, pool: Any) -> None:
    """WAIT's answer (or its error) checked: enough replicas, else StoreUnavailable. A node
    that turned replica since the script (a failover chose another primary) acknowledges
    nothing, and `pool`'s idle connections to it go, so that the next call asks anew where
    the primary is."""
    if demoted(replicas):
        pool.disconnect(inuse_connections=False)
        raise redis.exceptions.ReadOnlyError(str(replicas)) from replicas
    if isinstance(replicas, Exception):
        raise replicas
    if int(replicas) < min_replicas:
        raise StoreUnavailable(
            f"only {replicas} of REDIS_MIN_REPLICAS={min_replicas} replicas "
            f"acknowledged within {wait_ms} ms"
        )


def fail(calls: list[Call], error: Exception) -> None:
    """`error` for each of the calls that has no answer."""
    for call in calls:
        if not call.answered:
            call.reply, call.answered = error, True


def parse_sentinels(text: str) -> tuple[tuple[str, int], ...]:
    """REDIS_SENTINELS: `host:port,host:port,…`; a bad entry stops the start with a message."""
    found = []
    for entry in text.split(","):
        host, _, port = entry.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"REDIS_SENTINELS entry {entry.strip()!r} is not host:port")
        found.append((host, int(port)))
    return tuple(found)


class RedisStore(SessionStore):
    def __init__(
        self,
        url: str | Target,
        ttl: float,
        ready_timeout: float = CONNECT_TIMEOUT,
        timeout: float = SOCKET_TIMEOUT,
        ready_grace: float = READY_GRACE,
        cluster: bool = False,
        max_connections: int = MAX_CONNECTIONS,
        min_replicas: int = 0,
        record_ttl: float = RECORD_TTL,
        outbox_ttl: float = OUTBOX_TTL,
    ) -> None:
        """`url` names the server, or with `cluster` any one node of a Redis Cluster; or a
        Target (Sentinel). With `min_replicas`, every call's answer waits until that many
        replicas have every write up to it (WAIT), at most `timeout`; else unavailable."""
        super().__init__(ttl, record_ttl, outbox_ttl)
        self.target = url if isinstance(url, Target) else Target(url, cluster)
        self.client = self.target.connect(timeout, max_connections, **client_options(timeout))
        # Its own connection and short timeouts: a readiness probe must answer fast.
        self._probe = self.target.connect(
            ready_timeout,
            1,
            socket_timeout=ready_timeout,
            socket_connect_timeout=ready_timeout,
            retry=Retry(NoBackoff(), 0),
            driver_info=None,
        )
        self.ready_grace = ready_grace
        self._failing_since: float | None = None  # the first of the probe's latest failures
        self.min_replicas = min_replicas
        # WAIT gives up a little before the socket would: its "not enough" is a clean 503 on
        # a connection that stays usable.
        self._wait_ms = max(1, int(timeout * 1000 * WAIT_SHARE))
        # A cluster's client finds each key's node; elsewhere one pool serves every call.
        self.rounds = (
            None
            if self.target.cluster
            else Rounds(self.client.connection_pool, min_replicas, self._wait_ms)
        )
        self._subscriptions = itertools.count()  # which node the next subscription takes
        self._load = self.client.register_script(LOAD)
        self._commit = self.client.register_script(COMMIT)
        self._events = self.client.register_script(EVENTS)
        self._delete = self.client.register_script(DELETE)
        self._answer = self.client.register_script(ANSWER)
        self._remember = self.client.register_script(REMEMBER)
        self._admit = self.client.register_script(ADMIT)
        self._settle_creation = self.client.register_script(SETTLE_CREATION)
        self._outbox_settle = self.client.register_script(OUTBOX_SETTLE)
        self._plan = self.client.register_script(PLAN)
        self.outbox_schedule = self.schedule(OUTBOX_SCHEDULE)

    def schedule(self, key: str) -> "RedisSchedule":
        """The schedule that `key` names, on this store's Redis."""
        return RedisSchedule(self.client, key, self._run)

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    @property
    def durable(self) -> str:
        """The scripts' `durable` argument: '1' when acknowledgements wait for replicas."""
        return "1" if self.min_replicas else ""

    def _run(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """`script` on its keys, in a shared round (on a cluster, on its key's node); in
        durable mode followed, on the same connection, by WAIT: its answer only once
        `min_replicas` replicas have every write up to it (the script's own, or for a read
        the TTL refresh every read does, which orders it after every write it may show).
        StoreUnavailable when they do not within the timeout."""
        with reachable():
            if self.rounds is not None:
                return self.rounds.call(script, keys, args)
            args = stamped(args, "")  # the cluster's client picks the connection
            if not self.min_replicas:  # the cluster client finds the key's node
                return script(keys=keys, args=args)
            node = self._node_of(keys[0])
            try:
                return self._run_and_wait(node, script, keys, args)
            except (
                redis.exceptions.ConnectionError,
                redis.exceptions.AskError,
                redis.exceptions.ReadOnlyError,
            ):
                self._refresh_topology()
                raise

    def _run_and_wait(self, node: Any, script: Any, keys: list[str], args: list[Any]) -> Any:
        for _ in range(2):
            with node.pipeline(transaction=False) as pipe:
                pipe.evalsha(script.sha, len(keys), *keys, *args)
                pipe.execute_command("WAIT", self.min_replicas, self._wait_ms)
                reply, replicas = pipe.execute(raise_on_error=False)
            if isinstance(reply, redis.exceptions.NoScriptError):
                node.script_load(script.script)  # a fresh primary: its script cache is empty
                continue
            if isinstance(reply, Exception) and not demoted(replicas):
                raise reply
            acknowledge(replicas, self.min_replicas, self._wait_ms, node.connection_pool)
            return reply
        raise StoreUnavailable("Redis lost its scripts twice in a row")

    def _node_of(self, key: str) -> Any:
        """The client of the cluster node that holds `key`: its master's own (WAIT must
        follow the write on that node's connection)."""
        node = self.client.get_node_from_key(key)
        return self.client.get_redis_connection(node)

    def _refresh_topology(self) -> None:
        """On a cluster, a node that is gone or no longer holds the slot: learn the new
        layout now, so that the client's retry goes to the master that took over."""
        if self.target.cluster:
            with contextlib.suppress(*UNREACHABLE):
                self.client.nodes_manager.initialize()

    def load(self, session_id: str) -> Session | None:
        flat = self._run(self._load, kept_keys(session_id), [self.ttl_ms, self.durable, RUN_ID])
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
            self.durable,
            "" if change.new is None else change.new.meta,
            repr(change.at),
            change.ended,
            ms(self.record_ttl),
            len(change.batches),
            len(change.record),
            ms(max(self.ttl, self.outbox_ttl)),
            "" if change.plan is None else ms(change.plan),
            session_id,
            change.nonce,
            *change.batches,
            *change.record,
            *change.messages,
            RUN_ID,
        ]
        if change.new is not None and change.new.owner is not None:
            # Listed before it exists (its own slot on a cluster, so not in the script): a
            # listing drops an id whose creation never landed. Acknowledged as the commit
            # is: on a cluster the commit's WAIT, on another master, does not cover it.
            new = change.new
            self._run(self._plan, [owner_key(new.owner)], [ms(new.created_at), session_id])
        keys = [*kept_keys(session_id), outbox_key(session_id)]
        if change.messages and change.plan is not None:
            if self.target.cluster:
                # A script keeps to one slot: planned just before it, so that a commit is
                # still never without its plan (a plan without its commit costs a look).
                self.outbox_schedule.plan(session_id, change.plan)
            else:
                keys.append(OUTBOX_SCHEDULE)
        reply = self._run(self._commit, keys, args)
        outcome, version, epoch = Outcome(reply[0]), int(reply[1]), int(reply[2])
        answer = reply[3] if outcome is Outcome.REPLAY else None
        applied = outcome is Outcome.APPLIED and bool(change.messages)
        heads = applied and reply[3] == 0
        # On a cluster the plan was written above, whatever the outbox held: its worker
        # delivers it, lest a retry planned sooner wait for this plan.
        claimed = applied and (self.target.cluster or reply[4] == 1)
        return Commit(outcome, version, answer, epoch, heads, claimed)

    def answer(self, session_id: str, key: str) -> str | None:
        return self._run(self._answer, session_keys(session_id), [key, self.ttl_ms]) or None

    def remember_creation(self, key: str, hold: str, seconds: float) -> str | None:
        held = [hold, round(seconds * 1000), self.ttl_ms, HOLD]
        return self._run(self._remember, [creation_key(key)], held) or None

    def settle_creation(self, key: str, hold: str, answer: str | None) -> None:
        self._run(self._settle_creation, [creation_key(key)], [hold, answer or "", self.ttl_ms])

    def forget_creation(self, key: str) -> None:
        with reachable():
            self.client.delete(creation_key(key))

    def events(self, session_id: str, after: int) -> list[str] | None:
        batches = self._run(self._events, kept_keys(session_id), [after, self.ttl_ms])
        return None if batches is None else list(batches)

    def delete(self, session_id: str) -> bool:
        keys = [*kept_keys(session_id), deleted_key(session_id)]
        deleted = self._run(self._delete, keys, [channel(session_id), new_nonce(), DELETED_MS])
        return bool(deleted)

    def exists(self, session_id: str) -> bool:
        with reachable():
            return bool(self.client.exists(session_keys(session_id)[0]))

    def record(self, session_id: str) -> list[str] | None:
        with reachable():
            items = self.client.lrange(record_key(session_id), 0, -1)
        return items or None

    def outbox(self, session_id: str) -> list[str]:
        with reachable():
            return self.client.lrange(outbox_key(session_id), 0, OUTBOX_READ - 1)

    def outbox_settle(self, settles: Sequence[Settle]) -> list[list[str]]:
        """One pipelined round trip for them all (a round trip a node on a cluster: the
        client groups them by the node of each session's slot). Not followed by WAIT in
        durable mode: a settle lost in a failover only sends its messages once more."""
        calls = [
            (
                [outbox_key(settle.session_id)],
                [settle.done, settle.last, settle.failed, settle.retry, OUTBOX_READ],
            )
            for settle in settles
        ]
        with reachable():
            return [list(after) for after in self._pipelined(self._outbox_settle, calls)]

    def _pipelined(self, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """`script` on each call's keys and arguments, in one pipeline; the calls a node
        refused for want of the script (a restarted Redis, a promoted replica) once more
        after loading it."""
        replies: list[Any] = [None] * len(calls)
        left, loaded = list(range(len(calls))), False
        while True:
            with self.client.pipeline(transaction=False) as pipe:
                for index in left:
                    keys, args = calls[index]
                    # As a command: a cluster pipeline refuses its `evalsha` method (a script
                    # may name keys of several slots), yet routes the command by its keys,
                    # which here share one slot.
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                answers = pipe.execute(raise_on_error=False)
            missing = []
            for index, answer in zip(left, answers):
                if isinstance(answer, redis.exceptions.NoScriptError):
                    missing.append(index)
                elif isinstance(answer, Exception):
                    raise answer
                replies[index] = answer
            if not missing:
                return replies
            if loaded:
                raise StoreUnavailable("Redis lost its scripts twice in a row")
            self.client.script_load(script.script)
            left, loaded = missing, True

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

    def subscriber(self) -> redis.Redis:
        """A client for one pub/sub connection. On a cluster, the next of the nodes its
        client knows at each call (PUBLISH reaches every node): a listener that lost its
        node, killed and replaced by a replica, subscribes on another rather than calling
        the dead address forever."""
        if not self.target.cluster:
            return self.target.subscriber()
        nodes = self.client.get_nodes()  # the topology it holds: no call to Redis
        node = nodes[next(self._subscriptions) % len(nodes)]
        return redis.Redis(host=node.host, port=node.port, **SUBSCRIBER_OPTIONS)

    def admit_reader(self, holder: str, reader: str, most: int, lease: float) -> bool:
        """Count `reader` among the readers of the token whose digest is `holder`, in every
        process, unless `most` wait already; its place lapses `lease` seconds on unless
        renewed. Not waited for by replicas: a count, not an acknowledged write."""
        with reachable():
            admitted = self._admit(keys=[readers_key(holder)],
                                   args=[ms(time.time()), ms(lease), most, reader])  # fmt: skip
        return bool(admitted)

    def release_reader(self, holder: str, reader: str) -> None:
        with reachable():
            self.client.zrem(readers_key(holder), reader)

    def renew_readers(self, readers: Sequence[tuple[str, str]], lease: float) -> None:
        """Push back the lapse of each (holder, reader) of this process by `lease` seconds."""
        until = ms(time.time() + lease)
        with reachable(), self.client.pipeline(transaction=False) as pipe:
            for holder, reader in readers:
                pipe.zadd(readers_key(holder), {reader: until}, xx=True)
                pipe.pexpire(readers_key(holder), ms(lease))
            pipe.execute()

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


# KEYS: the schedule, this claim's memo. ARGV: now ms, lease ms, most. Returns the claimed
# ids. The memo keeps them for the lease: the same claim run again (redis-py's retry on a
# fresh connection when the first one dropped before its reply came, as in a failover) is
# answered as its first run was. Else it found its sessions claimed, by itself, and left
# them to fire only once that lease ran out.
CLAIM = """
local earlier = redis.call('GET', KEYS[2])
if earlier then return cjson.decode(earlier) end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
if #due == 0 then return due end
local mark = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], mark, id) end
redis.call('SET', KEYS[2], cjson.encode(due), 'PX', ARGV[2])
return due
"""

# KEYS: the schedule. ARGV: id, mark ms, next deadline ms ('' for none).
SETTLE = """
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
"""


class RedisSchedule(Schedule):
    """A sorted set of session ids by deadline (ms), shared by every process."""

    KEY = "cards:{timers}:deadlines"
    MOST = 200  # claimed per scan

    def __init__(
        self, client: Any, key: str, run: Callable[[Any, list[str], list[Any]], Any]
    ) -> None:
        """On `client`: the store's (its bounded pool, its timeouts, decoded replies); `key`
        names the sorted set; `run` runs a script as the store runs its own (RedisStore._run:
        in durable mode, answered once the replicas have it)."""
        self.KEY = key
        self.client = client
        self._run = run
        self._plan = self.client.register_script(PLAN)
        self._claim = self.client.register_script(CLAIM)
        self._settle = self.client.register_script(SETTLE)

    def plan(self, session_id: str, deadline: float) -> None:
        """Acknowledged as a commit is: on a cluster the schedule is a key of its own, on a
        master that may not be the session's, whose commit's WAIT then does not cover the
        plan (a failover of the schedule's master lost a plan, and its timer never fired)."""
        self._run(self._plan, [self.KEY], [ms(deadline), session_id])

    def claim(self, now: float, lease: float) -> list[tuple[str, float]]:
        mark = ms(now) + ms(lease)
        memo = f"{self.KEY}:claim:{new_nonce()}"  # in the schedule's slot, by its hash tag
        with reachable():
            due = self._claim(keys=[self.KEY, memo], args=[ms(now), ms(lease), self.MOST])
        return [(session_id, mark / 1000) for session_id in due]

    def settle(self, session_id: str, mark: float, deadline: float | None) -> None:
        later = "" if deadline is None else ms(deadline)
        with reachable():
            self._settle(keys=[self.KEY], args=[session_id, ms(mark), later])

    def close(self) -> None:
        """Nothing of its own to release: the store closes the client."""
