"""Limits on what one request may cost: the body's size whatever its framing, and how many
requests one client address, one seat token or one integrator key may make."""

import hashlib
import io
import logging
import math
import sys
import time
from collections.abc import Mapping
from functools import partial
from typing import Any

import flask
import orjson
from apispec import BasePlugin
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter

from engine.game import games, most_seats
from service.auth import bearer_of
from service.errors import Problem
from service.keys import Integrators
from service.logs import Outage
from service.replay import replay_paths
from service.requests import decimal
from service.stateless import PREFIX
from service.store.redis_store import Target

WSGIApp = Any  # a WSGI callable: (environ, start_response) -> iterable of bytes
READ_SIZE = 64 * 1024


class BoundedBody:
    """A WSGI middleware giving every body the same bound in size and in time, whatever its
    framing. Size: Werkzeug cuts a chunked stream (no Content-Length) at MAX_CONTENT_LENGTH
    without a word, so an oversized chunked JSON body read as malformed JSON (400); here at
    most limit + 1 bytes are read and handed on with their length as Content-Length, so one
    byte over is Flask's own 413 problem, exactly as for a body that announced its length.
    Time: a body within the limit is read here whole, within `seconds` from its first byte
    to its last (BODY_TIMEOUT_SECONDS); a client that sends less in that time (a slow or
    stalled body: a slowloris) gets a 408 problem from `refuse` (Flask). Before, a body that
    never came held its connection for ever, and a thousand of them held every connection
    of a gevent worker: nobody else could be answered."""

    def __init__(
        self, app: WSGIApp, limit: int, refuse: WSGIApp | None = None,
        seconds: float | None = None, send_seconds: float | None = None,
        bounds: Mapping[str, int] | None = None,
    ) -> None:  # fmt: skip
        self.app = app
        self.limit = limit
        self.bounds = bounds or {}  # paths with a limit of their own
        self.refuse = refuse
        self.seconds = seconds
        self.send_seconds = send_seconds

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        bound_sends(environ, self.send_seconds)
        limit = self.bounds.get(environ.get("PATH_INFO", ""), self.limit)
        length = environ.get("CONTENT_LENGTH")
        if length or "HTTP_TRANSFER_ENCODING" not in environ:
            size = decimal(length or "")
            if not size or size > limit or self.refuse is None:
                return self.app(environ, start_response)  # none, or Flask's 413 (or 400)
        else:
            size = limit + 1  # chunked: one byte past the limit is a 413
            del environ["HTTP_TRANSFER_ENCODING"]
        body = read_within(environ, size, self.seconds)
        if body is None:
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(), "0"
            if self.refuse is None:
                raise OSError("the request's body did not come in time")
            environ[REFUSAL] = Problem(
                408, f"the request's body did not all come within {self.seconds:g} s; send it "
                "at once, then the request again",
            )  # fmt: skip
            return self.refuse(environ, start_response)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


def bound_sends(environ: dict[str, Any], seconds: float | None) -> None:
    """Under gevent, each write of an answer to the client's socket gets `seconds`
    (SEND_TIMEOUT_SECONDS): a client that does not read what it asked for (a slow reader:
    many large answers pipelined, or a window kept shut) is dropped then, instead of
    holding its greenlet and its place among the worker's connections for ever. A waiting
    stream or long poll writes nothing while it waits, so its wait is not bounded by this;
    the request's head and body have their own bounds (keepalive, BODY_TIMEOUT_SECONDS).
    gunicorn.conf.py's post_request takes the bound off again once the answer is written,
    so that it never cuts a keep-alive connection's wait for its next request."""
    sock = environ.get("gunicorn.socket")
    if seconds is not None and sock is not None and gevent_patched():
        sock.settimeout(seconds)


