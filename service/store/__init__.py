"""Where hosted sessions live: Redis when REDIS_URL is configured, else this process."""

import weakref
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
from service.store.observed import ObservedStore
from service.store.redis_store import RedisStore

__all__ = [
    "Change",
    "Commit",
    "MemoryStore",
    "ObservedStore",
    "Outcome",
    "RedisStore",
    "Session",
    "SessionStore",
    "StoreUnavailable",
    "drain_all",
    "open_store",
]

# Every store this process opened and still uses, for drain_all() when the worker stops.
OPENED: "weakref.WeakSet[SessionStore]" = weakref.WeakSet()


def open_store(config: Mapping[str, Any]) -> SessionStore:
    """The store the configuration (service.config's settings) asks for: REDIS_URL selects
    Redis; logged, and measured when METRICS is on."""
    store = ObservedStore(backend(config), metrics=bool(config["METRICS"]))
    OPENED.add(store)
    return store


def drain_all() -> None:
    """Answer at once every long poll waiting in this process: the worker is stopping."""
    for store in list(OPENED):
        store.drain()


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
    )
