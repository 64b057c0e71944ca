"""Hosted sessions over HTTP: parse -> service.hosted -> write, nothing else."""

import select
import socket
import time
from collections.abc import Callable, Mapping
from functools import partial, wraps
from typing import Any

import flask
import orjson
from marshmallow import Schema
from werkzeug.exceptions import UnprocessableEntity

from engine.game import most_seats
from service import requests
from service.errors import (
    PROBLEM_JSON,
    RETRY_AFTER,
    ProblemApi,
    ProblemSchema,
    Unprocessable,
    invalid,
)
from service.hosted.answers import entity_tag
from service.hosted.problems import StaleVersion, unavailable
from service.hosted.sessions import Sessions, open_sessions
from service.hosted.tokens import MAX_KEY_LENGTH
from service.json import check_json, dumps, has_body, parsed
from service.lean import LeanRoute, raised_by_lean_path
from service.limits import CHARGE
from service.routes import Blueprint, answer, documented
from service.schemas.envelopes import (
    MAX_VERSION,
    CreateSessionRequest,
    CreateSessionResponse,
    MatchRecordSchema,
    SessionEventsQuery,
    SessionListQuery,
    SessionListResponse,
    SessionMoveRequest,
    SessionMoveResponse,
    SessionResponse,
    SessionStreamHeaders,
    SessionStreamQuery,
    SpectatorTokenSchema,
    StaleVersionProblem,
    session_events,
)
from service.store import StoreUnavailable

blp = Blueprint(
    "sessions",
    __name__,
    url_prefix="/v1/sessions",
    description="Hosted sessions: the server keeps the state; each seat holds a token and "
    "sees only its own view; spectator tokens see public information only. Live play: an "
    "event stream, turn timers that play for a seat whose time ran out, absent seats.",
)

IDEMPOTENCY_KEY = "Idempotency-Key"
SEAT_TOKEN = [{"seatToken": []}]
INTEGRATOR_KEY = [{"integratorKey": []}]
SEAT_OR_KEY = [{"seatToken": []}, {"integratorKey": []}]
KEY_PARAMETER = {
    "in": "header",
    "name": IDEMPOTENCY_KEY,
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH},
    "description": "a retry carrying the same key and body gets the first answer and is not "
    "applied again; the same key with another body is a 422. Keys expire with the session.",
}
FAILURES = (401, 404)
LOCATION = {"Location": {"schema": {"type": "string"}, "description": "the new session's path"}}
# A manual parameter list: the read has no other (a list here replaces the generated one).
IF_NONE_MATCH = {
    "in": "header",
    "name": "If-None-Match",
    "required": False,
    "schema": {"type": "string"},
    "description": "the ETag of the answer the reader holds: while it is still the answer, a "
    "304 without a body",
}
ETAG = {
    "ETag": {
        "schema": {"type": "string"},
        "description": "a weak entity tag of this reader's answer: send it back in "
        "If-None-Match to be answered 304 while nothing changed",
    }
}


def session_operation(path: str, method: str) -> str:
    """An OpenAPI operationRef to a session path (`~1` is the JSON pointer's `/`)."""
    return f"#/paths/{path.replace('/', '~1')}/{method}"


SESSION = "/v1/sessions/{session_id}"
# The token a link's source request carried, and the session it named.
SAME_SEAT = {
    "path.session_id": "$request.path.session_id",
    "header.Authorization": "$request.header.Authorization",
}


def link(path: str, method: str, parameters: dict[str, str], description: str) -> dict:
    """An OpenAPI link to a session operation. The token goes in `header.Authorization` (a
    link cannot name a security scheme), a move body's fields in `body.<field>`: OpenAPI
    Generator's parser takes a link's requestBody only as one runtime expression, and no
    answer holds a whole move request."""
    return {
        "operationRef": session_operation(path, method),
        "parameters": parameters,
        "description": description,
    }


def as_seat(seat: int) -> dict[str, str]:
    """The created session with seat `seat`'s token: absent for a bot seat."""
    return {
        "path.session_id": "$response.body#/id",
        "header.Authorization": f"Bearer {{$response.body#/seats/{seat}/token}}",
    }


