"""Prometheus metrics at GET /metrics, correct under several gunicorn workers.

prometheus_client's multiprocess mode: when PROMETHEUS_MULTIPROC_DIR is set (gunicorn.conf.py
sets it before any worker starts) every worker writes its samples to memory-mapped files in
that directory and /metrics, answered by any worker, adds up the files of all of them. Without
it (one process: tests, `flask run`) the process's own registry is served.

Labels are chosen from small fixed sets only: a route template (never the path itself), the
method, the status, a game name, a bot level, a store operation and its outcome. No session
id, token, seed or card is ever a label value.
"""

import functools
import hmac
import os
import time
from typing import TYPE_CHECKING, Any

import flask
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)

from service.auth import bearer_of
from service.errors import problem

if TYPE_CHECKING:
    from service.hosted.commit import Facts

METRICS_PATH = "/metrics"
UNMATCHED = "unmatched"  # the route label of a path no route knows (a 404 or 405)
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
# Long polls last up to LONG_POLL_SECONDS (25 s by default): the buckets reach past it.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 30)

# In multiprocess mode every observation checks that its process has not forked since
# (each file is its process's), and os.getpid() is a system call each time: two to five a
# request, about 12 µs of a stateless request's 300 under load. The id is read once, and
# again in a child after a fork, which is when it changes; set before any metric's value
# exists, so that every value is of this class.
process_id = os.getpid()


def forked() -> None:
    global process_id
    process_id = os.getpid()


os.register_at_fork(after_in_child=forked)
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    values.ValueClass = values.MultiProcessValue(process_identifier=lambda: process_id)

REQUESTS = Histogram(
    "cards_http_request_duration_seconds",
    "HTTP requests by route template, method and status: latency (its _count counts them)",
    ["route", "method", "status"],
    buckets=REQUEST_BUCKETS,
)
STORE_UNAVAILABLE = Counter(
    "cards_store_unavailable_responses_total",
    "503 answers given because the session store (Redis) could not be reached, by route",
    ["route"],
)
MOVES = Counter(
    "cards_moves_applied_total",
    "moves applied in hosted sessions, by game and by who played (human, bot and level, or "
    "timeout: the server played for a seat whose time ran out or that is absent)",
    ["game", "player", "level"],
)
SESSIONS = Counter("cards_sessions_created_total", "hosted sessions created, by game", ["game"])
LONG_POLLS = Gauge(
    "cards_long_polls_waiting",
    "long polls (GET .../events) waiting for a move right now",
    multiprocess_mode="livesum",
)
STREAMS = Gauge(
    "cards_event_streams_open",
    "event streams (GET .../stream) open right now",
    multiprocess_mode="livesum",
)
WEBHOOK_DELIVERIES = Counter(
    "cards_webhook_deliveries_total",
    "webhook delivery attempts by outcome: delivered (a 2xx in time), retried (anything else, "
    "tried again later), given_up (the last attempt failed)",
    ["outcome"],
)
STORE_OPERATIONS = Histogram(
    "cards_store_operation_duration_seconds",
    "session store calls by operation and outcome: latency (its _count counts them)",
    ["operation", "outcome"],
    buckets=STORE_BUCKETS,
)


def count_commit(facts: "Facts") -> None:
    """A follower of hosted commits: the sessions created and the moves applied, by who
    played them (a bot's level; a human's and a timeout's level is empty)."""
    if facts.created:
        labelled(SESSIONS, facts.game).inc()
    for moved in facts.moved:
        labelled(MOVES, facts.game, moved.by, moved.level if moved.by == "bot" else "").inc()


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def exposition() -> bytes:
    """Every metric in the Prometheus text format: all workers' when there are several."""
    if multiprocess_dir() is None:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry)


@functools.cache
def labelled(metric: Any, *values: str) -> Any:
    """`metric`'s child for these label values, looked up once: labels() checks the values
    and takes a lock on every call, three times the cost of the observation itself. The
    values come from small fixed sets (above), so the children kept are few."""
    return metric.labels(*values)


def observe_request(route: str, method: str, status: int, started: float) -> None:
    """Count one answered request and its latency since `started` (time.perf_counter) under
    its route template, method and status."""
    method = method if method in METHODS else "other"
    labelled(REQUESTS, route, method, str(status)).observe(time.perf_counter() - started)
    if status == 503:
        labelled(STORE_UNAVAILABLE, route).inc()


def install_metrics(app: flask.Flask) -> None:
    """Time every request and serve GET /metrics; only when METRICS is on, and only to the
    bearer of METRICS_TOKEN when that is set."""

    @app.before_request
    def start_clock() -> None:
        flask.g.started = time.perf_counter()

    @app.after_request
    def count_request(response: flask.Response) -> flask.Response:
        started = flask.g.get("started")
        if started is None:  # an earlier before_request hook answered first
            return response
        request = flask.request._get_current_object()  # type: ignore[attr-defined]
        route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        observe_request(route, request.method, response.status_code, started)
        return response

    token = app.config.get("METRICS_TOKEN")

    @app.get(METRICS_PATH)
    def metrics() -> flask.Response:
        if token and not bearer_is(token):
            return problem(401, "GET /metrics needs METRICS_TOKEN as a bearer token",
                           headers={"WWW-Authenticate": 'Bearer realm="metrics"'})  # fmt: skip
        return flask.Response(exposition(), content_type=CONTENT_TYPE_LATEST)


def bearer_is(token: str) -> bool:
    """Whether the request's bearer token is `token`, compared in constant time."""
    given = bearer_of(flask.request.headers.get("Authorization"))
    return hmac.compare_digest((given or "").encode(), token.encode())
