"""Limits on what one request may cost: the body's size whatever its framing, and how many
requests one client address or one seat token may make."""

import hashlib
import io
import math
import time
from collections.abc import Mapping
from typing import Any

import flask
from apispec import BasePlugin
from flask_limiter import ApplicationLimit, Limiter, RateLimitExceeded
from limits import parse_many

from service.auth import bearer_token
from service.errors import problem
from service.store.redis_store import Target

WSGIApp = Any  # a WSGI callable: (environ, start_response) -> iterable of bytes
READ_SIZE = 64 * 1024


class BoundedBody:
    """A WSGI middleware giving a chunked body (no Content-Length) the same limit as any
    other. Werkzeug cuts such a stream at MAX_CONTENT_LENGTH without a word, so an oversized
    chunked JSON body read as malformed JSON (400); here at most limit + 1 bytes are read
    and handed on with their length as Content-Length, so one byte over is Flask's own 413
    problem, exactly as for a body that announced its length."""

    def __init__(self, app: WSGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("CONTENT_LENGTH") or "HTTP_TRANSFER_ENCODING" not in environ:
            return self.app(environ, start_response)
        body = read_at_most(environ["wsgi.input"], self.limit + 1)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        del environ["HTTP_TRANSFER_ENCODING"]
        return self.app(environ, start_response)


def read_at_most(stream: Any, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        part = stream.read(min(left, READ_SIZE))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


# -- Rate limits -------------------------------------------------------------------------

# Probes and scrapes are never limited: an orchestrator must always see the service.
UNLIMITED_PATHS = frozenset({"/livez", "/readyz", "/metrics"})
LIMITS_PREFIX = "cards-limits"
LIMITER = "rate_limiter"  # its key in app.extensions (Flask-Limiter's own holds a set)
# The limiter's own Redis calls give up sooner than the sessions' (REDIS_TIMEOUT_SECONDS):
# on a hung Redis it falls back to counting in memory instead of adding its wait to theirs.
LIMITER_TIMEOUT = 0.25
SCOPES = {
    "address": "this client address",
    "token": "this seat token",
    "costly": "this client address in cost units (a creation costs 1 + 10 per expert bot)",
}
# RATE_LIMIT_COSTLY's units: what an expert bot's search costs beside a plain request
# (~0.1 s of CPU against a few ms; `python -m bench.bots`).
EXPERT_COST = 10
MOST_SEATS = 8  # seats counted in a creation's cost (more is a 422 anyway)
CREATE_RULE = "/v1/sessions"
HINT_RULE = "/hint"


class RateLimitsDocumented(BasePlugin):
    """openapi.yaml gives every operation that may be rate limited its 429 (with
    Retry-After), whether or not this deployment sets limits: a client is written once."""

    def operation_helper(
        self, path: str | None = None, operations: dict | None = None, **kwargs: Any
    ) -> None:
        if path in UNLIMITED_PATHS:
            return
        for operation in (operations or {}).values():
            operation.setdefault("responses", {}).setdefault("429", "TOO_MANY_REQUESTS")


def client_address() -> str:
    """The peer's address as the WSGI server saw it (behind a proxy: the proxy's, unless
    the app runs behind werkzeug's ProxyFix)."""
    return flask.request.remote_addr or "unknown"


def token_key() -> str:
    """The seat token's digest: a limit's key names no token, in Redis or anywhere."""
    return hashlib.sha256((bearer_token() or "").encode()).hexdigest()


def storage_uri(config: Mapping[str, Any]) -> str:
    """Flask-Limiter's storage: the sessions' Redis (its cluster, its Sentinels), so every
    worker and host counts together; this process's memory without Redis."""
    target = Target.of(config)
    return "memory://" if target is None else target.limiter_uri()


def checked(name: str, config: Mapping[str, Any]) -> str:
    """The setting, refused at start-up (not at the first request) when it is no limit."""
    text = str(config[name])
    try:
        parse_many(text)
    except ValueError as error:
        raise ValueError(
            f"{name}={text!r} is not a rate limit like '20/second' or '20/second;600/minute'"
        ) from error
    return text


def too_many(error: RateLimitExceeded) -> flask.Response:
    """A 429 problem naming the limit, with Retry-After in whole seconds (at least 1)."""
    current = flask.current_app.extensions[LIMITER].current_limit
    wait = max(1, math.ceil(current.reset_at - time.time())) if current else 1
    scope = SCOPES.get(str(error.limit.scope), "this client")
    detail = f"too many requests from {scope}: at most {error.limit.limit}; retry in {wait} s"
    return problem(429, detail, headers={"Retry-After": str(wait)})


def request_cost() -> int:
    """What a request costs a worker's CPU, in units of a plain request: a session creation
    1 plus EXPERT_COST per expert bot seat (their opening moves are searched before the
    answer), an expert hint EXPERT_COST; 0 for anything else, which RATE_LIMIT_COSTLY then
    does not count."""
    request = flask.request
    rule = request.url_rule.rule if request.url_rule is not None else ""
    if request.method != "POST" or not (rule == CREATE_RULE or rule.endswith(HINT_RULE)):
        return 0
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return 1
    if rule.endswith(HINT_RULE):
        return EXPERT_COST if body.get("level", "expert") == "expert" else 1
    seats = body.get("seats")
    seats = seats[:MOST_SEATS] if isinstance(seats, list) else []
    experts = sum(isinstance(seat, dict) and seat.get("level") == "expert" for seat in seats)
    return 1 + EXPERT_COST * experts


def install_rate_limits(app: flask.Flask) -> None:
    """Per client address (RATE_LIMIT_ADDRESS), per seat token (RATE_LIMIT_TOKEN) and per
    client address in cost units (RATE_LIMIT_COSTLY), each in Flask-Limiter's notation, e.g.
    "20/second;600/minute". On by default; RATE_LIMITS=false turns them all off, an empty
    setting that one."""
    config = app.config
    if not config["RATE_LIMITS"]:
        return
    limits = []
    if config["RATE_LIMIT_ADDRESS"]:
        limits.append(
            ApplicationLimit(checked("RATE_LIMIT_ADDRESS", config), key_function=client_address,
                             scope="address")
        )  # fmt: skip
    if config["RATE_LIMIT_TOKEN"]:
        limits.append(
            ApplicationLimit(checked("RATE_LIMIT_TOKEN", config), key_function=token_key,
                             scope="token", exempt_when=lambda: bearer_token() is None)
        )  # fmt: skip
    if config["RATE_LIMIT_COSTLY"]:
        limits.append(
            ApplicationLimit(checked("RATE_LIMIT_COSTLY", config), key_function=client_address,
                             scope="costly", cost=request_cost,
                             exempt_when=lambda: request_cost() == 0)
        )  # fmt: skip
    if not limits:
        return
    shared = Target.of(config) is not None
    limiter = Limiter(
        client_address,
        app=app,
        application_limits=limits,
        strategy="sliding-window-counter",
        storage_uri=storage_uri(config),
        storage_options={"socket_timeout": LIMITER_TIMEOUT,
                         "socket_connect_timeout": LIMITER_TIMEOUT,
                         "max_connections": int(config["REDIS_MAX_CONNECTIONS"])}
        if shared else {},
        in_memory_fallback_enabled=shared,
        swallow_errors=True,
        key_prefix=LIMITS_PREFIX,
    )  # fmt: skip
    limiter.request_filter(lambda: flask.request.path in UNLIMITED_PATHS)
    app.extensions[LIMITER] = limiter
    app.register_error_handler(RateLimitExceeded, too_many)
