"""The application's own log lines as JSON, one object a line, on standard error.

The standard library's logging with python-json-logger's formatter, not structlog: Flask,
werkzeug, redis-py and gunicorn all log through the standard library already, so one
formatter on one handler turns every line of the app (its own, Flask's unhandled-exception
reports) into JSON with no second logging API to learn or bridge. Its orjson flavour, and
no caller lookup (no line names its source file): a line cost 35 µs of CPU with the json
module's formatter and the frame walk, 24 with these. A session's life is logged at INFO,
each other commit of moves at DEBUG (service.hosted.commit.logged; docs/benchmarks.md).

Inside a request each line carries the request id (the one echoed in X-Request-ID and in
gunicorn's access line), the route template, the method and, on a session's routes, the
session id. What is logged is chosen by the code that logs: ids, versions, counts, games and
outcomes, never a request body, a header, a token, a seed or a state (which holds the hands).
"""

import logging
import sys
import threading
import time
from contextvars import ContextVar
from typing import NamedTuple

import flask
from pythonjsonlogger.orjson import OrjsonFormatter

from service.metrics import UNMATCHED

LOGGER = "service"  # Flask's app.logger for this package, and the parent of its modules'
FIELDS = "{asctime}{levelname}{name}{message}"
RENAMED = {"asctime": "time", "levelname": "level", "name": "logger"}


class Request(NamedTuple):
    """What a line logged inside a request says of it."""

    request_id: str | None
    route: str
    method: str
    session_id: str | None


# The request the lean path (service/lean.py) is answering in this greenlet or thread: it
# has no Flask request to read these from. Set with LEAN_REQUEST.set(Request(...)), reset
# with the token that returns (a context manager cost a few µs more a call, about a sixth
# of a lean apply's own work under gunicorn).
LEAN_REQUEST: ContextVar[Request | None] = ContextVar("lean_request", default=None)


def current_request() -> Request | None:
    """The request this line is logged in, by Flask or by the lean path; None outside one."""
    if not flask.has_request_context():
        return LEAN_REQUEST.get()
    request = flask.request
    return Request(
        flask.g.get("request_id"),
        request.url_rule.rule if request.url_rule is not None else UNMATCHED,
        request.method,
        (request.view_args or {}).get("session_id"),
    )


class RequestContext(logging.Filter):
    """Adds request_id, route, method and session_id to a line logged inside a request."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = current_request()
        if request is None:
            return True
        record.request_id = request.request_id
        record.route = request.route
        record.method = request.method
        if request.session_id is not None and not hasattr(record, "session_id"):
            record.session_id = request.session_id
        return True


def json_handler() -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OrjsonFormatter(FIELDS, style="{", rename_fields=RENAMED))
    handler.addFilter(RequestContext())
    return handler


def install_logging(app: flask.Flask) -> None:
    """The package's logger (app.logger) writes JSON lines at LOG_LEVEL."""
    # The logging module's documented switch for skipping sys._getframe() on every line
    # (what a line's filename, lineno and funcName are found by; none is written here).
    logging._srcfile = None
    logger = logging.getLogger(LOGGER)
    logger.handlers = [json_handler()]
    logger.setLevel(str(app.config["LOG_LEVEL"]).upper())


class Outage:
    """What one background loop (turn timers, the pub/sub listener, webhook delivery) says
    about an outage of what it depends on: one warning when the outage starts, one when it
    ends (how long it lasted, how many attempts failed), nothing in between, however often
    the loop retries."""

    def __init__(self, logger: logging.Logger, loop: str) -> None:
        self.logger = logger
        self.loop = loop
        self.failures = 0  # failed attempts in the current (or the latest) outage
        self._since: float | None = None  # when the outage began (monotonic), None: no outage
        self._lock = threading.Lock()

    def failed(self, error: BaseException) -> None:
        """The loop's latest attempt failed: logged only when it starts an outage."""
        with self._lock:
            starts = self._since is None
            if starts:
                self._since, self.failures = time.monotonic(), 0
            self.failures += 1
        if starts:
            self.logger.warning(
                "%s: Redis unreachable, retrying quietly until it is back: %s: %s",
                self.loop, type(error).__name__, error, extra={"loop": self.loop},
            )  # fmt: skip

    def succeeded(self) -> None:
        """The loop's latest attempt worked: logged only when it ends an outage."""
        with self._lock:
            since, self._since = self._since, None
        if since is not None:
            lasted = round(time.monotonic() - since, 1)
            self.logger.warning(
                "%s: Redis reachable again after %s s (%d failed attempts)",
                self.loop, lasted, self.failures,
                extra={"loop": self.loop, "outage_seconds": lasted, "failures": self.failures},
            )  # fmt: skip