def read_within(environ: dict[str, Any], size: int, seconds: float | None) -> bytes | None:
    """At most `size` bytes of the request's body (fewer when it ends first), read within
    `seconds` in all; None when they did not come in time. Under gevent the bound is on the
    whole read (a client trickling a byte at a time does not renew it); under threads
    (gthread) it is on each read of the socket."""
    stream = environ["wsgi.input"]
    if seconds is None:
        return read_at_most(stream, size)
    if gevent_patched():
        import gevent

        try:
            with gevent.Timeout(seconds):
                return read_at_most(stream, size)
        except (gevent.Timeout, TimeoutError):  # the whole body's bound, or one read's
            return None
    sock = environ.get("gunicorn.socket")
    if sock is None:  # not under gunicorn (tests, a development server): no bound
        return read_at_most(stream, size)
    before = sock.gettimeout()
    sock.settimeout(seconds)
    try:
        return read_at_most(stream, size)
    except TimeoutError:
        return None
    finally:
        sock.settimeout(before)


def gevent_patched() -> bool:
    """Whether this process's sockets are gevent's (a gevent worker)."""
    if "gevent.monkey" not in sys.modules:
        return False
    return bool(sys.modules["gevent.monkey"].is_module_patched("socket"))


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
# A request over a limit is handed on to Flask carrying its problem under this environ key,
# so that Flask answers it as it answers every problem (request id, metrics, CORS).
REFUSAL = "cards.refusal"
# A request counted by its client address carries under this environ key what charges that
# address's RATE_LIMIT_COSTLY for work its request turns out to ask for once its session is
# read (a hosted move's expert replies): a callable of the number of expert searches, which
# raises the 429 when they are over the limit.
CHARGE = "cards.charge"
# The counters' own Redis calls give up sooner than the sessions' (REDIS_TIMEOUT_SECONDS): on
# a hung Redis they fall back to counting in this process's memory instead of adding their
# wait to theirs, and try Redis again RETRY_SECONDS later.
LIMITER_TIMEOUT = 0.25
RETRY_SECONDS = 5.0
SCOPES = {
    "address": "this client address",
    "token": "this seat token",
    "costly": "this client address in cost units (a creation costs 1 + 10 per expert bot "
    "and, when an expert plays its timeouts, per human seat, a "
    "hosted move 1 per expert bot of its session, an expert hint 10, a replay 1 + 1 a 64 KiB "
    "of its record)",
    "key": "this integrator key",
}
# RATE_LIMIT_COSTLY's units: what an expert bot's search costs beside a plain request
# (~0.1 s of CPU against a few ms; `python -m bench.bots`).
EXPERT_COST = 10
# What a hosted move costs for each expert bot seat of its session, each of which may search
# before the next human turn: a unit, not EXPERT_COST, so that a person's pace stays within
# the default limit (a move every 2 s against three experts is 90 units a minute, of 120),
# while a client that posts moves as fast as it can gets two expert replies a second.
REPLY_COST = 1
# A replayed match record costs a unit for each this many bytes of it, at least one: about a
# thousand moves, some 12 ms of CPU (`service.replay`).
RECORD_BYTES_PER_COST = 64 * 1024
CREATE_PATH = "/v1/sessions"
logger = logging.getLogger(__name__)


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


def storage_uri(config: Mapping[str, Any]) -> str:
    """The counters' storage: the sessions' Redis (its cluster, its Sentinels), so every
    worker and host counts together; this process's memory without Redis."""
    target = Target.of(config)
    return "memory://" if target is None else target.limiter_uri()


def checked(name: str, config: Mapping[str, Any]) -> list[RateLimitItem]:
    """The setting's limits ([] when empty), refused at start-up (not at the first request)
    when it is no limit."""
    text = str(config[name] or "")
    try:
        limits = sorted(parse_many(text)) if text.strip() else []
        if any(limit.amount < 1 for limit in limits):  # refuses every request: not a limit
            raise ValueError("a limit of 0")
        return limits
    except ValueError as error:
        raise ValueError(
            f"{name}={text!r} is not a rate limit like '20/second' or '20/second;600/minute'"
        ) from error


