"""RFC 9457 problem details: the one shape of every 4xx and 5xx answer, and the one table of
the kinds of problem the service answers, each with its own `type` URI."""

from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import flask
import orjson
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException, InternalServerError

from engine import errors as game_errors
from engine.errors import GameError

PROBLEM_JSON = "application/problem+json"
ROOT = "body"  # the JSON path of the request body itself, for errors about the whole body
# Problem types are URI references below this path of the service, where each is described
# (GET /problems/<name>): stable names a client compares, resolvable by a person.
PROBLEM_TYPES = "/problems/"


@dataclass(frozen=True)
class Kind:
    """One kind of problem: what it means and what a client should do about it."""

    name: str
    status: int
    title: str
    meaning: str
    advice: str

    @property
    def type(self) -> str:
        """The `type` URI of every problem of this kind."""
        return f"{PROBLEM_TYPES}{self.name}"


def kinds(*listed: Kind) -> dict[str, Kind]:
    return {kind.name: kind for kind in listed}


# The table of kinds (docs/api.md shows it; a test holds them together). The 422 kinds
# follow the engine's taxonomy (engine/errors.py), so that a client can tell a bad state from
# an illegal move without reading prose.
KINDS = kinds(
    Kind("malformed-body", 400, "Malformed body",
         "the body is not JSON (or not UTF-8, or nested too deeply)",
         "fix the body; the same request will fail again"),
    Kind("bad-request", 400, "Bad request",
         "the request itself is malformed (before any field is read)",
         "fix the request; the same request will fail again"),
    Kind("unauthorized", 401, "Unauthorized",
         "the call needs a bearer token, and none came, or not one of this session "
         "(with WWW-Authenticate: Bearer)",
         "send `Authorization: Bearer <token>` with a token POST /v1/sessions gave"),
    Kind("not-your-turn", 403, "Not your turn",
         "another seat is to move (the detail says which)",
         "wait for the other seats (long poll or stream), then read the session again"),
    Kind("match-over", 403, "Match over",
         "the match is over; no seat may move",
         "stop playing; read the session for the outcome"),
    Kind("seat-token-required", 403, "Seat token required",
         "a spectator token cannot do this (move, end the session, add spectators)",
         "use a seat's token, or only read"),
    Kind("not-found", 404, "Not found",
         "no such path", "check the path against openapi.yaml"),
    Kind("unknown-game", 404, "Unknown game",
         "no such game in the path; the detail lists the games there are",
         "use a game GET /v1/games lists"),
    Kind("session-not-found", 404, "Session not found",
         "no such session: it never existed, expired or was ended",
         "stop following it; create a new session to play again"),
    Kind("method-not-allowed", 405, "Method not allowed",
         "the path does not take this method (Allow lists those it takes)",
         "use a method from Allow"),
    Kind("stale-version", 409, "Stale version",
         "the `version` sent is not the session's current one (a move came first, a timer "
         "played, or the store rolled back); the problem carries the current `version`",
         "read the session again and choose the move on what it shows"),
    Kind("idempotency-key-in-use", 409, "Idempotency key in use",
         "a session creation with this Idempotency-Key is still being answered (with "
         "Retry-After)",
         "retry after Retry-After with the same key: the creation's answer comes back"),
    Kind("spectator-limit", 409, "Spectator limit",
         "the session has as many spectator tokens as it may (16)",
         "reuse a spectator token handed out before"),
    Kind("body-too-large", 413, "Body too large",
         "the body is over the service's limit (MAX_BODY_BYTES)", "send a smaller body"),
    Kind("unsupported-media-type", 415, "Unsupported media type",
         "the body is not `application/json`, or comes with a Content-Encoding (gzip…: "
         "with Accept-Encoding: identity)",
         "send JSON as it is with Content-Type: application/json"),
    Kind("invalid-request", 422, "Invalid request",
         "a field of the request is missing, of the wrong type or out of bounds; `errors` "
         "names each by its JSON path",
         "fix the fields `errors` names"),
    Kind("invalid-rules", 422, "Invalid rules",
         "a rule option, preset or seat count the game does not allow, or options impossible "
         "together (`choices` may list the allowed values)",
         "pick rules GET /v1/games lists"),
    Kind("invalid-state", 422, "Invalid state",
         "a state that is not self-consistent (a card twice or missing, a turn out of range…)",
         "send a state exactly as the server wrote it"),
    Kind("not-a-move", 422, "Not a move",
         "the move is not a move of this game at all (not an object, an unknown type, not a "
         "card)",
         "send a move of the shape openapi.yaml declares for the game"),
    Kind("illegal-move", 422, "Illegal move",
         "a move of the right shape that is not legal in this state (`choices` may list what "
         "the field could hold)",
         "choose one of the legal moves (the session's `moves`, or legal-moves)"),
    Kind("ambiguous-move", 422, "Ambiguous move",
         "the move names several legal moves; `choices` lists them",
         "send the move again with one of the `choices`"),
    Kind("too-large", 422, "Too large",
         "the request asks for more than the service computes or lists (e.g. too many legal "
         "moves in one state)",
         "ask for less"),
    Kind("idempotency-key-reused", 422, "Idempotency key reused",
         "the Idempotency-Key came with a different request before",
         "use a fresh key for a new request"),
    Kind("rate-limited", 429, "Rate limited",
         "over a rate limit of this client address or token (with Retry-After)",
         "wait Retry-After seconds, then retry"),
    Kind("too-many-readers", 429, "Too many readers",
         "this token, or this client address on one server, has as many streams and long polls "
         "open as it may (MAX_WAITERS_PER_TOKEN, MAX_WAITERS_PER_ADDRESS, with Retry-After)",
         "close one of them, or wait Retry-After seconds"),
    Kind("internal-error", 500, "Internal error",
         "a fault of the service; it has been logged", "report it with the X-Request-ID"),
    Kind("unavailable", 503, "Unavailable",
         "the session store did not answer in time, or the session changes too fast to commit "
         "(with Retry-After); a write may still have been applied",
         "retry after Retry-After, with the same Idempotency-Key or version (safe)"),
    Kind("server-busy", 503, "Server busy",
         "this server has as many waiting streams and long polls as it takes (MAX_WAITERS, "
         "with Retry-After)",
         "retry after Retry-After (another server may take it)"),
)  # fmt: skip
INVALID = KINDS["invalid-request"]
# The kind of a problem raised with a status only (and of Flask's and Werkzeug's own HTTP
# errors); a status without one answers `about:blank`, the status and nothing more.
DEFAULT_KINDS = {
    KINDS[name].status: KINDS[name]
    for name in (
        "bad-request", "unauthorized", "not-found", "method-not-allowed",
        "body-too-large", "unsupported-media-type", "invalid-request", "rate-limited",
        "internal-error", "unavailable",
    )
}  # fmt: skip
# The engine's kinds of rejection as problem kinds (the most specific class first).
GAME_ERROR_KINDS: tuple[tuple[type[GameError], Kind], ...] = (
    (game_errors.RulesError, KINDS["invalid-rules"]),
    (game_errors.StateError, KINDS["invalid-state"]),
    (game_errors.NotAMove, KINDS["not-a-move"]),
    (game_errors.AmbiguousMove, KINDS["ambiguous-move"]),
    (game_errors.IllegalMove, KINDS["illegal-move"]),
    (game_errors.TooLarge, KINDS["too-large"]),
)