def play_first_move(description: str) -> dict:
    """The seat's first legal move in the answer, on the version the answer shows."""
    return link(
        f"{SESSION}/moves",
        "post",
        {
            **SAME_SEAT,
            "body.move": "$response.body#/moves/0",
            "body.version": "$response.body#/version",
        },
        description,
    )


# Stateful schemathesis follows these from a creation to reading the session as each seat
# (the human ones hold a token; seat 0 is often a bot), then to moving with the move and
# version that read listed, reading the events and ending the session with the same token.
def created_links() -> dict[str, Any]:
    """One link per seat up to the most seats any registered game allows (a creation answer
    lists one entry per seat), and the first spectator's. Read from the registry when an app
    is made (`install`), not when this module is imported: a game may have been added since,
    seating more."""
    return {
        **{
            f"ReadSessionAsSeat{seat}": link(
                SESSION, "get", as_seat(seat), f"the session as seat {seat} sees it (a human seat)"
            )
            for seat in range(most_seats())
        },
        "ReadSessionAsSpectator": link(
            SESSION,
            "get",
            {
                "path.session_id": "$response.body#/id",
                "header.Authorization": "Bearer {$response.body#/spectators/0/token}",
            },
            "the session as its first spectator sees it",
        ),
    }


READ_LINKS = {
    "PlayMove": play_first_move(
        "the reading seat's first legal move on the version it read (none when it is not its turn)"
    ),
    "ReadEvents": link(f"{SESSION}/events", "get", SAME_SEAT, "what happened so far"),
    "AddSpectator": link(f"{SESSION}/spectators", "post", SAME_SEAT, "a spectator token"),
    "EndSession": link(SESSION, "delete", SAME_SEAT, "end the session"),
}
MOVED_LINKS = {
    "PlayNextMove": play_first_move("the seat's next move, once it is its turn again"),
    "ReadSession": link(SESSION, "get", SAME_SEAT, "the session after the move"),
}


def sessions() -> Sessions:
    return flask.current_app.extensions["sessions"]


def authorization() -> str | None:
    return flask.request.headers.get("Authorization")


def idempotency_key() -> str | None:
    """The raw header: the session logic checks it after the session and token checks."""
    return flask.request.headers.get(IDEMPOTENCY_KEY)


def json_body() -> object:
    """The request's JSON, read only once the session and token are known good (so the
    contract's order of checks holds); no body reads as None."""
    request = flask.request
    if not has_body(request):
        return None
    check_json(request)
    return parsed(request.get_data(cache=True))


def key_first(required: Callable[[], bool]):
    """The integrator's key checked before the request's body or query is read, when
    `required()`: a caller without one gets its 401, whatever else it sent."""

    def checking(view):
        @wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if required():
                sessions().integrators.integrator(authorization())
            return view(*args, **kwargs)

        return checked

    return checking


def store_down(view):
    """Documents the 503 every session call may answer (`unavailable`, and on the long poll
    and the stream `server-busy`)."""
    return blp.alt_response(
        503,
        schema=ProblemSchema,
        content_type=PROBLEM_JSON,
        headers=RETRY_AFTER,
        description="the session store (Redis) did not answer within its timeout, the "
        "session changed too fast to commit (`unavailable`), or, on the long poll and the "
        "stream, this server holds as many waiting readers as it takes (`server-busy`); retry "
        "after Retry-After. A 503 to a write does not mean it was not applied: a hung Redis "
        "may still run it when it wakes. Retrying is safe: a move retried with its "
        "Idempotency-Key gets the first answer; without one, the version it names makes a "
        "retry of an applied move a 409 carrying the next version, never a second copy.",
    )(view)


def failures(*statuses: int):
    def decorate(view):
        for status in sorted({*FAILURES, *statuses}, reverse=True):
            view = blp.alt_response(status, response="PROBLEM")(view)
        return store_down(view)

    return decorate


@blp.route("", methods=["POST"])
@key_first(lambda: sessions().integrators.required)
@blp.arguments(CreateSessionRequest)
@blp.response(201, CreateSessionResponse, headers=LOCATION)
@blp.doc(
    operationId="createSession",
    parameters=[KEY_PARAMETER],
    responses={201: {"links": {}}},  # created_links(), set by `install`
    security=[{}, *INTEGRATOR_KEY],
)
@blp.alt_response(401, response="PROBLEM")
@blp.alt_response(409, response="PROBLEM", description="Another request with this "
                  "Idempotency-Key is still creating its session: retry after Retry-After.")