def request_cost(
    environ: dict[str, Any],
    hints: frozenset[str],
    replays: frozenset[str],
    max_body: int,
    seats_counted: int,
) -> int:
    """What a request costs a worker's CPU, in units of a plain request: a session creation
    1 plus EXPERT_COST per expert bot seat, and per human seat when an expert plays its
    timeouts (`timeout_level`, with `turn_seconds`), among its first `seats_counted` (the
    most seats any game allows: more is a 422 anyway; their opening moves are searched
    before the answer), an expert hint EXPERT_COST, a replay 1 plus one a
    RECORD_BYTES_PER_COST of its record; 0 for anything else, which RATE_LIMIT_COSTLY then
    does not count. A creation's or hint's body is read for it and handed on, unread, to
    the app."""
    path = environ.get("PATH_INFO", "")
    if environ["REQUEST_METHOD"] != "POST":
        return 0
    if path in replays:  # its size says its cost: no need to read it
        return 1 + (decimal(environ.get("CONTENT_LENGTH", "")) or 0) // RECORD_BYTES_PER_COST
    if not (path == CREATE_PATH or path in hints):
        return 0
    length = decimal(environ.get("CONTENT_LENGTH", ""))
    if length is None or length > max_body:
        return 1  # Flask refuses it (413, or no body to read)
    data = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(data)
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return 1
    if not isinstance(body, dict):
        return 1
    if path in hints:
        return EXPERT_COST if body.get("level", "expert") == "expert" else 1
    seats = body.get("seats")
    seats = [seat for seat in seats[:seats_counted] if isinstance(seat, dict)] if isinstance(
        seats, list) else []  # fmt: skip
    experts = sum(seat.get("level") == "expert" for seat in seats)
    if body.get("turn_seconds") is not None and body.get("timeout_level") == "expert":
        # The expert plays for each human seat whose time runs out: with nobody playing,
        # every seat's every turn, one a second at the shortest turn.
        experts += sum(seat.get("type") == "human" for seat in seats)
    return 1 + EXPERT_COST * experts


