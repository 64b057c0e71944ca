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

DEFAULT_TTL_SECONDS = 86400

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
    """The store the configuration asks for: REDIS_URL selects Redis."""
    ttl = float(config.get("SESSION_TTL_SECONDS", DEFAULT_TTL_SECONDS))
    url = config.get("REDIS_URL")
    if not url:
        return MemoryStore(ttl)
    return RedisStore(url, ttl, float(config.get("READY_TIMEOUT_SECONDS", 0.5)))
