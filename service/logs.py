"""The application's own log lines as JSON, one object a line, on standard error.

The standard library's logging with python-json-logger's formatter, not structlog: Flask,
werkzeug, redis-py and gunicorn all log through the standard library already, so one
formatter on one handler turns every line of the app (its own, Flask's unhandled-exception
reports) into JSON with no second logging API to learn or bridge.

Inside a request each line carries the request id (the one echoed in X-Request-ID and in
gunicorn's access line), the route template, the method and, on a session's routes, the
session id. What is logged is chosen by the code that logs: ids, versions, counts, games and
outcomes, never a request body, a header, a token, a seed or a state (which holds the hands).
"""

import logging
import sys

import flask
from pythonjsonlogger.json import JsonFormatter

from service.metrics import UNMATCHED

LOGGER = "service"  # Flask's app.logger for this package, and the parent of its modules'
FIELDS = "{asctime}{levelname}{name}{message}"
RENAMED = {"asctime": "time", "levelname": "level", "name": "logger"}


class RequestContext(logging.Filter):
    """Adds request_id, route, method and session_id to a line logged inside a request."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not flask.has_request_context():
            return True
        request = flask.request
        record.request_id = flask.g.get("request_id")
        record.route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        record.method = request.method
        session_id = (request.view_args or {}).get("session_id")
        if session_id is not None and not hasattr(record, "session_id"):
            record.session_id = session_id
        return True


def json_handler() -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(FIELDS, style="{", rename_fields=RENAMED))
    handler.addFilter(RequestContext())
    return handler


def install_logging(app: flask.Flask) -> None:
    """The package's logger (app.logger) writes JSON lines at LOG_LEVEL."""
    logger = logging.getLogger(LOGGER)
    logger.handlers = [json_handler()]
    logger.setLevel(str(app.config["LOG_LEVEL"]).upper())