@store_down
def create(body: dict[str, Any]) -> flask.Response:
    """Start a hosted game. Bot seats that move first have moved already (version > 0).
    Human seats get their token here, once. When the service has API_KEYS, this takes an
    integrator's key (else 401) and the session is that integrator's."""
    created = sessions().create(body, idempotency_key(), authorization())
    response = answer(created, 201)
    response.headers["Location"] = flask.url_for("sessions.read", session_id=created["id"])
    return response


@blp.route("", methods=["GET"])
@key_first(lambda: True)
@blp.arguments(SessionListQuery, location="query")
@blp.response(200, SessionListResponse)
@blp.doc(operationId="listSessions", security=INTEGRATOR_KEY)
@blp.alt_response(401, response="PROBLEM")
@store_down
def listing(query: dict[str, Any]) -> flask.Response:
    """The sessions the key's integrator created, newest first, a page at a time (follow
    `next` as `cursor`); sessions that expired or were ended drop out."""
    return answer(
        sessions().listing(
            authorization(), query.get("status"), query["limit"], query.get("cursor")
        )
    )


@blp.route("/<session_id>", methods=["GET"])
@blp.response(200, SessionResponse, headers=ETAG)
@blp.alt_response(
    304,
    headers=ETAG,
    description="Not modified: the answer is still the one whose ETag came in If-None-Match "
    "(but for `time_left`, which counts down to `deadline`); no body.",
)
@blp.doc(
    operationId="getSession",
    security=SEAT_OR_KEY,
    parameters=[IF_NONE_MATCH],
    responses={200: {"links": READ_LINKS}},
)
@failures()
def read(session_id: str) -> flask.Response:
    """The session as the token's seat sees it, with its legal moves when it is its turn.
    With its owner's integrator key: what a spectator sees, with `seats` and `owner`
    (another integrator's key: 404). With `If-None-Match: <its ETag>` an unchanged answer
    is a 304 without a body."""
    body = sessions().read(session_id, authorization())
    tag = entity_tag(body)
    if flask.request.if_none_match.contains_weak(tag):
        response = flask.Response(status=304)
        response.headers.remove("Content-Type")
    else:
        response = answer(body)
    response.set_etag(tag, weak=True)
    return response


@blp.route("/<session_id>", methods=["DELETE"])
@blp.response(204)
@blp.doc(operationId="deleteSession", security=SEAT_OR_KEY)
@failures(403)
def delete(session_id: str) -> flask.Response:
    """End the session (any seat's token, or its owner's key; a spectator's is 403); it is
    a 404 from then on."""
    sessions().delete(session_id, authorization())
    response = flask.Response(status=204)
    # No content, so no type for it (Flask's default would say text/html).
    response.headers.remove("Content-Type")
    return response


@blp.route("/<session_id>/record", methods=["GET"])
@blp.response(200, MatchRecordSchema)
@blp.doc(operationId="getMatchRecord", security=SEAT_OR_KEY)
@failures()
def record(session_id: str) -> flask.Response:
    """The match record (any token of the session, or its owner's key): the rules, the
    players, the commitment, every move as POST …/moves takes it, and once the match is over
    its seed and outcome. POST /v1/games/{game}/replay rebuilds and checks the match from
    it. A finished match's record stays readable for RECORD_TTL_SECONDS (default 30 days)
    after the end, even once the session expired or was ended."""
    return answer(sessions().match_record(session_id, authorization()))


@blp.route("/<session_id>/moves", methods=["POST"])
@blp.response(200, SessionMoveResponse)
@blp.doc(
    operationId="playMove",
    security=SEAT_TOKEN,
    parameters=[KEY_PARAMETER],
    responses={200: {"links": MOVED_LINKS}},
    requestBody={
        "required": True,
        "content": {"application/json": {"schema": SessionMoveRequest}},
    },
)
@blp.alt_response(409, schema=StaleVersionProblem, content_type=PROBLEM_JSON)
@failures(403, 422)
def move(session_id: str) -> flask.Response:
    """Play the token's seat's move. Checks run in this order: session (404), token (401),
    version (409, with the current `version` in the problem), turn (403), legality (422).
    The answer includes the bots' replies up to the next human turn; `version` grows by one
    per applied move."""
    raised_by_lean_path(flask.request.environ)  # its problem, without moving twice
    return answer(sessions().move(
        session_id, authorization(), json_body, idempotency_key(),
        flask.request.environ.get(CHARGE),
    ))  # fmt: skip


