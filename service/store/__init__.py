"""Where hosted sessions live: Redis when REDIS_URL is configured, else this process."""

from collections.abc import Mapping
from typing import Any

from service.store.base import (
    Change,
    Commit,
    NewSession,
    Outcome,
    Session,
    SessionStore,
    StoreUnavailable,
)
from service.store.memory import MemoryStore
from service.store.redis_store import RedisStore

__all__ = [
    "Change",
    "Commit",
    "MemoryStore",
    "NewSession",
    "Outcome",
    "RedisStore",
    "Session",
    "SessionStore",
    "StoreUnavailable",
    "open_store",
]


def open_store(config: Mapping[str, Any]) -> SessionStore:
    """The store the configuration (service.config's settings) asks for: REDIS_URL selects
    Redis; its calls measured when METRICS is on."""
    store = backend(config)
    store.metrics = bool(config["METRICS"])
    return store


def backend(config: Mapping[str, Any]) -> SessionStore:
    ttl = float(config["SESSION_TTL_SECONDS"])
    if not config["REDIS_URL"]:
        return MemoryStore(ttl)
    return RedisStore(
        config["REDIS_URL"],
        ttl,
        ready_timeout=float(config["READY_TIMEOUT_SECONDS"]),
        timeout=float(config["REDIS_TIMEOUT_SECONDS"]),
        ready_grace=float(config["READY_GRACE_SECONDS"]),
        cluster=bool(config["REDIS_CLUSTER"]),
        max_connections=int(config["REDIS_MAX_CONNECTIONS"]),
    )
