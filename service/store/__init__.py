"""Where hosted sessions live: Redis when REDIS_URL (or REDIS_SENTINELS) is configured,
else this process."""

from collections.abc import Mapping
from typing import Any

from service.store.base import (
    HOLD,
    Change,
    Commit,
    NewSession,
    Outcome,
    Schedule,
    Session,
    SessionStore,
    Settle,
    StoreUnavailable,
)
from service.store.memory import MemorySchedule, MemoryStore
from service.store.redis_store import RedisSchedule, RedisStore, Target

__all__ = [
    "HOLD",
    "Change",
    "Commit",
    "MemorySchedule",
    "MemoryStore",
    "NewSession",
    "Outcome",
    "RedisSchedule",
    "RedisStore",
    "Schedule",
    "Session",
    "SessionStore",
    "Settle",
    "StoreUnavailable",
    "open_store",
]


def open_store(config: Mapping[str, Any]) -> SessionStore:
    """The store the configuration (service.config's settings) asks for: REDIS_URL or
    REDIS_SENTINELS selects Redis; its calls measured when METRICS is on."""
    store = backend(config)
    store.metrics = bool(config["METRICS"])
    return store


def backend(config: Mapping[str, Any]) -> SessionStore:
    ttl = float(config["SESSION_TTL_SECONDS"])
    kept = float(config["RECORD_TTL_SECONDS"]), float(config["WEBHOOK_OUTBOX_TTL_SECONDS"])
    target = Target.of(config)
    if target is None:
        return MemoryStore(ttl, *kept)
    return RedisStore(
        target,
        ttl,
        ready_timeout=float(config["READY_TIMEOUT_SECONDS"]),
        timeout=float(config["REDIS_TIMEOUT_SECONDS"]),
        ready_grace=float(config["READY_GRACE_SECONDS"]),
        cluster=bool(config["REDIS_CLUSTER"]),
        max_connections=int(config["REDIS_MAX_CONNECTIONS"]),
        min_replicas=int(config["REDIS_MIN_REPLICAS"]),
        record_ttl=kept[0],
        outbox_ttl=kept[1],
    )
