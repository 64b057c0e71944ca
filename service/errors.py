"""RFC 9457 problem details: the one shape of every 4xx and 5xx answer."""

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import flask
import orjson
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException, InternalServerError

from engine.errors import GameError

PROBLEM_JSON = "application/problem+json"
ROOT = "body"  # the JSON path of the request body itself, for errors about the whole body


class Problem(Exception):
    """An answer that is a problem: raise it anywhere below a view."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: Mapping[str, list[str]] | None = None,
        headers: Mapping[str, str] | None = None,
        choices: Mapping[str, list[Any]] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers
        self.choices = choices


class Unprocessable(Problem):
    """A 422 naming the JSON path of each bad field."""

    def __init__(
        self,
        errors: Mapping[str, list[str]],
        detail: str | None = None,
        choices: Mapping[str, list[Any]] | None = None,
    ) -> None:
        super().__init__(422, detail or summary(errors), errors, choices=choices)


class BadRequestBody(Problem):
    def __init__(self, detail: str) -> None:
        super().__init__(400, detail)


class UnsupportedBody(Problem):
    def __init__(self, mimetype: str) -> None:
        super().__init__(415, f"the body must be application/json, not {mimetype or 'untyped'}")


def invalid(path: str, reason: str, choices: list[Any] | None = None) -> Unprocessable:
    """A 422 for one field; `choices` (what the field could hold instead) when known."""
    return Unprocessable({path: [reason]}, choices=None if choices is None else {path: choices})


def summary(errors: Mapping[str, list[str]]) -> str:
    return "; ".join(f"{path}: {' '.join(messages)}" for path, messages in errors.items())


def problem(
    status: int,
    detail: str,
    errors: Mapping[str, list[str]] | None = None,
    headers: Mapping[str, str] | None = None,
    choices: Mapping[str, list[Any]] | None = None,
) -> flask.Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
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
        limit = flask.current_app.config["MAX_CONTENT_LENGTH"]
        return problem(413, f"the body is over the limit of {limit} bytes", headers=headers)
    return problem(status, error.description or HTTPStatus(status).phrase, headers=headers)


class ProblemSchema(Schema):
    """RFC 9457 problem details (documentation only; `problem` writes the body)."""

    type = fields.String(required=True, metadata={"description": "'about:blank'"})
    title = fields.String(required=True, metadata={"description": "the HTTP status phrase"})
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
                response = {"description": status.phrase, "schema": self.ERROR_SCHEMA}
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
        return problem(error.status, error.detail, error.errors, error.headers, error.choices)

    @app.errorhandler(GameError)
    def answer_game_error(error: GameError) -> flask.Response:
        """A state the game read but cannot serve, e.g. too many `any_family` moves to list."""
        path = error.path if error.path.startswith("state") else f"state.{error.path}"
        choices = None if error.choices is None else {path: error.choices}
        return problem(422, f"{path}: {error.reason}", {path: [error.reason]}, choices=choices)