def kind_of(status: int, kind: Kind | None = None) -> Kind | None:
    """The problem's kind: the one given, else the status's default (None: about:blank)."""
    return kind or DEFAULT_KINDS.get(status)


def game_error_kind(error: GameError) -> Kind:
    """The problem kind of a game's rejection (a move error of no finer kind is illegal)."""
    for cls, kind in GAME_ERROR_KINDS:
        if isinstance(error, cls):
            return kind
    return KINDS["illegal-move"] if isinstance(error, game_errors.MoveError) else INVALID


class Problem(Exception):
    """An answer that is a problem: raise it anywhere below a view."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: Mapping[str, list[str]] | None = None,
        headers: Mapping[str, str] | None = None,
        choices: Mapping[str, list[Any]] | None = None,
        kind: Kind | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers
        self.choices = choices
        self.kind = kind_of(status, kind)

    @staticmethod
    def of(kind: Kind, detail: str, headers: Mapping[str, str] | None = None) -> "Problem":
        """A problem of `kind`, with its status."""
        return Problem(kind.status, detail, headers=headers, kind=kind)

    def answer(self) -> flask.Response:
        return problem(self.status, self.detail, self.errors, self.headers, self.choices, self.kind)


class Unprocessable(Problem):
    """A 422 naming the JSON path of each bad field."""

    def __init__(
        self,
        errors: Mapping[str, list[str]],
        detail: str | None = None,
        choices: Mapping[str, list[Any]] | None = None,
        kind: Kind = INVALID,
    ) -> None:
        super().__init__(422, detail or summary(errors), errors, choices=choices, kind=kind)


class BadRequestBody(Problem):
    def __init__(self, detail: str) -> None:
        super().__init__(400, detail, kind=KINDS["malformed-body"])


class UnsupportedBody(Problem):
    def __init__(self, mimetype: str, detail: str | None = None) -> None:
        """A 415; one about the body's content coding says the only one taken (RFC 7694)."""
        super().__init__(
            415,
            detail or f"the body must be application/json, not {mimetype or 'untyped'}",
            headers=None if detail is None else {"Accept-Encoding": "identity"},
        )


