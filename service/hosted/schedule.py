"""The schedule of turn deadlines: when to look at which session. Only a hint of when to
look: the session's live record decides, and a timeout is committed with the version
compare-and-set like any move."""

import threading
from abc import ABC, abstractmethod
from typing import Any

from service.store.redis_store import reachable


class Schedule(ABC):
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

    def __init__(self, client: Any) -> None:
        """On `client`: the store's (its bounded pool, its timeouts, decoded replies)."""
        self.client = client
        self._claim = self.client.register_script(CLAIM)
        self._settle = self.client.register_script(SETTLE)

    def plan(self, session_id: str, deadline: float) -> None:
        with reachable():
            self.client.zadd(self.KEY, {session_id: ms(deadline)})

    def claim(self, now: float, lease: float) -> list[tuple[str, float]]:
        mark = ms(now) + ms(lease)
        with reachable():
            due = self._claim(keys=[self.KEY], args=[ms(now), ms(lease), self.MOST])
        return [(session_id, mark / 1000) for session_id in due]

    def settle(self, session_id: str, mark: float, deadline: float | None) -> None:
        later = "" if deadline is None else ms(deadline)
        with reachable():
            self._settle(keys=[self.KEY], args=[session_id, ms(mark), later])

    def close(self) -> None:
        """Nothing of its own to release: the store closes the client."""
