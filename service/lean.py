"""The lean path: plain WSGI in front of Flask for the calls a client makes on every turn.

Serving a request through Flask (its request and application contexts, routing, hooks,
signals, flask-smorest's wrappers and response objects) costs more than the engine's own
work on a whole state, and about as much as a hosted move's own checks and commit. So a call
that reads cleanly is answered here, without a Flask request: the very answer, status and
headers its Flask route gives, by the same function. Each lean route is declared by the
module of its Flask route (service/stateless.py: legal-moves and apply; service/routes/
sessions.py: a hosted move).

Anything else is handed on to Flask untouched, and the Flask route of the same path answers
it: another path or method, a body that is not JSON of the call's declared length, and a
browser's cross-origin call while CORS is on. So is a call whose answer raised: every
problem is written by one path, and openapi.yaml documents the one route. A route whose call
changes something (a hosted move) takes what the lean call raised from the environ and
raises it again, so nothing runs twice; a pure call is just answered again.
tests/service/test_lean_path.py holds the two answers equal. The rate limits
(service/limits.py) count every request before it gets here.
"""

import io
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from service.headers import NO_STORE, REQUEST_ID, REQUEST_ID_ENVIRON, request_id
from service.json import plain
from service.logs import LEAN_REQUEST, Request
from service.metrics import observe_request
from service.requests import decimal

WSGIApp = Callable[[dict[str, Any], Callable], Iterable[bytes]]
# A lean call's answer: from the environ, the path's arguments (by their names in the rule)
# and the raw body, the JSON it answers 200 with. Anything it raises goes to Flask.
Call = Callable[[dict[str, Any], Mapping[str, str], bytes], bytes]
JSON = "application/json"
# Where a lean call leaves what it raised, for a Flask route that must not run it twice.
RAISED = "service.lean.raised"
ARGUMENT = re.compile(r"<(\w+)>")


def pattern_of(rule: str) -> re.Pattern[str]:
    """The paths a rule with arguments matches: each argument one path segment, as Flask's
    default converter reads it."""
    parts = ARGUMENT.split(rule)  # literal, argument, literal, ...
    return re.compile("".join(
        re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/]+)"
        for index, part in enumerate(parts)
    ))  # fmt: skip


@dataclass(frozen=True)
class LeanRoute:
    """A POST the lean path answers: its Flask route's rule (`/v1/sessions/<session_id>/moves`,
    also its metrics label) and the call that answers it."""

    rule: str
    call: Call


def raised_by_lean_path(environ: Mapping[str, Any]) -> None:
    """Raise again what the lean path's call of this request raised, if it did: for the Flask
    route of a call that changes something."""
    error = environ.get(RAISED)
    if error is not None:
        raise error


class LeanPath:
    """WSGI middleware answering the clean calls of `routes` without Flask, and handing
    everything else on to `app`."""

    def __init__(
        self, app: WSGIApp, routes: Iterable[LeanRoute], max_body: int, metrics: bool, cors: bool
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.metrics = metrics
        self.cors = cors
        routes = list(routes)
        self.exact = {route.rule: route for route in routes if not ARGUMENT.search(route.rule)}
        self.patterns = tuple(
            (pattern_of(route.rule), route) for route in routes if ARGUMENT.search(route.rule)
        )

    def route_of(self, path: str) -> tuple[LeanRoute, Mapping[str, str]] | None:
        """The lean route of `path` and its arguments, if it has one."""
        route = self.exact.get(path)
        if route is not None:
            return route, {}
        for pattern, route in self.patterns:
            found = pattern.fullmatch(path)
            if found is not None:
                return route, found.groupdict()
        return None

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        started = time.perf_counter()
        routed = self.route_of(environ.get("PATH_INFO", ""))
        length = decimal(environ.get("CONTENT_LENGTH", ""))
        if (
            routed is None
            or environ["REQUEST_METHOD"] != "POST"
            or environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower() != JSON
            or not plain(environ.get("HTTP_CONTENT_ENCODING"))
            or length is None
            or not 0 < length <= self.max_body
            or (self.cors and "HTTP_ORIGIN" in environ)
        ):
            return self.app(environ, start_response)
        route, arguments = routed
        data = environ["wsgi.input"].read(length)
        identity = request_id(environ)
        session_id = arguments.get("session_id")
        context = LEAN_REQUEST.set(Request(identity, route.rule, "POST", session_id))
        try:
            written = route.call(environ, arguments, data)
        except Exception as error:  # Flask's route answers it, or names its problem
            environ[RAISED] = error
            environ[REQUEST_ID_ENVIRON] = identity  # the id the call's log lines carry
            environ["wsgi.input"] = io.BytesIO(data)
            return self.app(environ, start_response)
        finally:
            LEAN_REQUEST.reset(context)
        start_response(
            "200 OK",
            [
                ("Content-Type", JSON),
                ("Content-Length", str(len(written))),
                ("Cache-Control", NO_STORE),
                (REQUEST_ID, identity),
            ],
        )
        if self.metrics:
            observe_request(route.rule, "POST", 200, started)
        return [written]