def invalid(
    path: str, reason: str, choices: list[Any] | None = None, kind: Kind = INVALID
) -> Unprocessable:
    """A 422 for one field; `choices` (what the field could hold instead) when known."""
    return Unprocessable(
        {path: [reason]}, choices=None if choices is None else {path: choices}, kind=kind
    )


def rejected(path: str, error: GameError) -> Unprocessable:
    """A 422 for a game's rejection of the field at `path`, of the rejection's kind."""
    return invalid(path, error.reason, error.choices, game_error_kind(error))


def summary(errors: Mapping[str, list[str]]) -> str:
    return "; ".join(f"{path}: {' '.join(messages)}" for path, messages in errors.items())


def problem_body(status: int, detail: str, kind: Kind | None = None) -> dict[str, Any]:
    """A problem's four members; of `kind`, else of the status's default kind. Also what
    gunicorn.conf.py answers for a request gunicorn refuses before the app sees it."""
    kind = kind_of(status, kind)
    return {
        "type": kind.type if kind else "about:blank",
        "title": kind.title if kind else HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }


def problem(
    status: int,
    detail: str,
    errors: Mapping[str, list[str]] | None = None,
    headers: Mapping[str, str] | None = None,
    choices: Mapping[str, list[Any]] | None = None,
    kind: Kind | None = None,
) -> flask.Response:
    """The problem+json answer; of `kind`, else of the status's default kind."""
    body = problem_body(status, detail, kind)
    if errors is not None:
        body["errors"] = dict(errors)
    if choices is not None:
        body["choices"] = dict(choices)
    response = flask.Response(orjson.dumps(body), status=status, mimetype=PROBLEM_JSON)
    response.headers.extend(headers or {})
    return response


