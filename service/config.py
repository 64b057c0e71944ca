"""Settings: defaults, overridden by environment variables, overridden by create_app's dict."""

import os
from collections.abc import Callable, Mapping
from typing import Any


def optional_text(text: str) -> str | None:
    return text or None


def flag(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


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
    "REDIS_MIN_REPLICAS": (0, int),
    "MAX_BODY_BYTES": (64 * 1024, int),
    # A request's body must all come within this many seconds (else 408): a stalled or
    # trickled body holds no connection longer.
    "BODY_TIMEOUT_SECONDS": (10.0, float),
    "READY_TIMEOUT_SECONDS": (0.5, float),
    "SESSION_TTL_SECONDS": (86400.0, float),
    "LONG_POLL_SECONDS": (25.0, float),
    # An event stream's `: ping` comment comes at least this often (the contract: 15 s).
    "STREAM_PING_SECONDS": (10.0, float),
    # How often each worker looks for turn timers that ran out (they fire within 2 s).
    "TIMER_SCAN_SECONDS": (0.5, float),
    # A client's seed in a session with two or more human seats (tests, replays): its
    # chooser would know every hand, so by default only the server's secret seed deals there.
    "CLIENT_SEEDS": (False, flag),
    # Operations: metrics at GET /metrics, Redis failing fast.
    "METRICS": (True, flag),
    "LOG_LEVEL": ("info", str),
    "REDIS_TIMEOUT_SECONDS": (1.5, float),
    "READY_GRACE_SECONDS": (5.0, float),
    # Rate limits, on unless RATE_LIMITS is off (each one off when set empty): per client
    # address, per seat token, and per address in cost units for what costs a worker's CPU
    # (a creation costs 1 plus 10 per expert bot seat; see service.limits).
    "RATE_LIMITS": (True, flag),
    "RATE_LIMIT_ADDRESS": ("50/second;1500/minute", optional_text),
    "RATE_LIMIT_TOKEN": ("20/second;600/minute", optional_text),
    "RATE_LIMIT_COSTLY": ("120/minute", optional_text),
    # /metrics answers only with this bearer token when it is set.
    "METRICS_TOKEN": (None, optional_text),
    # Each worker's Redis connection pool (per node on a cluster): at most this many
    # connections; a call that cannot get one within REDIS_TIMEOUT_SECONDS is a 503.
    "REDIS_MAX_CONNECTIONS": (64, int),
    # Waiting readers (event streams and long polls): at most this many per token (then
    # 429) and per worker (then 503; unset: three quarters of GUNICORN_WORKER_CONNECTIONS),
    # so that waiting readers never take the connections a move needs.
    "MAX_WAITERS_PER_TOKEN": (4, int),
    "MAX_WAITERS": (None, int),
    "GUNICORN_WORKER_CONNECTIONS": (1000, int),
    # Integrators: comma-separated `name:sha256-hex-of-key` entries (python -m service.keys
    # new NAME). Set, creating a session takes one of those keys; unset, creation is open.
    "API_KEYS": (None, optional_text),
    # A finished match's record is kept this long after its end, the session gone or not.
    "RECORD_TTL_SECONDS": (30 * 86400.0, float),
    # Webhooks: a 2xx within WEBHOOK_TIMEOUT_SECONDS is delivered; anything else is retried
    # after WEBHOOK_RETRY_SECONDS, doubling, up to WEBHOOK_ATTEMPTS attempts. WEBHOOK_HOSTS
    # (comma-separated hosts or addresses) replaces the public-addresses-only rule with an
    # allow-list. An undelivered message is kept at least WEBHOOK_OUTBOX_TTL_SECONDS.
    "WEBHOOK_TIMEOUT_SECONDS": (5.0, float),
    "WEBHOOK_RETRY_SECONDS": (1.0, float),
    "WEBHOOK_ATTEMPTS": (10, int),
    "WEBHOOK_HOSTS": (None, optional_text),
    "WEBHOOK_SCAN_SECONDS": (0.5, float),
    "WEBHOOK_OUTBOX_TTL_SECONDS": (86400.0, float),
    # Browser clients on other origins: "*" or comma-separated origins; unset: none.
    "CORS_ORIGINS": (None, optional_text),
}


def load_config(
    overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    environ = os.environ if environ is None else environ
    config = {
        name: read(environ[name]) if name in environ else default
        for name, (default, read) in SETTINGS.items()
    }
    config.update(overrides or {})
    if config["MAX_WAITERS"] is None:
        config["MAX_WAITERS"] = int(config["GUNICORN_WORKER_CONNECTIONS"]) * 3 // 4
    return config