class RateLimits:
    """WSGI middleware counting every request against the limits per client address
    (RATE_LIMIT_ADDRESS), per seat token (RATE_LIMIT_TOKEN: a bearer token's SHA-256 is the
    key, never the token) and per client address in cost units (RATE_LIMIT_COSTLY), or, for
    a request with an integrator key, per key (RATE_LIMIT_KEY) alone, with the
    `limits` library's sliding-window counters. A request within them goes on to `app`; one
    over a limit goes to `refuse` (Flask) with its 429 problem under REFUSAL."""

    def __init__(self, app: WSGIApp, refuse: WSGIApp, config: Mapping[str, Any]) -> None:
        self.app, self.refuse = app, refuse
        # Read from the registry: a game may have been added, and may seat more than the
        # shipped ones.
        self.hints = frozenset(f"{PREFIX}/{name}/hint" for name in games())
        self.replays = replay_paths()
        self.seats_counted = most_seats()
        self.max_body = int(config["MAX_BODY_BYTES"])
        self.limits = {scope: checked(f"RATE_LIMIT_{scope.upper()}", config) for scope in SCOPES}
        self.integrators = Integrators.parse(config["API_KEYS"])
        shared = Target.of(config) is not None
        options: dict[str, Any] = {}
        if shared:
            options = {"socket_timeout": LIMITER_TIMEOUT,
                       "socket_connect_timeout": LIMITER_TIMEOUT,
                       "max_connections": int(config["REDIS_MAX_CONNECTIONS"])}  # fmt: skip
        self.counters = SlidingWindowCounterRateLimiter(
            storage_from_string(storage_uri(config), **options)
        )
        # While Redis does not answer, this process counts alone.
        self.in_memory = SlidingWindowCounterRateLimiter(MemoryStorage()) if shared else None
        self.outage = Outage(logger, "rate limits")
        self.retry_at = 0.0  # while Redis is out: when to try it again

    @staticmethod
    def of(app: WSGIApp, refuse: WSGIApp, config: Mapping[str, Any]) -> "WSGIApp":
        """`app` behind the configured limits; `app` itself when they are off or all empty."""
        if not config["RATE_LIMITS"]:
            return app
        limited = RateLimits(app, refuse, config)
        return limited if any(limited.limits.values()) else app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") not in UNLIMITED_PATHS:
            refusal = self.refusal(environ)
            if refusal is not None:
                environ[REFUSAL] = refusal
                return self.refuse(environ, start_response)
        return self.app(environ, start_response)

    def charge(self, address: str, experts: int) -> None:
        """Count `experts` expert searches a request of `address` is about to run against
        its RATE_LIMIT_COSTLY (REPLY_COST each); a 429 (nothing run) when over it."""
        refusal = self.over("costly", address, REPLY_COST * experts)
        if refusal is not None:
            raise refusal

    def over(self, scope: str, key: str, cost: int) -> Problem | None:
        """Count `cost` against the limits of `scope` for `key`: the 429 of the first one it
        goes over, None when within them all."""
        for limit in self.limits[scope]:
            reset = self.hit(limit, (LIMITS_PREFIX, key, scope), cost)
            if reset is not None:
                wait = max(1, math.ceil(reset - time.time()))
                return Problem(
                    429,
                    f"too many requests from {SCOPES[scope]}: at most {limit}; "
                    f"retry in {wait} s",
                    headers={"Retry-After": str(wait)},
                )
        return None

    def refusal(self, environ: dict[str, Any]) -> Problem | None:
        """The 429 of the first limit the request goes over (each counted as it passes),
        None when it is within them all."""
        address = environ.get("REMOTE_ADDR") or "unknown"
        token = bearer_of(environ.get("HTTP_AUTHORIZATION"))
        hashed = None if token is None else hashlib.sha256(token.encode()).hexdigest()
        if token is not None and self.integrators.required and self.integrators.owner_of_key(token):
            # A backend, trusted with a key the operator issued: it creates and reads the
            # sessions of all its players from one address, so the limits meant for one
            # player's address or token would throttle it; it has a limit of its own.
            counted = [("key", hashed, 1)]
        else:
            counted = [("address", address, 1)]
            if hashed is not None:
                counted.append(("token", hashed, 1))
        if self.limits["costly"] and counted[0][0] == "address":
            cost = request_cost(
                environ, self.hints, self.replays, self.max_body, self.seats_counted
            )
            if cost:
                counted.append(("costly", address, cost))
            environ[CHARGE] = partial(self.charge, address)
        for scope, key, cost in counted:
            refusal = self.over(scope, key, cost)
            if refusal is not None:
                return refusal
        return None

    def hit(self, limit: RateLimitItem, identifiers: tuple[str, ...], cost: int) -> float | None:
        """Count the request against `limit`: None when it is within it, else when the
        limit's window lets the next one in (epoch seconds). Counted in this process while
        Redis is out, including when it goes out between the count and the window's read."""
        if self.in_memory is not None and time.monotonic() < self.retry_at:
            return refused_until(self.in_memory, limit, identifiers, cost)
        try:
            reset = refused_until(self.counters, limit, identifiers, cost)
        except Exception as error:  # Redis out of reach: count here until the next try
            if self.in_memory is None:
                raise
            self.outage.failed(error)
            self.retry_at = time.monotonic() + RETRY_SECONDS
            return refused_until(self.in_memory, limit, identifiers, cost)
        if self.retry_at:
            self.retry_at = 0.0
            self.outage.succeeded()
        return reset


def refused_until(
    counters: SlidingWindowCounterRateLimiter,
    limit: RateLimitItem,
    identifiers: tuple[str, ...],
    cost: int,
) -> float | None:
    """Count a request on `counters`: None within `limit`, else its window's reset time."""
    if counters.hit(limit, *identifiers, cost=cost):
        return None
    return counters.get_window_stats(limit, *identifiers).reset_time


def install_rate_limits(app: flask.Flask) -> None:
    """A request the rate limits refused (RateLimits) is answered by Flask as its 429."""

    @app.before_request
    def refuse() -> None:
        refusal = flask.request.environ.get(REFUSAL)
        if refusal is not None:
            raise refusal