def lean_routes(app: flask.Flask) -> list[LeanRoute]:
    """A move with a JSON body, for the lean path (service/lean.py): the same call of the
    same sessions as the route above, its headers read from the environ."""
    hosted: Sessions = app.extensions["sessions"]

    def moved(environ: dict[str, Any], arguments: Mapping[str, str], data: bytes) -> bytes:
        return dumps(hosted.move(
            arguments["session_id"], environ.get("HTTP_AUTHORIZATION"), partial(parsed, data),
            environ.get("HTTP_IDEMPOTENCY_KEY"), environ.get(CHARGE),
        ))  # fmt: skip

    return [LeanRoute(f"{blp.url_prefix}/<session_id>/moves", moved)]


@blp.route("/<session_id>/spectators", methods=["POST"])
@blp.response(201, SpectatorTokenSchema)
@blp.doc(operationId="addSpectator", security=SEAT_OR_KEY)
@failures(403, 409)
def add_spectator(session_id: str) -> flask.Response:
    """A new spectator token, asked for by any seat's token (a spectator's is 403); at most
    16 per session (then 409). A spectator reads the session, its events and its stream with
    public information only: `seat` null, `moves` [], no hand, no drawn card, no stock, no
    seed; its moves are 403."""
    return answer(sessions().add_spectator(session_id, authorization()), 201)


@blp.route("/<session_id>/stream", methods=["GET"])
@documented(blp.arguments(SessionStreamQuery, location="query"))
@blp.response(
    200,
    {"type": "string"},
    content_type="text/event-stream",
    description="Server-sent events. Each committed version is one message: `id: <version>`, "
    "`event: events`, `data: <JSON array of that version's events as this token may see them, "
    "each tagged with its version>`. A comment line `: ping` comes at least every 15 s. When "
    "the session ends (deleted or expired) an `event: end` message, then the stream closes. "
    "A token may hold MAX_WAITERS_PER_TOKEN streams and long polls at once (then 429), a "
    "client address MAX_WAITERS_PER_ADDRESS in a worker (then 429), a worker MAX_WAITERS "
    "(then 503).",
)
@blp.doc(operationId="streamSessionEvents", security=SEAT_OR_KEY)
@documented(blp.arguments(SessionStreamHeaders, location="headers"))
@failures()
def stream(session_id: str) -> flask.Response:
    """The session's events as they are committed (seat or spectator token), as the long poll
    filters them. Starts after `Last-Event-ID` or `?after=n`, else after the current version."""
    after = after_checks(session_id, last_event_id)
    if after is None:
        after = after_checks(session_id, partial(query_of, SessionStreamQuery)).get("after")
    messages = sessions().stream(
        session_id, authorization(), after, client_gone(), client_address()
    )
    return flask.Response(
        messages,
        mimetype="text/event-stream",
        headers={"X-Accel-Buffering": "no"},  # Cache-Control: no-store, as the whole API
    )


def last_event_id() -> int | None:
    """The Last-Event-ID header as a version; a bad one is a 422 naming the header."""
    text = flask.request.headers.get("Last-Event-ID")
    if text is None or not text.strip():
        return None
    version = requests.decimal(text.strip())
    if version is None or version > MAX_VERSION:
        raise invalid("Last-Event-ID", "must be a version, an integer from 0 to 2^53 - 1")
    return version


@blp.route("/<session_id>/events", methods=["GET"])
@documented(blp.arguments(SessionEventsQuery, location="query"))
@blp.response(200, session_events())
@blp.doc(operationId="listSessionEvents", security=SEAT_OR_KEY)
@failures()
def events(session_id: str) -> flask.Response:
    """The events of the moves after version `after`, each tagged with its `version`, as a
    JSON array. When there are none yet it waits (long poll) until one arrives or the bound
    (LONG_POLL_SECONDS) passes, then answers []."""
    query = after_checks(session_id, partial(query_of, SessionEventsQuery))
    return answer(sessions().events(
        session_id, authorization(), query["after"], client_gone(), client_address()
    ))  # fmt: skip