def json_paths(messages: object, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow's nested error messages as {"move.capture.0": [...]}."""
    if isinstance(messages, Mapping):
        paths: dict[str, list[str]] = {}
        for key, nested in messages.items():
            path = prefix if key == "_schema" else f"{prefix}.{key}" if prefix else str(key)
            for found, found_messages in json_paths(nested, path).items():
                paths.setdefault(found, []).extend(found_messages)
        return paths
    if isinstance(messages, list) and all(isinstance(item, str) for item in messages):
        return {prefix or ROOT: list(messages)}
    return {prefix or ROOT: [str(messages)]}


def webargs_errors(error: HTTPException) -> dict[str, list[str]]:
    """The body's errors from a webargs 422; webargs keys them by location first."""
    messages = (getattr(error, "data", None) or {}).get("messages", {})
    return json_paths(messages.get("json", messages))


def http_problem(error: HTTPException) -> flask.Response:
    status = error.code or 500
    if isinstance(error, InternalServerError) and error.original_exception is not None:
        # Flask has logged the exception; its text stays out of the answer.
        return problem(500, "an unexpected error occurred; it has been logged")
    headers = {key: value for key, value in error.get_headers() if key.lower() != "content-type"}
    if status == 422:
        errors = webargs_errors(error)
        return problem(422, summary(errors), errors, headers)
    if status == 413:
        limit = flask.request.max_content_length
        return problem(413, f"the body is over the limit of {limit} bytes", headers=headers)
    return problem(status, error.description or HTTPStatus(status).phrase, headers=headers)


class ProblemSchema(Schema):
    """RFC 9457 problem details (documentation only; `problem` writes the body)."""

    type = fields.String(
        required=True,
        metadata={
            "description": "the kind of problem, a URI reference that stays the same: "
            f"`{PROBLEM_TYPES}<kind>` (e.g. `{PROBLEM_TYPES}stale-version`), described at "
            "that path; `about:blank` for an HTTP error of no finer kind. The kinds: "
            + ", ".join(f"`{kind.name}` ({kind.status})" for kind in KINDS.values())
        },
    )
    title = fields.String(required=True, metadata={"description": "the kind's title"})
    status = fields.Integer(required=True)
    detail = fields.String(required=True, metadata={"description": "what went wrong"})
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={
            "description": "422 only: the JSON path of each bad field (e.g. 'move.card', "
            "'state.hands.0.2') and what is wrong with it"
        },
    )
    choices = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.Raw()),
        metadata={
            "description": "422 only, when the service knows them: for a bad field (keyed "
            "like `errors`), the values it could hold instead, e.g. the captures an ambiguous "
            "or illegal move's card can make (`move.capture`), the cards in hand "
            "(`move.card`), the presets (`rules.preset`)"
        },
    )


RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "seconds to wait before trying again",
    }
}
RETRIED = (HTTPStatus.TOO_MANY_REQUESTS, HTTPStatus.SERVICE_UNAVAILABLE)
RESPONSE_DESCRIPTIONS = {
    HTTPStatus.TOO_MANY_REQUESTS: "Too many requests: over a rate limit of the client address "
    "or token (`rate-limited`; limits are on unless the service turns them off), or, on the "
    "long poll and "
    "the stream, the token's or the client address's cap of open readers "
    "(`too-many-readers`). Retry after "
    "Retry-After.",
}


class ProblemApi(Api):
    """flask-smorest's Api with problem details instead of its own error payload,
    documented as application/problem+json."""

    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = "PROBLEM"

    def handle_http_exception(self, error: HTTPException) -> flask.Response:
        return http_problem(error)

    def _register_responses(self) -> None:
        for status in HTTPStatus:
            if status >= 400:
                response = {
                    "description": RESPONSE_DESCRIPTIONS.get(status, status.phrase),
                    "schema": self.ERROR_SCHEMA,
                }
                if status in RETRIED:
                    response["headers"] = RETRY_AFTER
                prepare_response(response, self.spec, PROBLEM_JSON)
                self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Problem details", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM_JSON)
        self.spec.components.response(self.DEFAULT_ERROR_RESPONSE_NAME, response, lazy=True)


def install_problems(app: flask.Flask) -> None:
    """Problems raised below a view as problem details (HTTP errors and unexpected
    exceptions reach ProblemApi.handle_http_exception)."""

    @app.errorhandler(Problem)
    def answer_problem(error: Problem) -> flask.Response:
        return error.answer()

    @app.errorhandler(GameError)
    def answer_game_error(error: GameError) -> flask.Response:
        """A state the game read but cannot serve, e.g. too many `any_family` moves to list."""
        path = error.path if error.path.startswith("state") else f"state.{error.path}"
        return rejected(path, error).answer()
