"""Where hosted sessions live: Redis when REDIS_URL is configured, else this process."""

from collections.abc import Mapping
from typing import Any

from service.store.base import (
    Change,
    Commit,
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
    "Outcome",
    "RedisStore",
    "Session",
    "SessionStore",
    "StoreUnavailable",
    "open_store",
]


def open_store(config: Mapping[str, Any]) -> SessionStore:
    """The store the configuration (service.config's settings) asks for: REDIS_URL selects
    Redis."""
    ttl = float(config["SESSION_TTL_SECONDS"])
    if not config["REDIS_URL"]:
        return MemoryStore(ttl)
    return RedisStore(config["REDIS_URL"], ttl, float(config["READY_TIMEOUT_SECONDS"]))