def query_of(schema: type[Schema]) -> dict[str, Any]:
    """The request's query as `schema` reads it (the one its route documents); a 422 naming
    `query.<field>` when it does not."""
    return blp.ARGUMENTS_PARSER.parse(schema(), location="query")


def after_checks(session_id: str, read: Callable[[], Any]) -> Any:
    """What `read()` reads of a follow's request (its query, Last-Event-ID); when that is
    bad, its 422 only once the session (else 404) and the token (else 401) are known good:
    the contract's order of checks, as a move has it. The follow checks both again itself."""
    try:
        return read()
    except (Unprocessable, UnprocessableEntity):
        sessions().authorized(session_id, authorization())
        raise


def client_address() -> str:
    """The client's address, as the rate limits count it (REMOTE_ADDR)."""
    return flask.request.environ.get("REMOTE_ADDR") or "unknown"


def client_gone():
    """A look at whether the request's client closed its connection, without reading what
    it may have sent (a closed socket reads as empty at once); never, where the server
    offers no socket."""
    connection = flask.request.environ.get("gunicorn.socket") or flask.request.environ.get(
        "werkzeug.socket"
    )
    if connection is None:
        return None

    def gone() -> bool:
        try:
            readable, _, _ = select.select([connection], [], [], 0)
            if readable and not connection.recv(1, socket.MSG_PEEK):
                return True
            return closed_by_peer(connection)
        except (OSError, ValueError):  # reset, or already closed
            return True

    return gone


# Linux's TCP states once the peer reset the connection, or closed its side
# (include/net/tcp_states.h).
CLOSED_BY_PEER = frozenset((7, 8))  # TCP_CLOSE, TCP_CLOSE_WAIT


def closed_by_peer(connection: socket.socket) -> bool:
    """Whether the client closed its side though bytes it sent before are still unread
    here (a pipelined request), which a peek at the first of them cannot tell: the TCP
    state, where the system gives it."""
    if not hasattr(socket, "TCP_INFO") or connection.family == socket.AF_UNIX:
        return False
    return connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in CLOSED_BY_PEER


def stale_problem(error: StaleVersion) -> flask.Response:
    response = error.answer()
    response.set_data(dumps({**orjson.loads(response.get_data()), "version": error.version}))
    return response


class Spell:
    """One warning for a spell of 503s, not one each: an outage under traffic is one log
    line per process, not a flood (each answer still has its access log line). A spell
    ends once QUIET_SECONDS pass without one."""

    QUIET_SECONDS = 5.0

    def __init__(self) -> None:
        self.last = float("-inf")

    def starts(self) -> bool:
        """Count a 503 now; whether it starts a spell."""
        now = time.monotonic()
        starts, self.last = now - self.last > self.QUIET_SECONDS, now
        return starts


def store_unavailable(spell: Spell, error: StoreUnavailable) -> flask.Response:
    if spell.starts():
        flask.current_app.logger.warning(
            "session store unavailable (further 503s are not logged until %g s pass without "
            "one): %s", Spell.QUIET_SECONDS, error,
        )  # fmt: skip
    return unavailable("the session store is unavailable; retry shortly").answer()


def install(app: flask.Flask, api: ProblemApi) -> None:
    """Hosted sessions on `app`: the store its config selects, the routes, their errors."""
    app.extensions["sessions"] = open_sessions(app.config)
    api.spec.components.security_scheme(
        "seatToken",
        {"type": "http", "scheme": "bearer", "description": "a seat token from POST /v1/sessions"},
    )
    api.spec.components.security_scheme(
        "integratorKey",
        {"type": "http", "scheme": "bearer",
         "description": "an integrator's key (API_KEYS; python -m service.keys new NAME)"},
    )  # fmt: skip
    # flask-smorest keeps each route's doc until the blueprint is registered (a deep copy
    # for each app), so the creation's links are those of the registry as it is now.
    blp._docs["create"]["post"]["manual_doc"]["responses"][201]["links"] = created_links()
    api.register_blueprint(blp)
    app.register_error_handler(StaleVersion, stale_problem)
    app.register_error_handler(StoreUnavailable, partial(store_unavailable, Spell()))
