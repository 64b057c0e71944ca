"""Settings: defaults, overridden by environment variables, overridden by create_app's dict."""

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})
LOG_LEVELS = frozenset({"debug", "info", "warning", "error", "critical"})


class SettingError(ValueError):
    """A setting that is not one: the start-up stops with this message, which names it."""


def optional_text(text: str) -> str | None:
    return text or None


def flag(text: str) -> bool:
    """A switch: only a word that says on or off. Before, anything but an `on` word read as
    off, so a typo (`RATE_LIMITS=ture`) silently turned every rate limit off."""
    word = text.strip().lower()
    if word in TRUE or word in FALSE:
        return word in TRUE
    raise ValueError("is not a switch: true or false (1/0, yes/no, on/off)")


def whole(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError("is not a whole number") from None


def number(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("is not a number (of seconds)") from None
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    return value


def log_level(text: str) -> str:
    if text.strip().lower() not in LOG_LEVELS:
        raise ValueError(f"is not a log level: one of {', '.join(sorted(LOG_LEVELS))}")
    return text.strip()


# name: (default, how to read it from an environment variable)
SETTINGS: dict[str, tuple[Any, Callable[[str], Any]]] = {
    "REDIS_URL": (None, optional_text),
    # REDIS_URL names any node of a Redis Cluster: the cluster client finds the rest.
    "REDIS_CLUSTER": (False, flag),
    # Or a Sentinel-managed primary: REDIS_SENTINELS=host:port,… and the master's name.
    "REDIS_SENTINELS": (None, optional_text),
    "REDIS_SENTINEL_MASTER": (None, optional_text),
    # Durable acknowledgements: a call answers only once this many replicas have every write
    # up to it (WAIT, within REDIS_TIMEOUT_SECONDS; else 503).
    "REDIS_MIN_REPLICAS": (0, whole),
    "MAX_BODY_BYTES": (64 * 1024, whole),
    # A match record sent to POST /v1/games/{game}/replay may be this large instead: a whole
    # Bank match's record is over MAX_BODY_BYTES (a default three-seat one ~70 KB).
    "MAX_RECORD_BYTES": (4 * 1024 * 1024, whole),
    # A request's body must all come within this many seconds (else 408): a stalled or
    # trickled body holds no connection longer.
    "BODY_TIMEOUT_SECONDS": (10.0, number),
    # Each write of an answer must go out within this many seconds (gevent workers), else
    # the connection is dropped: a client that does not read holds no connection longer.
    "SEND_TIMEOUT_SECONDS": (30.0, number),
    "READY_TIMEOUT_SECONDS": (0.5, number),
    "SESSION_TTL_SECONDS": (86400.0, number),
    "LONG_POLL_SECONDS": (25.0, number),
    # An event stream's `: ping` comment comes at least this often (the contract: 15 s).
    "STREAM_PING_SECONDS": (10.0, number),
    # How often each worker looks for turn timers that ran out (they fire within 2 s).
    "TIMER_SCAN_SECONDS": (0.5, number),
    # A client's seed in a session with two or more human seats (tests, replays): its
    # chooser would know every hand, so by default only the server's secret seed deals there.
    "CLIENT_SEEDS": (False, flag),
    # Operations: metrics at GET /metrics, Redis failing fast.
    "METRICS": (True, flag),
    "LOG_LEVEL": ("info", log_level),
    "REDIS_TIMEOUT_SECONDS": (1.5, number),
    "READY_GRACE_SECONDS": (5.0, number),
    # Rate limits, on unless RATE_LIMITS is off (each one off when set empty): per client
    # address, per seat token, and per address in cost units for what costs a worker's CPU
    # (a creation costs 1 plus 10 per expert bot seat, a hosted move 1 per expert bot seat
    # of its session; see service.limits); a request with
    # an integrator key counts against its key's limit alone.
    "RATE_LIMITS": (True, flag),
    "RATE_LIMIT_ADDRESS": ("50/second;1500/minute", optional_text),
    "RATE_LIMIT_TOKEN": ("20/second;600/minute", optional_text),
    "RATE_LIMIT_COSTLY": ("120/minute", optional_text),
    "RATE_LIMIT_KEY": ("200/second;6000/minute", optional_text),
    # /metrics answers only with this bearer token when it is set.
    "METRICS_TOKEN": (None, optional_text),
    # Each worker's Redis connection pool (per node on a cluster): at most this many
    # connections; a call that cannot get one within REDIS_TIMEOUT_SECONDS is a 503.
    "REDIS_MAX_CONNECTIONS": (64, whole),
    # Waiting readers (event streams and long polls): at most this many per token (then
    # 429), per client address in a worker (then 429: one client cannot take every place of
    # a worker for itself with many tokens) and per worker (then 503; unset: three quarters
    # of GUNICORN_WORKER_CONNECTIONS), so that waiting readers never take the connections a
    # move needs.
    "MAX_WAITERS_PER_TOKEN": (4, whole),
    "MAX_WAITERS_PER_ADDRESS": (None, whole),
    "MAX_WAITERS": (None, whole),
    "GUNICORN_WORKER_CONNECTIONS": (1000, whole),
    # Integrators: comma-separated `name:sha256-hex-of-key` entries (python -m service.keys
    # new NAME). Set, creating a session takes one of those keys; unset, creation is open.
    "API_KEYS": (None, optional_text),
    # A finished match's record is kept this long after its end, the session gone or not.
    "RECORD_TTL_SECONDS": (30 * 86400.0, number),
    # Webhooks: a 2xx within WEBHOOK_TIMEOUT_SECONDS is delivered; anything else is retried
    # after WEBHOOK_RETRY_SECONDS, doubling, up to WEBHOOK_ATTEMPTS attempts. WEBHOOK_HOSTS
    # (comma-separated hosts or addresses) replaces the public-addresses-only rule with an
    # allow-list. An undelivered message is kept at least WEBHOOK_OUTBOX_TTL_SECONDS.
    "WEBHOOK_TIMEOUT_SECONDS": (5.0, number),
    "WEBHOOK_RETRY_SECONDS": (1.0, number),
    "WEBHOOK_ATTEMPTS": (10, whole),
    "WEBHOOK_HOSTS": (None, optional_text),
    "WEBHOOK_SCAN_SECONDS": (0.5, number),
    "WEBHOOK_OUTBOX_TTL_SECONDS": (86400.0, number),
    # Browser clients on other origins: "*" or comma-separated origins; unset: none.
    "CORS_ORIGINS": (None, optional_text),
}


# The least each number may be (counts and sizes at least 1, waits above 0, unless listed at
# 0 here: these may be 0), so that a setting that cannot work stops the start, naming itself,
# rather than failing every request (a pool of 0 connections) or none (a negative WAIT).
AT_LEAST_ZERO = frozenset({
    "REDIS_MIN_REPLICAS", "LONG_POLL_SECONDS", "READY_GRACE_SECONDS",
    "MAX_WAITERS_PER_TOKEN", "MAX_WAITERS_PER_ADDRESS", "MAX_WAITERS",
})  # fmt: skip


def load_config(
    overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings: defaults, then the environment's, then `overrides`. A setting that is
    not one (a typo in a switch, a word for a number, a pool of no connection) raises
    SettingError naming it and the value."""
    environ = os.environ if environ is None else environ
    config = {
        name: read_setting(name, environ[name], read) if name in environ else default
        for name, (default, read) in SETTINGS.items()
    }
    config.update(overrides or {})
    if config["MAX_WAITERS"] is None:
        config["MAX_WAITERS"] = int(config["GUNICORN_WORKER_CONNECTIONS"]) * 3 // 4
    for name, value in config.items():
        check_bound(name, value)
    return config


def read_setting(name: str, text: str, read: Callable[[str], Any]) -> Any:
    try:
        return read(text)
    except ValueError as error:
        raise SettingError(f"{name}={text!r} {error}") from None


def check_bound(name: str, value: Any) -> None:
    """A number setting below what it may be is a SettingError."""
    if name not in SETTINGS or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not math.isfinite(value):
        raise SettingError(f"{name}={value!r} is not a finite number")
    if name in AT_LEAST_ZERO and value < 0:
        raise SettingError(f"{name}={value!r} must be 0 or more")
    if name not in AT_LEAST_ZERO and value <= 0:
        raise SettingError(f"{name}={value!r} must be more than 0")
